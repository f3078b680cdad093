// The base revision of a pull request, checked out beside the workspace as a git worktree, so that
// the harness can time head and base side by side in one job (paired A/B). It judges nothing.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_GIT_TIMEOUT_S, type Exec, type ExecResult } from '../lib/index.js';

export interface BaseRevision {
  /** the worktree: the base's kernels, kernelgate.yml and sources */
  root: string;
  sha: string;
  ref?: string;
}

export type Materialised =
  | { ok: true; base: BaseRevision; fetched: boolean; reused: boolean }
  | { ok: false; reason: string };

const SHA = /^[0-9a-f]{40}$/;

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}

/** Why a git command failed: its last line, or its deadline when it was stopped at it. */
function why(result: ExecResult, timeoutS: number): string {
  return result.timedOut
    ? `it did not finish within ${timeoutS} s ('git-timeout') and was stopped`
    : lastLine(result.stderr);
}

/**
 * Checks out `sha` as a detached worktree at `dir` (default `<workspace>/.kernelgate/base`),
 * fetching it first when a shallow checkout lacks it. A worktree already at `sha` is reused. Any
 * failure is a reason, never a throw: the caller falls back to the stored baseline and says why.
 * Every git command is stopped at `timeoutS` (default 120, the 'git-timeout' input).
 */
export async function materialiseBase(
  workspace: string,
  sha: string,
  exec: Exec,
  options: { dir?: string; ref?: string; log?: (line: string) => void; timeoutS?: number } = {},
): Promise<Materialised> {
  const log = options.log ?? (() => undefined);
  if (!SHA.test(sha)) {
    return { ok: false, reason: `the base commit '${sha}' is not a 40-character commit SHA` };
  }
  const dir = options.dir ?? join(workspace, '.kernelgate', 'base');
  const timeoutS = options.timeoutS ?? DEFAULT_GIT_TIMEOUT_S;
  const git = (...args: string[]) =>
    exec.run('git', ['-C', workspace, ...args], {
      env: { GIT_TERMINAL_PROMPT: '0' },
      timeoutS,
    });

  const inside = await git('rev-parse', '--is-inside-work-tree');
  if (inside.exitCode !== 0) {
    return {
      ok: false,
      reason: `${workspace} is not a git checkout (${lastLine(inside.stderr) || `git exit ${inside.exitCode}`})`,
    };
  }
  if (existsSync(dir)) {
    const at = await exec.run('git', ['-C', dir, 'rev-parse', 'HEAD'], { timeoutS });
    if (at.exitCode === 0 && at.stdout.trim() === sha) {
      log(`kernelgate: base revision ${sha.slice(0, 12)} already checked out in ${dir}`);
      return {
        ok: true,
        base: withRef({ root: dir, sha }, options.ref),
        fetched: false,
        reused: true,
      };
    }
    await git('worktree', 'remove', '--force', dir);
  }
  await git('worktree', 'prune');

  let fetched = false;
  const has = await git('cat-file', '-e', `${sha}^{commit}`);
  if (has.exitCode !== 0) {
    log(`kernelgate: fetching the base revision ${sha.slice(0, 12)} (the checkout is shallow)`);
    const fetch = await git('fetch', '--no-tags', '--depth=1', 'origin', sha);
    if (fetch.exitCode !== 0) {
      const url = (await git('remote', 'get-url', 'origin')).stdout.trim();
      const from = url === '' ? '' : ` from ${url.replace(/\/\/[^/@\s]*@/, '//***@')}`;
      return {
        ok: false,
        reason: `the base commit ${sha.slice(0, 12)} is not in the checkout and \`git fetch origin ${sha.slice(0, 12)}\`${from} failed: ${why(fetch, timeoutS)}`,
      };
    }
    fetched = true;
  }
  const add = await git('worktree', 'add', '--detach', '--force', dir, sha);
  if (add.exitCode !== 0) {
    return {
      ok: false,
      reason: `\`git worktree add ${dir} ${sha.slice(0, 12)}\` failed: ${why(add, timeoutS)}`,
    };
  }
  log(`kernelgate: base revision ${sha.slice(0, 12)} checked out in ${dir}`);
  return { ok: true, base: withRef({ root: dir, sha }, options.ref), fetched, reused: false };
}

function withRef(base: BaseRevision, ref: string | undefined): BaseRevision {
  return ref === undefined ? base : { ...base, ref };
}
