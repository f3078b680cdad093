import { describe, expect, it } from 'vitest';
import {
  bootstrapMedian,
  bootstrapRatioOfMedians,
  hashString,
  median,
  quantile,
  seededRandom,
  selectInPlace,
  spread,
} from '../src/lib/index.js';

describe('order statistics', () => {
  it.each([
    [[3, 1, 2], 0.5, 2],
    [[4, 1, 3, 2], 0.5, 2.5],
    [[1, 2, 3, 4, 5], 0.25, 2],
    [[1, 2, 3, 4], 0.25, 1.75],
    [[7], 0.9, 7],
    [[1, 2], 0, 1],
    [[1, 2], 1, 2],
  ])('quantile(%j, %d) = %d (numpy linear)', (samples, q, want) => {
    expect(quantile(samples, q)).toBeCloseTo(want, 12);
  });

  it('median and IQR', () => {
    expect(median([5, 1, 4, 2, 3])).toBe(3);
    expect(spread([1, 2, 3, 4, 5, 6, 7, 8, 9])).toEqual({
      medianMs: 5,
      q1Ms: 3,
      q3Ms: 7,
      iqrMs: 4,
    });
  });

  it('refuses an empty sample set', () => {
    expect(() => median([])).toThrow('quantile of no samples');
  });
});

describe('selectInPlace', () => {
  it('finds the k-th smallest like a sort does, ties and sorted input included', () => {
    const rand = seededRandom(11);
    for (let trial = 0; trial < 2000; trial++) {
      const n = 1 + Math.floor(rand() * 50);
      const xs = Array.from({ length: n }, () => Math.floor(rand() * 10));
      if (trial % 10 === 0) xs.sort((a, b) => a - b);
      const k = Math.floor(rand() * n);
      const sorted = [...xs].sort((a, b) => a - b);
      expect(selectInPlace(Float64Array.from(xs), k)).toBe(sorted[k]);
    }
  });
});

describe('seeded PRNG', () => {
  it('is deterministic per seed and differs between seeds', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('hashes strings stably (FNV-1a)', () => {
    expect(hashString('')).toBe(0x811c9dc5);
    expect(hashString('a')).toBe(0xe40c292c);
  });
});

/** Lognormal-ish samples around `medianMs` from a seeded stream. */
function samples(seed: number, medianMs: number, relStd: number, n = 60): number[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, () => {
    const u = Math.max(rand(), 1e-12);
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
    return medianMs * Math.exp(relStd * z);
  });
}

describe('bootstrapRatioOfMedians', () => {
  const options = { confidence: 0.99, resamples: 2000, seed: 7 };

  it('gives the same interval for the same inputs and seed', () => {
    const cur = samples(1, 10, 0.02);
    const base = samples(2, 10, 0.02);
    expect(bootstrapRatioOfMedians(cur, base, options)).toEqual(
      bootstrapRatioOfMedians(cur, base, options),
    );
  });

  it('brackets 1 for two draws of one distribution', () => {
    const ci = bootstrapRatioOfMedians(samples(3, 10, 0.02), samples(4, 10, 0.02), options);
    expect(ci.lo).toBeLessThan(1);
    expect(ci.hi).toBeGreaterThan(1);
    expect(ci.hi - ci.lo).toBeLessThan(0.03);
  });

  it('finds a 10 % slowdown with an interval above 1.05', () => {
    const ci = bootstrapRatioOfMedians(samples(5, 11, 0.02), samples(6, 10, 0.02), options);
    expect(ci.ratio).toBeGreaterThan(1.08);
    expect(ci.lo).toBeGreaterThan(1.05);
    expect(ci.hi).toBeLessThan(1.15);
  });

  it('widens with the confidence level', () => {
    const cur = samples(8, 10, 0.05);
    const base = samples(9, 10, 0.05);
    const narrow = bootstrapRatioOfMedians(cur, base, { ...options, confidence: 0.8 });
    const wide = bootstrapRatioOfMedians(cur, base, { ...options, confidence: 0.999 });
    expect(wide.hi - wide.lo).toBeGreaterThan(narrow.hi - narrow.lo);
  });

  it('refuses empty sample sets', () => {
    expect(() => bootstrapRatioOfMedians([], [1], options)).toThrow(
      'bootstrap needs at least one sample on each side',
    );
  });
});

describe('bootstrapMedian (one sample set: paired log ratios)', () => {
  const options = { confidence: 0.99, resamples: 2000, seed: 7 };
  /** ln(head/base) of 60 pairs around a true change of `ratio`, 2 % noise per pair. */
  const logRatios = (seed: number, ratio: number, n = 60) =>
    samples(seed, ratio, 0.02, n).map((x) => Math.log(x));

  it('gives the same interval for the same inputs and seed, another for another seed', () => {
    const logs = logRatios(1, 1);
    expect(bootstrapMedian(logs, options)).toEqual(bootstrapMedian(logs, options));
    expect(bootstrapMedian(logs, { ...options, seed: 8 })).not.toEqual(
      bootstrapMedian(logs, options),
    );
  });

  it('returns the sample median as the point estimate, inside its interval', () => {
    const ci = bootstrapMedian([0.3, -0.1, 0.2, 0.0, 0.5], options);
    expect(ci.median).toBe(0.2);
    expect(ci.lo).toBeLessThan(0.2);
    expect(ci.hi).toBeGreaterThan(0.2);
    expect(ci.lo).toBeGreaterThanOrEqual(-0.1);
    expect(ci.hi).toBeLessThanOrEqual(0.5);
    expect(ci.confidence).toBe(0.99);
    expect(ci.resamples).toBe(2000);
  });

  it('brackets 0 when nothing changed and finds a 3 % change', () => {
    const same = bootstrapMedian(logRatios(3, 1), options);
    expect(same.lo).toBeLessThan(0);
    expect(same.hi).toBeGreaterThan(0);
    expect(Math.exp(same.hi) - Math.exp(same.lo)).toBeLessThan(0.02);
    const slower = bootstrapMedian(logRatios(4, 1.03), options);
    expect(Math.exp(slower.lo)).toBeGreaterThan(1.015);
    expect(Math.exp(slower.hi)).toBeLessThan(1.045);
  });

  it('is a single point for identical samples', () => {
    expect(bootstrapMedian([0.05, 0.05, 0.05, 0.05, 0.05], options)).toMatchObject({
      median: 0.05,
      lo: 0.05,
      hi: 0.05,
    });
  });

  it('narrows with more samples and widens with the confidence level', () => {
    const width = (ci: { lo: number; hi: number }) => ci.hi - ci.lo;
    const few = bootstrapMedian(logRatios(5, 1, 20), options);
    const many = bootstrapMedian(logRatios(5, 1, 500), options);
    expect(width(many)).toBeLessThan(width(few));
    const logs = logRatios(6, 1);
    expect(width(bootstrapMedian(logs, { ...options, confidence: 0.999 }))).toBeGreaterThan(
      width(bootstrapMedian(logs, { ...options, confidence: 0.8 })),
    );
  });

  it('refuses an empty sample set', () => {
    expect(() => bootstrapMedian([], options)).toThrow('bootstrap needs at least one sample');
  });
});
