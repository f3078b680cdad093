// The compact history record: one per trusted run, what the data branch keeps of a results
// document. Per case a summary (median and its interval, sample count, clocks, error norm, ratio to
// the kernel's reference, verdict), per run where it came from. Raw samples stay in the run's
// artifact: for the 217-case set a record is 45 KB of text (1/20 of its results file) and about
// 5 KB once git has packed it (docs/history.md, "Growth").
import { refTimes, timingMethodKind } from '../judge/index.js';
import { median, sortedCopy } from '../lib/index.js';
import type { CaseResult, Environment, KernelgateResults, Timing } from '../results/index.js';
import type { StoredAcceptance } from '../store/index.js';

/** The format this kernelgate writes; it reads this one and older ones of the same name. */
export const HISTORY_FORMAT_NAME = 'kernelgate/history';
export const HISTORY_FORMAT_VERSION = 1;
export const HISTORY_FORMAT = `${HISTORY_FORMAT_NAME}@${HISTORY_FORMAT_VERSION}`;

/** The columns of `cases`, in order. A reader finds columns by name, so new ones can be added. */
export const CASE_FIELDS = [
  'kernel',
  'variant',
  'case',
  'status',
  'method',
  'stop',
  'median_ms',
  'lo_pct',
  'hi_pct',
  'n',
  'sm_mhz',
  'power_w',
  'throttled',
  'correct',
  'rel_l2',
  'tol_rel_l2',
  'verdict',
  'tuning',
  'balanced_ms',
] as const;
export type CaseField = (typeof CASE_FIELDS)[number];
type Cell = string | number | null;

export interface HistoryRun {
  /** CI run id (GITHUB_RUN_ID) or the results' own id */
  id?: string;
  commit?: string;
  ref?: string;
  branch: string;
  event?: string;
  started_at: string;
  finished_at?: string;
  /** normalised GPU SKU, the store's key */
  sku: string;
  gpu: string;
  driver?: string;
  cuda?: string;
  /** kernelgate's version that wrote the record */
  kernelgate: string;
  harness: string;
  /** where the full results (raw samples) are: the run's page or artifact */
  artifact?: string;
  /** the gate's verdict on this run */
  verdict?: 'pass' | 'fail';
  /** SLOWER cases the gate let through because a pull request accepted them (its label) */
  accepted?: StoredAcceptance;
  /** the confidence of every case's [lo_ms, hi_ms] */
  interval_confidence: number;
  paired_base?: string;
}

export interface HistoryRecord {
  format: string;
  run: HistoryRun;
  environment: Environment;
  /** per kernel, the variant `ref_ratio` divides by */
  references: Record<string, string>;
  /** per kernel and case: [flops, bytes] of one call (throughput = work / median) */
  work: Record<string, Record<string, [number, number]>>;
  fields: string[];
  cases: Cell[][];
}

/** One case of a record, by column name, with what follows from it (interval in ms, throughput, ratio). */
export interface HistoryCase {
  kernel: string;
  variant: string;
  case: string;
  status: CaseResult['status'];
  /** the timing method's kind: launch counts are left out (timingMethodKind) */
  method?: string;
  stop?: Timing['stop_reason'];
  median_ms?: number;
  /** the median's interval, below and above it, in % of it */
  lo_pct?: number;
  hi_pct?: number;
  n?: number;
  sm_mhz?: number;
  power_w?: number;
  throttled?: number;
  correct?: 'PASS' | 'FAIL';
  rel_l2?: number | null;
  tol_rel_l2?: number;
  verdict?: string;
  /** the configuration the kernel's tuner chose (cases[].tuning.config), as JSON text */
  tuning?: string;
  /** timing.balanced_ms: the mean over the samples' predecessors of the median behind each */
  balanced_ms?: number;
  /** derived: the interval in ms */
  lo_ms?: number;
  hi_ms?: number;
  /** derived: this time / the reference variant's on the same case (refTimes: the balanced
   * estimates where both carry one, else the medians) */
  ref_ratio?: number;
  /** derived: work / median */
  tflops?: number;
  gbps?: number;
}

export interface RecordOptions {
  branch: string;
  sku: string;
  kernelgateVersion: string;
  event?: string;
  runId?: string;
  artifact?: string;
  verdict?: 'pass' | 'fail';
  verdicts?: Record<string, string>;
  accepted?: StoredAcceptance;
  references?: Record<string, string>;
  /** confidence of the median intervals (default 0.99, compare.confidence's default) */
  confidence?: number;
}

/** `value` to `digits` significant digits (the record's numbers are summaries, not raw data). */
export function sig(value: number | null | undefined, digits: number): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  if (value === 0) return 0;
  return Number(value.toPrecision(digits));
}

/**
 * A distribution-free interval of the median: the order statistics x(j) and x(n+1-j), with j the
 * largest rank whose binomial tail P(Bin(n, 1/2) < j) stays within (1 - confidence) / 2. Its
 * coverage is at least `confidence`; below about 8 samples at 99 % no such j exists and the
 * interval is the whole range (the smallest and largest sample).
 */
