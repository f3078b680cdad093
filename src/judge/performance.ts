// The performance verdict of one case: against the stored baseline (bootstrap CI of the ratio of
// medians, or the two medians' intervals for a history record) or against the base revision
// timed in the same job (the per-pair ratios). The A/A controls are controls.ts.
import type { Config } from '../config/index.js';
import {
  bootstrapMedian,
  bootstrapRatioOfMedians,
  hashString,
  MAX_BOOTSTRAP_SAMPLES,
  median,
  normalQuantile,
  spread,
} from '../lib/index.js';
import type { CaseResult, Paired, Timing } from '../results/index.js';
import {
  CONTROL_BESIDE_NOTE,
  type BaselineState,
  CONFIRM_NOTES,
  type ConfirmOutcome,
  type JudgeMethod,
  MIN_SAMPLES_FOR_VERDICT,
  type PerfVerdict,
  type Unpaired,
} from './verdicts.js';
import { oneRunNote, oneRunSides, rankInterval } from './sources.js';

/**
 * The run-to-run noise configured for a case on the run's GPU model: the most specific key of
 * that model's compare.noise_pct block wins; 0 when the model has none (a figure measured on
 * another model is never carried over).
 */
export function noisePctFor(
  config: Config,
  model: string | undefined,
  kernel: string,
  variant: string,
  caseId: string,
): number {
  const noise = model === undefined ? undefined : config.compare.noisePct[model];
  if (noise === undefined) return 0;
  return (
    noise[`${kernel}/${variant}/${caseId}`] ?? noise[`${kernel}/${variant}`] ?? noise[kernel] ?? 0
  );
}

export function isTimed(
  c: CaseResult | undefined,
): c is CaseResult & { timing: NonNullable<CaseResult['timing']> } {
  return c !== undefined && c.status === 'ok' && c.timing !== undefined;
}

export interface PerfJudgement {
  perf: PerfVerdict;
  perfNote?: string;
  tooFewSamples?: true;
  oneRun?: true;
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
  confirmed?: ConfirmOutcome;
  confirmLo?: number;
  confirmHi?: number;
  /** the case's detection threshold, % (paired.detect_pct), where it had one */
  detectPct?: number;
}

/**
 * The threshold a paired case is judged against, in %: the larger of compare.paired.threshold_pct
 * and the absolute floor (paired.min_change_ms) as a share of the base arm's median. The harness's
 * stop rule uses the same (python/kernelgate_harness/paired.py case_threshold_pct; the shared
 * vectors of test/fixtures/twins/paired-rule.json hold both halves to it).
 */
export function pairedThresholdPct(
  thresholdPct: number,
  minChangeMs: number,
  baseMedianMs: number,
): number {
  return Math.max(
    thresholdPct,
    minChangeMs > 0 && baseMedianMs > 0 ? (100 * minChangeMs) / baseMedianMs : 0,
  );
}

/**
 * SLOWER / FASTER / SAME / AMBIGUOUS from an interval of a ratio and a threshold in %. With a
 * detection threshold (under the threshold), an interval wholly beyond ±detect is SLOWER or
 * FASTER; SAME stays "within ±threshold". The harness decides SLOWER and FASTER by the same rule
 * (paired.py change_of; test/fixtures/twins/paired-rule.json).
 */
export function verdictOf(
  lo: number,
  hi: number,
  thresholdPct: number,
  detectPct?: number,
): PerfVerdict {
  const t = thresholdPct / 100;
  const d = Math.min(detectPct ?? thresholdPct, thresholdPct) / 100;
  if (lo > 1 + d) return 'SLOWER';
  if (hi < 1 - d) return 'FASTER';
  if (lo >= 1 - t && hi <= 1 + t) return 'SAME';
  return 'AMBIGUOUS';
}

