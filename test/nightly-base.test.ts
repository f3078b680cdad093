// The nightly's base: the newest good stored run whose commit is an ancestor of tonight's, found in
// a real git repository, and a store that refuses runs from the future.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { actionsExec, type Exec } from '../src/lib/index.js';
import type { LineExec } from '../src/measure/index.js';
import { fullRun, lastGoodBase, notGood } from '../src/pipeline/index.js';
import { fileBaselineStore } from '../src/store/index.js';
import { emptyRun, scratchRepo } from './support/git-repo.js';

const KEY = { branch: 'main', sku: 'H100-SXM' };

const results = emptyRun;

/** A repository with three commits on main and one on a branch beside it; their SHAs. */
function repository() {
  const { dir, git, commit } = scratchRepo('kg-nightly-');
  const c1 = commit('one');
  const c2 = commit('two');
  git('checkout', '-q', '-b', 'side');
  const side = commit('side');
  git('checkout', '-q', 'main');
  const c3 = commit('three');
  return { dir, git, c1, c2, c3, side };
}

/** Real git for git, "not found" for the doctor's tools: the test needs no GPU and no Python. */
function gitOnly(): Exec {
  const real = actionsExec();
  return {
    run: (command, args, options) =>
      command === 'git'
        ? real.run(command, args, options)
        : Promise.resolve({ exitCode: 127, stdout: '', stderr: `${command}: not found` }),
  };
}

describe('the nightly base', () => {
  it('is the newest stored run that passed, found nothing SLOWER and is an ancestor of HEAD', async () => {
    const repo = repository();
    const store = fileBaselineStore(mkdtempSync(join(tmpdir(), 'kg-store-')));
    store.save(KEY, results('2026-11-20T03:00:00Z', repo.c1), { verdict: 'pass', event: 'push' });
    store.save(KEY, results('2026-11-21T03:00:00Z', repo.c2), {
      verdict: 'pass',
      event: 'schedule',
      verdicts: { 'attention/triton_fa2/a': 'SLOWER', 'attention/triton_fa2/b': 'SAME' },
    });
    store.save(KEY, results('2026-11-22T03:00:00Z', repo.side), { verdict: 'pass', event: 'push' });
    store.save(KEY, results('2026-11-23T03:00:00Z', repo.c3), {
      verdict: 'fail',
      event: 'schedule',
    });

    const found = await lastGoodBase(store, KEY, repo.dir, gitOnly());
    expect(found.ok).toBe(true);
    if (!found.ok) return;
    expect(found.base.sha).toBe(repo.c1);
    expect(found.base.line).toBe(
      `${repo.c1.slice(0, 12)} (push run of 2026-11-20T03:00:00Z), the newest good run of main on H100-SXM`,
    );
    expect(found.passedOver).toEqual([
      `${repo.c3.slice(0, 12)} (schedule run of 2026-11-23T03:00:00Z): its gate failed`,
      `${repo.side.slice(0, 12)} (push run of 2026-11-22T03:00:00Z): its commit is not an ancestor of tonight's (the branch was rewritten)`,
      `${repo.c2.slice(0, 12)} (schedule run of 2026-11-21T03:00:00Z): it reported 1 SLOWER case (attention/triton_fa2/a): a regression is never the next night's base`,
    ]);
  });

  it('says why there is none', async () => {
    const repo = repository();
    const store = fileBaselineStore(mkdtempSync(join(tmpdir(), 'kg-store-')));
    const none = await lastGoodBase(store, KEY, repo.dir, gitOnly());
    expect(none).toEqual({
      ok: false,
      reason: "no good run of main on H100-SXM to time tonight's commit beside (none is stored)",
      passedOver: [],
    });
    store.save(KEY, results('2026-11-23T03:00:00Z', repo.c3), { verdict: 'fail' });
    const bad = await lastGoodBase(store, KEY, repo.dir, gitOnly());
    expect(bad.ok).toBe(false);
    expect(bad.ok ? '' : bad.reason).toBe(
      "no good run of main on H100-SXM to time tonight's commit beside (none of the newest 1 is good)",
    );
  });

  it('takes a run stored before judgements were kept, and refuses one that names no commit', () => {
    const legacy = { results: results('2026-11-20T03:00:00Z', 'a'.repeat(40)), path: 'x' };
    expect(notGood(legacy)).toBeUndefined();
    expect(notGood({ ...legacy, results: results('2026-11-20T03:00:00Z', 'nosha') })).toBe(
      'it names no commit',
    );
  });
});

