// Paired pull-request runs of the whole kernel set on the H100 (NVIDIA H100 80GB HBM3, 700 W,
// driver 580.159.04, 2026-11-23, `KG_BASELINE_DIR=/tmp/kgstore bash scripts/gpu-e2e.sh /tmp/e2e
// <scenario>` on the device tool's nvidia-h100-x1; docs/notes/paired-ab.md gives each run).
// Judged again here from their results with today's configuration, as the action judges them.
import { describe, expect, it } from 'vitest';
import { compare } from '../src/judge/index.js';
import { loadConfig } from '../src/config/index.js';
import {
  count,
  expectAsOnTheMachine,
  loadGz,
  medianHalfWidth,
  perfCounts,
  ROOT,
  verdictOf,
  wallOf,
} from './support/recorded.js';

const config = loadConfig(ROOT);
const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

describe('run 3: the first paired A/A run, a round of every variant per pair (commit 8ad18d9)', () => {
  const results = loadGz('paired-aa-h100');
  const judged = compare(results, undefined, config);

  it('judges every timed case by its pairs, with no stored baseline', () => {
    const timed = results.cases.filter((c) => c.status === 'ok');
    expect(timed).toHaveLength(216);
    expect(judged.cases.filter((c) => c.method === 'paired')).toHaveLength(216);
    expect(results.run.paired_base?.order).toBe('ABBA');
    expect(results.environment.gpu.name).toBe('NVIDIA H100 80GB HBM3');
  });

  it('had false verdicts on identical code', () => {
    // On the machine, under the 0.2 µs floor of then: 2 SLOWER, 8 FASTER, 29 AMBIGUOUS. Under
    // today's 0.8 µs floor the microsecond offsets are SAME, the rest stays.
    const cases = judged.cases;
    expect([count(cases, 'SLOWER'), count(cases, 'FASTER'), count(cases, 'AMBIGUOUS')]).toEqual([
      1, 6, 29,
    ]);
    // Each process tuned Triton's FlashAttention on its own: the head read 3.7 % faster.
    const fa = cases.find((c) => c.variant === 'triton_fa2' && c.caseId === HEADLINE);
    expect(fa?.ratio).toBeLessThan(0.98);
  });
});

describe('run 5: bursts of pairs per variant, the tuning shared (commit 22c1e80)', () => {
  const results = loadGz('paired-aa-h100-bursts');
  const judged = compare(results, undefined, config);

  it('leaves identical code alone but for the host-bound torch BSR matmul', () => {
    const cases = judged.cases;
    expect(cases.filter((c) => c.method === 'paired')).toHaveLength(216);
    expect([
      count(cases, 'SLOWER'),
      count(cases, 'FASTER'),
      count(cases, 'SAME'),
      count(cases, 'AMBIGUOUS'),
    ]).toEqual([1, 0, 214, 1]);
    const slower = cases.find((c) => c.perf === 'SLOWER');
    expect(`${slower?.variant} ${slower?.caseId}`).toBe(
      'torch_bsr_dense_mm dtype=bf16,M=8192,N=8192,K=8192,block=128,topk=16',
    );
    // Both arms now run the tiling the head tuned: the 3.7 % of run 3 is gone.
    const fa = cases.find((c) => c.variant === 'triton_fa2' && c.caseId === HEADLINE);
    expect(Math.abs((fa?.ratio ?? 0) - 1)).toBeLessThan(0.005);
    expect(fa?.perf).toBe('SAME');
  });

  it('says which reference moved, so the run is not blamed on the pull request', () => {
    expect(judged.paired?.controlsMoved).toEqual([
      'bsr_gemm/torch_bsr_dense_mm dtype=bf16,M=8192,N=8192,K=8192,block=128,topk=16',
    ]);
  });
});

