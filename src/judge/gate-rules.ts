// The gate's rules, in the order their lines are written: what each judges, whether its lines fail
// the gate under the policy, and the report's change kind it blocks. The gate (gate.ts) applies
// them; the report reads which kinds block from the same table (blockingKinds).
import type { Config } from '../config/index.js';
import { fixed, formatMs, formatRatioPct } from '../lib/index.js';
import { HARNESS_STOPPED_CODES, type KernelgateResults } from '../results/index.js';
import { coverage, shardProblems } from './coverage.js';
import type { Acceptance, GateSite } from './gate.js';
import { deepProblems } from './sanitizer.js';
import { tailProblems } from './tails.js';
import { findMeasurementErrors, type MeasurementError } from './throughput.js';
import type { TierStatus } from './tiers.js';
import type { CaseComparison, Comparison } from './verdicts.js';

type Policy = Config['policy'];

/** The report's kinds of change that a rule can block with (src/report/digest.ts). */
export type GateKind = 'wrong' | 'drift' | 'error' | 'above-peak' | 'missing' | 'slower' | 'build';

/** What the rules read: the run's comparison, tiers, results and policy, computed once. */
export interface GateContext {
  cases: CaseComparison[];
  tiers: TierStatus[];
  results: KernelgateResults;
  config: Config;
  acceptance?: Acceptance;
  measurementErrors: MeasurementError[];
  builds: { line: string; sites: SiteOf[] }[];
  /** the coverage problem: no case, or fewer than the run selected */
  incomplete?: string;
}

export function gateContext(
  comparison: Comparison,
  tiers: TierStatus[],
  results: KernelgateResults,
  config: Config,
  acceptance?: Acceptance,
): GateContext {
  const incomplete = coverage(results, config).problem;
  return {
    cases: comparison.cases,
    tiers,
    results,
    config,
    ...(acceptance ? { acceptance } : {}),
    measurementErrors: findMeasurementErrors(results, config),
    builds: buildProblems(results),
    ...(incomplete !== undefined ? { incomplete } : {}),
  };
}

/** One line of a rule: its text, where it is about a variant its sites, and its own fails. */
export interface GateLine {
  line: string;
  /** overrides the rule's fails for this line (the tails, the deep checks, an accepted SLOWER) */
  fails?: boolean;
  sites?: SiteOf[];
  /** an acceptance let this SLOWER case through */
  accepted?: boolean;
}

export interface GateRule {
  /** what it judges, in words */
  name: string;
  /** the report's kind of change it blocks with, when its lines fail */
  kind?: GateKind;
  /** whether its lines fail the gate under this policy (a line may say otherwise) */
  fails: (policy: Policy) => boolean;
  lines: (context: GateContext) => GateLine[];
}

const always = () => true;
const never = () => false;
const byCorrectness = (cases: CaseComparison[], v: CaseComparison['correctness']) =>
  cases.filter((c) => c.correctness === v);
const byPerf = (cases: CaseComparison[], v: CaseComparison['perf']) =>
  cases.filter((c) => c.perf === v);

