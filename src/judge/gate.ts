// The verdict that blocks a merge: correctness failures and drift always fail; build failures,
// errors, measurement errors, regressions and missing cases fail as the policy says.
import type { Comparison, CaseComparison } from './verdicts.js';
import type { Config } from '../config/index.js';
import type { KernelgateResults } from '../results/index.js';
import { GATE_RULES, gateContext } from './gate-rules.js';
export { acceptedByText, describeChange, blockingKinds, type GateKind } from './gate-rules.js';
import type { MeasurementError } from './throughput.js';
import type { TierStatus } from './tiers.js';

export interface GateCounts {
  cases: number;
  passed: number;
  failed: number;
  drift: number;
  errors: number;
  skipped: number;
  unchecked: number;
  faster: number;
  slower: number;
  same: number;
  ambiguous: number;
  new: number;
  missing: number;
  untimed: number;
  measurementErrors: number;
  buildFailures: number;
}

/**
 * What a reason or warning line is about, where a kernel's variant is its subject: the action
 * shows it as an annotation at the variant's place in its kernel.yml (src/action/annotations.ts).
 */
export interface GateSite {
  /** the reason or warning line this site belongs to (one line may have several sites) */
  line: string;
  /** the line is a reason: it fails the gate */
  fails: boolean;
  /** what happened, e.g. "correctness FAIL", "build expectation unmet" */
  title: string;
  kernel: string;
  variant: string;
  /** the unmet build expectation's name, e.g. "sass:HGMMA" (its field in build.expect) */
  expectation?: string;
  /** the annotation's text: the line, or for one expectation of several, its part */
  message: string;
}

/** The label on a pull request that accepts its performance regressions (never correctness). */
export const ACCEPT_LABEL = 'kernelgate-accept';

/** A pull request's acceptance of its performance regressions: the label and who applied it. */
export interface Acceptance {
  label: string;
  /** who applied the label (a GitHub login); undefined where GitHub could not say */
  by?: string;
  /** the pull request that carries the label */
  pr?: number;
}

/** An acceptance that let SLOWER cases through a gate that would have failed on them. */
export interface Accepted extends Acceptance {
  /** how many SLOWER cases it let through */
  cases: number;
}

export interface GateResult {
  verdict: 'pass' | 'fail';
  /** why the gate failed, one line each, naming kernel, variant, case and numbers */
  reasons: string[];
  /** what the reader should see although it does not fail the gate under this policy */
  warnings: string[];
  /** the kernel variants the reasons and warnings are about: builds, correctness, errors, SLOWER */
  sites: GateSite[];
  counts: GateCounts;
  measurementErrors: MeasurementError[];
  /**
   * set when the results hold no case, or fewer than the run selected (src/judge/coverage.ts):
   * the reason's line. Such a run fails whatever the policy and is never stored as a baseline.
   */
  incomplete?: string;
  /** set when an acceptance turned SLOWER cases that would fail the gate into warnings */
  accepted?: Accepted;
}

function gateCounts(
  cases: CaseComparison[],
  measurementErrors: number,
  buildFailures: number,
): GateCounts {
  const byCorrectness = (v: CaseComparison['correctness']) =>
    cases.filter((c) => c.correctness === v).length;
  const byPerf = (v: CaseComparison['perf']) => cases.filter((c) => c.perf === v).length;
  return {
    cases: cases.length,
    passed: byCorrectness('PASS'),
    failed: byCorrectness('FAIL'),
    drift: byCorrectness('DRIFT'),
    errors: byCorrectness('ERROR'),
    skipped: byCorrectness('SKIPPED'),
    unchecked: byCorrectness('UNCHECKED'),
    faster: byPerf('FASTER'),
    slower: byPerf('SLOWER'),
    same: byPerf('SAME'),
    ambiguous: byPerf('AMBIGUOUS'),
    new: byPerf('NEW'),
    missing: byPerf('MISSING'),
    untimed: byPerf('UNTIMED'),
    measurementErrors,
    buildFailures,
  };
}

/** Decides pass or fail from the comparison, the tier status, the results and the policy. */
export function gate(
  comparison: Comparison,
  tiers: TierStatus[],
  results: KernelgateResults,
  config: Config,
  /** a pull request's acceptance label: SLOWER then warns instead of failing (nothing else) */
  acceptance?: Acceptance,
): GateResult {
  const reasons: string[] = [];
  const warnings: string[] = [];
  const sites: GateSite[] = [];
  const context = gateContext(comparison, tiers, results, config, acceptance);
  let acceptedCases = 0;
  for (const rule of GATE_RULES) {
    const ruleFails = rule.fails(config.policy);
    for (const { line, fails = ruleFails, sites: of = [], accepted } of rule.lines(context)) {
      (fails ? reasons : warnings).push(line);
      for (const site of of) sites.push({ line, fails, message: line, ...site });
      if (accepted) acceptedCases += 1;
    }
  }
  const { cases, measurementErrors, builds, incomplete } = context;
  const counts = gateCounts(cases, measurementErrors.length, builds.length);
  return {
    verdict: reasons.length ? 'fail' : 'pass',
    reasons,
    warnings,
    sites,
    counts,
    measurementErrors,
    ...(incomplete !== undefined ? { incomplete } : {}),
    ...(acceptance && acceptedCases ? { accepted: { ...acceptance, cases: acceptedCases } } : {}),
  };
}
