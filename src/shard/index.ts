// Splitting a run over a matrix of runners and joining it again (docs/scaling.md): the door of
// src/shard, the one module the rest of kernelgate imports from.
export {
  configUnits,
  ESTIMATE_OVERHEAD_S,
  estimatedSeconds,
  MAX_SHARDS,
  measuredSeconds,
  PAIRED_RULE,
  PAIRED_TIME_CAP_S,
  parseShardSpec,
  planDigest,
  planShards,
  shardRecord,
  splitResults,
  TIME_CAP_S,
  unitsOfResults,
  type CostRule,
  type ShardPlan,
  type ShardSpec,
} from './plan.js';
export {
  compositeBaseline,
  findShardFiles,
  mergeShards,
  readShardDocuments,
  shardTitleParts,
  skuOf,
  type Merged,
  type ShardDocument,
} from './merge.js';
export { SHARD_BALANCE, shardedOptions, type ShardBalance, type Sharded } from './run.js';
export {
  mergedRun,
  readShardInputs,
  shardDone,
  type MergeContext,
  type ShardInputs,
} from './action.js';
export { mergeCommand, MERGE_OPTIONS, MERGE_USAGE, type MergeCliDeps } from './cli.js';
