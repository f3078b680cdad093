// The action with `history: branch` against a real git remote (a bare repository on disk): a push
// stores its record on the data branch, a pull request is judged against it and writes nothing,
// the nightly appends, and an unreachable remote leaves a warning and the same verdict.
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gitAuthEnv, pullRequestEvent, readHistoryInputs } from '../src/history/action.js';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { run, type RunDeps } from '../src/action/index.js';
import { loadResults, readResultsText } from '../src/results/index.js';
import { bareRemote, git, neverForced, treeOf } from './support/git-remote.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const recorded = (run: string) =>
  join(repoRoot, 'test', 'fixtures', 'recorded', run, 'results.json.gz');
const event = (file: string) => join(repoRoot, 'test', 'fixtures', 'events', file);
const BRANCH = 'kernelgate-data';

async function action(opts: {
  eventName: string;
  eventFile: string;
  ref: string;
  inputs: Record<string, string>;
  runId: string;
}) {
  const workspace = mkdtempSync(join(tmpdir(), 'kg-ws-'));
  const outputs: Record<string, string> = {};
  const warnings: string[] = [];
  const infos: string[] = [];
  const failed: string[] = [];
  const inputs: Record<string, string> = {
    config: repoRoot,
    comment: 'false',
    'report-dir': '.kernelgate/report',
    history: 'branch',
    ...opts.inputs,
  };
  const deps: RunDeps = {
    core: {
      getInput: (name) => inputs[name] ?? '',
      setOutput: (name, value) => {
        outputs[name] = value;
      },
      setFailed: (message) => failed.push(message),
      warning: (message) => warnings.push(message),
      info: (message) => infos.push(message),
      appendSummary: async () => undefined,
      annotate: () => undefined,
    },
    env: {
      GITHUB_EVENT_NAME: opts.eventName,
      GITHUB_EVENT_PATH: opts.eventFile,
      GITHUB_REPOSITORY: 'acme/kernels',
      GITHUB_SHA: '4bd3c1e0a7f94c2d8e6b5a3f2c1d0e9f8a7b6c5d',
      GITHUB_REF: opts.ref,
      GITHUB_RUN_ID: opts.runId,
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_WORKSPACE: workspace,
      RUNNER_TEMP: mkdtempSync(join(tmpdir(), 'kg-runner-temp-')),
    },
    createClient: () => {
      throw new Error('no GitHub client in this test');
    },
    fs: { mkdir, writeFile: (path, data) => writeFile(path, data, 'utf8') },
    measure: async () => {
      throw new Error('this test judges results given as an input');
    },
  };
  await run(deps);
  return { outputs, warnings, infos, failed, workspace };
}

