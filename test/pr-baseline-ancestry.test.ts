// A pull request's stored baseline ordered by commit ancestry (issue 26): the nearest stored
// ancestor of its base, never the newest by a runner's clock; a run of another line of history
// passed over by name; git that cannot answer falls back to the newest, said in the log. A real
// git repository and the directory store.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actionsExec, type Exec } from '../src/lib/index.js';
import { withStoredBaseline } from '../src/pipeline/index.js';
import { loadResults, type KernelgateResults } from '../src/results/index.js';
import { fileBaselineStore } from '../src/store/index.js';
import { scratchRepo } from './support/git-repo.js';

const FIXTURE = loadResults(join(import.meta.dirname, 'fixtures', 'results', 'baseline.json'));
const KEY = { branch: 'main', sku: 'H100-SXM' };

function repo() {
  const { dir, git, commit } = scratchRepo('kg-ancestry-');
  const c1 = commit('c1');
  const c2 = commit('c2');
  // another line of history from c1: what a force-push left behind
  git('checkout', '-q', '-b', 'old', c1);
  const other = commit('rewritten');
  git('checkout', '-q', 'main');
  const c3 = commit('c3 (the pull request base)');
  return { dir, c1, c2, c3, other };
}

function storeWith(runs: [sha: string, startedAt: string][]) {
  const root = mkdtempSync(join(tmpdir(), 'kg-ancestry-store-'));
  const store = fileBaselineStore(root, { now: () => Date.parse('2030-01-01T00:00:00Z') });
  const paths = runs.map(([sha, startedAt]) => {
    const doc: KernelgateResults = structuredClone(FIXTURE);
    doc.run.git_sha = sha;
    doc.run.started_at = startedAt;
    return store.save(KEY, doc);
  });
  return { store, paths };
}

async function baselineOf(
  store: ReturnType<typeof fileBaselineStore>,
  ancestry: { baseSha: string; workspace: string; exec: Exec; gitTimeoutS?: number },
) {
  const info: string[] = [];
  const notes: string[] = [];
  const run = await withStoredBaseline(
    {
      mode: 'pr',
      branch: undefined,
      baseBranch: 'main',
      store,
      baselinePath: undefined,
      saveBaseline: false,
      ancestry,
    },
    { results: structuredClone(FIXTURE), resultsPath: 'results.json' },
    notes,
    { warning: () => {}, info: (line) => info.push(line) },
  );
  return { baseline: run.baseline, info, notes };
}

describe("a pull request's stored baseline by ancestry", () => {
  const g = repo();
  const exec = actionsExec();
  const short = (sha: string) => sha.slice(0, 12);

  it('takes the nearest stored ancestor of the base, not a newer-by-clock run of another line or a farther ancestor', async () => {
    const { store, paths } = storeWith([
      [g.c2, '2026-11-20T10:00:00Z'], // the nearest ancestor of c3
      [g.c1, '2026-11-21T10:00:00Z'], // an ancestor, farther, stored later
      [g.other, '2026-11-22T10:00:00Z'], // the newest by its clock: not an ancestor
    ]);
    const got = await baselineOf(store, { baseSha: g.c3, workspace: g.dir, exec });
    expect(got.baseline?.results.run.git_sha).toBe(g.c2);
    expect(got.info).toEqual([
      `kernelgate: stored baseline: passed over ${short(g.other)} (run of 2026-11-22T10:00:00Z, ${paths[2]}): its commit is not an ancestor of the pull request's base ${short(g.c3)} (a force-pushed branch or another line of history)`,
      `kernelgate: stored baseline: ${short(g.c2)} (run of 2026-11-20T10:00:00Z, ${paths[0]}), the nearest stored ancestor of the pull request's base ${short(g.c3)} of main on H100-SXM`,
    ]);
    expect(got.notes).toEqual([]);
    // what the clock alone picked before
    expect(store.latest(KEY)?.results.run.git_sha).toBe(g.other);
  });

  it('takes the newer of two runs of one commit', async () => {
    const { store, paths } = storeWith([
      [g.c2, '2026-11-20T10:00:00Z'],
      [g.c2, '2026-11-20T11:00:00Z'],
    ]);
    const got = await baselineOf(store, { baseSha: g.c3, workspace: g.dir, exec });
    expect(got.baseline?.path).toBe(paths[1]);
  });

  it('with no stored ancestor, no stored baseline, and a note says why', async () => {
    const { store } = storeWith([[g.other, '2026-11-22T10:00:00Z']]);
    const got = await baselineOf(store, { baseSha: g.c3, workspace: g.dir, exec });
    expect(got.baseline).toBeUndefined();
    expect(got.notes).toEqual([
      `No stored run of branch main on H100-SXM is an ancestor of the pull request's base ${short(g.c3)} (the log names those passed over): every case not timed beside the base is NEW.`,
    ]);
  });

  it('in a shallow clone, falls back to the newest by its start time and says so', async () => {
    const shallow = mkdtempSync(join(tmpdir(), 'kg-ancestry-shallow-'));
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${g.dir}`, shallow]);
    const { store, paths } = storeWith([
      [g.c2, '2026-11-20T10:00:00Z'],
      [g.other, '2026-11-22T10:00:00Z'],
    ]);
    const got = await baselineOf(store, { baseSha: g.c3, workspace: shallow, exec });
    expect(got.baseline?.results.run.git_sha).toBe(g.other);
    expect(got.info).toHaveLength(1);
    expect(got.info[0]).toMatch(
      new RegExp(
        `^kernelgate: stored baseline: git cannot tell whether ${short(g.other)} is an ancestor of the pull request's base ${short(g.c3)} \\(git merge-base exited 128: .+\\): the newest stored run by its start time is the baseline, ${short(g.other)} \\(run of 2026-11-22T10:00:00Z, ${paths[1]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)$`,
      ),
    );
  });

  it("when git does not answer within 'git-timeout', falls back and says so", async () => {
    const { store, paths } = storeWith([
      [g.c2, '2026-11-20T10:00:00Z'],
      [g.other, '2026-11-22T10:00:00Z'],
    ]);
    const stalled: Exec = {
      run: () => Promise.resolve({ exitCode: 124, stdout: '', stderr: '', timedOut: true }),
    };
    const got = await baselineOf(store, {
      baseSha: g.c3,
      workspace: g.dir,
      exec: stalled,
      gitTimeoutS: 5,
    });
    expect(got.baseline?.results.run.git_sha).toBe(g.other);
    expect(got.info).toEqual([
      `kernelgate: stored baseline: git cannot tell whether ${short(g.other)} is an ancestor of the pull request's base ${short(g.c3)} (git merge-base did not finish within 5 s): the newest stored run by its start time is the baseline, ${short(g.other)} (run of 2026-11-22T10:00:00Z, ${paths[1]})`,
    ]);
  });
});