export function medianInterval(
  samples: readonly number[],
  confidence: number,
): { lo: number; hi: number } {
  const sorted = sortedCopy(samples);
  const n = sorted.length;
  const alpha = (1 - confidence) / 2;
  // [x(r), x(n+1-r)] (1-based ranks) covers the median with 1 - 2 P(Bin(n, 1/2) <= r - 1): the
  // largest r with P(Bin <= r - 1) <= alpha, as a 0-based index r - 1; 0 when there is none.
  let index = 0;
  let cdf = 0;
  let logC = 0; // log C(n, k)
  for (let k = 0; k < n; k++) {
    if (k > 0) logC += Math.log((n - k + 1) / k);
    cdf += Math.exp(logC - n * Math.LN2);
    if (cdf > alpha) break;
    index = k;
  }
  const j = Math.min(index, Math.floor((n - 1) / 2));
  return { lo: sorted[j] as number, hi: sorted[n - 1 - j] as number };
}

/**
 * The reference a kernel's candidates are measured against: `speed_reference` when the caller
 * knows it, else the first reference variant the results list for the kernel.
 */
export function referencesOf(
  results: KernelgateResults,
  given: Record<string, string> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of results.kernels) {
    const named = given[k.name];
    const ref = named ?? k.variants.find((v) => v.role === 'reference')?.name;
    if (ref !== undefined) out[k.name] = ref;
  }
  return out;
}

/** The compact record of a results document (deterministic: the same input gives the same bytes). */
export function buildRecord(results: KernelgateResults, options: RecordOptions): HistoryRecord {
  const confidence = options.confidence ?? 0.99;
  const references = referencesOf(results, options.references);
  const work: HistoryRecord['work'] = {};
  const rows = results.cases.map((c): Cell[] => {
    const t = c.status === 'ok' ? c.timing : undefined;
    const ci = t && t.samples_ms.length >= 2 ? medianInterval(t.samples_ms, confidence) : undefined;
    const m = t?.median_ms;
    if (c.work) (work[c.kernel] ??= {})[c.case] = [c.work.flops, c.work.bytes];
    const verdict = options.verdicts?.[`${c.kernel}/${c.variant}/${c.case}`];
    const cells: Record<CaseField, Cell> = {
      kernel: c.kernel,
      variant: c.variant,
      case: c.case,
      status: c.status,
      method: t ? timingMethodKind(t.method) : null,
      stop: t?.stop_reason ?? null,
      median_ms: sig(m, 5),
      lo_pct: ci && m ? sig((100 * (m - ci.lo)) / m, 2) : null,
      hi_pct: ci && m ? sig((100 * (ci.hi - m)) / m, 2) : null,
      n: t?.n_samples ?? null,
      sm_mhz: t?.sm_clock_mhz?.length ? sig(median(t.sm_clock_mhz), 4) : null,
      power_w: t?.power_w?.length ? sig(median(t.power_w), 4) : null,
      throttled: t?.n_discarded_throttled ?? null,
      correct: c.correctness?.status ?? null,
      rel_l2: sig(c.correctness?.rel_l2, 3),
      tol_rel_l2: sig(c.correctness?.tol_rel_l2, 3),
      verdict: verdict ?? null,
      tuning: c.tuning !== undefined ? JSON.stringify(c.tuning.config) : null,
      balanced_ms: sig(t?.balanced_ms, 5),
    };
    return CASE_FIELDS.map((f) => cells[f]);
  });
  const env = results.environment;
  const run: HistoryRun = {
    ...((options.runId ?? results.run.id) ? { id: options.runId ?? results.run.id } : {}),
    ...(results.run.git_sha ? { commit: results.run.git_sha } : {}),
    ...(results.run.git_ref ? { ref: results.run.git_ref } : {}),
    branch: options.branch,
    ...(options.event ? { event: options.event } : {}),
    started_at: results.run.started_at,
    ...(results.run.finished_at ? { finished_at: results.run.finished_at } : {}),
    sku: options.sku,
    gpu: env.gpu.name,
    ...(env.driver_version ? { driver: env.driver_version } : {}),
    ...(env.cuda_runtime_version ? { cuda: env.cuda_runtime_version } : {}),
    kernelgate: options.kernelgateVersion,
    harness: results.run.harness,
    ...(options.artifact ? { artifact: options.artifact } : {}),
    ...(options.verdict ? { verdict: options.verdict } : {}),
    ...(options.accepted ? { accepted: options.accepted } : {}),
    interval_confidence: confidence,
    ...(results.run.paired_base?.git_sha ? { paired_base: results.run.paired_base.git_sha } : {}),
  };
  const environment: Environment = {
    gpu: env.gpu,
    ...(env.driver_version ? { driver_version: env.driver_version } : {}),
    ...(env.driver_cuda_version ? { driver_cuda_version: env.driver_cuda_version } : {}),
    ...(env.cuda_runtime_version ? { cuda_runtime_version: env.cuda_runtime_version } : {}),
    ...(env.cuda_toolkit_version ? { cuda_toolkit_version: env.cuda_toolkit_version } : {}),
    ...(env.libraries ? { libraries: env.libraries } : {}),
    // measured ceilings and datasheet peaks: what tiers grade a headline against
    ...(env.ceilings ? { ceilings: env.ceilings } : {}),
  };
  return {
    format: HISTORY_FORMAT,
    run,
    environment,
    references,
    work,
    fields: [...CASE_FIELDS],
    cases: rows,
  };
}

