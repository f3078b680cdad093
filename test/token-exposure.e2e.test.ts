// Can the code a run measures read the action's token (issue 26)? The tools kernelgate starts get
// an environment without the job's credentials (childEnv, src/lib/exec.ts), but /proc/<pid>/environ
// of every process of the same user is readable, and the action's node process is an ancestor of
// every kernel: its initial environment held INPUT_TOKEN, whatever process.env says later. The
// kernel module below (the pull request's code) walks its ancestors and writes down each one whose
// environment holds the token.
//
// The action re-executes itself without the credentials first (src/action/relaunch.ts), which
// needs process.execve: Node.js 22.15 and later, the runner's node24. The bundle is run by
// KERNELGATE_TEST_NODE when set (a node that has it), else by this node; on a node without it the
// test documents the boundary: the token is readable, and the log says so.
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildBundle, runBundledAction } from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'ghs_kernelgateTokenExposureProbe0123456789';
const RUNTIME = 'runtime-token-exposure-probe';

const NODE = process.env['KERNELGATE_TEST_NODE'] || process.execPath;
const NODE_HAS_EXECVE =
  execFileSync(NODE, ['-p', 'typeof process.execve'], { encoding: 'utf8' }).trim() === 'function';
const NODE_VERSION = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();

/** Appended to the kernel module: runs in each harness worker as the module is imported. */
const SPY = `

def _kernelgate_spy():
    import os
    seen = []
    pid = os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                name = os.path.basename(f.read().split(b"\\0")[0].decode())
        except OSError:
            env, name = b"", "?"
        for secret, label in ((b"${TOKEN}", "INPUT_TOKEN"), (b"${RUNTIME}", "ACTIONS_RUNTIME_TOKEN")):
            if secret in env:
                seen.append(f"{label} in the environment of {name}")
        with open(f"/proc/{pid}/status") as f:
            pid = int(next(line for line in f if line.startswith("PPid:")).split()[1])
    with open("token-spy.txt", "a") as f:
        f.write("\\n".join(seen + ["walked"]) + "\\n")


_kernelgate_spy()
`;

describeWithVenv('the token and the code a run measures', () => {
  let bundleDir: string;
  let server: GitHubServer;

  beforeAll(async () => {
    bundleDir = await buildBundle(repoRoot);
    server = new GitHubServer();
    await server.start();
    server.addPullRequest({ number: 41, headSha: 'a'.repeat(40), headLabel: 'acme:attn-tma' });
  }, 180_000);

  afterAll(async () => {
    await server.close();
    server.assertValid();
  });

  async function measureWithSpy() {
    const workspace = mkdtempSync(join(tmpdir(), 'kg-token-'));
    cpSync(join(repoRoot, 'test', 'fixtures', 'user-repo'), workspace, { recursive: true });
    const config = join(workspace, 'kernelgate.yml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('python: python3', `python: ${VENV_PYTHON}`),
    );
    const module = join(workspace, 'kernels', 'scale', 'bench.py');
    writeFileSync(module, readFileSync(module, 'utf8') + SPY);
    const run = await runBundledAction({
      bundleDir,
      node: NODE,
      apiUrl: server.url,
      // A pull request from a branch of the repository itself (trusted), which comments: the
      // token must still reach the API.
      eventName: 'pull_request',
      eventFile: join(repoRoot, 'test', 'fixtures', 'events', 'pull_request.same-repo.opened.json'),
      ref: 'refs/pull/41/merge',
      sha: 'a'.repeat(40),
      runId: '7002',
      workspace,
      env: { TRITON_INTERPRET: '1', ACTIONS_RUNTIME_TOKEN: RUNTIME },
      inputs: { token: TOKEN, config: '.', comment: 'true', 'report-dir': '.kernelgate/report' },
    });
    const spy = join(workspace, 'token-spy.txt');
    return { run, seen: existsSync(spy) ? readFileSync(spy, 'utf8') : '' };
  }

  it.runIf(NODE_HAS_EXECVE)(
    `on ${NODE_VERSION} (process.execve): no ancestor of a kernel holds the token in its environment`,
    { timeout: 600_000 },
    async () => {
      const { run, seen } = await measureWithSpy();
      expect(run.code, run.stdout + run.stderr).toBe(0);
      // The spy ran (once per worker) and found nothing.
      expect(seen).toMatch(/^(walked\n)+$/);
      expect(run.stdout).not.toContain('cannot re-execute');
      // The token still reached the API: the comment was posted with it.
      expect(server.commentsOn(41).length).toBeGreaterThan(0);
      expect(server.calls('issues/create-comment').at(-1)?.authorization).toBe(`token ${TOKEN}`);
    },
  );

  it.runIf(!NODE_HAS_EXECVE)(
    `on ${NODE_VERSION} (no process.execve): the boundary — the action's process holds the token, and says so`,
    { timeout: 600_000 },
    async () => {
      const { run, seen } = await measureWithSpy();
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(seen).toContain('INPUT_TOKEN in the environment of node');
      expect(seen).toContain('ACTIONS_RUNTIME_TOKEN in the environment of node');
      expect(run.stdout).toContain(
        "kernelgate: INPUT_TOKEN, ACTIONS_RUNTIME_TOKEN stay in this process's environment, which the tools it " +
          `starts can read through /proc/<pid>/environ: Node.js ${NODE_VERSION} on linux cannot re-execute itself ` +
          'without them (process.execve: Node.js 22.15 and later, on Linux).',
      );
    },
  );
});

// What protects the token where the action cannot: the example's GPU job holds none, and starts
// the harness by file from outside the checkout (not `python -m`, docs/harness.md).
describe("the example's GPU job", () => {
  const text = readFileSync(join(repoRoot, 'examples', 'workflows', 'kernelgate.yml'), 'utf8');
  const measure = (parseYaml(text) as { jobs: Record<string, Record<string, unknown>> }).jobs[
    'measure'
  ]!;

  it('has no token: no permission, no secret, no github.token, no kernelgate step', () => {
    expect(measure['permissions']).toEqual({});
    const job = JSON.stringify(measure);
    expect(job).not.toMatch(/secrets\.|github\.token|"token"|kernelgate\/kernelgate@/);
  });

  it('starts the harness by file, from outside the checkout', () => {
    const steps = measure['steps'] as { name?: string; run?: string; env?: object }[];
    const harness = steps.find((step) => step.name === 'Verify and time every kernel');
    expect(harness).toEqual({
      name: 'Verify and time every kernel',
      env: { PYTHONPATH: '${{ runner.temp }}/kernelgate/python' },
      run:
        'python "$RUNNER_TEMP/kernelgate/python/kernelgate_launch.py" kernelgate_harness ' +
        '--kernels kernels --out .kernelgate/results.json',
    });
    expect(steps.filter((step) => step.run?.includes('-m kernelgate_harness'))).toEqual([]);
  });
});
