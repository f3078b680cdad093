// Order statistics and seeded bootstraps: the numbers compare.ts turns into verdicts.
// Deterministic on purpose: the same samples and seed always give the same interval.

/** Linear-interpolation quantile (type 7, as numpy's default) of samples sorted ascending. */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) throw new Error('quantile of no samples');
  if (q <= 0) return sorted[0] as number;
  if (q >= 1) return sorted[n - 1] as number;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const frac = pos - lo;
  const a = sorted[lo] as number;
  const b = sorted[Math.min(lo + 1, n - 1)] as number;
  return a + (b - a) * frac;
}

/** The samples sorted ascending, in a new array (a typed sort: no comparator call per pair). */
export function sortedCopy(samples: readonly number[]): number[] {
  return Array.from(Float64Array.from(samples).sort());
}

/**
 * Type-7 quantiles of unsorted samples, each by selection on one copy: O(n) a quantile where
 * sorting is O(n log n) (a run's samples can number millions), and the same values as
 * quantileSorted over the sorted samples.
 */
export function quantiles(samples: ArrayLike<number>, qs: readonly number[]): number[] {
  const n = samples.length;
  if (n === 0) throw new Error('quantile of no samples');
  const a = Float64Array.from(samples);
  return qs.map((q) => {
    const pos = (n - 1) * Math.min(Math.max(q, 0), 1);
    const lo = Math.floor(pos);
    const low = selectInPlace(a, lo);
    const frac = pos - lo;
    if (frac === 0 || lo + 1 >= n) return low;
    // After the selection everything past `lo` is at least a[lo]: its least is sorted[lo + 1].
    let high = Infinity;
    for (let i = lo + 1; i < n; i++) if ((a[i] as number) < high) high = a[i] as number;
    return low + (high - low) * frac;
  });
}

export function quantile(samples: readonly number[], q: number): number {
  return quantiles(samples, [q])[0] as number;
}

export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

export interface Spread {
  medianMs: number;
  q1Ms: number;
  q3Ms: number;
  iqrMs: number;
}

export function spread(samplesMs: readonly number[]): Spread {
  const [q1Ms, medianMs, q3Ms] = quantiles(samplesMs, [0.25, 0.5, 0.75]) as [
    number,
    number,
    number,
  ];
  return { medianMs, q1Ms, q3Ms, iqrMs: q3Ms - q1Ms };
}

/** mulberry32: a small, fast 32-bit PRNG; returns a function yielding floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a hash of a string, to give every case its own bootstrap stream from one seed. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Moves the k-th smallest element of `a` to index k, smaller ones before it and larger ones
 * after (Hoare's selection, median-of-three pivot): O(n), where sorting is O(n log n).
 */
export function selectInPlace(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    // Median of three as the pivot keeps already-ordered input from going quadratic.
    const x = a[lo] as number;
    const y = a[mid] as number;
    const z = a[hi] as number;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k] as number;
}

/** Median (type 7) of a buffer, reordering it. */
function medianInPlace(a: Float64Array): number {
  const n = a.length;
  const k = (n - 1) >>> 1;
  const lower = selectInPlace(a, k);
  if (n % 2 === 1) return lower;
  let upper = Infinity;
  for (let i = k + 1; i < n; i++) if ((a[i] as number) < upper) upper = a[i] as number;
  return (lower + upper) / 2;
}

/** Median of a resample, reusing one scratch buffer (the bootstrap's inner loop). */
function resampleMedian(samples: readonly number[], scratch: Float64Array, rand: () => number) {
  const n = samples.length;
  for (let i = 0; i < n; i++) scratch[i] = samples[Math.floor(rand() * n)] as number;
  return medianInPlace(scratch);
}

/**
 * The most samples one side of a bootstrap resamples. A case with more is bootstrapped from an
 * evenly strided subsample of this many (`stridedSubsample`), so judging a case costs the same
 * whatever the number of samples its run wrote: one case of 2.6 million samples took 307 s to
 * judge before the cap. The point estimate stays the median of every sample; the interval from
 * the subsample is about sqrt(n / cap) times wider than the whole set's would be: the cap costs
 * resolution (AMBIGUOUS near the threshold), not confidence. docs/judging.md.
 */
export const MAX_BOOTSTRAP_SAMPLES = 10_000;

/**
 * At most `cap` of `samples`, evenly strided over the whole set in its order (samples
 * ⌊i·n/cap⌋ for i = 0 … cap−1): deterministic, and spread over the run's start, middle and end
 * alike. The samples themselves when there are no more than `cap`.
 */
export function stridedSubsample(
  samples: readonly number[],
  cap: number = MAX_BOOTSTRAP_SAMPLES,
): readonly number[] {
  const n = samples.length;
  if (n <= cap) return samples;
  const out = new Array<number>(cap);
  for (let i = 0; i < cap; i++) out[i] = samples[Math.floor((i * n) / cap)] as number;
  return out;
}

