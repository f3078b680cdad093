// The data-branch store against a real git remote (a bare repository on disk): round trip, eight
// writers at once, a corrupt record, a record of a newer format, an unreachable remote.
import { mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../src/store/index.js';
import { loadConfig } from '../src/config/index.js';
import { actionsExec } from '../src/lib/index.js';
import { branchStore, recordPath, type BranchStoreOptions } from '../src/history/branch-store.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults } from '../src/results/index.js';
import { storeRun, type FullRun } from '../src/pipeline/index.js';
import {
  bareRemote,
  commitFile,
  git,
  neverForced,
  reflog,
  rerun,
  treeOf,
} from './support/git-remote.js';

const PUSH = loadResults('test/fixtures/recorded/push/results.json.gz');
const PR = loadResults('test/fixtures/recorded/pr/results.json.gz');
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

describe('data-branch store', () => {
  it('stores a compact record and reads it back as the newest baseline', async () => {
    const { remote } = bareRemote();
    const { s, warnings } = store(remote, { runId: '101-1' });
    expect(await s.latest(KEY)).toBeUndefined();
    const older = rerun(PUSH, '2026-11-20T03:17:00Z', 'a'.repeat(40));
    const saved1 = await s.save(KEY, older, { event: 'schedule' });
    const saved2 = await s.save(KEY, PUSH, { event: 'push', artifact: 'https://x/runs/1' });
    expect(saved1).toBe(
      `${BRANCH}:records/H200/main/2026-11/20261120T031700Z-aaaaaaaaaaaa-101-1.json`,
    );
    expect(saved2).toBe(
      `${BRANCH}:records/H200/main/2026-11/20261121T140737Z-329565340326-101-1.json`,
    );
    const newest = await s.latest(KEY);
    expect(newest?.path).toBe(saved2);
    expect(newest?.results.run.git_sha).toBe(PUSH.run.git_sha);
    expect(newest?.results.cases).toHaveLength(PUSH.cases.length);
    const gemm = newest?.results.cases.find(
      (c) => c.variant === 'cublas' && c.case === 'op=matmul,dtype=bf16,M=8192,N=8192,K=8192',
    );
    expect(gemm?.timing?.median_ms).toBe(1.6717);
    expect(gemm?.timing?.samples_ms).toEqual([]);
    expect(gemm?.timing?.n_samples).toBe(26);
    // The record is small: under 1/15 of the results file before git compresses it.
    const blob = git([
      '--git-dir',
      remote,
      'cat-file',
      '-s',
      `refs/heads/${BRANCH}:${saved2.slice(BRANCH.length + 1)}`,
    ]);
    expect(Number(blob)).toBeLessThan(927115 / 15);
    const history = await s.history(KEY, 30);
    expect(history.map((h) => h.results.run.git_sha)).toEqual([PUSH.run.git_sha, 'a'.repeat(40)]);
    expect((await s.records({ branch: 'main', sku: 'H100-SXM' }, 5)).length).toBe(0);
    expect(warnings).toEqual([]);
  });

  it('judges a pull request against a record: the A/A pair comes out without a regression', async () => {
    const { remote } = bareRemote();
    const { s } = store(remote);
    await s.save(KEY, PUSH, {});
    const baseline = await s.latest(KEY);
    const config = loadConfig('.');
    const { verdict, comparison } = judgeWith(PR, baseline!.results, config);
    expect(comparison.notes.join('\n')).toContain('The baseline is a record of the history');
    expect(verdict.counts.slower).toBe(0);
    expect(verdict.counts.same).toBeGreaterThan(150);
    expect(verdict.verdict).toBe('pass');
  });

  it('refuses a record from the future by name, and keeps the judgement of each record', async () => {
    const { remote } = bareRemote();
    const { s, warnings } = store(remote, { runId: '7' });
    const good = rerun(PUSH, '2026-11-20T03:17:00Z', 'a'.repeat(40));
    await s.save(KEY, good, { event: 'push', verdict: 'pass' });
    const pinned = await s.save(KEY, rerun(PUSH, '2099-01-01T00:00:00Z', 'b'.repeat(40)), {
      event: 'push',
      verdict: 'pass',
    });
    const newest = await s.latest(KEY);
    expect(newest?.results.run.git_sha).toBe('a'.repeat(40));
    expect(newest?.judged).toEqual({ verdict: 'pass', slower: [], event: 'push' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      `kernelgate history: refused ${pinned.slice(BRANCH.length + 1)}: it says it started at ` +
        "2099-01-01T00:00:00Z, after this machine's clock (",
    );
  });

  it('eight writers storing at once leave eight records and no forced update', async () => {
    const { remote } = bareRemote();
    const runs = Array.from({ length: 8 }, (_, i) =>
      rerun(PUSH, `2026-11-1${i}T03:17:00Z`, `${i}`.repeat(40), `${900 + i}`),
    );
    const writers = runs.map(() => store(remote).s);
    const saved = await Promise.all(writers.map((w, i) => w.save(KEY, runs[i]!, {})));
    expect(new Set(saved).size).toBe(8);
    const files = [...treeOf(remote, BRANCH).keys()].filter((p) => p.startsWith('records/'));
    expect(files.sort()).toEqual(saved.map((p) => p.slice(BRANCH.length + 1)).sort());
    // Every update of the branch was a fast-forward: each old tip is an ancestor of the new one.
    expect(reflog(remote, BRANCH).length).toBe(8);
    expect(neverForced(remote, BRANCH)).toBe(true);
    expect(git(['--git-dir', remote, 'rev-list', '--count', `refs/heads/${BRANCH}`]).trim()).toBe(
      '8',
    );
    const read = await store(remote).s.history(KEY, 30);
    expect(read.map((r) => r.results.run.id)).toEqual(runs.map((r) => r.run.id).reverse());
  }, 60_000);

  it('skips a corrupt record with a warning naming it, and loses nothing when it stores next', async () => {
    const { remote } = bareRemote();
    const { s } = store(remote);
    await s.save(KEY, rerun(PUSH, '2026-11-20T03:17:00Z', 'a'.repeat(40), 'n1'), {});
    const corrupt = 'records/H200/main/2026-11/20261122T031700Z-bbbbbbbbbbbb-n2.json';
    commitFile(remote, BRANCH, corrupt, '{"format":"kernelgate/history@1","run":{"bra');
    const before = treeOf(remote, BRANCH);

    const reader = store(remote);
    const newest = await reader.s.latest(KEY);
    expect(reader.warnings).toEqual([
      `kernelgate history: skipped ${corrupt}: not valid JSON (Unterminated string in JSON at position 44)`,
    ]);
    expect(newest?.results.run.id).toBe('n1');

    // The verdict does not depend on the corrupt file: judged against the record before it.
    const config = loadConfig('.');
    const clean = store(remote);
    const direct = judgeWith(PR, newest!.results, config).verdict;
    expect(direct.verdict).toBe('pass');

    await clean.s.save(KEY, rerun(PUSH, '2026-11-23T03:17:00Z', 'c'.repeat(40), 'n3'), {});
    const after = treeOf(remote, BRANCH);
    for (const [path, blob] of before) expect(after.get(path)).toBe(blob);
    expect(after.size).toBe(before.size + 1);
    expect(neverForced(remote, BRANCH)).toBe(true);
  }, 60_000);

  it('refuses a record of a newer format, saying so, and skips a foreign file', async () => {
    const { remote } = bareRemote();
    const { s } = store(remote);
    await s.save(KEY, rerun(PUSH, '2026-11-20T03:17:00Z', 'a'.repeat(40), 'n1'), {});
    const newer = 'records/H200/main/2026-11/20261122T031700Z-bbbbbbbbbbbb-n2.json';
    const foreign = 'records/H200/main/2026-11/20261123T031700Z-cccccccccccc-n3.json';
    commitFile(remote, BRANCH, newer, '{"format":"kernelgate/history@2","run":{}}\n');
    commitFile(remote, BRANCH, foreign, '{"name":"benchmark data","entries":[]}\n');
    const reader = store(remote);
    const newest = await reader.s.latest(KEY);
    expect(newest?.results.run.id).toBe('n1');
    expect(reader.warnings).toEqual([
      `kernelgate history: skipped ${foreign}: not a kernelgate history record (format null, expected kernelgate/history@1)`,
      `kernelgate history: refused ${newer}: format kernelgate/history@2 is newer than this kernelgate reads (kernelgate/history@1): not used; update kernelgate to read it`,
    ]);
  }, 60_000);

  it('an unreachable remote: a warning, no baseline, nothing stored, the verdict unchanged, the history intact', async () => {
    const { dir, remote } = bareRemote();
    await store(remote).s.save(KEY, rerun(PUSH, '2026-11-20T03:17:00Z', 'a'.repeat(40), 'n1'), {});
    const before = treeOf(remote, BRANCH);
    const tipBefore = git(['--git-dir', remote, 'rev-parse', `refs/heads/${BRANCH}`]);
    const away = join(dir, 'away.git');
    renameSync(remote, away); // the network is down

    const { s, warnings } = store(remote);
    expect(await s.latest(KEY)).toBeUndefined();
    expect(warnings).toEqual([
      `kernelgate history: cannot read branch kernelgate-data of ${remote}: fatal: '${remote}' does not appear to be a git repository. No baseline or trend is taken from the history in this run.`,
    ]);
    const run: FullRun = {
      results: PR,
      resultsPath: 'results.json',
      baseline: undefined,
      pendingBaseline: { store: s, branch: 'main', sku: 'H200' },
      notes: [],
    };
    const stored = await storeRun(run, 'pass', 'passing');
    expect(stored).toEqual({
      note: `kernelgate history: this run was not stored on branch kernelgate-data of ${remote}: cannot read it (fatal: '${remote}' does not appear to be a git repository)`,
      failed: true,
    });
    await expect(s.save(KEY, PR, {})).rejects.toBeInstanceOf(StoreError);

    renameSync(away, remote); // back: every earlier record is byte-identical, nothing was added
    expect(git(['--git-dir', remote, 'rev-parse', `refs/heads/${BRANCH}`])).toBe(tipBefore);
    expect(treeOf(remote, BRANCH)).toEqual(before);
  }, 60_000);

  it('a retried step stores its run once', async () => {
    const { remote } = bareRemote();
    const { s } = store(remote, { runId: '7-1' });
    const a = await s.save(KEY, PUSH, {});
    const b = await s.save(KEY, PUSH, {});
    expect(b).toBe(a);
    expect([...treeOf(remote, BRANCH).keys()]).toEqual(['README.md', recordPath(KEY, PUSH, '7-1')]);
  }, 30_000);
});

function judgeWith(
  results: ReturnType<typeof loadResults>,
  baseline: ReturnType<typeof loadResults>,
  config: ReturnType<typeof loadConfig>,
) {
  return judge(results, baseline, config, 'pr');
}
