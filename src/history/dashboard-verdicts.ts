// What the dashboard takes from the repository's configuration, as the report does: each kernel's
// headline reference (kernel.yml's tiers.reference, else speed_reference) and each case's
// threshold (compare.threshold_pct, the GPU model's compare.noise_pct, the min_change_ms floor).
// And the verdicts of records that carry none (`history import` stores runs of baseline-dir
// without them): each case judged against the previous run of its branch on its GPU model from
// the two medians' intervals, the way a run is judged against a stored record
// (src/judge/performance.ts, judgeAgainstSummary), so a step the report would call SLOWER is
// marked.
import { namedReference, type Config } from '../config/index.js';
import { noisePctFor, timingMethodKind } from '../judge/index.js';
import { normalQuantile } from '../lib/index.js';
import { recordCases, type HistoryCase, type HistoryRecord } from './record.js';

/**
 * Each kernel's headline reference, as the report grades it: kernel.yml's tiers.reference, else
 * its speed_reference; a kernel whose manifest names neither keeps the reference its records name.
 */
export function configReferences(config: Config): Record<string, string> {
  const references: Record<string, string> = {};
  for (const k of config.kernels) {
    const named = namedReference(k.manifest);
    if (named !== undefined) references[k.manifest.name] = named;
  }
  return references;
}

/**
 * The threshold of one case, in %, as compare.ts sets it for a run judged against a stored
 * baseline: threshold_pct or the model's noise_pct, whichever is larger, and no less than
 * min_change_ms of the baseline's median.
 */
export function thresholdPctOf(
  config: Config,
  sku: string,
  c: Pick<HistoryCase, 'kernel' | 'variant' | 'case'>,
  baselineMs: number | undefined,
): number {
  const { thresholdPct, minChangeMs } = config.compare;
  const rule = Math.max(thresholdPct, noisePctFor(config, sku, c.kernel, c.variant, c.case));
  const floor =
    minChangeMs > 0 && baselineMs !== undefined && baselineMs > 0
      ? (100 * minChangeMs) / baselineMs
      : 0;
  return Math.max(rule, floor);
}

/** The log-scale standard error of a record's median, from its interval. */
function logError(c: HistoryCase, confidence: number): number | undefined {
  if (c.lo_ms === undefined || c.hi_ms === undefined || !(c.lo_ms > 0)) return undefined;
  return (Math.log(c.hi_ms) - Math.log(c.lo_ms)) / 2 / normalQuantile(1 - (1 - confidence) / 2);
}

/** One case against the same case of the previous run: SLOWER, FASTER, SAME or AMBIGUOUS. */
export function judgeSummaries(
  current: HistoryCase,
  baseline: HistoryCase | undefined,
  thresholdPct: number,
  confidences: { current: number; baseline: number; verdict: number },
): string | undefined {
  if (current.status !== 'ok' || current.median_ms === undefined) return undefined;
  if (baseline?.status !== 'ok' || baseline.median_ms === undefined) return 'NEW';
  const kind = (c: HistoryCase) => (c.method ? timingMethodKind(c.method) : undefined);
  if (kind(current) !== kind(baseline)) return 'AMBIGUOUS';
  const seCur = logError(current, confidences.current);
  const seBase = logError(baseline, confidences.baseline);
  if (seCur === undefined || seBase === undefined) return 'AMBIGUOUS';
  const z = normalQuantile(1 - (1 - confidences.verdict) / 2);
  const half = z * Math.sqrt(seCur * seCur + seBase * seBase);
  const ratio = current.median_ms / baseline.median_ms;
  const lo = ratio * Math.exp(-half);
  const hi = ratio * Math.exp(half);
  const t = thresholdPct / 100;
  if (lo > 1 + t) return 'SLOWER';
  if (hi < 1 - t) return 'FASTER';
  return lo >= 1 - t && hi <= 1 + t ? 'SAME' : 'AMBIGUOUS';
}

/** Whether a record carries the gate's verdicts (a record of `history import` carries none). */
export function hasVerdicts(record: HistoryRecord): boolean {
  const at = record.fields.indexOf('verdict');
  return at >= 0 && record.cases.some((row) => row[at] !== null && row[at] !== undefined);
}

/**
 * The records with verdicts computed for those that carry none: each against the previous run of
 * its branch on its GPU model (records in any order; a record with verdicts is kept as it is).
 * Returns the records in the order given and how many got computed verdicts.
 */
export function fillVerdicts(
  records: HistoryRecord[],
  config: Config,
): { records: HistoryRecord[]; computed: number } {
  const order = records
    .map((r, i) => ({ r, i }))
    .sort((a, b) => a.r.run.started_at.localeCompare(b.r.run.started_at));
  const previous = new Map<string, HistoryRecord>();
  const out = [...records];
  let computed = 0;
  for (const { r, i } of order) {
    const line = `${r.run.sku}\u0000${r.run.branch}`;
    const before = previous.get(line);
    previous.set(line, r);
    if (hasVerdicts(r)) continue;
    out[i] = withVerdicts(r, before, config);
    computed++;
  }
  return { records: out, computed };
}

function withVerdicts(
  record: HistoryRecord,
  before: HistoryRecord | undefined,
  config: Config,
): HistoryRecord {
  const base = new Map<string, HistoryCase>();
  if (before && before.run.sku === record.run.sku) {
    for (const c of recordCases(before)) base.set(`${c.kernel}/${c.variant}/${c.case}`, c);
  }
  const confidences = {
    current: record.run.interval_confidence,
    baseline: before?.run.interval_confidence ?? record.run.interval_confidence,
    verdict: config.compare.confidence,
  };
  const fields = record.fields.includes('verdict') ? record.fields : [...record.fields, 'verdict'];
  const at = fields.indexOf('verdict');
  const cases = recordCases(record).map((c, n) => {
    const b = base.get(`${c.kernel}/${c.variant}/${c.case}`);
    const threshold = thresholdPctOf(config, record.run.sku, c, b?.median_ms);
    const row = [...(record.cases[n] ?? [])];
    while (row.length < fields.length) row.push(null);
    row[at] = before ? (judgeSummaries(c, b, threshold, confidences) ?? null) : 'NEW';
    return row;
  });
  return { ...record, fields, cases };
}