export interface RatioInterval {
  /** current median / baseline median */
  ratio: number;
  lo: number;
  hi: number;
  confidence: number;
  resamples: number;
  /** the samples each side's resamples were drawn from: all, or MAX_BOOTSTRAP_SAMPLES of them */
  bootstrapped: { current: number; baseline: number };
}

export interface BootstrapOptions {
  confidence: number;
  resamples: number;
  seed: number;
}

/**
 * Percentile-bootstrap confidence interval of median(current) / median(baseline): both sample
 * sets are resampled independently, `resamples` times, with a PRNG seeded from `seed`; a side
 * of more than MAX_BOOTSTRAP_SAMPLES is resampled from its strided subsample.
 */
export function bootstrapRatioOfMedians(
  currentMs: readonly number[],
  baselineMs: readonly number[],
  options: BootstrapOptions,
): RatioInterval {
  if (currentMs.length === 0 || baselineMs.length === 0) {
    throw new Error('bootstrap needs at least one sample on each side');
  }
  const current = medianResampler(currentMs);
  const baseline = medianResampler(baselineMs);
  const rand = seededRandom(options.seed);
  const ratios = new Float64Array(options.resamples);
  for (let r = 0; r < options.resamples; r++) {
    const cur = current.draw(rand);
    ratios[r] = cur / baseline.draw(rand);
  }
  return {
    ratio: current.point / baseline.point,
    ...percentileInterval(ratios, options.confidence),
    confidence: options.confidence,
    resamples: options.resamples,
    bootstrapped: { current: current.drawnFrom, baseline: baseline.drawnFrom },
  };
}

export interface MedianInterval {
  /** the median of the samples themselves */
  median: number;
  lo: number;
  hi: number;
  confidence: number;
  resamples: number;
  /** the samples the resamples were drawn from: all, or MAX_BOOTSTRAP_SAMPLES of them */
  bootstrapped: number;
}

/**
 * Percentile-bootstrap confidence interval of the median of one sample set (paired A/B: the
 * per-pair log ratios ln(head/base)), `resamples` times, with a PRNG seeded from `seed`; more
 * than MAX_BOOTSTRAP_SAMPLES are resampled from their strided subsample.
 */
export function bootstrapMedian(
  samples: readonly number[],
  options: BootstrapOptions,
): MedianInterval {
  if (samples.length === 0) throw new Error('bootstrap needs at least one sample');
  const side = medianResampler(samples);
  const rand = seededRandom(options.seed);
  const medians = new Float64Array(options.resamples);
  for (let r = 0; r < options.resamples; r++) medians[r] = side.draw(rand);
  return {
    median: side.point,
    ...percentileInterval(medians, options.confidence),
    confidence: options.confidence,
    resamples: options.resamples,
    bootstrapped: side.drawnFrom,
  };
}

/**
 * One side of a ratio's bootstrap: its point estimate and a draw of the same estimate from a
 * resample of its samples (tiers.ts: the headline ratio's interval).
 */
export interface Resampler {
  point: number;
  draw: (rand: () => number) => number;
  /** how many samples a draw resamples: all, or MAX_BOOTSTRAP_SAMPLES of them (of each group) */
  drawnFrom: number;
}

/** The median of the samples, resampled whole (from their strided subsample past the cap). */
export function medianResampler(samples: readonly number[]): Resampler {
  const drawn = stridedSubsample(samples);
  const scratch = new Float64Array(drawn.length);
  return {
    point: median(samples),
    draw: (rand) => resampleMedian(drawn, scratch, rand),
    drawnFrom: drawn.length,
  };
}

/** The `confidence` percentile interval of bootstrap draws (sorted here, in place). */
function percentileInterval(draws: Float64Array, confidence: number): { lo: number; hi: number } {
  draws.sort();
  const alpha = 1 - confidence;
  return { lo: quantileSorted(draws, alpha / 2), hi: quantileSorted(draws, 1 - alpha / 2) };
}

/**
 * The balanced estimate (the harness's timing.balanced_ms, python stats.balanced): the mean over
 * the predecessors a sample followed (`after`, one per sample) of the median of the samples behind
 * each. Resampled within each predecessor's group, so every draw weighs every predecessor once, as
 * the estimate does. Undefined where `after` does not give one predecessor per sample or the
 * samples followed fewer than two.
 */
