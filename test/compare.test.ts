import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compare,
  caseKey,
  timingMethodKind,
  environmentNotes,
  noisePctFor,
  type CaseComparison,
} from '../src/judge/index.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { loadResults, validateResults } from '../src/results/index.js';
import type { KernelgateResults, Paired } from '../src/results/index.js';
import { BASE_SHA, PAIRS, logRatios, pair, pairedRun as makePairedRun } from './support/paired.js';

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

  it("says which kernel's timed variants differ from the stored run's, since a round's mix sets the clock", () => {
    const current = clone(load('aa-current.json'));
    // attention without sdpa_flash tonight, and a new variant of bsr_gemm beside its others
    current.cases = current.cases.filter((c) => c.variant !== 'sdpa_flash');
    const extra = structuredClone(current.cases.find((c) => c.variant === 'triton_bsr')!);
    extra.variant = 'cuda_bsr_*new*';
    current.cases.push(extra);
    const notes = compare(current, baseline, config).notes.filter((n) =>
      n.includes('beside one another'),
    );
    expect(notes).toEqual([
      "attention: the variants timed beside one another differ from the stored run's (timed then, not now: sdpa_flash). " +
        "A round's other variants set the SM clock its samples run at, so this kernel's figures judged against the " +
        'stored run can move without a change of code; pairs (a pull request against its base) do not.',
      "bsr_gemm: the variants timed beside one another differ from the stored run's (timed now, not then: cuda_bsr_*new*). " +
        "A round's other variants set the SM clock its samples run at, so this kernel's figures judged against the " +
        'stored run can move without a change of code; pairs (a pull request against its base) do not.',
    ]);
    // a variant that failed tonight is not timed: the mix differs too
    const failed = clone(load('aa-current.json'));
    const gemm = failed.cases.find((c) => c.variant === 'torch_copy')!;
    gemm.status = 'error';
    delete gemm.timing;
    expect(
      compare(failed, baseline, config).notes.filter((n) => n.includes('beside one another')),
    ).toEqual([expect.stringMatching(/^gemm: .*\(timed then, not now: torch_copy\)/)]);
    // the same mix: no note; no stored run compared: none either
    expect(
      compare(clone(load('aa-current.json')), baseline, config).notes.join('\n'),
    ).not.toContain('beside one another');
    expect(compare(current, undefined, config).notes.join('\n')).not.toContain(
      'beside one another',
    );
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
  it("takes the most specific key of the run's GPU model, and nothing of another model", () => {
    const c = {
      ...config,
      compare: {
        ...config.compare,
        noisePct: { 'H100-SXM': { a: 1, 'a/v': 2, 'a/v/x=1': 3 }, H200: { b: 9 } },
      },
    };
    expect(noisePctFor(c, 'H100-SXM', 'a', 'v', 'x=1')).toBe(3);
    expect(noisePctFor(c, 'H100-SXM', 'a', 'v', 'x=2')).toBe(2);
    expect(noisePctFor(c, 'H100-SXM', 'a', 'w', 'x=2')).toBe(1);
    expect(noisePctFor(c, 'H100-SXM', 'b', 'w', 'x=2')).toBe(0);
    expect(noisePctFor(c, 'H200', 'b', 'w', 'x=2')).toBe(9);
    expect(noisePctFor(c, 'H200', 'a', 'v', 'x=1')).toBe(0);
    expect(noisePctFor(c, 'L4', 'a', 'v', 'x=1')).toBe(0);
    expect(noisePctFor(c, undefined, 'a', 'v', 'x=1')).toBe(0);
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

// Paired A/B: the PR's head and its base revision timed pair by pair in one job.
const pairedRun = () => makePairedRun(baseline);

const TRITON = `attention/triton_fa2/${HEADLINE}`;
const CUDA = `attention/cuda_fa2/${HEADLINE}`;
const FLASH = `attention/sdpa_flash/${HEADLINE}`;
const CUDNN = `attention/sdpa_cudnn/${HEADLINE}`;
const CAUSAL = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=true';
const GEMM_BF16 = 'gemm/cublas/op=matmul,dtype=bf16,M=8192,N=8192,K=8192';

describe('paired A/B verdicts', () => {
  it('builds fixtures the results schema accepts', () => {
    const doc = pair(pairedRun(), TRITON, 1.05);
    expect(() => validateResults(JSON.parse(JSON.stringify(doc)), 'paired.json')).not.toThrow();
  });

  // Threshold ±1 % (compare.paired.threshold_pct), pairs ±0.2 % around the ratio.
  const rows: [number, CaseComparison['perf']][] = [
    [1.0, 'SAME'],
    [1.03, 'SLOWER'],
    [0.97, 'FASTER'],
    [1.01, 'AMBIGUOUS'],
    [0.99, 'AMBIGUOUS'],
  ];
  it.each(rows)(
    'pairs around head/base = %d → %s, whatever the stored baseline says',
    (r, want) => {
      // The head's own samples equal the stored baseline's: against it, every case is SAME.
      const c = byKey(compare(pair(pairedRun(), TRITON, r), baseline, config).cases, TRITON);
      expect(c.perf).toBe(want);
      expect(c.method).toBe('paired');
      expect(c.nPairs).toBe(PAIRS);
      expect(c.baseSha).toBe(BASE_SHA);
      expect(c.thresholdPct).toBe(1);
      expect(c.ratio).toBeCloseTo(r, 10);
      expect(c.ciLo).toBeLessThanOrEqual(c.ratio as number);
      expect(c.ciHi).toBeGreaterThanOrEqual(c.ratio as number);
      expect(c.confidence).toBe(0.99);
      expect(c.mdcPct).toBeCloseTo((100 * ((c.ciHi as number) - (c.ciLo as number))) / 2, 12);
      expect(c.mdcPct).toBeLessThan(0.2);
      expect(c.perfNote).toBeUndefined();
      // baselineMedianMs is the base arm's median, not the stored baseline's.
      expect(c.baselineMedianMs).toBeCloseTo((c.medianMs as number) / r, 9);
    },
  );

  it("decides from the median of the log ratios, not from the harness's own interval", () => {
    // One wild pair (a 60 % outlier) does not move the median; the harness's fields are ignored.
    const logs = logRatios(1.03);
    logs[0] = Math.log(1.6);
    const doc = pair(pairedRun(), TRITON, 1.03, {
      log_ratios: logs,
      median_ratio: 0.5,
      ci_lo: 0.4,
      ci_hi: 0.6,
      mdc_pct: 50,
    });
    const c = byKey(compare(doc, baseline, config).cases, TRITON);
    expect(c.perf).toBe('SLOWER');
    expect(c.ratio).toBeGreaterThan(1.029);
    expect(c.ratio).toBeLessThan(1.031);
    expect(c.mdcPct).toBeLessThan(1);
  });

  it('ignores noise_pct and threshold_pct: pairing removes the drift between runs', () => {
    // gemm has noise_pct 10 in the fixture config: against the stored baseline a 3 % change is
    // within the noise, paired it is a regression.
    const stored = clone(baseline);
    const slow = stored.cases.find((c) => caseKey(c.kernel, c.variant, c.case) === GEMM_BF16);
    slow!.timing!.samples_ms = slow!.timing!.samples_ms.map((x) => x * 1.03);
    expect(byKey(compare(stored, baseline, config).cases, GEMM_BF16)).toMatchObject({
      perf: 'SAME',
      method: 'baseline',
      thresholdPct: 10,
    });
    const c = byKey(compare(pair(pairedRun(), GEMM_BF16, 1.03), baseline, config).cases, GEMM_BF16);
    expect(c).toMatchObject({ perf: 'SLOWER', method: 'paired', thresholdPct: 1 });
    // compare.paired.threshold_pct is the knob.
    const loose: Config = {
      ...config,
      compare: { ...config.compare, paired: { ...config.compare.paired, thresholdPct: 5 } },
    };
    expect(
      byKey(compare(pair(pairedRun(), GEMM_BF16, 1.03), baseline, loose).cases, GEMM_BF16).perf,
    ).toBe('SAME');
  });

  it('raises the threshold to compare.paired.min_change_ms of the base median', () => {
    // bsr_gemm triton_bsr on the small case: base median 0.0204 ms; 0.8 µs is 3.9 %.
    const SMALL = 'bsr_gemm/triton_bsr/dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4';
    const doc = pairedRun();
    const c0 = doc.cases.find((c) => caseKey(c.kernel, c.variant, c.case) === SMALL)!;
    // Make it a 20 µs case: the 0.8 µs floor is then 4 %, above the 1 % threshold.
    c0.timing!.samples_ms = c0.timing!.samples_ms.map((x) => (x * 0.02) / c0.timing!.median_ms);
    c0.timing!.median_ms = 0.02;
    pair(doc, SMALL, 1.03);
    const c = byKey(compare(doc, undefined, config).cases, SMALL);
    expect(c.thresholdPct).toBeCloseTo((100 * 0.0008) / (c.baselineMedianMs as number), 9);
    expect(c.thresholdPct).toBeGreaterThan(3.9);
    expect(c.perf).toBe('SAME');
    const noFloor: Config = {
      ...config,
      compare: { ...config.compare, paired: { ...config.compare.paired, minChangeMs: 0 } },
    };
    const judged = byKey(compare(doc, undefined, noFloor).cases, SMALL);
    expect(judged).toMatchObject({ perf: 'SLOWER', thresholdPct: 1 });
    // Without the base arm's timing, the base median the pairs imply stands in.
    delete c0.paired!.base_timing;
    const implied = byKey(compare(doc, undefined, config).cases, SMALL);
    expect(implied.baselineMedianMs).toBeUndefined();
    expect(implied.thresholdPct).toBeCloseTo((100 * 0.0008 * 1.03) / (c.medianMs as number), 6);
  });

  it('judges pairs with no stored baseline, and with one from another GPU', () => {
    const doc = pair(pairedRun(), TRITON, 1.05);
    const none = compare(doc, undefined, config);
    expect(byKey(none.cases, TRITON)).toMatchObject({ perf: 'SLOWER', method: 'paired' });
    const others = none.cases.filter((c) => c.key !== TRITON);
    expect(new Set(others.map((c) => c.perf))).toEqual(new Set(['NEW']));
    expect(new Set(others.map((c) => c.method))).toEqual(new Set(['none']));
    expect(byKey(none.cases, CUDA).perfNote).toBe(
      'not timed against the base revision; no stored baseline',
    );
    expect(none.notes).toEqual([
      'No stored baseline was given: the 1 case(s) timed against the base revision in this job are judged by their pairs, 35 other case(s) are NEW.',
    ]);
    const h200 = clone(baseline);
    h200.environment.gpu = { ...h200.environment.gpu, name: 'NVIDIA H200', sku: 'H200' };
    const other = compare(doc, h200, config);
    expect(other.baseline).toBe('other-gpu');
    expect(byKey(other.cases, TRITON)).toMatchObject({ perf: 'SLOWER', method: 'paired' });
    expect(byKey(other.cases, CUDA)).toMatchObject({
      perf: 'NEW',
      perfNote: 'not timed against the base revision; the stored baseline ran on another GPU',
      unpaired: 'not-timed',
    });
    expect(byKey(other.cases, TRITON).unpaired).toBeUndefined();
    expect(other.notes[0]).toBe(
      'The baseline ran on H200 (NVIDIA H200), this run on H100-SXM (NVIDIA H100 80GB HBM3): ' +
        'timings and correctness drift are not compared across GPUs; the 1 case(s) timed against ' +
        'the base revision in this job are judged by their pairs, 35 other case(s) are NEW.',
    );
  });

  it('falls back to the stored baseline when the base revision has no timing, and says why', () => {
    const doc = pairedRun();
    pair(doc, TRITON, 1.05, {
      base_status: 'fail',
      base_reason: 'rel_l2 3e-1 > tol 2e-3',
      base_timing: undefined,
      log_ratios: [],
      n_pairs: 0,
      stop_reason: 'untimed',
    });
    pair(doc, CUDA, 1.05, {
      base_status: 'missing',
      base_reason: 'no variant cuda_fa2 in the base revision',
      base_correctness: undefined,
      base_timing: undefined,
      log_ratios: [],
      n_pairs: 0,
      stop_reason: 'untimed',
    });
    const stored = compare(doc, baseline, config).cases;
    expect(byKey(stored, TRITON)).toMatchObject({
      perf: 'SAME',
      method: 'baseline',
      thresholdPct: 3,
      perfNote: 'base revision: fail (rel_l2 3e-1 > tol 2e-3); judged against the stored baseline',
      unpaired: 'base-failed',
    });
    expect(byKey(stored, TRITON).nPairs).toBeUndefined();
    expect(byKey(stored, CUDA)).toMatchObject({
      perf: 'SAME',
      method: 'baseline',
      unpaired: 'not-in-base',
      perfNote:
        'base revision: missing (no variant cuda_fa2 in the base revision); judged against the stored baseline',
    });
    // No stored baseline: a case the base revision lacks is NEW, one it failed says so.
    const alone = compare(doc, undefined, config).cases;
    expect(byKey(alone, CUDA)).toMatchObject({
      perf: 'NEW',
      method: 'none',
      perfNote: 'not in the base revision (no variant cuda_fa2 in the base revision)',
      unpaired: 'not-in-base',
    });
    expect(byKey(alone, TRITON)).toMatchObject({
      perf: 'NEW',
      method: 'none',
      perfNote: 'base revision: fail (rel_l2 3e-1 > tol 2e-3); no stored baseline',
    });
    const bare = pairedRun();
    pair(bare, CUDA, 1, { base_status: 'missing', log_ratios: [], n_pairs: 0 });
    expect(byKey(compare(bare, undefined, config).cases, CUDA).perfNote).toBe(
      'not in the base revision',
    );
    pair(bare, TRITON, 1, { base_status: 'ok', log_ratios: [], n_pairs: 0 });
    expect(byKey(compare(bare, undefined, config).cases, TRITON)).toMatchObject({
      perf: 'NEW',
      unpaired: 'no-pairs',
      perfNote: 'base revision: ok, but no pairs were timed; no stored baseline',
    });
  });

  describe('a second measurement in fresh processes (compare.paired.confirm)', () => {
    const confirm = (r: number, extra: object = {}) => ({
      status: 'ok' as const,
      n_pairs: PAIRS * 2,
      log_ratios: logRatios(r),
      stop_reason: 'decided' as const,
      ...extra,
    });
    const judge = (first: number, again: ReturnType<typeof confirm> | object) => {
      const doc = pair(pairedRun(), TRITON, first, { confirm: again as Paired['confirm'] });
      expect(() => validateResults(JSON.parse(JSON.stringify(doc)), 'paired.json')).not.toThrow();
      return byKey(compare(doc, baseline, config).cases, TRITON);
    };

    it('lets SLOWER or FASTER stand when the second interval says the same', () => {
      const slower = judge(1.03, confirm(1.025));
      expect(slower.perf).toBe('SLOWER');
      expect(slower.perfNote).toMatch(
        /^confirmed in a second pair of worker processes: ×1\.025\d \[1\.02\d\d, 1\.02\d\d\]$/,
      );
      expect(judge(0.97, confirm(0.975)).perf).toBe('FASTER');
    });

    it('makes a reading that did not repeat AMBIGUOUS, both intervals in the note', () => {
      const c = judge(1.03, confirm(1.002));
      expect(c.perf).toBe('AMBIGUOUS');
      expect(c.ratio).toBeCloseTo(1.03, 10);
      expect(c.perfNote).toMatch(
        /^was SLOWER ×1\.0300 \[1\.02\d\d, 1\.03\d\d\], but a second pair of worker processes read ×1\.0020 \[\d\.\d{4}, 1\.00\d\d\] \(SAME\): the first reading did not repeat$/,
      );
      // The other way round, and a second reading that straddles the threshold.
      expect(judge(0.97, confirm(1.03)).perfNote).toMatch(/^was FASTER .* \(SLOWER\): the first/);
      expect(judge(1.03, confirm(1.01)).perf).toBe('AMBIGUOUS');
    });

    it('keeps the verdict when the second measurement could not be made, and says why', () => {
      const why = "no pairs in the second pair of processes (the base revision's worker died)";
      expect(judge(1.03, { status: 'error', reason: why })).toMatchObject({
        perf: 'SLOWER',
        perfNote: `not confirmed in a second pair of worker processes: ${why}`,
      });
      expect(judge(1.03, confirm(1.03, { log_ratios: logRatios(1.03, 3) }))).toMatchObject({
        perf: 'SLOWER',
        perfNote:
          'not confirmed in a second pair of worker processes: too few pairs for an interval (3; need 5)',
      });
    });

    it('leaves SAME and AMBIGUOUS as they were', () => {
      for (const [first, want] of [
        [1.0, 'SAME'],
        [1.01, 'AMBIGUOUS'],
      ] as const) {
        const c = judge(first, confirm(1.05));
        expect(c.perf).toBe(want);
        expect(c.perfNote).toBeUndefined();
      }
    });
  });

  it('is AMBIGUOUS with too few pairs, or when the arms were timed differently', () => {
    const few = pair(pairedRun(), TRITON, 1.2, { log_ratios: logRatios(1.2, 4) });
    expect(byKey(compare(few, baseline, config).cases, TRITON)).toMatchObject({
      perf: 'AMBIGUOUS',
      method: 'paired',
      nPairs: 4,
      perfNote: 'too few pairs for an interval (4; need 5)',
    });
    const doc = pair(pairedRun(), TRITON, 1.2);
    const c = doc.cases.find((x) => caseKey(x.kernel, x.variant, x.case) === TRITON)!;
    c.paired!.base_timing!.method = 'events, 24 calls back to back+l2flush';
    expect(byKey(compare(doc, baseline, config).cases, TRITON)).toMatchObject({
      perf: 'AMBIGUOUS',
      method: 'paired',
      perfNote:
        "timed differently (events+l2flush vs the base revision's events, 24 calls back to back+l2flush): not comparable",
    });
  });

  it('leaves an untimed head UNTIMED whatever its pairs say', () => {
    const doc = pair(pairedRun(), TRITON, 1.05);
    const c = doc.cases.find((x) => caseKey(x.kernel, x.variant, x.case) === TRITON)!;
    c.status = 'error';
    c.error = { kind: 'RuntimeError', message: 'CUDA error' };
    expect(byKey(compare(doc, baseline, config).cases, TRITON)).toMatchObject({
      perf: 'UNTIMED',
      method: 'none',
      correctness: 'ERROR',
    });
  });

  it('checks drift against the base revision on the same inputs, not the stored baseline', () => {
    const doc = pairedRun();
    const c = doc.cases.find((x) => caseKey(x.kernel, x.variant, x.case) === TRITON)!;
    pair(doc, TRITON, 1);
    // Head 7.5e-3; the stored baseline had 7e-3 (no drift), the base revision 2.5e-3 on the
    // same inputs and seeds (drift).
    c.correctness!.rel_l2 = 7.5e-3;
    c.correctness!.tol_rel_l2 = 1e-2;
    c.paired!.base_correctness!.rel_l2 = 2.5e-3;
    const stored = clone(baseline);
    stored.cases.find((x) => caseKey(x.kernel, x.variant, x.case) === TRITON)!.correctness!.rel_l2 =
      7e-3;
    const judged = byKey(compare(doc, stored, config).cases, TRITON);
    expect(judged.correctness).toBe('DRIFT');
    expect(judged.correctnessReason).toBe(
      'rel_l2 7.5e-3 > 2 × base revision 2.5e-3 on the same inputs (floor 1e-4, tol 1e-2)',
    );
    expect(judged.baselineRelL2).toBe(2.5e-3);
    // The other way round: far above the stored baseline, level with the base revision → PASS.
    c.paired!.base_correctness!.rel_l2 = 7e-3;
    stored.cases.find((x) => caseKey(x.kernel, x.variant, x.case) === TRITON)!.correctness!.rel_l2 =
      1e-3;
    expect(byKey(compare(doc, stored, config).cases, TRITON).correctness).toBe('PASS');
    // Across GPUs the stored baseline is never used for drift; the base revision still is.
    const h200 = clone(stored);
    h200.environment.gpu = { ...h200.environment.gpu, name: 'NVIDIA H200', sku: 'H200' };
    c.paired!.base_correctness!.rel_l2 = 2.5e-3;
    expect(byKey(compare(doc, h200, config).cases, TRITON).correctness).toBe('DRIFT');
    // A base revision that failed gives no reference: the stored baseline's is used.
    c.paired!.base_correctness!.status = 'FAIL';
    const fallback = byKey(compare(doc, stored, config).cases, TRITON);
    expect(fallback.correctnessReason).toBe(
      'rel_l2 7.5e-3 > 2 × baseline 1e-3 (floor 1e-4, tol 1e-2)',
    );
  });

  it('treats a reference that moved as a failed A/A control: the same case is AMBIGUOUS', () => {
    const doc = pairedRun();
    pair(doc, FLASH, 1.04); // reference: identical code in both arms, yet +4 %
    pair(doc, CUDNN, 1.0); // reference, quiet
    pair(doc, TRITON, 1.05); // candidate SLOWER in the same case
    pair(doc, CUDA, 0.95); // candidate FASTER in the same case
    pair(doc, `attention/triton_fa2/${CAUSAL}`, 1.05); // another case: not affected
    const comparison = compare(doc, baseline, config);
    const cases = comparison.cases;
    expect(byKey(cases, FLASH)).toMatchObject({
      perf: 'SLOWER',
      method: 'paired',
      perfNote: 'reference: identical code in both arms',
    });
    expect(byKey(cases, CUDNN)).toMatchObject({ perf: 'SAME', method: 'paired' });
    expect(byKey(cases, CUDNN).perfNote).toBeUndefined();
    expect(byKey(cases, TRITON)).toMatchObject({
      perf: 'AMBIGUOUS',
      method: 'paired',
      perfNote:
        'was SLOWER +5.0 %, but the A/A control sdpa_flash +4.0 % (a reference: identical code in both arms) moved in the same case: the machine was not quiet',
    });
    expect(byKey(cases, CUDA)).toMatchObject({
      perf: 'AMBIGUOUS',
      perfNote:
        'was FASTER −5.0 %, but the A/A control sdpa_flash +4.0 % (a reference: identical code in both arms) moved in the same case: the machine was not quiet',
    });
    // The interval is kept: the reader sees what the pairs said.
    expect(byKey(cases, TRITON).ciLo).toBeGreaterThan(1.04);
    expect(byKey(cases, `attention/triton_fa2/${CAUSAL}`).perf).toBe('SLOWER');
    expect(comparison.notes).toContain(
      `A/A control moved: attention/sdpa_flash ${HEADLINE} SLOWER +4.0 %. Reference variants run ` +
        'identical code in both arms, so 2 FASTER or SLOWER verdict(s) of the same case(s) are ' +
        'AMBIGUOUS instead: the machine was not quiet; rerun.',
    );
    expect(comparison.paired?.controlsMoved).toEqual([`attention/sdpa_flash ${HEADLINE}`]);
  });

  it('lets a control timed beside the confirmation (run.time_control: headline) speak for that reading', () => {
    const doc = pairedRun();
    const again = (ratio: number) => {
      const logs = logRatios(ratio);
      return { status: 'ok' as const, n_pairs: 2 * logs.length, log_ratios: logs };
    };
    pair(doc, TRITON, 1.05, { confirm: again(1.05) }); // SLOWER, and again in fresh processes
    pair(doc, FLASH, 1.04, { timed_in: 'confirmation' }); // the control beside that confirmation moved
    pair(doc, CUDNN, 1.0, { timed_in: 'confirmation' }); // another, quiet
    const cases = compare(doc, baseline, config).cases;
    expect(byKey(cases, FLASH)).toMatchObject({
      perf: 'SLOWER',
      perfNote: 'reference: identical code in both arms',
    });
    expect(byKey(cases, CUDNN)).toMatchObject({
      perf: 'SAME',
      perfNote:
        'the A/A control, timed beside the confirmation of a variant that cleared the threshold',
    });
    expect(byKey(cases, TRITON)).toMatchObject({ perf: 'AMBIGUOUS', method: 'paired' });
    expect(byKey(cases, TRITON).perfNote).toMatch(
      /^was SLOWER \+5\.0 %, but the A\/A control sdpa_flash \+4\.0 % \(a reference: identical code in both arms\) moved in the same case/,
    );
  });

  it('names every control that moved in a case', () => {
    const doc = pairedRun();
    pair(doc, FLASH, 1.04);
    pair(doc, CUDNN, 0.97);
    pair(doc, TRITON, 1.05);
    const comparison = compare(doc, baseline, config);
    expect(byKey(comparison.cases, TRITON).perfNote).toBe(
      'was SLOWER +5.0 %, but the A/A controls sdpa_flash +4.0 %, sdpa_cudnn −3.0 % (references: identical code in both arms) moved in the same case: the machine was not quiet',
    );
    expect(byKey(comparison.cases, CUDNN)).toMatchObject({
      perf: 'FASTER',
      perfNote: 'reference: identical code in both arms',
    });
    expect(comparison.notes.filter((n) => n.startsWith('A/A control'))).toEqual([
      `A/A controls moved: attention/sdpa_flash ${HEADLINE} SLOWER +4.0 %, attention/sdpa_cudnn ${HEADLINE} FASTER −3.0 %. ` +
        'Reference variants run identical code in both arms, so 1 FASTER or SLOWER verdict(s) of ' +
        'the same case(s) are AMBIGUOUS instead: the machine was not quiet; rerun.',
    ]);
  });

  it('does not treat a quiet control as moved, nor let a stored-baseline control demote a paired verdict', () => {
    const doc = pairedRun();
    pair(doc, FLASH, 1.0);
    pair(doc, TRITON, 1.05);
    // sdpa_cudnn has no pairs; against the stored baseline it is 10 % slower.
    const c = doc.cases.find((x) => caseKey(x.kernel, x.variant, x.case) === CUDNN)!;
    c.timing!.samples_ms = c.timing!.samples_ms.map((x) => x * 1.1);
    const comparison = compare(doc, baseline, config);
    expect(byKey(comparison.cases, CUDNN)).toMatchObject({
      perf: 'SLOWER',
      method: 'baseline',
      control: 'stored',
    });
    expect(byKey(comparison.cases, TRITON).perf).toBe('SLOWER');
    expect(comparison.notes.some((n) => n.startsWith('A/A control moved:'))).toBe(false);
    expect(comparison.notes.filter((n) => n.startsWith('A/A control'))).toEqual([
      `A/A control moved against the stored run: attention/sdpa_cudnn ${HEADLINE} SLOWER +10.0 %. ` +
        "Reference variants' code did not change: the machine or the night moved while they were timed.",
    ]);
    expect(comparison.paired?.controlsMoved).toEqual([]);
  });

  it('summarises how many cases pairs judged and how many the stored baseline', () => {
    const doc = pairedRun();
    pair(doc, TRITON, 1.05);
    pair(doc, CUDA, 1.0);
    pair(doc, FLASH, 1.0, { base_status: 'error', log_ratios: [], n_pairs: 0 });
    const comparison = compare(doc, baseline, config);
    const timed = doc.cases.filter((c) => c.status === 'ok').length;
    expect(comparison.paired).toEqual({
      baseSha: BASE_SHA,
      cases: 2,
      baselineCases: timed - 2,
      thresholdPct: 1,
      medianMdcPct: expect.any(Number) as number,
      controlsMoved: [],
    });
    expect(comparison.paired?.medianMdcPct).toBeLessThan(0.2);
    // A run without pairs has no summary.
    expect(compare(clone(baseline), baseline, config).paired).toBeUndefined();
    expect(
      compare(clone(baseline), baseline, config).cases.every((c) => c.nPairs === undefined),
    ).toBe(true);
  });

  it('ignores the pairs when compare.paired.enabled is false, and says so', () => {
    const off: Config = {
      ...config,
      compare: { ...config.compare, paired: { ...config.compare.paired, enabled: false } },
    };
    const doc = pair(pairedRun(), TRITON, 1.05);
    const comparison = compare(doc, baseline, off);
    expect(byKey(comparison.cases, TRITON)).toMatchObject({ perf: 'SAME', method: 'baseline' });
    expect(byKey(comparison.cases, TRITON).perfNote).toBeUndefined();
    expect(comparison.paired).toBeUndefined();
    expect(comparison.notes).toContain(
      'compare.paired.enabled is false: the pairs of 1 case(s) with the base revision were not used; every case is judged against the stored baseline.',
    );
  });

  it('is deterministic', () => {
    const doc = pair(pairedRun(), TRITON, 1.01);
    const a = byKey(compare(doc, baseline, config).cases, TRITON);
    const b = byKey(compare(doc, baseline, config).cases, TRITON);
    expect([a.ciLo, a.ciHi]).toEqual([b.ciLo, b.ciHi]);
  });
});
