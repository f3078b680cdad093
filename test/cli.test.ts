import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliIn } from './support/cli-io.js';
import {
  COMMANDS,
  EXIT_GATE_FAILED,
  EXIT_PASS,
  EXIT_USAGE,
  RECORDED_RUN,
  runCli,
} from '../src/cli/index.js';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults } from '../src/results/index.js';

const root = join(import.meta.dirname, '..');
const results = join(import.meta.dirname, 'fixtures', 'results');
const validConfig = join(import.meta.dirname, 'fixtures', 'config', 'valid');

const cli = cliIn(root);

describe('kernelgate report', () => {
  it('judges the built-in recorded run by default and passes', async () => {
    const { status, stdout, stderr } = await cli('report');
    expect(status).toBe(EXIT_PASS);
    // The gate passes (fail_on_slower is off) and the title says the regression it let through.
    expect(stdout).toMatch(
      /^## kernelgate: ⚠️ regression: attention\/triton\\_fa2 slower on 26 cases\n/,
    );
    // the recorded paired pull request of the H100 (a planted 2 % slowdown of triton_fa2), judged
    // by its pairs: the slowdown is SLOWER on all 26 of its cases, nothing else moved, and the
    // default policy notes a slower kernel without failing the gate
    expect(stderr).toMatch(
      /^kernelgate: PASS \(217 cases: 216 pass, 0 fail, 0 drift, 0 error\/timeout, 1 skipped; 26 slower, 0 faster, 190 same, 0 ambiguous, 0 new, 0 missing\)/,
    );
    expect(stdout).toContain(
      'Judged: 216 case(s) paired against base `473d1055da7b` in this job (threshold ±1.0 %',
    );
    expect(stdout).toContain('GPU-seconds of each stage (319 s in all)');
    expect(RECORDED_RUN).toEqual({
      results: 'test/fixtures/recorded/paired-slow2-h100/results.json.gz',
    });
  });

  it('exits 1 with the reasons when the gate fails, and writes --out', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kg-cli-')), 'report.md');
    const { status, stdout } = await cli(
      'report',
      '--results',
      join(results, 'drift.json'),
      '--baseline',
      join(results, 'baseline.json'),
      '--config',
      validConfig,
      '--out',
      out,
    );
    expect(status).toBe(EXIT_GATE_FAILED);
    expect(stdout).toMatch(/^kernelgate: FAIL \(36 cases: 35 pass, 0 fail, 1 drift/);
    expect(stdout).toContain(
      '  fail: attention/triton_fa2 dtype=bf16,B=16,H=96,S=4096,D=128,causal=false: correctness DRIFT: rel_l2 7.5e-3',
    );
    expect(readFileSync(out, 'utf8')).toMatch(/^## kernelgate \(fixture\): ❌ fail/);
  });

  it('accepts a kernelgate.yml path as --config and renders the nightly kind', async () => {
    const { status, stdout } = await cli(
      'report',
      '--results',
      join(results, 'aa-current.json'),
      '--config',
      join(validConfig, 'kernelgate.yml'),
      '--kind',
      'nightly',
    );
    expect(status).toBe(EXIT_PASS);
    // exactly the nightly issue's body the action posts: its marker, then the short report
    expect(stdout).toMatch(
      /^<!-- kernelgate:nightly:default -->\n## kernelgate \(fixture\) nightly: ✅ pass/,
    );
    expect(stdout).toContain('No baseline was given: every case is NEW.');
    expect(stdout).not.toContain('### All results');
  });

  it('prints the nightly issue of a recorded H100 night with its trends, from --history', async () => {
    // Run 42 with the five H100 nights before it (runs 32-37, 2026-11-26), as the action reads
    // them from the store: the body is what the action posts for that night (judge() with that
    // history), trends table included; without --history there is no trends table to show.
    const rec = (run: string) => join(root, 'test/fixtures/recorded', run, 'results.json.gz');
    const before = ['run32', 'run34', 'run35', 'run36', 'run37'].map((r) => rec(`nightly-h100-${r}`));
    const args = ['report', '--results', rec('nightly-h100-run42'), '--kind', 'nightly'];
    const withTrends = await cli(...args, ...before.flatMap((f) => ['--history', f]));
    const posted = judge(
      loadResults(rec('nightly-h100-run42')),
      undefined,
      loadConfig(root),
      'nightly',
      undefined,
      before.map((f) => loadResults(f)),
    ).rendered.comment;
    expect(withTrends.stdout).toBe(`<!-- kernelgate:nightly:default -->\n${posted}`);
    expect(withTrends.stdout).toMatch(/\| headline \(graded tonight\) \| trend/);
    const without = await cli(...args);
    expect(without.stdout).not.toMatch(/\| headline \(graded tonight\)/);
    expect(await cli('report', '--history', before[0]!)).toMatchObject({
      status: EXIT_USAGE,
      stderr: expect.stringContaining(
        'kernelgate report: --history is for --kind nightly (its trends): give --kind nightly',
      ),
    });
  });

  const usage: [string, string[], string][] = [
    ['no command', [], 'usage: kernelgate <command>'],
    ['an unknown command', ['judge'], 'kernelgate: unknown command "judge"'],
    [
      'an unknown option',
      ['report', '--result', 'x.json'],
      "kernelgate report: Unknown option '--result'",
    ],
    [
      'a bad kind',
      ['report', '--kind', 'weekly'],
      'kernelgate report: --kind must be pr or nightly (got "weekly")',
    ],
    [
      'a missing results file',
      ['report', '--results', 'nope.json'],
      `kernelgate report: ${join(root, 'nope.json')}: no such results file`,
    ],
    [
      'a missing config',
      ['report', '--config', 'nowhere'],
      'kernelgate report: --config: no such file or folder: nowhere',
    ],
  ];

  it.each(usage)(
    'exits 2 on %s, with a clear message and no stack trace',
    async (_what, argv, message) => {
      const { status, stderr } = await cli(...argv);
      expect(status).toBe(EXIT_USAGE);
      expect(stderr).toContain(message);
      expect(stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('exits 2 on an invalid results file, naming the field', async () => {
    const bad = JSON.parse(readFileSync(join(results, 'baseline.json'), 'utf8')) as {
      cases: { status: string }[];
    };
    (bad.cases[2] as { status: string }).status = 'great';
    const path = join(mkdtempSync(join(tmpdir(), 'kg-cli-')), 'results.json');
    writeFileSync(path, JSON.stringify(bad));
    const { status, stderr } = await cli('report', '--results', path, '--config', validConfig);
    expect(status).toBe(EXIT_USAGE);
    expect(stderr).toBe(
      `kernelgate report: ${path}: cases[2].status (attention/sdpa_flash dtype=fp16,B=16,H=96,S=4096,D=128,causal=false) must be one of "ok", "fail", "error", "timeout", "skipped" (got "great")\n`,
    );
  });

  it('prints help on --help and exits 0', async () => {
    const { status, stdout } = await cli('--help');
    expect(status).toBe(EXIT_PASS);
    expect(stdout).toContain(
      '  report     judge a results file against a baseline, render the report, print the verdict\n',
    );
    const report = await cli('report', '--help');
    expect(report.status).toBe(EXIT_PASS);
    expect(report.stdout).toMatch(/^usage: kernelgate report \[--results FILE \| --demo\]/);
  });

  it("refuses to judge kernelgate's demo in a user's repository without --results", async () => {
    let stderr = '';
    const io = { stdout: () => undefined, stderr: (t: string) => (stderr += t), cwd: validConfig };
    expect(await runCli(['report'], io)).toBe(EXIT_USAGE);
    expect(stderr).toBe(
      `kernelgate report: no --results: pass the results file to judge (a run's, e.g. --results .kernelgate/report/results.json); ${validConfig} is not kernelgate's own checkout, so the built-in demo is not judged under its kernelgate.yml (--demo shows it)\n`,
    );
  });

  it("--demo there judges the recorded run with kernelgate's own configuration", async () => {
    let stdout = '';
    const io = { stdout: (t: string) => (stdout += t), stderr: () => undefined, cwd: validConfig };
    expect(await runCli(['report', '--demo'], io)).toBe(EXIT_PASS);
    // kernelgate's title, not the fixture's "kernelgate (fixture)"
    expect(stdout).toMatch(
      /^## kernelgate: ⚠️ regression: attention\/triton\\_fa2 slower on 26 cases\n/,
    );
  });

  it('is a dispatcher the other subcommands can join', () => {
    expect(Object.keys(COMMANDS)).toContain('report');
  });
});
