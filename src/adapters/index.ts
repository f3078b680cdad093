// Other tools' benchmarks as results: running kernelgate.yml's benchmarks, reading the files they
// wrote with the formats' parsers (src/formats/, the one list of formats), merging and annotating.
// The folder's only door: what the rest of kernelgate uses of the adapters.
export { fillTemplate, shellRunner, type CommandOutcome, type CommandRunner } from './command.js';
export * from './notes.js';
export * from './run.js';
export * from './runner-gpu.js';
export { mergeRuns } from './runs.js';
export { adaptFiles, adaptSummary } from './adapt-files.js';
