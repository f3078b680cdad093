// Issue 27's figures on two H100s of one host, 2026-11-27 (machine J: the device tool's
// nvidia-h100-x2, 2 × NVIDIA H100 80GB HBM3, 700 W, driver 580.159.04; 0504f36;
// test/fixtures/recorded/README.md, "Two H100s, 2026-11-27"), judged again with today's code:
//   run 85: paired A/A of the whole set on both GPUs, confirmation on (`gpu-e2e.sh /tmp/xa accept aa`)
//   run 87: the attention one-file pull request on GPU 0 alone, identical variants verified on the
//           first seed only (`CUDA_VISIBLE_DEVICES=0 KG_ONE_VARIANT_FILE=kernels/attention/triton_fa2.py
//           gpu-e2e.sh /tmp/ov one-variant`)
import { describe, expect, it } from 'vitest';
import {
  expectAsOnTheMachine,
  expectOneVariantTimed,
  gpuLines,
  gzText as gz,
  judgedNow as judged,
  loadGz,
  wallOf,
} from './support/recorded.js';

describe('the whole set paired on two H100s with the confirmation on (run 85)', () => {
  const NAME = 'paired-aa-h100x2-run85';
  it('is clean: 0 SLOWER, 0 FASTER, 2 AMBIGUOUS of 217, as on the machine', () => {
    expect(gpuLines(NAME).map((l) => l.split(',')[0])).toEqual([
      'NVIDIA H100 80GB HBM3',
      'NVIDIA H100 80GB HBM3',
    ]);
    const doc = loadGz(NAME);
    expectAsOnTheMachine(NAME, doc, judged(NAME), [0, 0, 214, 2]);
  });

  it('splits the cases 0.9 % apart and takes 212.8 s, over the 150 s asked', () => {
    const lanes = loadGz(NAME).run.lanes!;
    expect(lanes.source).toBe('balance');
    expect(lanes.lanes.map((l) => l.cases)).toEqual([15, 17]);
    expect(lanes.apart_pct).toBe(0.9);
    // The lanes' own work is 179-180 s: the figure is the measurement, not the split.
    expect(lanes.lanes.every((l) => l.busy_s! > 178 && l.busy_s! < 181)).toBe(true);
    expect(wallOf(NAME)).toBe(212.8);
  });
});

describe('the attention one-file pull request, identical variants verified on the first seed (run 87)', () => {
  const NAME = 'one-variant-attention-h100-run87';
  it('times triton_fa2 and sdpa_default only and verifies the 164 others on seed 0', () => {
    const doc = loadGz(NAME);
    expect(doc.environment.gpu.count).toBe(1);
    expectOneVariantTimed(doc, 164);
    const identical = doc.cases.filter((c) => c.identical);
    expect(identical.every((c) => c.identical!.verified === 'first_seed')).toBe(true);
    expect(identical.every((c) => JSON.stringify(c.correctness?.seeds) === '[0]')).toBe(true);
    expectAsOnTheMachine(NAME, doc, judged(NAME), [0, 0, 214, 2]);
  });

  it('took 137.8 s: verification 33 s (62 s in run 68), not yet the 90 s asked', () => {
    expect(wallOf(NAME)).toBe(137.8);
    expect(gz(NAME, 'report.md.gz')).toContain(
      'GPU-seconds of each stage (135 s in all): doctor 4 s · build 0 s · base build 0 s · harness 131 s (environment 2 s, set-up 5 s, verify 33 s, base set-up 0 s, base verify 6 s,',
    );
  });
});
