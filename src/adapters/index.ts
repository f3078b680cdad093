// The one list of adapters: a format is added by writing its module (one parser), listing it here
// and committing a real output of the tool as its fixture (docs/adapters.md).
import { commandAdapter } from './command.js';
import { gbenchAdapter } from './gbench.js';
import { nvbenchAdapter } from './nvbench.js';
import { pytestBenchmarkAdapter } from './pytest-benchmark.js';
import type { FileAdapter } from './types.js';

export type Adapter = FileAdapter | typeof commandAdapter;

export const ADAPTERS: readonly Adapter[] = [
  gbenchAdapter,
  pytestBenchmarkAdapter,
  nvbenchAdapter,
  commandAdapter,
];

export const ADAPTER_FORMATS: readonly string[] = ADAPTERS.map((a) => a.format);

/** Each format's title ("Google Benchmark JSON"), as messages name a file's real format. */
export const FORMAT_TITLES: Readonly<Record<string, string>> = Object.fromEntries(
  ADAPTERS.filter((a) => a.kind === 'file').map((a) => [a.format, a.title]),
);

export function adapterFor(format: string): Adapter | undefined {
  return ADAPTERS.find((a) => a.format === format);
}

/** The formats that read a file, for `kernelgate adapt --format`. */
export function fileAdapterFor(format: string): FileAdapter | undefined {
  const adapter = adapterFor(format);
  return adapter?.kind === 'file' ? adapter : undefined;
}

// The folder's only door: what the rest of kernelgate uses of the adapters.
export { fillTemplate, shellRunner, type CommandOutcome, type CommandRunner } from './command.js';
export * from './config.js';
export * from './notes.js';
export * from './run.js';
export * from './types.js';
export * from './runner-gpu.js';
export { mergeRuns } from './runs.js';
export { adaptFiles, adaptSummary } from './adapt-files.js';
