// The verdict that blocks a merge: correctness failures and drift always fail; build failures,
// errors, measurement errors, regressions and missing cases fail as the policy says.
import type { Comparison, CaseComparison } from './verdicts.js';
import type { Config } from '../config/index.js';
import { fixed, formatMs, formatRatioPct } from '../lib/index.js';
import { HARNESS_STOPPED_CODES, type KernelgateResults } from '../results/index.js';
import { coverage, shardProblems } from './coverage.js';
import { deepProblems } from './sanitizer.js';
import { tailProblems } from './tails.js';
import { findMeasurementErrors, type MeasurementError } from './throughput.js';
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

/** "@alice with the label 'kernelgate-accept'", or "the label … (applied by an unknown account)". */
export function acceptedByText(a: Acceptance): string {
  return a.by
    ? `@${a.by} with the label '${a.label}'`
    : `the label '${a.label}' (GitHub did not say who applied it)`;
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

/**
 * "SLOWER +8.3 % (99 % CI +7.1 … +9.5 %, threshold 3 %): 7.213 ms vs 6.660 ms"; a paired case
 * adds its pairs: "(…, threshold 1.0 %, 60 pairs against the base revision)", and its ms are the
 * two arms' medians.
 */
export function describeChange(c: CaseComparison): string {
  const parts: string[] = [];
  if (c.ciLo !== undefined && c.ciHi !== undefined) {
    parts.push(
      `${fixed((c.confidence ?? 0) * 100, 0)} % CI ${formatRatioPct(c.ciLo)} … ${formatRatioPct(c.ciHi)}`,
      `threshold ${fixed(c.thresholdPct, 1)} %`,
    );
  }
  if (c.method === 'paired') parts.push(`${c.nPairs ?? 0} pairs against the base revision`);
  const detail = parts.length ? ` (${parts.join(', ')})` : '';
  return `${c.perf} ${formatRatioPct(c.ratio)}${detail}: ${formatMs(c.medianMs)} ms vs ${formatMs(c.baselineMedianMs)} ms`;
}

/** A line's sites, less the line and whether it fails (the gate adds those). */
type SiteOf = Omit<GateSite, 'line' | 'fails' | 'message'> & { message?: string };

/** A case's site: its kernel and variant. */
function about(c: CaseComparison, title: string): SiteOf {
  return { title, kernel: c.kernel, variant: c.variant };
}

/** The failed builds and unmet expectations, one line each, with their sites. */
function buildProblems(results: KernelgateResults): { line: string; sites: SiteOf[] }[] {
  const problems: { line: string; sites: SiteOf[] }[] = [];
  for (const b of results.builds ?? []) {
    const variant = { kernel: b.kernel, variant: b.variant };
    if (b.status === 'failed') {
      const lastLine = (b.log_tail ?? '').trim().split('\n').filter(Boolean).pop();
      const line = `${b.kernel}/${b.variant}: build failed${lastLine ? `: ${lastLine}` : ''}`;
      problems.push({ line, sites: [{ title: 'build failed', ...variant }] });
    } else if (b.status === 'expectation_failed') {
      const unmet = (b.expectations ?? []).filter((e) => !e.ok);
      const line = `${b.kernel}/${b.variant}: build expectation unmet: ${unmet.map((e) => `${e.name}: ${e.message}`).join('; ') || 'no detail'}`;
      const title = 'build expectation unmet';
      const sites = unmet.map((e) => ({
        title,
        ...variant,
        expectation: e.name,
        message: `${b.kernel}/${b.variant}: build expectation unmet: ${e.name}: ${e.message}`,
      }));
      problems.push({ line, sites: sites.length ? sites : [{ title, ...variant }] });
    }
  }
  return problems;
}

/** The harness that did not finish (a crash or an early stop), one line each. */
function harnessStopped(results: KernelgateResults): string[] {
  const stopped = results.diagnostics.filter(
    (d) => d.level === 'error' && HARNESS_STOPPED_CODES.has(d.code),
  );
  return stopped.map((d) => {
    const lines = d.message.split('\n').filter((l) => l.trim());
    const first = (lines[0] ?? '').replace(/ Last lines:$/, '');
    const last = lines.length > 1 ? ` Its last line: ${lines[lines.length - 1]!.trim()}` : '';
    return `the harness did not finish: ${first}${last}`;
  });
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

/**
 * The warnings that never fail the gate: AMBIGUOUS and UNCHECKED counts, tier problems, and the
 * doctor's and harness's errors (they usually surface as failed cases too; listed so the summary
 * names the cause, but only the policy's categories decide the verdict).
 */
function advice(
  cases: CaseComparison[],
  tiers: TierStatus[],
  results: KernelgateResults,
  add: (fails: boolean, line: string, ...of: SiteOf[]) => void,
): void {
  const ambiguous = cases.filter((c) => c.perf === 'AMBIGUOUS').length;
  if (ambiguous) {
    add(
      false,
      `${ambiguous} case(s) AMBIGUOUS: the data cannot tell a change from noise (rerun, or more samples)`,
    );
  }
  const unchecked = cases.filter((c) => c.correctness === 'UNCHECKED').length;
  if (unchecked) add(false, `${unchecked} timed case(s) carry no correctness record: UNCHECKED`);
  for (const t of tiers) if (t.problem) add(false, `${t.kernel} tiers: ${t.problem}`);
  for (const d of results.diagnostics.filter(
    (x) => x.level === 'error' && !HARNESS_STOPPED_CODES.has(x.code),
  )) {
    const line = `diagnostic ${d.code}: ${d.message}${d.fix ? ` (fix: ${d.fix})` : ''}`;
    const title = `diagnostic ${d.code}`;
    add(false, line, ...(d.kernel ? [{ title, kernel: d.kernel, variant: d.variant ?? '' }] : []));
  }
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
  const { policy } = config;
  const reasons: string[] = [];
  const warnings: string[] = [];
  const sites: GateSite[] = [];
  /** A line that fails the gate (a reason) or not (a warning), with the variants it is about. */
  const add = (fails: boolean, line: string, ...of: SiteOf[]) => {
    (fails ? reasons : warnings).push(line);
    for (const site of of) sites.push({ line, fails, message: line, ...site });
  };
  const cases = comparison.cases;
  const byCorrectness = (v: CaseComparison['correctness']) =>
    cases.filter((c) => c.correctness === v);
  const byPerf = (v: CaseComparison['perf']) => cases.filter((c) => c.perf === v);
  const measurementErrors = findMeasurementErrors(results, config);
  const builds = buildProblems(results);

  // A merged run whose shard did not report or failed: whatever the policy, never a silent pass.
  reasons.push(...shardProblems(results));
  for (const c of byCorrectness('FAIL'))
    add(true, `${c.label}: correctness FAIL: ${c.correctnessReason}`, about(c, 'correctness FAIL'));
  for (const c of byCorrectness('DRIFT')) {
    const line = `${c.label}: correctness DRIFT: ${c.correctnessReason}`;
    add(true, line, about(c, 'correctness DRIFT'));
  }
  for (const c of byCorrectness('ERROR')) {
    add(policy.failOnError, `${c.label}: ${c.correctnessReason}`, about(c, 'case error'));
  }
  // The tails (ci_cases verified on the device, untimed): a wrong one fails like a wrong case.
  for (const { line, fails, tail } of tailProblems(results, config)) {
    add(fails, line, { title: 'tail correctness', kernel: tail.kernel, variant: tail.variant });
  }
  // A harness that crashed or stopped early left cases unmeasured that no case record names: even
  // with no case failed (a crash before the first case), that is no pass.
  for (const line of harnessStopped(results)) (policy.failOnError ? reasons : warnings).push(line);
  // Whatever the policy, a document that holds no case, or fewer than its run selected, fails.
  const incomplete = coverage(results, config).problem;
  if (incomplete !== undefined) reasons.push(incomplete);
  for (const { line, sites: of } of builds) add(policy.failOnBuildFailure, line, ...of);
  const deep = deepProblems(results, policy.failOnSanitizer);
  reasons.push(...deep.reasons);
  warnings.push(...deep.warnings);
  for (const m of measurementErrors) {
    (policy.failOnMeasurementError ? reasons : warnings).push(
      `${m.label}: measurement error: ${m.message}`,
    );
  }
  // Paired or against the stored baseline, SLOWER is SLOWER; its note (a base revision that could
  // not be paired, a reference that is the A/A control) goes with it; its site only when it fails.
  // An acceptance lets a SLOWER case through, and says so on its line; it touches nothing else.
  let acceptedCases = 0;
  for (const c of byPerf('SLOWER')) {
    const note = c.perfNote ? ` (${c.perfNote})` : '';
    const line = `${c.label}: ${describeChange(c)}${note}`;
    if (policy.failOnSlower && acceptance) {
      acceptedCases += 1;
      add(false, `${line}: accepted by ${acceptedByText(acceptance)}`);
    } else if (policy.failOnSlower) add(true, line, about(c, 'SLOWER'));
    else add(false, line);
  }
  for (const c of byPerf('MISSING')) {
    (policy.failOnMissing ? reasons : warnings).push(`${c.label}: MISSING: ${c.perfNote}`);
  }
  advice(cases, tiers, results, add);

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
