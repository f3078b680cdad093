// Which tool wrote a JSON file, from the fields only that tool writes: so `--format gbench` on a
// pytest-benchmark file says "this is pytest-benchmark JSON" instead of a field error.
import { InputError } from '../results/index.js';

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** The format whose tool wrote `text`, where its fields say so; undefined when unsure. */
export function sniffFormat(text: string): string | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(root)) return undefined;
  const first = Array.isArray(root.benchmarks) ? root.benchmarks[0] : undefined;
  if (isObject(root.meta) && isObject(root.meta.version) && 'nvbench' in root.meta.version)
    return 'nvbench';
  if (isObject(first) && Array.isArray(first.states)) return 'nvbench';
  if ('machine_info' in root || 'commit_info' in root) return 'pytest-benchmark';
  if (isObject(first) && isObject(first.stats)) return 'pytest-benchmark';
  if (isObject(root.context) && ('library_version' in root.context || 'num_cpus' in root.context))
    return 'gbench';
  if (isObject(first) && ('run_name' in first || 'time_unit' in first)) return 'gbench';
  return undefined;
}

/**
 * Refuses a file another tool wrote, naming the file, its real format and the option to give;
 * `titles` names each format (formatTitles(): the adapters' titles).
 */
export function refuseOtherFormat(
  format: string,
  text: string,
  file: string,
  titles: Record<string, string>,
): void {
  const real = sniffFormat(text);
  if (real === undefined || real === format) return;
  throw new InputError(
    `${file} is ${titles[real] ?? real} (its fields say so), not ${titles[format] ?? format}: read it with format ${real} (--format ${real}, or benchmarks[].format in kernelgate.yml)`,
  );
}
