// Writing the data branch when it is contended or refused (issue 26): sixteen writers at once, a
// race lost for longer than the budget, and a push the server refuses (a ruleset's GH013), at the
// store and through the bundled action (its warning, outputs and job summary).
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { branchStore, type BranchStoreOptions } from '../src/history/branch-store.js';
import { actionsExec, type Exec } from '../src/lib/index.js';
import { loadResults } from '../src/results/index.js';
import { storeRun, type FullRun } from '../src/pipeline/index.js';
import { unstoredSummary } from '../src/action/main.js';
import { annotations, buildBundle, runBundledAction } from './support/bundled-action.js';
import { bareRemote, git, neverForced, reflog, rerun, treeOf } from './support/git-remote.js';
import { GitHubServer } from './support/github-server.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const PUSH = loadResults('test/fixtures/recorded/push/results.json.gz');
const KEY = { branch: 'main', sku: 'H200' };
const BRANCH = 'kernelgate-data';

function store(remote: string, extra: Partial<BranchStoreOptions> = {}) {
  const warnings: string[] = [];
  const s = branchStore({
    remote,
    cacheDir: join(mkdtempSync(join(tmpdir(), 'kg-cache-')), 'history.git'),
    exec: actionsExec(),
    warn: (m) => warnings.push(m),
    kernelgateVersion: '0.1.0',
    sleep: async () => undefined,
    ...extra,
  });
  return { s, warnings };
}

/** What GitHub answers a push that a ruleset forbids, from a pre-receive hook of the bare remote. */
function refusingRemote(): string {
  const { remote } = bareRemote();
  const hook = join(remote, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    [
      '#!/bin/sh',
      'echo "error: GH013: Repository rule violations found for refs/heads/kernelgate-data." >&2',
      'echo "Review all repository rules at https://github.com/acme/kernels/rules?ref=refs%2Fheads%2Fkernelgate-data" >&2',
      'echo "" >&2',
      'echo "- Cannot update this protected ref." >&2',
      'exit 1',
      '',
    ].join('\n'),
  );
  chmodSync(hook, 0o755);
  return remote;
}

const refused = (remote: string) =>
  `kernelgate history: this run was not stored on branch kernelgate-data of ${remote}: git push was refused: ` +
  '[remote rejected] (pre-receive hook declined). The server said:\n' +
  'remote: error: GH013: Repository rule violations found for refs/heads/kernelgate-data.\n' +
  'remote: Review all repository rules at https://github.com/acme/kernels/rules?ref=refs%2Fheads%2Fkernelgate-data\n' +
  'remote: - Cannot update this protected ref.';

