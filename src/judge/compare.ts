// Compares a run with its baseline case by case: a performance verdict decided from the raw
// samples (bootstrap CI of the ratio of medians against the stored baseline, or of the median
// per-pair ratio against the base revision timed in the same job) and a correctness verdict
// (PASS/FAIL/DRIFT).
import type { Config } from '../config/index.js';
import { formatRatioPct, formatSci } from '../lib/index.js';
import type { CaseResult, Environment, KernelgateResults, Paired } from '../results/index.js';
import type { SummaryTiming } from '../history/index.js';
import {
  bootstrapMedian,
  bootstrapRatioOfMedians,
  hashString,
  median,
  normalQuantile,
  spread,
} from '../lib/index.js';

export const PERF_VERDICTS = [
  'SLOWER',
  'AMBIGUOUS',
  'MISSING',
  'FASTER',
  'SAME',
  'NEW',
  'UNTIMED',
] as const;
/** UNTIMED: the current case has no timing (it failed, errored, timed out or was skipped). */
export type PerfVerdict = (typeof PERF_VERDICTS)[number];

export const CORRECTNESS_VERDICTS = [
  'FAIL',
  'DRIFT',
  'ERROR',
  'MISSING',
  'UNCHECKED',
  'SKIPPED',
  'PASS',
] as const;
/**
 * FAIL: a wrong answer (case status fail, or correctness FAIL). ERROR: no answer (raised,
 * crashed, timed out). UNCHECKED: timed but the results carry no correctness record.
 */
export type CorrectnessVerdict = (typeof CORRECTNESS_VERDICTS)[number];

/** Fewer kept samples (or pairs) than this gives no interval, so no verdict but AMBIGUOUS. */
export const MIN_SAMPLES_FOR_VERDICT = 5;

/**
 * How a case's performance verdict was reached. paired: its pairs with the base revision, timed
 * in this job (results cases[].paired); baseline: the stored baseline run; none: nothing to
 * compare with (NEW, UNTIMED).
 */
export type JudgeMethod = 'paired' | 'baseline' | 'none';

/** Paired perfNote of a reference variant that moved: it runs the same code in both arms. */
export const CONTROL_NOTE = 'reference: identical code in both arms';

export interface CaseComparison {
  /** kernel/variant/case */
  key: string;
  /** "attention/triton dtype=fp16,B=16,…" as reasons and reports name a case */
  label: string;
  kernel: string;
  variant: string;
  caseId: string;
  params: Record<string, string | number | boolean>;
  status: CaseResult['status'] | 'missing';
  perf: PerfVerdict;
  perfNote?: string;
  method: JudgeMethod;
  medianMs?: number;
  iqrMs?: number;
  nSamples?: number;
  /** the stored baseline's median, or for a paired case the base arm's */
  baselineMedianMs?: number;
  /** current median / baseline median (>1 is slower); paired: exp(median of ln(head/base)) */
  ratio?: number;
  ciLo?: number;
  ciHi?: number;
  confidence?: number;
  /**
   * the threshold this case was judged with: max(threshold_pct, its noise_pct, min_change); for
   * a paired case max(paired.threshold_pct, paired min_change)
   */
  thresholdPct: number;
  /** paired: the pairs the verdict was decided from */
  nPairs?: number;
  /** paired: minimum detectable change, the half-width of the ratio's interval, in % */
  mdcPct?: number;
  /** paired: the base revision's commit (results run.paired_base.git_sha) */
  baseSha?: string;
  correctness: CorrectnessVerdict;
  correctnessReason?: string;
  relL2?: number | null;
  tolRelL2?: number;
  baselineRelL2?: number | null;
  current?: CaseResult;
  baseline?: CaseResult;
}

export type BaselineState = 'none' | 'compared' | 'other-gpu';