describe('run 7: a planted 2 % slowdown of triton_fa2, final harness (commit 5199432)', () => {
  const results = loadGz('paired-slow2-h100');
  const judged = compare(results, undefined, config);
  const fa = judged.cases.filter((c) => c.variant === 'triton_fa2');
  const others = judged.cases.filter((c) => c.variant !== 'triton_fa2' && c.status === 'ok');

  it('calls every case of the slowed variant SLOWER, the headline cases by about 2 %', () => {
    expect(fa).toHaveLength(26);
    expect(fa.every((c) => c.perf === 'SLOWER')).toBe(true);
    const large = fa.filter((c) => (c.baselineMedianMs ?? 0) >= 0.1);
    expect(large).toHaveLength(8);
    for (const c of large) {
      expect(c.ratio).toBeGreaterThan(1.015);
      expect(c.ratio).toBeLessThan(1.03);
    }
  });

  it('leaves every other variant SAME', () => {
    expect(others).toHaveLength(190);
    expect(others.filter((c) => c.perf !== 'SAME').map((c) => c.key)).toEqual([]);
  });

  it('finds the machine quiet: no reference variant moved', () => {
    expect(judged.paired?.controlsMoved).toEqual([]);
  });
});

// Runs 8-12 (2026-11-23, 21:14-21:52 UTC): the harness of 5c5014a (a SAME waits for an interval
// within 0.4 of the threshold, host-side tunings kept beside the build cache) on two machines, a
// cold run then a warm one on each. Runs 8-9 (machine 1) lacked the out-of-memory retry: seven
// correct SDPA cases of B16 H96 S4096 D128 causal failed their verification (the run's exit 1);
// runs 10-12 (machine 2) had it (5c5014a + the retry of 86c1e29, PYTORCH_CUDA_ALLOC_CONF
// expandable segments). Each run's verdict.json is what the action said on the machine.
const LARGE_ATTENTION = /^dtype=(fp16|bf16),B=16,H=96,S=4096,/;
const BSR_BF16 = 'bsr_gemm/cuda_bsr_wgmma_ws/dtype=bf16,M=8192,N=8192,K=8192,block=128,topk=16';

describe.each([
  ['paired-aa-h100-run8', 'machine 1, cold', [0, 0, 197, 5], 7, [BSR_BF16]],
  ['paired-aa-h100-run9', 'machine 1, warm', [0, 0, 200, 2], 7, [BSR_BF16]],
  ['paired-aa-h100-run10', 'machine 2, cold', [0, 0, 210, 6], 0, []],
  ['paired-aa-h100-run11', 'machine 2, warm', [0, 0, 211, 5], 0, []],
])('A/A %s (%s)', (name, _machine, perf, errors, offsets) => {
  const results = loadGz(name);
  const judged = compare(results, undefined, config);

  it('has no false SLOWER or FASTER, as the action said on the machine', () => {
    expectAsOnTheMachine(name, results, judged, perf, errors);
  });

  it('is AMBIGUOUS only on the large attention cases, whose pairs spread 1-2 % at the power cap', () => {
    const ambiguous = judged.cases.filter((c) => c.perf === 'AMBIGUOUS');
    // And on machine 1 cuda_bsr_wgmma_ws bf16 8192³: +0.96 … +1.01 % on identical code in both
    // runs, each interval ±0.05 % wide: an offset between the two processes, not noise.
    const others = ambiguous.filter((c) => !LARGE_ATTENTION.test(c.caseId)).map((c) => c.key);
    expect(others).toEqual(offsets);
  });
});

