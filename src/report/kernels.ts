// Section `kernels` (partials/kernels.md.mustache, full report only): every case, with charts.
import { caseDtype, caseTflops, peakTflops } from '../judge/index.js';
import { fixed, mermaidLabel } from '../lib/index.js';
import { resultTable } from './tables.js';
import type { ReportInput } from './types.js';
import type { KernelView } from './view-types.js';

function chartsFor(kernel: string, input: ReportInput) {
  const tier = input.tiers.find((t) => t.kernel === kernel && t.caseId);
  const cases = input.results.cases.filter((c) => c.kernel === kernel);
  const headlineId = tier?.caseId ?? cases.find((c) => (caseTflops(c) ?? 0) >= 0.05)?.case;
  if (!headlineId) return [];
  const bars = cases
    // Bars that would round to 0.0 TFLOPS (tiny CI shapes, copies) say nothing.
    .filter((c) => c.case === headlineId && (caseTflops(c) ?? 0) >= 0.05)
    .map((c) => ({ label: mermaidLabel(c.variant), tflops: caseTflops(c) as number }));
  if (bars.length === 0) return [];
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
    },
  ];
}

/** Every result of every kernel, for the full report. */
export function kernelViews(input: ReportInput): KernelView[] {
  const measured = new Map(input.gate.measurementErrors.map((m) => [m.key, m]));
  const names = [...new Set(input.comparison.cases.map((c) => c.kernel))];
  return names.map((name) => {
    const all = input.comparison.cases.filter((c) => c.kernel === name);
    const info = input.results.kernels.find((k) => k.name === name);
    return {
      name,
      description: info?.description,
      flopsFormula: info?.flops_formula,
      table: all.length ? resultTable(all, input, measured) : '',
      charts: chartsFor(name, input),
    };
  });
}
