// Grades each kernel's headline case against its tier ladder, says what the next milestone needs
// (in ms and in TFLOPS) and whether the chip can deliver it; flags physically impossible numbers.
import { tierCandidates, type CaseGroup, type Config, type TierMetric } from '../config/index.js';
import { caseKey, caseLabel } from './verdicts.js';
import { fixed } from '../lib/index.js';
import type { CaseResult, KernelgateResults } from '../results/index.js';

const DTYPE_ALIASES: Record<string, string> = {
  fp16: 'fp16',
  float16: 'fp16',
  half: 'fp16',
  bf16: 'bf16',
  bfloat16: 'bf16',
  fp32: 'fp32',
  float32: 'fp32',
  float: 'fp32',
  tf32: 'tf32',
  fp8: 'fp8',
  e4m3: 'fp8',
  float8_e4m3fn: 'fp8',
};

/** The case's dtype as the peak tables name it (fp16, bf16, tf32, fp32, fp8), if it has one. */
export function caseDtype(c: Pick<CaseResult, 'params'>): string | undefined {
  const raw = c.params.dtype;
  if (typeof raw !== 'string') return undefined;
  return DTYPE_ALIASES[raw.toLowerCase()] ?? raw.toLowerCase();
}

/** Datasheet dense peak for a dtype on the run's GPU: config's table, else the results' own. */
export function peakTflops(results: KernelgateResults, config: Config, dtype: string | undefined) {
  if (dtype === undefined) return undefined;
  const sku = results.environment.gpu.sku;
  const fromConfig = sku ? config.peaks[sku]?.tflops[dtype] : undefined;
  return fromConfig ?? results.environment.ceilings?.peak_tflops?.[dtype];
}

export function peakGbps(results: KernelgateResults, config: Config): number | undefined {
  const sku = results.environment.gpu.sku;
  return (sku ? config.peaks[sku]?.gbps : undefined) ?? results.environment.ceilings?.peak_gbps;
}

/** TFLOPS of a timed case: the harness's figure, else useful FLOPs over the median. */
export function caseTflops(c: CaseResult): number | undefined {
  if (c.status !== 'ok') return undefined;
  if (c.throughput?.tflops !== undefined) return c.throughput.tflops;
  const medianMs = c.timing?.median_ms;
  if (!c.work || !medianMs) return undefined;
  return c.work.flops / (medianMs * 1e-3) / 1e12;
}

export function caseGbps(c: CaseResult): number | undefined {
  if (c.status !== 'ok') return undefined;
  if (c.throughput?.gbps !== undefined) return c.throughput.gbps;
  const medianMs = c.timing?.median_ms;
  if (!c.work || !medianMs) return undefined;
  return c.work.bytes / (medianMs * 1e-3) / 1e9;
}

/** A case's TFLOPS as a % of the datasheet peak for its dtype, when both are known. */
export function casePctPeak(
  c: CaseResult,
  results: KernelgateResults,
  config: Config,
): number | undefined {
  const tflops = caseTflops(c);
  const peak = peakTflops(results, config, caseDtype(c));
  return tflops !== undefined && peak ? (tflops / peak) * 100 : undefined;
}

/**
 * A measured copy bandwidth is itself a measurement: a kernel within this margin above it is
 * noise, not a measurement error. Datasheet peaks get no margin.
 */
export const COPY_CEILING_MARGIN = 0.05;

export interface MeasurementError {
  key: string;
  label: string;
  kernel: string;
  variant: string;
  caseId: string;
  quantity: 'tflops' | 'gbps';
  value: number;
  limit: number;
  limitName: string;
  message: string;
}

