// The environment of the tools kernelgate starts, the harness among them (it runs the pull
// request's kernels): the job's credentials are not in it.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { actionsExec, childEnv, CREDENTIAL_VARIABLES } from '../src/lib/index.js';

describe('childEnv', () => {
  const parent = {
    PATH: '/usr/bin',
    CUDA_HOME: '/usr/local/cuda',
    INPUT_TOKEN: 'ghs_write_token',
    GITHUB_TOKEN: 'ghs_exported',
    GH_TOKEN: 'ghs_exported_too',
    ACTIONS_RUNTIME_TOKEN: 'runtime',
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc',
    ACTIONS_ID_TOKEN_REQUEST_URL: 'https://oidc.example',
    UNSET: undefined,
  };

  test('keeps the environment, less the job credentials', () => {
    expect(childEnv({}, parent)).toEqual({ PATH: '/usr/bin', CUDA_HOME: '/usr/local/cuda' });
    expect([...CREDENTIAL_VARIABLES].sort()).toEqual(
      Object.keys(parent)
        .filter((k) => !['PATH', 'CUDA_HOME', 'UNSET'].includes(k))
        .sort(),
    );
  });

  test('what a stage adds itself is kept and wins', () => {
    expect(childEnv({ PYTHONUNBUFFERED: '1', PATH: '/opt/bin' }, parent)).toEqual({
      PATH: '/opt/bin',
      CUDA_HOME: '/usr/local/cuda',
      PYTHONUNBUFFERED: '1',
    });
  });

  test('the real process environment is read by default', () => {
    process.env['INPUT_TOKEN'] = 'ghs_from_the_runner';
    try {
      expect(childEnv()).not.toHaveProperty('INPUT_TOKEN');
    } finally {
      delete process.env['INPUT_TOKEN'];
    }
  });
});

describe('a command with a time limit', () => {
  test('is stopped with the processes it started, and what it printed is kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-exec-'));
    const late = join(dir, 'late');
    const t0 = Date.now();
    // A child of the command (as compute-sanitizer starts python) that would write a file later.
    const r = await actionsExec().run(
      'bash',
      ['-c', `echo started; (sleep 3; touch ${late}) & echo err >&2; wait`],
      { timeoutS: 0.5 },
    );
    expect(r).toEqual({ exitCode: 124, stdout: 'started\n', stderr: 'err\n', timedOut: true });
    expect(Date.now() - t0).toBeLessThan(2500);
    await new Promise((done) => setTimeout(done, 3500));
    expect(existsSync(late)).toBe(false);
  });

  test('that finishes in time gives its status and output', async () => {
    const r = await actionsExec().run('bash', ['-c', 'echo "$KG_X"; exit 3'], {
      timeoutS: 30,
      env: { KG_X: 'x' },
    });
    expect(r).toEqual({ exitCode: 3, stdout: 'x\n', stderr: '' });
  });

  test('that is not there answers as a missing executable', async () => {
    const r = await actionsExec().run('/nonexistent/tool', [], { timeoutS: 5 });
    expect(r).toEqual({ exitCode: 127, stdout: '', stderr: '/nonexistent/tool: not found' });
  });
});
