// git has a deadline (issue 26): a git server that accepts the connection and never answers used
// to hang the step for good (git waits for ever), before any verdict or summary. Each git command
// that may reach a remote is now stopped at 'git-timeout' (1 s here): a history read that stalls
// leaves the run judged without history, a write that stalls a warning (the verdict stands), a
// base fetch that stalls turns paired A/B off. The bundled action runs against the stalled server
// (test/support/git-remote.ts); nothing here waits on anything but the deadline itself.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { actionsExec } from '../src/lib/index.js';
import { fullRun } from '../src/pipeline/index.js';
import { fileBaselineStore } from '../src/store/index.js';
import { annotations, buildBundle, runBundledAction } from './support/bundled-action.js';
import { bareRemote, git, stalledGitServer, treeOf } from './support/git-remote.js';
import { GitHubServer } from './support/github-server.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const PUSH_RESULTS = join(repoRoot, 'test', 'fixtures', 'recorded', 'push', 'results.json.gz');
const stopped = (command: string) =>
  `git ${command} did not finish within 1 s ('git-timeout') and was stopped`;

let bundleDir: string;
let server: GitHubServer;
let stalled: Awaited<ReturnType<typeof stalledGitServer>>;

beforeAll(async () => {
  bundleDir = await buildBundle(repoRoot);
}, 180_000);

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
  stalled = await stalledGitServer();
});

afterEach(async () => {
  await stalled.close();
  await server.close();
  server.assertValid();
});

function pushRun(inputs: Record<string, string>, env: Record<string, string> = {}) {
  return runBundledAction({
    bundleDir,
    apiUrl: server.url,
    eventName: 'push',
    eventFile: join(repoRoot, 'test', 'fixtures', 'events', 'push.main.json'),
    ref: 'refs/heads/main',
    sha: '329565340326aaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    runId: '300',
    inputs: {
      token: 'write-token',
      config: repoRoot,
      comment: 'false',
      'report-dir': '.kernelgate/report',
      results: PUSH_RESULTS,
      history: 'branch',
      'git-timeout': '1',
      ...inputs,
    },
    env,
  });
}

describe('the data branch on a stalled git server', () => {
  it('a read that stalls: judged without history; a write that stalls: a warning; the verdict stands', async () => {
    const remote = stalled.url('acme/kernels.git');
    const started = Date.now();
    const run = await pushRun({ 'history-remote': remote });
    expect(run.code).toBe(0);
    expect(run.outputs['verdict']).toBe('pass');
    expect(run.summary).toContain('kernelgate');
    expect(annotations(run.stdout, 'warning')).toEqual([
      `kernelgate history: cannot read branch kernelgate-data of ${remote}: ${stopped('fetch')}. ` +
        'No baseline or trend is taken from the history in this run.',
      'No stored baseline for branch main on H200: every case is NEW. Baselines are written by trusted runs ' +
        '(push to the branch, schedule); run one first.',
      `kernelgate history: this run was not stored on branch kernelgate-data of ${remote}: cannot read it ` +
        `(${stopped('fetch')})`,
    ]);
    expect(annotations(run.stdout, 'error')).toEqual([]);
    // Two deadlines of 1 s, and the run's own work: far from the 300 s it used to hang.
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);

  it('a push that stalls: a warning naming it, the verdict stands, nothing stored', async () => {
    const { remote } = bareRemote();
    // Fetches go to the real remote, the push to the stalled server (as git's own config would).
    const pushTo = stalled.url('acme/kernels.git');
    const run = await pushRun(
      { 'history-remote': remote },
      {
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'remote.kgdata.pushurl',
        GIT_CONFIG_VALUE_0: pushTo,
      },
    );
    expect(run.code).toBe(0);
    expect(run.outputs['verdict']).toBe('pass');
    expect(annotations(run.stdout, 'warning')).toEqual([
      'No stored baseline for branch main on H200: every case is NEW. Baselines are written by trusted runs ' +
        '(push to the branch, schedule); run one first.',
      `kernelgate history: this run was not stored on branch kernelgate-data of ${remote}: ${stopped('push')}`,
    ]);
    expect(() => treeOf(remote, 'kernelgate-data')).toThrow();
  }, 120_000);
});

describe("the pull request's base commit on a stalled git server", () => {
  const scratch = mkdtempSync(join(tmpdir(), 'kg-git-deadline-'));

  it('the fetch is stopped at its deadline and paired A/B is off, with the reason', async () => {
    const ws = join(scratch, 'ws');
    mkdirSync(join(ws, 'kernels', 'gemm'), { recursive: true });
    writeFileSync(
      join(ws, 'kernels', 'gemm', 'kernel.yml'),
      'name: gemm\nmodule: kernels.gemm.bench\ncases: [{dtype: bf16}]\n' +
        'tolerance: {bf16: {rel_l2: 0.01}}\nvariants: [{name: cublas, role: reference}]\n',
    );
    git(['init', '-q', '-b', 'feature'], ws);
    git(['add', '-A'], ws);
    git(['commit', '-qm', 'head'], ws);
    const origin = stalled.url('acme/kernels.git');
    git(['remote', 'add', 'origin', origin], ws);
    const base = 'b'.repeat(40); // not in this checkout: it must be fetched
    const warnings: string[] = [];
    const run = await fullRun(
      {
        config: loadConfig(ws),
        workspace: ws,
        harnessRoot: ws,
        outDir: join(ws, 'out'),
        mode: 'pr',
        branch: 'feature',
        baseBranch: 'main',
        store: fileBaselineStore(join(ws, 'baselines')),
        baselinePath: undefined,
        saveBaseline: false,
        pairedBase: { sha: base },
        gitTimeoutS: 1,
      },
      {
        exec: actionsExec(),
        lineExec: async (_command, args) => {
          copyFileSync(
            join(repoRoot, 'test', 'fixtures', 'results', 'aa-current.json'),
            args[args.indexOf('--out') + 1]!,
          );
          return 0;
        },
        log: {
          info: () => undefined,
          startGroup: () => undefined,
          endGroup: () => undefined,
          warning: (message: string) => warnings.push(message),
        },
      },
    );
    const note =
      `Paired A/B is off for this run: the base commit bbbbbbbbbbbb is not in the checkout and ` +
      `\`git fetch origin bbbbbbbbbbbb\` from ${origin} failed: it did not finish within 1 s ('git-timeout') ` +
      'and was stopped. Every case is judged against the stored baseline.';
    expect(run.notes[0]).toBe(note);
    expect(warnings).toContain(note);
    expect(execFileSync('git', ['-C', ws, 'worktree', 'list'], { encoding: 'utf8' })).not.toMatch(
      /\.kernelgate/,
    );
  }, 60_000);
});
