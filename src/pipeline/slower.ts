// ncu-slower (src/deep): the cases a run is judged SLOWER in, as Nsight Compute targets, the
// largest change first; ncu-compare's: each moved variant's largest change. Judged here as the report judges them (compare), before the deep checks
// add their section.
import type { Config } from '../config/index.js';
import {
  type CompareTarget,
  type DeepTarget,
  movedTargets,
  type SlowerCase,
  slowerTargets,
} from '../deep/index.js';
import { type CaseComparison, compare } from '../judge/index.js';
import type { KernelgateResults } from '../results/index.js';

/** The judged cases that `keep` selects, each with its ratio, as deep targets. */
function judgedTargets(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
  keep: (c: CaseComparison) => boolean,
): SlowerCase[] {
  return compare(results, baseline, config)
    .cases.filter((c) => c.ratio !== undefined && keep(c))
    .map((c) => ({
      kernel: c.kernel,
      variant: c.variant,
      caseId: c.caseId,
      params: c.params,
      ratio: c.ratio as number,
    }));
}

export function slowerDeepTargets(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
): DeepTarget[] {
  return slowerTargets(judgedTargets(results, baseline, config, (c) => c.perf === 'SLOWER'));
}

/**
 * ncu-compare's targets: each variant judged SLOWER or FASTER (A/A controls aside: their code is
 * the same in both arms), on its case of the largest change.
 */
export function movedDeepTargets(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
): CompareTarget[] {
  return movedTargets(
    judgedTargets(
      results,
      baseline,
      config,
      (c) => (c.perf === 'SLOWER' || c.perf === 'FASTER') && c.control === undefined,
    ),
  );
}
