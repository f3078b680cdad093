// The recorded GPU runs (H200, 2026-11-21; test/fixtures/recorded/README.md) judged again here,
// so CI exercises real data: the A/A pair has no FASTER or SLOWER case, a planted wrong result
// fails the gate naming kernel, case and error, a planted slowdown is SLOWER, the nightly run
// opened the nightly issue, and kernelgate.yml's noise entries are what `calibrate` gives on
// the calibration runs.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { calibrate } from '../src/judge/index.js';
import { compare } from '../src/judge/index.js';
import { loadConfig } from '../src/config/index.js';
import { gate } from '../src/judge/index.js';
import { loadResults } from '../src/results/index.js';
import { evaluateTiers } from '../src/judge/index.js';

const ROOT = join(import.meta.dirname, '..');
const DIR = join(ROOT, 'test/fixtures/recorded');
const recorded = (run: string) => loadResults(join(DIR, run, 'results.json.gz'));
const config = loadConfig(ROOT);
const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
/** Each recorded run and the baseline the action judged it against on the GPU machine. */
const BASELINE_OF: Record<string, string> = {
  pr: 'push',
  broken: 'main-1355',
  slowed: 'main-1355',
  nightly: 'main-1355',
};
/** The runs `kernelgate calibrate` read for kernelgate.yml: none of them is the A/A pair. */
const CALIBRATION_RUNS = [
  'calibration/run1',
  'calibration/run2',
  'main-1355',
  'calibration/aa-1359',
  'nightly',
];

/** Each run judged once (a bootstrap over 217 cases takes a second or so), shared by the tests. */
const judged = new Map<string, ReturnType<typeof judgeRun>>();
function judgeRun(run: string) {
  const results = recorded(run);
  const comparison = compare(results, recorded(BASELINE_OF[run]!), config);
  const verdict = gate(comparison, evaluateTiers(results, config), results, config);
  const byKey = new Map(comparison.cases.map((c) => [`${c.kernel}/${c.variant}/${c.caseId}`, c]));
  return { comparison, verdict, byKey };
}
function judge(run: string) {
  if (!judged.has(run)) judged.set(run, judgeRun(run));
  return judged.get(run)!;
}

// Judging the four recorded runs takes several seconds on a loaded CI machine.
describe('recorded GPU runs', { timeout: 60_000 }, () => {
  it('each run the action recorded exited as the gate says now', () => {
    for (const run of Object.keys(BASELINE_OF)) {
      const exitStatus = Number(readFileSync(join(DIR, run, 'exit_status'), 'utf8'));
      expect(exitStatus === 0 ? 'pass' : 'fail', run).toBe(judge(run).verdict.verdict);
    }
  });

  it('A/A (push, then a pull request of the same code): no case FASTER or SLOWER', () => {
    const { comparison, verdict } = judge('pr');
    expect(verdict.verdict).toBe('pass');
    expect(comparison.cases.length).toBe(217);
    const changed = comparison.cases.filter((c) => c.perf === 'FASTER' || c.perf === 'SLOWER');
    expect(changed.map((c) => `${c.key}: ${c.perf}`)).toEqual([]);
    expect(comparison.cases.filter((c) => c.perf === 'SAME').length).toBe(194);
    // and the comment the action posted says so
    const comment = gunzipSync(readFileSync(join(DIR, 'pr', 'report.md.gz'))).toString('utf8');
    expect(comment).toContain(
      '- Performance: 🔴 0 slower · 🟢 0 faster · ⚪ 194 same · 🟡 22 ambiguous · 🆕 0 new · ❓ 0 missing',
    );
  });

  it('planted wrong result: the gate fails and names kernel, case and error', () => {
    const { verdict, comparison } = judge('broken');
    expect(verdict.verdict).toBe('fail');
    const failed = comparison.cases.filter((c) => c.correctness === 'FAIL');
    expect(new Set(failed.map((c) => `${c.kernel}/${c.variant}`))).toEqual(
      new Set(['attention/triton_fa2']),
    );
    expect(failed.length).toBe(26);
    expect(verdict.reasons[0]).toMatch(
      new RegExp(
        `^attention/triton_fa2 ${HEADLINE}: correctness FAIL: rel_l2 2e-2 > tol 2e-3; seed 0: rel_l2 2\\.000e-02 > tolerance 2\\.0e-03`,
      ),
    );
  });

  it('planted slowdown: the slowed variant is SLOWER on every headline case, by about 2×', () => {
    const { byKey, verdict, comparison } = judge('slowed');
    expect(verdict.verdict).toBe('pass'); // fail_on_slower is off in kernelgate.yml
    for (const d of ['128', '64']) {
      for (const causal of ['false', 'true']) {
        const c = byKey.get(
          `attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=${d},causal=${causal}`,
        );
        expect(c?.perf).toBe('SLOWER');
        expect(c?.ratio).toBeGreaterThan(1.8);
        expect(c?.ratio).toBeLessThan(2.2);
      }
    }
    const slower = comparison.cases.filter((c) => c.perf === 'SLOWER');
    expect(new Set(slower.map((c) => `${c.kernel}/${c.variant}`))).toEqual(
      new Set(['attention/triton_fa2']),
    );
  });

  it('nightly: the report went to one issue labelled kernelgate-nightly', () => {
    const state = JSON.parse(
      gunzipSync(
        readFileSync(join(DIR, 'standin-state-aa-broken-slowed-nightly.json.gz')),
      ).toString('utf8'),
    ) as {
      violations: unknown[];
      issues: { title: string; labels: string[]; body?: string }[];
    };
    expect(state.violations).toEqual([]);
    const nightly = state.issues.filter((i) => i.labels.includes('kernelgate-nightly'));
    expect(nightly.map((i) => i.title)).toEqual(['kernelgate nightly report']);
    expect(readFileSync(join(DIR, 'nightly', 'exit_status'), 'utf8').trim()).toBe('0');
  });

  it("kernelgate.yml's per-case noise is what calibrate gives on the calibration runs", () => {
    const calibration = calibrate(
      CALIBRATION_RUNS.map((run) => recorded(run)),
      { margin: 2, floorPct: 3, exclude: [] },
    );
    const written = (
      parse(readFileSync(join(ROOT, 'kernelgate.yml'), 'utf8')) as {
        compare: { noise_pct: Record<string, Record<string, number>> };
      }
    ).compare.noise_pct.H200!;
    expect(calibration.model).toBe('H200');
    const perCase = Object.fromEntries(
      Object.entries(written).filter(([key]) => key.split('/').length >= 3),
    );
    expect(perCase).toEqual(
      Object.fromEntries(calibration.entries.map((e) => [e.key, e.noisePct])),
    );
  });
});