/** A SLOWER or FASTER verdict whose interval cleared the detection threshold but not the threshold. */
function inBand(perf: PerfVerdict, lo: number, hi: number, thresholdPct: number): boolean {
  const t = thresholdPct / 100;
  return (perf === 'SLOWER' && lo <= 1 + t) || (perf === 'FASTER' && hi >= 1 - t);
}

/**
 * The note of an interval bootstrapped from a strided subsample (a side of more than
 * MAX_BOOTSTRAP_SAMPLES): "interval from an evenly strided 10,000 of this run's 2,600,000
 * samples (at most 10,000 a side are bootstrapped)"; undefined when every one was used.
 */
export function subsampleNote(
  unit: string,
  sides: { of: string; used: number; total: number }[],
): string | undefined {
  const count = (n: number) => n.toLocaleString('en-US');
  const cut = sides.filter((s) => s.used < s.total);
  if (cut.length === 0) return undefined;
  const parts = cut.map((s) => `${count(s.used)} of ${s.of} ${count(s.total)} ${unit}`);
  return `interval from an evenly strided ${parts.join(' and ')} (at most ${count(MAX_BOOTSTRAP_SAMPLES)} a side are bootstrapped)`;
}

/** A timing method without its counts: "events, graph(23 launches)" and "(34 launches)" are one kind. */
export function timingMethodKind(method: string): string {
  return method
    .replace(/\(\d+ launches\)/g, '(N launches)')
    .replace(/\d+ calls back to back/g, 'N calls back to back');
}

export function judgePerf(
  key: string,
  current: CaseResult,
  baseline: CaseResult | undefined,
  comparable: boolean,
  thresholdPct: number,
  config: Config,
  /** a case of another tool's output: its noise model (sources.ts) */
  adapted = false,
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
  const oneRun = oneRunSides(current.timing, baseline.timing);
  if (oneRun !== undefined) {
    const medianMs = cur.length ? spread(cur).medianMs : current.timing.median_ms;
    const ratio = medianMs / baselineMedianMs;
    return {
      perf: 'AMBIGUOUS',
      perfNote: oneRunNote(oneRun),
      oneRun: true,
      ratio,
      baselineMedianMs,
    };
  }
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
  if (
    base.length === 0 &&
    baseline.timing.median_ci_lo_ms !== undefined &&
    baseline.timing.median_ci_hi_ms !== undefined &&
    cur.length >= MIN_SAMPLES_FOR_VERDICT &&
    (baseline.timing.n_samples ?? 0) >= MIN_SAMPLES_FOR_VERDICT
  ) {
    return judgeAgainstSummary(key, cur, baseline.timing, thresholdPct, config);
  }
  if (cur.length < MIN_SAMPLES_FOR_VERDICT || base.length < MIN_SAMPLES_FOR_VERDICT) {
    const medianMs = cur.length ? spread(cur).medianMs : current.timing.median_ms;
    return {
      perf: 'AMBIGUOUS',
      perfNote: `too few samples for an interval (current ${cur.length}, baseline ${base.length}; need ${MIN_SAMPLES_FOR_VERDICT})`,
      tooFewSamples: true,
      ratio: medianMs / baselineMedianMs,
      baselineMedianMs,
    };
  }
  const ranked = adapted ? rankInterval(cur, base, config.compare.confidence) : undefined;
  if (ranked !== undefined) {
    const { ratio, lo, hi, confidence } = ranked;
    const perf = verdictOf(lo, hi, thresholdPct);
    return { perf, ratio, ciLo: lo, ciHi: hi, confidence, baselineMedianMs };
  }
  return judgeBootstrapped(key, cur, base, baselineMedianMs, thresholdPct, config);
}

