// The results contract (kernelgate/results@1): the types generated from
// schema/results.schema.json and the validating reader. The folder's only door.
export * from './results.js';
export type * from './results-types.js';
