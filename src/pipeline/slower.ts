// ncu-slower (src/deep): the cases a run is judged SLOWER in, as Nsight Compute targets, the
// largest change first; ncu-compare's: each moved variant's largest change. Judged here as the report judges them (compare), before the deep checks
// add their section.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import {
  type CompareTarget,
  type DeepOptions,
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

/**
 * ncu-compare's part of the deep checks' options for a paired run's results: the moved variants'
 * targets and the base revision's checkout (run.paired_base.root, with the base's build records
 * written to <outDir>/base-builds.json). The action (input `profile`) and `kernelgate deep
 * --checks ncu-compare` both take it from here.
 */
export function ncuCompareOptions(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
  outDir: string,
): Pick<DeepOptions, 'compare' | 'base'> {
  const compare = movedDeepTargets(results, baseline, config);
  const root = results.run.paired_base?.root;
  if (compare.length === 0 || root === undefined) return { compare };
  const buildsPath = join(outDir, 'base-builds.json');
  writeFileSync(buildsPath, `${JSON.stringify({ builds: results.base_builds ?? [] }, null, 1)}\n`);
  return { compare, base: { root, kernelsDir: join(root, config.kernelsDir), buildsPath } };
}
