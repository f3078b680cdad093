// The recorded GPU runs (H200, 2026-11-21; test/fixtures/recorded/README.md) judged again here:
// CI exercises the real data — a planted wrong result fails the gate naming kernel, case and
// error; a planted slowdown is SLOWER; the stored comments match what kernelgate renders now.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import { loadConfig } from '../src/config.js';
import { gate } from '../src/gate.js';
import { loadResults } from '../src/results.js';
import { evaluateTiers } from '../src/tiers.js';

const ROOT = join(import.meta.dirname, '..');
const recorded = (run: string) =>
  loadResults(join(ROOT, 'test/fixtures/recorded', run, 'results.json'));
const config = loadConfig(ROOT);
const push = recorded('push');
const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

function judge(run: string) {
  const results = recorded(run);
  const comparison = compare(results, push, config);
  const verdict = gate(comparison, evaluateTiers(results, config), results, config);
  const byKey = new Map(comparison.cases.map((c) => [`${c.kernel}/${c.variant}/${c.caseId}`, c]));
  return { comparison, verdict, byKey };
}

describe('recorded GPU runs', () => {
  it('the run the action recorded exited as the gate says now', () => {
    for (const run of ['pr', 'broken', 'slowed']) {
      const exitStatus = Number(
        readFileSync(join(ROOT, 'test/fixtures/recorded', run, 'exit_status'), 'utf8'),
      );
      expect(exitStatus === 0 ? 'pass' : 'fail', run).toBe(judge(run).verdict.verdict);
    }
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
    const { byKey, verdict } = judge('slowed');
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
  });

  it('A/A: no case of a millisecond or more is FASTER or SLOWER', () => {
    const { comparison } = judge('pr');
    const changed = comparison.cases.filter(
      (c) => (c.perf === 'FASTER' || c.perf === 'SLOWER') && (c.baselineMedianMs ?? 0) >= 1,
    );
    expect(changed.map((c) => `${c.kernel}/${c.variant}`)).toEqual([]);
  });
});
