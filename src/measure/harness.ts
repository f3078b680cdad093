// Runs the Python harness (python/kernelgate_harness) on the GPU runner through @actions/exec and
// streams its per-case progress into the log, one collapsible group per kernel. It judges nothing.
import { exec as actionsExec } from '@actions/exec';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { childEnv } from '../lib/index.js';

/** Where harness output goes: @actions/core in the action, the console on the command line. */
export interface ProgressLog {
  info(line: string): void;
  startGroup(name: string): void;
  endGroup(): void;
}

/** Runs a command and hands over each output line as it arrives; resolves to the exit status. */
export type LineExec = (
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; onLine: (line: string) => void },
) => Promise<number>;

export const streamingExec: LineExec = async (command, args, { cwd, env, onLine }) =>
  actionsExec(command, args, {
    cwd,
    env,
    silent: true,
    ignoreReturnCode: true,
    listeners: { stdline: onLine, errline: onLine },
  });

export interface HarnessOptions {
  /** the repository being judged (kernels_dir is relative to it) */
  workspace: string;
  /** the action's own checkout: its python/ folder holds the `kernelgate_harness` package */
  harnessRoot: string;
  python: string;
  kernelsDir: string;
  resultsPath: string;
  logPath: string;
  buildsPath?: string;
  only?: string[];
  timeoutPerCaseS?: number;
  extraArgs?: string[];
  env?: Record<string, string>;
}

export interface HarnessRun {
  exitCode: number;
  /** false when the harness died before writing anything: the caller must say so, not judge */
  wroteResults: boolean;
  /** the last lines, for diagnostics and the report when the harness failed */
  logTail: string;
  /** every output line, for known-failure diagnosis */
  log: string;
  /** the sha256 of each results-digest line the harness printed (one, last, from a harness since issue 34) */
  digests: string[];
}

/** `[kernelgate] == attention (3 variants, 12 cases) ==` opens a kernel's group. */
const KERNEL_HEADER = /^\[kernelgate\] == (\S+)/;
const TAIL_LINES = 40;
/**
 * `[kernelgate] results sha256 <hex> <path>`: the harness's last line, the sha256 of the bytes its
 * final write put at --out (python/kernelgate_harness/document.py).
 */
const DIGEST_LINE = /^\[kernelgate\] results sha256 ([0-9a-f]{64}) /;

/**
 * The harness started by file (python/kernelgate_launch.py), not with `-m`: `python -m` puts the
 * current directory, the checkout measured, first on sys.path, where a pull request's own
 * `kernelgate_harness/` was imported instead of the action's (issue 26).
 */
export function launcherArgs(harnessRoot: string, module: string): string[] {
  return [join(harnessRoot, 'python', 'kernelgate_launch.py'), module];
}

export function harnessArgs(options: HarnessOptions): string[] {
  const args = [
    ...launcherArgs(options.harnessRoot, 'kernelgate_harness'),
    '--kernels',
    options.kernelsDir,
    '--out',
    options.resultsPath,
  ];
  if (options.buildsPath !== undefined) args.push('--builds', options.buildsPath);
  if (options.only !== undefined && options.only.length > 0)
    args.push('--only', options.only.join(','));
  if (options.timeoutPerCaseS !== undefined) {
    args.push('--timeout-per-case', String(options.timeoutPerCaseS));
  }
  return [...args, ...(options.extraArgs ?? [])];
}

export async function runHarness(
  options: HarnessOptions,
  log: ProgressLog,
  run: LineExec = streamingExec,
): Promise<HarnessRun> {
  mkdirSync(dirname(options.logPath), { recursive: true });
  writeFileSync(options.logPath, '');
  // A results.json an earlier run left is never judged as this run's: gone before the harness
  // starts, so a harness that writes nothing is said to have written nothing.
  rmSync(options.resultsPath, { force: true });
  const env = childEnv(options.env);
  // The harness package ships with the action, alone in its python/ folder, so nothing of the
  // action's own repository (its kernels/ package) shadows the workspace's. The workspace is not
  // on the harness's path at all: a `kernelgate_harness/` or `sitecustomize.py` of the pull
  // request would run in the harness's own process. The kernel workers put it first on theirs
  // (worker.py), and import the kernels' modules from it.
  env.PYTHONPATH = [join(options.harnessRoot, 'python'), env.PYTHONPATH]
    .filter((part) => part !== undefined && part !== '')
    .join(delimiter);
  env.PYTHONUNBUFFERED = '1';

  const lines: string[] = [];
  const digests: string[] = [];
  let inGroup = false;
  const onLine = (line: string) => {
    lines.push(line);
    appendFileSync(options.logPath, line + '\n');
    const digest = DIGEST_LINE.exec(line);
    if (digest) digests.push(digest[1]!);
    const header = KERNEL_HEADER.exec(line);
    if (header) {
      if (inGroup) log.endGroup();
      log.startGroup(line.replace(/^\[kernelgate\] /, ''));
      inGroup = true;
      return;
    }
    log.info(line);
  };

  const args = harnessArgs(options);
  log.info(`kernelgate: ${options.python} ${args.join(' ')}`);
  const exitCode = await run(options.python, args, { cwd: options.workspace, env, onLine });
  if (inGroup) log.endGroup();
  return {
    exitCode,
    wroteResults: existsSync(options.resultsPath),
    logTail: lines.slice(-TAIL_LINES).join('\n'),
    log: lines.join('\n'),
    digests,
  };
}

/** The results file's text, read once, and what its digest check found. */
export interface CheckedResults {
  text: string;
  /** the file is not what the harness wrote: nothing in it may be judged */
  changed?: string;
  /** no digest line to check against (a harness from before issue 34, or one that stopped early) */
  unchecked?: string;
}

/**
 * Reads the results file once and checks its bytes against the digest the harness printed after
 * its final write. The kernels' code runs as the harness's user and could start a process that
 * outlives the harness and rewrites the file after that write (issue 34); the text returned is
 * the text checked, so nothing can change it between the check and the parse.
 */
export function checkResults(harness: HarnessRun, path: string): CheckedResults {
  const bytes = readFileSync(path);
  const text = bytes.toString('utf8');
  const actual = createHash('sha256').update(bytes).digest('hex');
  const [digest, ...more] = harness.digests;
  if (digest === undefined) {
    return {
      text,
      unchecked: `kernelgate: the harness printed no results digest (a harness from before the digest line, or one that stopped before its last line): ${path} is judged without the check that nothing rewrote it.`,
    };
  }
  if (more.length > 0) {
    return {
      text,
      changed: `${path}: the harness's results digest line was printed ${harness.digests.length} times (sha256 ${harness.digests.join(', ')}; the file has sha256 ${actual}); the harness prints it once: something the kernels started printed one too.`,
    };
  }
  if (digest !== actual) {
    return {
      text,
      changed: `${path}: the results file changed after the harness wrote it: something the kernels started rewrote it (the harness wrote sha256 ${digest}, the file has sha256 ${actual}).`,
    };
  }
  return { text };
}
