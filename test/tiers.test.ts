import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pair, pairedRun } from './support/paired.js';
import { loadConfig, unreachableRungs, type KernelManifest } from '../src/config/index.js';
import { InputError, loadResults } from '../src/results/index.js';
import {
  baseArmResults,
  caseDtype,
  caseTflops,
  evaluateTiers,
  findMeasurementErrors,
  peakTflops,
} from '../src/judge/index.js';

const results = (name: string) =>
  loadResults(join(import.meta.dirname, 'fixtures', 'results', name));
const configDir = join(import.meta.dirname, 'fixtures', 'config');
const valid = loadConfig(join(configDir, 'valid'));
const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

describe("seed 001's ladder (2×, 3×, 5×, 13×, 64× over SDPA at 12.27 ms, causal)", () => {
  it('is refused at load time: every rung needs more than the chip can do', () => {
    let error: unknown;
    try {
      loadConfig(join(configDir, 'seed001'));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InputError);
    // SDPA at 12.27 ms on the causal case is 538 TFLOPS, 54.4 % of the 989.4 peak: 2× needs 109 %.
    expect((error as InputError).problems).toEqual([
      "kernels/attention/kernel.yml: tiers.ladder[0].min asks 2× sdpa_default, which runs at 54.4 % of the chip's peak (tiers.reference_pct_peak): it needs 108.8 % of the peak, unreachable (got 2)",
      "kernels/attention/kernel.yml: tiers.ladder[1].min asks 3× sdpa_default, which runs at 54.4 % of the chip's peak (tiers.reference_pct_peak): it needs 163.2 % of the peak, unreachable (got 3)",
      "kernels/attention/kernel.yml: tiers.ladder[2].min asks 5× sdpa_default, which runs at 54.4 % of the chip's peak (tiers.reference_pct_peak): it needs 272 % of the peak, unreachable (got 5)",
      "kernels/attention/kernel.yml: tiers.ladder[3].min asks 13× sdpa_default, which runs at 54.4 % of the chip's peak (tiers.reference_pct_peak): it needs 707.2 % of the peak, unreachable (got 13)",
      "kernels/attention/kernel.yml: tiers.ladder[4].min asks 64× sdpa_default, which runs at 54.4 % of the chip's peak (tiers.reference_pct_peak): it needs 3481.6 % of the peak, unreachable (got 64)",
    ]);
  });

  it('would still show every rung unreachable if it got past the load (the run says so too)', () => {
    const seed = loadConfig(join(configDir, 'valid'));
    const attention = seed.kernels.find((k) => k.manifest.name === 'attention');
    if (!attention?.manifest.tiers) throw new Error('fixture lacks the attention ladder');
    const manifest = {
      ...attention.manifest,
      tiers: {
        metric: 'speedup' as const,
        variant: 'triton_fa2',
        reference: 'sdpa_default',
        case: { dtype: 'fp16', B: 16, H: 96, S: 4096, D: 128, causal: true },
        ladder: [2, 3, 5, 13, 64].map((min, i) => ({ name: `Tier ${i + 1}`, min })),
      },
    };
    const [status] = evaluateTiers(results('seed001-ladder.json'), {
      ...seed,
      kernels: [{ ...attention, manifest }],
    });
    expect(status?.value).toBeCloseTo(12.27 / 16.9, 2);
    // Causal FLOPs = 4·16·96·4096²·128 / 2 = 6.6e12; 12.27 ms / 2 = 6.135 ms → 1075 TFLOPS.
    expect(status?.ladder.map((m) => [m.reachable, Math.round(m.impliedTflops ?? 0)])).toEqual([
      [false, 1075],
      [false, 1613],
      [false, 2688],
      [false, 6990],
      [false, 34410],
    ]);
  });
});

