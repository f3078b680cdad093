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
  SHARD_BALANCE,
  parseShardSpec,
  planDigest,
  planShards,
  shardRecord,
  splitResults,
  TIME_CAP_S,
  unitsOfResults,
  type CostRule,
  type ShardBalance,
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
