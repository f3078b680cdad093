// SAME by identity (issue 27): a pull request's case whose variant is identical in base and head
// (results cases[].identical) was verified, not timed. The judge calls it SAME with the note, the
// coverage gate counts it, the report says so per case, in the Judged line and in the time line;
// and only a pull request's run ever skips (push and nightly runs keep timing everything).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.js';
import { compare, coverage, evaluateTiers, gate, IDENTICAL_NOTE } from '../src/judge/index.js';
import { skipsIdentical, type FullRunOptions } from '../src/pipeline/index.js';
import { renderReport, stagesLine } from '../src/report/index.js';
import { loadResults, type KernelgateResults } from '../src/results/index.js';
import { caseKey } from '../src/judge/index.js';
import { pair, pairedRun } from './support/paired.js';

const load = (name: string) => loadResults(join(import.meta.dirname, 'fixtures', 'results', name));
const config = loadConfig(join(import.meta.dirname, 'fixtures', 'config', 'valid'));
const baseline = load('baseline.json');

/** The baseline fixture as a PR's paired run: triton_fa2 identical (untimed), the rest paired ×1.0. */
function identicalRun(): KernelgateResults {
  const doc = pairedRun(baseline);
  for (const c of doc.cases) {
    if (c.status !== 'ok' || !c.timing) continue;
    if (c.variant === 'triton_fa2') {
      delete c.timing;
      delete c.throughput;
      c.identical = { reason: 'identical build and sources' };
    } else {
      pair(doc, caseKey(c.kernel, c.variant, c.case), 1.0);
    }
  }
  doc.run.stage_seconds = { build: 2, harness: 40, bench: 30 };
  return doc;
}

function judged(results: KernelgateResults, cfg: Config = config) {
  const comparison = compare(results, baseline, cfg);
  const tiers = evaluateTiers(results, cfg);
  return { comparison, tiers, gate: gate(comparison, tiers, results, cfg) };
}

describe('SAME by identity', () => {
  it('judges an identical case SAME with the note, and counts it as covered', () => {
    const results = identicalRun();
    const identical = results.cases.filter((c) => c.identical !== undefined);
    expect(identical).toHaveLength(5);
    const { comparison, gate: g } = judged(results);
    for (const c of comparison.cases.filter((x) => x.variant === 'triton_fa2')) {
      expect(c).toMatchObject({
        perf: 'SAME',
        method: 'identical',
        perfNote: 'identical build and sources',
        correctness: 'PASS',
      });
      expect(c.ratio).toBeUndefined();
    }
    expect(IDENTICAL_NOTE).toBe('identical build and sources');
    expect(comparison.paired?.identical).toBe(5);
    expect(coverage(results, config).problem).toBeUndefined();
    expect(g.verdict).toBe('pass');
    expect(g.reasons).toEqual([]);
    expect(g.counts.untimed).toBe(0);
    // the A/A controls stay timed and paired
    expect(comparison.cases.find((c) => c.variant === 'sdpa_flash')?.method).toBe('paired');
  });

  it('an identical case that failed its verification is a FAIL, not SAME', () => {
    const results = identicalRun();
    const c = results.cases.find((x) => x.variant === 'triton_fa2')!;
    c.status = 'fail';
    c.correctness = { ...c.correctness!, status: 'FAIL', message: 'rel_l2 3e-1 > tol 2e-3' };
    const { comparison, gate: g } = judged(results);
    const judgedCase = comparison.cases.find((x) => x.key === caseKey(c.kernel, c.variant, c.case));
    expect(judgedCase?.correctness).toBe('FAIL');
    expect(judgedCase?.perf).toBe('UNTIMED');
    expect(g.verdict).toBe('fail');
  });

  it('the report says it per case, in the Judged line and in the time line', () => {
    const results = identicalRun();
    const { full } = renderReport({ kind: 'pr', results, baseline, config, ...judged(results) });
    // the timings' row: SAME with no interval (n/a); the note under the table says why, and the
    // correctness table that every case passed
    // (cells keep their spaces from breaking: no-break spaces, read here as spaces)
    const lines = full
      .slice(full.indexOf('### All results'))
      .replace(/\u00a0/g, ' ')
      .split('\n');
    const headline = 'dtype=fp16, B=16, H=96, S=4096, D=128, causal=false';
    expect(lines).toContain(`| ${headline} | triton\\_fa2 | | ⚪ SAME | | n/a | | |`);
    expect(lines).toContain(`- triton\\_fa2 · ${headline}: identical build and sources`);
    expect(lines.find((l) => l.startsWith('| triton\\_fa2 | 5 |'))).toContain('| ✅ 5 |');
    // written before run.verify_identical (no identical.verified): every seed
    expect(full).toContain(
      ' 5 SAME by identity: identical build and sources in base and head, not timed, verified on every seed.',
    );
    expect(stagesLine(results)).toBe(
      'GPU-seconds of each stage (42 s in all): build 2 s · harness 40 s (timing 30 s). Identity skipped the timing of 5 variant-cases (identical build and sources in base and head: verified, not timed), the GPU-seconds it saved unknown: no stored run to price it.',
    );
    // the report prices it on its stored run (test/identity-cost.test.ts: on recorded runs)
    expect(full).toContain(
      'Identity skipped the timing of 5 variant-cases (identical build and sources in base and head: verified, not timed), about ',
    );
    // a run with no identical case says nothing of it
    expect(stagesLine({ ...results, cases: baseline.cases })).not.toContain('Identity');
  });
});

