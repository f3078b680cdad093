// Issue 27's figures of 2026-11-27, 07:41-08:08 UTC, the two policies of the eighth session measured
// (test/fixtures/recorded/README.md, "One H100 and two H200s, 2026-11-27"), judged again with today's
// code. Bundle and harness of 5b9027b, through scripts/gpu-e2e.sh, one store per machine:
//   run 89: one H100 (nvidia-h100-x1, NVIDIA H100 80GB HBM3, serial 1752824026078), after a push: the
//           attention one-file pull request (KG_ONE_VARIANT_FILE=kernels/attention/triton_fa2.py
//           gpu-e2e.sh /tmp/e2e-ovp push one-variant)
//   run 91: the same machine: a pull request that adds a comment to the harness
//           (KG_ONE_VARIANT_FILE=python/kernelgate_harness/__init__.py … one-variant): the whole set
//   run 93: two H200s (nvidia-h200-x2: the device lent no H100s), after a push: the same pull request
import { describe, expect, it } from 'vitest';
import type { KernelgateResults } from '../src/results/index.js';
import {
  expectAsOnTheMachine,
  expectOneVariantTimed,
  gpuLines,
  gzText,
  judgedNow as judged,
  loadGz,
  wallOf,
} from './support/recorded.js';

const report = (name: string) => gzText(name, 'report.md.gz');
/** "kernel/variant" → the number of its cases timed in pairs. */
const timedCases = (doc: KernelgateResults) => {
  const n = new Map<string, number>();
  for (const c of doc.cases)
    if (c.paired?.n_pairs)
      n.set(`${c.kernel}/${c.variant}`, (n.get(`${c.kernel}/${c.variant}`) ?? 0) + 1);
  return Object.fromEntries([...n].sort());
};
const HARNESS_ONLY =
  "a reference whose only difference is the harness, which its kernel's A/A control measures";

describe('the attention one-file pull request under both policies, one H100 (run 89)', () => {
  const NAME = 'one-variant-attention-h100-run89';
  const doc = loadGz(NAME);

  it('times triton_fa2 on its 26 cases and its control on the headline case alone', () => {
    expect(gpuLines(NAME).map((l) => l.split(',')[0])).toEqual(['NVIDIA H100 80GB HBM3']);
    expect(doc.environment.gpu.count).toBe(1);
    expect(timedCases(doc)).toEqual({ 'attention/sdpa_default': 1, 'attention/triton_fa2': 26 });
    // sdpa_default's 25 other cases: identical, the control's mark; no confirmation was needed
    const control = doc.cases.filter((c) => c.identical?.control === true);
    expect(control).toHaveLength(25);
    expect(control.every((c) => c.variant === 'sdpa_default')).toBe(true);
    expect(doc.cases.filter((c) => c.paired?.timed_in === 'confirmation')).toEqual([]);
    expectOneVariantTimed(doc, 164 + 25);
    expectAsOnTheMachine(NAME, doc, judged(NAME), [0, 0, 216, 0]);
  });

  it('takes the ceilings from the push stored just before, so no calibration ran', () => {
    expect(doc.environment.ceilings?.source).toBe(
      'the stored run /tmp/kgstore/main/H100-SXM/20261127T074147Z-dc746393cb31.json (main, H100-SXM), 2026-11-27T07:41:47Z',
    );
    const md = report(NAME);
    expect(md).toContain(
      'The A/A control attention/sdpa\\_default was timed on the headline case, not in 25 other cases (`run.time_control: headline`).',
    );
    expect(md).toContain(
      'ceilings measured by | the stored run /tmp/kgstore/main/H100-SXM/20261127T074147Z-dc746393cb31.json (main, H100-SXM), 2026-11-27T07:41:47Z (the calibration kernel is identical) |',
    );
  });

  it('took 90.1 s of wall time against the 90 s asked (run 87: 137.8 s)', () => {
    expect(wallOf(NAME)).toBe(90.1);
    expect(report(NAME)).toContain(
      'GPU-seconds of each stage (87 s in all): doctor 2 s · build 0 s · base build 0 s · harness 84 s (environment 2 s, set-up 4 s, verify 26 s, base set-up 0 s, base verify 3 s, preparation 0 s, base preparation 0 s, timing 30 s, of it warm-ups 5 s, finish 2 s;',
    );
  });
});

