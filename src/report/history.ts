// Section `history` (partials/history.md.mustache, nightly only): the steps of the history over a
// window (src/judge/trend.ts), beside tonight's paired verdicts. Findings only: the gate is
// tonight's verdicts, a step never fails it.
import {
  type CaseTrend,
  historyTrend,
  STEP_MIN_NIGHTS,
  STEP_SPREADS,
  type TrendBoundary,
} from '../judge/index.js';
import { type Cell, fixed, formatMs, table } from '../lib/index.js';
import { breakableCell, esc, plural, trusted } from './cells.js';
import { keepUnits } from './compact.js';
import type { ReportInput, ViewOptions } from './types.js';
import type { HistoryView } from './view-types.js';

/** Rows of each table the comment shows; the full report shows every row. */
export const HISTORY_COMMENT_ROWS = 15;

const day = (iso: string) => iso.slice(0, 10);
const shortSha = (sha: string | undefined) => (sha ? ` (${esc(sha.slice(0, 12))})` : '');
const signed = (pct: number) => `${pct >= 0 ? '+' : '−'}${fixed(Math.abs(pct), 1)} %`;

const CONTROL_TEXT: Record<NonNullable<NonNullable<CaseTrend['finding']>['control']>, string> = {
  reference: 'a reference (its code does not change)',
  paired: "that night's pairs beside the good base saw no change",
  machine: 'half the references moved with it',
  'same-case': "its case's reference moved the same way",
};

function boundaryLine(b: TrendBoundary): string {
  const what = b.cases
    ? `${esc(b.field)} of ${plural(b.cases.length, 'case')} (${esc(b.cases[0])}${b.cases.length > 1 ? ', …' : ''})`
    : esc(b.field);
  return `${what}: ${esc(b.from)} → ${esc(b.to)} on ${esc(day(b.startedAt))}${shortSha(b.commit)}: series restarted`;
}

function findingRow(t: CaseTrend, control: boolean): Cell[] {
  const f = t.finding!;
  return [
    breakableCell(t.key, true),
    trusted(`${esc(day(f.startedAt))}${shortSha(f.commit)}`),
    trusted(keepUnits(`${formatMs(f.fromMs)} → ${formatMs(f.toMs)} ms`)),
    trusted(keepUnits(`${f.direction === 'SLOWER' ? '🔴' : '🟢'} ${signed(f.changePct)}`)),
    trusted(keepUnits(`${fixed(f.thresholdPct, 1)} %`)),
    trusted(String(f.nights)),
    ...(control ? [trusted(CONTROL_TEXT[f.control!])] : []),
  ];
}

function findingTable(rows: CaseTrend[], opts: ViewOptions, control = false) {
  if (!rows.length) return undefined;
  const shown = opts.full ? rows : rows.slice(0, HISTORY_COMMENT_ROWS);
  const header = ['case', 'since', 'before → after (medians)', 'change', 'threshold', 'nights'];
  const text = table(
    control ? [...header, 'why not the code'] : header,
    shown.map((t) => findingRow(t, control)),
    ['l', 'l', 'r', 'r', 'r', 'r', ...(control ? ['l' as const] : [])],
  );
  const more = rows.length - shown.length;
  return more > 0 ? `${text}\n\n… and ${more} more in the full report.` : text;
}

/** Largest change first, then by case. */
const bySize = (a: CaseTrend, b: CaseTrend) =>
  Math.abs(b.finding!.changePct) - Math.abs(a.finding!.changePct) || a.key.localeCompare(b.key);

/** The nightly's history: steps and watches of the window, the boundaries met, what moved with the machine. */
export function historyView(input: ReportInput, opts: ViewOptions): HistoryView | undefined {
  if (input.kind !== 'nightly' || input.history === undefined) return undefined;
  const trend = historyTrend(input.history, input.results, {
    floorPct: input.config.compare.paired.thresholdPct,
    floorMs: input.config.compare.paired.minChangeMs,
  });
  if (trend.runs === 0 && trend.leftOut === 0) return undefined;
  const code = trend.cases.filter((t) => t.finding!.control === undefined).sort(bySize);
  const controlled = trend.cases.filter((t) => t.finding!.control !== undefined).sort(bySize);
  const steps = code.filter((t) => t.finding!.kind === 'step');
  const watches = code.filter((t) => t.finding!.kind === 'watch');
  const count = (rows: CaseTrend[], kind: 'step' | 'watch') =>
    rows.filter((t) => t.finding!.kind === kind).length;
  return {
    runs: trend.runs,
    empty: trend.runs === 0,
    since: trend.since ? day(trend.since) : '',
    window: trend.window,
    spreads: STEP_SPREADS,
    nights: STEP_MIN_NIGHTS,
    floorPct: fixed(input.config.compare.paired.thresholdPct, 1),
    floorUs: fixed(input.config.compare.paired.minChangeMs * 1000, 1),
    mode: trend.mode === 'paired' ? 'paired' : 'single-revision',
    leftOut:
      trend.leftOut > 0
        ? `${plural(trend.leftOut, 'stored run')} timed ${trend.mode === 'paired' ? 'without pairs' : 'in pairs'} (not like tonight's) left out of the series.`
        : undefined,
    boundaries: trend.boundaries.map(boundaryLine),
    hasBoundaries: trend.boundaries.length > 0,
    steps: findingTable(steps, opts),
    watches: findingTable(watches, opts),
    machine: trend.machine.map(
      (m) =>
        `the machine moved on ${esc(day(m.startedAt))}: ${m.moved} of ${m.of} reference cases ${m.direction} from that night on, median ${signed(m.medianPct)}`,
    ),
    controlledLine: controlled.length
      ? `${plural(count(controlled, 'step'), 'step')} and ${plural(count(controlled, 'watch'), 'watch', 'watches')} moved with the machine or the night, not the code:`
      : undefined,
    controlled: opts.full ? findingTable(controlled, opts, true) : undefined,
    none: !code.length,
  };
}
