import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compare,
  timingMethodKind,
  environmentNotes,
  noisePctFor,
  type CaseComparison,
} from '../src/compare.js';
import { loadConfig } from '../src/config.js';
import { loadResults } from '../src/results.js';
import type { KernelgateResults } from '../src/results-types.js';

const dir = join(import.meta.dirname, 'fixtures', 'results');
const load = (name: string) => loadResults(join(dir, name));
const config = loadConfig(join(import.meta.dirname, 'fixtures', 'config', 'valid'));
const baseline = load('baseline.json');

const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
const D64_CAUSAL = 'dtype=fp16,B=16,H=96,S=4096,D=64,causal=true';
const BF16 = 'dtype=bf16,B=16,H=96,S=4096,D=128,causal=false';
const BSR = 'dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16';

function byKey(cases: CaseComparison[], key: string): CaseComparison {
  const found = cases.find((c) => c.key === key);
  if (!found) throw new Error(`no case ${key}`);
  return found;
}

function clone(results: KernelgateResults): KernelgateResults {
  return structuredClone(results);
}

/** Fixture → what must hold for every case not listed in `special`. */
const scenarios: {
  name: string;
  special: Record<string, Partial<Pick<CaseComparison, 'perf' | 'correctness'>>>;
  otherPerf: CaseComparison['perf'][];
}[] = [
  { name: 'aa-current.json', special: {}, otherPerf: ['SAME', 'AMBIGUOUS'] },
  {
    name: 'regression.json',
    special: {
      [`attention/triton_fa2/${HEADLINE}`]: { perf: 'SLOWER', correctness: 'PASS' },
      [`attention/cuda_fa2/${HEADLINE}`]: { perf: 'FASTER', correctness: 'PASS' },
    },
    otherPerf: ['SAME', 'AMBIGUOUS'],
  },
  {
    name: 'correctness-fail.json',
    special: {
      [`attention/triton_fa2/${D64_CAUSAL}`]: { perf: 'UNTIMED', correctness: 'FAIL' },
      [`bsr_gemm/cuda_bsr_mma/${BSR}`]: { perf: 'UNTIMED', correctness: 'ERROR' },
    },
    otherPerf: ['SAME', 'AMBIGUOUS'],
  },
  {
    name: 'drift.json',
    special: { [`attention/triton_fa2/${BF16}`]: { correctness: 'DRIFT' } },
    otherPerf: ['SAME', 'AMBIGUOUS'],
  },
];

