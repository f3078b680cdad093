// The baseline store: trusted runs' results, one file per run under BRANCH/GPU-SKU/. The only door.
export * from './baseline.js';
