// Noise calibration from A/A runs (the same code measured several times on one GPU): for each
// case, how far its median moved between runs. A case whose run-to-run spread exceeds the
// practical threshold gets its own `compare.noise_pct`, so the comparison states the smallest
// change it can detect there instead of crying wolf.
import { isMap, isScalar, parseDocument, type Scalar, type YAMLMap } from 'yaml';
import { timingMethodKind } from './performance.js';
import { noiseProblems } from '../config/index.js';
import type { KernelgateResults } from '../results/index.js';
import { InputError } from '../results/index.js';

export interface CalibrationOptions {
  /** calibrated noise = spread × margin (two runs underestimate a spread) */
  margin: number;
  /** spreads at or under this need no entry: the global threshold covers them */
  floorPct: number;
  /** `kernel/variant` pairs whose timings in these runs are not the code's own (planted faults) */
  exclude: string[];
}

export interface CaseNoise {
  key: string;
  medianMs: number[];
  spreadPct: number;
  noisePct: number;
}

export interface Calibration {
  runs: number;
  /** the GPU model of every run (data/gpus.json): the block is keyed by it and applies to it only */
  model: string;
  /** cases with an entry: spread above the floor */
  entries: CaseNoise[];
  /** cases compared, all runs timed the same way */
  compared: number;
  /** cases left out, with why */
  skipped: { key: string; reason: string }[];
}

/**
 * The GPU model all the runs ran on; refused when one ran on a GPU the table does not list (its
 * figures could not be keyed) or when they ran on several models. `names`: the runs' files.
 */
export function calibrationModel(
  runs: readonly KernelgateResults[],
  names: readonly string[] = [],
): string {
  const named = runs.map((r, i) => ({
    name: names[i] ?? `run ${i + 1}`,
    sku: r.environment.gpu.sku,
    gpu: r.environment.gpu.name,
  }));
  const unlisted = named.find((r) => r.sku === undefined || r.sku === 'unknown');
  if (unlisted !== undefined) {
    throw new InputError(
      `calibrate needs runs on a GPU model of data/gpus.json, as compare.noise_pct is keyed by it: ${unlisted.name} ran on ${JSON.stringify(unlisted.gpu)}, which the table does not list`,
    );
  }
  const models = [...new Set(named.map((r) => r.sku!))];
  if (models.length > 1) {
    const which = models.map(
      (m) =>
        `${m} (${named
          .filter((r) => r.sku === m)
          .map((r) => r.name)
          .join(', ')})`,
    );
    throw new InputError(
      `calibrate needs A/A runs of one GPU model (noise figures never cross models); these ran on ${which.join(' and ')}`,
    );
  }
  return models[0]!;
}

export function calibrate(
  runs: readonly KernelgateResults[],
  options: CalibrationOptions,
  names: readonly string[] = [],
): Calibration {
  if (runs.length < 2) throw new InputError('calibrate needs at least two runs of the same code');
  const model = calibrationModel(runs, names);
  const [first, ...rest] = runs as [KernelgateResults, ...KernelgateResults[]];
  const entries: CaseNoise[] = [];
  const skipped: Calibration['skipped'] = [];
  let compared = 0;
  for (const c of first.cases) {
    const key = `${c.kernel}/${c.variant}/${c.case}`;
    if (options.exclude.includes(`${c.kernel}/${c.variant}`)) continue;
    const timings = [
      c,
      ...rest.map((r) =>
        r.cases.find((o) => o.kernel === c.kernel && o.variant === c.variant && o.case === c.case),
      ),
    ].map((x) => x?.timing);
    if (timings.some((t) => t === undefined || t.samples_ms.length === 0)) {
      skipped.push({ key, reason: 'not timed in every run' });
      continue;
    }
    const methods = new Set(timings.map((t) => timingMethodKind(t!.method)));
    if (methods.size > 1) {
      skipped.push({ key, reason: `timed differently across runs (${[...methods].join(' / ')})` });
      continue;
    }
    compared += 1;
    const medianMs = timings.map((t) => t!.median_ms);
    const spreadPct = (Math.max(...medianMs) / Math.min(...medianMs) - 1) * 100;
    if (spreadPct > options.floorPct) {
      entries.push({ key, medianMs, spreadPct, noisePct: Math.ceil(spreadPct * options.margin) });
    }
  }
  entries.sort((a, b) => a.key.localeCompare(b.key));
  return { runs: runs.length, model, entries, compared, skipped };
}

