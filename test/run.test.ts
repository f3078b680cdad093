import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileBaselineStore } from '../src/store/index.js';
import { loadConfig } from '../src/config/index.js';
import { scriptedExec } from '../src/lib/index.js';
import type { LineExec } from '../src/measure/index.js';
import { fullRun, storeBaseline, type FullRunOptions } from '../src/pipeline/index.js';

function setup() {
  const ws = mkdtempSync(join(tmpdir(), 'kg-run-'));
  mkdirSync(join(ws, 'kernels', 'gemm'), { recursive: true });
  writeFileSync(
    join(ws, 'kernels', 'gemm', 'kernel.yml'),
    'name: gemm\nmodule: kernels.gemm.bench\ncases: [{dtype: bf16}]\n' +
      'tolerance: {bf16: {rel_l2: 0.01}}\nvariants: [{name: cublas, role: reference}]\n',
  );
  const harness =
    (fixture: string): LineExec =>
    async (_c, args) => {
      copyFileSync(fixture, args[args.indexOf('--out') + 1]!);
      return 0;
    };
  const warnings: string[] = [];
  const deps = (fixture: string) => ({
    exec: scriptedExec([]),
    lineExec: harness(fixture),
    log: {
      info: () => {},
      startGroup: () => {},
      endGroup: () => {},
      warning: (m: string) => warnings.push(m),
    },
  });
  const options = (over: Partial<FullRunOptions>): FullRunOptions => ({
    config: loadConfig(ws),
    workspace: ws,
    harnessRoot: ws,
    outDir: join(ws, 'out'),
    mode: 'push',
    branch: 'main',
    baseBranch: undefined,
    store: fileBaselineStore(join(ws, 'baselines')),
    baselinePath: undefined,
    saveBaseline: false,
    ...over,
  });
  return { deps, options, warnings };
}

describe('full run', () => {
  it('push stores the baseline that a later pull request against main is compared with', async () => {
    const { deps, options, warnings } = setup();
    const push = await fullRun(
      options({ saveBaseline: true }),
      deps('test/fixtures/results/baseline.json'),
    );
    expect(push.baseline).toBeUndefined();
    const stored = storeBaseline(push, 'pass', 'passing');
    expect(stored.saved).toMatch(/baselines\/main\/[^/]+\/.*\.json$/);
    expect(warnings[0]).toMatch(/^No stored baseline for branch main on \S+: every case is NEW\./);

    const pr = await fullRun(
      options({ mode: 'pr', branch: 'feature', baseBranch: 'main' }),
      deps('test/fixtures/results/aa-current.json'),
    );
    expect(pr.baseline?.path).toBe(stored.saved);
    expect(pr.pendingBaseline).toBeUndefined();
    expect(storeBaseline(pr, 'pass', 'always')).toEqual({});
  });

  it('a run whose branch is unknown is never stored as a baseline', async () => {
    const { deps, options } = setup();
    const pr = await fullRun(
      options({ mode: 'pr', branch: undefined, baseBranch: 'main', saveBaseline: true }),
      deps('test/fixtures/results/aa-current.json'),
    );
    expect(pr.pendingBaseline).toBeUndefined();
    expect(pr.notes).toContain('This run was not stored as a baseline: its branch is unknown.');
  });

  it('a push whose gate failed is not stored unless the policy says always', async () => {
    const { deps, options } = setup();
    const push = await fullRun(
      options({ saveBaseline: true }),
      deps('test/fixtures/results/baseline.json'),
    );
    expect(storeBaseline(push, 'fail', 'passing')).toEqual({
      note:
        'Not stored as a baseline: the gate failed, and a baseline is what later pull requests are ' +
        'compared with. Set save-baseline: always to store failing runs too.',
    });
    const key = { branch: 'main', sku: push.pendingBaseline!.sku };
    expect(await options({}).store.latest(key)).toBeUndefined();
    const stored = storeBaseline(push, 'fail', 'always');
    expect(stored.saved).toMatch(/baselines\/main\/[^/]+\/.*\.json$/);
    expect((await options({}).store.latest(key))?.path).toBe(stored.saved);
  });

  it('a pull request with a base commit that cannot be checked out is judged against the stored baseline', async () => {
    const { deps, options, warnings } = setup();
    const pr = await fullRun(
      options({
        mode: 'pr',
        branch: 'feature',
        baseBranch: 'main',
        pairedBase: { sha: 'a'.repeat(40) },
      }),
      deps('test/fixtures/results/aa-current.json'),
    );
    expect(pr.notes[0]).toMatch(
      /^Paired A\/B is off for this run: \S+ is not a git checkout \(.*\)\. Every case is judged against the stored baseline\.$/,
    );
    expect(warnings).toContain(pr.notes[0]);
  });
});
