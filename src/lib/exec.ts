// Running external commands (nvcc, cuobjdump, nvidia-smi, python) behind one small interface,
// so the build and doctor stages can be driven by recorded tool output in tests.
import { getExecOutput } from '@actions/exec';
import { spawn } from 'node:child_process';

export interface ExecResult {
  /** Process exit status; 127 when the executable could not be found, as a shell would say. */
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Stopped at `timeoutS` (the exit status is then TIMED_OUT_EXIT_CODE). */
  timedOut?: boolean;
}

export interface ExecOptions {
  cwd?: string;
  /** Added to (and overriding) the parent's environment, never replacing it. */
  env?: Record<string, string>;
  /**
   * Stop the command after this many seconds: SIGTERM to its whole process group (a tool and the
   * processes it started), SIGKILL KILL_AFTER_S later; what it printed until then is kept.
   */
  timeoutS?: number;
}

export interface Exec {
  run(command: string, args: readonly string[], options?: ExecOptions): Promise<ExecResult>;
}

/** The exit status a shell uses for "command not found"; stages treat it as "tool missing". */
export const NOT_FOUND_EXIT_CODE = 127;
/** The exit status of a command stopped at its time limit (coreutils' `timeout` says the same). */
export const TIMED_OUT_EXIT_CODE = 124;
/** Seconds between SIGTERM and SIGKILL for a command stopped at its time limit. */
export const KILL_AFTER_S = 5;
/**
 * Seconds one git command that may reach a remote may take (the 'git-timeout' input): the data
 * branch's fetch and push, the paired base revision's fetch. More than one GitHub API request's
 * 30 s ('request-timeout'): a fetch may have a long history to negotiate. A stalled server would
 * otherwise hang the step for good: git itself waits forever.
 */
export const DEFAULT_GIT_TIMEOUT_S = 120;

/** Process groups of timed commands still running: stopped when this process is told to stop. */
const liveGroups = new Set<number>();

function stopGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function stopLiveGroups(signal: NodeJS.Signals) {
  for (const pid of liveGroups) stopGroup(pid, signal);
}

// A timed command runs in a process group of its own (so that its children can be stopped with
// it); it would outlive this process's own stop. Stop the groups too, then stop as asked.
const onExit = () => stopLiveGroups('SIGKILL');
const onSignal = (signal: NodeJS.Signals) => {
  stopLiveGroups('SIGTERM');
  unwatch();
  process.kill(process.pid, signal);
};
function watch() {
  if (liveGroups.size !== 1) return;
  process.on('exit', onExit);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
function unwatch() {
  process.off('exit', onExit);
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
}

/** Runs a command with a time limit (ExecOptions.timeoutS): see there. */
function runTimed(
  command: string,
  args: readonly string[],
  options: ExecOptions & { timeoutS: number },
): Promise<ExecResult> {
  return new Promise((resolve) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: childEnv(options.env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let killer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const pid = child.pid;
    if (pid !== undefined) {
      liveGroups.add(pid);
      watch();
    }
    const timer = setTimeout(
      () => {
        if (pid === undefined) return;
        timedOut = true;
        stopGroup(pid, 'SIGTERM');
        killer = setTimeout(() => stopGroup(pid, 'SIGKILL'), KILL_AFTER_S * 1000);
      },
      Math.max(0, options.timeoutS) * 1000,
    );
    const done = (result: ExecResult) => {
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      if (pid !== undefined) {
        liveGroups.delete(pid);
        if (liveGroups.size === 0) unwatch();
      }
      resolve(result);
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        done({ exitCode: NOT_FOUND_EXIT_CODE, stdout: '', stderr: `${command}: not found` });
      } else {
        done({ exitCode: 1, stdout, stderr: `${stderr}${command}: ${error.message}\n` });
      }
    });
    child.on('close', (code, signal) => {
      if (timedOut) {
        done({ exitCode: TIMED_OUT_EXIT_CODE, stdout, stderr, timedOut: true });
      } else {
        done({ exitCode: code ?? (signal ? 128 : 1), stdout, stderr });
      }
    });
  });
}

/**
 * The job's credentials as a JavaScript action sees them: the 'token' input, tokens a workflow
 * may export, the cache and artifact service's token, and what requests an OIDC token. A tool
 * kernelgate starts may be the pull request's code (the harness runs its kernels): none of these
 * reach it.
 */
export const CREDENTIAL_VARIABLES = [
  'INPUT_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_URL',
] as const;

/**
 * The parent's environment (defined values only, the job's credentials left out) with `extra`
 * added and overriding.
 */
export function childEnv(
  extra: Record<string, string> = {},
  parent: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  // the store key (KERNELGATE_STORE_KEY, src/store/signing.ts) signs trusted runs: no tool gets it
  const withheld = new Set<string>([...CREDENTIAL_VARIABLES, 'KERNELGATE_STORE_KEY']);
  for (const [key, value] of Object.entries(parent)) {
    if (value !== undefined && !withheld.has(key)) env[key] = value;
  }
  return Object.assign(env, extra);
}

/** Real processes through @actions/exec; a missing executable is a result, not a throw. */
export function actionsExec(): Exec {
  return {
    async run(command, args, options = {}) {
      if (options.timeoutS !== undefined) {
        return runTimed(command, args, { ...options, timeoutS: options.timeoutS });
      }
      const env = childEnv(options.env);
      try {
        const out = await getExecOutput(command, [...args], {
          cwd: options.cwd,
          env,
          silent: true,
          ignoreReturnCode: true,
        });
        return { exitCode: out.exitCode, stdout: out.stdout, stderr: out.stderr };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (/Unable to locate executable file|ENOENT/.test(message)) {
          return { exitCode: NOT_FOUND_EXIT_CODE, stdout: '', stderr: `${command}: not found` };
        }
        throw error;
      }
    },
  };
}

/** One recorded answer: `match` is compared with `command + ' ' + args.join(' ')`. */
export interface ScriptedResponse {
  match: string | RegExp;
  result: Partial<ExecResult>;
}

export interface ScriptedExec extends Exec {
  /** Every command line asked for, in order, for assertions on what a stage ran. */
  calls: string[];
  /** The options of each call, in the same order. */
  options: ExecOptions[];
}

/**
 * An Exec that answers from recorded tool output (first matching response wins); anything not
 * recorded answers as a missing executable, the way a machine without that tool would.
 */
export function scriptedExec(responses: readonly ScriptedResponse[]): ScriptedExec {
  const calls: string[] = [];
  const options: ExecOptions[] = [];
  return {
    calls,
    options,
    async run(command, args, given = {}) {
      const line = [command, ...args].join(' ');
      calls.push(line);
      options.push(given);
      const hit = responses.find((r) =>
        typeof r.match === 'string' ? r.match === line : r.match.test(line),
      );
      if (!hit)
        return { exitCode: NOT_FOUND_EXIT_CODE, stdout: '', stderr: `${command}: not found` };
      return { exitCode: 0, stdout: '', stderr: '', ...hit.result };
    },
  };
}
