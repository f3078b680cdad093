// Issue 11's limits, on the recorded GPU runs (H200: test/fixtures/recorded/{pr,broken,slowed,
// nightly,...}; H100 paired: paired-*): no comment exceeds GitHub's 65,536 characters when each
// run is grown to 1,000 cases, and every kernel's tier is graded on its fastest passing candidate
// against what users call (SDPA's default, dense cuBLAS) with every rung reachable on the chip.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { GITHUB_COMMENT_LIMIT } from '../src/report/index.js';
import { loadResults, type KernelgateResults } from '../src/results/index.js';
import { evaluateTiers } from '../src/judge/index.js';

const ROOT = join(import.meta.dirname, '..');
const config = loadConfig(ROOT);
const recorded = (run: string) =>
  loadResults(join(ROOT, 'test/fixtures/recorded', run, 'results.json.gz'));

/**
 * The recorded runs of the whole kernel set, nine on the H200 and four paired on the H100 (runs
 * that plant faults in every kernel on purpose are left out: no candidate passes there).
 */
const ALL_RUNS = [
  'calibration/run1',
  'calibration/run2',
  'main-1355',
  'calibration/aa-1359',
  'broken',
  'slowed',
  'nightly',
  'push',
  'pr',
  'paired-aa-h100',
  'paired-aa-h100-bursts',
  'paired-aa-h100-hostspin',
  'paired-slow2-h100',
];

/**
 * A run grown to `copies` × its cases: each case again under a new case name (`,rep=k` and a
 * `rep` axis), its samples, verdicts, errors and messages as recorded.
 */
function grown(results: KernelgateResults, copies: number): KernelgateResults {
  const cases = results.cases.flatMap((c) =>
    Array.from({ length: copies }, (_, k) =>
      k === 0 ? c : { ...c, case: `${c.case},rep=${k}`, params: { ...c.params, rep: k } },
    ),
  );
  return { ...results, cases };
}

describe('at 1,000 cases', { timeout: 300_000 }, () => {
  // Fewer resamples keep 1,085 bootstraps a run fast; the sizes do not depend on them.
  const fast: Config = { ...config, compare: { ...config.compare, resamples: 200 } };
  /** Each recorded run, the baseline the action judged it against (none: paired), its kind. */
  const RUNS: [string, string | undefined, 'pr' | 'nightly'][] = [
    ['pr', 'push', 'pr'],
    ['broken', 'main-1355', 'pr'],
    ['slowed', 'main-1355', 'pr'],
    ['nightly', 'main-1355', 'nightly'],
    ['paired-aa-h100-bursts', undefined, 'pr'],
    ['paired-slow2-h100', undefined, 'pr'],
  ];

  it.each(RUNS)(
    '%s (against %s, %s): the comment stays under 65,536 characters',
    (run, base, kind) => {
      const results = grown(recorded(run), 5);
      expect(results.cases.length).toBeGreaterThanOrEqual(1_000);
      const baseline = base ? grown(recorded(base), 5) : undefined;
      const { rendered } = judge(results, baseline, fast, kind, {
        runUrl: 'https://github.com/octo/kernels/actions/runs/42',
        prNumber: 7,
      });
      expect(rendered.comment.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
      // Not even shortened: the comment summarises by variant, so five times the cases is not
      // five times the comment (2.7k-6.3k characters here, 8.4k for the nightly since the changed
      // cases carry their one-line symbol legend); the full report has every case.
      expect(rendered.comment.length).toBeLessThan(9_000);
      expect(rendered.commentLevel).toBe(0);
      expect(rendered.comment).not.toContain("This comment was cut to fit GitHub's");
      expect(rendered.full.length).toBeGreaterThan(rendered.comment.length);
    },
  );
});

describe('the tiers of the recorded runs', () => {
  const REFERENCE: Record<string, string> = { attention: 'sdpa_default', bsr_gemm: 'cublas_dense' };

  it.each(ALL_RUNS)(
    '%s: each kernel graded on its fastest passing candidate against the honest reference, every rung reachable',
    (run) => {
      const tiers = evaluateTiers(recorded(run), config);
      expect(tiers.map((t) => t.kernel).sort()).toEqual(Object.keys(REFERENCE).sort());
      for (const t of tiers) {
        expect(t.problem, `${run} ${t.kernel}`).toBeUndefined();
        expect(t.pinned).toBe(false);
        expect(t.referenceVariant).toBe(REFERENCE[t.kernel]);
        // The graded candidate is the fastest of those that passed on the headline case.
        expect(t.passing.length).toBeGreaterThan(0);
        const fastest = [...t.passing].sort((a, b) => a.medianMs - b.medianMs)[0]!;
        expect(t.variant).toBe(fastest.variant);
        expect(t.medianMs).toBe(fastest.medianMs);
        expect(t.variant).not.toBe(t.referenceVariant);
        // Every rung could be reached on this chip in this run.
        expect(t.ladder.length).toBeGreaterThan(0);
        expect(
          t.ladder.filter((m) => m.reachable === false).map((m) => m.name),
          `${run} ${t.kernel}`,
        ).toEqual([]);
      }
    },
  );
});
