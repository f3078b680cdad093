// Issue 28's harness runs of 2026-11-28, sixteenth session (test/fixtures/recorded/README.md,
// "sixteenth session"), judged again with today's code, through scripts/device/go.sh, one store,
// fastjsonschema installed (nvidia-h100-x1, NVIDIA H100 80GB HBM3):
//   run 153: a push of e8200e1 (causal D128 on 192-key tiles, the persistent causal D64 grid's
//            rounds snaking over every SM, and the fifteenth session's two Q buffers there, which
//            no push had measured), cold, serial 1752824028489
//   run 154: the next call on that machine: gpu-e2e.sh patch-pr with the session's kernel change
//            (patch-pr-h100-run154/change.patch: fa_wgmma.cu and tma.cuh since ea16fc3)
//   run 155: another H100 (serial 1752624012923), cold: patch-pr with the fix of run 154's two
//            SLOWER cases (a causal D128 sequence of at most 128 keys back on the 128-key instance)
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import {
  expectOnlyItsVariantTimed,
  expectPatchPr,
  expectPush,
  gzText,
  loadGz,
  ROOT,
} from './support/recorded.js';

/** A kernel of fa_wgmma.cu as the comment names it: nvcc's mangled name, escaped for Markdown. */
const kernel = (hash: string, type: string, tile: number) =>
  `\\_ZN44\\_GLOBAL\\_\\_N\\_\\_${hash}\\_11\\_fa\\_wgmma\\_cu\\_62f15b6b15fa\\_wgmma\\_kernelI${type}Li128ELb1ELi${tile}ELi2ELi${tile}EEEv14CUtensorMap\\_stS2\\_S2\\_S2\\_PT\\_iiif (sm\\_90a)`;
const BF16 = '13\\_\\_nv\\_bfloat16';
const FP16 = '6\\_\\_half';
const RESOURCES = '(spills 0, registers 168, stack 0, shared memory 0)';
/** Run 154's pull-request comment as today's code renders it (no stored baseline: its pairs). */
const run154Comment = () =>
  judge(loadGz('patch-pr-h100-run154'), undefined, loadConfig(ROOT), 'pr').rendered.comment;

