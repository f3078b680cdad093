// Which tool wrote a JSON file, from the fields only that tool writes (each file format's `sniff`):
// so `--format gbench` on a pytest-benchmark file says "this is pytest-benchmark JSON" instead of a
// field error.
import { InputError } from '../results/index.js';
import { isObject, type FileAdapter } from './types.js';

/** The format of `formats` whose tool wrote `text`, where its fields say so; undefined when unsure. */
export function sniffFormat(text: string, formats: readonly FileAdapter[]): string | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(root)) return undefined;
  const first = Array.isArray(root.benchmarks) ? root.benchmarks[0] : undefined;
  return formats.find((f) => f.sniff?.(root, first) === true)?.format;
}

/**
 * Refuses a file another tool wrote, naming the file, its real format (by its title) and the
 * option to give.
 */
export function refuseOtherFormat(
  format: string,
  text: string,
  file: string,
  formats: readonly FileAdapter[],
): void {
  const real = sniffFormat(text, formats);
  if (real === undefined || real === format) return;
  const title = (name: string) => formats.find((f) => f.format === name)?.title ?? name;
  throw new InputError(
    `${file} is ${title(real)} (its fields say so), not ${title(format)}: read it with format ${real} (--format ${real}, or benchmarks[].format in kernelgate.yml)`,
  );
}
