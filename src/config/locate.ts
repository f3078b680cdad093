// Where a field of a YAML file is: the line and column of its key (or list item), so a problem
// found in kernelgate.yml or a kernel.yml can be shown at that place (a GitHub annotation).
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/** 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

/** A field's path: map keys and list indices, e.g. ['variants', 2, 'build', 'expect', 'sass']. */
export type FieldPath = readonly (string | number)[];

/** Finds fields of one YAML text; a field that is not there gives its nearest ancestor's place. */
export interface YamlLocator {
  locate(path: FieldPath): Position;
}

export function yamlLocator(text: string): YamlLocator {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const position = (offset: number): Position => {
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
  return {
    locate(path) {
      let node: unknown = doc.contents;
      let offset = (doc.contents as Node | null)?.range?.[0] ?? 0;
      for (const part of path) {
        if (isMap(node)) {
          const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === `${part}`);
          if (!pair || !isScalar(pair.key) || !pair.key.range) break;
          offset = pair.key.range[0];
          node = pair.value;
        } else if (isSeq(node) && typeof part === 'number') {
          const item = node.items[part] as Node | undefined;
          if (!item?.range) break;
          offset = item.range[0];
          node = item;
        } else break;
      }
      return position(offset);
    },
  };
}

/**
 * The field a problem line names first, as readablePath() writes it (src/results): every problem
 * of a config or manifest starts with its field, e.g. `tiers.ladder[1].min needs …` or
 * `benchmarks[0]["odd key"] is not a known field` → ['tiers', 'ladder', 1, 'min'].
 */
export function leadingFieldPath(problem: string): FieldPath {
  const head =
    /^(?:[A-Za-z_][A-Za-z0-9_-]*|\[(?:\d+|"(?:[^"\\]|\\.)*")\])(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[(?:\d+|"(?:[^"\\]|\\.)*")\])*/.exec(
      problem,
    );
  if (!head) return [];
  const parts: (string | number)[] = [];
  for (const m of head[0].matchAll(
    /([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g,
  )) {
    if (m[1] !== undefined) parts.push(m[1]);
    else if (m[2] !== undefined) parts.push(Number(m[2]));
    else parts.push(JSON.parse(m[3]!) as string);
  }
  return parts;
}
