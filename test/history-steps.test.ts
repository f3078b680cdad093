// The history's step test (issue 25): synthetic series with known steps, the like-for-like
// boundaries, the recorded H100 nights of 2026-11-26 as a history, and the nightly report's
// History section. src/judge/steps.ts and trend.ts; src/report/history.ts.
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../src/config/index.js';
import { historyTrend, stepTest, type HistoryTrend } from '../src/judge/index.js';
import { normalQuantile, seededRandom } from '../src/lib/index.js';
import { judge } from '../src/pipeline/index.js';
import { keepUnits } from '../src/report/compact.js';
import type { CaseResult, KernelgateResults } from '../src/results/index.js';
import { loadGz, ROOT } from './support/recorded.js';

const FLOORS = { floorPct: 1, floorMs: 0.0008 };
/** n nights at `ms` with a fixed ±0.2 % wobble (a spread of about 0.2 %), then `after`. */
const flat = (n: number, ms = 1) =>
  Array.from({ length: n }, (_, i) => ms * (1 + 0.002 * [0, 1, -1, 0.5, -0.5][i % 5]!));

describe('stepTest: a change that held, and what is not one', () => {
  it('a 3 % step held two nights is a step', () => {
    const f = stepTest([...flat(8), 1.03, 1.031], FLOORS);
    expect(f).toMatchObject({ kind: 'step', direction: 'SLOWER', index: 8, nights: 2, before: 8 });
    expect(f!.changePct).toBeCloseTo(3.05, 1);
    // 4 × 1.4826 MAD of the before nights is under the 1 % floor: the floor is the threshold
    expect(f!.thresholdPct).toBeCloseTo(1, 6);
  });

  it('held one night (tonight) is a watch, not a step', () => {
    expect(stepTest([...flat(8), 1.03], FLOORS)).toMatchObject({ kind: 'watch', nights: 1 });
  });

  it('a single outlier is not a step: tonight back to the level, or the outlier among the before nights', () => {
    expect(stepTest([...flat(8), 1.08, 1.001], FLOORS)).toBeUndefined();
    const series = flat(10);
    series[4] = 1.2;
    expect(stepTest(series, FLOORS)).toBeUndefined();
  });

  it('a step older than half the window is found where it happened', () => {
    const f = stepTest([...flat(4), ...flat(9, 0.96)], FLOORS);
    expect(f).toMatchObject({ kind: 'step', direction: 'FASTER', index: 4, nights: 9 });
  });

  it('a change under the floors is not called: 0.5 % on a quiet case, 0.6 µs on a 6 µs one', () => {
    const quiet = Array.from({ length: 12 }, (_, i) => 1 + 1e-5 * (i % 3));
    expect(stepTest([...quiet, 1.005, 1.005], FLOORS)).toBeUndefined();
    expect(stepTest([...flat(8, 0.006), 0.0066, 0.0066], FLOORS)).toBeUndefined();
    // the same 10 % on a 1 ms case clears both floors
    expect(stepTest([...flat(8), 1.1, 1.1], FLOORS)?.kind).toBe('step');
  });

  it("the threshold follows the segment's own spread: a 3 % step on a case whose nights spread 2 % is not called", () => {
    const noisy = [1, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.0];
    expect(stepTest([...noisy, 1.03, 1.03], FLOORS)).toBeUndefined();
    // nights that alternate by 2-6 % spread 3.1 % a night: 4 spreads × √(1 + π/16) is 13.7 %
    expect(stepTest([...noisy, 1.1, 1.1], FLOORS)).toBeUndefined();
    expect(stepTest([...noisy, 1.25, 1.25], FLOORS)).toMatchObject({ kind: 'step' });
  });

  // Normal noise of 0.5 % a night (half the floor) and of 1 % (the floor itself), 14 nights each.
  it.each([
    [0.005, { step: 0, watch: 2 }],
    [0.01, { step: 2, watch: 2 }],
  ])('noise of %s a night: 2,000 seeded series of 14 nights give %o', (sd, expected) => {
    const random = seededRandom(25);
    const normal = () => normalQuantile(Math.min(Math.max(random(), 1e-12), 1 - 1e-12));
    const found = { step: 0, watch: 0 };
    for (let s = 0; s < 2000; s++) {
      const series = Array.from({ length: 14 }, () => Math.exp(sd * normal()));
      const f = stepTest(series, FLOORS);
      if (f) found[f.kind]++;
    }
    expect(found).toEqual(expected);
  });

  it('too few nights before any split: nothing to say', () => {
    expect(stepTest([1, 1, 1.1], FLOORS)).toBeUndefined();
    expect(stepTest([1, 1, 1, 1.1], FLOORS)?.kind).toBe('watch');
  });
});

