// Section `headline` (partials/headline.md.mustache): the headline cases' ratios and tiers.
import { baseArmResults, evaluateTiers, type TierStatus } from '../judge/index.js';
import { type Cell, fixed, formatMs, formatRatioPct, table } from '../lib/index.js';
import { esc, intervalText, tierCell, trusted, valueText } from './cells.js';
import { keepUnits } from './compact.js';
import { headlineRows } from './digest.js';
import type { ReportInput } from './types.js';
import type { HeadlineView } from './view-types.js';

/**
 * How far the reference's own median moved from the base to this run, when it moved by more than
 * the comparison's threshold: a ratio that moves with it says nothing of the candidate (the
 * reference's code is the same on both sides; a machine or a library moved).
 */
function referenceMove(t: TierStatus, b: TierStatus | undefined, input: ReportInput) {
  if (!b || t.referenceVariant === undefined || b.referenceVariant !== t.referenceVariant) return;
  const now = t.referenceMedianMs;
  const before = b.referenceMedianMs;
  if (now === undefined || before === undefined || before <= 0) return undefined;
  const compare = input.config.compare;
  const threshold = input.comparison.paired ? compare.paired.thresholdPct : compare.thresholdPct;
  const change = now / before - 1;
  if (Math.abs(change) * 100 < threshold) return undefined;
  return {
    cell: ` · reference ${formatRatioPct(1 + change)}`,
    line: `${esc(t.kernel)}: ${esc(t.referenceVariant)} ${formatMs(before)} → ${formatMs(now)} ms (${formatRatioPct(1 + change)})`,
  };
}

/** Each kernel's headline case: our fastest passing candidate against its honest reference. */
export function headlineView(
  input: ReportInput,
  base: TierStatus[] | undefined,
): HeadlineView | undefined {
  const rows = headlineRows(input.tiers, base);
  if (!rows.length) return undefined;
  const hasBase = rows.some((r) => r.base);
  const moved: string[] = [];
  const cells = rows.map(({ tier: t, base: b }): Cell[] => {
    // The case's axes with spaces after the commas, so the cell wraps in a comment's column.
    const workload = trusted(
      `${esc(t.kernel)} ${esc(t.caseId ?? t.headline).replaceAll(',', ', ')}`,
    );
    if (t.problem) {
      return [
        workload,
        trusted(`no value: ${esc(t.problem)}`),
        ...(hasBase ? [trusted('')] : []),
        trusted(''),
        trusted(''),
        trusted(''),
      ];
    }
    const ours = `${esc(t.variant)} ${formatMs(t.medianMs)} ms, ${fixed(t.tflops, 0)} TFLOPS${
      t.pinned ? ' (pinned)' : t.passing.length > 1 ? ` (fastest of ${t.passing.length})` : ''
    }`;
    let against: string;
    const ci = intervalText(t);
    let value = `**${valueText(t)}**${ci ? ` (${ci})` : ''}`;
    if (t.metric === 'pct_peak') {
      against = `datasheet peak ${fixed(t.peakTflops, 1)} TFLOPS`;
    } else if (t.metric === 'speedup') {
      against = `${esc(t.referenceVariant)} ${formatMs(t.referenceMedianMs)} ms, ${fixed(t.referenceTflops, 0)} TFLOPS`;
    } else if (t.referenceVariant !== undefined) {
      against = `${esc(t.referenceVariant)} ${formatMs(t.referenceMedianMs)} ms, ${fixed(t.gemmTflops, 0)} dense TFLOPS`;
      value += ` per useful FLOP · ${fixed(t.wallClockRatio, 2)}× wall clock`;
    } else {
      against = `measured cuBLAS ${fixed(t.gemmTflops, 0)} TFLOPS`;
      value += ' per useful FLOP';
    }
    let baseText = '—';
    if (b && b.value !== undefined) {
      baseText = `${valueText(b)}${b.variant !== t.variant ? ` (${esc(b.variant)})` : ''}`;
    } else if (b?.problem) baseText = 'n/a';
    const move = referenceMove(t, b, input);
    if (move) {
      baseText += move.cell;
      moved.push(move.line);
    }
    // The answer first (the ratio, the base's, the tier), what it was measured on after: the
    // right-hand columns are the ones a narrow comment column scrolls out of view.
    return [
      workload,
      trusted(keepUnits(value)),
      ...(hasBase ? [trusted(keepUnits(baseText))] : []),
      trusted(keepUnits(tierCell(t))),
      trusted(keepUnits(ours)),
      trusted(keepUnits(against)),
    ];
  });
  const paired = input.comparison.paired !== undefined;
  const baseHeader = paired ? 'base (same job)' : 'baseline';
  const now = input.kind === 'pr' ? 'this PR' : 'this run';
  return {
    intervals: rows.some(({ tier }) => tier.interval !== undefined),
    referenceMoved: moved.length
      ? `The reference moved between the ${paired ? 'base revision' : 'baseline'} and this run, so the ratio moved with it whatever the candidate did: ${moved.join('; ')}.`
      : undefined,
    table: table(
      [
        'kernel · headline case',
        now,
        ...(hasBase ? [baseHeader] : []),
        'tier',
        'fastest passing candidate',
        'against',
      ],
      cells,
      ['l', 'l', ...(hasBase ? ['l' as const] : []), 'l', 'l', 'l'],
    ),
  };
}

/**
 * The base's tier statuses, for the headline's "base" column: the base revision's arm of a paired
 * run, else the stored baseline when it was compared (same GPU).
 */
export function baseTiers(input: ReportInput): TierStatus[] | undefined {
  if (input.comparison.paired) {
    const arm = baseArmResults(input.results);
    return arm ? evaluateTiers(arm, input.config) : undefined;
  }
  if (input.comparison.baseline === 'compared' && input.baseline) {
    return evaluateTiers(input.baseline, input.config);
  }
  return undefined;
}
