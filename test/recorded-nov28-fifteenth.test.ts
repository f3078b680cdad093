// Issue 28's harness runs of 2026-11-28, fifteenth session (test/fixtures/recorded/README.md,
// "fifteenth session"), judged again with today's code: bundle, harness and kernels of 74da187
// (the attention kernel's last key tile 64 keys wide where it holds no more, KG_FA_NARROW_LAST 1),
// through scripts/device/go.sh, one store, fastjsonschema installed; one H100 (nvidia-h100-x1,
// NVIDIA H100 80GB HBM3, serial 1752724007151), two calls on the same warm machine:
//   run 145: a push (cold build and tunings)
//   run 146: the next call: gpu-e2e.sh patch-pr with that change's patch
//            (patch-pr-h100-run146/change.patch): the pull request's base is the tree without it
import { describe, expect, it } from 'vitest';
import {
  expectOnlyItsVariantTimed,
  expectPatchPr,
  expectPush,
  gzText,
} from './support/recorded.js';

describe('one H100, serial 1752724007151', () => {
  it('run 145, the push: every variant passes; fp16 D128 past 1.05x SDPA default', () => {
    // (run 138, the last push, on another H100: 1.028, 1.054, 1.103, 1.073, 1.058, 1.079, 1.14,
    // 1.076; BSR 0.821, 0.846, its kernel unchanged since)
    expectPush('push-h100-run145', '1752724007151', {
      ratios: [1.053, 1.047, 1.107, 1.073, 1.081, 1.077, 1.147, 1.082],
      bsr: [0.797, 0.815],
      wall: 387.9,
      // the balanced rounds' A/A: the one cuDNN kernel under two names within 2.1 % on all eight
      cudnnAA: 0.021,
    });
  });

  it('run 146, the pull request that narrows the last key tile: FASTER at D128 without the mask, nothing else timed', () => {
    const { doc, j, log } = expectPatchPr(
      'patch-pr-h100-run146',
      '1752724007151',
      [0, 2, 214, 0],
      94.8,
    );
    expect(j.cases.filter((c) => c.perf === 'FASTER').map((c) => c.caseId)).toEqual([
      'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
      'dtype=bf16,B=16,H=96,S=4096,D=128,causal=false',
    ]);
    expectOnlyItsVariantTimed(doc, log, 'cuda_fa_wgmma', 'kernels/attention/cuda/fa_wgmma.cu');
    expect(log).toContain(
      'attention/cuda_fa_wgmma dtype=fp16,B=16,H=96,S=4096,D=128,causal=false confirm: ×0.9783 [0.9509, 0.9865] 24 pairs 12 blocks decided: FASTER again',
    );
    expect(gzText('patch-pr-h100-run146', 'report.md.gz')).toContain(
      '- 🟢 **attention/cuda\\_fa\\_wgmma** FASTER on 2 cases, up to −2.4 %: SASS HGMMA 284 → 384, UTMALDG 60 → 80',
    );
  });
});