/** The comment lines that say where a calibration came from (without the `#`). */
function provenanceComment(calibration: Calibration, provenance: string): string[] {
  return [
    `Calibrated by \`kernelgate calibrate\` from ${calibration.runs} A/A runs on ${calibration.model} (${provenance}):`,
    `${calibration.compared} cases compared, ${calibration.entries.length} moved more than the threshold.`,
  ];
}

/** The comment above one case's entry (without the `#`). */
function entryComment(e: CaseNoise): string {
  const medians = e.medianMs.map((m) => m.toPrecision(3)).join(' / ');
  return `medians ${medians} ms: spread ${e.spreadPct.toFixed(1)} %`;
}

/**
 * The `compare.noise_pct` block for kernelgate.yml, keyed by the runs' GPU model, one commented
 * entry per case.
 */
export function calibrationYaml(calibration: Calibration, provenance: string): string {
  const lines = [
    ...provenanceComment(calibration, provenance).map((l) => `  # ${l}`),
    '  noise_pct:',
    `    ${calibration.model}:${calibration.entries.length === 0 ? ' {}' : ''}`,
  ];
  for (const e of calibration.entries) {
    lines.push(`      # ${entryComment(e)}`);
    lines.push(`      ${JSON.stringify(e.key)}: ${e.noisePct}`);
  }
  return lines.join('\n') + '\n';
}

/** The mapping at `key` of `parent`, made when absent; refused (with its field) when not one. */
function mappingAt(
  doc: ReturnType<typeof parseDocument>,
  parent: YAMLMap,
  key: string,
  field: string,
  file: string,
): YAMLMap {
  let node = parent.get(key, true);
  if (node === undefined || node === null) {
    parent.set(key, doc.createNode({}));
    node = parent.get(key, true);
  }
  if (!isMap(node)) throw new InputError(`${file}: ${field} must be a mapping`);
  return node;
}

/**
 * kernelgate.yml's text with the calibration in `compare.noise_pct.<model>`: that model's per-case
 * entries (`kernel/variant/case`) are replaced by the calibration's; its kernel- and variant-wide
 * entries, other models' blocks and every other line (comments included) are kept. A noise_pct of
 * the flat form (entries under no GPU model) is refused as loading the file would refuse it.
 */
export function writeCalibration(
  configText: string,
  calibration: Calibration,
  provenance: string,
  file: string,
): string {
  const doc = parseDocument(configText);
  if (doc.errors.length > 0) {
    throw new InputError(`${file}: not valid YAML: ${doc.errors[0]?.message ?? ''}`);
  }
  const problems = noiseProblems(doc.toJS());
  if (problems.length > 0) throw new InputError(problems.map((p) => `${file}: ${p}`).join('\n'));
  if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  if (!isMap(doc.contents)) throw new InputError(`${file}: the top level must be a mapping`);
  const compare = mappingAt(doc, doc.contents, 'compare', 'compare', file);
  const noise = mappingAt(doc, compare, 'noise_pct', 'compare.noise_pct', file);
  const { model } = calibration;
  const block = mappingAt(doc, noise, model, `compare.noise_pct.${model}`, file);
  block.items = block.items.filter((pair) => {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    return key.split('/').length < 3;
  });
  const header = provenanceComment(calibration, provenance);
  for (const [i, e] of calibration.entries.entries()) {
    const pair = doc.createPair(e.key, e.noisePct);
    const key = pair.key as Scalar;
    key.type = 'QUOTE_DOUBLE';
    // the yaml package writes each comment line as `#` + the line: keep one space
    const lines = i === 0 ? [...header, entryComment(e)] : [entryComment(e)];
    key.commentBefore = lines.map((l) => ` ${l}`).join('\n');
    block.items.push(pair);
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}
