// scripts/release.mjs in a scratch repository: its checks, its dry run, and a real run (with
// stand-in test and build commands) that tags vX.Y.Z and moves the major tag.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';

const SCRIPT = resolve('scripts/release.mjs');
const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'release test',
  GIT_AUTHOR_EMAIL: 'release@test.invalid',
  GIT_COMMITTER_NAME: 'release test',
  GIT_COMMITTER_EMAIL: 'release@test.invalid',
  GIT_CONFIG_GLOBAL: '/dev/null',
  KERNELGATE_RELEASE_TEST_CMD: 'true',
  KERNELGATE_RELEASE_BUILD_CMD: 'true',
};
let repo = '';
const listFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f));

function sh(cmd: string, args: string[], env: NodeJS.ProcessEnv = ENV) {
  const r = spawnSync(cmd, args, { cwd: repo, env, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const git = (...args: string[]) => sh('git', args).out.trim();
const release = (args: string[], env: NodeJS.ProcessEnv = ENV) =>
  sh(process.execPath, [join(repo, 'scripts/release.mjs'), ...args], env);

function commit(version: string, message: string) {
  writeFileSync(join(repo, 'package.json'), JSON.stringify({ name: 'kg', version }) + '\n');
  git('add', '.');
  git('commit', '-q', '-m', message);
}

beforeEach(() => {
  repo = mkdtempSync(join(tmpdir(), 'kg-release-'));
  mkdirSync(join(repo, 'scripts'));
  copyFileSync(SCRIPT, join(repo, 'scripts/release.mjs'));
  git('init', '-q', '-b', 'main');
  commit('0.1.0', 'first');
  git('tag', '-a', 'v0.1.0', '-m', 'v0.1.0');
  git('tag', 'v0', 'v0.1.0^{commit}');
  commit('0.2.0', 'second');
});

describe('scripts/release.mjs', () => {
  it('--dry-run checks, prints every step and changes nothing', () => {
    const before = git('tag', '--list');
    const r = release(['0.2.0', '--dry-run']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const head = git('rev-parse', 'HEAD');
    const old = git('rev-parse', '--short', 'v0.1.0^{commit}');
    expect(r.out).toBe(
      `release v0.2.0 of ${head.slice(0, 7)} (dry run: nothing is run)\n` +
        '==> tests: true\n' +
        '==> dist/ rebuilt equals the committed dist/: true\n' +
        `==> tag v0.2.0: git tag -a v0.2.0 -m "kernelgate v0.2.0" ${head}\n` +
        `==> move v0 (${old} -> ${head.slice(0, 7)}): git tag -f v0 v0.2.0^{commit}\n`,
    );
    expect(git('tag', '--list')).toBe(before);
  });

  it('tags vX.Y.Z and moves the major tag to it', () => {
    const r = release([]);
    expect(r.code).toBe(0);
    const head = git('rev-parse', 'HEAD');
    expect(git('rev-parse', 'v0.2.0^{commit}')).toBe(head);
    expect(git('rev-parse', 'v0^{commit}')).toBe(head);
    expect(git('cat-file', '-t', 'v0.2.0')).toBe('tag');
    expect(r.out).toContain(
      'tagged; publish with: git push origin v0.2.0 && git push --force origin v0',
    );
  });

  it('refuses a dirty tree, naming the files', () => {
    writeFileSync(join(repo, 'stray.txt'), 'x');
    const r = release(['--dry-run']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'release: the working tree is not clean; commit or remove first:\n?? stray.txt\n',
    );
  });

  it('refuses a version that package.json does not state', () => {
    const r = release(['0.3.0', '--dry-run']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'release: package.json says version 0.2.0, not 0.3.0; commit the bump first\n',
    );
    expect(release(['0.2', '--dry-run']).err).toBe('release: version "0.2" is not X.Y.Z\n');
  });

  it('refuses a tag that exists', () => {
    git('tag', 'v0.2.0');
    const r = release(['--dry-run']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^release: tag v0\.2\.0 exists already \([0-9a-f]{7,}\)\n$/);
  });

  it('stops before tagging when the tests fail', () => {
    const r = release([], { ...ENV, KERNELGATE_RELEASE_TEST_CMD: 'false' });
    expect(r.code).toBe(1);
    expect(r.err).toBe('release: tests failed: false\n');
    expect(git('tag', '--list')).toBe('v0\nv0.1.0');
  });
});

describe('the uses: line', () => {
  it('is the same everywhere a workflow names kernelgate', () => {
    const files = ['README.md', 'action.yml', ...listFiles('docs'), ...listFiles('examples')];
    const lines = new Set<string>();
    for (const file of files.filter((f) => /\.(md|ya?ml)$/.test(f))) {
      for (const m of readFileSync(file, 'utf8').matchAll(
        /uses:\s*([\w.-]+\/kernelgate@[\w.-]+)/g,
      )) {
        lines.add(m[1]!);
      }
    }
    expect([...lines]).toEqual(['kernelgate/kernelgate@v0']);
  });
});