describe('writing the data branch', () => {
  it('sixteen writers storing at once leave sixteen records and no forced update', async () => {
    const { remote } = bareRemote();
    const runs = Array.from({ length: 16 }, (_, i) =>
      rerun(PUSH, `2026-11-${String(10 + i)}T03:17:00Z`, i.toString(16).repeat(40), `${900 + i}`),
    );
    // The store's own backoff, with jitter and real waits (the default sleep and random).
    const writers = runs.map(() => store(remote, { sleep: undefined }).s);
    const saved = await Promise.all(writers.map((w, i) => w.save(KEY, runs[i]!, {})));
    expect(new Set(saved).size).toBe(16);
    const files = [...treeOf(remote, BRANCH).keys()].filter((p) => p.startsWith('records/'));
    expect(files.sort()).toEqual(saved.map((p) => p.slice(BRANCH.length + 1)).sort());
    expect(reflog(remote, BRANCH).length).toBe(16);
    expect(neverForced(remote, BRANCH)).toBe(true);
    const read = await store(remote).s.history(KEY, 30);
    expect(read.map((r) => r.results.run.id)).toEqual(runs.map((r) => r.run.id).reverse());
    // About 45 s on two cores (each try is a dozen git processes); the limit is for a slow machine,
    // the assertions are on the records.
  }, 600_000);

  it('a race lost until the budget is spent: not stored, saying how long it tried', async () => {
    const { remote } = bareRemote();
    await store(remote).s.save(KEY, rerun(PUSH, '2026-11-20T03:17:00Z', 'a'.repeat(40), 'n1'), {});
    const real = actionsExec();
    // Every push loses: another writer always got there first. The clock is the sleeps' sum:
    // 0.5, 1, 2 and 4 s of backoff, then the next 8 s would pass the 10 s budget.
    const exec: Exec = {
      run: (command, args, options) =>
        args.includes('push')
          ? Promise.resolve({
              exitCode: 1,
              stdout: `To ${remote}\n!\trefs/heads/x:refs/heads/${BRANCH}\t[rejected] (fetch first)\nDone\n`,
              stderr: `error: failed to push some refs to '${remote}'\n`,
            })
          : real.run(command, args, options),
    };
    let now = 0;
    const { s } = store(remote, {
      exec,
      raceBudgetMs: 10_000,
      nowMs: () => now,
      sleep: async (ms) => {
        now += ms;
      },
      random: () => 0.5,
    });
    const run: FullRun = {
      results: rerun(PUSH, '2026-11-21T03:17:00Z', 'b'.repeat(40), 'n2'),
      resultsPath: 'results.json',
      baseline: undefined,
      pendingBaseline: { store: s, branch: 'main', sku: 'H200' },
      notes: [],
    };
    expect(await storeRun(run, 'pass', 'passing')).toEqual({
      note:
        `kernelgate history: this run was not stored on branch kernelgate-data of ${remote}: the tip kept moving: ` +
        `5 attempts in 8 s lost the race to other writers (error: failed to push some refs to '${remote}'); ` +
        'kernelgate tries for 10 s',
      failed: true,
    });
  }, 60_000);

  it("a push the server refuses keeps the server's reason (GH013)", async () => {
    const remote = refusingRemote();
    const { s } = store(remote);
    const run: FullRun = {
      results: PUSH,
      resultsPath: 'results.json',
      baseline: undefined,
      pendingBaseline: { store: s, branch: 'main', sku: 'H200' },
      notes: [],
    };
    expect(await storeRun(run, 'pass', 'passing')).toEqual({
      note: refused(remote),
      failed: true,
    });
    // One try: a refusal is not a race.
    expect(git(['--git-dir', remote, 'for-each-ref'])).toBe('');
  }, 60_000);
});

describe('the bundled action, its push refused by the server', { timeout: 120_000 }, () => {
  let bundleDir: string;
  let server: GitHubServer;
  beforeAll(async () => {
    bundleDir = await buildBundle(repoRoot);
    server = new GitHubServer();
    await server.start();
  }, 120_000);
  afterAll(async () => {
    await server.close();
    server.assertValid();
  });

  it('warns with the server lines, says so in the summary and the outputs, and keeps the verdict', async () => {
    const remote = refusingRemote();
    const run = await runBundledAction({
      bundleDir,
      apiUrl: server.url,
      eventName: 'push',
      eventFile: join(repoRoot, 'test', 'fixtures', 'events', 'push.main.json'),
      ref: 'refs/heads/main',
      sha: '4bd3c1e0a7f94c2d8e6b5a3f2c1d0e9f8a7b6c5d',
      runId: '8100',
      inputs: {
        token: '',
        config: repoRoot,
        results: join(repoRoot, 'test', 'fixtures', 'recorded', 'push', 'results.json.gz'),
        history: 'branch',
        'history-remote': remote,
        mode: 'auto',
        comment: 'false',
        'report-dir': '.kernelgate/report',
      },
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.outputs['verdict']).toBe('pass');
    expect(annotations(run.stdout, 'warning')).toContain(refused(remote));
    expect(run.outputs['stored']).toBe('');
    expect(run.outputs['store-error']).toBe(refused(remote));
    expect(run.summary).toContain(unstoredSummary(refused(remote)));
    expect(run.summary).toContain('### ⚠️ kernelgate: this run was not stored in the history');
    expect(run.summary).toContain('GH013');
  });
});
