// Issues 27 and 28's runs of 2026-11-27, 13:19-13:31 UTC (test/fixtures/recorded/README.md, "One
// H100, 2026-11-27, eleventh session"), judged again with today's code. Bundle, harness and kernels
// of 773e927 (the workers started ahead, the doctor's reads at once, correctness.seconds), through
// scripts/device/go.sh, one store, fastjsonschema installed; one H100 (nvidia-h100-x1, NVIDIA H100
// 80GB HBM3, serial 1753124018107), two calls on the same warm machine:
//   run 102: a push (cold build and tunings)
//   run 103: the same call, after it: the attention one-file pull request
//   run 104: the next call: the same pull request again
//   run 105: the same call: scripts/fa-experiment.py (test/python/test_fa_experiment.py)
// and, at 14:05-14:18 UTC, bundle, harness and kernels of af65896 (the TMA-store epilogue the
// default; the configuration's check read beside the doctor, the workers' exit beside the next
// kernel's set-up, the first worker started before the harness imports torch, the repeat check
// slice by slice), another H100 (serial 1753024018543), three calls on the same warm machine:
//   run 106: a push (cold build and tunings)
//   run 107: the same call, after it: the attention one-file pull request
//   run 108: the next call: the same pull request again
//   run 109: the same call: scripts/bsr-experiment.py (test/python/test_bsr_experiment.py)
//   run 110: the next call: the pull request that changes the harness (the whole set)
import { describe, expect, it } from 'vitest';
import {
  bsrPerUsefulFlop,
  expectAsOnTheMachine,
  expectEveryCasePassed,
  expectOneVariantTimed,
  gpuLines,
  gzText,
  headlineRatios,
  judgedNow as judged,
  loadGz,
  wallOf,
} from './support/recorded.js';

describe('one H100, serial 1753124018107', () => {
  it('run 102, the push: every variant passes, tails included; issue 28 figures, unpaired', () => {
    const NAME = 'push-h100-run102';
    const doc = loadGz(NAME);
    expect(gpuLines(NAME)[0]).toContain('1753124018107');
    expectEveryCasePassed(NAME, doc);
    expect(gzText(NAME, 'action.log.gz')).toContain(
      'build attention/cuda_fa_wgmma: built in 9.1 s; sass sm_90a; HGMMA x236, FFMA x1224; max 168 registers; 0 bytes spilled',
    );
    // SDPA default's median over our fastest's on the eight headline cases (cuda_fa_wgmma on
    // each), before the TMA-store epilogue: 0.946-1.030x (docs/results.md)
    const ratios = headlineRatios(doc, 'cuda_fa_wgmma');
    expect(ratios).toEqual([0.975, 0.984, 1.027, 0.988, 0.969, 0.946, 1.03, 0.961]);
    // BSR per useful FLOP (a quarter of dense's): 0.65x fp16, 0.63x bf16
    expect(bsrPerUsefulFlop(doc)).toEqual([0.65, 0.63]);
    expect(wallOf(NAME)).toBe(399.3);
  });

  it('runs 103 and 104, the one-file pull request: 96.0 and 93.8 s, over the 90 s asked', () => {
    const walls: number[] = [];
    for (const NAME of ['one-variant-attention-h100-run103', 'one-variant-attention-h100-run104']) {
      const doc = loadGz(NAME);
      expectOneVariantTimed(doc, 189);
      expect(doc.cases.filter((c) => c.identical?.control === true)).toHaveLength(25);
      expectAsOnTheMachine(NAME, doc, judged(NAME), [0, 0, 216, 0]);
      walls.push(wallOf(NAME));
    }
    expect(walls).toEqual([96.0, 93.8]);
    // where run 104's time went: the harness 86.7 s (verify 28.7, timing 31.1 of it warm-ups
    // 5.4, tails 5.2), the doctor 3.1 s
    const s = loadGz('one-variant-attention-h100-run104').run.stage_seconds!;
    expect([s.harness, s.verify, s.bench, s['bench warm-up'], s.tails, s.doctor]).toEqual([
      86.671, 28.683, 31.108, 5.435, 5.195, 3.147,
    ]);
    // the report's time line: the checks by variant (correctness.seconds), first seen on a GPU
    expect(gzText('one-variant-attention-h100-run104', 'report.md.gz')).toContain(
      'checks by variant: attention/triton\\_fa2 7 s, attention/cublas\\_attn 3 s, attention/sdpa\\_cudnn 3 s, 13 more 9 s',
    );
  });
});

