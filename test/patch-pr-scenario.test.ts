// scripts/gpu-e2e.sh's `patch-pr` scenario: a pull request whose base is the packed tree without
// the change KG_PR_PATCH describes and whose head is the tree as packed. patch_commits() is taken
// from the script itself and run by bash in a scratch repository.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

function patchCommits(): string {
  const script = readFileSync('scripts/gpu-e2e.sh', 'utf8');
  const m = /\npatch_commits\(\) \{\n[\s\S]*?\n\}\n/.exec(script);
  if (!m) throw new Error('scripts/gpu-e2e.sh: patch_commits not found');
  return m[0];
}

function git(root: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args],
    {
      encoding: 'utf8',
    },
  ).trim();
}

/** Runs patch_commits with root and KG_PR_PATCH set; its status, stdout and stderr. */
function run(root: string, patch: string | undefined) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  if (patch !== undefined) env.KG_PR_PATCH = patch;
  return spawnSync(
    'bash',
    [
      '--norc',
      '--noprofile',
      '-c',
      `root=${JSON.stringify(root)}\n${patchCommits()}\npatch_commits`,
    ],
    {
      env,
      encoding: 'utf8',
    },
  );
}

describe('gpu-e2e.sh patch-pr', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'kg-patch-pr-'));
    git(root, 'init', '-q');
    writeFileSync(path.join(root, 'k.cu'), '#define KG_X 0\nint a;\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'old');
    writeFileSync(path.join(root, 'k.cu'), '#define KG_X 1\nint a;\n');
    writeFileSync(path.join(root, 'change.patch'), git(root, 'diff') + '\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'new default and its patch');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('makes the base the tree without the change and the head the tree as packed', () => {
    const packed = git(root, 'rev-parse', 'HEAD^{tree}');
    const r = run(root, 'change.patch');
    expect(r.status, r.stderr).toBe(0);
    const [base = '', head = ''] = r.stdout.trim().split(' ');
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    expect(git(root, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(root, 'rev-parse', `${head}^`)).toBe(base);
    expect(git(root, 'show', `${base}:k.cu`)).toBe('#define KG_X 0\nint a;');
    expect(git(root, 'rev-parse', `${head}^{tree}`)).toBe(packed);
    expect(git(root, 'log', '-1', '--format=%s', base)).toBe('patch-pr base: without change.patch');
  });

  it('refuses to run without KG_PR_PATCH', () => {
    const r = run(root, undefined);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('patch-pr: set KG_PR_PATCH to a git diff relative to the root');
  });

  it('names the missing patch file', () => {
    const r = run(root, 'nope.patch');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`patch-pr: KG_PR_PATCH: no such file: ${root}/nope.patch`);
  });

  it('says so when the change is not in the tree, and commits nothing', () => {
    const before = git(root, 'rev-parse', 'HEAD');
    writeFileSync(path.join(root, 'k.cu'), '#define KG_X 2\nint a;\n');
    git(root, 'commit', '-qam', 'something else');
    const r = run(root, 'change.patch');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      `patch-pr: ${root}/change.patch does not come out of the tree (git apply -R)`,
    );
    expect(git(root, 'rev-parse', 'HEAD^')).toBe(before);
  });
});
