// Issue 18, "Done when" 1, end to end: the bundled action (dist/index.js, built from src/) as a
// runner runs it, with `history: branch` on a real git remote (a bare repository on disk that
// keeps a reflog of every update). Eight trusted runs storing at the same moment (a matrix, a push
// and the nightly) leave eight records and no forced update; a corrupt record on the branch leaves
// a warning naming it, the same verdict and every earlier record byte-identical.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readResultsText, type KernelgateResults } from '../src/results/index.js';
import {
  annotations,
  buildBundle,
  runBundledAction,
  type ActionRun,
} from './support/bundled-action.js';
import {
  bareRemote,
  commitFile,
  git,
  neverForced,
  reflog,
  rerun,
  treeOf,
} from './support/git-remote.js';
import { GitHubServer } from './support/github-server.js';
import { userRepoCheckout } from './support/user-repo.js';
import { planShards, splitResults, unitsOfResults } from '../src/shard/index.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const recorded = (run: string): KernelgateResults =>
  JSON.parse(
    readResultsText(join(repoRoot, 'test', 'fixtures', 'recorded', run, 'results.json.gz')),
  ) as KernelgateResults;
const event = (file: string) => join(repoRoot, 'test', 'fixtures', 'events', file);
const BRANCH = 'kernelgate-data';
const PUSH = recorded('push');
const PR = recorded('pr');

let bundleDir: string;
let server: GitHubServer;
const scratch = mkdtempSync(join(tmpdir(), 'kg-history-e2e-'));

beforeAll(async () => {
  bundleDir = await buildBundle(repoRoot);
}, 180_000);

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
});

afterEach(async () => {
  await server.close();
  server.assertValid();
});

function action(
  kind: 'push' | 'pull_request',
  results: KernelgateResults,
  runId: string,
  remote: string,
  at: { workspace?: string; eventFile?: string } = {},
): Promise<ActionRun> {
  const file = join(scratch, `${runId}.json`);
  writeFileSync(file, JSON.stringify(results));
  return runBundledAction({
    bundleDir,
    apiUrl: server.url,
    eventName: kind,
    eventFile:
      at.eventFile ??
      event(kind === 'push' ? 'push.main.json' : 'pull_request.same-repo.opened.json'),
    ...(at.workspace !== undefined ? { workspace: at.workspace } : {}),
    ref: kind === 'push' ? 'refs/heads/main' : 'refs/pull/41/merge',
    sha: results.run.git_sha ?? '0'.repeat(40),
    runId,
    inputs: {
      token: 'write-token',
      config: repoRoot,
      mode: 'auto',
      // The verdict and the store are what this test is about; publishing has its own tests.
      comment: 'false',
      'report-dir': '.kernelgate/report',
      results: file,
      history: 'branch',
      'history-remote': remote,
    },
  });
}

const records = (remote: string) =>
  new Map([...treeOf(remote, BRANCH)].filter(([path]) => path.startsWith('records/')));

