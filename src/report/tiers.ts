// Section `tiers` (partials/tiers.md.mustache): each kernel's ladder and grade.
import { type Cell, fixed, formatMs, table } from '../lib/index.js';
import { intervalText, trusted, valueText, WITHIN_NOISE } from './cells.js';
import type { ReportInput } from './types.js';
import type { TierView } from './view-types.js';

export function tierViews(input: ReportInput): TierView[] {
  return input.tiers.map((t) => {
    const ladderRows = t.ladder.map((m): Cell[] => [
      m.name,
      m.grade ?? '',
      trusted(`${fixed(m.min, 2)}${t.unit === '%' ? ' %' : '×'}`),
      trusted(formatMs(m.requiredMs)),
      trusted(fixed(m.impliedTflops, 1)),
      trusted(
        (m.achieved
          ? '✅ reached'
          : m.reachable === false
            ? `🚫 unreachable: needs ${fixed(m.impliedTflops, 0)} TFLOPS > ${fixed(t.peakTflops, 1)} peak`
            : m.reachable === true
              ? '⬜ ahead'
              : '⬜ ahead (peak unknown)') + (m.withinNoise ? WITHIN_NOISE : ''),
      ),
    ]);
    const others = t.passing.slice(1).map((p) => `${p.variant} ${formatMs(p.medianMs)} ms`);
    return {
      kernel: t.kernel,
      variant: t.variant,
      pinned: t.pinned,
      others: others.length ? others.join(', ') : undefined,
      metric: t.metric,
      balanced: t.statistic === 'balanced',
      headline: t.caseId ?? t.headline,
      value: valueText(t),
      interval: intervalText(t) || undefined,
      intervalProblem: t.intervalProblem,
      medianMs: formatMs(t.medianMs),
      tflops: fixed(t.tflops, 1),
      reference: t.referenceVariant,
      referenceMs: t.referenceMedianMs === undefined ? undefined : formatMs(t.referenceMedianMs),
      gemmTflops: t.gemmTflops === undefined ? undefined : fixed(t.gemmTflops, 1),
      wallClock: t.wallClockRatio === undefined ? undefined : fixed(t.wallClockRatio, 2),
      current: t.current,
      below: t.value !== undefined && !t.current,
      next: t.next
        ? {
            name: t.next.name,
            grade: t.next.grade,
            requiredMs: formatMs(t.next.requiredMs),
            impliedTflops: fixed(t.next.impliedTflops, 1),
            unreachable: t.next.reachable === false,
            speedupNeeded: fixed(t.speedupNeeded, 2),
          }
        : undefined,
      top: !t.next && t.value !== undefined,
      problem: t.problem,
      ladderTable: table(
        ['tier', 'grade', 'min', 'needs ms', 'implies TFLOPS', 'status'],
        ladderRows,
        ['l', 'l', 'r', 'r', 'r', 'l'],
      ),
    };
  });
}
