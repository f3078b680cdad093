// Compares a run with its baseline case by case: a performance verdict decided from the raw
// samples (bootstrap CI of the ratio of medians) and a correctness verdict (PASS/FAIL/DRIFT).
import type { Config } from './config.js';
import { formatSci } from './markdown.js';
import type { CaseResult, Environment, KernelgateResults } from './results-types.js';
import { bootstrapRatioOfMedians, hashString, spread } from './stats.js';

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

/** Fewer kept samples than this on either side gives no interval, so no verdict but AMBIGUOUS. */
export const MIN_SAMPLES_FOR_VERDICT = 5;

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
  medianMs?: number;
  iqrMs?: number;
  nSamples?: number;
  baselineMedianMs?: number;
  /** current median / baseline median (>1 is slower) */
  ratio?: number;
  ciLo?: number;
  ciHi?: number;
  confidence?: number;
  /** the threshold this case was judged with: max(threshold_pct, its noise_pct) */
  thresholdPct: number;
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

function judgeCorrectness(
  current: CaseResult,
  baseline: CaseResult | undefined,
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
  const base = baseline?.correctness;
  if (base?.status === 'PASS' && typeof base.rel_l2 === 'number' && typeof k.rel_l2 === 'number') {
    const { driftFactor, driftFloorRelL2 } = config.correctness;
    if (k.rel_l2 > driftFactor * base.rel_l2 && k.rel_l2 > driftFloorRelL2) {
      return {
        correctness: 'DRIFT',
        correctnessReason:
          `rel_l2 ${formatSci(k.rel_l2)} > ${driftFactor} × baseline ${formatSci(base.rel_l2)}` +
          ` (floor ${formatSci(driftFloorRelL2)}, tol ${formatSci(k.tol_rel_l2)})`,
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
  const t = thresholdPct / 100;
  let perf: PerfVerdict;
  if (ci.lo > 1 + t) perf = 'SLOWER';
  else if (ci.hi < 1 - t) perf = 'FASTER';
  else if (ci.lo >= 1 - t && ci.hi <= 1 + t) perf = 'SAME';
  else perf = 'AMBIGUOUS';
  return {
    perf,
    ratio: ci.ratio,
    ciLo: ci.lo,
    ciHi: ci.hi,
    confidence: ci.confidence,
    baselineMedianMs,
  };
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
 * is not compared: every case is NEW and a note says why.
 */
export function compare(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
): Comparison {
  const notes: string[] = [];
  let state: BaselineState = 'none';
  if (baseline) {
    const here = gpuOf(results.environment);
    const there = gpuOf(baseline.environment);
    if (here !== there) {
      state = 'other-gpu';
      notes.push(
        `The baseline ran on ${gpuDescription(baseline.environment)}, this run on ` +
          `${gpuDescription(results.environment)}: timings and correctness drift are not ` +
          `compared across GPUs, so every case is NEW.`,
      );
    } else {
      state = 'compared';
      notes.push(...environmentNotes(results.environment, baseline.environment));
    }
  } else {
    notes.push('No baseline was given: every case is NEW.');
  }
  const comparable = state === 'compared';

  const baselineByKey = new Map<string, CaseResult>();
  for (const c of baseline?.cases ?? []) baselineByKey.set(caseKey(c.kernel, c.variant, c.case), c);

  const cases: CaseComparison[] = [];
  const seen = new Set<string>();
  for (const current of results.cases) {
    const key = caseKey(current.kernel, current.variant, current.case);
    seen.add(key);
    const base = comparable ? baselineByKey.get(key) : undefined;
    const thresholdPct = Math.max(
      config.compare.thresholdPct,
      noisePctFor(config, current.kernel, current.variant, current.case),
      minChangePct(config, base),
    );
    const samples = current.timing?.samples_ms ?? [];
    const s = samples.length ? spread(samples) : undefined;
    cases.push({
      key,
      label: caseLabel(current),
      kernel: current.kernel,
      variant: current.variant,
      caseId: current.case,
      params: current.params,
      status: current.status,
      ...judgePerf(key, current, base, comparable, thresholdPct, config),
      medianMs: s?.medianMs ?? current.timing?.median_ms,
      iqrMs: s?.iqrMs,
      nSamples: current.timing ? samples.length : undefined,
      thresholdPct,
      ...judgeCorrectness(current, base, config),
      relL2: current.correctness?.rel_l2,
      tolRelL2: current.correctness?.tol_rel_l2,
      baselineRelL2: base?.correctness?.rel_l2,
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
        baselineMedianMs: base.timing?.median_ms,
        thresholdPct: config.compare.thresholdPct,
        correctness: 'MISSING',
        correctnessReason: 'in the baseline, not in this run',
        baselineRelL2: base.correctness?.rel_l2,
        baseline: base,
      });
    }
  }
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
  };
}
