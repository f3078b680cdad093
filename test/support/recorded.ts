// The recorded GPU runs under test/fixtures/recorded/ (README there): their results as the action
// reads them, what the action said on the machine (verdict.json), and verdict counts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import { compare, type CaseComparison } from '../../src/judge/index.js';
import { stepVerdict } from '../../src/pipeline/index.js';
import { loadResults, validateResults, type KernelgateResults } from '../../src/results/index.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const RECORDED = join(ROOT, 'test/fixtures/recorded');

/**
 * A recorded run's results.json.gz (the recordings are stored compressed), read as the action and
 * the CLI read a results file: loadResults gunzips it.
 */
export const loadGz = (name: string) => loadResults(join(RECORDED, name, 'results.json.gz'));

let repoConfig: Config | undefined;
/** A recorded run judged again with today's code and the repository's own kernelgate.yml. */
export const judgedNow = (name: string) =>
  compare(loadGz(name), undefined, (repoConfig ??= loadConfig(ROOT)));

/** One of a recorded run's gzipped files (report.md.gz, action.log.gz), as text. */
export const gzText = (name: string, file: string) =>
  gunzipSync(readFileSync(join(RECORDED, name, file))).toString('utf8');

/** What the action said on the machine: its verdict.json. */
export const verdictOf = (name: string) =>
  JSON.parse(readFileSync(join(RECORDED, name, 'verdict.json'), 'utf8')) as {
    verdict: string;
    counts: Record<string, number>;
  };

/** The run's wall time in seconds, as gpu-e2e.sh wrote it. */
export const wallOf = (name: string) =>
  Number(readFileSync(join(RECORDED, name, 'wall_s'), 'utf8'));

export const count = (cases: CaseComparison[], v: string) =>
  cases.filter((c) => c.perf === v).length;

/** [SLOWER, FASTER, SAME, AMBIGUOUS] */
export const perfCounts = (cases: CaseComparison[]) =>
  ['SLOWER', 'FASTER', 'SAME', 'AMBIGUOUS'].map((v) => count(cases, v));

/**
 * Asserts that `judged` (compare over the recorded `results`) counts SLOWER, FASTER, SAME and
 * AMBIGUOUS as `perf`, that the action said the same counts on the machine (verdict.json), and
 * that the run had `errors` cases in error, its gate failing exactly when it had any.
 */
export function expectAsOnTheMachine(
  name: string,
  results: KernelgateResults,
  judged: { cases: CaseComparison[] },
  perf: readonly number[],
  errors = 0,
) {
  expect(perfCounts(judged.cases)).toEqual(perf);
  const v = verdictOf(name);
  expect([v.counts.slower, v.counts.faster, v.counts.ambiguous]).toEqual([
    perf[0],
    perf[1],
    perf[3],
  ]);
  expect(results.cases.filter((c) => c.status === 'error')).toHaveLength(errors);
  expect(v.verdict).toBe(errors ? 'fail' : 'pass');
}

/** Median of the 99 % half-widths (paired.mdc_pct) of the cases of 1 ms or more (over 60 of them). */
export function medianHalfWidth(results: KernelgateResults): number {
  const half = results.cases
    .filter(
      (c) =>
        c.status === 'ok' && (c.timing?.median_ms ?? 0) >= 1 && c.paired?.mdc_pct !== undefined,
    )
    .map((c) => c.paired!.mdc_pct!)
    .sort((a, b) => a - b);
  expect(half.length).toBeGreaterThan(60);
  return half[Math.floor(half.length / 2)]!;
}

/**
 * Asserts that a recorded one-file attention pull request timed triton_fa2 and its one control
 * (sdpa_default) and left `identical` variant-cases untimed, each verified and passing.
 */
export function expectOneVariantTimed(results: KernelgateResults, identical: number) {
  const timed = new Set(
    results.cases
      .filter((c) => c.paired && c.paired.n_pairs)
      .map((c) => `${c.kernel}/${c.variant}`),
  );
  expect([...timed].sort()).toEqual(['attention/sdpa_default', 'attention/triton_fa2']);
  const same = results.cases.filter((c) => c.identical);
  expect(same).toHaveLength(identical);
  expect(same.every((c) => c.correctness?.status === 'PASS')).toBe(true);
}

/** The lines of a recording's gpu.txt after its header: one per GPU (name, serial, driver, …). */
export const gpuLines = (name: string) =>
  readFileSync(join(RECORDED, name, 'gpu.txt'), 'utf8')
    .trim()
    .split('\n')
    .slice(1);

/**
 * Each bisection step of a recorded nightly (its bisect-<sha12>.results.json.gz files), judged on
 * `variant` as the nightly's bisection judges a step: "<sha12> good" or "<sha12> bad", sorted.
 */
export function bisectStepVerdicts(name: string, variant: string, config: Config): string[] {
  const dir = join(RECORDED, name);
  return readdirSync(dir)
    .filter((f) => /^bisect-[0-9a-f]{12}\./.test(f))
    .map((f) => {
      const r = validateResults(
        JSON.parse(gunzipSync(readFileSync(join(dir, f))).toString('utf8')),
        f,
      );
      const cases = compare(r, undefined, config).cases.filter((c) => c.variant === variant);
      return `${f.slice(7, 19)} ${stepVerdict(cases).verdict}`;
    })
    .sort();
}

/** A push of the whole set: 217 cases, each verified and PASS but those skipped, tails included. */
export function expectEveryCasePassed(name: string, results: KernelgateResults) {
  expect(results.cases).toHaveLength(217);
  const notPassed = results.cases.filter(
    (c) => c.status !== 'skipped' && c.correctness?.status !== 'PASS',
  );
  expect(notPassed, name).toEqual([]);
}