describe('one H100, serial 1752824028489', () => {
  it('run 153, the push: every variant passes; the causal D64 cases past 1.10x SDPA default, bf16 D128 causal too', () => {
    // (run 145, the last push, on another H100: 1.053, 1.047, 1.107, 1.073, 1.081, 1.077, 1.147,
    // 1.082; BSR 0.797, 0.815, its kernel unchanged since)
    expectPush('push-h100-run153', '1752824028489', {
      ratios: [1.05, 1.062, 1.125, 1.102, 1.082, 1.112, 1.152, 1.11],
      bsr: [0.823, 0.839],
      wall: 378.6,
      // the balanced rounds' A/A: the one cuDNN kernel under two names within 2.2 % on all eight
      cudnnAA: 0.022,
    });
  });

  it('run 154, the pull request of the causal tiles and order: FASTER on the four causal headline cases, SLOWER at S = 77 causal D128', () => {
    const { doc, j, log } = expectPatchPr(
      'patch-pr-h100-run154',
      '1752824028489',
      [2, 6, 208, 0],
      144,
    );
    expect(j.cases.filter((c) => c.perf === 'FASTER').map((c) => c.caseId)).toEqual([
      'dtype=fp16,B=16,H=96,S=4096,D=128,causal=true',
      'dtype=fp16,B=16,H=96,S=4096,D=64,causal=true',
      'dtype=bf16,B=16,H=96,S=4096,D=128,causal=true',
      'dtype=bf16,B=16,H=96,S=4096,D=64,causal=true',
      // the snake's every SM: 36 items of D64 causal at S = 1000 had 35 CTAs (coprime with the
      // 6 query blocks), one of which ran two items
      'dtype=fp16,B=2,H=3,S=1000,D=64,causal=true',
      'dtype=bf16,B=2,H=3,S=1000,D=64,causal=true',
    ]);
    // a sequence of 77 keys in one 192-key tile: 64 more keys computed than in a 128-key one
    expect(j.cases.filter((c) => c.perf === 'SLOWER').map((c) => c.caseId)).toEqual([
      'dtype=fp16,B=2,H=3,S=77,D=128,causal=true',
      'dtype=bf16,B=2,H=3,S=77,D=128,causal=true',
    ]);
    expect(log.match(/confirm: .* SLOWER again/g)).toHaveLength(2);
    expectOnlyItsVariantTimed(doc, log, 'cuda_fa_wgmma', 'kernels/attention/cuda/fa_wgmma.cu');
    expect(log).toContain(
      'attention/cuda_fa_wgmma dtype=fp16,B=16,H=96,S=4096,D=128,causal=true confirm: ×0.9851 [0.9662, 0.9912] 24 pairs 12 blocks decided: FASTER again',
    );
    expect(gzText('patch-pr-h100-run154', 'report.md.gz')).toContain(
      '- 🟢 **attention/cuda\\_fa\\_wgmma** FASTER on 6 cases, up to −22.9 %: SASS HGMMA 384 → 488',
    );
  });

  it("run 154's evidence: the causal D128 kernels re-instantiated on 192-key tiles, a line per kernel only one side built", () => {
    // (the comment on the machine listed each of the four kernels' four resources as "absent" on
    // one side: 16 lines)
    const comment = run154Comment();
    expect(comment).toContain(
      [
        `- ${kernel('2558f6e7', BF16, 128)}: only in the base's build ${RESOURCES}`,
        `- ${kernel('2558f6e7', FP16, 128)}: only in the base's build ${RESOURCES}`,
        `- ${kernel('bca4d520', BF16, 192)}: only in the head's build ${RESOURCES}`,
        `- ${kernel('bca4d520', FP16, 192)}: only in the head's build ${RESOURCES}`,
        '',
        '</details>',
      ].join('\n'),
    );
    expect(comment).not.toContain('absent');
  });

  it("run 154's headline: block-sparse, identical in base and head, is said to be not timed, not to have failed", () => {
    const comment = run154Comment();
    expect(comment).toContain(
      '| bsr\\_gemm dtype=fp16, M=8192, N=8192, K=8192, block=128, topk=16 | no value: every candidate is identical in base and head, verified and not timed in this run (triton\\_bsr, cuda\\_bsr\\_mma, cuda\\_bsr\\_wgmma, cuda\\_bsr\\_wgmma\\_ws) |',
    );
    expect(comment).not.toContain('no candidate passed');
  });
});

describe('another H100, serial 1752624012923', () => {
  it('run 155, the pull request that gives short causal D128 sequences the 128-key instance back: FASTER there, nothing else moved', () => {
    const { doc, j, log } = expectPatchPr(
      'patch-pr-h100-run155',
      '1752624012923',
      [0, 2, 214, 0],
      241.6,
    );
    expect(j.cases.filter((c) => c.perf === 'FASTER').map((c) => c.caseId)).toEqual([
      'dtype=fp16,B=2,H=3,S=77,D=128,causal=true',
      'dtype=bf16,B=2,H=3,S=77,D=128,causal=true',
    ]);
    expectOnlyItsVariantTimed(doc, log, 'cuda_fa_wgmma', 'kernels/attention/cuda/fa_wgmma.cu');
    expect(log).toContain(
      'attention/cuda_fa_wgmma dtype=fp16,B=2,H=3,S=77,D=128,causal=true confirm: ×0.8055 [0.8034, 0.8061] 24 pairs 12 blocks decided: FASTER again',
    );
    // two more instances (the 128-key causal D128 one per dtype): their wgmmas and loads
    expect(gzText('patch-pr-h100-run155', 'report.md.gz')).toContain(
      '- 🟢 **attention/cuda\\_fa\\_wgmma** FASTER on 2 cases, up to −19.4 %: SASS HGMMA 488 → 552, UTMALDG 80 → 100',
    );
  });
});
