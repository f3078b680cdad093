// The build: nvcc per CUDA variant (cached by content hash) and what was really built (archs,
// resources, SASS census) against the manifest's expectations. Its only door.
export * from './build.js';