/**
 * Issue 28's figure: on each attention headline case (S=4096), SDPA default's median over the
 * fastest of ours (triton_fa2, cuda_fa2, cuda_fa_wgmma; of those the run timed), to three places;
 * `fastest`, when given, must be ours on every one of them.
 */
export function headlineRatios(results: KernelgateResults, fastest?: string): number[] {
  // undefined for a variant the run did not time (a pull request's identity skips the unchanged)
  const ms = (variant: string, id: string) =>
    results.cases.find((c) => c.variant === variant && c.case === id)?.timing?.median_ms;
  return results.cases
    .filter((c) => c.variant === 'sdpa_default' && /S=4096/.test(c.case))
    .map((c) => {
      const timed = ['triton_fa2', 'cuda_fa2', 'cuda_fa_wgmma']
        .map((v) => ms(v, c.case))
        .filter((t): t is number => t !== undefined);
      expect(timed.length).toBeGreaterThan(0);
      const ours = Math.min(...timed);
      if (fastest !== undefined) expect(ours).toBe(ms(fastest, c.case));
      return Number((ms('sdpa_default', c.case)! / ours).toFixed(3));
    });
}

/**
 * Issue 28's block-sparse figure: on the two 8192³ cases (fp16, then bf16), dense cuBLAS's
 * median times the quarter of the blocks BSR computes, over cuda_bsr_wgmma_ws's median (its
 * useful FLOP's rate against cuBLAS's FLOP's), to `places` places.
 */
export function bsrPerUsefulFlop(results: KernelgateResults, places = 2): number[] {
  const ms = (variant: string, id: string) =>
    results.cases.find((c) => c.variant === variant && c.case === id)!.timing!.median_ms;
  return ['fp16', 'bf16'].map((t) => {
    const id = `dtype=${t},M=8192,N=8192,K=8192,block=128,topk=16`;
    return Number(((ms('cublas_dense', id) * 0.25) / ms('cuda_bsr_wgmma_ws', id)).toFixed(places));
  });
}

/**
 * A push of the whole set: on the GPU named, every case passed (tails included), issue 28's
 * figures unpaired (SDPA default's median over cuda_fa_wgmma's: fp16 D128, D128 causal, D64, D64
 * causal, then bf16; BSR per useful FLOP, fp16 then bf16), its wall time.
 */
export function expectPush(
  name: string,
  serial: string,
  want: { ratios: number[]; bsr: number[]; wall: number; cudnnAA?: number },
) {
  const doc = loadGz(name);
  expect(gpuLines(name)[0]).toContain(serial);
  expectEveryCasePassed(name, doc);
  expect(gzText(name, 'action.log.gz')).toContain('build attention/cuda_fa_wgmma: built in');
  expect(headlineRatios(doc, 'cuda_fa_wgmma')).toEqual(want.ratios);
  expect(bsrPerUsefulFlop(doc, 3)).toEqual(want.bsr);
  expect(wallOf(name)).toBe(want.wall);
  if (want.cudnnAA !== undefined) {
    // the balanced rounds' A/A: the one cuDNN kernel under two names, on all eight headline cases
    expect(cudnnOverDefault(name)).toHaveLength(8);
    expect(cudnnAAMaxDeviation(name)).toBeCloseTo(want.cudnnAA, 3);
  }
}

/**
 * The A/A in a push's unpaired rounds: sdpa_cudnn's median over sdpa_default's (SDPA's default
 * picks the same cuDNN kernel on the H100) on the eight headline cases, to 4 places.
 */
export function cudnnOverDefault(name: string): number[] {
  const doc = loadGz(name);
  const ms = (variant: string, id: string) =>
    doc.cases.find((c) => c.variant === variant && c.case === id)!.timing!.median_ms;
  return doc.cases
    .filter((c) => c.variant === 'sdpa_default' && c.case.includes('S=4096'))
    .map((c) => Number((ms('sdpa_cudnn', c.case) / ms('sdpa_default', c.case)).toFixed(4)));
}

/** The largest distance from 1 of a push's cuDNN A/A (cudnnOverDefault) over the eight cases. */
export const cudnnAAMaxDeviation = (name: string) =>
  Math.max(...cudnnOverDefault(name).map((x) => Math.abs(x - 1)));

/**
 * Asserts that identity timed a recorded pull request's `variant` because its own source changed,
 * and nothing else but sdpa_default (attention's control).
 */
export function expectOnlyItsVariantTimed(
  results: KernelgateResults,
  log: string,
  variant: string,
  source: string,
) {
  expect(log).toContain(
    `kernelgate: identity: attention/${variant} is timed: sources differ: ${source} (its own)`,
  );
  const timed = results.cases.filter((c) => c.status === 'ok' && c.timing);
  expect(new Set(timed.map((c) => c.variant))).toEqual(new Set([variant, 'sdpa_default']));
}

/**
 * A `gpu-e2e.sh patch-pr` pull request on the GPU named, judged again now: its perf counts
 * [SLOWER, FASTER, SAME, AMBIGUOUS] and verdict as on the machine, each FASTER confirmed in a fresh
 * pair of worker processes, its wall time. Returns the results, the judgement and the action's log.
 */
export function expectPatchPr(name: string, serial: string, perf: number[], wall: number) {
  const doc = loadGz(name);
  expect(gpuLines(name)[0]).toContain(serial);
  const j = judgedNow(name);
  expectAsOnTheMachine(name, doc, j, perf);
  const log = gzText(name, 'action.log.gz');
  expect(log.match(/confirm: .* FASTER again/g)).toHaveLength(perf[1]!);
  expect(wallOf(name)).toBe(wall);
  return { doc, j, log };
}