describe('the directory store and the clock', () => {
  it('refuses a run that says it started after this machine clock, by name', () => {
    const root = mkdtempSync(join(tmpdir(), 'kg-store-'));
    const warnings: string[] = [];
    const now = Date.parse('2026-11-26T03:00:00Z');
    const store = fileBaselineStore(root, { now: () => now, warn: (m) => warnings.push(m) });
    store.save(KEY, results('2026-11-25T03:00:00Z', 'a'.repeat(40)));
    const pinned = store.save(KEY, results('2099-01-01T00:00:00Z', 'b'.repeat(40)));
    expect(store.latest(KEY)?.results.run.git_sha).toBe('a'.repeat(40));
    expect(warnings).toEqual([
      `baseline store: refused ${pinned}: it says it started at 2099-01-01T00:00:00Z, after this ` +
        "machine's clock (2026-11-26T03:00:00.000Z); a record from the future would stay the " +
        'newest baseline until then.',
    ]);
    // Ten minutes of skew between runners' clocks is not "the future".
    store.save(KEY, results('2026-11-26T03:09:00Z', 'c'.repeat(40)));
    expect(store.latest(KEY)?.results.run.git_sha).toBe('c'.repeat(40));
  });

  it('keeps the judgement beside the results and reads it back', () => {
    const root = mkdtempSync(join(tmpdir(), 'kg-store-'));
    const store = fileBaselineStore(root);
    const path = store.save(KEY, results('2026-11-25T03:00:00Z', 'a'.repeat(40)), {
      verdict: 'pass',
      event: 'schedule',
      verdicts: { 'k/v/c2': 'SLOWER', 'k/v/c1': 'SLOWER', 'k/v/c3': 'FASTER' },
    });
    expect(JSON.parse(readFileSync(`${path}.judged`, 'utf8'))).toEqual({
      verdict: 'pass',
      slower: ['k/v/c1', 'k/v/c2'],
      event: 'schedule',
    });
    expect(store.latest(KEY)?.judged).toEqual({
      verdict: 'pass',
      slower: ['k/v/c1', 'k/v/c2'],
      event: 'schedule',
    });
  });
});

describe('a nightly run', () => {
  function nightlyWorkspace() {
    const repo = repository();
    mkdirSync(join(repo.dir, 'kernels', 'gemm'), { recursive: true });
    writeFileSync(
      join(repo.dir, 'kernels', 'gemm', 'kernel.yml'),
      'name: gemm\nmodule: kernels.gemm.bench\ncases: [{dtype: bf16}]\n' +
        'tolerance: {bf16: {rel_l2: 0.01}}\nvariants: [{name: cublas, role: reference}]\n',
    );
    repo.git('add', '-A');
    repo.git('commit', '-qm', 'kernels');
    const good = repo.git('rev-parse', 'HEAD');
    writeFileSync(join(repo.dir, 'README'), 'tonight');
    repo.git('add', 'README');
    repo.git('commit', '-qm', 'docs');
    return { ...repo, good };
  }

  async function nightly(ws: string, store: ReturnType<typeof fileBaselineStore>) {
    const harnessArgs: string[][] = [];
    const harness: LineExec = async (_c, args) => {
      harnessArgs.push([...args]);
      copyFileSync('test/fixtures/results/baseline.json', args[args.indexOf('--out') + 1]!);
      return 0;
    };
    const warnings: string[] = [];
    const infos: string[] = [];
    const run = await fullRun(
      {
        config: loadConfig(ws),
        workspace: ws,
        harnessRoot: ws,
        outDir: join(ws, 'out'),
        mode: 'schedule',
        branch: 'main',
        baseBranch: undefined,
        store,
        baselinePath: undefined,
        saveBaseline: false,
        pairedWithLastGood: true,
      },
      {
        exec: gitOnly(),
        lineExec: harness,
        log: {
          info: (m: string) => infos.push(m),
          startGroup: () => {},
          endGroup: () => {},
          warning: (m: string) => warnings.push(m),
        },
      },
    );
    return { run, harnessArgs, warnings, infos };
  }

  it('times tonight beside the last good run, checked out as a worktree', async () => {
    const ws = nightlyWorkspace();
    const store = fileBaselineStore(mkdtempSync(join(tmpdir(), 'kg-store-')));
    // The doctor finds no GPU here: the run's model is 'none', and so is the stored run's key.
    store.save({ branch: 'main', sku: 'none' }, results('2026-11-25T03:00:00Z', ws.good), {
      verdict: 'pass',
      event: 'push',
    });
    const { harnessArgs, infos } = await nightly(ws.dir, store);
    const args = harnessArgs[0]!;
    expect(args[args.indexOf('--base-sha') + 1]).toBe(ws.good);
    expect(args[args.indexOf('--base-ref') + 1]).toBe('main');
    const baseRoot = args[args.indexOf('--base-root') + 1]!;
    expect(
      execFileSync('git', ['-C', baseRoot, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim(),
    ).toBe(ws.good);
    expect(infos).toContain(
      `kernelgate: tonight is timed beside ${ws.good.slice(0, 12)} (push run of 2026-11-25T03:00:00Z), the newest good run of main on none`,
    );
  });

  it('is judged against the stored baseline alone when no stored run is good, and says why', async () => {
    const ws = nightlyWorkspace();
    const store = fileBaselineStore(mkdtempSync(join(tmpdir(), 'kg-store-')));
    store.save({ branch: 'main', sku: 'none' }, results('2026-11-25T03:00:00Z', ws.good), {
      verdict: 'fail',
      event: 'schedule',
    });
    const { run, harnessArgs } = await nightly(ws.dir, store);
    expect(harnessArgs[0]).not.toContain('--base-sha');
    const note = run.results.diagnostics.find((d) => d.code === 'paired.base_unavailable');
    expect(note?.message).toBe(
      "The nightly is not paired: no good run of main on none to time tonight's commit beside " +
        '(none of the newest 1 is good). Every case is judged against the stored baseline.',
    );
  });
});
