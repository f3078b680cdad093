// The verdict in a minute (issue 27), recorded 2026-11-26 with the bundled action and the GitHub
// stand-in (scripts/gpu-e2e.sh), judged again here.
//
// One H100 (NVIDIA H100 80GB HBM3, 700 W, driver 580.159.04, machine 14, nvidia-h100-x1), 06:40-06:46
// UTC, d6e98fa: `KG_SHA=d6e98fa… KG_BASELINE_DIR=/tmp/kgstore bash scripts/gpu-e2e.sh /tmp/n2 push
// one-variant`, then `… /tmp/n2b one-variant` on the same machine: run 43 the push (cold build),
// runs 44 and 45 a pull request that changes one variant's file (a comment in
// kernels/bsr_gemm/triton_bsr.py), identity before timing on.
//
// Two H200s (nvidia-h200-x2: no two H100s came; NVIDIA H200, 700 W, driver 580.159.04, machine 15),
// 06:46-06:55 UTC, 1d44d82: `… gpu-e2e.sh /tmp/n3 push aa` (run 46 the push, run 47 the whole set
// paired A/A over both GPUs from one queue), then the same A/A on one of the two GPUs
// (CUDA_VISIBLE_DEVICES=0 passed through gpu-e2e.sh on the machine; run 48).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { expectAsOnTheMachine, loadGz, perfCounts, ROOT, wallOf } from './support/recorded.js';

const config = loadConfig(ROOT);

describe.each([
  ['one-variant-h100-run44', 66.9],
  ['one-variant-h100-run45', 68.3],
] as const)('%s: a pull request that changes one variant, on one H100', (name, wall) => {
  const results = loadGz(name);
  const judged = judge(results, loadGz('push-h100-run43'), config, 'pr');
  const cases = judged.comparison.cases;

  it('has its verdict within 90 s of wall time, the build warm', () => {
    expect(wallOf(name)).toBe(wall);
    expect(wallOf(name)).toBeLessThanOrEqual(90);
    expect(results.run.stage_seconds!['build']).toBeLessThan(0.1);
    expect(results.run.stage_seconds!['build_base']).toBeLessThan(0.1);
    // the push before it built from a cold cache
    expect(loadGz('push-h100-run43').run.stage_seconds!['build']).toBeGreaterThan(10);
  });

  it("times only the changed kernel's variants and their references; the rest SAME by identity", () => {
    expectAsOnTheMachine(name, results, judged.comparison, [0, 0, 216, 0]);
    const identical = results.cases.filter((c) => c.identical !== undefined);
    expect(identical).toHaveLength(199);
    expect(new Set(identical.map((c) => c.kernel))).toEqual(new Set(['attention', 'gemm']));
    const timed = cases.filter((c) => c.method === 'paired');
    expect(timed).toHaveLength(17);
    expect(timed.every((c) => c.kernel === 'bsr_gemm' && c.perf === 'SAME')).toBe(true);
    expect(cases.filter((c) => c.method === 'identical' && c.perf === 'SAME')).toHaveLength(199);
    expect(judged.rendered.full).toContain(
      // recorded before run.verify_identical: every seed, as the record (no identical.verified) says
      '199 SAME by identity: identical build and sources in base and head, not timed, verified on every seed.',
    );
  });
});

describe('the whole set paired over two H200s from one queue, and on one of them', () => {
  const two = loadGz('paired-aa-h200x2-run47');
  const one = loadGz('paired-aa-h200-1gpu-run48');

  it('two GPUs: 140.4 s, lanes 0.2 % apart, every case paired, nothing moved', () => {
    expect(wallOf('paired-aa-h200x2-run47')).toBe(140.4);
    expect(wallOf('paired-aa-h200x2-run47')).toBeLessThanOrEqual(150);
    const lanes = two.run.lanes!;
    expect(lanes.apart_pct).toBeLessThanOrEqual(15);
    expect(lanes.apart_pct).toBe(0.2);
    const j = judge(two, loadGz('push-h200x2-run46'), config, 'pr');
    expectAsOnTheMachine('paired-aa-h200x2-run47', two, j.comparison, [0, 0, 216, 0]);
    expect(j.comparison.cases.filter((c) => c.method === 'paired')).toHaveLength(216);
  });

  it('one GPU of the same machine: 220.6 s, and one false SLOWER the two-GPU run did not have', () => {
    expect(wallOf('paired-aa-h200-1gpu-run48')).toBe(220.6);
    expect(one.run.lanes).toBeUndefined();
    const j = judge(one, loadGz('push-h200x2-run46'), config, 'pr');
    expect(perfCounts(j.comparison.cases)).toEqual([1, 0, 215, 0]);
    const slower = j.comparison.cases.find((c) => c.perf === 'SLOWER')!;
    expect(slower.key).toBe(
      'bsr_gemm/cuda_bsr_wgmma/dtype=bf16,M=8192,N=8192,K=8192,block=128,topk=16',
    );
    expect(slower.ciLo).toBeGreaterThan(1.01);
  });
});
