// Section `kernels` (partials/kernels.md.mustache, full report only): every case, a kernel per
// <details> (open where it has a problem), its tables at most MAX_COLUMNS wide, a chart sized to
// its bars.
import { caseDtype, caseTflops, peakTflops } from '../judge/index.js';
import { escapeHtmlText, fixed, mermaidLabel } from '../lib/index.js';
import { countsText, plural } from './cells.js';
import { CHANGE_KINDS, type VerdictCounts, verdictCounts } from './digest.js';
import { correctnessTable, noteLines, timingTable, unpassedTable } from './results-tables.js';
import type { ReportInput } from './types.js';
import type { KernelChartView, KernelView } from './view-types.js';

/** A chart of fewer bars says nothing its table row does not: it is not drawn. */
export const MIN_CHART_BARS = 3;
/** Pixels per bar, and for the title and the value axis, of a horizontal bar chart. */
const BAR_PX = 32;
const FRAME_PX = 90;
/** A label longer than this is cut (with "…"): the labels sit on the left, in one column. */
export const CHART_LABEL_CHARS = 20;

/** "cuda_bsr_wgmma_ws" as it is; a longer label cut to CHART_LABEL_CHARS with "…". */
export function chartLabel(value: string): string {
  const label = mermaidLabel(value);
  return label.length <= CHART_LABEL_CHARS ? label : `${label.slice(0, CHART_LABEL_CHARS - 1)}…`;
}

function chartsFor(kernel: string, input: ReportInput): KernelChartView[] {
  const tier = input.tiers.find((t) => t.kernel === kernel && t.caseId);
  const cases = input.results.cases.filter((c) => c.kernel === kernel);
  const headlineId = tier?.caseId ?? cases.find((c) => (caseTflops(c) ?? 0) >= 0.05)?.case;
  if (!headlineId) return [];
  const bars = cases
    // Bars that would round to 0.0 TFLOPS (tiny CI shapes, copies) say nothing.
    .filter((c) => c.case === headlineId && (caseTflops(c) ?? 0) >= 0.05)
    .map((c) => ({ label: chartLabel(c.variant), tflops: caseTflops(c) as number }));
  if (bars.length < MIN_CHART_BARS) return [];
  const first = cases.find((c) => c.case === headlineId);
  const peak = first ? peakTflops(input.results, input.config, caseDtype(first)) : undefined;
  const top = Math.max(peak ?? 0, ...bars.map((b) => b.tflops));
  return [
    {
      title: mermaidLabel(`${kernel} ${headlineId}`),
      labels: bars.map((b) => `"${b.label}"`).join(', '),
      values: bars.map((b) => fixed(b.tflops, 1)).join(', '),
      yMax: Math.ceil(top / 100) * 100 || 1,
      peak: peak === undefined ? undefined : fixed(peak, 1),
      height: FRAME_PX + BAR_PX * bars.length,
    },
  ];
}

/** A kernel that has any of these is open: what blocks or needs a look (every change but FASTER). */
const PROBLEMS: (keyof VerdictCounts)[] = CHANGE_KINDS.filter((k) => k !== 'faster');

/** Every result of every kernel, for the full report. */
export function kernelViews(input: ReportInput): KernelView[] {
  const measured = new Map(input.gate.measurementErrors.map((m) => [m.key, m]));
  const names = [...new Set(input.comparison.cases.map((c) => c.kernel))];
  return names.map((name) => {
    const all = input.comparison.cases.filter((c) => c.kernel === name);
    const info = input.results.kernels.find((k) => k.name === name);
    const counts = verdictCounts(all, new Set(measured.keys()));
    const notes = noteLines(all, measured);
    return {
      open: PROBLEMS.some((k) => (counts[k] ?? 0) > 0),
      summary: `<b>${escapeHtmlText(name)}</b>: ${plural(all.length, 'case')}${all.length ? ' · ' : ''}${countsText(counts)}`,
      description: info?.description,
      flopsFormula: info?.flops_formula,
      table: all.length ? timingTable(all, input, measured) : '',
      notes,
      hasNotes: notes.length > 0,
      correctness: all.length ? correctnessTable(all) : '',
      unpassed: unpassedTable(all, measured),
      charts: chartsFor(name, input),
    };
  });
}
