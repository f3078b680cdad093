// Exports of a results document to the dashboards teams already run: Bencher Metric Format (BMF)
// JSON, and github-action-benchmark's customSmallerIsBetter / customBiggerIsBetter JSON.
//
// One benchmark per timed case, named kernel/variant/case, another tool's cases included. A case
// that failed (a wrong result, an error, a timeout) is no number to track, but it is not dropped
// silently: BMF carries it under the `failure` measure, and `kernelgate export` names every case
// a format left out.
import { join } from 'node:path';
import type { CaseResult, KernelgateResults } from '../results/index.js';
import { medianInterval } from './record.js';

export const EXPORT_FORMATS = ['bmf', 'gab-smaller', 'gab-bigger'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportOptions {
  /** confidence of the median's interval (latency's lower and upper values, gab's range) */
  confidence?: number;
  /** put before every name, e.g. the GPU SKU when one dashboard holds several */
  prefix?: string;
}

/** BMF: benchmark → measure → { value, lower_value?, upper_value? } (https://bencher.dev/bmf.json). */
export type Bmf = Record<
  string,
  Record<string, { value: number; lower_value?: number; upper_value?: number }>
>;

/** github-action-benchmark's entry of a custom tool (its src/extract.ts, BenchmarkResult). */
export interface GabEntry {
  name: string;
  value: number;
  unit: string;
  range?: string;
  extra?: string;
}

type Timed = CaseResult & { timing: NonNullable<CaseResult['timing']> };

/** Cases that failed: a wrong result, an error or a timeout (skipped ones are not failures). */
export function failedCases(results: KernelgateResults): CaseResult[] {
  return results.cases.filter(
    (c) =>
      c.status === 'fail' ||
      c.status === 'error' ||
      c.status === 'timeout' ||
      c.correctness?.status === 'FAIL',
  );
}

/** FLOPs and bytes of one call: the work, else what a tool's rate at the median implies. */
function amountsOf(c: Timed): { flops: number; bytes: number } {
  const seconds = c.timing.median_ms / 1e3;
  return {
    flops: c.work?.flops ?? (c.throughput?.tflops ?? 0) * 1e12 * seconds,
    bytes: c.work?.bytes ?? (c.throughput?.gbps ?? 0) * 1e9 * seconds,
  };
}

/** "FAIL", "error: …", "timeout": why a failed case has no number. */
function failureOf(c: CaseResult): string {
  if (c.status === 'ok' || c.status === 'fail') return 'wrong result';
  return c.reason ? `${c.status}: ${c.reason}` : c.status;
}

function timedCases(results: KernelgateResults): Timed[] {
  return results.cases.filter(
    (c): c is Timed =>
      c.status === 'ok' &&
      c.timing !== undefined &&
      c.timing.median_ms > 0 &&
      c.correctness?.status !== 'FAIL',
  );
}

const nameOf = (c: CaseResult, prefix: string | undefined) =>
  `${prefix ? `${prefix}/` : ''}${c.kernel}/${c.variant}/${c.case}`;

/** "kernel/variant/case (why)": a failed case as `kernelgate export` names one it left out. */
export function failedCaseLabel(c: CaseResult): string {
  return `${nameOf(c, undefined)} (${failureOf(c)})`;
}

/** The median's interval in ms: from the samples when there are two or more, else the median. */
function interval(c: Timed, confidence: number): { lo: number; hi: number } {
  const samples = c.timing.samples_ms;
  if (samples.length < 2) return { lo: c.timing.median_ms, hi: c.timing.median_ms };
  return medianInterval(samples, confidence);
}

/** A number to `digits` significant digits, so exports do not carry float noise. */
const sig = (value: number, digits = 6) => Number(value.toPrecision(digits));

/**
 * Bencher Metric Format, one measure per unit: `latency` (Bencher's built-in, nanoseconds) is the
 * median with its interval as lower and upper values; `throughput` (built-in, operations per
 * second) is calls per second; `flop-rate` (FLOP/s) and `byte-rate` (bytes/s), measures of their
 * own that Bencher creates on first use, are the work over the median, their bounds the work over
 * the interval's ends. A failed case has `failure` (value 1) and nothing else.
 */
export function toBmf(results: KernelgateResults, options: ExportOptions = {}): Bmf {
  const confidence = options.confidence ?? 0.99;
  const out: Bmf = {};
  for (const c of timedCases(results)) {
    const { lo, hi } = interval(c, confidence);
    const m = c.timing.median_ms;
    const measures: Bmf[string] = {
      latency: { value: sig(m * 1e6), lower_value: sig(lo * 1e6), upper_value: sig(hi * 1e6) },
    };
    const rate = (amount: number) => ({
      value: sig(amount / (m / 1e3)),
      lower_value: sig(amount / (hi / 1e3)),
      upper_value: sig(amount / (lo / 1e3)),
    });
    measures['throughput'] = rate(1);
    const { flops, bytes } = amountsOf(c);
    if (flops > 0) measures['flop-rate'] = rate(flops);
    if (bytes > 0) measures['byte-rate'] = rate(bytes);
    out[nameOf(c, options.prefix)] = measures;
  }
  for (const c of failedCases(results)) {
    out[nameOf(c, options.prefix)] = { failure: { value: 1, lower_value: 1, upper_value: 1 } };
  }
  return out;
}

function extra(c: Timed, results: KernelgateResults, lo: number, hi: number, confidence: number) {
  const gpu = results.environment.gpu;
  return [
    `${c.timing.n_samples} samples, median ${sig(c.timing.median_ms)} ms, ${Math.round(confidence * 100)} % interval ${sig(lo)} … ${sig(hi)} ms`,
    `method: ${c.timing.method}`,
    `GPU: ${gpu.sku ?? gpu.name}${results.run.git_sha ? `, commit ${results.run.git_sha.slice(0, 12)}` : ''}`,
  ].join('\n');
}

/**
 * github-action-benchmark, customSmallerIsBetter: the median in ms, `range` the larger distance
 * from the median to an end of its interval ("± x"), the rest in `extra`.
 */
export function toGabSmaller(results: KernelgateResults, options: ExportOptions = {}): GabEntry[] {
  const confidence = options.confidence ?? 0.99;
  return timedCases(results).map((c) => {
    const { lo, hi } = interval(c, confidence);
    const m = c.timing.median_ms;
    return {
      name: nameOf(c, options.prefix),
      value: sig(m),
      unit: 'ms',
      range: `± ${sig(Math.max(m - lo, hi - m), 3)}`,
      extra: extra(c, results, lo, hi, confidence),
    };
  });
}

/**
 * github-action-benchmark, customBiggerIsBetter: TFLOP/s for cases that do floating-point work,
 * GB/s for the others that move memory (a copy), calls/s for a case with no work (another tool's
 * time alone); `range` from the median's interval. A tool's rate (throughput) counts as its work.
 */
export function toGabBigger(results: KernelgateResults, options: ExportOptions = {}): GabEntry[] {
  const confidence = options.confidence ?? 0.99;
  const out: GabEntry[] = [];
  for (const c of timedCases(results)) {
    const { lo, hi } = interval(c, confidence);
    const m = c.timing.median_ms;
    const { flops, bytes } = amountsOf(c);
    const [amount, scale, unit] =
      flops > 0 ? [flops, 1e9, 'TFLOP/s'] : bytes > 0 ? [bytes, 1e6, 'GB/s'] : [1, 1e-3, 'calls/s'];
    const rate = (ms: number) => amount / (ms * scale);
    const value = rate(m);
    out.push({
      name: nameOf(c, options.prefix),
      value: sig(value),
      unit,
      range: `± ${sig(Math.max(rate(lo) - value, value - rate(hi)), 3)}`,
      extra: extra(c, results, lo, hi, confidence),
    });
  }
  return out;
}

export function exportResults(
  results: KernelgateResults,
  format: ExportFormat,
  options: ExportOptions = {},
): Bmf | GabEntry[] {
  switch (format) {
    case 'bmf':
      return toBmf(results, options);
    case 'gab-smaller':
      return toGabSmaller(results, options);
    case 'gab-bigger':
      return toGabBigger(results, options);
  }
}

/**
 * The action's exports: each format written next to the report (`<report-dir>/bmf.json`, …) and
 * its path set as the output `<format>-path` (empty when nothing was timed with a correct result).
 */
export async function writeExports(
  results: KernelgateResults,
  reportDir: string,
  fs: {
    mkdir(path: string, options: { recursive: true }): Promise<unknown>;
    writeFile(path: string, data: string): Promise<void>;
  },
  setOutput: (name: string, value: string) => void,
  options: ExportOptions = {},
): Promise<void> {
  await fs.mkdir(reportDir, { recursive: true });
  for (const format of EXPORT_FORMATS) {
    const exported = exportResults(results, format, options);
    const count = Array.isArray(exported) ? exported.length : Object.keys(exported).length;
    const path = join(reportDir, `${format}.json`);
    if (count > 0) await fs.writeFile(path, `${JSON.stringify(exported, null, 2)}\n`);
    setOutput(`${format}-path`, count > 0 ? path : '');
  }
}