describe('load-time reachability of a ladder', () => {
  const manifest = (tiers: Record<string, unknown>): KernelManifest => ({
    name: 'attention',
    module: 'm',
    speed_reference: 'sdpa_flash',
    tolerance: {},
    cases: [],
    variants: [
      { name: 'triton_fa2', role: 'candidate' },
      { name: 'sdpa_flash', role: 'reference' },
    ],
    tiers: { metric: 'speedup', case: {}, ladder: [], ...tiers } as KernelManifest['tiers'],
  });

  it('accepts rungs at or below 1× with no share declared (the reference itself runs there)', () => {
    expect(unreachableRungs(manifest({}).tiers!, manifest({}))).toEqual([]);
    const m = manifest({
      ladder: [
        { name: 'half', min: 0.5 },
        { name: 'par', min: 1 },
      ],
    });
    expect(unreachableRungs(m.tiers!, m)).toEqual([]);
  });

  it('accepts rungs above 1× with no share declared: each run measures the reference (issue 30)', () => {
    const m = manifest({
      ladder: [
        { name: 'par', min: 1 },
        { name: 'faster', min: 1.1 },
        { name: 'three', min: 3 },
      ],
    });
    expect(unreachableRungs(m.tiers!, m)).toEqual([]);
  });

  it('accepts a rung whose need stays under the peak and refuses one above it', () => {
    const m = manifest({
      reference: 'sdpa_flash',
      reference_pct_peak: 66,
      ladder: [
        { name: 'a', min: 1.1 },
        { name: 'b', min: 1.5 },
        { name: 'c', min: 1.6 },
      ],
    });
    expect(unreachableRungs(m.tiers!, m)).toEqual([
      "tiers.ladder[2].min asks 1.6× sdpa_flash, which runs at 66 % of the chip's peak (tiers.reference_pct_peak): it needs 105.6 % of the peak, unreachable (got 1.6)",
    ]);
  });

  it('refuses a pct_peak rung above 100 %', () => {
    const m = manifest({ metric: 'pct_peak', ladder: [{ name: 'x', min: 120 }] });
    expect(unreachableRungs(m.tiers!, m)).toEqual([
      "tiers.ladder[0].min needs 120 % of the chip's datasheet peak: unreachable on any GPU (got 120)",
    ]);
  });

  it("passes the repository's own ladders", () => {
    const own = loadConfig(join(import.meta.dirname, '..'));
    const ladders = Object.fromEntries(
      own.kernels
        .filter((k) => k.manifest.tiers)
        .map((k) => [k.manifest.name, k.manifest.tiers?.ladder.map((r) => r.min)]),
    );
    expect(ladders).toEqual({ attention: [0.5, 0.9, 1, 1.1], bsr_gemm: [0.5, 0.8, 0.9, 1] });
  });
});

