// Grades each kernel's headline case against its tier ladder, says what the next milestone needs
// (in ms and in TFLOPS) and whether the chip can deliver it.
import {
  type CaseGroup,
  type Config,
  type KernelManifest,
  namedReference,
  tierCandidates,
  type TierLadderConfig,
  type TierMetric,
} from '../config/index.js';
import type { CaseResult, KernelgateResults } from '../results/index.js';
import {
  caseDtype,
  caseTflops,
  findMeasurementErrors,
  peakTflops,
  refTimes,
  tflopsAt,
} from './throughput.js';
import { valueInterval } from './tier-interval.js';
import { caseKey } from './verdicts.js';

export interface TierMilestone {
  name: string;
  grade?: string;
  /** threshold in the metric's unit */
  min: number;
  achieved: boolean;
  /** the median time that reaching this tier needs */
  requiredMs?: number;
  /** the useful TFLOPS that time implies */
  impliedTflops?: number;
  /** false when the implied TFLOPS exceed the chip's datasheet peak; undefined when unknown */
  reachable?: boolean;
  /**
   * set where the value has an interval (TierStatus.interval): true when the rung lies inside it
   * (its low end below the rung, its high end at or above), so whether this run reaches the rung
   * is within its noise, whichever side of it the value fell
   */
  withinNoise?: boolean;
}

export interface TierStatus {
  kernel: string;
  /** the candidate graded: the fastest that passed on the headline case, or the pinned one */
  variant: string;
  /** true when kernel.yml pins the candidate (tiers.variant) */
  pinned: boolean;
  /** the candidates that passed on the headline case, fastest first, each with its time (the
   * balanced estimate where every one carries it, else the median) */
  passing: { variant: string; medianMs: number }[];
  metric: TierMetric;
  unit: '×' | '%';
  /** the headline case's params as configured, e.g. dtype=fp16,B=16,… */
  headline: string;
  caseId?: string;
  value?: number;
  /**
   * the graded time, ms: the median, or with `statistic` 'balanced' (a ratio whose candidate and
   * reference both carry timing.balanced_ms) the balanced estimate; referenceMedianMs, tflops,
   * referenceTflops and the rungs' requiredMs follow it
   */
  medianMs?: number;
  /** which estimate of the two times a ratio to a reference variant compares (speedup,
   * gemm_ceiling_ratio): 'balanced' (timing.balanced_ms) or 'median' */
  statistic?: 'median' | 'balanced';
  tflops?: number;
  peakTflops?: number;
  referenceVariant?: string;
  referenceMedianMs?: number;
  /** the reference's own rate: useful TFLOPS (speedup) or dense TFLOPS (gemm_ceiling_ratio) */
  referenceTflops?: number;
  /** gemm_ceiling_ratio: the rate the ratio divides by (a reference's dense rate, or the run's ceiling) */
  gemmTflops?: number;
  /** gemm_ceiling_ratio against a reference variant: its median over the candidate's (wall clock) */
  wallClockRatio?: number;
  /** kernel.yml's optional tiers.reference_pct_peak, and what the reference reached in this run */
  declaredReferencePctPeak?: number;
  measuredReferencePctPeak?: number;
  /** highest tier reached; undefined: below the first tier */
  current?: { name: string; grade?: string };
  next?: TierMilestone;
  /** how many times faster the variant must get to reach the next tier (median / required) */
  speedupNeeded?: number;
  ladder: TierMilestone[];
  /**
   * the value's interval: a percentile bootstrap (compare.confidence, compare.resamples) of the
   * graded times, each side's samples resampled as its estimate is made (the median from all of
   * them; the balanced estimate within each predecessor's group, from timing.after)
   */
  interval?: { lo: number; hi: number; confidence: number };
  /** why the value has no interval */
  intervalProblem?: string;
  /** why no value could be computed */
  problem?: string;
}

