// Judging time does not grow with the samples a run wrote (issue 26): each side of a bootstrap is
// at most MAX_BOOTSTRAP_SAMPLES, an evenly strided subsample, and the case's note says so. The
// tests assert the counts used, never seconds.
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../src/config/index.js';
import { compare } from '../src/judge/index.js';
import {
  bootstrapMedian,
  bootstrapRatioOfMedians,
  MAX_BOOTSTRAP_SAMPLES,
  quantiles,
  quantileSorted,
  seededRandom,
  stridedSubsample,
} from '../src/lib/index.js';
import type { CaseResult, KernelgateResults } from '../src/results/index.js';

const options = { confidence: 0.99, resamples: 2000, seed: 7 };
/** Room for a loaded CI machine: the tests assert counts, not seconds. */
const SLOW_MACHINE_MS = 120_000;

/** n samples around `centre` ms, ±2 %, seeded. */
function samples(seed: number, centre: number, n: number): number[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, () => centre * (1 + 0.02 * (rand() - 0.5)));
}

function run(samplesMs: number[]): KernelgateResults {
  const timed: CaseResult = {
    kernel: 'k',
    variant: 'v',
    case: 'n=1',
    params: { n: 1 },
    status: 'ok',
    timing: {
      method: 'events',
      samples_ms: samplesMs,
      median_ms: samplesMs[0] as number,
      n_samples: samplesMs.length,
      stop_reason: 'max_samples',
    },
  };
  return {
    schema: 'kernelgate/results@1',
    run: { started_at: '2026-01-01T00:00:00Z', harness: 'test', synthetic: true },
    environment: { gpu: { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' } },
    diagnostics: [],
    kernels: [],
    cases: [timed],
  };
}

describe('stridedSubsample', () => {
  it('keeps a set of at most the cap as it is', () => {
    const xs = [3, 1, 2];
    expect(stridedSubsample(xs, 3)).toBe(xs);
  });

  it('takes samples floor(i·n/cap), in order, from the whole set', () => {
    const xs = Array.from({ length: 10 }, (_, i) => i);
    expect(stridedSubsample(xs, 4)).toEqual([0, 2, 5, 7]);
    expect(stridedSubsample(xs, 5)).toEqual([0, 2, 4, 6, 8]);
  });

  it('is capped at 10,000 by default', () => {
    expect(MAX_BOOTSTRAP_SAMPLES).toBe(10_000);
    expect(stridedSubsample(samples(1, 1, 50_001))).toHaveLength(10_000);
  });
});

describe('quantiles by selection', () => {
  it('equal quantileSorted over the sorted samples', () => {
    for (const n of [1, 2, 3, 10, 1001]) {
      const xs = samples(n, 5, n);
      const sorted = [...xs].sort((a, b) => a - b);
      const qs = [0, 0.01, 0.25, 0.5, 0.75, 0.99, 1];
      expect(quantiles(xs, qs)).toEqual(qs.map((q) => quantileSorted(sorted, q)));
    }
  });
});

describe('the bootstraps draw from at most MAX_BOOTSTRAP_SAMPLES a side', () => {
  it(
    'bootstrapRatioOfMedians: each side on its own, the ratio from every sample',
    () => {
      const cur = samples(2, 10, 100_000);
      const base = samples(3, 10, 300);
      const ci = bootstrapRatioOfMedians(cur, base, options);
      expect(ci.bootstrapped).toEqual({ current: 10_000, baseline: 300 });
      const all = [...cur].sort((a, b) => a - b);
      const sorted = [...base].sort((a, b) => a - b);
      const med = (xs: number[]) => (xs[(xs.length - 1) >> 1]! + xs[xs.length >> 1]!) / 2;
      expect(ci.ratio).toBeCloseTo(med(all) / med(sorted), 12);
      expect(ci.lo).toBeLessThan(1);
      expect(ci.hi).toBeGreaterThan(1);
    },
    SLOW_MACHINE_MS,
  );

  it(
    'bootstrapMedian',
    () => {
      expect(bootstrapMedian(samples(4, 0, 30_000), options).bootstrapped).toBe(10_000);
      expect(bootstrapMedian(samples(4, 0, 500), options).bootstrapped).toBe(500);
    },
    SLOW_MACHINE_MS,
  );
});

describe('judging a case of 2.6 million samples', () => {
  const config = defaultConfig();

  it(
    'bootstraps 10,000 of them and says so in the note',
    () => {
      const current = run(samples(5, 2, 2_600_000));
      const baseline = run(samples(6, 2, 800_000));
      const [c] = compare(current, baseline, config).cases;
      expect(c?.perf).toBe('SAME');
      expect(c?.nSamples).toBe(2_600_000);
      expect(c?.perfNote).toBe(
        "interval from an evenly strided 10,000 of this run's 2,600,000 samples and 10,000 of the " +
          "baseline's 800,000 samples (at most 10,000 a side are bootstrapped)",
      );
    },
    SLOW_MACHINE_MS,
  );

  it('leaves no note when every sample was bootstrapped', () => {
    const [c] = compare(run(samples(7, 2, 300)), run(samples(8, 2, 300)), config).cases;
    expect(c?.perf).toBe('SAME');
    expect(c?.perfNote).toBeUndefined();
  });
});