/** The record as stored: one case a line, so a record reads (and git deltas) line by line. */
export function serializeRecord(record: HistoryRecord): string {
  const head = JSON.stringify({
    format: record.format,
    run: record.run,
    environment: record.environment,
    references: record.references,
    work: record.work,
    fields: record.fields,
  });
  const rows = record.cases.map((row) => JSON.stringify(row)).join(',\n');
  return `${head.slice(0, -1)},"cases":[\n${rows}\n]}\n`;
}

/** Why a stored file is not a record this kernelgate can use. */
export class RecordError extends Error {
  constructor(
    message: string,
    /** newer: a later format version (refused); corrupt: unreadable; foreign: not a record */
    readonly kind: 'newer' | 'corrupt' | 'foreign',
  ) {
    super(message);
  }
}

const STATUSES = new Set(['ok', 'fail', 'error', 'timeout', 'skipped']);

/** Parses and checks a stored record; throws RecordError saying what is wrong with it. */
export function parseRecord(text: string): HistoryRecord {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new RecordError(`not valid JSON (${(error as Error).message})`, 'corrupt');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new RecordError('not a JSON object', 'foreign');
  }
  const d = doc as Record<string, unknown>;
  const format = d['format'];
  const match = typeof format === 'string' ? /^kernelgate\/history@(\d+)$/.exec(format) : null;
  if (!match) {
    throw new RecordError(
      `not a kernelgate history record (format ${JSON.stringify(format ?? null)}, expected ${HISTORY_FORMAT})`,
      'foreign',
    );
  }
  const version = Number(match[1]);
  if (version > HISTORY_FORMAT_VERSION) {
    throw new RecordError(
      `format ${format} is newer than this kernelgate reads (${HISTORY_FORMAT}): not used; update kernelgate to read it`,
      'newer',
    );
  }
  const run = d['run'] as Record<string, unknown> | undefined;
  const fields = d['fields'];
  const cases = d['cases'];
  const env = d['environment'] as Record<string, unknown> | undefined;
  const problems: string[] = [];
  if (typeof run !== 'object' || run === null) problems.push('no run');
  else {
    for (const name of ['branch', 'started_at', 'sku', 'gpu', 'kernelgate', 'harness']) {
      if (typeof run[name] !== 'string') problems.push(`run.${name} is not a string`);
    }
  }
  if (typeof env !== 'object' || env === null || typeof env['gpu'] !== 'object') {
    problems.push('no environment.gpu');
  }
  if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string')) {
    problems.push('fields is not a list of names');
  } else {
    for (const name of ['kernel', 'variant', 'case', 'status']) {
      if (!fields.includes(name)) problems.push(`fields lacks ${name}`);
    }
  }
  if (!Array.isArray(cases)) problems.push('cases is not a list');
  else if (Array.isArray(fields)) {
    const statusAt = fields.indexOf('status');
    const bad = cases.findIndex(
      (row) =>
        !Array.isArray(row) ||
        row.length !== fields.length ||
        !row.every((cell) => cell === null || ['string', 'number'].includes(typeof cell)) ||
        !STATUSES.has(row[statusAt] as string),
    );
    if (bad >= 0) problems.push(`cases[${bad}] does not match fields`);
  }
  if (problems.length > 0) throw new RecordError(problems.slice(0, 3).join('; '), 'corrupt');
  return doc as HistoryRecord;
}

/** The record's cases by column name, with the interval in ms, throughput and reference ratio. */
export function recordCases(record: HistoryRecord): HistoryCase[] {
  const cases = record.cases.map((row) => {
    const out: Record<string, Cell> = {};
    record.fields.forEach((name, i) => {
      const cell = row[i];
      if (cell !== null && cell !== undefined) out[name] = cell;
    });
    return out as unknown as HistoryCase;
  });
  const refCase = new Map<string, HistoryCase>();
  for (const c of cases) {
    if (record.references?.[c.kernel] === c.variant && c.median_ms !== undefined) {
      refCase.set(`${c.kernel}/${c.case}`, c);
    }
  }
  for (const c of cases) {
    const m = c.median_ms;
    if (m === undefined) continue;
    if (c.lo_pct !== undefined) c.lo_ms = m * (1 - c.lo_pct / 100);
    if (c.hi_pct !== undefined) c.hi_ms = m * (1 + c.hi_pct / 100);
    const ref = refCase.get(`${c.kernel}/${c.case}`);
    const times = ref && record.references[c.kernel] !== c.variant ? refTimes(c, ref) : undefined;
    if (times) c.ref_ratio = times.ms[0] / times.ms[1];
    const w = record.work?.[c.kernel]?.[c.case];
    if (w && m > 0) {
      if (w[0] > 0) c.tflops = w[0] / (m * 1e9);
      if (w[1] > 0) c.gbps = w[1] / (m * 1e6);
    }
  }
  return cases;
}