describe('the action with history: branch', () => {
  it('push stores, a pull request reads and writes nothing, the nightly appends; never forced', async () => {
    const { remote } = bareRemote();
    const push = await action({
      eventName: 'push',
      eventFile: event('push.main.json'),
      ref: 'refs/heads/main',
      inputs: { results: recorded('push'), 'history-remote': remote },
      runId: '100',
    });
    expect(push.failed).toEqual([]);
    expect(push.outputs['verdict']).toBe('pass');
    expect(push.warnings).toContain(
      'No stored baseline for branch main on H200: every case is NEW. Baselines are written by trusted runs (push to the branch, schedule); run one first.',
    );
    const pushed = 'records/H200/main/2026-11/20261121T140737Z-329565340326-100-1.json';
    expect(push.infos).toContain(`Stored as the newest baseline: ${BRANCH}:${pushed}`);
    // The exports, next to the report, named by the outputs.
    for (const format of ['bmf', 'gab-smaller', 'gab-bigger']) {
      const path = push.outputs[`${format}-path`];
      expect(path).toBe(join(push.workspace, '.kernelgate', 'report', `${format}.json`));
      expect(Object.keys(JSON.parse(readFileSync(path!, 'utf8'))).length).toBeGreaterThan(100);
    }
    expect([...treeOf(remote, BRANCH).keys()]).toEqual(['README.md', pushed]);
    // The record keeps the gate's verdicts, the run's event and its page.
    const record = JSON.parse(git(['--git-dir', remote, 'show', `refs/heads/${BRANCH}:${pushed}`]));
    expect(record.run).toMatchObject({
      event: 'push',
      verdict: 'pass',
      artifact: 'https://github.com/acme/kernels/actions/runs/100',
      interval_confidence: 0.99,
    });
    // speed_reference from each kernel.yml (what users call: SDPA's default, dense cuBLAS); gemm
    // names none, so its first reference variant
    expect(record.references).toEqual({
      gemm: 'cublas',
      attention: 'sdpa_default',
      bsr_gemm: 'cublas_dense',
    });
    const verdictAt = record.fields.indexOf('verdict');
    expect(new Set(record.cases.map((row: unknown[]) => row[verdictAt]))).toEqual(
      new Set(['NEW', 'UNTIMED']), // the one skipped case is not timed
    );

    const tip = git(['--git-dir', remote, 'rev-parse', `refs/heads/${BRANCH}`]);
    const pr = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.same-repo.opened.json'),
      ref: 'refs/pull/41/merge',
      inputs: { results: recorded('pr'), 'history-remote': remote, 'save-baseline': 'true' },
      runId: '101',
    });
    expect(pr.failed).toEqual([]);
    expect(pr.outputs['verdict']).toBe('pass');
    expect(pr.infos).toContain(`Baseline: ${BRANCH}:${pushed}`);
    expect(Number(pr.outputs['new'])).toBe(0);
    expect(Number(pr.outputs['slower'])).toBe(0);
    expect(git(['--git-dir', remote, 'rev-parse', `refs/heads/${BRANCH}`])).toBe(tip);

    const nightly = await action({
      eventName: 'schedule',
      eventFile: event('schedule.json'),
      ref: 'refs/heads/main',
      inputs: { results: recorded('nightly'), 'history-remote': remote },
      runId: '102',
    });
    expect(nightly.failed).toEqual([]);
    expect(nightly.infos).toContain(`Baseline: ${BRANCH}:${pushed}`);
    expect(treeOf(remote, BRANCH).size).toBe(3);
    expect(neverForced(remote, BRANCH)).toBe(true);
  }, 120_000);

  it('an unreachable remote: a warning, the same verdict, nothing written', async () => {
    const { dir, remote } = bareRemote();
    const args = {
      eventName: 'push',
      eventFile: event('push.main.json'),
      ref: 'refs/heads/main',
      runId: '200',
    };
    const away = join(dir, 'away.git');
    renameSync(remote, away);
    const down = await action({
      ...args,
      inputs: { results: recorded('push'), 'history-remote': remote },
    });
    renameSync(away, remote);
    const up = await action({
      ...args,
      inputs: { results: recorded('push'), 'history-remote': remote },
    });
    expect(down.failed).toEqual([]);
    expect(down.outputs['verdict']).toBe(up.outputs['verdict']);
    expect(down.warnings).toContain(
      `kernelgate history: cannot read branch kernelgate-data of ${remote}: fatal: '${remote}' does not appear to be a git repository. No baseline or trend is taken from the history in this run.`,
    );
    expect(down.warnings).toContain(
      `kernelgate history: this run was not stored on branch kernelgate-data of ${remote}: cannot read it (fatal: '${remote}' does not appear to be a git repository)`,
    );
    expect(treeOf(remote, BRANCH).size).toBe(2); // the README and the run stored while it was up
  }, 120_000);
});

