// `kernelgate merge --base-sha` (issue 26): the merged run's stored baseline is chosen by commit
// ancestry like the action's (src/pipeline/pr-baseline.ts): the nearest stored ancestor of the
// pull request's base, a run of another line of history passed over by name, and with the store
// key a planted unsigned record refused although it is the newest ancestor. A real git repository,
// the directory store and the recorded H100 run as the one shard.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../src/cli/index.js';
import { loadResults, type KernelgateResults } from '../src/results/index.js';
import { planShards, splitResults, unitsOfResults } from '../src/shard/index.js';
import { fileBaselineStore } from '../src/store/index.js';
import { scratchRepo } from './support/git-repo.js';

const ROOT = join(import.meta.dirname, '..');
const RECORDED = join(ROOT, 'test/fixtures/recorded/paired-slow2-h100/results.json.gz');
const recorded = loadResults(RECORDED);
const KEY = { branch: 'main', sku: 'H100-SXM' };

function repo() {
  const { dir, git, commit } = scratchRepo('kg-merge-ancestry-');
  const c1 = commit('c1');
  git('checkout', '-q', '-b', 'old');
  const other = commit('rewritten');
  git('checkout', '-q', 'main');
  const c2 = commit('c2 (the pull request base)');
  return { dir, c1, c2, other };
}

function stored(sha: string, startedAt: string): KernelgateResults {
  const doc = structuredClone(recorded);
  doc.run.git_sha = sha;
  doc.run.started_at = startedAt;
  return doc;
}

/** The merge of one shard (the recorded run) in the repository, with what it wrote to stderr. */
async function merge(dir: string, extra: string[]) {
  const plan = planShards(unitsOfResults(recorded), 1, { results: recorded, path: RECORDED });
  mkdirSync(join(dir, 'shard-1'), { recursive: true });
  writeFileSync(
    join(dir, 'shard-1', 'results.json'),
    JSON.stringify(splitResults(recorded, plan, 1)),
  );
  let stderr = '';
  const io = { stdout: () => {}, stderr: (t: string) => (stderr += t), cwd: dir };
  const status = await runCli(
    ['merge', 'shard-1', '--shards', '1', '--config', ROOT, '--base', 'main', ...extra],
    io,
  );
  return { status, stderr };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('kernelgate merge --base-sha', () => {
  it('judges against the nearest stored ancestor of the base, passing over another line of history', async () => {
    const g = repo();
    const store = fileBaselineStore(join(g.dir, '.kernelgate/baselines'));
    const c1 = store.save(KEY, stored(g.c1, '2026-11-20T10:00:00Z'));
    const other = store.save(KEY, stored(g.other, '2026-11-22T10:00:00Z'));
    const { stderr } = await merge(g.dir, ['--base-sha', g.c2]);
    expect(stderr).toContain(
      `kernelgate: stored baseline: passed over ${g.other.slice(0, 12)} (run of 2026-11-22T10:00:00Z, ${other}): its commit is not an ancestor of the pull request's base ${g.c2.slice(0, 12)} (a force-pushed branch or another line of history)\n`,
    );
    expect(stderr).toContain(
      `kernelgate: stored baseline: ${g.c1.slice(0, 12)} (run of 2026-11-20T10:00:00Z, ${c1}), the nearest stored ancestor of the pull request's base ${g.c2.slice(0, 12)} of main on H100-SXM\n`,
    );
  });

  it('with the store key, a planted unsigned record is refused although it is the newest ancestor', async () => {
    const g = repo();
    vi.stubEnv('KERNELGATE_STORE_KEY', 'the repository secret');
    const root = join(g.dir, '.kernelgate/baselines');
    const c1 = fileBaselineStore(root, { key: 'the repository secret' }).save(
      KEY,
      stored(g.c1, '2026-11-20T10:00:00Z'),
    );
    const planted = fileBaselineStore(root).save(KEY, stored(g.c2, '2026-11-23T10:00:00Z'));
    const { stderr } = await merge(g.dir, ['--base-sha', g.c2]);
    expect(stderr).toContain(
      `warning: ${planted}: not signed with this repository's store key: ignored (written by a job without the key, e.g. a pull request's code).\n`,
    );
    expect(stderr).toContain(
      `kernelgate: stored baseline: ${g.c1.slice(0, 12)} (run of 2026-11-20T10:00:00Z, ${c1}), the nearest stored ancestor`,
    );
  });

  it('refuses a base that is not a full commit id, or one without --base', async () => {
    const g = repo();
    const bad = await merge(g.dir, ['--base-sha', 'main']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(
      'kernelgate merge: --base-sha must be a full commit id, 40 hex digits (got "main")',
    );
    let stderr = '';
    const io = { stdout: () => {}, stderr: (t: string) => (stderr += t), cwd: g.dir };
    expect(
      await runCli(['merge', 'shard-1', '--shards', '1', '--config', ROOT, '--base-sha', g.c2], io),
    ).toBe(2);
    expect(stderr).toContain(
      "kernelgate merge: --base-sha needs --base: it picks among the base branch's stored runs by commit ancestry",
    );
  });
});
