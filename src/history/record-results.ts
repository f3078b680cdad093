// A history record read back as a results document, for judging a run against it (the baseline
// of a pull request, a push or a nightly from the data branch): summaries only, each timed case
// its median and that median's interval (and its balanced estimate where the record keeps one, what
// the tiers grade), no samples; the schema accepts it (Timing's median_ci_*).
import type { CaseResult, KernelgateResults, Timing } from '../results/index.js';
import { type HistoryRecord, recordCases } from './record.js';

/**
 * A case's params from its id, which the harness writes as `key=value,…` in the params' order
 * (`dtype=fp16,B=16,…,causal=false`): numbers and booleans as such. What tiers match a headline by.
 */
export function paramsOf(caseId: string): CaseResult['params'] {
  const out: CaseResult['params'] = {};
  for (const part of caseId.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const key = part.slice(0, at);
    const raw = part.slice(at + 1);
    out[key] =
      raw === 'true'
        ? true
        : raw === 'false'
          ? false
          : /^-?\d+(\.\d+)?$/.test(raw)
            ? Number(raw)
            : raw;
  }
  return out;
}

/** A record's tuning cell as the results' `tuning` (a cell that is not JSON: its text). */
function tuningOf(cell: string | undefined): CaseResult['tuning'] {
  if (cell === undefined) return undefined;
  try {
    const config = JSON.parse(cell) as NonNullable<CaseResult['tuning']>['config'] | null;
    return { config: config ?? cell };
  } catch {
    return { config: cell };
  }
}

/**
 * A record as a results document, for judging a run against it. It carries summaries only: each
 * timed case its median and that median's interval ([lo_ms, hi_ms] at `interval_confidence`),
 * and no samples, so compare judges against it from the two medians' intervals.
 */
export function recordToResults(record: HistoryRecord): KernelgateResults {
  const r = record.run;
  const cases: CaseResult[] = recordCases(record).map((c) => {
    const out: CaseResult = {
      kernel: c.kernel,
      variant: c.variant,
      case: c.case,
      params: paramsOf(c.case),
      status: c.status,
    };
    if (c.correct !== undefined) {
      out.correctness = {
        status: c.correct,
        rel_l2: c.rel_l2 ?? null,
        max_abs: null,
        nan_count: 0,
        inf_count: 0,
        unwritten_count: 0,
        seeds: [],
        tol_rel_l2: c.tol_rel_l2 ?? 0,
      };
    }
    if (c.status === 'ok' && c.median_ms !== undefined) {
      out.timing = {
        method: c.method ?? 'unknown',
        samples_ms: [],
        median_ms: c.median_ms,
        n_samples: c.n ?? 0,
        stop_reason: c.stop ?? 'converged',
        ...(c.balanced_ms !== undefined ? { balanced_ms: c.balanced_ms } : {}),
        ...(c.lo_ms !== undefined && c.hi_ms !== undefined
          ? {
              median_ci_rel: (c.hi_ms - c.lo_ms) / 2 / c.median_ms,
              median_ci_lo_ms: c.lo_ms,
              median_ci_hi_ms: c.hi_ms,
              median_ci_confidence: r.interval_confidence,
            }
          : {}),
      } satisfies Timing;
    }
    const tuning = tuningOf(c.tuning);
    if (tuning !== undefined) out.tuning = tuning;
    if (c.tflops !== undefined || c.gbps !== undefined) {
      out.throughput = {
        ...(c.tflops !== undefined ? { tflops: c.tflops } : {}),
        ...(c.gbps !== undefined ? { gbps: c.gbps } : {}),
      };
    }
    return out;
  });
  return {
    schema: 'kernelgate/results@1',
    run: {
      ...(r.id !== undefined ? { id: r.id } : {}),
      started_at: r.started_at,
      harness: r.harness,
      ...(r.commit !== undefined ? { git_sha: r.commit } : {}),
      ...(r.ref !== undefined ? { git_ref: r.ref } : {}),
      // A paired run stays one (the trend keeps paired nights apart from single-revision runs);
      // the record keeps the base's commit, not the checkout it was timed from.
      ...(r.paired_base !== undefined ? { paired_base: { root: '', git_sha: r.paired_base } } : {}),
      command: `kernelgate history record (${r.event ?? 'run'} on ${r.branch})`,
    },
    environment: record.environment,
    diagnostics: [],
    kernels: [],
    cases,
  };
}