export interface Comparison {
  cases: CaseComparison[];
  baseline: BaselineState;
  /** environment differences and other facts the reader must see */
  notes: string[];
  baselineRun?: { id?: string; gitSha?: string; startedAt: string; gpu: string };
  /** set when the results carry pairs with a base revision and compare.paired.enabled */
  paired?: {
    baseSha?: string;
    /** cases judged by their pairs */
    cases: number;
    /** timed cases judged against the stored baseline instead */
    baselineCases: number;
    /** compare.paired.threshold_pct */
    thresholdPct: number;
    /** median of the paired cases' minimum detectable change, % */
    medianMdcPct?: number;
    /** reference variants whose paired verdict was FASTER or SLOWER (labels) */
    controlsMoved: string[];
  };
}

export function caseKey(kernel: string, variant: string, caseId: string): string {
  return `${kernel}/${variant}/${caseId}`;
}

export function caseLabel(c: { kernel: string; variant: string; case: string }): string {
  return `${c.kernel}/${c.variant} ${c.case}`;
}

/** The run-to-run noise configured for a case: the most specific noise_pct key wins. */
export function noisePctFor(config: Config, kernel: string, variant: string, caseId: string) {
  const noise = config.compare.noisePct;
  return (
    noise[`${kernel}/${variant}/${caseId}`] ?? noise[`${kernel}/${variant}`] ?? noise[kernel] ?? 0
  );
}

function gpuOf(env: Environment): string {
  return env.gpu.sku && env.gpu.sku !== 'unknown' ? env.gpu.sku : env.gpu.name;
}

function gpuDescription(env: Environment): string {
  return env.gpu.sku ? `${env.gpu.sku} (${env.gpu.name})` : env.gpu.name;
}

/** Version differences between the baseline's environment and this run's, one note each. */
export function environmentNotes(current: Environment, baseline: Environment): string[] {
  const fields: [string, string | undefined, string | undefined][] = [
    ['driver', baseline.driver_version, current.driver_version],
    ['driver CUDA version', baseline.driver_cuda_version, current.driver_cuda_version],
    ['CUDA runtime', baseline.cuda_runtime_version, current.cuda_runtime_version],
    ['CUDA toolkit (nvcc)', baseline.cuda_toolkit_version, current.cuda_toolkit_version],
  ];
  const libs = new Set([
    ...Object.keys(baseline.libraries ?? {}),
    ...Object.keys(current.libraries ?? {}),
  ]);
  for (const lib of [...libs].sort()) {
    fields.push([lib, baseline.libraries?.[lib], current.libraries?.[lib]]);
  }
  return fields
    .filter(([, before, now]) => before !== undefined && now !== undefined && before !== now)
    .map(([what, before, now]) => `${what} differs from the baseline: ${before} → ${now}`);
}

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

