// The verdict that blocks a merge: correctness failures and drift always fail; build failures,
// errors, measurement errors, regressions and missing cases fail as the policy says.
import type { Comparison, CaseComparison } from './verdicts.js';
import type { Config } from '../config/index.js';
import { fixed, formatMs, formatRatioPct } from '../lib/index.js';
import { HARNESS_STOPPED_CODES, type KernelgateResults } from '../results/index.js';
import { deepProblems } from '../deep/index.js';
import { shardProblems } from '../shard/index.js';
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

export interface GateResult {
  verdict: 'pass' | 'fail';
  /** why the gate failed, one line each, naming kernel, variant, case and numbers */
  reasons: string[];
  /** what the reader should see although it does not fail the gate under this policy */
  warnings: string[];
  counts: GateCounts;
  measurementErrors: MeasurementError[];
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

function buildProblems(results: KernelgateResults): string[] {
  const problems: string[] = [];
  for (const b of results.builds ?? []) {
    if (b.status === 'failed') {
      const lastLine = (b.log_tail ?? '').trim().split('\n').filter(Boolean).pop();
      problems.push(`${b.kernel}/${b.variant}: build failed${lastLine ? `: ${lastLine}` : ''}`);
    } else if (b.status === 'expectation_failed') {
      const unmet = (b.expectations ?? [])
        .filter((e) => !e.ok)
        .map((e) => `${e.name}: ${e.message}`);
      problems.push(
        `${b.kernel}/${b.variant}: build expectation unmet: ${unmet.join('; ') || 'no detail'}`,
      );
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

/** Decides pass or fail from the comparison, the tier status, the results and the policy. */
export function gate(
  comparison: Comparison,
  tiers: TierStatus[],
  results: KernelgateResults,
  config: Config,
): GateResult {
  const { policy } = config;
  const reasons: string[] = [];
  const warnings: string[] = [];
  const cases = comparison.cases;
  const byCorrectness = (v: CaseComparison['correctness']) =>
    cases.filter((c) => c.correctness === v);
  const byPerf = (v: CaseComparison['perf']) => cases.filter((c) => c.perf === v);
  const measurementErrors = findMeasurementErrors(results, config);
  const builds = buildProblems(results);

  // A merged run whose shard did not report or failed: whatever the policy, never a silent pass.
  reasons.push(...shardProblems(results));
  for (const c of byCorrectness('FAIL'))
    reasons.push(`${c.label}: correctness FAIL: ${c.correctnessReason}`);
  for (const c of byCorrectness('DRIFT'))
    reasons.push(`${c.label}: correctness DRIFT: ${c.correctnessReason}`);
  for (const c of byCorrectness('ERROR')) {
    (policy.failOnError ? reasons : warnings).push(`${c.label}: ${c.correctnessReason}`);
  }
  // A harness that crashed or stopped early left cases unmeasured that no case record names: even
  // with no case failed (a crash before the first case), that is no pass.
  for (const line of harnessStopped(results)) (policy.failOnError ? reasons : warnings).push(line);
  for (const line of builds) (policy.failOnBuildFailure ? reasons : warnings).push(line);
  const deep = deepProblems(results, policy.failOnSanitizer);
  reasons.push(...deep.reasons);
  warnings.push(...deep.warnings);
  for (const m of measurementErrors) {
    (policy.failOnMeasurementError ? reasons : warnings).push(
      `${m.label}: measurement error: ${m.message}`,
    );
  }
  // Paired or against the stored baseline, SLOWER is SLOWER; its note (a base revision that could
  // not be paired, a reference that is the A/A control) goes with it.
  for (const c of byPerf('SLOWER')) {
    const note = c.perfNote ? ` (${c.perfNote})` : '';
    (policy.failOnSlower ? reasons : warnings).push(`${c.label}: ${describeChange(c)}${note}`);
  }
  for (const c of byPerf('MISSING')) {
    (policy.failOnMissing ? reasons : warnings).push(`${c.label}: MISSING: ${c.perfNote}`);
  }
  const ambiguous = byPerf('AMBIGUOUS');
  if (ambiguous.length) {
    warnings.push(
      `${ambiguous.length} case(s) AMBIGUOUS: the data cannot tell a change from noise (rerun, or more samples)`,
    );
  }
  const unchecked = byCorrectness('UNCHECKED');
  if (unchecked.length) {
    warnings.push(`${unchecked.length} timed case(s) carry no correctness record: UNCHECKED`);
  }
  for (const t of tiers) if (t.problem) warnings.push(`${t.kernel} tiers: ${t.problem}`);
  // Doctor and harness errors usually surface as failed cases too; they are listed here so the
  // summary names the cause, but only the policy's categories decide the verdict.
  for (const d of results.diagnostics.filter(
    (x) => x.level === 'error' && !HARNESS_STOPPED_CODES.has(x.code),
  )) {
    warnings.push(`diagnostic ${d.code}: ${d.message}${d.fix ? ` (fix: ${d.fix})` : ''}`);
  }

  const counts = gateCounts(cases, measurementErrors.length, builds.length);
  return {
    verdict: reasons.length ? 'fail' : 'pass',
    reasons,
    warnings,
    counts,
    measurementErrors,
  };
}