describe('compare over the synthetic fixtures', () => {
  it.each(scenarios)('$name', ({ name, special, otherPerf }) => {
    const comparison = compare(load(name), baseline, config);
    expect(comparison.baseline).toBe('compared');
    for (const c of comparison.cases) {
      const want = special[c.key];
      if (want) {
        expect({ key: c.key, ...pick(c, want) }).toEqual({ key: c.key, ...want });
      } else {
        expect(otherPerf, c.key).toContain(c.perf);
        expect(c.correctness, c.key).toBe('PASS');
      }
    }
  });

  it('keeps the point estimate, the interval and the threshold of a regression', () => {
    const c = byKey(
      compare(load('regression.json'), baseline, config).cases,
      `attention/triton_fa2/${HEADLINE}`,
    );
    expect(c.ratio).toBeGreaterThan(1.07);
    expect(c.ciLo).toBeGreaterThan(1.03);
    expect(c.ciHi).toBeGreaterThan(c.ciLo as number);
    expect(c.confidence).toBe(0.99);
    expect(c.thresholdPct).toBe(3);
    expect(c.baselineMedianMs).toBeCloseTo(baseline.cases[0]?.timing?.median_ms as number, 0);
  });

  it('keeps the reason and numbers of a correctness failure', () => {
    const cases = compare(load('correctness-fail.json'), baseline, config).cases;
    expect(byKey(cases, `attention/triton_fa2/${D64_CAUSAL}`).correctnessReason).toBe(
      'rel_l2 3.1e-1 > tol 2e-3; max_abs 4.5 > tol 5e-2; wrong on every seed; worst at the causal diagonal',
    );
    expect(byKey(cases, `bsr_gemm/cuda_bsr_mma/${BSR}`).correctnessReason).toBe(
      'timeout: timeout: no result after 60.0 s',
    );
  });

  it('explains a drift with both error norms', () => {
    const c = byKey(
      compare(load('drift.json'), baseline, config).cases,
      `attention/triton_fa2/${BF16}`,
    );
    expect(c.correctnessReason).toMatch(
      /^rel_l2 7\.5e-3 > 2 × baseline 2\.\de-3 \(floor 1e-4, tol 1e-2\)$/,
    );
  });

  it('does not call drift below the floor', () => {
    const low = clone(baseline);
    const high = clone(baseline);
    const k0 = low.cases[0]?.correctness;
    const k1 = high.cases[0]?.correctness;
    if (!k0 || !k1) throw new Error('fixture has no correctness');
    k0.rel_l2 = 1e-6;
    k1.rel_l2 = 5e-5;
    expect(compare(high, low, config).cases[0]?.correctness).toBe('PASS');
    k1.rel_l2 = 2e-4;
    expect(compare(high, low, config).cases[0]?.correctness).toBe('DRIFT');
  });

  it('marks every case NEW without a baseline, and says so', () => {
    const comparison = compare(load('aa-current.json'), undefined, config);
    expect(comparison.baseline).toBe('none');
    expect(new Set(comparison.cases.map((c) => c.perf))).toEqual(new Set(['NEW']));
    expect(comparison.notes).toEqual(['No baseline was given: every case is NEW.']);
  });

  it('does not compare a baseline from another GPU: every case NEW plus a note', () => {
    const h200 = clone(baseline);
    h200.environment.gpu = { ...h200.environment.gpu, name: 'NVIDIA H200', sku: 'H200' };
    const comparison = compare(load('regression.json'), h200, config);
    expect(comparison.baseline).toBe('other-gpu');
    expect(new Set(comparison.cases.map((c) => c.perf))).toEqual(new Set(['NEW']));
    expect(comparison.notes[0]).toBe(
      'The baseline ran on H200 (NVIDIA H200), this run on H100-SXM (NVIDIA H100 80GB HBM3): ' +
        'timings and correctness drift are not compared across GPUs, so every case is NEW.',
    );
  });

  it('lists MISSING cases that the baseline had and this run lacks', () => {
    const current = clone(load('aa-current.json'));
    current.cases = current.cases.filter((c) => c.kernel !== 'gemm');
    const missing = compare(current, baseline, config).cases.filter((c) => c.perf === 'MISSING');
    expect(missing.map((c) => c.key)).toEqual([
      'gemm/cublas/op=matmul,dtype=bf16,M=8192,N=8192,K=8192',
      'gemm/cublas/op=matmul,dtype=fp16,M=8192,N=8192,K=8192',
      'gemm/torch_copy/op=copy,dtype=fp32,MiB=1024',
    ]);
    expect(missing.every((c) => c.correctness === 'MISSING')).toBe(true);
  });

  it('is AMBIGUOUS, not a verdict, with too few samples', () => {
    const current = clone(baseline);
    const timing = current.cases[0]?.timing;
    if (!timing) throw new Error('fixture has no timing');
    timing.samples_ms = timing.samples_ms.slice(0, 3).map((x) => x * 1.5);
    const c = compare(current, baseline, config).cases[0];
    expect(c?.perf).toBe('AMBIGUOUS');
    expect(c?.perfNote).toBe('too few samples for an interval (current 3, baseline 40; need 5)');
  });

  it('does not compare a case timed by another method (graph replays vs single launches)', () => {
    const current = clone(baseline);
    const timing = current.cases[0]?.timing;
    const baseTiming = baseline.cases[0]?.timing;
    if (!timing || !baseTiming) throw new Error('fixture has no timing');
    timing.method = 'events, graph(23 launches)+l2flush';
    timing.samples_ms = timing.samples_ms.map((x) => x / 10);
    const c = compare(current, baseline, config).cases[0];
    expect(c?.perf).toBe('AMBIGUOUS');
    expect(c?.perfNote).toBe(
      `timed differently (events, graph(23 launches)+l2flush vs the baseline's ${baseTiming.method}): not comparable`,
    );
    // the launch count of a graph is not a different method
    const other = clone(current);
    const otherBase = clone(current);
    const t = otherBase.cases[0]?.timing;
    if (!t) throw new Error('fixture has no timing');
    t.method = 'events, graph(34 launches)+l2flush';
    expect(compare(other, otherBase, config).cases[0]?.perf).toBe('SAME');
  });

  it('treats calls back to back as their own method, whatever their count', () => {
    expect(timingMethodKind('events, 24 calls back to back+l2flush, interleaved')).toBe(
      'events, N calls back to back+l2flush, interleaved',
    );
    const current = clone(baseline);
    const base = clone(baseline);
    const ct = current.cases[0]?.timing;
    const bt = base.cases[0]?.timing;
    if (!ct || !bt) throw new Error('fixture has no timing');
    ct.method = 'events, 24 calls back to back+l2flush, interleaved';
    bt.method = 'events, 31 calls back to back+l2flush, interleaved';
    expect(compare(current, base, config).cases[0]?.perf).toBe('SAME');
    bt.method = 'events, graph(24 launches)+l2flush, interleaved';
    expect(compare(current, base, config).cases[0]?.perf).toBe('AMBIGUOUS');
  });

  it('is deterministic', () => {
    const a = compare(load('regression.json'), baseline, config);
    const b = compare(load('regression.json'), baseline, config);
    expect(a.cases.map((c) => [c.ciLo, c.ciHi])).toEqual(b.cases.map((c) => [c.ciLo, c.ciHi]));
  });

  it('never calls a change under compare.min_change_ms SLOWER, however tight the interval', () => {
    // A 5 µs case 8 % slower with an interval of ±0.5 %: 0.4 µs, under the 1 µs floor.
    const tiny = (factor: number) => {
      const doc = clone(baseline);
      const c = doc.cases[0]!;
      c.timing!.samples_ms = Array.from({ length: 40 }, (_, i) => (0.005 + i * 1e-7) * factor);
      c.timing!.median_ms = c.timing!.samples_ms[20]! * 1;
      return doc;
    };
    const judged = compare(tiny(1.08), tiny(1), config).cases[0]!;
    expect(judged.thresholdPct).toBeCloseTo(100 * (0.001 / tiny(1).cases[0]!.timing!.median_ms), 6);
    expect(judged.perf).toBe('SAME');
    // The same relative change on a 5 ms case is a regression.
    const big = (factor: number) => {
      const doc = tiny(factor);
      const c = doc.cases[0]!;
      c.timing!.samples_ms = c.timing!.samples_ms.map((x) => x * 1000);
      c.timing!.median_ms *= 1000;
      return doc;
    };
    expect(compare(big(1.08), big(1), config).cases[0]!.perf).toBe('SLOWER');
    // Switched off, the floor no longer widens the threshold.
    const off = { ...config, compare: { ...config.compare, minChangeMs: 0 } };
    expect(compare(tiny(1.08), tiny(1), off).cases[0]!.perf).toBe('SLOWER');
  });

  it('uses the calibrated noise as the threshold when it is larger', () => {
    const cases = compare(load('aa-current.json'), baseline, config).cases;
    expect(byKey(cases, 'gemm/cublas/op=matmul,dtype=bf16,M=8192,N=8192,K=8192').thresholdPct).toBe(
      10,
    );
    expect(byKey(cases, `attention/sdpa_default/${HEADLINE}`).thresholdPct).toBe(4);
    expect(byKey(cases, `attention/triton_fa2/${HEADLINE}`).thresholdPct).toBe(3);
  });
});

