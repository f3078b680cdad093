// The step test over a case's history (issue 25): has the case's median moved, and stayed moved?
// A series of nightly medians (one like-for-like segment: no boundary inside it, trend.ts) is
// tested for a change-point that holds to tonight. It is a finding of the nightly report, never a
// gate reason: tonight's paired verdicts are the gate's.
//
// The test, on the log of the medians (a ratio is a difference there), over the newest `window`
// nights of the segment:
// - For each split k (the nights from k to tonight are "after", at least `minBefore` nights of the
//   segment before it are "before"): the before nights' median m and the spread σ, the larger of
//   the before nights' 1.4826 × MAD (the median absolute deviation from m: a night's outlier does
//   not widen it) and their night-to-night spread (1.4826 × the median of the differences of
//   consecutive nights ÷ √2), each an estimate of one night's standard deviation.
// - The threshold is K σ √(1 + π/2 ÷ nb) (a night against the median of nb nights, whose own error
//   is π/2 ÷ nb of a night's variance), never less than the floor: the paired threshold (1 %) or
//   the paired absolute floor (0.8 µs) as a fraction of m, whichever is larger.
// - The split holds when every after night is beyond the threshold from m, all in one direction.
// Every split is tested with its own before nights; the earliest that holds (the longest run of
// moved nights ending tonight) is the finding:
// a step when it holds for two nights or more, a watch when only tonight is beyond. A single
// outlier that came back is neither (tonight is not beyond); a night in the before group is
// absorbed by the median and the MAD.
//
// Why this and not a t-test over a window (Perfherder, conbench): those assume a night's noise is
// normal and steady; GPU medians have heavy tails (a noisy neighbour, a throttled night) that
// inflate a standard deviation and pull a mean. The median and MAD ignore up to half the window,
// and "every night after is beyond" is PyTorch HUD's rule of consecutive violations, applied to
// each split instead of to one fixed baseline.
import { median } from '../lib/index.js';

/** How many nights of a segment the test looks at (tonight included). */
export const STEP_WINDOW = 14;
/** The fewest nights before a split: a median and a spread of fewer say little. */
export const STEP_MIN_BEFORE = 3;
/** The threshold in spreads: K × 1.4826 MAD (4 standard deviations of normal noise). */
export const STEP_SPREADS = 4;
/** A step is called when it has held this many nights; one night beyond is a watch. */
export const STEP_MIN_NIGHTS = 2;

export interface StepOptions {
  /** the smallest change called, in % (the paired threshold, compare.paired.threshold_pct) */
  floorPct: number;
  /** the smallest change called, in ms (the paired floor, compare.paired.min_change_ms) */
  floorMs: number;
  window?: number;
  minBefore?: number;
  spreads?: number;
}

export interface StepFinding {
  /** step: held STEP_MIN_NIGHTS nights or more; watch: tonight alone beyond the threshold */
  kind: 'step' | 'watch';
  direction: 'SLOWER' | 'FASTER';
  /** index (in the series given) of the first night after the change */
  index: number;
  /** nights from the change to tonight, all beyond the threshold */
  nights: number;
  /** the before nights' median and the after nights' median */
  fromMs: number;
  toMs: number;
  /** (to / from − 1) × 100 */
  changePct: number;
  /** the threshold the after nights were beyond, in % of fromMs */
  thresholdPct: number;
  /** the spread the threshold came from (the larger of the two), in % (log scale × 100) */
  spreadPct: number;
  /** nights before the change the median and spread came from */
  before: number;
}

/** 1.4826 × the median absolute deviation from `center`: the standard deviation of normal noise. */
export function madSpread(values: readonly number[], center: number): number {
  return 1.4826 * median(values.map((v) => Math.abs(v - center)));
}

/**
 * The night-to-night spread of nights: 1.4826 × the median of |y(i+1) − y(i)|, ÷ √2 (a difference
 * of two nights has twice a night's variance); an outlier adds two large differences, which the
 * median ignores.
 */
export function diffSpread(y: readonly number[]): number {
  if (y.length < 2) return 0;
  const d = y.slice(1).map((v, i) => Math.abs(v - y[i]!));
  return (1.4826 * median(d)) / Math.SQRT2;
}

/** The split at `k` of log medians `y`: the finding when every night from k on is beyond. */
function testSplit(
  y: readonly number[],
  ms: readonly number[],
  k: number,
  opts: Required<StepOptions>,
): StepFinding | undefined {
  const before = y.slice(0, k);
  const after = y.slice(k);
  const m = median(before);
  const spread = Math.max(madSpread(before, m), diffSpread(before));
  const fromMs = Math.exp(m);
  const floor = Math.log1p(Math.max(opts.floorPct / 100, opts.floorMs / fromMs));
  // a night against a median of nb nights: the median's own error adds π/2 ÷ nb of a night's variance
  const threshold = Math.max(opts.spreads * spread * Math.sqrt(1 + Math.PI / 2 / k), floor);
  const d = after.map((v) => v - m);
  const up = d.every((x) => x > threshold);
  const down = d.every((x) => x < -threshold);
  if (!up && !down) return undefined;
  const toMs = median(ms.slice(k));
  return {
    kind: after.length >= STEP_MIN_NIGHTS ? 'step' : 'watch',
    direction: up ? 'SLOWER' : 'FASTER',
    index: k,
    nights: after.length,
    fromMs,
    toMs,
    changePct: 100 * (toMs / fromMs - 1),
    thresholdPct: 100 * Math.expm1(threshold),
    spreadPct: 100 * spread,
    before: before.length,
  };
}

/**
 * The step test over one like-for-like series of medians (ms, oldest first, tonight last): the
 * longest run of nights ending tonight that all moved beyond the threshold from the median of the
 * nights before it, or undefined when tonight has not moved.
 */
export function stepTest(
  seriesMs: readonly number[],
  options: StepOptions,
): StepFinding | undefined {
  const opts: Required<StepOptions> = {
    window: STEP_WINDOW,
    minBefore: STEP_MIN_BEFORE,
    spreads: STEP_SPREADS,
    ...options,
  };
  const ms = seriesMs.slice(-opts.window);
  if (ms.some((v) => !(v > 0))) throw new Error('stepTest: every median must be above 0 ms');
  const y = ms.map(Math.log);
  // The earliest split that holds: the longest run of moved nights ending tonight. Every split is
  // tested on its own (its own before nights), so a step older than half the window is found too.
  for (let k = opts.minBefore; k < y.length; k++) {
    const at = testSplit(y, ms, k, opts);
    if (at !== undefined) return at;
  }
  return undefined;
}
