import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { materialiseBase } from '../src/measure/index.js';
import { actionsExec } from '../src/lib/index.js';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  }).trim();

/** A repository with two commits: base (kernel says "base") and head (kernel says "head"). */
function repo() {
  const dir = mkdtempSync(join(tmpdir(), 'kg-base-'));
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'kernel.py'), 'VERSION = "base"\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'base');
  const base = git(dir, 'rev-parse', 'HEAD');
  writeFileSync(join(dir, 'kernel.py'), 'VERSION = "head"\n');
  git(dir, 'commit', '-qam', 'head');
  return { dir, base };
}

describe('the base revision as a git worktree', () => {
  it('checks out the base commit beside the head, and reuses it on the next run', async () => {
    const { dir, base } = repo();
    const lines: string[] = [];
    const got = await materialiseBase(dir, base, actionsExec(), { log: (l) => lines.push(l) });
    expect(got.ok).toBe(true);
    if (!got.ok) return;
    expect(got.base.root).toBe(join(dir, '.kernelgate', 'base'));
    expect(readFileSync(join(got.base.root, 'kernel.py'), 'utf8')).toBe('VERSION = "base"\n');
    expect(readFileSync(join(dir, 'kernel.py'), 'utf8')).toBe('VERSION = "head"\n');
    expect(got.reused).toBe(false);
    const again = await materialiseBase(dir, base, actionsExec());
    expect(again.ok && again.reused).toBe(true);
    expect(lines).toEqual([
      `kernelgate: base revision ${base.slice(0, 12)} checked out in ${join(dir, '.kernelgate', 'base')}`,
    ]);
  });

  it('moves an existing worktree to another base commit', async () => {
    const { dir, base } = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    expect((await materialiseBase(dir, head, actionsExec())).ok).toBe(true);
    const got = await materialiseBase(dir, base, actionsExec());
    expect(got.ok && !got.reused).toBe(true);
    expect(readFileSync(join(dir, '.kernelgate', 'base', 'kernel.py'), 'utf8')).toBe(
      'VERSION = "base"\n',
    );
  });

  it('fetches the base commit when a shallow checkout lacks it', async () => {
    const { dir: origin, base } = repo();
    git(origin, 'config', 'uploadpack.allowAnySHA1InWant', 'true');
    const shallow = mkdtempSync(join(tmpdir(), 'kg-shallow-'));
    git(shallow, 'clone', '-q', '--depth=1', `file://${origin}`, 'ws');
    const ws = join(shallow, 'ws');
    const got = await materialiseBase(ws, base, actionsExec());
    expect(got.ok && got.fetched).toBe(true);
    expect(readFileSync(join(ws, '.kernelgate', 'base', 'kernel.py'), 'utf8')).toBe(
      'VERSION = "base"\n',
    );
  });

  it('names what went wrong instead of throwing', async () => {
    const { dir } = repo();
    expect(await materialiseBase(dir, 'main', actionsExec())).toEqual({
      ok: false,
      reason: "the base commit 'main' is not a 40-character commit SHA",
    });
    const missing = 'f'.repeat(40);
    const got = await materialiseBase(dir, missing, actionsExec());
    expect(got.ok).toBe(false);
    if (got.ok) return;
    expect(got.reason).toMatch(
      /^the base commit ffffffffffff is not in the checkout and `git fetch origin ffffffffffff` failed: .+/,
    );
    const plain = mkdtempSync(join(tmpdir(), 'kg-nogit-'));
    const none = await materialiseBase(plain, missing, actionsExec());
    expect(none.ok).toBe(false);
    if (!none.ok) expect(none.reason).toMatch(new RegExp(`^${plain} is not a git checkout \\(`));
  });
});
