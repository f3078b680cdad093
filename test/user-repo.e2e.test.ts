// Another repository using kernelgate (issue 15): test/fixtures/user-repo has its own kernels/
// package (with kernels/__init__.py, which used to shadow the harness's package), one Triton
// kernel and its own kernelgate.yml. The bundled action runs on it exactly as a runner would —
// INPUT_* variables, a push event, the GitHub REST stand-in — and measures it with the harness
// that ships with the action (python/kernelgate_harness), on the CPU under TRITON_INTERPRET=1.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KernelgateResults } from '../src/results/index.js';
import { annotations, buildBundle, runBundledAction } from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(repoRoot, 'test', 'fixtures', 'user-repo');

describeWithVenv('a user repository through the bundled action', () => {
  let bundleDir: string;
  let server: GitHubServer;

  beforeAll(async () => {
    bundleDir = await buildBundle(repoRoot);
    server = new GitHubServer();
    await server.start();
  }, 180_000);

  afterAll(async () => {
    await server.close();
  });

  /** The fixture checked out into a fresh workspace, its harness python pointed at the venv. */
  function checkout(): string {
    const workspace = mkdtempSync(join(tmpdir(), 'kg-user-repo-'));
    cpSync(FIXTURE, workspace, { recursive: true });
    const config = join(workspace, 'kernelgate.yml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('python: python3', `python: ${VENV_PYTHON}`),
    );
    return workspace;
  }

  it(
    'measures its own kernels/ package with the action’s harness and passes',
    { timeout: 600_000 },
    async () => {
      const workspace = checkout();
      // The pull request's own kernelgate_harness/ must not replace the action's (issue 26).
      mkdirSync(join(workspace, 'kernelgate_harness'));
      for (const file of ['__init__.py', '__main__.py']) {
        writeFileSync(
          join(workspace, 'kernelgate_harness', file),
          'import sys\nprint("SHADOWED")\nsys.exit(0)\n',
        );
      }
      const run = await runBundledAction({
        bundleDir,
        apiUrl: server.url,
        eventName: 'push',
        eventFile: join(repoRoot, 'test', 'fixtures', 'events', 'push.main.json'),
        ref: 'refs/heads/main',
        sha: 'a'.repeat(40),
        runId: '7001',
        workspace,
        env: { TRITON_INTERPRET: '1' },
        inputs: {
          token: 'write-token',
          config: '.',
          mode: 'auto',
          comment: 'true',
          'comment-key': 'default',
          'report-dir': '.kernelgate/report',
        },
      });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(annotations(run.stdout, 'error')).toEqual([]);
      // The harness ran from the action's python/ folder, started by file (not `-m`, which put
      // the workspace and its kernelgate_harness/ first), and found the workspace's kernels.
      expect(run.stdout).toContain(
        `kernelgate: ${VENV_PYTHON} ${join(bundleDir, 'python', 'kernelgate_launch.py')} kernelgate_harness --kernels kernels --out`,
      );
      expect(run.stdout).not.toContain('SHADOWED');
      expect(run.stdout).not.toContain('No module named');
      const resultsPath = join(workspace, '.kernelgate', 'report', 'results.json');
      expect(existsSync(resultsPath)).toBe(true);
      const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as KernelgateResults;
      expect(
        results.cases.map((c) => `${c.variant} ${c.case} ${c.status} ${c.correctness?.status}`),
      ).toEqual([
        'torch_axpb dtype=fp32,N=1000 ok PASS',
        'triton_axpb dtype=fp32,N=1000 ok PASS',
        'torch_axpb dtype=fp32,N=4096 ok PASS',
        'triton_axpb dtype=fp32,N=4096 ok PASS',
      ]);
      expect(run.summary).toContain('scale');
    },
  );
});