describe('the nightly report reads its trends from the data branch', () => {
  it('two stored pushes, then the nightly: its report draws each headline across them', async () => {
    const { remote } = bareRemote();
    const dir = mkdtempSync(join(tmpdir(), 'kg-runs-'));
    const dated = (run: string, startedAt: string) => {
      const file = join(dir, `${run}.json`);
      const results = JSON.parse(readResultsText(recorded(run)));
      results.run.started_at = startedAt;
      writeFileSync(file, JSON.stringify(results));
      return file;
    };
    for (const [i, [run, at]] of [
      ['main-1355', '2026-11-20T03:17:00Z'],
      ['push', '2026-11-21T03:17:00Z'],
    ].entries()) {
      const stored = await action({
        eventName: 'push',
        eventFile: event('push.main.json'),
        ref: 'refs/heads/main',
        inputs: { results: dated(run!, at!), 'history-remote': remote },
        runId: `40${i}`,
      });
      expect(stored.failed).toEqual([]);
    }
    const nightly = await action({
      eventName: 'schedule',
      eventFile: event('schedule.json'),
      ref: 'refs/heads/main',
      inputs: { results: dated('nightly', '2026-11-22T03:17:00Z'), 'history-remote': remote },
      runId: '402',
    });
    expect(nightly.failed).toEqual([]);
    const report = readFileSync(
      join(nightly.workspace, '.kernelgate', 'report', 'report.md'),
      'utf8',
    );
    const trends = (text: string) =>
      text
        .split('\n')
        .filter(
          (l) => l.startsWith('| headline (graded tonight)') || /^\| \w+ \([\w\\]+\) \| `/.test(l),
        );
    // The same trends as from the full results files of those runs: the records carry what the
    // tiers grade (medians, throughput, params, ceilings). attention grades a headline; its row
    // has the two stored runs and tonight's.
    const full = judge(
      loadResults(dated('nightly', '2026-11-22T03:17:00Z')),
      undefined,
      loadConfig(repoRoot),
      'nightly',
      undefined,
      [dated('main-1355', '2026-11-20T03:17:00Z'), dated('push', '2026-11-21T03:17:00Z')].map((f) =>
        loadResults(f),
      ),
    ).rendered.full;
    expect(trends(report)).toEqual(trends(full));
    expect(trends(report)).toHaveLength(2);
    // three points: the two stored runs (said above the table) and tonight's
    expect(report).toContain('Each headline over the 2 stored runs since ');
    expect(trends(report)[1]).toMatch(/^\| attention \(cuda\\_fa\\_wgmma\) \| `[▁▂▃▄▅▆▇█]{3}` /);
    expect(treeOf(remote, BRANCH).size).toBe(4);
  }, 120_000);
});

describe('pull request code never writes', () => {
  it('a pull_request run with mode: push reads the branch and stores nothing', async () => {
    const { remote } = bareRemote();
    const pr = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.same-repo.opened.json'),
      ref: 'refs/pull/41/merge',
      inputs: { results: recorded('pr'), 'history-remote': remote, mode: 'push' },
      runId: '300',
    });
    expect(pr.failed).toEqual([]);
    expect(git(['--git-dir', remote, 'for-each-ref'])).toBe('');
    expect(pullRequestEvent({ name: 'pull_request_target', payload: {} })).toBe(true);
    expect(
      pullRequestEvent({
        name: 'workflow_run',
        payload: { workflow_run: { event: 'pull_request' } },
      }),
    ).toBe(true);
    expect(
      pullRequestEvent({ name: 'workflow_run', payload: { workflow_run: { event: 'push' } } }),
    ).toBe(false);
    expect(pullRequestEvent({ name: 'schedule', payload: {} })).toBe(false);
  }, 60_000);
});

describe('history inputs', () => {
  it('reads the store kind, the branch and the remote, and refuses bad values by name', () => {
    const read = (inputs: Record<string, string>) => readHistoryInputs((n) => inputs[n] ?? '');
    expect(read({})).toEqual({ kind: 'dir', branch: 'kernelgate-data', remote: undefined });
    expect(read({ history: 'branch', 'history-branch': 'perf/history' })).toEqual({
      kind: 'branch',
      branch: 'perf/history',
      remote: undefined,
    });
    expect(() => read({ history: 'cache' })).toThrow(
      "Input 'history' must be one of dir, branch; got 'cache'.",
    );
    expect(() => read({ 'history-branch': '+main' })).toThrow(
      /Input 'history-branch' must be a branch name/,
    );
    expect(() => read({ 'history-branch': 'a..b' })).toThrow(/Input 'history-branch'/);
  });

  it('sends the token to this server only, in the environment', () => {
    const env = gitAuthEnv('https://github.com/acme/kernels.git', 'tok', 'https://github.com');
    expect(env).toEqual({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.https://github.com/.extraheader',
      GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${Buffer.from('x-access-token:tok').toString('base64')}`,
    });
    expect(
      gitAuthEnv('https://evil.example/acme/kernels.git', 'tok', 'https://github.com'),
    ).toEqual({});
    expect(gitAuthEnv('/srv/git/kernels.git', 'tok', 'https://github.com')).toEqual({});
    expect(
      gitAuthEnv('https://github.com.evil.example/x.git', 'tok', 'https://github.com'),
    ).toEqual({});
  });
});
