// Configuration: kernelgate.yml and the kernels' manifests (typed, every error naming file, field
// and value, and where the field is: locate.ts), and the GPU table (data/gpus.json: models and
// datasheet peaks). The only door.
export * from './config.js';
export * from './run-options.js';
export * from './gpus.js';
export * from './kernel-folders.js';
export * from './locate.js';
export * from './noise.js';
export * from './owns.js';
export * from './check.js';
export * from './manifest-diff.js';
export * from './benchmarks.js';
export * from './formula.js';
export * from './cases.js';