/** Every timed case whose throughput exceeds what the GPU can physically do. */
export function findMeasurementErrors(
  results: KernelgateResults,
  config: Config,
): MeasurementError[] {
  const errors: MeasurementError[] = [];
  const sku = results.environment.gpu.sku ?? results.environment.gpu.name;
  const datasheetGbps = peakGbps(results, config);
  const copyGbps = results.environment.ceilings?.copy_gbps;
  for (const c of results.cases) {
    const base = {
      key: caseKey(c.kernel, c.variant, c.case),
      label: caseLabel(c),
      kernel: c.kernel,
      variant: c.variant,
      caseId: c.case,
    };
    const tflops = caseTflops(c);
    const dtype = caseDtype(c);
    const peak = peakTflops(results, config, dtype);
    if (tflops !== undefined && peak !== undefined && tflops > peak) {
      const limitName = `datasheet peak (${sku} ${dtype})`;
      errors.push({
        ...base,
        quantity: 'tflops',
        value: tflops,
        limit: peak,
        limitName,
        message:
          `${fixed(tflops, 1)} TFLOPS > ${fixed(peak, 1)} TFLOPS ${limitName}: a measurement ` +
          `error, not a result (check the FLOP count, e.g. causal halving, and the timing)`,
      });
    }
    const gbps = caseGbps(c);
    if (gbps === undefined) continue;
    const limits: [number | undefined, string][] = [
      [datasheetGbps, `datasheet bandwidth (${sku})`],
      [
        copyGbps === undefined ? undefined : copyGbps * (1 + COPY_CEILING_MARGIN),
        'measured copy ceiling + 5 %',
      ],
    ];
    const broken = limits.find(([limit]) => limit !== undefined && gbps > limit);
    if (broken && broken[0] !== undefined) {
      errors.push({
        ...base,
        quantity: 'gbps',
        value: gbps,
        limit: broken[0],
        limitName: broken[1],
        message:
          `${fixed(gbps, 0)} GB/s > ${fixed(broken[0], 0)} GB/s ${broken[1]}: a measurement ` +
          `error, not a result (check the byte count and the timing; is the data in L2?)`,
      });
    }
  }
  return errors;
}

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
}

