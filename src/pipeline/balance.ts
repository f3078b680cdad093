// Which stored run balances the harness's lanes on several GPUs (src/measure/balance.ts): the
// baseline this run's mode reads (a pull request: its base branch's; push and schedule: the
// branch's), of the GPU model the doctor named, or the results file given explicitly.
import { existsSync } from 'node:fs';
import { explicitBaseline, StoreError } from '../store/index.js';
import type { BalanceSource, MeasureOptions } from '../measure/index.js';
import type { Environment } from '../results/index.js';
import type { FullRunOptions } from './run.js';

export function storedBalance(
  options: Pick<FullRunOptions, 'mode' | 'branch' | 'baseBranch' | 'store' | 'baselinePath'>,
  log: { info(line: string): void },
): NonNullable<MeasureOptions['balance']> {
  return async (environment: Environment): Promise<BalanceSource | undefined> => {
    if (options.baselinePath !== undefined) {
      if (!existsSync(options.baselinePath)) return undefined;
      const given = explicitBaseline(options.baselinePath);
      return { results: given.results, label: `the baseline ${options.baselinePath}` };
    }
    const branch = options.mode === 'pr' ? options.baseBranch : options.branch;
    if (branch === undefined) return undefined;
    const sku = environment.gpu.sku ?? 'unknown';
    try {
      const stored = await options.store.latest({ branch, sku });
      if (stored === undefined) return undefined;
      return {
        results: stored.results,
        label: `the stored run ${stored.path} (${branch}, ${sku})`,
      };
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      log.info(
        `kernelgate: the stored runs could not be read for the lanes' order: ${error.message}`,
      );
      return undefined;
    }
  };
}