describe('run 12: a planted 1 % slowdown of triton_fa2 (machine 2, warm)', () => {
  const results = loadGz('paired-slow1-h100-run12');
  const judged = compare(results, undefined, config);
  const fa = judged.cases.filter((c) => c.variant === 'triton_fa2');
  const others = judged.cases.filter((c) => c.variant !== 'triton_fa2' && c.status === 'ok');
  const large = fa.filter((c) => (c.baselineMedianMs ?? 0) >= 0.1);

  it('catches 1 of the 8 large cases; the other 7 read +1.0 … +1.3 % but stay AMBIGUOUS', () => {
    expect(large).toHaveLength(8);
    expect(large.filter((c) => c.perf === 'SLOWER')).toHaveLength(1);
    expect(large.filter((c) => c.perf === 'AMBIGUOUS')).toHaveLength(7);
    for (const c of large) expect(c.ratio).toBeGreaterThan(1.009);
  });

  it('calls 16 of its 18 microsecond cases SLOWER: the planted spin has a floor of its own', () => {
    const small = fa.filter((c) => (c.baselineMedianMs ?? 0) < 0.1);
    expect(small).toHaveLength(18);
    expect(small.filter((c) => c.perf === 'SLOWER')).toHaveLength(16);
  });

  it('leaves every other variant SAME but two large attention cases', () => {
    expect(others).toHaveLength(190);
    const moved = others.filter((c) => c.perf !== 'SAME');
    expect(moved.map((c) => c.perf)).toEqual(['AMBIGUOUS', 'AMBIGUOUS']);
    for (const c of moved) expect(c.caseId).toMatch(LARGE_ATTENTION);
  });
});

// Runs 14-18 (2026-11-24, 00:00-00:28 UTC), one machine (GPU serial 1752624021247 for 15-18;
// run 14 on serial 1650924030263): the harness of d309bdb (a variant whose interval straddles
// ±threshold at its cap gets one cap more; the base verifies one seed; the stress inputs of issue
// 10; attention's large-logits input judged at 4x its tolerance). Stored gzipped (results.json.gz):
// the device tool carries at most 64 MiB of working tree.

describe('run 14: the push before the stress tolerance scale (commit 7d6e23e)', () => {
  const results = loadGz('push-h100-run14');

  it('failed only the unfused cublas_attn reference, on the large-logits stress input, within 4x', () => {
    const failed = results.cases.filter((c) => c.status !== 'ok' && c.status !== 'skipped');
    expect(failed).toHaveLength(14);
    for (const c of failed) {
      expect(c.variant).toBe('cublas_attn');
      expect(c.correctness?.message).toMatch(/^stress input large logits: rel_l2 \S+ > tolerance /);
    }
    expect(verdictOf('push-h100-run14').verdict).toBe('fail');
  });

  it('shows every variant within 4x on large logits and the fused ones far inside 1x', () => {
    const worst = new Map<string, number>();
    for (const c of results.cases) {
      const tol = c.correctness?.tol_rel_l2;
      for (const s of c.correctness?.stress ?? []) {
        if (s.name !== 'large logits' || s.rel_l2 === null || !tol) continue;
        worst.set(c.variant, Math.max(worst.get(c.variant) ?? 0, s.rel_l2 / tol));
      }
    }
    expect(worst.get('cublas_attn')).toBeGreaterThan(2.5);
    for (const [variant, x] of worst) {
      expect(x).toBeLessThan(4);
      if (variant !== 'cublas_attn') expect(x).toBeLessThan(0.2);
    }
  });
});

describe('run 15: push of the whole set with the harness of d309bdb', () => {
  const results = loadGz('push-h100-run15');

  it('passes with no error and no failure on a correct kernel', () => {
    const statuses = results.cases.map((c) => c.status);
    expect(statuses.filter((s) => s === 'ok')).toHaveLength(216);
    expect(statuses.filter((s) => s === 'skipped')).toHaveLength(1);
    expect(verdictOf('push-h100-run15').verdict).toBe('pass');
  });
});