describe('the whole set as a pull request that changes the harness', () => {
  // Every candidate and every control timed on every case; the 94 variant-cases of the references
  // that are not their kernel's control, whose only difference is the harness, verified, not timed.
  const WHOLE = {
    'attention/cuda_fa2': 26,
    'attention/cuda_fa_wgmma': 26,
    'attention/sdpa_default': 26,
    'attention/triton_fa2': 26,
    'bsr_gemm/cublas_dense': 3,
    'bsr_gemm/cuda_bsr_mma': 3,
    'bsr_gemm/cuda_bsr_wgmma': 3,
    'bsr_gemm/cuda_bsr_wgmma_ws': 3,
    'bsr_gemm/triton_bsr': 3,
    'gemm/cublas': 2,
    'gemm/torch_copy': 1,
  };
  const untimed = (doc: KernelgateResults) => {
    const same = doc.cases.filter((c) => c.identical);
    expect(same.every((c) => c.identical!.reason === HARNESS_ONLY)).toBe(true);
    expect(same.every((c) => c.correctness?.status === 'PASS')).toBe(true);
    return [...new Set(same.map((c) => `${c.kernel}/${c.variant}`))].sort();
  };
  const REFERENCES = [
    'attention/cublas_attn',
    'attention/sdpa_cudnn',
    'attention/sdpa_efficient',
    'attention/sdpa_flash',
    'bsr_gemm/torch_bsr_dense_mm',
  ];

  it('one H100 (run 91): 206.4 s, within the 4 minutes asked; 1 AMBIGUOUS, the control itself', () => {
    const NAME = 'harness-pr-h100-run91';
    const doc = loadGz(NAME);
    expect(doc.environment.gpu.count).toBe(1);
    expect(timedCases(doc)).toEqual(WHOLE);
    expect(untimed(doc)).toEqual(REFERENCES);
    expect(doc.cases.filter((c) => c.identical)).toHaveLength(94);
    const j = judged(NAME);
    expectAsOnTheMachine(NAME, doc, j, [0, 0, 215, 1]);
    expect(j.cases.filter((c) => c.perf === 'AMBIGUOUS').map((c) => c.variant)).toEqual([
      'sdpa_default',
    ]);
    expect(wallOf(NAME)).toBe(206.4);
  });

  it('two H200s (run 93): 122.9 s, within the 150 s asked, the lanes 1.1 % apart', () => {
    const NAME = 'harness-pr-h200x2-run93';
    const doc = loadGz(NAME);
    expect(gpuLines(NAME).map((l) => l.split(',')[0])).toEqual(['NVIDIA H200', 'NVIDIA H200']);
    expect(doc.environment.gpu.count).toBe(2);
    expect(timedCases(doc)).toEqual(WHOLE);
    expect(untimed(doc)).toEqual(REFERENCES);
    const lanes = doc.run.lanes!;
    expect(lanes.source).toBe('balance');
    expect(lanes.lanes.map((l) => l.cases)).toEqual([13, 19]);
    expect(lanes.apart_pct).toBe(1.1);
    // the same verdicts as one GPU, but for one more AMBIGUOUS of the same control
    const j = judged(NAME);
    expectAsOnTheMachine(NAME, doc, j, [0, 0, 214, 2]);
    expect(j.cases.filter((c) => c.perf === 'AMBIGUOUS').map((c) => c.variant)).toEqual([
      'sdpa_default',
      'sdpa_default',
    ]);
    expect(wallOf(NAME)).toBe(122.9);
  });
});
