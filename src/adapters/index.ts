// The one list of adapters: a format is added by writing its module (one parser), naming it in
// kernelgate.yml's formats (src/config/benchmarks.ts BENCHMARK_FORMATS, file or command), listing
// it here and committing a real output of the tool as its fixture (docs/adapters.md). The compiler
// holds this list to the formats: one adapter of the right kind for each.
import {
  type BENCHMARK_FORMATS,
  type BenchmarkFormat,
  type FileFormat,
  isBenchmarkFormat,
} from '../config/index.js';
import { commandAdapter } from './command.js';
import {
  type FileAdapter,
  gbenchAdapter,
  nvbenchAdapter,
  pytestBenchmarkAdapter,
} from '../formats/index.js';

export type Adapter = FileAdapter<FileFormat> | typeof commandAdapter;

const ADAPTERS: {
  readonly [F in BenchmarkFormat]: Extract<Adapter, { kind: (typeof BENCHMARK_FORMATS)[F] }>;
} = {
  gbench: gbenchAdapter,
  'pytest-benchmark': pytestBenchmarkAdapter,
  nvbench: nvbenchAdapter,
  command: commandAdapter,
};

/** Every adapter, in the order of kernelgate.yml's formats. */
export function adapterList(): readonly Adapter[] {
  return Object.values(ADAPTERS);
}

export function adapterFormats(): readonly BenchmarkFormat[] {
  return adapterList().map((a) => a.format);
}

/** Each format's title ("Google Benchmark JSON"), as messages name a file's real format. */
export function formatTitles(): Readonly<Record<string, string>> {
  return Object.fromEntries(
    adapterList()
      .filter((a) => a.kind === 'file')
      .map((a) => [a.format, a.title]),
  );
}

/** A format's adapter: every format of the list has one. */
export function adapterFor(format: BenchmarkFormat): Adapter {
  return ADAPTERS[format];
}

/** The formats that read a file, for `kernelgate adapt --format` (as the user typed it). */
export function fileAdapterFor(format: string): FileAdapter<FileFormat> | undefined {
  const adapter = isBenchmarkFormat(format) ? adapterFor(format) : undefined;
  return adapter?.kind === 'file' ? adapter : undefined;
}

// The folder's only door: what the rest of kernelgate uses of the adapters.
export { fillTemplate, shellRunner, type CommandOutcome, type CommandRunner } from './command.js';
export * from './notes.js';
export * from './run.js';
export * from './runner-gpu.js';
export { mergeRuns } from './runs.js';
export { adaptFiles, adaptSummary } from './adapt-files.js';