describe('one H100, serial 1753024018543', () => {
  it('run 106, the push: every variant passes with the TMA-store epilogue, tails included', () => {
    const NAME = 'push-h100-run106';
    const doc = loadGz(NAME);
    expect(gpuLines(NAME)[0]).toContain('1753024018543');
    expectEveryCasePassed(NAME, doc);
    expect(gzText(NAME, 'action.log.gz')).toContain(
      'build attention/cuda_fa_wgmma: built in 9.2 s; sass sm_90a; HGMMA x236, FFMA x1224; max 168 registers; 0 bytes spilled',
    );
    // issue 28, unpaired: SDPA default's median over cuda_fa_wgmma's (our fastest on each)
    const ratios = headlineRatios(doc, 'cuda_fa_wgmma');
    expect(ratios).toEqual([0.988, 1.001, 0.999, 0.992, 1.047, 0.984, 1.035, 0.971]);
    expect(wallOf(NAME)).toBe(366.8);
  });

  it('runs 107 and 108, the one-file pull request: 78.9 and 69.7 s, within the 90 s asked', () => {
    const walls: number[] = [];
    for (const NAME of ['one-variant-attention-h100-run107', 'one-variant-attention-h100-run108']) {
      const doc = loadGz(NAME);
      expectOneVariantTimed(doc, 189);
      expect(doc.cases.filter((c) => c.identical?.control === true)).toHaveLength(25);
      expectAsOnTheMachine(NAME, doc, judged(NAME), [0, 0, 216, 0]);
      expect(gzText(NAME, 'action.log.gz')).toContain(
        '(validated by fastjsonschema 2.22.2 against schema/results.schema.json)',
      );
      walls.push(wallOf(NAME));
    }
    expect(walls).toEqual([78.9, 69.7]);
    // against run 104 (93.8 s): the environment probe 0.1 s (1.9), gemm 2.8 s (4.7: its
    // workers' exit now overlaps attention's set-up), bsr_gemm 3.0 s (5.0), verify 24.4 (28.7)
    const s = loadGz('one-variant-attention-h100-run107').run.stage_seconds!;
    expect([s.harness, s.environment, s.gemm, s.bsr_gemm, s.verify, s.bench]).toEqual([
      75.02, 0.107, 2.787, 3.011, 24.379, 33.422,
    ]);
  });

  it('run 110, the whole set as a pull request: 163.6 s on one H100, 0 SLOWER/FASTER, 1 AMBIGUOUS', () => {
    const NAME = 'harness-pr-h100-run110';
    const doc = loadGz(NAME);
    expect(doc.cases.filter((c) => c.identical)).toHaveLength(94);
    const j = judged(NAME);
    expectAsOnTheMachine(NAME, doc, j, [0, 0, 215, 1]);
    expect(j.cases.filter((c) => c.perf === 'AMBIGUOUS').map((c) => c.variant)).toEqual([
      'cuda_bsr_wgmma_ws',
    ]);
    expect(wallOf(NAME)).toBe(163.6);
    // issue 28, paired (head arm): SDPA default's median over cuda_fa_wgmma's
    const ratios = headlineRatios(doc, 'cuda_fa_wgmma');
    expect(ratios).toEqual([0.994, 1.038, 1.045, 0.996, 0.993, 1.014, 1.06, 0.999]);
  });
});