export function balancedResampler(
  samples: readonly number[],
  after: readonly string[],
): Resampler | undefined {
  if (after.length !== samples.length) return undefined;
  const byPredecessor = new Map<string, number[]>();
  samples.forEach((ms, i) => {
    const key = after[i] as string;
    const group = byPredecessor.get(key);
    if (group) group.push(ms);
    else byPredecessor.set(key, [ms]);
  });
  if (byPredecessor.size < 2) return undefined;
  const groups = [...byPredecessor.values()];
  // each group drawn from its strided subsample past the cap, as medianResampler's samples are
  const drawn = groups.map((g) => stridedSubsample(g));
  const scratch = drawn.map((g) => new Float64Array(g.length));
  const mean = (each: (i: number) => number) =>
    groups.reduce((sum, _, i) => sum + each(i), 0) / groups.length;
  return {
    point: mean((i) => median(groups[i] as number[])),
    draw: (rand) =>
      mean((i) => resampleMedian(drawn[i] as readonly number[], scratch[i] as Float64Array, rand)),
    drawnFrom: drawn.reduce((n, g) => n + g.length, 0),
  };
}

export interface ScaleInterval {
  lo: number;
  hi: number;
  confidence: number;
  resamples: number;
}

/**
 * Percentile-bootstrap interval of the factor by which a product of the sides' estimates,
 * each raised to its exponent (+1 or −1), moves under resampling: Π (draw / point)^exponent,
 * each side resampled independently, `resamples` times from one PRNG seeded with `seed`. A
 * value v computed from the points has the interval [v · lo, v · hi].
 */
export function bootstrapScale(
  sides: readonly { side: Resampler; exponent: 1 | -1 }[],
  options: BootstrapOptions,
): ScaleInterval {
  const rand = seededRandom(options.seed);
  const factors = new Float64Array(options.resamples);
  for (let r = 0; r < options.resamples; r++) {
    let f = 1;
    for (const { side, exponent } of sides) {
      const moved = side.draw(rand) / side.point;
      f *= exponent === 1 ? moved : 1 / moved;
    }
    factors[r] = f;
  }
  return {
    ...percentileInterval(factors, options.confidence),
    confidence: options.confidence,
    resamples: options.resamples,
  };
}

/**
 * The standard normal quantile (inverse CDF) at p in (0, 1): Acklam's rational approximation,
 * relative error below 1.2e-9, enough to turn a stated confidence into a z-score.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new Error(`normalQuantile needs 0 < p < 1, got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972,
    -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734,
    4.374664141464968, 2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = b as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = c as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = d as [number, number, number, number];
  const tail = (q: number) =>
    (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) /
    ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) /
    (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1)
  );
}

/**
 * From this many samples a side up, the interval of a median is drawn from order statistics
 * (`medianRankInterval`), not bootstrapped: its cost is one selection, O(n), where a bootstrap's
 * is resamples × n draws (an nvbench pair of 56,160 launches a state took 42 s of CPU to judge).
 */
export const RANK_INTERVAL_MIN_SAMPLES = 2_000;

export interface RankInterval {
  median: number;
  lo: number;
  hi: number;
  confidence: number;
  /** the 0-based ranks of lo and hi among the sorted samples */
  ranks: [number, number];
}

/**
 * The distribution-free interval of a median from two order statistics: ranks n/2 ∓ z·√n/2 (the
 * normal approximation of the binomial), for n large enough that it holds. Two selections on one
 * copy: linear in n, with no resampling.
 */
export function medianRankInterval(samples: readonly number[], confidence: number): RankInterval {
  const n = samples.length;
  if (n === 0) throw new Error('interval of no samples');
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const half = (z * Math.sqrt(n)) / 2;
  const loRank = Math.max(0, Math.floor(n / 2 - half) - 1);
  const hiRank = Math.min(n - 1, Math.ceil(n / 2 + half) - 1);
  const [lo, mid, hi] = quantiles(samples, [loRank / (n - 1 || 1), 0.5, hiRank / (n - 1 || 1)]);
  return { median: mid!, lo: lo!, hi: hi!, confidence, ranks: [loRank, hiRank] };
}

/**
 * The interval of median(current) / median(baseline) from each median's rank interval, combined
 * on the log scale as independent normal errors (each half-width over z, added in quadrature).
 */
export function rankRatioOfMedians(
  currentMs: readonly number[],
  baselineMs: readonly number[],
  confidence: number,
): { ratio: number; lo: number; hi: number; confidence: number } {
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const cur = medianRankInterval(currentMs, confidence);
  const base = medianRankInterval(baselineMs, confidence);
  const se = (r: RankInterval) =>
    r.lo > 0 && r.hi > 0 ? (Math.log(r.hi) - Math.log(r.lo)) / 2 / z : 0;
  const half = z * Math.hypot(se(cur), se(base));
  const ratio = cur.median / base.median;
  return { ratio, lo: ratio * Math.exp(-half), hi: ratio * Math.exp(half), confidence };
}
