// Issue 28's harness runs of 2026-11-27, twelfth session (test/fixtures/recorded/README.md, "Nine
// H100s, 2026-11-27, twelfth session"), judged again with today's code: bundle, harness and kernels
// of da51347 (the conditional rescaling at D64 the default, KG_FA_LAZY_RESCALE 4), through
// scripts/device/go.sh, one store, fastjsonschema installed; one H100 (nvidia-h100-x1, NVIDIA H100
// 80GB HBM3, serial 1652824031038), two calls on the same warm machine:
//   run 117: a push (cold build and tunings)
//   run 118: the next call: the pull request that changes the harness (the whole set, paired)
import { describe, expect, it } from 'vitest';
import {
  bsrPerUsefulFlop,
  expectAsOnTheMachine,
  expectEveryCasePassed,
  gpuLines,
  gzText,
  headlineRatios,
  judgedNow as judged,
  loadGz,
  wallOf,
} from './support/recorded.js';

describe('one H100, serial 1652824031038', () => {
  it('run 117, the push: every variant passes with the conditional rescaling at D64, tails included', () => {
    const NAME = 'push-h100-run117';
    const doc = loadGz(NAME);
    expect(gpuLines(NAME)[0]).toContain('1652824031038');
    expectEveryCasePassed(NAME, doc);
    expect(gzText(NAME, 'action.log.gz')).toContain(
      'build attention/cuda_fa_wgmma: built in 11.8 s; sass sm_90a; HGMMA x236, FFMA x1224; max 168 registers; 0 bytes spilled',
    );
    // issue 28, unpaired: SDPA default's median over cuda_fa_wgmma's (fp16 D128, D128 causal, D64,
    // D64 causal, then bf16)
    expect(headlineRatios(doc, 'cuda_fa_wgmma')).toEqual([
      0.995, 1.003, 1.046, 1, 0.989, 0.972, 1.057, 0.989,
    ]);
    expect(bsrPerUsefulFlop(doc, 3)).toEqual([0.66, 0.629]);
    expect(wallOf(NAME)).toBe(393.8);
  });

  it('run 118, the whole set as a pull request: 0 SLOWER/FASTER, 1 AMBIGUOUS; issue 28 paired', () => {
    const NAME = 'harness-pr-h100-run118';
    const doc = loadGz(NAME);
    expect(gpuLines(NAME)[0]).toContain('1652824031038');
    expect(doc.cases.filter((c) => c.identical)).toHaveLength(94);
    const j = judged(NAME);
    expectAsOnTheMachine(NAME, doc, j, [0, 0, 215, 1]);
    expect(j.cases.filter((c) => c.perf === 'AMBIGUOUS').map((c) => c.variant)).toEqual([
      'torch_copy',
    ]);
    expect(wallOf(NAME)).toBe(165.8);
    // head arm: D64 1.094x (fp16) and 1.084x (bf16), against run 110's 1.045x and 1.060x on another
    // H100 before the conditional rescaling; the bars (1.05 at fp16 D128, 1.10 causal and D64) not met
    expect(headlineRatios(doc, 'cuda_fa_wgmma')).toEqual([
      0.998, 1.001, 1.094, 0.977, 1.015, 1.037, 1.084, 0.964,
    ]);
    expect(bsrPerUsefulFlop(doc, 3)).toEqual([0.657, 0.658]);
  });
});
