// Leaf utilities every stage may use; they import nothing of kernelgate's. The folder's only door.
export * from './exec.js';
export * from './markdown.js';
export * from './nvcc-names.js';
export * from './stats.js';
export * from './package-root.js';
export * from './output.js';
