// Other tools' output formats: one parser per file format and the helpers they share. The only
// door.
export * from './case-id.js';
export * from './types.js';
export { gbenchAdapter, splitRunName } from './gbench.js';
export { nvbenchAdapter } from './nvbench.js';
export { pytestBenchmarkAdapter } from './pytest-benchmark.js';
export { refuseOtherFormat, sniffFormat } from './sniff.js';
