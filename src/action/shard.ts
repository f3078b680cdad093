// The action's shard and merge inputs (docs/scaling.md). `shard: i/n` measures one shard and ends
// once its results are written (the merge judges); `merge: DIR` with `shards: n` joins the shards'
// downloaded results into one run that is judged, reported and gated once (src/pipeline/merged.ts).
// Kept apart from main.ts, which calls in here.
import type { KernelgateResults } from '../results/index.js';
import {
  MAX_SHARDS,
  parseShardSpec,
  SHARD_BALANCE,
  type ShardBalance,
  type ShardSpec,
} from '../shard/index.js';

export interface ShardInputs {
  /** `shard: i/n`: this job measures shard i of n */
  shard: ShardSpec | undefined;
  /** how the split is balanced (`shard-balance`) */
  balance: ShardBalance;
  /** `merge: DIR`: the folder of the shards' downloaded results */
  merge: string | undefined;
  /** `shards: n`: how many shards the merge expects */
  shards: number | undefined;
}

/** Every error quotes the input's name and the bad value. */
export function readShardInputs(getInput: (name: string) => string): ShardInputs {
  const text = (name: string) => {
    const value = getInput(name).trim();
    return value === '' ? undefined : value;
  };
  const shardText = text('shard');
  const shard = shardText === undefined ? undefined : parseShardSpec(shardText, "Input 'shard'");
  const balance = text('shard-balance') ?? 'baseline';
  if (!(SHARD_BALANCE as readonly string[]).includes(balance)) {
    throw new Error(
      `Input 'shard-balance' must be one of ${SHARD_BALANCE.join(', ')}; got '${balance}'.`,
    );
  }
  const merge = text('merge');
  const shardsText = text('shards');
  if (
    shardsText !== undefined &&
    (!/^\d{1,4}$/.test(shardsText) || Number(shardsText) < 1 || Number(shardsText) > MAX_SHARDS)
  ) {
    throw new Error(
      `Input 'shards' must be a whole number from 1 to ${MAX_SHARDS}; got '${shardsText}'.`,
    );
  }
  const shards = shardsText === undefined ? undefined : Number(shardsText);
  if (merge !== undefined && shards === undefined) {
    throw new Error(
      `Input 'merge' is '${merge}', but 'shards' is empty: the merge must know how many shards to expect, or a shard that never reported would go unnoticed.`,
    );
  }
  if (merge !== undefined && shard !== undefined) {
    throw new Error(
      `Inputs 'shard' and 'merge' are both set: a step either measures a shard or merges them.`,
    );
  }
  return { shard, balance: balance as ShardBalance, merge, shards };
}

/** The shard's step ends here: its results are written, the merge judges them. */
export function shardDone(
  spec: ShardSpec,
  results: KernelgateResults,
  resultsPath: string,
): string {
  const owned = results.run.shard?.cases.length ?? 0;
  return `kernelgate: shard ${spec.index}/${spec.count} measured ${results.cases.length} results of its ${owned} cases: ${resultsPath}. Upload it as an artifact; the merge job judges every shard at once.`;
}