describe('the Judged line says how the identical variants were verified (run.verify_identical)', () => {
  const judgedLine = (results: KernelgateResults) => {
    const { full } = renderReport({ kind: 'pr', results, baseline, config, ...judged(results) });
    return full.split('\n').find((l) => l.startsWith('Judged: '))!;
  };
  const verifiedAs = (how: (i: number) => 'first_seed' | 'all') => {
    const results = identicalRun();
    results.cases
      .filter((c) => c.identical !== undefined)
      .forEach(
        (c, i) => (c.identical = { reason: 'identical build and sources', verified: how(i) }),
      );
    return results;
  };

  it('first_seed: on the first seed only, and its tails', () => {
    const results = verifiedAs(() => 'first_seed');
    expect(judgedLine(results)).toContain(
      " 5 SAME by identity: identical build and sources in base and head, not timed, verified on the first seed only (`run.verify_identical: first_seed`: their code is the base's, verified on every seed on its push).",
    );
    const tail = { kernel: 'attention', variant: 'triton_fa2', params: {}, status: 'ok' as const };
    results.tails = [
      {
        ...tail,
        case: 'S=7',
        identical: { reason: 'identical build and sources', verified: 'first_seed' },
      },
      {
        ...tail,
        case: 'S=100',
        identical: { reason: 'identical build and sources', verified: 'first_seed' },
      },
      { ...tail, variant: 'sdpa_flash', case: 'S=7' },
    ];
    expect(judgedLine(results)).toContain(
      'verified on every seed on its push); 2 tail cases of theirs on the first seed only too.',
    );
  });

  it('all: on every seed', () => {
    expect(judgedLine(verifiedAs(() => 'all'))).toContain(
      ' 5 SAME by identity: identical build and sources in base and head, not timed, verified on every seed.',
    );
  });

  it('names the references left untimed because only the harness differs, and notes each row', () => {
    const results = verifiedAs(() => 'first_seed');
    const only =
      "a reference whose only difference is the harness, which its kernel's A/A control measures";
    results.cases.filter((c) => c.identical !== undefined)[0]!.identical!.reason = only;
    expect(judgedLine(results)).toContain(
      "verified on every seed on its push); 1 of them references whose only difference is the harness, which their kernel's A/A control (timed) measures.",
    );
    const { comparison } = judged(results);
    expect(comparison.cases.filter((c) => c.perfNote === only)).toMatchObject([
      { perf: 'SAME', method: 'identical' },
    ]);
  });

  it('leads with the harness when every untimed reference differs from the base in it alone', () => {
    const results = verifiedAs(() => 'first_seed');
    for (const c of results.cases.filter((c) => c.identical !== undefined))
      c.identical!.reason =
        "a reference whose only difference is the harness, which its kernel's A/A control measures";
    const line = judgedLine(results);
    expect(line).toContain(
      " 5 SAME by identity: references whose only difference from the base is the harness, which their kernel's A/A control (timed) measures, not timed, verified on the first seed only",
    );
    expect(line).not.toContain('identical build and sources');
    expect(line).not.toContain('of them references');
  });

  it('both in one document (shards of two configurations): each counted', () => {
    expect(judgedLine(verifiedAs((i) => (i < 2 ? 'first_seed' : 'all')))).toContain(
      ' 5 SAME by identity: identical build and sources in base and head, not timed, verified on the first seed only (2) or on every seed (3).',
    );
  });
});

