// The data branch's git side (src/history/branch-store.ts): a local bare repository that is a
// partial clone of the data branch, its tip fetched with its trees and no blobs, and the blobs of
// the records asked for fetched in one batch.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_GIT_TIMEOUT_S, type Exec, type ExecResult } from '../lib/index.js';
import { StoreError } from '../store/index.js';

/** The local name of the remote inside the cache repository, and where its tip is kept. */
export const REMOTE = 'kgdata';
const TIP_REF = 'refs/kernelgate/tip';

/** What the git side needs of the store's options. */
export interface BranchGitOptions {
  remote: string;
  cacheDir: string;
  exec: Exec;
  gitEnv?: Record<string, string>;
  /** each git command's deadline in seconds (default DEFAULT_GIT_TIMEOUT_S) */
  timeoutS?: number;
}

/** The cache repository of one data branch, and how to run git in it. */
export interface BranchGit {
  dataBranch: string;
  gitDir: string;
  /** "branch kernelgate-data of <remote>", for messages (never with credentials) */
  where: string;
  /** every message's start */
  prefix: string;
  exec: Exec;
  remote: string;
  /** each git command's deadline, in seconds */
  timeoutS: number;
  /** git in the cache repository, as kernelgate (author and committer), within timeoutS */
  run(args: string[], env?: Record<string, string>): Promise<ExecResult>;
  /** the same, its output; a failure throws a StoreError with git's reason */
  ok(args: string[], env?: Record<string, string>): Promise<string>;
  /** the cache repository is made and configured */
  ready: boolean;
}

/** A remote as shown in messages: never with credentials. */
export function showRemote(remote: string): string {
  return remote.replace(/\/\/[^/@]*@/, '//***@');
}

/** What a git command stopped at its deadline says, as its own `fatal:` line would. */
export function gitTimedOut(command: string, timeoutS: number): string {
  return `git ${command} did not finish within ${timeoutS} s ('git-timeout') and was stopped`;
}

/** user:password@ or token@ in a URL git printed: never shown. */
const CREDENTIALS = /\/\/[^/@\s]*@/g;

/**
 * git's own explanation: its first fatal/error line, else its last line; for a command stopped at
 * its deadline (BranchGit.run), the deadline.
 */
export function gitReason(result: ExecResult): string {
  const lines = result.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const fatal = result.timedOut ? lines[0] : lines.find((l) => /^(fatal|error):/.test(l));
  return (fatal ?? lines.at(-1) ?? `git exited with status ${result.exitCode}`).replace(
    CREDENTIALS,
    '//***@',
  );
}

/**
 * Why the server refused a push, in its own words: git's `remote:` lines (a ruleset's `GH013:
 * Repository rule violations found for …`, a pre-receive hook's reason) and the ref's status from
 * `--porcelain` (`[remote rejected] (push declined due to repository rule violations)`).
 * Undefined when the server said nothing: then git's own line (gitReason) is the reason.
 */
export function pushRefusal(result: ExecResult): string | undefined {
  const said = result.stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => /^remote:\s*\S/.test(l));
  if (said.length === 0) return undefined;
  const status = /^!\t[^\t]*\t(.*)$/m.exec(result.stdout)?.[1]?.trim();
  const head = status ? `git push was refused: ${status}` : 'git push was refused';
  return `${head}. The server said:\n${said.join('\n')}`.replace(CREDENTIALS, '//***@');
}