describe('evaluateTiers over the fixture configuration', () => {
  const statuses = evaluateTiers(results('baseline.json'), valid);
  const by = (kernel: string) => statuses.find((s) => s.kernel === kernel);

  it('speedup: the fastest passing candidate over SDPA default, every rung reachable', () => {
    const s = by('attention');
    expect(s?.metric).toBe('speedup');
    expect(s?.pinned).toBe(false);
    expect(s?.variant).toBe('triton_fa2');
    expect(s?.passing.map((p) => p.variant)).toEqual(['triton_fa2', 'cuda_fa2']);
    expect(s?.referenceVariant).toBe('sdpa_default');
    expect(s?.value).toBeCloseTo((s?.referenceMedianMs as number) / (s?.medianMs as number), 9);
    expect(s?.value).toBeCloseTo(21.748 / 39.5886, 3);
    expect(s?.current).toEqual({ name: 'half of SDPA default', grade: 'C' });
    expect(s?.ladder.map((m) => m.reachable)).toEqual([true, true, true, true]);
    expect(s?.measuredReferencePctPeak).toBeCloseTo((100 * 606.68) / 989.4, 1);
    expect(s?.speedupNeeded).toBeCloseTo(
      (s?.medianMs as number) / (s?.next?.requiredMs as number),
      6,
    );
  });

  it('grades the next candidate when the fastest one fails its correctness check', () => {
    const r = results('baseline.json');
    const cuda = r.cases.find((c) => c.variant === 'cuda_fa2' && c.case === HEADLINE);
    const triton = r.cases.find((c) => c.variant === 'triton_fa2' && c.case === HEADLINE);
    if (!cuda?.timing || !triton?.correctness) throw new Error('fixture incomplete');
    cuda.timing.median_ms = 20;
    triton.correctness.status = 'FAIL';
    const s = evaluateTiers(r, valid).find((t) => t.kernel === 'attention');
    expect(s?.variant).toBe('cuda_fa2');
    expect(s?.value).toBeCloseTo(21.748 / 20, 3);
    expect(s?.passing.map((p) => p.variant)).toEqual(['cuda_fa2']);
  });

  it('speedup: compares the balanced times where the candidate and the reference both carry one', () => {
    const r = results('baseline.json');
    const at = (v: string) => r.cases.find((c) => c.variant === v && c.case === HEADLINE);
    const triton = at('triton_fa2');
    const ref = at('sdpa_default');
    if (!triton?.timing || !ref?.timing || !triton.work) throw new Error('fixture incomplete');
    triton.timing.balanced_ms = 38;
    ref.timing.balanced_ms = 22;
    const s = evaluateTiers(r, valid).find((t) => t.kernel === 'attention');
    expect(s?.statistic).toBe('balanced');
    expect([s?.medianMs, s?.referenceMedianMs]).toEqual([38, 22]);
    expect(s?.value).toBeCloseTo(22 / 38, 9);
    expect(s?.tflops).toBeCloseTo(triton.work.flops / 38e-3 / 1e12, 6);
    expect(s?.next?.requiredMs).toBeCloseTo(22 / 0.9, 9);
    expect(s?.speedupNeeded).toBeCloseTo(38 / (22 / 0.9), 9);
    // one side without it (a run of one variant, a paired arm): both medians
    delete ref.timing.balanced_ms;
    const m = evaluateTiers(r, valid).find((t) => t.kernel === 'attention');
    expect(m?.statistic).toBe('median');
    expect(m?.value).toBeCloseTo(21.748 / 39.5886, 3);
  });

  it('picks the fastest candidate by the balanced times where every one carries them', () => {
    const r = results('baseline.json');
    const at = (v: string) => r.cases.find((c) => c.variant === v && c.case === HEADLINE);
    const [triton, cuda, ref] = [at('triton_fa2'), at('cuda_fa2'), at('sdpa_default')];
    if (!triton?.timing || !cuda?.timing || !ref?.timing) throw new Error('fixture incomplete');
    // by the medians cuda_fa2 (30) leads triton_fa2 (39.6); balanced, triton_fa2 (29) leads (31)
    cuda.timing.median_ms = 30;
    triton.timing.balanced_ms = 29;
    cuda.timing.balanced_ms = 31;
    ref.timing.balanced_ms = 22;
    const s = evaluateTiers(r, valid).find((t) => t.kernel === 'attention');
    expect(s?.variant).toBe('triton_fa2');
    expect(s?.passing).toEqual([
      { variant: 'triton_fa2', medianMs: 29 },
      { variant: 'cuda_fa2', medianMs: 31 },
    ]);
    expect(s?.value).toBeCloseTo(22 / 29, 9);
    // one candidate without it: every candidate by its median
    delete triton.timing.balanced_ms;
    const m = evaluateTiers(r, valid).find((t) => t.kernel === 'attention');
    expect(m?.variant).toBe('cuda_fa2');
    expect(m?.passing.map((p) => p.medianMs)).toEqual([30, triton.timing.median_ms]);
    expect(m?.statistic).toBe('balanced');
    expect(m?.value).toBeCloseTo(22 / 31, 9);
  });

  /** A recorded H200 push's two ladders, graded, with the timings of the cases they read. */
  const gradedPush = (fixture: string) => {
    const own = loadConfig(join(import.meta.dirname, '..'));
    const push = loadResults(
      join(import.meta.dirname, `fixtures/recorded/${fixture}/results.json.gz`),
    );
    const timing = (kernel: string, variant: string, caseId: string) => {
      const t = push.cases.find(
        (c) => c.kernel === kernel && c.variant === variant && c.case === caseId,
      )?.timing;
      if (t?.balanced_ms === undefined) throw new Error(`${variant} lacks balanced_ms`);
      return t as typeof t & { balanced_ms: number };
    };
    const [att, bsr] = ['attention', 'bsr_gemm'].map((k) =>
      evaluateTiers(push, own).find((t) => t.kernel === k),
    );
    const bsrCase = 'dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16';
    const ours = timing('attention', 'cuda_fa_wgmma', HEADLINE);
    const sdpa = timing('attention', 'sdpa_default', HEADLINE);
    const ws = timing('bsr_gemm', 'cuda_bsr_wgmma_ws', bsrCase);
    const dense = timing('bsr_gemm', 'cublas_dense', bsrCase);
    expect(att?.statistic).toBe('balanced');
    expect([att?.medianMs, att?.referenceMedianMs]).toEqual([ours.balanced_ms, sdpa.balanced_ms]);
    expect(att?.current?.grade).toBe('A');
    expect(bsr?.statistic).toBe('balanced');
    expect(bsr?.variant).toBe('cuda_bsr_wgmma_ws');
    expect(bsr?.wallClockRatio).toBeCloseTo(dense.balanced_ms / ws.balanced_ms, 9);
    expect(bsr?.gemmTflops).toBeCloseTo((2 * 8192 ** 3) / (dense.balanced_ms * 1e-3) / 1e12, 6);
    expect(bsr?.current?.grade).toBe('B');
    return { att, bsr, medians: sdpa.median_ms / ours.median_ms };
  };

  it('an H200 push (run 202): both ladders graded on the balanced times the harness recorded', () => {
    const { att, bsr, medians } = gradedPush('push-h200-run202');
    // the medians put ours behind SDPA's default (0.993); balanced over the predecessors, 1.031
    expect(medians).toBeCloseTo(0.993, 3);
    expect(att?.value).toBeCloseTo(1.031, 3);
    expect(bsr?.value).toBeCloseTo(0.827, 3);
  });

  it('an H200 push with the rounds relabelled per cycle (run 210): fp16 D128 past 1.05', () => {
    // one labelling of the Williams square put cublas_attn (hot) two places ahead of every sample
    // of ours behind a hot attention kernel, and cuda_fa2 (cool) ahead of SDPA's default's: the
    // pushes read 1.031-1.043 balanced; relabelled, three runs on one H200 read 1.065-1.078
    const { att, bsr, medians } = gradedPush('push-h200-run210');
    expect(medians).toBeCloseTo(1.09, 3);
    expect(att?.value).toBeCloseTo(1.065, 3);
    expect(bsr?.value).toBeCloseTo(0.805, 3);
  });

  it('says which candidates failed when none passed', () => {
    const r = results('baseline.json');
    for (const c of r.cases.filter((x) => x.kernel === 'attention' && x.case === HEADLINE)) {
      if (c.variant === 'triton_fa2') c.status = 'error';
      if (c.variant === 'cuda_fa2' && c.correctness) c.correctness.status = 'FAIL';
    }
    const s = evaluateTiers(r, valid).find((t) => t.kernel === 'attention');
    expect(s?.problem).toBe(
      'no candidate passed on the headline case (triton_fa2 error, cuda_fa2 correctness FAIL)',
    );
    expect(s?.value).toBeUndefined();
  });

  it('gemm_ceiling_ratio: useful TFLOPS over the measured cuBLAS rate', () => {
    const s = by('bsr_gemm');
    expect(s?.variant).toBe('triton_bsr');
    expect(s?.gemmTflops).toBe(657);
    expect(s?.value).toBeCloseTo((s?.tflops as number) / 657, 6);
    expect(s?.current).toEqual({ name: 'half of dense cuBLAS', grade: 'C' });
    expect(s?.next?.name).toBe('0.8× dense cuBLAS');
    expect(s?.next?.impliedTflops).toBeCloseTo(0.8 * 657, 6);
  });

  it('gemm_ceiling_ratio against a reference variant: its dense rate and the wall clock', () => {
    const own = loadConfig(join(import.meta.dirname, '..'));
    const push = loadResults(join(import.meta.dirname, 'fixtures/recorded/push/results.json.gz'));
    const s = evaluateTiers(push, own).find((t) => t.kernel === 'bsr_gemm');
    expect(s?.variant).toBe('cuda_bsr_wgmma_ws');
    expect(s?.referenceVariant).toBe('cublas_dense');
    // 2·8192³ FLOPs in 1.373 ms: 801 TFLOPS dense; the candidate's 567 useful TFLOPS over it.
    expect(s?.gemmTflops).toBeCloseTo(800.9, 1);
    expect(s?.value).toBeCloseTo(0.709, 3);
    expect(s?.wallClockRatio).toBeCloseTo(1.37288 / 0.48438, 3);
    expect(s?.current?.grade).toBe('C');
  });

  it('pct_peak: the pinned variant, every rung at or below the peak', () => {
    const s = by('gemm');
    expect(s?.pinned).toBe(true);
    expect(s?.caseId).toBe('op=matmul,dtype=bf16,M=8192,N=8192,K=8192');
    expect(s?.value).toBeCloseTo(((s?.tflops as number) / 989.4) * 100, 6);
    expect(s?.current?.name).toBe('half the datasheet peak');
    expect(s?.ladder.map((m) => m.reachable)).toEqual([true, true, true]);
  });

  it('says why there is no grade when the pinned headline case failed', () => {
    const failing = results('baseline.json');
    const headline = failing.cases.find(
      (c) => c.variant === 'cublas' && c.case === 'op=matmul,dtype=bf16,M=8192,N=8192,K=8192',
    );
    if (!headline) throw new Error('fixture lacks the headline case');
    headline.status = 'error';
    const s = evaluateTiers(failing, valid).find((t) => t.kernel === 'gemm');
    expect(s?.problem).toBe('the headline case did not produce a timing (status error)');
    expect(s?.value).toBeUndefined();
  });

  it('says so when the headline case is absent', () => {
    const r = results('baseline.json');
    r.cases = r.cases.filter((c) => c.kernel !== 'bsr_gemm');
    const s = evaluateTiers(r, valid).find((t) => t.kernel === 'bsr_gemm');
    expect(s?.problem).toBe(
      'no candidate (triton_bsr, cuda_bsr_mma) has the headline case (dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16) in the results',
    );
  });
});

