// One shard of a split run on a runner: the cases it owns are chosen once the doctor has named the
// GPU (the stored baseline of that GPU SKU balances the split), the harness runs only those, and
// the results record the shard, the whole split and the GPU (run.shard).
import { existsSync, writeFileSync } from 'node:fs';
import { explicitBaseline, StoreError, type StoredBaseline } from '../store/index.js';
import type { Environment } from '../results/index.js';
import {
  configUnits,
  PAIRED_TIME_CAP_S,
  planShards,
  shardRecord,
  skuOf,
  TIME_CAP_S,
  type ShardBalance,
  type ShardPlan,
  type ShardSpec,
} from '../shard/index.js';
import type { FullRun, FullRunOptions } from './run.js';

export interface Sharded {
  /** the run's options with the shard's case selection */
  options: FullRunOptions;
  /** records the shard in the results (and their file) once measured */
  finish(run: FullRun): FullRun;
}

export function shardedOptions(
  options: FullRunOptions,
  spec: ShardSpec,
  balance: ShardBalance,
  log: { info(line: string): void; warning(message: string): void },
): Sharded {
  let plan: ShardPlan | undefined;
  const timings = async (environment: Environment): Promise<StoredBaseline | undefined> => {
    if (balance === 'estimate') return undefined;
    if (options.baselinePath !== undefined) {
      if (existsSync(options.baselinePath)) return explicitBaseline(options.baselinePath);
      log.info(
        `shard: no baseline at ${options.baselinePath} yet: the split is balanced by estimate.`,
      );
      return undefined;
    }
    const branch = options.mode === 'pr' ? options.baseBranch : options.branch;
    if (branch === undefined) return undefined;
    try {
      return await options.store.latest({ branch, sku: skuOf(environment.gpu) });
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      log.warning(
        `shard: the stored baseline could not be read (${error.message}): the split is balanced by estimate.`,
      );
      return undefined;
    }
  };
  const selectCases = async (environment: Environment): Promise<string[]> => {
    const units = configUnits(options.config, options.only);
    const paired = options.pairedBase !== undefined || options.pairedWithLastGood === true;
    plan = planShards(units, spec.count, await timings(environment), {
      paired,
      capS: paired ? PAIRED_TIME_CAP_S : TIME_CAP_S,
    });
    const mine = plan.shards[spec.index - 1] ?? [];
    log.info(
      `shard ${spec.index}/${spec.count}: ${mine.length} of ${units.length} cases, about ` +
        `${plan.seconds[spec.index - 1] ?? 0} s by ${plan.source === 'baseline' ? `the timings of ${plan.baseline}` : 'the estimate (no stored timings: variants × the time cap + overhead)'}; split ${plan.digest}`,
    );
    return mine;
  };
  return {
    // A shard holds part of the cases: only the merged run may become a baseline.
    // A shard judges nothing: its baseline is read for the split's timings only.
    options: { ...options, selectCases, saveBaseline: false, baselinePath: undefined },
    finish(run) {
      if (plan === undefined) return run;
      const gpu = run.results.environment.gpu;
      const results = {
        ...run.results,
        run: {
          ...run.results.run,
          shard: shardRecord(plan, spec.index, {
            name: gpu.name,
            ...(gpu.sku !== undefined ? { sku: gpu.sku } : {}),
            ...(run.results.run.host !== undefined ? { host: run.results.run.host } : {}),
          }),
        },
      };
      writeFileSync(run.resultsPath, JSON.stringify(results, null, 2) + '\n');
      return { ...run, results };
    },
  };
}
