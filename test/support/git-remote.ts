// A real git remote on disk for the history tests: a bare repository that keeps a reflog of every
// update of every ref (so a test can prove that no update was forced) and serves partial clones,
// as GitHub does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import type { KernelgateResults } from '../../src/results/index.js';

export function git(args: string[], cwd?: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function bareRemote(): { dir: string; remote: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kg-remote-'));
  const remote = join(dir, 'remote.git');
  git(['init', '--quiet', '--bare', remote]);
  git(['--git-dir', remote, 'config', 'core.logAllRefUpdates', 'always']);
  git(['--git-dir', remote, 'config', 'uploadpack.allowFilter', 'true']);
  git(['--git-dir', remote, 'config', 'uploadpack.allowAnySHA1InWant', 'true']);
  return { dir, remote };
}

/** Every update of the remote's branch, oldest first: [old, new] commit ids. */
export function reflog(remote: string, branch: string): [string, string][] {
  const text = readFileSync(join(remote, 'logs', 'refs', 'heads', branch), 'utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [old = '', now = ''] = l.split(' ');
      return [old, now];
    });
}

/** True when every update of the branch was a fast-forward (the old tip an ancestor of the new). */
export function neverForced(remote: string, branch: string): boolean {
  const zero = '0'.repeat(40);
  return reflog(remote, branch).every(([old, now]) => {
    if (old === zero) return true;
    try {
      git(['--git-dir', remote, 'merge-base', '--is-ancestor', old, now]);
      return true;
    } catch {
      return false;
    }
  });
}

/** path → blob id of every file on the branch. */
export function treeOf(remote: string, branch: string): Map<string, string> {
  const out = git(['--git-dir', remote, 'ls-tree', '-r', `refs/heads/${branch}`]);
  return new Map(
    out
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [meta = '', path = ''] = l.split('\t');
        return [path, meta.split(' ')[2] ?? ''];
      }),
  );
}

/** Commits a file onto the branch by hand (a corrupt or foreign record, as a person might). */
export function commitFile(remote: string, branch: string, path: string, text: string): void {
  const work = mkdtempSync(join(tmpdir(), 'kg-hand-'));
  git(['clone', '--quiet', '--branch', branch, remote, work]);
  execFileSync('mkdir', ['-p', join(work, path, '..')]);
  execFileSync('sh', ['-c', 'cat > "$1"', 'sh', join(work, path)], { input: text });
  git(['add', path], work);
  git(['commit', '--quiet', '-m', `by hand: ${path}`], work);
  git(['push', '--quiet', 'origin', branch], work);
}

/** A recorded run re-dated and re-committed, as another trusted run of the same code. */
export function rerun(
  results: KernelgateResults,
  startedAt: string,
  sha: string,
  id?: string,
): KernelgateResults {
  return {
    ...results,
    run: { ...results.run, started_at: startedAt, git_sha: sha, ...(id ? { id } : {}) },
  };
}

/**
 * A git server that has stalled: it accepts every connection and never answers, as a remote whose
 * server hangs does (git itself waits for ever). `url(path)` is a git:// address on it.
 */
export async function stalledGitServer(): Promise<{
  url: (path: string) => string;
  connections: () => number;
  close: () => Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `git://127.0.0.1:${port}/${path}`,
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
