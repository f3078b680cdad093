// Paired A/B results for the tests: the synthetic baseline fixture as a pull-request run that
// timed its head against a base revision pair by pair (results cases[].paired).
import { caseKey } from '../../src/judge/index.js';
import type { KernelgateResults, Paired } from '../../src/results/index.js';

export const BASE_SHA = 'bbbbbbbbbbbb2222222222222222222222222222';
export const PAIRS = 45;

/** ln(head/base) of `n` pairs around `ratio`, ±0.2 % and symmetric: the median is ln(ratio). */
export function logRatios(ratio: number, n = PAIRS): number[] {
  return Array.from({ length: n }, (_, i) => Math.log(ratio) + ((i % 9) - 4) * 0.0005);
}

/** A copy of `results` as a paired run's: run.paired_base set, no case paired yet. */
export function pairedRun(results: KernelgateResults): KernelgateResults {
  const doc = structuredClone(results);
  doc.run = {
    ...doc.run,
    id: 'synthetic-pr',
    git_sha: 'cccccccccccc3333333333333333333333333333',
    paired_base: {
      root: '/tmp/base',
      git_sha: BASE_SHA,
      git_ref: 'refs/heads/main',
      order: 'ABBA',
    },
  };
  return doc;
}

/**
 * Gives the case `key` (kernel/variant/case) pairs around `ratio` (head / base) and a base arm
 * that passed on the same inputs; `extra` overrides any field of `paired`.
 */
export function pair(
  doc: KernelgateResults,
  key: string,
  ratio: number,
  extra: Partial<Paired> = {},
): KernelgateResults {
  const c = doc.cases.find((x) => caseKey(x.kernel, x.variant, x.case) === key);
  if (!c?.timing || !c.correctness) throw new Error(`no timed case ${key}`);
  const t = c.timing;
  const logs = extra.log_ratios ?? logRatios(ratio);
  c.paired = {
    base_status: 'ok',
    base_correctness: structuredClone(c.correctness),
    base_timing: {
      ...structuredClone(t),
      samples_ms: t.samples_ms.map((x) => x / ratio),
      median_ms: t.median_ms / ratio,
    },
    n_pairs: logs.length,
    log_ratios: logs,
    stop_reason: 'decided',
    seconds: 2.5,
    ...extra,
  };
  if (extra.base_timing === undefined && 'base_timing' in extra) delete c.paired.base_timing;
  return doc;
}