describe('verdict rule', () => {
  // One case, baseline samples fixed, current = baseline × factor: the verdict follows the rule
  // lo > 1+t → SLOWER, hi < 1−t → FASTER, CI inside [1−t, 1+t] → SAME, else AMBIGUOUS.
  const rows: [number, CaseComparison['perf']][] = [
    [1.0, 'SAME'],
    [1.1, 'SLOWER'],
    [0.9, 'FASTER'],
    [1.03, 'AMBIGUOUS'],
    [0.97, 'AMBIGUOUS'],
  ];
  it.each(rows)('current = baseline × %d → %s', (factor, want) => {
    const base = clone(baseline);
    base.cases = base.cases.slice(0, 1);
    const cur = clone(base);
    const timing = cur.cases[0]?.timing;
    if (!timing) throw new Error('fixture has no timing');
    timing.samples_ms = timing.samples_ms.map((x) => x * factor);
    expect(compare(cur, base, config).cases[0]?.perf).toBe(want);
  });
});

describe('noisePctFor', () => {
  it('takes the most specific key', () => {
    const c = {
      ...config,
      compare: { ...config.compare, noisePct: { a: 1, 'a/v': 2, 'a/v/x=1': 3 } },
    };
    expect(noisePctFor(c, 'a', 'v', 'x=1')).toBe(3);
    expect(noisePctFor(c, 'a', 'v', 'x=2')).toBe(2);
    expect(noisePctFor(c, 'a', 'w', 'x=2')).toBe(1);
    expect(noisePctFor(c, 'b', 'w', 'x=2')).toBe(0);
  });
});

describe('environmentNotes', () => {
  it('lists driver, CUDA and library differences', () => {
    const env = baseline.environment;
    const next = {
      ...env,
      driver_version: '580.159.04',
      libraries: { ...env.libraries, triton: '3.6.1' },
    };
    expect(environmentNotes(next, env)).toEqual([
      'driver differs from the baseline: 580.95.05 → 580.159.04',
      'triton differs from the baseline: 3.6.0 → 3.6.1',
    ]);
  });
});

function pick(c: CaseComparison, want: object): object {
  return Object.fromEntries(Object.keys(want).map((k) => [k, c[k as keyof CaseComparison]]));
}