/** The percentile-bootstrap interval of the ratio of medians, judged against the threshold. */
function judgeBootstrapped(
  key: string,
  cur: number[],
  base: number[],
  baselineMedianMs: number,
  thresholdPct: number,
  config: Config,
): PerfJudgement {
  const ci = bootstrapRatioOfMedians(cur, base, {
    confidence: config.compare.confidence,
    resamples: config.compare.resamples,
    seed: (config.compare.seed ^ hashString(key)) >>> 0,
  });
  const note = subsampleNote('samples', [
    { of: "this run's", used: ci.bootstrapped.current, total: cur.length },
    { of: "the baseline's", used: ci.bootstrapped.baseline, total: base.length },
  ]);
  return {
    perf: verdictOf(ci.lo, ci.hi, thresholdPct),
    ...(note !== undefined ? { perfNote: note } : {}),
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
  base: Timing,
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
  const note = subsampleNote('samples', [
    { of: "this run's", used: own.bootstrapped, total: cur.length },
  ]);
  return {
    perf: verdictOf(ciLo, ciHi, thresholdPct),
    ...(note !== undefined ? { perfNote: note } : {}),
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
export function judgePaired(
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
  const thresholdPct = pairedThresholdPct(pairedPct, minChangeMs, floorBaseMs);
  const detectPct =
    paired.detect_pct !== undefined && paired.detect_pct < thresholdPct
      ? paired.detect_pct
      : undefined;
  const common = { thresholdPct, nPairs, baselineMedianMs, ratio: pointRatio, detectPct };
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
    return { ...common, perf: 'AMBIGUOUS', perfNote: tooFewPairs(nPairs) };
  }
  const { ratio, lo, hi, confidence, bootstrapped } = pairedInterval(logs, key, config);
  const judged: PairedJudgement = {
    ...common,
    perf: verdictOf(lo, hi, thresholdPct, detectPct),
    ratio,
    ciLo: lo,
    ciHi: hi,
    confidence,
    mdcPct: (100 * (hi - lo)) / 2,
  };
  const out = paired.confirm
    ? judgeConfirmed(key, judged, paired.confirm, config)
    : detectPct !== undefined && inBand(judged.perf, lo, hi, thresholdPct)
      ? unconfirmedBand(judged, detectPct)
      : judged;
  const note = subsampleNote('blocks of pairs', [{ of: 'the', used: bootstrapped, total: nPairs }]);
  const notes = [out.perfNote, paired.timed_in && CONTROL_BESIDE_NOTE, note].filter(Boolean);
  return notes.length ? { ...out, perfNote: notes.join('; ') } : out;
}

function tooFewPairs(n: number): string {
  return `too few pairs for an interval (${n}; need ${MIN_SAMPLES_FOR_VERDICT})`;
}

/** The bootstrap interval of the median of ln(head/base), as ratios; seeded by the case's key. */
function pairedInterval(logs: number[], seedKey: string, config: Config) {
  const ci = bootstrapMedian(logs, {
    confidence: config.compare.confidence,
    resamples: config.compare.resamples,
    seed: (config.compare.seed ^ hashString(seedKey)) >>> 0,
  });
  return {
    ratio: Math.exp(ci.median),
    lo: Math.exp(ci.lo),
    hi: Math.exp(ci.hi),
    confidence: ci.confidence,
    bootstrapped: ci.bootstrapped,
  };
}

/**
 * A verdict between the detection threshold and the threshold that no second pair of worker
 * processes repeated (none was measured): AMBIGUOUS, saying so.
 */
function unconfirmedBand(first: PairedJudgement, detectPct: number): PairedJudgement {
  const interval = intervalText(first.ratio ?? NaN, first.ciLo ?? NaN, first.ciHi ?? NaN);
  return {
    ...first,
    perf: 'AMBIGUOUS',
    confirmed: 'unmeasured',
    perfNote:
      `${interval} is beyond the ${detectPct}% detection threshold but within ±${round2(first.thresholdPct)}%, ` +
      'and was not measured again in a second pair of worker processes, which such a verdict needs',
  };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** ×1.0213 [1.0150, 1.0270]: a paired interval as the notes print it. */
function intervalText(ratio: number, lo: number, hi: number): string {
  return `×${ratio.toFixed(4)} [${lo.toFixed(4)}, ${hi.toFixed(4)}]`;
}

/**
 * A SLOWER or FASTER paired verdict against the harness's second measurement of the variant in a
 * fresh pair of worker processes (--paired-confirm): identical code can read an offset on one
 * variant in one case (H100 A/A runs 23 and 28, docs/notes/paired-ab.md) that more pairs in the
 * same burst do not remove. The verdict stands when the second interval, judged against the same
 * threshold, says the same; otherwise it is AMBIGUOUS. A second measurement that could not be
 * made leaves the verdict as it was, and says so.
 */
function judgeConfirmed(
  key: string,
  first: PairedJudgement,
  confirm: NonNullable<Paired['confirm']>,
  config: Config,
): PairedJudgement {
  if (first.perf !== 'SLOWER' && first.perf !== 'FASTER') return first;
  const logs = confirm.log_ratios ?? [];
  if (confirm.status !== 'ok' || logs.length < MIN_SAMPLES_FOR_VERDICT) {
    const why =
      confirm.status !== 'ok' ? (confirm.reason ?? 'no reason given') : tooFewPairs(logs.length);
    return {
      ...first,
      confirmed: 'unmeasured',
      perfNote: `${CONFIRM_NOTES.unmeasured}${why}`,
    };
  }
  const { ratio, lo, hi } = pairedInterval(logs, `${key}\u0000confirm`, config);
  const again = intervalText(ratio, lo, hi);
  const second = verdictOf(lo, hi, first.thresholdPct, first.detectPct);
  if (second === first.perf) {
    return {
      ...first,
      confirmed: 'confirmed',
      confirmLo: lo,
      confirmHi: hi,
      perfNote: `${CONFIRM_NOTES.confirmed}${again}`,
    };
  }
  return {
    ...first,
    perf: 'AMBIGUOUS',
    confirmed: 'not-repeated',
    perfNote:
      `was ${first.perf} ${intervalText(first.ratio ?? NaN, first.ciLo ?? NaN, first.ciHi ?? NaN)}, but a second pair of worker processes read ${again} ` +
      `(${second}): the first reading did not repeat`,
  };
}

/** Why a timed case of a paired run was not judged by pairs (its perfNote says it in words). */
export function unpairedKind(paired: Paired | undefined): Unpaired {
  if (!paired) return 'not-timed';
  if (paired.base_status === 'ok') return 'no-pairs';
  return paired.base_status === 'missing' ? 'not-in-base' : 'base-failed';
}

/** Why a timed case of a paired run was not judged by pairs, in words. */
function unpairedReason(paired: Paired | undefined): string {
  if (!paired) return 'not timed against the base revision';
  if (paired.base_status === 'ok') return 'base revision: ok, but no pairs were timed';
  return `base revision: ${paired.base_status}${paired.base_reason ? ` (${paired.base_reason})` : ''}`;
}

/**
 * The stored-baseline judgement of a timed case that a paired run could not judge by pairs, with
 * a perfNote that says why (the base revision failed, lacks the case, …).
 */
export function fallbackNote(
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

export const JUDGED: readonly PerfVerdict[] = ['SLOWER', 'FASTER', 'SAME', 'AMBIGUOUS', 'MISSING'];

/**
 * `compare.min_change_ms` as a percentage of the baseline's median: below a few microseconds a
 * change of a fixed size (launch gaps, clock ramps) is noise however tight one run's interval is.
 */
export function minChangePct(
  config: Config,
  baseline: CaseResult | undefined,
  floorMs = config.compare.minChangeMs,
): number {
  const medianMs = baseline?.timing?.median_ms;
  if (floorMs <= 0 || medianMs === undefined || !(medianMs > 0)) return 0;
  return (100 * floorMs) / medianMs;
}