describe.each([
  ['paired-aa-h100-run16', 'warm, after the push'],
  ['paired-aa-h100-run18', 'warm, after the deep checks'],
])('A/A %s (%s)', (name) => {
  const results = loadGz(name);
  const judged = compare(results, undefined, config);

  it('has no SLOWER, FASTER or AMBIGUOUS case, as the action said on the machine', () => {
    expectAsOnTheMachine(name, results, judged, [0, 0, 216, 0]);
  });

  it('narrows the cases of 1 ms or more to a median half-width under 0.5 %', () => {
    expect(medianHalfWidth(results)).toBeLessThan(0.4);
  });

  it('gave the straddling variants one cap more, and each was judged SAME', () => {
    const extended = results.cases.filter(
      (c) => c.paired?.stop_reason === 'time_cap' && (c.paired?.seconds ?? 0) > 4.5,
    );
    expect(extended.length).toBeGreaterThan(0);
    const keys = new Set(extended.map((c) => `${c.kernel}/${c.variant}/${c.case}`));
    const verdicts = judged.cases.filter((c) => keys.has(c.key)).map((c) => c.perf);
    expect(verdicts).toEqual(extended.map(() => 'SAME'));
  });

  it('verified the base on one seed and the head on three', () => {
    const c = results.cases.find((x) => x.status === 'ok' && x.paired?.base_correctness)!;
    expect(c.correctness?.seeds).toEqual([0, 1, 2]);
    expect(c.paired?.base_correctness?.seeds).toEqual([0]);
  });
});

// Runs 19-21 (2026-11-24, 00:47-01:15 UTC). Run 19 (936b6f2, machine serial 1752824028007): the
// push stalled in triton_fa3's tuning on the first attention case and hit its 570 s limit (its
// action.log only: push-h100-run19-hang/); triton_fa3 left the kernel set in 9d2a2bf. Runs 20-21
// (9d2a2bf, machine serial 1752724022706): push cold, then the paired A/A warm, with the case-wide
// warm-up after a kernel's first case cut to a round per arm and the new stage times.
describe('run 20: push of 9d2a2bf', () => {
  const results = loadGz('push-h100-run20');

  it('passes with no error and no failure on a correct kernel', () => {
    expect(results.cases.filter((c) => c.status === 'ok')).toHaveLength(216);
    expect(results.cases.filter((c) => c.status === 'skipped')).toHaveLength(1);
    expect(verdictOf('push-h100-run20').verdict).toBe('pass');
  });
});

describe('run 21: paired A/A of 9d2a2bf, warm', () => {
  const results = loadGz('paired-aa-h100-run21');
  const judged = compare(results, undefined, config);
  const key = 'attention/sdpa_flash/dtype=bf16,B=16,H=96,S=4096,D=128,causal=false';

  it('says SLOWER once, on a reference timed with identical code in both arms, and the gate passes', () => {
    expect(perfCounts(judged.cases)).toEqual([1, 0, 214, 1]);
    const slower = judged.cases.filter((c) => c.perf === 'SLOWER');
    expect(slower.map((c) => c.key)).toEqual([key]);
    // All six blocks of its first twelve pairs read the head 2.4-6.9 % slower (about 1 s of the
    // run): the interval cleared +1 % at the first look and the variant stopped, decided.
    const rec = results.cases.find((c) => `${c.kernel}/${c.variant}/${c.case}` === key)!;
    expect(rec.paired?.stop_reason).toBe('decided');
    expect(rec.paired?.log_ratios).toHaveLength(6);
    for (const r of rec.paired!.log_ratios!) expect(r).toBeGreaterThan(0.02);
    const v = verdictOf('paired-aa-h100-run21');
    expect([v.verdict, v.counts.slower, v.counts.ambiguous]).toEqual(['pass', 1, 1]);
  });

  it('took 324 s in all, the stages named', () => {
    expect(wallOf('paired-aa-h100-run21')).toBe(323.7);
    const s = results.run.stage_seconds!;
    expect(Object.keys(s)).toEqual(
      expect.arrayContaining([
        'verify',
        'base verify',
        'prepare',
        'base prepare',
        'bench',
        'bench warm-up',
        'finish',
      ]),
    );
    expect(s['bench warm-up']).toBeGreaterThan(50);
    expect(s['bench warm-up']).toBeLessThan(s.bench!);
  });
});