describe('the bundled action with history: branch', () => {
  it('eight trusted runs storing at once leave eight records and no forced update', async () => {
    const { remote } = bareRemote();
    const first = await action(
      'push',
      rerun(PUSH, '2026-11-19T03:17:00Z', 'f'.repeat(40)),
      '800',
      remote,
    );
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = records(remote);
    expect(before.size).toBe(1);

    // Eight runs of eight commits, started together: each races the others to the branch's tip.
    const runs = Array.from({ length: 8 }, (_, i) =>
      rerun(PUSH, `2026-11-20T0${i}:17:00Z`, `${i + 1}`.repeat(40)),
    );
    const done = await Promise.all(runs.map((r, i) => action('push', r, `81${i}`, remote)));
    for (const [i, run] of done.entries()) {
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(annotations(run.stdout, 'error')).toEqual([]);
      expect(run.outputs['verdict']).toBe('pass');
      expect(run.stdout).toContain(
        `Stored as the newest baseline: ${BRANCH}:records/H200/main/2026-11/20261120T0${i}1700Z-${`${i + 1}`.repeat(12)}-81${i}-1.json`,
      );
    }
    // They did race: some lost a push to another and built again on the new tip.
    const retries = done.filter((r) => r.stdout.includes('the tip moved while storing')).length;
    expect(retries).toBeGreaterThan(0); // 4 and 6 of 8 in two runs on a 2-core machine
    const after = records(remote);
    expect(after.size).toBe(1 + 8);
    // The earlier record is byte-identical (the same blob), and every update was a fast-forward.
    for (const [path, blob] of before) expect(after.get(path)).toBe(blob);
    expect(reflog(remote, BRANCH)).toHaveLength(1 + 8);
    expect(neverForced(remote, BRANCH)).toBe(true);
    expect(git(['--git-dir', remote, 'rev-list', '--count', `refs/heads/${BRANCH}`]).trim()).toBe(
      '9',
    );
    expect(server.requests).toEqual([]); // pushes publish nothing
  }, 300_000);

  it('a corrupt record: a warning naming it, the same verdict, earlier records byte-identical', async () => {
    const { remote } = bareRemote();
    const stored = await action('push', PUSH, '900', remote);
    expect(stored.code, stored.stdout + stored.stderr).toBe(0);
    const clean = await action('pull_request', PR, '901', remote);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);

    // A record cut short (a truncated write, a hand edit), newer than the good one.
    const corrupt = 'records/H200/main/2026-11/20261122T031700Z-bbbbbbbbbbbb-n2.json';
    commitFile(remote, BRANCH, corrupt, '{"format":"kernelgate/history@1","run":{"bra');
    const before = treeOf(remote, BRANCH);

    const pr = await action('pull_request', PR, '902', remote);
    expect(pr.code, pr.stdout + pr.stderr).toBe(0);
    const warning = `kernelgate history: skipped ${corrupt}: not valid JSON (Unterminated string in JSON at position 44)`;
    expect(annotations(pr.stdout, 'warning')).toContain(warning);
    // Judged against the same good record as before the corruption: the same verdict and counts.
    for (const output of ['verdict', 'failed', 'drift', 'slower', 'faster', 'new', 'missing'])
      expect(pr.outputs[output], output).toBe(clean.outputs[output]);
    expect(pr.stdout).toContain(
      `Baseline: ${BRANCH}:records/H200/main/2026-11/20261121T140737Z-329565340326-900-1.json`,
    );
    expect(treeOf(remote, BRANCH)).toEqual(before); // a pull request writes nothing

    // The next trusted run warns the same way and adds its record, losing nothing.
    const next = await action(
      'push',
      rerun(PUSH, '2026-11-23T03:17:00Z', 'c'.repeat(40)),
      '903',
      remote,
    );
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(annotations(next.stdout, 'warning')).toContain(warning);
    const after = treeOf(remote, BRANCH);
    for (const [path, blob] of before) expect(after.get(path)).toBe(blob);
    expect(after.size).toBe(before.size + 1);
    expect(neverForced(remote, BRANCH)).toBe(true);
  }, 300_000);
});

/**
 * Issue 26: a pull request judged from a results file an earlier job wrote (the split workflow's
 * `judge` job), and the merged matrix run, take the nearest stored ancestor of the pull request's
 * base commit as their stored baseline, not the newest record by a runner's clock. The workspace
 * is a real git checkout (test/support/user-repo.ts) with a second line of history beside main.
 */