export interface TierStatus {
  kernel: string;
  /** the candidate graded: the fastest that passed on the headline case, or the pinned one */
  variant: string;
  /** true when kernel.yml pins the candidate (tiers.variant) */
  pinned: boolean;
  /** the candidates that passed on the headline case, fastest first */
  passing: { variant: string; medianMs: number }[];
  metric: TierMetric;
  unit: '×' | '%';
  /** the headline case's params as configured, e.g. dtype=fp16,B=16,… */
  headline: string;
  caseId?: string;
  value?: number;
  medianMs?: number;
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
  /** kernel.yml's tiers.reference_pct_peak, and what the reference reached in this run */
  declaredReferencePctPeak?: number;
  measuredReferencePctPeak?: number;
  /** highest tier reached; undefined: below the first tier */
  current?: { name: string; grade?: string };
  next?: TierMilestone;
  /** how many times faster the variant must get to reach the next tier (median / required) */
  speedupNeeded?: number;
  ladder: TierMilestone[];
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
export function evaluateTiers(results: KernelgateResults, config: Config): TierStatus[] {
  const statuses: TierStatus[] = [];
  for (const { manifest } of config.kernels) {
    const tiers = manifest.tiers;
    const candidates = tierCandidates(manifest);
    if (!tiers || !candidates.length) continue;
    const ladder = [...tiers.ladder].sort((a, b) => a.min - b.min);
    const pinned = tiers.variant !== undefined;
    const status: TierStatus = {
      kernel: manifest.name,
      variant: candidates[0] as string,
      pinned,
      passing: [],
      metric: tiers.metric,
      unit: tiers.metric === 'pct_peak' ? '%' : '×',
      headline: formatGroup(tiers.case),
      ladder: ladder.map((t) => ({ name: t.name, grade: t.grade, min: t.min, achieved: false })),
      ...(tiers.reference_pct_peak !== undefined
        ? { declaredReferencePctPeak: tiers.reference_pct_peak }
        : {}),
    };
    statuses.push(status);

    const found = candidates
      .map((v) => findCase(results, manifest.name, v, tiers.case))
      .filter((c): c is CaseResult => c !== undefined);
    const aboveChip = new Set(findMeasurementErrors(results, config).map((m) => m.key));
    const good = found
      .filter((c) => passed(c) && !aboveChip.has(caseKey(c.kernel, c.variant, c.case)))
      .sort((a, b) => (a.timing?.median_ms ?? 0) - (b.timing?.median_ms ?? 0));
    status.passing = good.map((c) => ({ variant: c.variant, medianMs: c.timing?.median_ms ?? 0 }));
    const target = good[0];
    if (!target) {
      if (!found.length) {
        status.problem = pinned
          ? `the headline case (${status.headline}) of ${status.variant} is not in the results`
          : `no candidate (${candidates.join(', ')}) has the headline case (${status.headline}) in the results`;
      } else if (pinned) {
        const c = found[0] as CaseResult;
        status.caseId = c.case;
        status.problem =
          c.status !== 'ok' || !c.timing
            ? `the headline case did not produce a timing (status ${c.status})`
            : `the headline case did not pass (correctness ${c.correctness?.status ?? 'unchecked'})`;
      } else {
        status.caseId = found[0]?.case;
        const why = found.map(
          (c) =>
            `${c.variant} ${c.status === 'ok' ? `correctness ${c.correctness?.status ?? 'unchecked'}` : c.status}`,
        );
        status.problem = `no candidate passed on the headline case (${why.join(', ')})`;
      }
      continue;
    }
    status.variant = target.variant;
    status.caseId = target.case;
    const medianMs = target.timing?.median_ms as number;
    const flops = target.work?.flops;
    const dtype = caseDtype(target);
    const peak = peakTflops(results, config, dtype);
    status.medianMs = medianMs;
    status.tflops = caseTflops(target);
    status.peakTflops = peak;
    const impliedTflops = (ms: number) => (flops ? flops / (ms * 1e-3) / 1e12 : undefined);
    const msFor = (tflops: number) => (flops ? (flops / (tflops * 1e12)) * 1e3 : undefined);
    // The reference's case with the same id, else any of its cases the ladder's params match.
    const referenceCase = (name: string) =>
      results.cases.find(
        (c) => c.kernel === manifest.name && c.variant === name && c.case === target.case,
      ) ?? findCase(results, manifest.name, name, tiers.case);

    let requiredMs: (min: number) => number | undefined;
    switch (tiers.metric) {
      case 'speedup': {
        const refName = (tiers.reference ?? manifest.speed_reference) as string;
        status.referenceVariant = refName;
        const refCase = referenceCase(refName);
        if (!refCase || refCase.status !== 'ok' || !refCase.timing) {
          status.problem = `the reference ${refName} has no timing for the headline case`;
          continue;
        }
        const refMs = refCase.timing.median_ms;
        status.referenceMedianMs = refMs;
        status.referenceTflops = caseTflops(refCase);
        status.value = refMs / medianMs;
        requiredMs = (min) => refMs / min;
        if (status.referenceTflops !== undefined && peak) {
          status.measuredReferencePctPeak = (100 * status.referenceTflops) / peak;
        }
        break;
      }
      case 'pct_peak': {
        if (peak === undefined || status.tflops === undefined) {
          status.problem = `no datasheet peak for dtype ${dtype ?? '(none)'} on this GPU, or no FLOP count`;
          continue;
        }
        status.value = (status.tflops / peak) * 100;
        requiredMs = (min) => msFor((min / 100) * peak);
        break;
      }
      case 'gemm_ceiling_ratio': {
        let gemm: number | undefined;
        if (tiers.reference !== undefined) {
          const refName = tiers.reference;
          status.referenceVariant = refName;
          const refCase = referenceCase(refName);
          if (!refCase || refCase.status !== 'ok' || !refCase.timing) {
            status.problem = `the reference ${refName} has no timing for the headline case`;
            continue;
          }
          const dense = denseFlops(refCase);
          if (dense === undefined) {
            status.problem = `the headline case of ${refName} has no numeric M, N and K: its dense work is unknown`;
            continue;
          }
          const refMs = refCase.timing.median_ms;
          status.referenceMedianMs = refMs;
          gemm = dense / (refMs * 1e-3) / 1e12;
          status.referenceTflops = gemm;
          status.wallClockRatio = refMs / medianMs;
        } else {
          gemm = dtype ? results.environment.ceilings?.gemm_tflops?.[dtype] : undefined;
        }
        if (gemm === undefined || status.tflops === undefined) {
          status.problem = `no measured GEMM ceiling for dtype ${dtype ?? '(none)'}, or no FLOP count`;
          continue;
        }
        status.gemmTflops = gemm;
        if (peak) status.measuredReferencePctPeak = (100 * gemm) / peak;
        status.value = status.tflops / gemm;
        const ceiling = gemm;
        requiredMs = (min) => msFor(min * ceiling);
        break;
      }
    }
    const value = status.value;
    for (const milestone of status.ladder) {
      milestone.achieved = value >= milestone.min;
      milestone.requiredMs = requiredMs(milestone.min);
      milestone.impliedTflops =
        milestone.requiredMs === undefined ? undefined : impliedTflops(milestone.requiredMs);
      if (milestone.impliedTflops !== undefined && peak !== undefined) {
        milestone.reachable = milestone.impliedTflops <= peak;
      }
      if (milestone.achieved) status.current = { name: milestone.name, grade: milestone.grade };
    }
    status.next = status.ladder.find((m) => !m.achieved);
    if (status.next?.requiredMs !== undefined) {
      status.speedupNeeded = medianMs / status.next.requiredMs;
    }
  }
  return statuses;
}
