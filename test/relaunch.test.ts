// The action's re-execution without the job's credentials (src/action/relaunch.ts), with a fake
// process.execve: what the new image's environment holds, how the token crosses, and where it
// cannot. test/token-exposure.e2e.test.ts runs the real one, when a node that has it is at hand.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  relaunchWithoutCredentials,
  RELAUNCHED_VARIABLE,
  TOKEN_FILE_VARIABLE,
  type RelaunchProcess,
} from '../src/action/index.js';

/** What the new image was started with. */
interface Replaced {
  file: string;
  args: string[];
  env: Record<string, string>;
}

let replaced: Replaced | undefined;

function runnerProcess(env: Record<string, string>): RelaunchProcess {
  return {
    env,
    platform: 'linux',
    execPath: '/usr/local/bin/node',
    execArgv: [],
    argv: ['/usr/local/bin/node', '/actions/kernelgate/dist/index.js'],
    version: 'v24.21.0',
    // The real one never returns: the process becomes the new image. Here it notes what it got.
    execve: ((file: string, args: string[], newEnv: Record<string, string>) => {
      replaced = { file, args, env: newEnv };
    }) as RelaunchProcess['execve'],
  };
}

/** Runs the relaunch; returns what the new image was started with. */
function relaunch(env: Record<string, string>): Replaced {
  replaced = undefined;
  relaunchWithoutCredentials(runnerProcess(env));
  if (!replaced) throw new Error('did not re-execute');
  return replaced;
}

describe('relaunchWithoutCredentials', () => {
  const runnerTemp = mkdtempSync(`${tmpdir()}/kg-runner-temp-`);
  const runner = {
    RUNNER_TEMP: runnerTemp,
    GITHUB_WORKSPACE: '/home/runner/work/kernels/kernels',
    INPUT_CONFIG: '.',
    INPUT_TOKEN: 'ghs_theToken',
    ACTIONS_RUNTIME_TOKEN: 'runtime',
    ACTIONS_ID_TOKEN_REQUEST_URL: 'https://oidc.example/x',
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc',
    GITHUB_TOKEN: 'exported',
    GH_TOKEN: 'exported-too',
  };

  it('re-executes the same script with the credentials left out and the token in a file', () => {
    const next = relaunch(runner);
    expect(next.file).toBe('/usr/local/bin/node');
    expect(next.args).toEqual(['/usr/local/bin/node', '/actions/kernelgate/dist/index.js']);
    const file = next.env[TOKEN_FILE_VARIABLE]!;
    expect(next.env).toEqual({
      RUNNER_TEMP: runnerTemp,
      GITHUB_WORKSPACE: '/home/runner/work/kernels/kernels',
      INPUT_CONFIG: '.',
      [RELAUNCHED_VARIABLE]: '1',
      [TOKEN_FILE_VARIABLE]: file,
    });
    expect(file.startsWith(`${runnerTemp}/kernelgate-token-`)).toBe(true);

    // The new image: takes the token and removes the file's folder before anything else runs.
    const image = relaunchWithoutCredentials({ ...runnerProcess(next.env), execve: undefined });
    expect(image).toEqual({ relaunched: true, token: 'ghs_theToken' });
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(runnerTemp)).toEqual([]);
  });

  it('without a token input, still leaves the runtime token out, and carries nothing', () => {
    const next = relaunch({ RUNNER_TEMP: runnerTemp, ACTIONS_RUNTIME_TOKEN: 'runtime' });
    expect(next.env).toEqual({ RUNNER_TEMP: runnerTemp, [RELAUNCHED_VARIABLE]: '1' });
    expect(relaunchWithoutCredentials(runnerProcess(next.env))).toEqual({
      relaunched: true,
      token: undefined,
    });
  });

  it('with no credential in the environment, runs as it is', () => {
    expect(relaunchWithoutCredentials(runnerProcess({ RUNNER_TEMP: runnerTemp }))).toEqual({
      relaunched: true,
      token: undefined,
    });
  });

  it('never takes a token file outside a folder of its own', () => {
    const image = relaunchWithoutCredentials(
      runnerProcess({ [RELAUNCHED_VARIABLE]: '1', [TOKEN_FILE_VARIABLE]: '/etc/passwd' }),
    );
    expect(image).toEqual({ relaunched: true, token: undefined });
    expect(existsSync('/etc/passwd')).toBe(true);
  });

  it('says why where it cannot: a Node.js without process.execve', () => {
    expect(
      relaunchWithoutCredentials({
        ...runnerProcess(runner),
        version: 'v20.20.2',
        execve: undefined,
      }),
    ).toEqual({
      relaunched: false,
      why:
        'kernelgate: INPUT_TOKEN, GITHUB_TOKEN, GH_TOKEN, ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN, ' +
        "ACTIONS_ID_TOKEN_REQUEST_URL stay in this process's environment, which the tools it starts can read through " +
        '/proc/<pid>/environ: Node.js v20.20.2 on linux cannot re-execute itself without them (process.execve: ' +
        'Node.js 22.15 and later, on Linux).',
    });
  });

  it('says why when the re-execution fails, and leaves no token file behind', () => {
    const failing = {
      ...runnerProcess(runner),
      execve: () => {
        throw new Error('EACCES: permission denied');
      },
    };
    expect(relaunchWithoutCredentials(failing)).toEqual({
      relaunched: false,
      why:
        'kernelgate: could not re-execute without INPUT_TOKEN, GITHUB_TOKEN, GH_TOKEN, ACTIONS_RUNTIME_TOKEN, ' +
        'ACTIONS_ID_TOKEN_REQUEST_TOKEN, ACTIONS_ID_TOKEN_REQUEST_URL in the environment (EACCES: permission denied); ' +
        'they stay readable through /proc/<pid>/environ to the tools this step starts.',
    });
    expect(readdirSync(runnerTemp)).toEqual([]);
  });
});
