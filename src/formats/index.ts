// The one list of input formats: every name kernelgate.yml's benchmarks[].format and `kernelgate
// adapt --format` accept, each with its kind (a file a tool wrote, or a command kernelgate runs),
// its title, how its output is produced, its capabilities and (a file format) its parser. The
// config's checks and messages, the usage text, the adapters and `kernelgate adapt --formats` are
// made from it; test/formats.test.ts fails on a format name written anywhere else in src/.
// Adding a format: its parser module here and one line in FORMATS (CONTRIBUTING.md).
import { commandAdapter } from './command.js';
import { gbenchAdapter } from './gbench.js';
import { nvbenchAdapter } from './nvbench.js';
import { pytestBenchmarkAdapter } from './pytest-benchmark.js';
import { refuseOtherFormat as refuseOther } from './sniff.js';
import { formatsTable as table } from './table.js';
import type { FileAdapter } from './types.js';

/** Every format, in the order messages and usage list them. */
const FORMATS = [gbenchAdapter, pytestBenchmarkAdapter, nvbenchAdapter, commandAdapter] as const;

/** A format's entry: a file format's adapter (with its parser), or the command format's data. */
export type Adapter = (typeof FORMATS)[number];
/** kernelgate.yml's benchmarks[].format: a name of the list. */
export type BenchmarkFormat = Adapter['format'];
/** The formats that read a file a tool wrote (`kernelgate adapt --format`). */
export type FileFormat = Extract<Adapter, { kind: 'file' }>['format'];

/** The command format's name, for the messages about its own fields. */
export const COMMAND_FORMAT = commandAdapter.format;

const isFile = (a: Adapter): a is Extract<Adapter, { kind: 'file' }> => a.kind === 'file';

/** Every adapter, in the order of the list. */
export function adapterList(): readonly Adapter[] {
  return FORMATS;
}

export function adapterFormats(): readonly BenchmarkFormat[] {
  return FORMATS.map((a) => a.format);
}

/** The formats that read a file, in the order of the list. */
export const FILE_FORMATS: readonly FileFormat[] = FORMATS.filter(isFile).map((a) => a.format);

/** A format named in kernelgate.yml or on the command line, if it is one of the list. */
export function isBenchmarkFormat(format: string): format is BenchmarkFormat {
  return FORMATS.some((a) => a.format === format);
}

/** A format's adapter: every format of the list has one. */
export function adapterFor(format: BenchmarkFormat): Adapter {
  return FORMATS.find((a) => a.format === format)!;
}

/** The file format's adapter, for `kernelgate adapt --format` (as the user typed it). */
export function fileAdapterFor(format: string): FileAdapter<FileFormat> | undefined {
  return FORMATS.filter(isFile).find((a) => a.format === format);
}

/** Each file format's title ("Google Benchmark JSON"), as messages name a file's real format. */
export function formatTitles(): Readonly<Record<string, string>> {
  return Object.fromEntries(FORMATS.filter(isFile).map((a) => [a.format, a.title]));
}

/** A file format's default threshold (%) by its name in the results (kernels[].adapter.format). */
export function formatThresholdPct(format: string): number | undefined {
  return fileAdapterFor(format)?.thresholdPct;
}

/** Whether a format named in the results (kernels[].adapter.format) is the command format. */
export function isCommandFormat(format: string): boolean {
  return FORMATS.some((a) => a.format === format && a.kind === 'command');
}

/** Names as messages list them: "a, b or c". */
export function formatNames(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * Refuses a file another file format's tool wrote, naming the file, its real format and the option
 * to give (sniff.ts, over the list's file formats).
 */
export function refuseOtherFormat(format: string, text: string, file: string): void {
  refuseOther(format, text, file, FORMATS.filter(isFile));
}

/** What each format gives, as a Markdown table (`kernelgate adapt --formats`). */
export function formatsTable(): string {
  return table(FORMATS);
}

export * from './case-id.js';
export * from './types.js';
export { splitRunName } from './gbench.js';
export { sniffFormat } from './sniff.js';
