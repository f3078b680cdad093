// The correctness verdict of one case: PASS, FAIL, DRIFT (its error grew against the base
// revision's or the baseline's), ERROR, SKIPPED, UNCHECKED.
import type { Config } from '../config/index.js';
import { formatSci } from '../lib/index.js';
import type { CaseResult, Paired } from '../results/index.js';
import type { CorrectnessVerdict } from './verdicts.js';

function failureReason(c: CaseResult): string {
  const parts: string[] = [];
  const k = c.correctness;
  if (k) {
    if (k.nan_count > 0) parts.push(`${k.nan_count} NaN`);
    if (k.inf_count > 0) parts.push(`${k.inf_count} Inf`);
    if (k.unwritten_count > 0) parts.push(`${k.unwritten_count} elements never written`);
    if (k.rel_l2 === null) parts.push(`rel_l2 not computable > tol ${formatSci(k.tol_rel_l2)}`);
    else if (k.rel_l2 > k.tol_rel_l2) {
      parts.push(`rel_l2 ${formatSci(k.rel_l2)} > tol ${formatSci(k.tol_rel_l2)}`);
    }
    if (k.tol_max_abs !== undefined && k.max_abs !== null && k.max_abs > k.tol_max_abs) {
      parts.push(`max_abs ${formatSci(k.max_abs)} > tol ${formatSci(k.tol_max_abs)}`);
    }
    const timed = k.timed_output_rel_l2;
    if (timed !== undefined && timed !== null && timed > k.tol_rel_l2) {
      parts.push(`timed-run output rel_l2 ${formatSci(timed)} > tol ${formatSci(k.tol_rel_l2)}`);
    }
    if (k.repeat_max_diff !== undefined && k.repeat_max_diff !== null && k.repeat_max_diff > 0) {
      parts.push(`output moved between identical runs by ${formatSci(k.repeat_max_diff)} (race?)`);
    }
    if (k.message) parts.push(k.message);
  }
  if (c.reason) parts.push(c.reason);
  if (parts.length === 0) parts.push('marked fail by the harness, with no detail');
  return parts.join('; ');
}

function errorReason(c: CaseResult): string {
  const what = c.error ? `${c.error.kind}: ${c.error.message}` : (c.reason ?? 'no detail');
  return `${c.status}: ${what}`;
}

interface Judged {
  correctness: CorrectnessVerdict;
  correctnessReason?: string;
}

/**
 * What a case's error norm is checked for drift against: the base revision's on the same inputs
 * and seeds when the pairs carry a passing one, else the stored baseline's (as before pairs).
 */
interface DriftReference {
  correctness: CaseResult['correctness'];
  /** "baseline" or "base revision …", as the reason names it */
  what: string;
  suffix: string;
}

export function driftReference(
  paired: Paired | undefined,
  baseline: CaseResult | undefined,
): DriftReference | undefined {
  const k = paired?.base_correctness;
  if (k?.status === 'PASS' && typeof k.rel_l2 === 'number') {
    return { correctness: k, what: 'base revision', suffix: ' on the same inputs' };
  }
  return baseline ? { correctness: baseline.correctness, what: 'baseline', suffix: '' } : undefined;
}

export function judgeCorrectness(
  current: CaseResult,
  reference: DriftReference | undefined,
  config: Config,
): Judged {
  switch (current.status) {
    case 'skipped':
      return { correctness: 'SKIPPED', correctnessReason: current.reason ?? 'skipped' };
    case 'error':
    case 'timeout':
      return { correctness: 'ERROR', correctnessReason: errorReason(current) };
    case 'fail':
      return { correctness: 'FAIL', correctnessReason: failureReason(current) };
    case 'ok':
      break;
  }
  const k = current.correctness;
  if (!k) return { correctness: 'UNCHECKED', correctnessReason: 'no correctness record' };
  if (k.status === 'FAIL')
    return { correctness: 'FAIL', correctnessReason: failureReason(current) };
  const base = reference?.correctness;
  if (base?.status === 'PASS' && typeof base.rel_l2 === 'number' && typeof k.rel_l2 === 'number') {
    const { driftFactor, driftFloorRelL2 } = config.correctness;
    if (k.rel_l2 > driftFactor * base.rel_l2 && k.rel_l2 > driftFloorRelL2) {
      const what = reference?.what ?? 'baseline';
      return {
        correctness: 'DRIFT',
        correctnessReason:
          `rel_l2 ${formatSci(k.rel_l2)} > ${driftFactor} × ${what} ${formatSci(base.rel_l2)}` +
          `${reference?.suffix ?? ''} (floor ${formatSci(driftFloorRelL2)}, tol ${formatSci(k.tol_rel_l2)})`,
      };
    }
  }
  return { correctness: 'PASS' };
}
