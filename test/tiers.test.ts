import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { loadResults } from '../src/results.js';
import {
  caseDtype,
  caseTflops,
  evaluateTiers,
  findMeasurementErrors,
  peakTflops,
} from '../src/tiers.js';

const results = (name: string) =>
  loadResults(join(import.meta.dirname, 'fixtures', 'results', name));
const configDir = join(import.meta.dirname, 'fixtures', 'config');
const valid = loadConfig(join(configDir, 'valid'));
const seed001 = loadConfig(join(configDir, 'seed001'));

describe("seed 001's ladder (2×, 3×, 5×, 13×, 64× over SDPA at 12.27 ms, causal)", () => {
  const [status] = evaluateTiers(results('seed001-ladder.json'), seed001);

  it('measures the candidate against the reference on the headline case', () => {
    expect(status?.caseId).toBe('dtype=fp16,B=16,H=96,S=4096,D=128,causal=true');
    expect(status?.referenceMedianMs).toBeCloseTo(12.27, 1);
    expect(status?.medianMs).toBeCloseTo(16.9, 1);
    expect(status?.value).toBeCloseTo(12.27 / 16.9, 2);
    expect(status?.current).toBeUndefined();
  });

  it('shows every tier unreachable: even 2× needs more than the 989.4 TFLOPS peak', () => {
    // Causal FLOPs = 4·16·96·4096²·128 / 2 = 6.6e12; 12.27 ms / 2 = 6.135 ms → 1075 TFLOPS.
    const rows = status?.ladder.map((m) => [m.name, m.reachable, Math.round(m.impliedTflops ?? 0)]);
    expect(rows).toEqual([
      ['Tier 1 (Good)', false, 1075],
      ['Tier 2 (Very Good)', false, 1613],
      ['Tier 3 (Excellent)', false, 2688],
      ['Tier 4 (Outstanding)', false, 6990],
      ['Tier 5 (Breakthrough)', false, 34410],
    ]);
    expect(status?.next?.name).toBe('Tier 1 (Good)');
    expect(status?.next?.requiredMs).toBeCloseTo(6.135, 2);
  });
});

describe('evaluateTiers over the fixture configuration', () => {
  const statuses = evaluateTiers(results('baseline.json'), valid);
  const by = (kernel: string) => statuses.find((s) => s.kernel === kernel);

  it('speedup: triton_fa2 over sdpa_flash, upper tiers unreachable', () => {
    const s = by('attention');
    expect(s?.metric).toBe('speedup');
    expect(s?.value).toBeGreaterThan(1.0);
    expect(s?.value).toBeLessThan(1.2);
    expect(s?.current).toBeUndefined();
    expect(s?.ladder.map((m) => m.reachable)).toEqual([true, true, false, false, false]);
    expect(s?.speedupNeeded).toBeCloseTo(
      (s?.medianMs as number) / (s?.next?.requiredMs as number),
      6,
    );
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

  it('pct_peak: a tier above 100 % of the peak is unreachable', () => {
    const s = by('gemm');
    expect(s?.caseId).toBe('op=matmul,dtype=bf16,M=8192,N=8192,K=8192');
    expect(s?.value).toBeCloseTo(((s?.tflops as number) / 989.4) * 100, 6);
    expect(s?.current?.name).toBe('half the datasheet peak');
    expect(s?.ladder.map((m) => m.reachable)).toEqual([true, true, false]);
  });

  it('says why there is no grade when the headline case failed', () => {
    const failing = results('correctness-fail.json');
    const headline = failing.cases.find(
      (c) =>
        c.variant === 'triton_fa2' && c.case === 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
    );
    if (!headline) throw new Error('fixture lacks the headline case');
    headline.status = 'error';
    const s = evaluateTiers(failing, valid).find((t) => t.kernel === 'attention');
    expect(s?.problem).toBe('the headline case did not produce a timing (status error)');
    expect(s?.value).toBeUndefined();
  });

  it('says so when the headline case is absent', () => {
    const r = results('baseline.json');
    r.cases = r.cases.filter((c) => c.kernel !== 'bsr_gemm');
    const s = evaluateTiers(r, valid).find((t) => t.kernel === 'bsr_gemm');
    expect(s?.problem).toBe(
      'the headline case (dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16) of triton_bsr is not in the results',
    );
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
