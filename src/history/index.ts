// The history: compact records of trusted runs, the data-branch store, exports (Bencher,
// github-action-benchmark), the trend dashboard, the migration from baseline-dir. The only door.
export * from './action.js';
export * from './branch-store.js';
export * from './dashboard-data.js';
export * from './dashboard.js';
export { configReferences } from './dashboard-verdicts.js';
export * from './export.js';
export * from './migrate.js';
export * from './record.js';
export * from './record-results.js';
