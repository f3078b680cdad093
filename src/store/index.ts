// The baseline store: trusted runs' results, one file per run under BRANCH/GPU-SKU/, signed with
// the store key when there is one. The only door.
export * from './baseline.js';
export * from './signing.js';