describe('the base arm of a paired run', () => {
  it('is the base revision timing and correctness of each paired case', () => {
    const doc = pairedRun(results('baseline.json'));
    pair(doc, `attention/triton_fa2/${HEADLINE}`, 1.25);
    pair(doc, `attention/sdpa_default/${HEADLINE}`, 1.0);
    const arm = baseArmResults(doc);
    expect(arm?.cases.map((c) => c.variant)).toEqual(['triton_fa2', 'sdpa_default']);
    const head = evaluateTiers(doc, valid).find((t) => t.kernel === 'attention');
    const base = evaluateTiers(arm!, valid).find((t) => t.kernel === 'attention');
    expect(base?.value).toBeCloseTo((head?.value as number) * 1.25, 6);
    expect(baseArmResults(results('baseline.json'))).toBeUndefined();
  });
});

describe('findMeasurementErrors', () => {
  it("flags seed 001's 1,075 TFLOPS (non-causal count on a causal run)", () => {
    const errors = findMeasurementErrors(results('above-peak.json'), valid);
    expect(errors).toHaveLength(1);
    const [e] = errors;
    expect(e?.key).toBe('attention/sdpa_default/dtype=fp16,B=16,H=96,S=4096,D=128,causal=true');
    expect(e?.quantity).toBe('tflops');
    expect(e?.value).toBeGreaterThan(989.4);
    expect(e?.message).toMatch(
      /^\d+\.\d TFLOPS > 989\.4 TFLOPS datasheet peak \(H100-SXM fp16\): a measurement error, not a result/,
    );
  });

  it('finds nothing in an honest run', () => {
    expect(findMeasurementErrors(results('baseline.json'), valid)).toEqual([]);
  });

  it('flags a bandwidth above the datasheet or the measured copy ceiling (with 5 % margin)', () => {
    const r = results('baseline.json');
    const copy = r.cases.find((c) => c.variant === 'torch_copy');
    if (!copy?.throughput) throw new Error('fixture lacks the copy case');
    copy.throughput.gbps = 3100;
    expect(findMeasurementErrors(r, valid)).toEqual([]);
    copy.throughput.gbps = 3200;
    expect(findMeasurementErrors(r, valid)[0]?.limitName).toBe('measured copy ceiling + 5 %');
    copy.throughput.gbps = 3400;
    expect(findMeasurementErrors(r, valid)[0]?.limitName).toBe('datasheet bandwidth (H100-SXM)');
  });
});

describe('helpers', () => {
  it.each([
    ['float16', 'fp16'],
    ['bfloat16', 'bf16'],
    ['FP16', 'fp16'],
    ['fp8', 'fp8'],
    ['int8', 'int8'],
  ])('dtype %s → %s', (raw, want) => {
    expect(caseDtype({ params: { dtype: raw } })).toBe(want);
  });

  it('computes TFLOPS from work and median when the harness gave none', () => {
    const r = results('baseline.json');
    const c = r.cases[0];
    if (!c?.throughput || !c.work || !c.timing) throw new Error('fixture incomplete');
    delete c.throughput.tflops;
    expect(caseTflops(c)).toBeCloseTo(c.work.flops / (c.timing.median_ms * 1e-3) / 1e12, 6);
  });

  it('takes peaks from the config table by SKU, else from the results', () => {
    const r = results('baseline.json');
    expect(peakTflops(r, valid, 'fp32')).toBe(66.9);
    r.environment.gpu.sku = 'B200';
    expect(peakTflops(r, valid, 'fp16')).toBe(989.4);
    expect(peakTflops(r, valid, 'fp32')).toBeUndefined();
  });
});
