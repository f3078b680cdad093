// Moving from baseline-dir to the data branch: every stored run becomes a record, oldest first;
// importing again adds nothing; a file that is not a results document is named and left out.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileBaselineStore } from '../src/store/index.js';
import { actionsExec } from '../src/lib/index.js';
import { branchStore } from '../src/history/branch-store.js';
import { runCli } from '../src/cli/index.js';
import { historyCommand } from '../src/cli/history.js';
import { loadResults } from '../src/results/index.js';
import { bareRemote, git, neverForced, treeOf } from './support/git-remote.js';

describe('history import', () => {
  it('stores every run of a baseline-dir on the data branch, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-dir-'));
    const old = fileBaselineStore(dir);
    for (const run of ['main-1355', 'nightly', 'push']) {
      old.save(
        { branch: 'main', sku: 'H200' },
        loadResults(`test/fixtures/recorded/${run}/results.json.gz`),
      );
    }
    old.save(
      { branch: 'main', sku: 'H100-SXM' },
      loadResults('test/fixtures/recorded/paired-slow2-h100/results.json.gz'),
    );
    const newest = old.latest({ branch: 'main', sku: 'H200' })?.results.run.git_sha;
    writeFileSync(join(dir, 'main', 'H200', 'notes.json'), '{"hello": 1}');
    const { remote } = bareRemote();
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), cwd: '.' };
    expect(
      await historyCommand(['import', '--baseline-dir', dir, '--history-remote', remote], io),
    ).toBe(0);
    expect(out).toEqual(['4 runs on kernelgate-data, 1 files skipped\n']);
    expect(err.join('')).toMatch(/^skipped .*notes\.json: /m);
    const files = [...treeOf(remote, 'kernelgate-data').keys()];
    expect(files).toHaveLength(5); // README.md and four records
    expect(
      git(['--git-dir', remote, 'rev-list', '--count', 'refs/heads/kernelgate-data']).trim(),
    ).toBe('1');

    // Again: nothing new, no new commit.
    out.length = 0;
    expect(
      await historyCommand(['import', '--baseline-dir', dir, '--history-remote', remote], io),
    ).toBe(0);
    expect(out).toEqual(['4 runs on kernelgate-data, 1 files skipped\n']);
    expect(
      git(['--git-dir', remote, 'rev-list', '--count', 'refs/heads/kernelgate-data']).trim(),
    ).toBe('1');
    expect(neverForced(remote, 'kernelgate-data')).toBe(true);

    // The newest run of main on the H200 is the baseline the branch gives.
    const store = branchStore({
      remote,
      cacheDir: join(mkdtempSync(join(tmpdir(), 'kg-cache-')), 'h.git'),
      exec: actionsExec(),
      warn: () => undefined,
      kernelgateVersion: '0.1.0',
    });
    const latest = await store.latest({ branch: 'main', sku: 'H200' });
    expect(latest?.results.run.git_sha).toBe(newest);
  }, 60_000);

  it('is a command of kernelgate, and says what it needs', async () => {
    const err: string[] = [];
    const io = { stdout: () => undefined, stderr: (t: string) => err.push(t), cwd: '.' };
    expect(await runCli(['history', 'import', '--baseline-dir', 'x'], io)).toBe(2);
    expect(err.join('')).toBe(
      'kernelgate history: history import needs --baseline-dir DIR and --history-remote URL_OR_PATH\n',
    );
    err.length = 0;
    expect(await runCli(['dashboard', '--out', 'x.html'], io)).toBe(2);
    expect(err.join('')).toBe(
      'kernelgate dashboard: dashboard needs either --history-remote or --results (one of them)\n',
    );
  });
});