/** The gate's rules, in the order their lines are written. */
export const GATE_RULES: readonly GateRule[] = [
  {
    // A merged run whose shard did not report or failed: whatever the policy, never a silent pass.
    name: 'shards that did not report or failed',
    fails: always,
    lines: ({ results }) => shardProblems(results).map((line) => ({ line })),
  },
  {
    name: 'correctness FAIL',
    kind: 'wrong',
    fails: always,
    lines: ({ cases }) =>
      byCorrectness(cases, 'FAIL').map((c) => ({
        line: `${c.label}: correctness FAIL: ${c.correctnessReason}`,
        sites: [about(c, 'correctness FAIL')],
      })),
  },
  {
    name: 'correctness DRIFT',
    kind: 'drift',
    fails: always,
    lines: ({ cases }) =>
      byCorrectness(cases, 'DRIFT').map((c) => ({
        line: `${c.label}: correctness DRIFT: ${c.correctnessReason}`,
        sites: [about(c, 'correctness DRIFT')],
      })),
  },
  {
    name: 'case errors',
    kind: 'error',
    fails: (p) => p.failOnError,
    lines: ({ cases }) =>
      byCorrectness(cases, 'ERROR').map((c) => ({
        line: `${c.label}: ${c.correctnessReason}`,
        sites: [about(c, 'case error')],
      })),
  },
  {
    // The tails (ci_cases verified on the device, untimed): a wrong one fails like a wrong case.
    name: 'tails',
    fails: always,
    lines: ({ results, config }) =>
      tailProblems(results, config).map(({ line, fails, tail }) => ({
        line,
        fails,
        sites: [{ title: 'tail correctness', kernel: tail.kernel, variant: tail.variant }],
      })),
  },
  {
    // A harness that crashed or stopped early left cases unmeasured that no case record names:
    // even with no case failed (a crash before the first case), that is no pass.
    name: 'a harness that did not finish',
    fails: (p) => p.failOnError,
    lines: ({ results }) => harnessStopped(results).map((line) => ({ line })),
  },
  {
    // Whatever the policy, a document that holds no case, or fewer than its run selected, fails.
    name: 'coverage',
    fails: always,
    lines: ({ incomplete }) => (incomplete !== undefined ? [{ line: incomplete }] : []),
  },
  {
    name: 'builds',
    kind: 'build',
    fails: (p) => p.failOnBuildFailure,
    lines: ({ builds }) => builds.map(({ line, sites }) => ({ line, sites })),
  },
  {
    name: 'the deep checks (compute-sanitizer)',
    fails: (p) => p.failOnSanitizer,
    lines: ({ results, config }) => {
      const deep = deepProblems(results, config.policy.failOnSanitizer);
      return [
        ...deep.reasons.map((line) => ({ line, fails: true })),
        ...deep.warnings.map((line) => ({ line, fails: false })),
      ];
    },
  },
  {
    name: 'measurement errors',
    kind: 'above-peak',
    fails: (p) => p.failOnMeasurementError,
    lines: ({ measurementErrors }) =>
      measurementErrors.map((m) => ({ line: `${m.label}: measurement error: ${m.message}` })),
  },
  {
    // Paired or against the stored baseline, SLOWER is SLOWER; its note (a base revision that
    // could not be paired, a reference that is the A/A control) goes with it; its site only when
    // it fails. An acceptance lets a SLOWER case through, and says so on its line; it touches
    // nothing else, and never a case that is wrong (FAIL or DRIFT): its speed is moot, and it
    // stays SLOWER beside its correctness failure.
    name: 'SLOWER',
    kind: 'slower',
    fails: (p) => p.failOnSlower,
    lines: ({ cases, config, acceptance }) =>
      byPerf(cases, 'SLOWER').map((c) => {
        const note = c.perfNote ? ` (${c.perfNote})` : '';
        const line = `${c.label}: ${describeChange(c)}${note}`;
        if (!config.policy.failOnSlower) return { line };
        if (acceptance && c.correctness !== 'FAIL' && c.correctness !== 'DRIFT') {
          return {
            line: `${line}: accepted by ${acceptedByText(acceptance)}`,
            fails: false,
            accepted: true,
          };
        }
        return { line, sites: [about(c, 'SLOWER')] };
      }),
  },
  {
    name: 'MISSING',
    kind: 'missing',
    fails: (p) => p.failOnMissing,
    lines: ({ cases }) =>
      byPerf(cases, 'MISSING').map((c) => ({ line: `${c.label}: MISSING: ${c.perfNote}` })),
  },
  {
    name: 'advice',
    fails: never,
    lines: advice,
  },
];

/** The report's kinds of change that fail the gate under this policy: read from GATE_RULES. */
export function blockingKinds(policy: Policy): Set<GateKind> {
  return new Set(
    GATE_RULES.filter((r) => r.kind !== undefined && r.fails(policy)).map((r) => r.kind!),
  );
}

/** "@alice with the label 'kernelgate-accept'", or "the label … (applied by an unknown account)". */
export function acceptedByText(a: Acceptance): string {
  return a.by
    ? `@${a.by} with the label '${a.label}'`
    : `the label '${a.label}' (GitHub did not say who applied it)`;
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

/**
 * The warnings that never fail the gate: AMBIGUOUS and UNCHECKED counts, tier problems, and the
 * doctor's and harness's errors (they usually surface as failed cases too; listed so the summary
 * names the cause, but only the policy's categories decide the verdict).
 */
function advice({ cases, tiers, results }: GateContext): GateLine[] {
  const out: GateLine[] = [];
  const add = (line: string, ...sites: SiteOf[]) => out.push({ line, sites });
  const ambiguous = cases.filter((c) => c.perf === 'AMBIGUOUS').length;
  if (ambiguous) {
    add(
      `${ambiguous} case(s) AMBIGUOUS: the data cannot tell a change from noise (rerun, or more samples)`,
    );
  }
  const unchecked = cases.filter((c) => c.correctness === 'UNCHECKED').length;
  if (unchecked) add(`${unchecked} timed case(s) carry no correctness record: UNCHECKED`);
  for (const t of tiers) if (t.problem) add(`${t.kernel} tiers: ${t.problem}`);
  for (const d of results.diagnostics.filter(
    (x) => x.level === 'error' && !HARNESS_STOPPED_CODES.has(x.code),
  )) {
    const line = `diagnostic ${d.code}: ${d.message}${d.fix ? ` (fix: ${d.fix})` : ''}`;
    const title = `diagnostic ${d.code}`;
    add(line, ...(d.kernel ? [{ title, kernel: d.kernel, variant: d.variant ?? '' }] : []));
  }
  return out;
}
