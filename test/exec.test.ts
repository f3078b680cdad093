// The environment of the tools kernelgate starts, the harness among them (it runs the pull
// request's kernels): the job's credentials are not in it.
import { describe, expect, test } from 'vitest';
import { childEnv, CREDENTIAL_VARIABLES } from '../src/lib/index.js';

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