describe('a pull request judged from stored records: the baseline by commit ancestry', () => {
  const ws = userRepoCheckout();
  const c2 = (ws.git('commit', '-q', '--allow-empty', '-m', 'c2'), ws.git('rev-parse', 'HEAD'));
  ws.git('checkout', '-q', '-b', 'old', 'HEAD~1');
  const other =
    (ws.git('commit', '-q', '--allow-empty', '-m', 'rewritten'), ws.git('rev-parse', 'HEAD'));
  ws.git('checkout', '-q', 'main');
  const c3 = (ws.git('commit', '-q', '--allow-empty', '-m', 'c3'), ws.git('rev-parse', 'HEAD'));
  const short = (sha: string) => sha.slice(0, 12);
  // The pull request's base is c3 on main.
  const payload = JSON.parse(readFileSync(event('pull_request.same-repo.opened.json'), 'utf8'));
  payload.pull_request.base.sha = c3;
  const eventFile = join(scratch, 'pull_request.base-c3.json');
  writeFileSync(eventFile, JSON.stringify(payload));

  /** The data branch: a run of c2, then a newer-by-clock run of the other line. */
  async function seeded() {
    const { remote } = bareRemote();
    for (const [sha, at, runId] of [
      [c2, '2026-11-20T10:00:00Z', '950'],
      [other, '2026-11-22T10:00:00Z', '951'],
    ] as const) {
      const stored = await action('push', rerun(PUSH, at, sha), runId, remote);
      expect(stored.code, stored.stdout + stored.stderr).toBe(0);
    }
    const record = (sha: string, at: string, runId: string) =>
      `${BRANCH}:records/H200/main/2026-11/${at}-${short(sha)}-${runId}-1.json`;
    const ancestor = record(c2, '20261120T100000Z', '950');
    const newer = record(other, '20261122T100000Z', '951');
    return {
      remote,
      ancestor,
      lines: [
        `kernelgate: stored baseline: passed over ${short(other)} (run of 2026-11-22T10:00:00Z, ${newer}): its commit is not an ancestor of the pull request's base ${short(c3)} (a force-pushed branch or another line of history)`,
        `kernelgate: stored baseline: ${short(c2)} (run of 2026-11-20T10:00:00Z, ${ancestor}), the nearest stored ancestor of the pull request's base ${short(c3)} of main on H200`,
      ],
    };
  }
  const infoLines = (stdout: string) =>
    stdout.split('\n').filter((l) => l.startsWith('kernelgate: stored baseline:'));

  it('results: an earlier job wrote, with history: branch', async () => {
    const { remote, ancestor, lines } = await seeded();
    const pr = await action('pull_request', PR, '952', remote, {
      workspace: ws.workspace,
      eventFile,
    });
    expect(pr.code, pr.stdout + pr.stderr).toBe(0);
    expect(infoLines(pr.stdout)).toEqual(lines);
    expect(pr.stdout).toContain(`Baseline: ${ancestor}\n`);
  }, 300_000);

  /** The merge of PR's results in two shards, judged against the data branch of `remote`. */
  function merge(remote: string, runId: string) {
    const plan = planShards(unitsOfResults(PR), 2, { results: PR, path: 'pr.json' });
    const dir = mkdtempSync(join(tmpdir(), 'kg-shards-'));
    for (const index of [1, 2]) {
      mkdirSync(join(dir, `kernelgate-shard-${index}`));
      writeFileSync(
        join(dir, `kernelgate-shard-${index}`, 'results.json'),
        JSON.stringify(splitResults(PR, plan, index)),
      );
    }
    return runBundledAction({
      bundleDir,
      apiUrl: server.url,
      eventName: 'pull_request',
      eventFile,
      workspace: ws.workspace,
      ref: 'refs/pull/41/merge',
      sha: PR.run.git_sha ?? '0'.repeat(40),
      runId,
      inputs: {
        token: 'write-token',
        config: repoRoot,
        mode: 'auto',
        comment: 'false',
        'report-dir': '.kernelgate/report-merge',
        merge: dir,
        shards: '2',
        history: 'branch',
        'history-remote': remote,
      },
    });
  }

  it('the merged matrix run', async () => {
    const { remote, ancestor, lines } = await seeded();
    const merged = await merge(remote, '953');
    expect(merged.code, merged.stdout + merged.stderr).toBe(0);
    expect(infoLines(merged.stdout)).toEqual(lines);
    expect(merged.stdout).toContain(`Baseline: ${ancestor}\n`);
  }, 300_000);

  it('the merged matrix run with no stored ancestor: no stored baseline, and a warning says why', async () => {
    const { remote } = bareRemote();
    const stored = await action('push', rerun(PUSH, '2026-11-22T10:00:00Z', other), '954', remote);
    expect(stored.code, stored.stdout + stored.stderr).toBe(0);
    const merged = await merge(remote, '955');
    expect(annotations(merged.stdout, 'warning')).toContain(
      `No stored run of branch main on H200 is an ancestor of the pull request's base ${short(c3)} (the log names those passed over): every case on it not timed beside the base is NEW.`,
    );
    expect(merged.stdout).not.toContain('Baseline: ');
    // One warning says it: the stored runs passed over are not "no stored baseline".
    expect(merged.stdout).not.toContain('No stored baseline for branch');
    // every timed case is NEW (the one skipped case is not timed)
    expect(Number(merged.outputs['new'])).toBe(PR.cases.filter((c) => c.status === 'ok').length);
  }, 300_000);
});
