// Configuration: kernelgate.yml and the kernels' manifests (typed, every error naming file, field
// and value), and the GPU table (data/gpus.json: models and datasheet peaks). The only door.
export * from './config.js';
export * from './gpus.js';
