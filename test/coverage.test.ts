// Issue 26: a results document with no case, or fewer than the run selected (a harness killed), was
// judged a pass and stored as the next baseline. It fails the gate with a reason that names what
// is missing, and is never stored; the subsets a run may choose (--only, a shard, --variants,
// --case-params, --cases) and the cases the harness skipped are not gaps.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, shardUnits, type Config } from '../src/config/index.js';
import { compare, coverage, evaluateTiers, gate, selectedUnits } from '../src/judge/index.js';
import { loadResults, type CaseResult, type KernelgateResults } from '../src/results/index.js';
import { mergeShards, planShards, splitResults, unitsOfResults } from '../src/shard/index.js';
import { storeBaseline, storeRun, type FullRun } from '../src/pipeline/index.js';
import { fileBaselineStore } from '../src/store/index.js';

const config = loadConfig(join(import.meta.dirname, 'fixtures', 'config', 'valid'));
const ALL = 48; // gemm 2 cases × 2 variants, attention 8 × 5, bsr_gemm 1 × 4
const FP16_D128 = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

/** A document with a skipped record of each variant-case of the config: complete, and no timing. */
function complete(selection?: KernelgateResults['run']['selection']): KernelgateResults {
  const cases: CaseResult[] = shardUnits(config.kernels).flatMap((u) =>
    u.variants.map((variant) => ({
      kernel: u.kernel,
      variant,
      case: u.caseId,
      params: u.params,
      status: 'skipped' as const,
      reason: 'not on this GPU',
    })),
  );
  return {
    schema: 'kernelgate/results@1',
    run: {
      started_at: '2026-01-01T00:00:00Z',
      harness: 'kernelgate-harness test',
      synthetic: true,
      ...(selection ? { selection } : {}),
    },
    environment: { gpu: { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' } },
    diagnostics: [],
    kernels: [],
    cases,
  };
}

function judged(results: KernelgateResults, c: Config = config) {
  return gate(compare(results, undefined, c), evaluateTiers(results, c), results, c);
}

const without = (r: KernelgateResults, drop: (c: CaseResult) => boolean): KernelgateResults => ({
  ...r,
  cases: r.cases.filter((c) => !drop(c)),
});

describe('a document that holds no case', () => {
  it('fails, naming what the run selected', () => {
    const result = judged({ ...complete({ ci: false }), cases: [] });
    expect(result.verdict).toBe('fail');
    expect(result.reasons).toEqual([
      'the results hold no case: the run selected 48 cases of gemm, attention, bsr_gemm and has a record of none; a run that measured nothing is no pass',
    ]);
    expect(result.incomplete).toBe(result.reasons[0]);
  });

  it('fails when nothing was selected either (benchmarks alone that gave no case)', () => {
    const result = judged({ ...complete({ kernels: [], ci: false }), cases: [] });
    expect(result.reasons).toEqual([
      'the results hold no case: nothing was measured; a run that measured nothing is no pass',
    ]);
  });

  it('passes for the deep checks’ own document (kernelgate deep without --results)', () => {
    const empty = { ...complete(), cases: [] };
    const deep = { ...empty, run: { ...empty.run, harness: 'kernelgate deep' }, deep: {} };
    expect(coverage(deep as KernelgateResults, config).problem).toBeUndefined();
    // A harness's document with deep checks added is no such document.
    expect(coverage({ ...empty, deep: {} } as KernelgateResults, config).problem).toBe(
      'the results hold no case: nothing was measured; a run that measured nothing is no pass',
    );
  });
});

describe('a document cut short', () => {
  it('covers every case when complete, skipped ones included', () => {
    const result = judged(complete({ ci: false }));
    expect(coverage(complete({ ci: false }), config)).toMatchObject({ selected: ALL, gaps: [] });
    expect(result.verdict).toBe('pass');
    expect(result.incomplete).toBeUndefined();
  });

  it('fails with the count missing per kernel and variant, and the total', () => {
    const full = complete({ ci: false });
    // What a harness killed during attention leaves: the first 20 records.
    const cut = { ...full, cases: full.cases.slice(0, 20) };
    const result = judged(cut);
    expect(result.verdict).toBe('fail');
    expect(result.reasons).toEqual([
      'the results are incomplete: 28 of the 48 cases the run selected have no record: ' +
        'attention 24 of 40 (cuda_fa2 5, sdpa_flash 5, sdpa_cudnn 5, sdpa_default 5, triton_fa2 4), ' +
        'bsr_gemm all 4. The run stopped early or its results were cut short: a partial run is no pass',
    ]);
  });

  it('fails whatever the policy', () => {
    const off = Object.fromEntries(Object.keys(config.policy).map((k) => [k, false]));
    const lenient = { ...config, policy: off as Config['policy'] };
    const full = complete({ ci: false });
    expect(judged({ ...full, cases: full.cases.slice(0, 20) }, lenient).verdict).toBe('fail');
  });

  it('names one variant of one case', () => {
    const cut = without(
      complete({ ci: false }),
      (c) => c.variant === 'cuda_fa2' && c.case === FP16_D128,
    );
    const { gaps, problem } = coverage(cut, config);
    expect(gaps).toEqual([
      {
        kernel: 'attention',
        selected: 40,
        missing: [{ variant: 'cuda_fa2', caseId: FP16_D128 }],
      },
    ]);
    expect(problem).toBe(
      'the results are incomplete: 1 of the 48 cases the run selected have no record: attention 1 of 40 (cuda_fa2 1). ' +
        'The run stopped early or its results were cut short: a partial run is no pass',
    );
  });

  it('matches a record by its params, not by the text of its id (Python writes 1.0 as "1.0")', () => {
    const kernel = {
      manifest: {
        name: 'scale',
        module: 'kernels.scale',
        cases: [{ alpha: [1, 2.5] }],
        tolerance: {},
        variants: [{ name: 'v', role: 'candidate' as const }],
      },
      dir: '/nowhere',
      file: 'kernels/scale/kernel.yml',
    };
    const c: Config = { ...config, kernels: [kernel] };
    const record = (id: string, alpha: number): CaseResult => ({
      kernel: 'scale',
      variant: 'v',
      case: id,
      params: { alpha },
      status: 'skipped',
    });
    const doc = {
      ...complete({ ci: false }),
      cases: [record('alpha=1.0', 1), record('alpha=2.5', 2.5)],
    };
    expect(coverage(doc, c)).toMatchObject({ selected: 2, gaps: [] });
    expect(coverage({ ...doc, cases: [record('alpha=1.0', 1)] }, c).gaps).toEqual([
      { kernel: 'scale', selected: 2, missing: [{ variant: 'v', caseId: 'alpha=2.5' }] },
    ]);
  });

  it('holds a document that does not say what it selected to having a case at all', () => {
    // Written before run.selection, or by hand: what it was meant to cover is not known.
    const legacy = without(complete(), (c) => c.kernel === 'bsr_gemm');
    expect(coverage(legacy, config)).toEqual({ known: false, selected: 0, kernels: [], gaps: [] });
    expect(coverage({ ...legacy, cases: [] }, config).problem).toBe(
      'the results hold no case: nothing was measured; a run that measured nothing is no pass',
    );
  });
});

describe('what a run may choose to measure is no gap', () => {
  it('--only (the action’s kernels input)', () => {
    const only = without(
      complete({ kernels: ['attention'], ci: false }),
      (c) => c.kernel !== 'attention',
    );
    expect(coverage(only, config)).toMatchObject({ selected: 40, gaps: [] });
    const cut = without(only, (c) => c.variant === 'sdpa_default');
    expect(coverage(cut, config).problem).toContain('8 of the 40 cases');
  });

  it('--variants, --case-params and --cases', () => {
    const doc = complete({
      ci: false,
      variants: ['triton_fa2', 'cublas'],
      case_params: 'dtype=fp16',
      cases: [`attention/${FP16_D128}`, 'gemm/op=matmul,dtype=fp16,M=8192,N=8192,K=8192'],
    });
    expect(selectedUnits(doc, config)?.map((u) => [u.id, u.variants])).toEqual([
      ['gemm/op=matmul,dtype=fp16,M=8192,N=8192,K=8192', ['cublas']],
      [`attention/${FP16_D128}`, ['triton_fa2']],
    ]);
    const two = without(doc, (c) => !['triton_fa2', 'cublas'].includes(c.variant));
    expect(coverage(two, config).problem).toBeUndefined();
  });

  it('a shard measures its own cases (run.shard)', () => {
    const owned = [`attention/${FP16_D128}`];
    const doc = complete({ ci: false });
    const shard = {
      ...without(doc, (c) => `${c.kernel}/${c.case}` !== owned[0]),
      run: {
        ...doc.run,
        shard: {
          index: 1,
          count: 9,
          cases: owned,
          plan: { digest: 'd', source: 'estimate' as const, shards: [owned] },
        },
      },
    };
    expect(coverage(shard, config)).toMatchObject({ selected: 5, gaps: [] });
    expect(
      coverage(
        without(shard, (c) => c.variant === 'cuda_fa2'),
        config,
      ).problem,
    ).toContain('1 of the 5 cases');
  });

  it('a merged run answers for what its shards owned; what a failed shard left is its own reason', () => {
    const doc = complete({ ci: false });
    const a = [`attention/${FP16_D128}`];
    const b = ['bsr_gemm/dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16'];
    const merged = {
      ...without(doc, (c) => c.kernel !== 'attention' || c.case !== FP16_D128),
      run: {
        ...doc.run,
        shards: [
          { index: 1, count: 2, status: 'ok' as const, cases: a },
          { index: 2, count: 2, status: 'missing' as const, cases: b, unreported: b },
        ],
      },
    };
    expect(coverage(merged, config)).toMatchObject({ selected: 5, gaps: [] });
    const result = judged(merged);
    expect(result.reasons).toEqual(['shard 2/2 missing']);
  });
});

describe('a merged run', () => {
  it('keeps what its shards were asked to measure, less their own case lists', () => {
    const selection = { ci: false, variants: ['triton_fa2', 'cublas', 'triton_bsr'] };
    const full = without(complete(selection), (c) => !selection.variants.includes(c.variant));
    const plan = planShards(unitsOfResults(full), 2);
    const docs = [1, 2].map((i) => {
      const shard = splitResults(full, plan, i);
      const own = { ...selection, cases: shard.run.shard?.cases ?? [] };
      return {
        file: `shard${i}.json`,
        results: { ...shard, run: { ...shard.run, selection: own } },
      };
    });
    const merged = mergeShards(docs, 2).results;
    expect(merged.run.selection).toEqual(selection);
    expect(coverage(merged, config)).toMatchObject({ selected: 11, gaps: [] });
    const [one] = docs;
    const cut = mergeShards(
      [one!, { ...docs[1]!, results: { ...docs[1]!.results, cases: [] } }],
      2,
    );
    expect(judged(cut.results).verdict).toBe('fail');
  });
});

describe('the recorded push run (H200, 217 cases), cut short as a killed harness leaves it', () => {
  const root = join(import.meta.dirname, '..');
  const repo = loadConfig(root);
  const recorded = loadResults(
    join(root, 'test', 'fixtures', 'recorded', 'push', 'results.json.gz'),
  );
  // Recorded before the harness wrote run.selection; it ran every kernel's cases.
  const push = { ...recorded, run: { ...recorded.run, selection: { ci: false } } };

  it('is complete as recorded', () => {
    expect(coverage(push, repo)).toMatchObject({ selected: 217, gaps: [] });
  });

  it('fails with the first 150 of its cases', () => {
    const cut = { ...push, cases: push.cases.slice(0, 150) };
    const { problem, gaps } = coverage(cut, repo);
    expect(gaps.reduce((n, g) => n + g.missing.length, 0)).toBe(67);
    expect(problem).toBe(
      'the results are incomplete: 67 of the 217 cases the run selected have no record: ' +
        'attention 49 of 196 (sdpa_cudnn 7, sdpa_default 7, cuda_fa2 7, cuda_fa_wgmma 7, cublas_attn 7, triton_fa2 6, 2 more variants), ' +
        'bsr_gemm all 18. The run stopped early or its results were cut short: a partial run is no pass',
    );
  });
});

describe('an incomplete run is never stored as a baseline', () => {
  /** A push run waiting to be stored in a fresh directory store. */
  function pending(results: KernelgateResults) {
    const dir = mkdtempSync(join(tmpdir(), 'kg-coverage-'));
    const run: FullRun = {
      results,
      resultsPath: 'results.json',
      baseline: undefined,
      pendingBaseline: { store: fileBaselineStore(dir), branch: 'main', sku: 'H100-SXM' },
      notes: [],
    };
    return {
      run,
      stored: () =>
        readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.json')),
    };
  }
  const cut = { ...complete({ ci: false }), cases: complete().cases.slice(0, 20) };
  const NOTE =
    'Not stored as a baseline, whatever save-baseline says: the results are incomplete: 28 of the 48 cases the run selected have no record: ' +
    'attention 24 of 40 (cuda_fa2 5, sdpa_flash 5, sdpa_cudnn 5, sdpa_default 5, triton_fa2 4), bsr_gemm all 4. ' +
    'The run stopped early or its results were cut short: a partial run is no pass';

  it('not even with save-baseline: always (storeRun, the action)', async () => {
    const { run, stored } = pending(cut);
    expect(await storeRun(run, judged(cut), 'always')).toEqual({ note: NOTE });
    expect(stored()).toEqual([]);
  });

  it('not even with always (storeBaseline, the command line)', () => {
    const { run, stored } = pending(cut);
    expect(storeBaseline(run, judged(cut), 'always')).toEqual({ note: NOTE });
    expect(stored()).toEqual([]);
  });

  it('a document with no case, even when only the verdict is passed', async () => {
    const { run, stored } = pending({ ...cut, cases: [] });
    const note = 'Not stored as a baseline, whatever save-baseline says: the results hold no case';
    expect(await storeRun(run, 'fail', 'always')).toEqual({ note });
    expect(storeBaseline(run, 'fail', 'always')).toEqual({ note });
    expect(stored()).toEqual([]);
  });

  it('a complete run that failed is still stored with always, as before', async () => {
    const full = complete({ ci: false });
    const { run, stored } = pending(full);
    const saved = await storeRun(run, { verdict: 'fail' }, 'always');
    expect(saved.saved).toBeDefined();
    expect(stored()).toHaveLength(1);
  });
});