function isTimed(
  c: CaseResult | undefined,
): c is CaseResult & { timing: NonNullable<CaseResult['timing']> } {
  return c !== undefined && c.status === 'ok' && c.timing !== undefined;
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

function driftReference(
  paired: Paired | undefined,
  baseline: CaseResult | undefined,
): DriftReference | undefined {
  const k = paired?.base_correctness;
  if (k?.status === 'PASS' && typeof k.rel_l2 === 'number') {
    return { correctness: k, what: 'base revision', suffix: ' on the same inputs' };
  }
  return baseline ? { correctness: baseline.correctness, what: 'baseline', suffix: '' } : undefined;
}

function judgeCorrectness(
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

interface PerfJudgement {
  perf: PerfVerdict;
  perfNote?: string;
  ratio?: number;
  ciLo?: number;
  ciHi?: number;
  confidence?: number;
  baselineMedianMs?: number;
}

interface PairedJudgement extends PerfJudgement {
  thresholdPct: number;
  nPairs: number;
  mdcPct?: number;
}

/** SLOWER / FASTER / SAME / AMBIGUOUS from an interval of a ratio and a threshold in %. */
function verdictOf(lo: number, hi: number, thresholdPct: number): PerfVerdict {
  const t = thresholdPct / 100;
  if (lo > 1 + t) return 'SLOWER';
  if (hi < 1 - t) return 'FASTER';
  if (lo >= 1 - t && hi <= 1 + t) return 'SAME';
  return 'AMBIGUOUS';
}

/** A timing method without its counts: "events, graph(23 launches)" and "(34 launches)" are one kind. */
export function timingMethodKind(method: string): string {
  return method
    .replace(/\(\d+ launches\)/g, '(N launches)')
    .replace(/\d+ calls back to back/g, 'N calls back to back');
}

function judgePerf(
  key: string,
  current: CaseResult,
  baseline: CaseResult | undefined,
  comparable: boolean,
  thresholdPct: number,
  config: Config,
): PerfJudgement {
  if (!isTimed(current)) return { perf: 'UNTIMED' };
  if (!comparable) return { perf: 'NEW' };
  if (baseline === undefined) return { perf: 'NEW', perfNote: 'not in the baseline' };
  if (!isTimed(baseline)) {
    return { perf: 'NEW', perfNote: `the baseline case was not timed (${baseline.status})` };
  }
  const cur = current.timing.samples_ms;
  const base = baseline.timing.samples_ms;
  const baselineMedianMs = base.length ? spread(base).medianMs : baseline.timing.median_ms;
  const method = timingMethodKind(current.timing.method);
  const baselineMethod = timingMethodKind(baseline.timing.method);
  if (method !== baselineMethod) {
    // Single launches include the host's launch overhead, graph replays do not: not one quantity.
    return {
      perf: 'AMBIGUOUS',
      perfNote: `timed differently (${current.timing.method} vs the baseline's ${baseline.timing.method}): not comparable`,
      ratio: current.timing.median_ms / baselineMedianMs,
      baselineMedianMs,
    };
  }
  const summary = baseline.timing as SummaryTiming;
  if (
    base.length === 0 &&
    summary.median_ci_lo_ms !== undefined &&
    summary.median_ci_hi_ms !== undefined &&
    cur.length >= MIN_SAMPLES_FOR_VERDICT &&
    (baseline.timing.n_samples ?? 0) >= MIN_SAMPLES_FOR_VERDICT
  ) {
    return judgeAgainstSummary(key, cur, summary, thresholdPct, config);
  }
  if (cur.length < MIN_SAMPLES_FOR_VERDICT || base.length < MIN_SAMPLES_FOR_VERDICT) {
    const medianMs = cur.length ? spread(cur).medianMs : current.timing.median_ms;
    return {
      perf: 'AMBIGUOUS',
      perfNote: `too few samples for an interval (current ${cur.length}, baseline ${base.length}; need ${MIN_SAMPLES_FOR_VERDICT})`,
      ratio: medianMs / baselineMedianMs,
      baselineMedianMs,
    };
  }
  const ci = bootstrapRatioOfMedians(cur, base, {
    confidence: config.compare.confidence,
    resamples: config.compare.resamples,
    seed: (config.compare.seed ^ hashString(key)) >>> 0,
  });
  return {
    perf: verdictOf(ci.lo, ci.hi, thresholdPct),
    ratio: ci.ratio,
    ciLo: ci.lo,
    ciHi: ci.hi,
    confidence: ci.confidence,
    baselineMedianMs,
  };
}

/**
 * A baseline with no samples (a record of the history's data branch keeps each median's interval,
 * not the samples): the interval of the ratio of medians from the two medians' own intervals,
 * combined on the log scale as independent normal errors (each half-width over its z-score, added
 * in quadrature), at compare.confidence. The current run's interval is its bootstrap one.
 */
function judgeAgainstSummary(
  key: string,
  cur: readonly number[],
  base: SummaryTiming,
  thresholdPct: number,
  config: Config,
): PerfJudgement {
  const confidence = config.compare.confidence;
  const own = bootstrapMedian(cur, {
    confidence,
    resamples: config.compare.resamples,
    seed: (config.compare.seed ^ hashString(key)) >>> 0,
  });
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const zBase = normalQuantile(1 - (1 - (base.median_ci_confidence ?? confidence)) / 2);
  const lo = base.median_ci_lo_ms ?? base.median_ms;
  const hi = base.median_ci_hi_ms ?? base.median_ms;
  const seOwn = (Math.log(own.hi) - Math.log(own.lo)) / 2 / z;
  const seBase = lo > 0 && hi > 0 ? (Math.log(hi) - Math.log(lo)) / 2 / zBase : 0;
  const halfWidth = z * Math.sqrt(seOwn * seOwn + seBase * seBase);
  const ratio = own.median / base.median_ms;
  const ciLo = ratio * Math.exp(-halfWidth);
  const ciHi = ratio * Math.exp(halfWidth);
  return {
    perf: verdictOf(ciLo, ciHi, thresholdPct),
    ratio,
    ciLo,
    ciHi,
    confidence,
    baselineMedianMs: base.median_ms,
  };
}

/**
 * Judges a timed case by its pairs with the base revision (head_i, base_i timed alternately in
 * this job): a percentile-bootstrap interval of the median of ln(head_i / base_i), exponentiated.
 *
 * The threshold is max(compare.paired.threshold_pct, 100 · paired.min_change_ms / base median).
 * compare.noise_pct and compare.threshold_pct do not apply: they describe how far the medians of
 * two separate runs wander (clock, power, thermal state, other tenants), and pairing cancels that
 * drift because both arms share it sample by sample. What remains is in the pairs' own spread,
 * which the interval already carries. The absolute floor stays: launch jitter of a few hundred
 * nanoseconds does not cancel.
 */
function judgePaired(
  key: string,
  current: CaseResult & { timing: NonNullable<CaseResult['timing']> },
  paired: Paired,
  config: Config,
): PairedJudgement {
  const logs = paired.log_ratios;
  const nPairs = logs.length;
  const baseTiming = paired.base_timing;
  const baseSamples = baseTiming?.samples_ms ?? [];
  const baselineMedianMs = baseTiming
    ? baseSamples.length
      ? spread(baseSamples).medianMs
      : baseTiming.median_ms
    : undefined;
  const headSamples = current.timing.samples_ms;
  const headMedianMs = headSamples.length ? spread(headSamples).medianMs : current.timing.median_ms;
  const pointRatio = Math.exp(median(logs));
  // Without the base arm's timing, the base median the pairs imply stands in for the floor.
  const floorBaseMs = baselineMedianMs ?? headMedianMs / pointRatio;
  const { thresholdPct: pairedPct, minChangeMs } = config.compare.paired;
  const thresholdPct = Math.max(
    pairedPct,
    minChangeMs > 0 && floorBaseMs > 0 ? (100 * minChangeMs) / floorBaseMs : 0,
  );
  const common = { thresholdPct, nPairs, baselineMedianMs, ratio: pointRatio };
  if (baseTiming) {
    const method = timingMethodKind(current.timing.method);
    if (method !== timingMethodKind(baseTiming.method)) {
      return {
        ...common,
        perf: 'AMBIGUOUS',
        perfNote: `timed differently (${current.timing.method} vs the base revision's ${baseTiming.method}): not comparable`,
      };
    }
  }
  if (nPairs < MIN_SAMPLES_FOR_VERDICT) {
    return {
      ...common,
      perf: 'AMBIGUOUS',
      perfNote: `too few pairs for an interval (${nPairs}; need ${MIN_SAMPLES_FOR_VERDICT})`,
    };
  }
  const ci = bootstrapMedian(logs, {
    confidence: config.compare.confidence,
    resamples: config.compare.resamples,
    seed: (config.compare.seed ^ hashString(key)) >>> 0,
  });
  const lo = Math.exp(ci.lo);
  const hi = Math.exp(ci.hi);
  return {
    ...common,
    perf: verdictOf(lo, hi, thresholdPct),
    ratio: Math.exp(ci.median),
    ciLo: lo,
    ciHi: hi,
    confidence: ci.confidence,
    mdcPct: (100 * (hi - lo)) / 2,
  };
}

/** Why a timed case of a paired run was not judged by pairs. */
function unpairedReason(paired: Paired | undefined): string {
  if (!paired) return 'not timed against the base revision';
  if (paired.base_status === 'ok') return 'base revision: ok, but no pairs were timed';
  return `base revision: ${paired.base_status}${paired.base_reason ? ` (${paired.base_reason})` : ''}`;
}

/**
 * The stored-baseline judgement of a timed case that a paired run could not judge by pairs, with
 * a perfNote that says why (the base revision failed, lacks the case, …).
 */
function fallbackNote(
  paired: Paired | undefined,
  stored: PerfJudgement,
  method: JudgeMethod,
  state: BaselineState,
): string {
  if (method === 'baseline') {
    return `${unpairedReason(paired)}; judged against the stored baseline${stored.perfNote ? `; ${stored.perfNote}` : ''}`;
  }
  const why =
    stored.perfNote ??
    (state === 'other-gpu' ? 'the stored baseline ran on another GPU' : 'no stored baseline');
  if (paired?.base_status === 'missing') {
    const reason = paired.base_reason ? ` (${paired.base_reason})` : '';
    return `not in the base revision${reason}${state === 'compared' ? `; ${why}` : ''}`;
  }
  return `${unpairedReason(paired)}; ${why}`;
}

const JUDGED: readonly PerfVerdict[] = ['SLOWER', 'FASTER', 'SAME', 'AMBIGUOUS', 'MISSING'];

/**
 * References are a built-in A/A control: a reference variant runs the same code in both arms of
 * a pair, so its paired verdict must be SAME (or AMBIGUOUS). When one is FASTER or SLOWER the
 * machine was not quiet while that case was timed, and every other FASTER or SLOWER paired
 * verdict of the same case (kernel and case id) becomes AMBIGUOUS: the PR is not blamed for it.
 * Returns the controls that moved and the verdicts made AMBIGUOUS because of them.
 */
function applyControls(
  cases: CaseComparison[],
  results: KernelgateResults,
): { controls: CaseComparison[]; demoted: CaseComparison[] } {
  const roles = new Map<string, string>();
  for (const k of results.kernels) {
    for (const v of k.variants) roles.set(`${k.name}/${v.name}`, v.role);
  }
  const moves = (c: CaseComparison) =>
    c.method === 'paired' && (c.perf === 'FASTER' || c.perf === 'SLOWER');
  const controls = cases.filter(
    (c) => moves(c) && roles.get(`${c.kernel}/${c.variant}`) === 'reference',
  );
  const byCase = new Map<string, CaseComparison[]>();
  for (const c of controls) {
    const at = `${c.kernel}\u0000${c.caseId}`;
    byCase.set(at, [...(byCase.get(at) ?? []), c]);
  }
  const demoted: CaseComparison[] = [];
  for (const c of cases) {
    if (!moves(c) || controls.includes(c)) continue;
    const moved = byCase.get(`${c.kernel}\u0000${c.caseId}`);
    if (!moved) continue;
    const names = moved.map((m) => `${m.variant} ${formatRatioPct(m.ratio)}`).join(', ');
    const which =
      moved.length === 1
        ? `the A/A control ${names} (a reference: identical code in both arms) moved`
        : `the A/A controls ${names} (references: identical code in both arms) moved`;
    c.perfNote = `was ${c.perf} ${formatRatioPct(c.ratio)}, but ${which} in the same case: the machine was not quiet`;
    c.perf = 'AMBIGUOUS';
    demoted.push(c);
  }
  for (const c of controls) c.perfNote = CONTROL_NOTE;
  return { controls, demoted };
}

/**
 * `compare.min_change_ms` as a percentage of the baseline's median: below a few microseconds a
 * change of a fixed size (launch gaps, clock ramps) is noise however tight one run's interval is.
 */
export function minChangePct(config: Config, baseline: CaseResult | undefined): number {
  const floorMs = config.compare.minChangeMs;
  const medianMs = baseline?.timing?.median_ms;
  if (floorMs <= 0 || medianMs === undefined || !(medianMs > 0)) return 0;
  return (100 * floorMs) / medianMs;
}

/**
 * Compares `results` with `baseline` (undefined: every case NEW). A baseline from another GPU
 * is not compared: every case is NEW and a note says why. Cases that carry pairs with the base
 * revision (`cases[].paired`, timed in the same job on this GPU) are judged by their pairs
 * whatever the stored baseline is; the others against the stored baseline, with a note when a
 * paired run could not pair them.
 */
export function compare(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
): Comparison {
  const notes: string[] = [];
  let state: BaselineState = 'none';
  let gpuNote: string | undefined;
  if (baseline) {
    const here = gpuOf(results.environment);
    const there = gpuOf(baseline.environment);
    if (here !== there) {
      state = 'other-gpu';
      gpuNote =
        `The baseline ran on ${gpuDescription(baseline.environment)}, this run on ` +
        `${gpuDescription(results.environment)}: timings and correctness drift are not ` +
        `compared across GPUs`;
    } else {
      state = 'compared';
    }
  }
  const comparable = state === 'compared';
  const pairedRun =
    results.run.paired_base !== undefined || results.cases.some((c) => c.paired !== undefined);
  const pairedOn = config.compare.paired.enabled && pairedRun;
  const baseSha = results.run.paired_base?.git_sha;

  const baselineByKey = new Map<string, CaseResult>();
  for (const c of baseline?.cases ?? []) baselineByKey.set(caseKey(c.kernel, c.variant, c.case), c);

  const cases: CaseComparison[] = [];
  const seen = new Set<string>();
  for (const current of results.cases) {
    const key = caseKey(current.kernel, current.variant, current.case);
    seen.add(key);
    const base = comparable ? baselineByKey.get(key) : undefined;
    const paired = pairedOn ? current.paired : undefined;
    const samples = current.timing?.samples_ms ?? [];
    const s = samples.length ? spread(samples) : undefined;

    let perf: PerfJudgement & { thresholdPct: number; nPairs?: number; mdcPct?: number };
    let method: JudgeMethod;
    if (isTimed(current) && paired?.base_status === 'ok' && paired.log_ratios.length > 0) {
      perf = judgePaired(key, current, paired, config);
      method = 'paired';
    } else {
      const thresholdPct = Math.max(
        config.compare.thresholdPct,
        noisePctFor(config, current.kernel, current.variant, current.case),
        minChangePct(config, base),
      );
      const stored = judgePerf(key, current, base, comparable, thresholdPct, config);
      method = JUDGED.includes(stored.perf) ? 'baseline' : 'none';
      perf = { ...stored, thresholdPct };
      if (pairedOn && isTimed(current)) {
        perf.perfNote = fallbackNote(paired, stored, method, state);
      }
    }
    const drift = driftReference(paired, base);
    cases.push({
      key,
      label: caseLabel(current),
      kernel: current.kernel,
      variant: current.variant,
      caseId: current.case,
      params: current.params,
      status: current.status,
      ...perf,
      method,
      ...(method === 'paired' && baseSha !== undefined ? { baseSha } : {}),
      medianMs: s?.medianMs ?? current.timing?.median_ms,
      iqrMs: s?.iqrMs,
      nSamples: current.timing ? samples.length : undefined,
      ...judgeCorrectness(current, drift, config),
      relL2: current.correctness?.rel_l2,
      tolRelL2: current.correctness?.tol_rel_l2,
      baselineRelL2: drift?.correctness?.rel_l2,
      current,
      baseline: base,
    });
  }
  if (comparable) {
    for (const [key, base] of baselineByKey) {
      if (seen.has(key) || base.status === 'skipped') continue;
      cases.push({
        key,
        label: caseLabel(base),
        kernel: base.kernel,
        variant: base.variant,
        caseId: base.case,
        params: base.params,
        status: 'missing',
        perf: 'MISSING',
        perfNote: 'in the baseline, not in this run',
        method: 'baseline',
        baselineMedianMs: base.timing?.median_ms,
        thresholdPct: config.compare.thresholdPct,
        correctness: 'MISSING',
        correctnessReason: 'in the baseline, not in this run',
        baselineRelL2: base.correctness?.rel_l2,
        baseline: base,
      });
    }
  }

  const pairedCases = cases.filter((c) => c.method === 'paired');
  const { controls, demoted } = pairedOn
    ? applyControls(cases, results)
    : { controls: [], demoted: [] };
  const judgedByPairs = pairedCases.length > 0;
  if (state === 'other-gpu') {
    notes.push(
      judgedByPairs
        ? `${gpuNote}; the ${pairedCases.length} case(s) timed against the base revision in this job are judged by their pairs, the others are NEW.`
        : `${gpuNote}, so every case is NEW.`,
    );
  } else if (state === 'compared' && baseline) {
    notes.push(...environmentNotes(results.environment, baseline.environment));
    if (baseline.cases.some((c) => (c.timing as SummaryTiming | undefined)?.median_ci_lo_ms)) {
      notes.push(
        'The baseline is a record of the history (medians and their intervals, no samples): ' +
          "cases not judged by pairs are judged from the two medians' intervals.",
      );
    }
  } else if (judgedByPairs) {
    notes.push(
      `No stored baseline was given: the ${pairedCases.length} case(s) timed against the base revision in this job are judged by their pairs, the others are NEW.`,
    );
  } else {
    notes.push('No baseline was given: every case is NEW.');
  }
  if (controls.length) {
    const list = controls.map((c) => `${c.label} ${c.perf} ${formatRatioPct(c.ratio)}`).join(', ');
    notes.push(
      `A/A control${controls.length > 1 ? 's' : ''} moved: ${list}. Reference variants run ` +
        `identical code in both arms, so ${demoted.length} FASTER or SLOWER verdict(s) of the ` +
        `same case(s) are AMBIGUOUS instead: the machine was not quiet; rerun.`,
    );
  }
  if (pairedRun && !config.compare.paired.enabled) {
    const n = results.cases.filter((c) => c.paired !== undefined).length;
    notes.push(
      `compare.paired.enabled is false: the pairs of ${n} case(s) with the base revision were ` +
        `not used; every case is judged against the stored baseline.`,
    );
  }
  const mdcs = pairedCases.map((c) => c.mdcPct).filter((x): x is number => x !== undefined);
  return {
    cases,
    baseline: state,
    notes,
    baselineRun: baseline
      ? {
          id: baseline.run.id,
          gitSha: baseline.run.git_sha,
          startedAt: baseline.run.started_at,
          gpu: gpuDescription(baseline.environment),
        }
      : undefined,
    ...(pairedOn
      ? {
          paired: {
            ...(baseSha !== undefined ? { baseSha } : {}),
            cases: pairedCases.length,
            baselineCases: cases.filter((c) => c.method === 'baseline' && c.perf !== 'MISSING')
              .length,
            thresholdPct: config.compare.paired.thresholdPct,
            ...(mdcs.length ? { medianMdcPct: median(mdcs) } : {}),
            controlsMoved: controls.map((c) => c.label),
          },
        }
      : {}),
  };
}