describe('which runs skip identical variants', () => {
  const options = (over: Partial<FullRunOptions>): FullRunOptions =>
    ({ config, mode: 'pr', saveBaseline: false, ...over }) as FullRunOptions;
  const off: Config = { ...config, run: { ...config.run, skipIdentical: false } };

  it('a pull request does, as run.skip_identical says (default true)', () => {
    expect(config.run.skipIdentical).toBe(true);
    expect(skipsIdentical(options({}))).toBe(true);
    expect(skipsIdentical(options({ config: off }))).toBe(false);
  });

  it('a push and a nightly never do: they are history and time everything', () => {
    expect(skipsIdentical(options({ mode: 'push', saveBaseline: true }))).toBe(false);
    expect(skipsIdentical(options({ mode: 'push' }))).toBe(false);
    expect(skipsIdentical(options({ mode: 'schedule', pairedWithLastGood: true }))).toBe(false);
  });

  it("the CLI's --kind pr asks for it, but never for a run it may store", () => {
    expect(skipsIdentical(options({ mode: 'push', skipIdentical: true }))).toBe(true);
    expect(skipsIdentical(options({ mode: 'push', skipIdentical: true, saveBaseline: true }))).toBe(
      false,
    );
    expect(skipsIdentical(options({ mode: 'pr', skipIdentical: false }))).toBe(false);
  });
});

/** A kernelgate.yml of `yml` in a fresh folder: () => its loaded configuration. */
const loadYml = (yml: string) => {
  const dir = mkdtempSync(join(tmpdir(), 'kg-run-options-'));
  writeFileSync(join(dir, 'kernelgate.yml'), yml);
  return () => loadConfig(dir);
};

describe('run.skip_identical in kernelgate.yml', () => {
  it('reads the switch', () => {
    expect(loadYml('run: { skip_identical: false }\n')().run.skipIdentical).toBe(false);
    expect(loadYml('report: { title: x }\n')().run.skipIdentical).toBe(true);
  });

  it('names the file, the field and the value of a bad one', () => {
    expect(loadYml('run: { skip_identical: "no" }\n')).toThrow(
      'kernelgate.yml: run.skip_identical must be boolean (got "no")',
    );
    expect(loadYml('run: { skip: true }\n')).toThrow(
      'kernelgate.yml: run.skip is not a known field (known: skip_identical, verify_identical, time_control)',
    );
  });
});

describe('run.verify_identical in kernelgate.yml', () => {
  it('reads first_seed (the default) and all', () => {
    expect(loadYml('report: { title: x }\n')().run.verifyIdentical).toBe('first_seed');
    expect(loadYml('run: { verify_identical: all }\n')().run.verifyIdentical).toBe('all');
    expect(loadYml('run: { verify_identical: first_seed }\n')().run.verifyIdentical).toBe(
      'first_seed',
    );
  });

  it('names the file, the field and the value of a bad one', () => {
    expect(loadYml('run: { verify_identical: every }\n')).toThrow(
      'kernelgate.yml: run.verify_identical must be one of "first_seed", "all" (got "every")',
    );
    expect(loadYml('run: { verify_identical: true }\n')).toThrow(
      'kernelgate.yml: run.verify_identical must be one of "first_seed", "all" (got true)',
    );
  });
});

describe('run.time_control in kernelgate.yml', () => {
  it('reads headline (the default) and every_case', () => {
    expect(loadYml('report: { title: x }\n')().run.timeControl).toBe('headline');
    expect(loadYml('run: { time_control: every_case }\n')().run.timeControl).toBe('every_case');
  });

  it('names the file, the field and the value of a bad one', () => {
    expect(loadYml('run: { time_control: never }\n')).toThrow(
      'kernelgate.yml: run.time_control must be one of "headline", "every_case" (got "never")',
    );
  });
});