// A synthetic night: one kernel, a candidate `fast` and a reference `ref`, one case.
function night(
  day: number,
  ms: { fast: number; ref: number },
  opts: { harness?: string; paired?: boolean; tuning?: unknown; torch?: string } = {},
): KernelgateResults {
  const c = (variant: 'fast' | 'ref'): CaseResult => ({
    kernel: 'k',
    variant,
    case: 'n=1',
    params: { n: 1 },
    status: 'ok',
    timing: {
      method: 'events',
      samples_ms: [ms[variant]],
      median_ms: ms[variant],
      n_samples: 1,
      stop_reason: 'converged',
    },
    ...(variant === 'fast' && opts.tuning !== undefined
      ? { tuning: { config: opts.tuning as string } }
      : {}),
  });
  const startedAt = `2026-12-${String(day).padStart(2, '0')}T03:00:00Z`;
  return {
    schema: 'kernelgate/results@1',
    run: {
      id: `n${day}`,
      started_at: startedAt,
      harness: opts.harness ?? 'kernelgate-harness 0.4.0',
      git_sha: `${String(day).padStart(2, '0')}${'c'.repeat(38)}`,
      ...(opts.paired === false ? {} : { paired_base: { root: '/base', git_sha: 'b'.repeat(40) } }),
    },
    environment: {
      gpu: { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' },
      driver_version: '580.159.04',
      cuda_runtime_version: '13.0',
      libraries: { torch: opts.torch ?? '2.11.0', triton: '3.6.0' },
    },
    diagnostics: [],
    kernels: [
      {
        name: 'k',
        variants: [
          { name: 'fast', role: 'candidate' },
          { name: 'ref', role: 'reference' },
        ],
      },
    ],
    cases: [c('fast'), c('ref')],
  } as KernelgateResults;
}

/** Nights 1..n, `fast` at 1 ms (its wobble) and `ref` at 2 ms, then the given ones. */
const nights = (n: number, then: KernelgateResults[] = []) => {
  const runs = flat(n).map((ms, i) => night(i + 1, { fast: ms, ref: 2 * ms }));
  return [...runs, ...then];
};
const findings = (t: HistoryTrend) =>
  t.cases.map(
    (c) => `${c.key} ${c.finding!.kind} ${c.finding!.nights} ${c.finding!.control ?? 'code'}`,
  );

describe('historyTrend: series cut where the comparison is not like for like', () => {
  it('a 3 % step of the candidate held two nights is a step of the code', () => {
    const runs = nights(8, [night(9, { fast: 1.03, ref: 2 }), night(10, { fast: 1.03, ref: 2 })]);
    const t = historyTrend(runs.slice(0, -1), runs.at(-1)!, FLOORS);
    expect(findings(t)).toEqual(['k/fast/n=1 step 2 code']);
    expect(t.cases[0]!.finding!.startedAt).toBe('2026-12-09T03:00:00Z');
    expect(t).toMatchObject({ mode: 'paired', runs: 9, leftOut: 0, boundaries: [] });
  });

  it('a step across a new harness is not a step but a boundary: the series restarts', () => {
    const v5 = { harness: 'kernelgate-harness 0.5.0' };
    const runs = nights(8, [
      night(9, { fast: 1.03, ref: 2 }, v5),
      night(10, { fast: 1.03, ref: 2 }, v5),
    ]);
    const t = historyTrend(runs.slice(0, -1), runs.at(-1)!, FLOORS);
    expect(t.cases).toEqual([]);
    expect(t.boundaries).toEqual([
      {
        field: 'harness',
        from: 'kernelgate-harness 0.4.0',
        to: 'kernelgate-harness 0.5.0',
        startedAt: '2026-12-09T03:00:00Z',
        commit: `09${'c'.repeat(38)}`,
      },
    ]);
  });

  it('a re-tune cuts that case only; a tuning only one night carries is no boundary', () => {
    const runs = [
      ...flat(8).map((ms, i) => night(i + 1, { fast: ms, ref: 2 }, { tuning: '[64, 64, 4]' })),
      night(9, { fast: 1.03, ref: 2 }, { tuning: '[128, 64, 8]' }),
      night(10, { fast: 1.03, ref: 2.0 }, { tuning: '[128, 64, 8]' }),
    ];
    const t = historyTrend(runs.slice(0, -1), runs.at(-1)!, FLOORS);
    expect(t.cases).toEqual([]);
    expect(t.boundaries).toMatchObject([
      { field: 'tuning', from: '"[64, 64, 4]"', to: '"[128, 64, 8]"', cases: ['k/fast/n=1'] },
    ]);
    const untuned = nights(8, [
      night(9, { fast: 1.03, ref: 2 }, { tuning: 'x' }),
      night(10, { fast: 1.03, ref: 2 }, { tuning: 'x' }),
    ]);
    expect(findings(historyTrend(untuned.slice(0, -1), untuned.at(-1)!, FLOORS))).toEqual([
      'k/fast/n=1 step 2 code',
    ]);
  });

  it('single-revision runs (pushes) between paired nights are left out, not boundaries', () => {
    const runs = nights(8).flatMap((r, i) => [
      r,
      night(i + 1, { fast: 1.1, ref: 2.2 }, { paired: false }),
    ]);
    runs.forEach((r, i) => (r.run.started_at = `2026-12-01T${String(i).padStart(2, '0')}:00:00Z`));
    const tonight = night(20, { fast: 1.0, ref: 2 });
    const t = historyTrend(runs, tonight, FLOORS);
    expect(t).toMatchObject({ mode: 'paired', runs: 8, leftOut: 8, boundaries: [], cases: [] });
  });

  it('the reference moving with the candidate on the same case is the machine, not the code', () => {
    const runs = nights(8, [night(9, { fast: 1.03, ref: 2.06 }, { paired: false })]);
    runs.forEach((r) => delete r.run.paired_base);
    const tonight = night(10, { fast: 1.03, ref: 2.06 }, { paired: false });
    expect(findings(historyTrend(runs, tonight, FLOORS))).toEqual([
      'k/fast/n=1 step 2 same-case',
      'k/ref/n=1 step 2 reference',
    ]);
  });
});

// The recorded H100 nights of 2026-11-26 (test/recorded-nightly.test.ts: runs 32-37 of harness
// 708c622, machine 10 then machine 11; run 39 of d13c4ee on machine 12), as a branch's history.
const at = (name: string, iso?: string): KernelgateResults => {
  const r = loadGz(name);
  return iso ? { ...r, run: { ...r.run, started_at: iso } } : r;
};
const summary = (t: HistoryTrend) => {
  const out: Record<string, number> = {};
  for (const c of t.cases) {
    const who = c.finding!.control ? `${c.finding!.control}` : `code ${c.variant}`;
    const k = `${c.finding!.kind} ${who}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
};

describe('the recorded H100 nights as a history', () => {
  it('five A/A nights (runs 32, 34, 35 on one H100, 36 and 37 on another), pushes 14, 15, 20 stored beside them: no step of the code', () => {
    const stored = ['push-h100-run14', 'push-h100-run15', 'push-h100-run20']
      .concat([
        'nightly-h100-run32',
        'nightly-h100-run34',
        'nightly-h100-run35',
        'nightly-h100-run36',
      ])
      .map((n) => at(n));
    const t = historyTrend(stored, at('nightly-h100-run37'), FLOORS);
    expect(t).toMatchObject({ mode: 'paired', leftOut: 3, runs: 4, boundaries: [], machine: [] });
    // The second machine reads sdpa_efficient fp16 D128 1.3 % faster from run 36 on (a reference:
    // its code does not change), and tonight cuda_bsr_wgmma fp16 3.1 % slower, beyond its 3.0 %
    // threshold, where run 37's pairs beside its good base saw ×1.0007: the machine's, not the code's.
    expect(summary(t)).toEqual({ 'step reference': 1, 'watch paired': 1 });
  });

  it('a planted slow night followed by a second slowed night (run 39, recorded: triton_fa2 launching twice) is a step of triton_fa2 alone', () => {
    // The nights re-dated to follow each other: three A/A nights, then run 33 (triton_fa2 planted
    // 2 % slower: +1.9 … +2.5 % on its large cases, more on the microsecond ones), then run 39.
    const stored = [
      at('nightly-h100-run32', '2026-12-01T03:00:00Z'),
      at('nightly-h100-run34', '2026-12-02T03:00:00Z'),
      at('nightly-h100-run35', '2026-12-03T03:00:00Z'),
      at('nightly-slow2-h100-run33', '2026-12-04T03:00:00Z'),
    ];
    const t = historyTrend(stored, at('nightly-bisect-h100-run39', '2026-12-05T03:00:00Z'), FLOORS);
    const code = t.cases.filter((c) => c.finding!.control === undefined);
    expect(new Set(code.map((c) => c.variant))).toEqual(new Set(['triton_fa2']));
    expect(code.every((c) => c.finding!.direction === 'SLOWER')).toBe(true);
    // 17 of its 26 cases stepped from run 33 on; on 9 (7 of the 8 large ones and 2 smaller
    // ones) the planted 2 % of run 33 was not beyond their threshold, so only tonight's ×2 is:
    // a watch. Everything else that moved is the machine's (a reference,
    // or run 39's pairs saw no change): one reference and one candidate watch.
    expect(summary(t)).toEqual({
      'step code triton_fa2': 17,
      'watch code triton_fa2': 9,
      'watch reference': 1,
      'watch paired': 1,
    });
    for (const c of code.filter((c) => c.finding!.kind === 'step')) {
      expect(c.finding!.startedAt).toBe('2026-12-04T03:00:00Z');
    }
  });
});

describe('the nightly report: History', () => {
  const config = defaultConfig(ROOT);
  const runs = nights(8, [night(9, { fast: 1.03, ref: 2 }), night(10, { fast: 1.031, ref: 2 })]);
  runs.push(night(11, { fast: 1.03, ref: 2 }, { torch: '2.12.0' }));
  runs.unshift(night(0, { fast: 1.0, ref: 2 }, { paired: false }));

  it('shows the step, the boundary met and what was left out, and changes no verdict', () => {
    const before = runs.slice(0, -2);
    const tonight = runs.at(-2)!;
    const withHistory = judge(tonight, undefined, config, 'nightly', undefined, before);
    const without = judge(tonight, undefined, config, 'nightly');
    expect(withHistory.verdict).toEqual(without.verdict);
    const text = withHistory.rendered.full;
    const section = text.slice(
      text.indexOf('### History'),
      text.indexOf('\n### ', text.indexOf('### History') + 5),
    );
    expect(section.trim().split('\n')).toEqual([
      '### History: steps over the window',
      '',
      "Each case's median over the 9 stored paired runs since 2026-12-01 (at most 14 nights with tonight's), cut at every boundary where the comparison is not like for like (harness, timing method, driver, CUDA, torch, triton, GPU model, tuning). A step moved beyond the threshold (the larger of 4 × the segment's spread, 1.4826 MAD, and 1.0 % or 0.8 µs) from the median of the nights before it and held 2 nights or more; tonight alone beyond it is a watch. Findings only: the gate is tonight's verdicts above.",
      '',
      "1 stored run timed without pairs (not like tonight's) left out of the series.",
      '',
      '**Steps** (held 2 nights or more):',
      '',
      '| case | since | before → after (medians) | change | threshold | nights |',
      '| :- | :- | -: | -: | -: | -: |',
      // numbers keep their units: no-break spaces (keepUnits); the case may break after its
      // slashes and commas (<wbr>: a case key has no space)
      keepUnits(
        '| k/<wbr>fast/<wbr>n=1 | 2026-12-09 (09cccccccccc) | 1.000 → 1.030 ms | 🔴 +3.0 % | 1.0 % | 2 |',
      ),
    ]);
    expect(without.rendered.full).not.toContain('### History');
  });

  it('names a boundary in the window, its values escaped', () => {
    const tonight = runs.at(-1)!;
    tonight.environment.libraries!['torch'] = '2.12.0 <b>|x|</b>';
    const text = judge(tonight, undefined, config, 'nightly', undefined, runs.slice(0, -1)).rendered
      .full;
    expect(text).toContain(
      'Boundaries in the window:\n- torch: 2.11.0 → 2.12.0 &lt;b&gt;\\|x\\|&lt;/b&gt; on 2026-12-11 (11cccccccccc): series restarted',
    );
    expect(text).toContain('No step and no watch of the code in the window.');
  });
});
