// The noise model of a case's source (docs/adapters.md, "Noise by source"). The harness's own
// cases keep compare's rules. A case read from another tool's output (results kernels[].adapter)
// is judged by what its samples hold: the rounds of one run (pytest-benchmark) give no interval,
// since they hold none of the spread between runs; its absolute floor is the finest step the
// tool's clock shows in the samples, not the harness's microsecond floor; large sample sets get
// an interval from order statistics (linear), not a bootstrap; and a change the interval resolves
// but that stays under the threshold is flagged.
import { formatRatioPct, RANK_INTERVAL_MIN_SAMPLES, rankRatioOfMedians } from '../lib/index.js';
import type { KernelgateResults, Timing } from '../results/index.js';
import { formatThresholdPct } from '../formats/index.js';
import type { CaseComparison } from './verdicts.js';

/** The kernels whose cases came from another tool's output, with the adapter's format. */
export function adaptedKernels(results: KernelgateResults): Map<string, string> {
  return new Map(
    results.kernels.flatMap((k) => (k.adapter !== undefined ? [[k.name, k.adapter.format]] : [])),
  );
}

/**
 * The default threshold (%) where both sides' samples are separate runs of the tool (results
 * timing.samples_span "runs"): the interval itself holds the spread between runs, so the
 * threshold is the smallest change worth calling, as for the harness's paired cases.
 */
export const RUNS_THRESHOLD_PCT = 1;

/**
 * The threshold (%) of another tool's case before noise_pct and the floor: compare.threshold_pct
 * when kernelgate.yml sets it, else its source's default (RUNS_THRESHOLD_PCT when both sides are
 * separate runs; else its format's, src/formats/index.ts formatThresholdPct: wide enough for the
 * drift between processes that one process's samples (nvbench's launches, Google Benchmark's
 * repetitions) do not hold, as measured on the H100), else compare.threshold_pct's default.
 */
export function toolThresholdPct(
  compare: { thresholdPct: number; thresholdPctSet?: true },
  format: string | undefined,
  current: Timing | undefined,
  baseline: Timing | undefined,
): number {
  if (compare.thresholdPctSet || format === undefined) return compare.thresholdPct;
  if (current?.samples_span === 'runs' && baseline?.samples_span === 'runs') {
    return RUNS_THRESHOLD_PCT;
  }
  return formatThresholdPct(format) ?? compare.thresholdPct;
}

/** Which side's samples are the rounds of one run: none, or the words that say which. */
export function oneRunSides(current: Timing, baseline: Timing): string | undefined {
  const cur = current.samples_span === 'one-run';
  const base = baseline.samples_span === 'one-run';
  if (!cur && !base) return undefined;
  return cur && base ? "this run's and the baseline's" : cur ? "this run's" : "the baseline's";
}

/**
 * The note of a case whose samples are one run's rounds: why no interval is drawn, in words the
 * adapters' notes extend with what to do for the tool (src/adapters/notes.ts).
 */
export function oneRunNote(sides: string): string {
  return `${sides} samples are the rounds of one run, which hold none of the spread between runs: no interval is drawn from them`;
}

/**
 * The finest step between two distinct samples of either side (ms): the resolution the tool's
 * clock shows in this case. 0 when every sample of a side is the same.
 */
export function clockStepMs(current: readonly number[], baseline: readonly number[]): number {
  let step = 0;
  for (const samples of [current, baseline]) {
    const sorted = Float64Array.from(samples).sort();
    let least = Infinity;
    for (let i = 1; i < sorted.length; i++) {
      const gap = (sorted[i] as number) - (sorted[i - 1] as number);
      if (gap > 0 && gap < least) least = gap;
    }
    if (Number.isFinite(least)) step = Math.max(step, least);
  }
  return step;
}

/**
 * The absolute floor of an adapted case (ms): compare.min_change_ms is for the harness's
 * graph-timed tails; a tool's case gets the finest step its clock shows in the samples, when that
 * is finer. Without samples (a tool's summaries) the configured floor stays.
 */
export function toolFloorMs(
  configuredMs: number,
  current: readonly number[],
  baseline: readonly number[],
): number {
  if (current.length < 2 || baseline.length < 2) return configuredMs;
  return Math.min(configuredMs, clockStepMs(current, baseline));
}

/** The interval of the ratio of medians from order statistics, when both sides are large enough. */
export function rankInterval(
  current: readonly number[],
  baseline: readonly number[],
  confidence: number,
): ReturnType<typeof rankRatioOfMedians> | undefined {
  if (Math.min(current.length, baseline.length) < RANK_INTERVAL_MIN_SAMPLES) return undefined;
  return rankRatioOfMedians(current, baseline, confidence);
}

/**
 * SAME, but the whole interval lies beyond half the threshold on one side: a resolved change too
 * small to be called SLOWER or FASTER, which the reader must still see (`belowThreshold`).
 */
export function markBelowThreshold(c: CaseComparison): void {
  if (c.perf !== 'SAME' || c.belowFloor || c.ciLo === undefined || c.ciHi === undefined) return;
  const half = c.thresholdPct / 200;
  const up = c.ciLo > 1 + half;
  const down = c.ciHi < 1 - half;
  if (!up && !down) return;
  c.belowThreshold = true;
  const note =
    `a resolved change under the threshold: ${formatRatioPct(c.ratio)} in [${formatRatioPct(c.ciLo)}, ` +
    `${formatRatioPct(c.ciHi)}] is more than half of ±${c.thresholdPct.toFixed(1)} % but not past it, so it is not called ` +
    `${up ? 'SLOWER' : 'FASTER'}; see whether it repeats`;
  c.perfNote = c.perfNote ? `${note}; ${c.perfNote}` : note;
}

/** The comparison's note on the cases markBelowThreshold flagged, or none. */
export function belowThresholdNote(cases: readonly CaseComparison[]): string | undefined {
  const flagged = cases.filter((c) => c.belowThreshold);
  if (flagged.length === 0) return undefined;
  const list = flagged
    .slice(0, 5)
    .map((c) => `${c.label} ${formatRatioPct(c.ratio)}`)
    .concat(flagged.length > 5 ? [`and ${flagged.length - 5} more`] : []);
  return (
    `${flagged.length} case(s) of other tools moved by a resolved amount under the threshold (SAME, ` +
    `flagged): ${list.join(', ')}.`
  );
}
