// A case's throughput, the chip's datasheet peaks (the GPU table, or kernelgate.yml's peaks), and
// the measurement errors: rates above what the chip can do.
import type { Config } from '../config/index.js';
import { fixed } from '../lib/index.js';
import type { CaseResult, KernelgateResults } from '../results/index.js';
import { caseKey, caseLabel } from './verdicts.js';

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
  return medianMs ? tflopsAt(c, medianMs) : undefined;
}

/** The case's useful FLOPs over `ms` per call, in TFLOPS; undefined without a FLOP count. */
export function tflopsAt(c: CaseResult, ms: number): number | undefined {
  return c.work ? c.work.flops / (ms * 1e-3) / 1e12 : undefined;
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

/** The two times a ratio between two cases compares, [this case's, the reference's], and which
 * estimate they are. */
export interface ComparedTimes {
  statistic: 'balanced' | 'median';
  ms: [number, number];
}

/**
 * The times a case's ratio to its reference's case compares: their balanced estimates
 * (timing.balanced_ms) where both carry one, else their medians. At a power cap a sample reads
 * what ran before it, so a case's samples come in modes that the median falls between wherever
 * the ranks put it (docs/judging.md, Tiers). Undefined without both, or with a time that is not
 * positive. The tiers, the history's ratios and the dashboard's speedups all take this rule.
 */
export function refTimes(
  c: { median_ms?: number; balanced_ms?: number },
  ref: { median_ms?: number; balanced_ms?: number },
): ComparedTimes | undefined {
  const both = c.balanced_ms !== undefined && ref.balanced_ms !== undefined;
  const mine = both ? c.balanced_ms : c.median_ms;
  const theirs = both ? ref.balanced_ms : ref.median_ms;
  if (mine === undefined || theirs === undefined || !(mine > 0) || !(theirs > 0)) return undefined;
  return { statistic: both ? 'balanced' : 'median', ms: [mine, theirs] };
}
