// A pull request's two sides on disk, for the identity tests: `files` committed as the base, then
// `change` committed on top as the head, and the base checked out as the worktree a paired run
// makes (materialiseBase).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { actionsExec } from '../../src/lib/index.js';
import { materialiseBase } from '../../src/measure/index.js';

export function git(dir: string, ...args: string[]) {
  return execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    encoding: 'utf8',
  }).trim();
}

export function write(root: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** The head's checkout (`ws`) and the base's worktree (`baseRoot`). */
export async function prCheckouts(
  files: Record<string, string>,
  change: Record<string, string>,
  prefix = 'kg-identity-',
): Promise<{ ws: string; baseRoot: string }> {
  const ws = mkdtempSync(join(tmpdir(), prefix));
  write(ws, files);
  writeFileSync(join(ws, '.gitignore'), '.kernelgate/\n');
  git(ws, 'init', '-q', '-b', 'main');
  git(ws, 'add', '-A');
  git(ws, 'commit', '-qm', 'base');
  const sha = git(ws, 'rev-parse', 'HEAD');
  write(ws, change);
  git(ws, 'add', '-A');
  git(ws, 'commit', '-qm', 'head', '--allow-empty');
  const got = await materialiseBase(ws, sha, actionsExec());
  if (!got.ok) throw new Error(got.reason);
  return { ws, baseRoot: got.base.root };
}
