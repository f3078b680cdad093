// The job's credentials out of this process's environment before any tool runs (issue 26).
//
// The runner starts the action with INPUT_TOKEN (and ACTIONS_RUNTIME_TOKEN, the OIDC request
// variables, whatever token a workflow exported) in its environment. The tools kernelgate starts
// get an environment without them (childEnv, src/lib/exec.ts), but any process of the same user
// reads /proc/<pid>/environ of this one, its parent: the initial environment, which deleting from
// process.env does not change. So, first thing, the action re-executes itself in the same process
// (process.execve: the same pid, which the runner waits on) with those variables left out; the
// 'token' input crosses in a file only this user can read, in a folder of its own, removed by the
// new image as it starts, before any tool of the step runs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { CREDENTIAL_VARIABLES } from '../lib/index.js';

/** Where the relaunched image finds the token: a file in a `kernelgate-token-*` folder. */
export const TOKEN_FILE_VARIABLE = 'KERNELGATE_TOKEN_FILE';
/** Set in the relaunched image: never relaunch twice. */
export const RELAUNCHED_VARIABLE = 'KERNELGATE_RELAUNCHED';
const FOLDER_PREFIX = 'kernelgate-token-';

type Execve = (file: string, args: string[], env: Record<string, string>) => never;

export interface RelaunchProcess {
  env: Record<string, string | undefined>;
  platform: string;
  execPath: string;
  execArgv: string[];
  argv: string[];
  version: string;
  execve?: Execve;
}

export type Relaunch =
  /** the image is the relaunched one (or had nothing to leave out): the token it carried */
  | { relaunched: true; token: string | undefined }
  /** no relaunch: why (shown in the log when a token is at stake) */
  | { relaunched: false; why: string | undefined };

/** Reads and removes the token file the previous image left; only a file in our own folder. */
function takeToken(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const folder = dirname(path);
  if (!basename(folder).startsWith(FOLDER_PREFIX)) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * Re-executes the action without the job's credentials in its environment; returns only in the
 * image that runs (then with the token it carried), or where it cannot (not Linux, or a Node.js
 * without process.execve: before 22.15), saying why.
 */
export function relaunchWithoutCredentials(proc: RelaunchProcess = currentProcess()): Relaunch {
  const { env } = proc;
  if (env[RELAUNCHED_VARIABLE] === '1') {
    return { relaunched: true, token: takeToken(env[TOKEN_FILE_VARIABLE]) };
  }
  const held = CREDENTIAL_VARIABLES.filter((name) => env[name] !== undefined);
  if (held.length === 0) return { relaunched: true, token: undefined };
  if (proc.platform !== 'linux' || typeof proc.execve !== 'function') {
    return {
      relaunched: false,
      why:
        `kernelgate: ${held.join(', ')} stay in this process's environment, which the tools it starts can ` +
        `read through /proc/<pid>/environ: Node.js ${proc.version} on ${proc.platform} cannot re-execute ` +
        'itself without them (process.execve: Node.js 22.15 and later, on Linux).',
    };
  }
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !(CREDENTIAL_VARIABLES as readonly string[]).includes(name)) {
      clean[name] = value;
    }
  }
  clean[RELAUNCHED_VARIABLE] = '1';
  const token = env['INPUT_TOKEN'];
  let folder: string | undefined;
  if (token) {
    folder = mkdtempSync(join(env['RUNNER_TEMP'] || tmpdir(), FOLDER_PREFIX));
    const file = join(folder, 'token');
    writeFileSync(file, token, { mode: 0o600, flag: 'wx' });
    clean[TOKEN_FILE_VARIABLE] = file;
  }
  try {
    return proc.execve(
      proc.execPath,
      [proc.execPath, ...proc.execArgv, ...proc.argv.slice(1)],
      clean,
    );
  } catch (error) {
    if (folder) rmSync(folder, { recursive: true, force: true });
    return {
      relaunched: false,
      why: `kernelgate: could not re-execute without ${held.join(', ')} in the environment (${(error as Error).message}); they stay readable through /proc/<pid>/environ to the tools this step starts.`,
    };
  }
}

function currentProcess(): RelaunchProcess {
  const execve = (process as unknown as { execve?: Execve }).execve;
  return {
    env: process.env,
    platform: process.platform,
    execPath: process.execPath,
    execArgv: process.execArgv,
    argv: process.argv,
    version: process.version,
    ...(execve ? { execve: execve.bind(process) } : {}),
  };
}