/** git's `remote:` lines left out: what the local git said, for telling a lost race. */
export function localLines(result: ExecResult): string {
  return `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((l) => !l.startsWith('remote:'))
    .join('\n');
}

export function branchGit(options: BranchGitOptions, dataBranch: string): BranchGit {
  const gitDir = options.cacheDir;
  const prefix = 'kernelgate history';
  const timeoutS = options.timeoutS ?? DEFAULT_GIT_TIMEOUT_S;
  const run = async (args: string[], env: Record<string, string> = {}) => {
    const result = await options.exec.run('git', ['--git-dir', gitDir, ...args], {
      env: {
        GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: 'kernelgate',
        GIT_AUTHOR_EMAIL: 'kernelgate@users.noreply.github.com',
        GIT_COMMITTER_NAME: 'kernelgate',
        GIT_COMMITTER_EMAIL: 'kernelgate@users.noreply.github.com',
        ...options.gitEnv,
        ...env,
      },
      timeoutS,
    });
    if (!result.timedOut) return result;
    // The deadline's reason on the first line, where gitReason() looks: a stalled server says
    // nothing.
    const command = args.find((a) => /^[a-z][a-z-]*$/.test(a)) ?? 'git';
    return { ...result, stderr: `${gitTimedOut(command, timeoutS)}\n${result.stderr}` };
  };
  return {
    dataBranch,
    gitDir,
    where: `branch ${dataBranch} of ${showRemote(options.remote)}`,
    prefix,
    exec: options.exec,
    remote: options.remote,
    timeoutS,
    run,
    ok: async (args, env) => {
      const result = await run(args, env);
      if (result.exitCode !== 0) {
        throw new StoreError(`${prefix}: git ${args[0]} failed in ${gitDir}: ${gitReason(result)}`);
      }
      return result.stdout;
    },
    ready: false,
  };
}

async function ensureCache(g: BranchGit): Promise<void> {
  if (g.ready) return;
  if (!existsSync(join(g.gitDir, 'HEAD'))) {
    mkdirSync(g.gitDir, { recursive: true });
    const init = await g.exec.run('git', ['init', '--quiet', '--bare', g.gitDir], {
      timeoutS: g.timeoutS,
    });
    if (init.exitCode !== 0) {
      throw new StoreError(`${g.prefix}: cannot make ${g.gitDir}: ${gitReason(init)}`);
    }
  }
  // A partial clone of the data branch: blobs come when a record is read.
  await g.ok(['config', `remote.${REMOTE}.url`, g.remote]);
  await g.ok(['config', `remote.${REMOTE}.promisor`, 'true']);
  await g.ok(['config', `remote.${REMOTE}.partialclonefilter`, 'blob:none']);
  await g.ok(['config', 'core.logAllRefUpdates', 'false']);
  g.ready = true;
}

export type Fetched = { ok: true; tip: string | undefined } | { ok: false; reason: string };

/** The data branch's tip and its trees (no blobs); tip undefined: the branch does not exist. */
export async function fetchTip(g: BranchGit): Promise<Fetched> {
  try {
    await ensureCache(g);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const fetched = await g.run([
    'fetch',
    '--quiet',
    '--no-tags',
    '--depth=1',
    '--filter=blob:none',
    REMOTE,
    `+refs/heads/${g.dataBranch}:${TIP_REF}`,
  ]);
  if (fetched.exitCode === 0) {
    const tip = (await g.ok(['rev-parse', '--verify', `${TIP_REF}^{commit}`])).trim();
    return { ok: true, tip };
  }
  if (/couldn't find remote ref/i.test(fetched.stderr)) {
    await g.run(['update-ref', '-d', TIP_REF]);
    return { ok: true, tip: undefined };
  }
  return { ok: false, reason: gitReason(fetched) };
}

/** The .json files under `dir` of `tip`, newest (by name) first. */
export async function listPaths(g: BranchGit, tip: string, dir: string): Promise<string[]> {
  const out = await g.ok(['ls-tree', '-r', '--name-only', tip, '--', `${dir}/`]);
  return out
    .split('\n')
    .filter((p) => p.endsWith('.json'))
    .sort()
    .reverse();
}

/** The files at `paths` of `tip`, fetched in one batch, as text (undefined: not readable). */
export async function readPaths(
  g: BranchGit,
  tip: string,
  paths: string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (paths.length === 0) return out;
  const work = mkdtempSync(join(tmpdir(), 'kg-history-read-'));
  try {
    // A checkout into a scratch folder fetches the missing blobs in one batch.
    const env = { GIT_INDEX_FILE: join(work, 'index') };
    const tree = join(work, 'tree');
    mkdirSync(tree);
    const chunk = 500;
    for (let i = 0; i < paths.length; i += chunk) {
      const part = paths.slice(i, i + chunk);
      // The blobs in one request (a checkout alone would fetch them one by one); what this
      // leaves missing, the checkout fetches itself.
      const oids = (await g.ok(['ls-tree', tip, '--', ...part]))
        .split('\n')
        .map((line) => line.split(/\s+/)[2])
        .filter((oid): oid is string => oid !== undefined && /^[0-9a-f]{40,64}$/.test(oid));
      await g.run([
        '-c',
        'fetch.negotiationAlgorithm=noop',
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        '--recurse-submodules=no',
        '--filter=blob:none',
        REMOTE,
        ...oids,
      ]);
      const result = await g.run(['--work-tree', tree, 'checkout', tip, '--', ...part], env);
      if (result.exitCode !== 0) {
        throw new StoreError(
          `${g.prefix}: cannot read records of ${g.where}: ${gitReason(result)}`,
        );
      }
    }
    for (const path of paths) {
      try {
        out.set(path, readFileSync(join(tree, path), 'utf8'));
      } catch {
        // left out: reported by the caller as unreadable
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return out;
}
