// The compositions every entry (action, command line) shares: fullRun (measure,
// pick the baseline, keep trusted runs) and judge (compare → tiers → gate → render). The only door.
export * from './judge.js';
export * from './run.js';
export * from './slower.js';
export * from './nightly-base.js';
export * from './bisect.js';
export * from './nightly-bisect.js';
export * from './pr-baseline.js';
export * from './check.js';
export * from './base-manifests.js';
export * from './merged.js';
export * from './sharded.js';
