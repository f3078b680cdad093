// Section `trends` (partials/trends.md.mustache, nightly): the headline over earlier runs.
import { evaluateTiers } from '../judge/index.js';
import { type Cell, fixed, formatRatioPct, mermaidLabel, table } from '../lib/index.js';
import { esc, gpuName, trusted } from './cells.js';
import { keepUnits } from './compact.js';
import { type HeadlineTrend, headlineTrends, SPARK_SPAN_PCT, sparkline } from './digest.js';
import type { ReportInput, ViewOptions } from './types.js';
import type { TrendsView } from './view-types.js';

function trendValue(v: number | undefined, unit: '×' | '%'): string {
  if (v === undefined) return '';
  return unit === '%' ? `${fixed(v, 1)} %` : `${fixed(v, 2)}×`;
}

/** "11-21 14:03" from an ISO time, for a chart's axis (nothing else survives mermaidLabel). */
function shortTime(iso: string): string {
  const m = /^\d{4}-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(iso);
  return m ? `${m[1]}-${m[2]} ${m[3]}:${m[4]}` : mermaidLabel(iso).slice(0, 16);
}

/** A line of fewer points says nothing the table's sparkline does not: it is not drawn. */
export const MIN_TREND_POINTS = 3;
/** A trend chart's height in pixels (Mermaid's default, 500, for a line of a few points). */
export const TREND_CHART_PX = 260;
/** Up to this many points carry a date label each; more are numbered, the table has dates. */
export const MAX_DATED_POINTS = 8;

/**
 * A trend chart's x-axis: a label per run, "11-21" (or "11-21 14:03" where a day has several
 * runs), so that eight labels fit beside each other; past MAX_DATED_POINTS, the runs numbered
 * on a numeric axis, whose ticks Mermaid spaces itself (labels would overlap).
 */
function trendAxis(times: string[]): string {
  if (times.length > MAX_DATED_POINTS) {
    return `"run, oldest first (dates in the table)" 1 --> ${times.length}`;
  }
  const days = times.map((t) => shortTime(t).slice(0, 5));
  const labels = new Set(days).size === days.length ? days : times.map(shortTime);
  return `[${labels.map((l) => `"${mermaidLabel(l)}"`).join(', ')}]`;
}

/** The lowest and highest value of a trend: a sparkline spans them, whatever their distance. */
function trendRange(tr: HeadlineTrend): string {
  const values = tr.points.map((p) => p.value).filter((v): v is number => v !== undefined);
  if (!values.length) return '';
  const digits = tr.unit === '%' ? 1 : 2;
  const lo = fixed(Math.min(...values), digits);
  const hi = fixed(Math.max(...values), digits);
  return lo === hi
    ? `(${trendValue(Math.min(...values), tr.unit)})`
    : `(${lo}–${trendValue(Math.max(...values), tr.unit)})`;
}

/**
 * The headlines that moved since last night by more than the comparison's threshold, in words:
 * "bsr_gemm 0.81× → 0.71× (−12.3 %)". Beside "No case changed" the report names them: a graded
 * candidate can change while no case of it is judged SLOWER (another candidate became the
 * fastest, or its reference moved).
 */
function movedText(trends: HeadlineTrend[], thresholdPct: number): string | undefined {
  const moved = trends.flatMap((tr) => {
    const now = tr.points[tr.points.length - 1]?.value;
    const before = tr.lastNight;
    if (now === undefined || before === undefined || before === 0) return [];
    const change = now / before - 1;
    if (Math.abs(change) * 100 <= thresholdPct) return [];
    return [
      `${esc(tr.kernel)} ${trendValue(before, tr.unit)} → ${trendValue(now, tr.unit)} (${formatRatioPct(1 + change)})`,
    ];
  });
  return moved.length
    ? `The headline moved since last night all the same: ${moved.join(', ')}; see Trends.`
    : undefined;
}

/** The nightly's trends: each headline across the stored runs and tonight's. */
export function trendsView(input: ReportInput, opts: ViewOptions): TrendsView | undefined {
  if (input.kind !== 'nightly' || !input.history?.length) return undefined;
  const gpu = gpuName(input.results);
  const stored = input.history
    .filter((r) => gpuName(r) === gpu && r.run.started_at < input.results.run.started_at)
    .sort((a, b) => a.run.started_at.localeCompare(b.run.started_at))
    .map((r) => ({ startedAt: r.run.started_at, tiers: evaluateTiers(r, input.config) }));
  if (!stored.length) return undefined;
  const trends = headlineTrends(input.tiers, input.results.run.started_at, stored);
  const rows = trends.map((tr): Cell[] => {
    const now = tr.points[tr.points.length - 1];
    return [
      trusted(`${esc(tr.kernel)}${now?.variant ? ` (${esc(now.variant)})` : ''}`),
      trusted(
        `\`${sparkline(
          tr.points.map((p) => p.value),
          tr.windowMedian,
        )}\` ${trendRange(tr)}`,
      ),
      trusted(`**${trendValue(now?.value, tr.unit) || 'n/a'}**`),
      trusted(
        keepUnits(
          [tr.lastNight, tr.windowMedian, tr.best]
            .map((v) => trendValue(v, tr.unit) || '–')
            .join(' · '),
        ),
      ),
      trusted(tr.valueChange === undefined ? '' : formatRatioPct(1 + tr.valueChange)),
      trusted(tr.referenceChange === undefined ? '' : formatRatioPct(1 + tr.referenceChange)),
    ];
  });
  const charts = opts.full
    ? trends
        .filter((tr) => tr.points.filter((p) => p.value !== undefined).length >= MIN_TREND_POINTS)
        .map((tr) => {
          const values = tr.points.map((p) => p.value ?? 0);
          const top = Math.max(...values);
          return {
            title: mermaidLabel(`${tr.kernel} headline`),
            xAxis: trendAxis(tr.points.map((p) => p.startedAt)),
            values: values.map((v) => fixed(v, tr.unit === '%' ? 1 : 3)).join(', '),
            unit: tr.unit === '%' ? '% of peak' : '× the reference',
            yMax: tr.unit === '%' ? 100 : Math.ceil(top * 12) / 10 || 1,
            height: TREND_CHART_PX,
          };
        })
    : [];
  const first = stored[0]?.startedAt ?? '';
  return {
    moved: movedText(trends, input.config.compare.thresholdPct),
    runs: stored.length,
    since: first,
    table: table(
      [
        'headline (graded tonight)',
        `trend, oldest first (▁ −${SPARK_SPAN_PCT} % … █ +${SPARK_SPAN_PCT} % of the window median)`,
        'tonight',
        'last night · window median · best',
        'tonight vs median',
        'reference ms vs median',
      ],
      rows,
      ['l', 'l', 'r', 'r', 'r', 'r'],
    ),
    charts,
  };
}
