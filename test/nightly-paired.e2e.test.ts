// The nightly as a paired run (issue 25), through the bundled action exactly as a runner runs it:
// a push stores its run, a commit lands, and the schedule event times tonight's commit beside the
// push's commit pair by pair (a git worktree of it), on the CPU under TRITON_INTERPRET=1. A night
// that found a case SLOWER is never the next night's base.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KernelgateResults } from '../src/results/index.js';
import { buildBundle, runBundledAction } from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(repoRoot, 'test', 'fixtures', 'user-repo');
const EVENTS = join(repoRoot, 'test', 'fixtures', 'events');

describeWithVenv('the nightly through the bundled action', () => {
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

  /** The user repository as a git checkout with one commit; its git, and the store beside it. */
  function checkout() {
    const workspace = mkdtempSync(join(tmpdir(), 'kg-nightly-'));
    cpSync(FIXTURE, workspace, { recursive: true });
    const config = join(workspace, 'kernelgate.yml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('python: python3', `python: ${VENV_PYTHON}`),
    );
    writeFileSync(join(workspace, '.gitignore'), '.kernelgate/\n__pycache__/\n');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
        encoding: 'utf8',
      }).trim();
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'kernels');
    const store = mkdtempSync(join(tmpdir(), 'kg-nightly-store-'));
    return { workspace, git, store };
  }

  function action(
    ws: ReturnType<typeof checkout>,
    eventName: 'push' | 'schedule',
    runId: string,
    env: Record<string, string> = {},
  ) {
    return runBundledAction({
      bundleDir,
      apiUrl: server.url,
      eventName,
      eventFile: join(EVENTS, eventName === 'push' ? 'push.main.json' : 'schedule.json'),
      ref: 'refs/heads/main',
      sha: ws.git('rev-parse', 'HEAD'),
      runId,
      workspace: ws.workspace,
      env: { TRITON_INTERPRET: '1', ...env },
      inputs: {
        token: 'write-token',
        config: '.',
        mode: 'auto',
        comment: 'false',
        'comment-key': 'default',
        'report-dir': `.kernelgate/report-${runId}`,
        'baseline-dir': ws.store,
      },
    });
  }

  function resultsOf(ws: ReturnType<typeof checkout>, runId: string): KernelgateResults {
    const path = join(ws.workspace, '.kernelgate', `report-${runId}`, 'results.json');
    return JSON.parse(readFileSync(path, 'utf8')) as KernelgateResults;
  }

  it(
    'times tonight beside the last good run, and passes over a night that found a case SLOWER',
    { timeout: 900_000 },
    async () => {
      const ws = checkout();
      const good = ws.git('rev-parse', 'HEAD');
      const push = await action(ws, 'push', '8001');
      expect(push.code, push.stdout + push.stderr).toBe(0);

      ws.git('commit', '-q', '--allow-empty', '-m', 'docs: tonight');
      const night = await action(ws, 'schedule', '8002');
      expect(night.code, night.stdout + night.stderr).toBe(0);
      expect(night.stdout).toContain(
        `kernelgate: tonight is timed beside ${good.slice(0, 12)} (push run of `,
      );
      const results = resultsOf(ws, '8002');
      expect(results.run.paired_base?.git_sha).toBe(good);
      const timed = results.cases.filter((c) => c.timing !== undefined);
      expect(timed.length).toBeGreaterThan(0);
      expect(timed.filter((c) => c.paired?.base_status === 'ok').map((c) => c.case)).toEqual(
        timed.map((c) => c.case),
      );
      // The night is stored with its judgement beside it.
      const judged = readdirSync(join(ws.store, 'main', 'none')).filter((f) =>
        f.endsWith('.judged'),
      );
      expect(judged).toHaveLength(2);

      // A night whose store says it found a case SLOWER: the next night passes over it.
      const tonight = ws.git('rev-parse', 'HEAD');
      const slowFile = join(ws.store, 'main', 'none', judged.sort()[1]!);
      // (On a busy CPU an A/A night may itself find a case SLOWER; the plant makes it one either way.)
      expect(JSON.parse(readFileSync(slowFile, 'utf8'))).toMatchObject({ verdict: 'pass' });
      writeFileSync(
        slowFile,
        JSON.stringify({ verdict: 'pass', slower: ['scale/triton_axpb/dtype=fp32,N=4096'] }),
      );
      ws.git('commit', '-q', '--allow-empty', '-m', 'docs: the next night');
      const next = await action(ws, 'schedule', '8003');
      expect(next.code, next.stdout + next.stderr).toBe(0);
      expect(next.stdout).toContain(
        `kernelgate: nightly base: passed over ${tonight.slice(0, 12)} (stored run of `,
      );
      expect(next.stdout).toContain(
        'it reported 1 SLOWER case (scale/triton_axpb/dtype=fp32,N=4096): a regression is never the next night',
      );
      expect(resultsOf(ws, '8003').run.paired_base?.git_sha).toBe(good);
    },
  );
});
