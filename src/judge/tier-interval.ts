// The tier value's interval (docs/judging.md, Tiers): a percentile bootstrap of the graded times,
// each side resampled as its estimate is made; none where the times were not taken side by side.
import type { Config } from '../config/index.js';
import {
  balancedResampler,
  bootstrapScale,
  hashString,
  medianResampler,
  type Resampler,
} from '../lib/index.js';
import type { CaseResult } from '../results/index.js';
import type { TierStatus } from './tiers.js';
import { MIN_SAMPLES_FOR_VERDICT } from './verdicts.js';

/**
 * One side of the value's bootstrap: the graded estimate of `timing`, resampled as it is made; or
 * why it cannot be.
 */
function sideOf(
  timing: NonNullable<CaseResult['timing']>,
  statistic: 'median' | 'balanced',
  who: string,
): Resampler | string {
  const samples = timing.samples_ms;
  if (samples.length < MIN_SAMPLES_FOR_VERDICT) {
    return `${who} has ${samples.length} sample(s), fewer than the ${MIN_SAMPLES_FOR_VERDICT} an interval needs`;
  }
  // a ratio of resampled times needs every time positive (a zero would draw an infinite ratio)
  const bad = samples.find((ms) => !(ms > 0) || !Number.isFinite(ms));
  if (bad !== undefined)
    return `${who} has a sample of ${bad} ms, where an interval needs every time above 0`;
  if (statistic === 'median') return medianResampler(samples);
  if (!timing.after) {
    return `the balanced time of ${who} carries no timing.after (recorded since kernelgate-harness 0.2.0)`;
  }
  return (
    balancedResampler(samples, timing.after) ??
    `timing.after of ${who} does not name one predecessor for each of its ${samples.length} samples, and two or more in all`
  );
}

/**
 * Why the value compares times that were not taken side by side (undefined where they were, or
 * where it reads one time alone): resampling each time apart sees the noise within each, not what
 * moved between them. A ratio to a reference variant needs both timed in the same rounds, which
 * their timing.after records (harness 0.2.0 on, the balanced statistic); a paired run times each
 * variant in its own pairs, and there two names of one cuDNN kernel read up to 7 % apart where
 * the intervals of their medians were a percent or two wide (docs/judging.md, Tiers).
 */
function apartProblem(status: TierStatus): string | undefined {
  if (status.metric === 'gemm_ceiling_ratio' && status.referenceVariant === undefined) {
    return 'the GEMM ceiling (environment.ceilings) was measured apart from the candidate';
  }
  if (status.referenceVariant === undefined || status.statistic === 'balanced') return undefined;
  return `${status.variant} and ${status.referenceVariant} were not timed side by side (no timing.after: a paired run, or a harness before 0.2.0)`;
}

/**
 * The value's interval (status.interval), from its times' samples: the candidate's graded time
 * divides every metric's value, the reference's multiplies a ratio to a reference variant; or
 * why there is none (status.intervalProblem).
 */
export function valueInterval(
  status: TierStatus,
  timing: CaseResult['timing'],
  refTiming: CaseResult['timing'],
  config: Config,
): void {
  if (status.value === undefined || !timing) return;
  const apart = apartProblem(status);
  if (apart) {
    status.intervalProblem = apart;
    return;
  }
  const statistic = status.statistic ?? 'median';
  const parts: [NonNullable<CaseResult['timing']>, string, 1 | -1][] = [
    [timing, status.variant, -1],
  ];
  if (refTiming && status.referenceVariant !== undefined) {
    parts.push([refTiming, status.referenceVariant, 1]);
  }
  const sides: { side: Resampler; exponent: 1 | -1 }[] = [];
  for (const [t, who, exponent] of parts) {
    const side = sideOf(t, statistic, who);
    if (typeof side === 'string') {
      status.intervalProblem = side;
      return;
    }
    sides.push({ side, exponent });
  }
  const { confidence, resamples, seed } = config.compare;
  const scale = bootstrapScale(sides, {
    confidence,
    resamples,
    seed:
      (seed ^ hashString(`tiers/${status.kernel}/${status.variant}/${status.caseId ?? ''}`)) >>> 0,
  });
  status.interval = { lo: status.value * scale.lo, hi: status.value * scale.hi, confidence };
}
