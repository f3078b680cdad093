// Measuring on the runner: the doctor, the build, the Python harness, the paired base revision,
// merged into one results document. The folder's only door.
export * from './base-build.js';
export * from './balance.js';
export * from './base-revision.js';
export * from './benchmarks.js';
export * from './build/index.js';
export * from './diagnose.js';
export * from './doctor/index.js';
export * from './harness.js';
export * from './identity.js';
export { importClosure, type ImportClosure } from './python-imports.js';
export * from './measure.js';
export * from './module-probe.js';
