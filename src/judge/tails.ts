// Tails on the device: the results' `tails` (each manifest's ci_cases, verified on the run's GPU
// after the timed cases, untimed: python/kernelgate_harness/tails.py) judged as a case's
// correctness is, without a baseline. A tail that is wrong fails the gate whatever the policy (a
// wrong result is never a performance question); one that errs or times out fails it as a case's
// error does (policy.fail_on_error). A document without `tails` (written before, or with --ci or
// --no-tails) has none to judge.
import type { Config } from '../config/index.js';
import type { CaseResult, KernelgateResults } from '../results/index.js';
import { judgeCorrectness } from './correctness.js';
import { caseLabel, type CorrectnessVerdict } from './verdicts.js';

export interface TailVerdict {
  kernel: string;
  variant: string;
  case: string;
  /** `softmax/triton_zero_pad dtype=fp32,R=3,W=7` */
  label: string;
  correctness: CorrectnessVerdict;
  reason?: string;
}

/** Each tail's verdict, in the document's order. */
export function judgeTails(results: KernelgateResults, config: Config): TailVerdict[] {
  return (results.tails ?? []).map((t) => {
    const judged = judgeCorrectness(t as CaseResult, undefined, config);
    return {
      kernel: t.kernel,
      variant: t.variant,
      case: t.case,
      label: caseLabel(t),
      correctness: judged.correctness,
      ...(judged.correctnessReason !== undefined ? { reason: judged.correctnessReason } : {}),
    };
  });
}

export interface TailProblem {
  line: string;
  /** whether it fails the gate: FAIL always, ERROR as policy.fail_on_error says */
  fails: boolean;
  tail: TailVerdict;
}

/**
 * The gate's lines for the tails that are not verified:
 * `softmax/triton_zero_pad dtype=fp32,R=3,W=7: tail correctness FAIL (ci_cases, verified on the
 * device, untimed): rel_l2 8.6e-01 > tol 1.0e-05`.
 */
export function tailProblems(results: KernelgateResults, config: Config): TailProblem[] {
  const problems: TailProblem[] = [];
  for (const t of judgeTails(results, config)) {
    if (t.correctness === 'FAIL' || t.correctness === 'UNCHECKED') {
      const line = `${t.label}: tail correctness FAIL (ci_cases, verified on the device, untimed): ${t.reason ?? 'no detail'}`;
      problems.push({ line, fails: true, tail: t });
    } else if (t.correctness === 'ERROR') {
      const line = `${t.label}: tail ${t.reason ?? 'error'} (ci_cases, verified on the device, untimed)`;
      problems.push({ line, fails: config.policy.failOnError, tail: t });
    }
  }
  return problems;
}
