// `--help` per command from one registry (src/cli/usage.ts), whose usage texts name exactly the
// options each command's parser takes; output paths whose folders are missing or unwritable.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, EXIT_PASS, EXIT_USAGE, runCli } from '../src/cli/index.js';
import { commandSpecs, commandUsage, overview } from '../src/cli/usage.js';
import { capture } from './support/cli-io.js';

const ROOT = join(import.meta.dirname, '..');
const RESULTS = join(import.meta.dirname, 'fixtures', 'results');
const VALID = join(import.meta.dirname, 'fixtures', 'config', 'valid');

describe('kernelgate <command> --help', () => {
  it('the registry lists every command the dispatcher runs, and nothing else', () => {
    expect(
      commandSpecs()
        .map((s) => s.name)
        .sort(),
    ).toEqual(Object.keys(COMMANDS).sort());
  });

  it.each(Object.keys(COMMANDS))('%s --help and -h print its usage alone, exit 0', async (name) => {
    for (const flag of ['--help', '-h']) {
      const { out, io } = capture(ROOT);
      expect(await runCli([name, flag], io)).toBe(EXIT_PASS);
      expect(out.stdout).toBe(commandUsage(name));
      expect(out.stdout.startsWith(`usage: kernelgate ${name}`)).toBe(true);
      expect(out.stderr).toBe('');
    }
  });

  it.each(commandSpecs().map((s) => [s.name, s] as const))(
    "%s's usage names exactly the options its parser takes",
    (_name, spec) => {
      const named = new Set([...spec.usage.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]));
      expect([...named].sort()).toEqual(Object.keys(spec.options).sort());
    },
  );

  it('--help after other options, and `help report`, print the usage too', async () => {
    const { out, io } = capture(ROOT);
    expect(await runCli(['report', '--kind', 'weekly', '--help'], io)).toBe(EXIT_PASS);
    expect(out.stdout).toBe(commandUsage('report'));
    const again = capture(ROOT);
    expect(await runCli(['help', 'report'], again.io)).toBe(EXIT_PASS);
    expect(again.out.stdout).toBe(commandUsage('report'));
  });

  it('kernelgate --help is the overview: one line per command', async () => {
    const { out, io } = capture(ROOT);
    expect(await runCli(['--help'], io)).toBe(EXIT_PASS);
    expect(out.stdout).toBe(overview());
    expect(out.stdout).toContain(
      '  check      check kernelgate.yml and every kernel.yml without a GPU; say what to fix\n',
    );
    expect(out.stdout.split('\n').length).toBeLessThan(25);
  });

  it('a bad option prints that command’s usage, not every command’s', async () => {
    const { out, io } = capture(ROOT);
    expect(await runCli(['export', '--nope'], io)).toBe(EXIT_USAGE);
    expect(out.stderr).toBe(
      `kernelgate export: Unknown option '--nope'\n\n${commandUsage('export')}\n`,
    );
  });
});

describe('output paths', () => {
  it('report --out and export --out make the folders they need', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-out-'));
    const { io } = capture(dir);
    const results = join(RESULTS, 'aa-current.json');
    const args = ['--results', results, '--config', VALID];
    expect(await runCli(['report', ...args, '--out', 'dir/x.md'], io)).toBe(EXIT_PASS);
    expect(readFileSync(join(dir, 'dir', 'x.md'), 'utf8')).toMatch(/^## kernelgate \(fixture\)/);
    const exported = ['--results', results, '--format', 'bmf', '--out', 'a/b/bmf.json'];
    expect(await runCli(['export', ...exported], io)).toBe(EXIT_PASS);
    expect(JSON.parse(readFileSync(join(dir, 'a', 'b', 'bmf.json'), 'utf8'))).toBeTypeOf('object');
  });

  it('dashboard --out site/index.html makes site/', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-out-'));
    const { out, io } = capture(dir);
    const args = ['--results', join(RESULTS, 'aa-current.json'), '--config', VALID];
    expect(await runCli(['dashboard', ...args, '--out', 'site/index.html'], io)).toBe(EXIT_PASS);
    expect(readFileSync(join(dir, 'site', 'index.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    expect(out.stderr).toMatch(/^site\/index\.html: 1 runs on /);
  });

  it('a path through a file is one line naming the path and the reason, exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-out-'));
    writeFileSync(join(dir, 'site'), 'a file, not a folder');
    const { out, io } = capture(dir);
    const args = ['dashboard', '--results', join(RESULTS, 'aa-current.json'), '--config', VALID];
    expect(await runCli([...args, '--out', 'site/index.html'], io)).toBe(EXIT_USAGE);
    expect(out.stderr).toBe(
      `kernelgate dashboard: cannot write site/index.html: EEXIST: file already exists, mkdir '${join(dir, 'site')}'\n`,
    );
  });

  it.skipIf(process.getuid?.() === 0)(
    'an unwritable folder is one line naming the path and the reason, exit 2',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kg-out-'));
      mkdirSync(join(dir, 'locked'));
      chmodSync(join(dir, 'locked'), 0o500);
      const { out, io } = capture(dir);
      const args = ['--results', join(RESULTS, 'aa-current.json'), '--config', VALID];
      const status = await runCli(['report', ...args, '--out', 'locked/site/x.md'], io);
      expect(status).toBe(EXIT_USAGE);
      expect(out.stderr).toBe(
        `kernelgate report: cannot write locked/site/x.md: EACCES: permission denied, mkdir '${join(dir, 'locked', 'site')}'\n`,
      );
    },
  );
});