function formatGroup(group: CaseGroup): string {
  return Object.entries(group)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : String(v)}`)
    .join(',');
}

function matches(c: CaseResult, group: CaseGroup): boolean {
  return Object.entries(group).every(([k, want]) => {
    const have = c.params[k];
    if (have === undefined) return false;
    const options = Array.isArray(want) ? want : [want];
    return options.some((o) => String(o) === String(have));
  });
}

function findCase(results: KernelgateResults, kernel: string, variant: string, group: CaseGroup) {
  return results.cases.find(
    (c) => c.kernel === kernel && c.variant === variant && matches(c, group),
  );
}

/** A case the gate counts as passing: timed, and its correctness record says PASS. */
function passed(c: CaseResult): c is CaseResult & { timing: NonNullable<CaseResult['timing']> } {
  return c.status === 'ok' && c.timing !== undefined && c.correctness?.status === 'PASS';
}

/** 2·M·N·K from a case's params: the work a dense GEMM of that problem does. */
function denseFlops(c: CaseResult): number | undefined {
  const { M, N, K } = c.params;
  if (typeof M !== 'number' || typeof N !== 'number' || typeof K !== 'number') return undefined;
  return 2 * M * N * K;
}

/**
 * The base revision's arm of a paired run as a results document of its own: each paired case
 * with the base's timing and correctness (throughput recomputed from the work), the others left
 * out. Undefined when the run carries no pairs.
 */
export function baseArmResults(results: KernelgateResults): KernelgateResults | undefined {
  const cases: CaseResult[] = [];
  for (const c of results.cases) {
    const p = c.paired;
    if (!p) continue;
    const rest: CaseResult = { ...c };
    delete rest.paired;
    delete rest.throughput;
    if (p.base_status === 'ok' && p.base_timing) {
      cases.push({
        ...rest,
        status: 'ok',
        timing: p.base_timing,
        ...(p.base_correctness ? { correctness: p.base_correctness } : {}),
      });
    } else if (p.base_status !== 'missing') {
      delete rest.timing;
      cases.push({ ...rest, status: p.base_status });
    }
  }
  if (!cases.length) return undefined;
  return { ...results, cases };
}

/**
 * Evaluates the tier ladder of every configured kernel that has one, on the fastest candidate
 * that passed on the headline case (or the one kernel.yml pins), against the ladder's reference.
 */
/** What grading one kernel's headline needs: the run, its manifest and ladder, the chosen case. */
interface Grading {
  results: KernelgateResults;
  manifest: KernelManifest;
  tiers: TierLadderConfig;
  status: TierStatus;
  target: CaseResult;
  medianMs: number;
  dtype: string | undefined;
  peak: number | undefined;
  /** ms for a throughput, from the headline's FLOP count */
  msFor: (tflops: number) => number | undefined;
  /** the reference variant's timing a ratio divides by (speedup, gemm_ceiling_ratio) */
  refTiming?: NonNullable<CaseResult['timing']>;
}

function newStatus(
  manifest: KernelManifest,
  tiers: TierLadderConfig,
  candidates: string[],
): TierStatus {
  const ladder = [...tiers.ladder].sort((a, b) => a.min - b.min);
  return {
    kernel: manifest.name,
    variant: candidates[0] as string,
    pinned: tiers.variant !== undefined,
    passing: [],
    metric: tiers.metric,
    unit: tiers.metric === 'pct_peak' ? '%' : '×',
    headline: formatGroup(tiers.case),
    ladder: ladder.map((t) => ({ name: t.name, grade: t.grade, min: t.min, achieved: false })),
    ...(tiers.reference_pct_peak !== undefined
      ? { declaredReferencePctPeak: tiers.reference_pct_peak }
      : {}),
  };
}

/** Why no candidate can be graded on the headline case. */
function noTargetProblem(status: TierStatus, found: CaseResult[], candidates: string[]): void {
  if (!found.length) {
    status.problem = status.pinned
      ? `the headline case (${status.headline}) of ${status.variant} is not in the results`
      : `no candidate (${candidates.join(', ')}) has the headline case (${status.headline}) in the results`;
  } else if (status.pinned) {
    const c = found[0] as CaseResult;
    status.caseId = c.case;
    status.problem =
      c.status !== 'ok' || !c.timing
        ? `the headline case did not produce a timing (status ${c.status})`
        : `the headline case did not pass (correctness ${c.correctness?.status ?? 'unchecked'})`;
  } else {
    status.caseId = found[0]?.case;
    // identity before timing: a candidate identical in base and head is verified, not timed (a
    // pull request's run of another kernel: H100 run 154 read "no candidate passed" beside four
    // that passed)
    const untimed = (c: CaseResult) => c.identical !== undefined && !c.timing;
    if (found.every(untimed)) {
      status.problem = `every candidate is identical in base and head, verified and not timed in this run (${found.map((c) => c.variant).join(', ')})`;
      return;
    }
    const why = found.map((c) =>
      untimed(c)
        ? `${c.variant} identical in base and head, not timed`
        : `${c.variant} ${c.status === 'ok' ? `correctness ${c.correctness?.status ?? 'unchecked'}` : c.status}`,
    );
    status.problem = `no candidate passed on the headline case (${why.join(', ')})`;
  }
}

/** The fastest candidate that passed on the headline case, with no measurement error. */
function headlineTarget(
  results: KernelgateResults,
  config: Config,
  manifest: KernelManifest,
  tiers: TierLadderConfig,
  status: TierStatus,
  candidates: string[],
): CaseResult | undefined {
  const found = candidates
    .map((v) => findCase(results, manifest.name, v, tiers.case))
    .filter((c): c is CaseResult => c !== undefined);
  const aboveChip = new Set(findMeasurementErrors(results, config).map((m) => m.key));
  const ok = found.filter((c) => passed(c) && !aboveChip.has(caseKey(c.kernel, c.variant, c.case)));
  // the fastest by the estimate the ratio will compare: balanced where every one carries it
  const balanced = ok.length > 0 && ok.every((c) => c.timing?.balanced_ms !== undefined);
  const time = (c: CaseResult) => (balanced ? c.timing?.balanced_ms : c.timing?.median_ms) ?? 0;
  const good = ok.sort((a, b) => time(a) - time(b));
  status.passing = good.map((c) => ({ variant: c.variant, medianMs: time(c) }));
  if (!good[0]) noTargetProblem(status, found, candidates);
  return good[0];
}

/** The reference's case with the same id, else any of its cases the ladder's params match. */
function referenceCase(g: Grading, name: string): CaseResult | undefined {
  return (
    g.results.cases.find(
      (c) => c.kernel === g.manifest.name && c.variant === name && c.case === g.target.case,
    ) ?? findCase(g.results, g.manifest.name, name, g.tiers.case)
  );
}

/**
 * The reference's time for the ratio, the candidate's graded time set to match: the balanced
 * estimates where both carry one, else the medians (refTimes).
 */
function pairedTimes(g: Grading, refTiming: NonNullable<CaseResult['timing']>): number {
  const { status } = g;
  g.refTiming = refTiming;
  const times = refTimes(g.target.timing ?? {}, refTiming);
  status.statistic = times?.statistic ?? 'median';
  if (times?.statistic !== 'balanced') return refTiming.median_ms;
  const [mine, theirs] = times.ms;
  g.medianMs = mine;
  status.medianMs = mine;
  status.tflops = tflopsAt(g.target, mine) ?? status.tflops;
  return theirs;
}

/** A metric sets the status's value and returns the median a rung's `min` needs; or a problem. */
type Metric = (g: Grading) => ((min: number) => number | undefined) | undefined;

const speedup: Metric = (g) => {
  const { status } = g;
  const refName = namedReference(g.manifest) as string;
  status.referenceVariant = refName;
  const refCase = referenceCase(g, refName);
  if (!refCase || refCase.status !== 'ok' || !refCase.timing) {
    status.problem = `the reference ${refName} has no timing for the headline case`;
    return undefined;
  }
  const refMs = pairedTimes(g, refCase.timing);
  const balanced = status.statistic === 'balanced';
  status.referenceMedianMs = refMs;
  status.referenceTflops = balanced ? tflopsAt(refCase, refMs) : caseTflops(refCase);
  status.value = refMs / g.medianMs;
  if (status.referenceTflops !== undefined && g.peak) {
    status.measuredReferencePctPeak = (100 * status.referenceTflops) / g.peak;
  }
  return (min) => refMs / min;
};

const pctPeak: Metric = (g) => {
  const { status, peak } = g;
  if (peak === undefined || status.tflops === undefined) {
    status.problem = `no datasheet peak for dtype ${g.dtype ?? '(none)'} on this GPU, or no FLOP count`;
    return undefined;
  }
  status.value = (status.tflops / peak) * 100;
  return (min) => g.msFor((min / 100) * peak);
};

/** The dense GEMM rate to compare with: the reference variant's, else the measured ceiling. */
function gemmRate(g: Grading): number | undefined {
  const { status, tiers } = g;
  if (tiers.reference === undefined) {
    return g.dtype ? g.results.environment.ceilings?.gemm_tflops?.[g.dtype] : undefined;
  }
  const refName = tiers.reference;
  status.referenceVariant = refName;
  const refCase = referenceCase(g, refName);
  if (!refCase || refCase.status !== 'ok' || !refCase.timing) {
    status.problem = `the reference ${refName} has no timing for the headline case`;
    return undefined;
  }
  const dense = denseFlops(refCase);
  if (dense === undefined) {
    status.problem = `the headline case of ${refName} has no numeric M, N and K: its dense work is unknown`;
    return undefined;
  }
  const refMs = pairedTimes(g, refCase.timing);
  status.referenceMedianMs = refMs;
  status.referenceTflops = dense / (refMs * 1e-3) / 1e12;
  status.wallClockRatio = refMs / g.medianMs;
  return status.referenceTflops;
}

const gemmCeilingRatio: Metric = (g) => {
  const { status } = g;
  const gemm = gemmRate(g);
  if (status.problem) return undefined;
  if (gemm === undefined || status.tflops === undefined) {
    status.problem = `no measured GEMM ceiling for dtype ${g.dtype ?? '(none)'}, or no FLOP count`;
    return undefined;
  }
  status.gemmTflops = gemm;
  if (g.peak) status.measuredReferencePctPeak = (100 * gemm) / g.peak;
  status.value = status.tflops / gemm;
  return (min) => g.msFor(min * gemm);
};

const METRICS: Record<TierMetric, Metric> = {
  speedup,
  pct_peak: pctPeak,
  gemm_ceiling_ratio: gemmCeilingRatio,
};

/**
 * Each rung: achieved, the median it needs, whether the chip can reach it (the TFLOPS the rung
 * implies, from the rates this run measured, against the datasheet peak); the next rung. Where the
 * run cannot tell (no FLOP count, no peak), a ratio rung's reachability comes from kernel.yml's
 * optional tiers.reference_pct_peak (min × that % at most 100), else stays unknown.
 */
function gradeLadder(g: Grading, requiredMs: (min: number) => number | undefined): void {
  const { status, peak } = g;
  const { interval } = status;
  const declared = status.metric === 'pct_peak' ? undefined : status.declaredReferencePctPeak;
  const flops = g.target.work?.flops;
  const impliedTflops = (ms: number) => (flops ? flops / (ms * 1e-3) / 1e12 : undefined);
  const value = status.value as number;
  for (const milestone of status.ladder) {
    milestone.achieved = value >= milestone.min;
    milestone.requiredMs = requiredMs(milestone.min);
    milestone.impliedTflops =
      milestone.requiredMs === undefined ? undefined : impliedTflops(milestone.requiredMs);
    if (milestone.impliedTflops !== undefined && peak !== undefined) {
      milestone.reachable = milestone.impliedTflops <= peak;
    } else if (declared !== undefined) {
      milestone.reachable = milestone.min * declared <= 100;
    }
    if (interval)
      milestone.withinNoise = interval.lo < milestone.min && interval.hi >= milestone.min;
    if (milestone.achieved) status.current = { name: milestone.name, grade: milestone.grade };
  }
  status.next = status.ladder.find((m) => !m.achieved);
  if (status.next?.requiredMs !== undefined) {
    status.speedupNeeded = g.medianMs / status.next.requiredMs;
  }
}

function gradeKernel(results: KernelgateResults, config: Config, manifest: KernelManifest) {
  const tiers = manifest.tiers;
  const candidates = tierCandidates(manifest);
  if (!tiers || !candidates.length) return undefined;
  const status = newStatus(manifest, tiers, candidates);
  const target = headlineTarget(results, config, manifest, tiers, status, candidates);
  if (!target) return status;
  status.variant = target.variant;
  status.caseId = target.case;
  const medianMs = target.timing?.median_ms as number;
  const dtype = caseDtype(target);
  const peak = peakTflops(results, config, dtype);
  status.medianMs = medianMs;
  status.tflops = caseTflops(target);
  status.peakTflops = peak;
  const flops = target.work?.flops;
  const msFor = (tflops: number) => (flops ? (flops / (tflops * 1e12)) * 1e3 : undefined);
  const g: Grading = { results, manifest, tiers, status, target, medianMs, dtype, peak, msFor };
  const requiredMs = METRICS[tiers.metric](g);
  if (requiredMs) {
    valueInterval(status, target.timing, g.refTiming, config);
    gradeLadder(g, requiredMs);
  }
  return status;
}

export function evaluateTiers(results: KernelgateResults, config: Config): TierStatus[] {
  return config.kernels
    .map(({ manifest }) => gradeKernel(results, config, manifest))
    .filter((s): s is TierStatus => s !== undefined);
}
