// The one list of adapters: a format is added by writing its module (one parser), listing it here
// and committing a real output of the tool as its fixture (docs/adapters.md).
import { commandAdapter } from './command.js';
import { gbenchAdapter } from './gbench.js';
import { nvbenchAdapter } from './nvbench.js';
import { pytestBenchmarkAdapter } from './pytest-benchmark.js';
import type { FileAdapter } from './types.js';

export type Adapter = FileAdapter | typeof commandAdapter;

// Functions, not constants: config/ and adapters/ import each other (issue 29), and a module that
// enters the cycle through one adapter would otherwise build the list while that adapter is still
// undefined.
export function adapterList(): readonly Adapter[] {
  return [gbenchAdapter, pytestBenchmarkAdapter, nvbenchAdapter, commandAdapter];
}

export function adapterFormats(): readonly string[] {
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

export function adapterFor(format: string): Adapter | undefined {
  return adapterList().find((a) => a.format === format);
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
