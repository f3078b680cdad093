// The full report's "All results" of a kernel, in tables of at most MAX_COLUMNS columns (issue 32:
// one 19-column table scrolled sideways and hid correctness at its right end): the timing of
// every case; the correctness of each variant with every case that did not pass listed; the
// notes as a list under the timings, words that no longer widen a column.
import {
  type CaseComparison,
  caseGbps,
  casePctPeak,
  caseTflops,
  type MeasurementError,
} from '../judge/index.js';
import { type Cell, fixed, formatMs, formatSci } from '../lib/index.js';
import { correctnessCell, errorCell, esc, noteOf, perfCells, trusted } from './cells.js';
import { compactTable, keepUnits, NBSP } from './compact.js';
import { deviceCell, manyHosts, severalDevices } from './devices.js';
import type { ReportInput } from './types.js';

/** No table of the full report is wider than this (the changed cases' and every kernel's). */
export const MAX_COLUMNS = 10;

const passed = (c: CaseComparison) => c.correctness === 'PASS';

/** The words of a case cell: its axes, `key=value, …`, in the order its kernel names them. */
export function caseText(c: CaseComparison): string {
  const params = Object.entries(c.params);
  return params.length ? params.map(([k, v]) => `${k}=${String(v)}`).join(', ') : c.caseId;
}

/** The case of each row, written once per run of rows of the same case (as a row span would). */
function caseCells(cases: CaseComparison[]): Cell[] {
  return cases.map((c, i) => (i > 0 && cases[i - 1]?.caseId === c.caseId ? '' : caseText(c)));
}

/** A method mark every Δ of the table shares (" · paired"): said once in the header instead. */
export function sharedMark(deltas: Cell[]): string {
  const texts = deltas.map((d) => (typeof d === 'object' ? d.trusted : String(d))).filter(Boolean);
  const mark = /( · [a-z ]+)$/.exec(texts[0] ?? '')?.[1];
  return mark && texts.every((t) => t.endsWith(mark)) ? mark : '';
}

export const strip = (cell: Cell, mark: string): Cell =>
  mark && typeof cell === 'object' ? trusted(cell.trusted.slice(0, -mark.length)) : cell;

/** "⚠️ " before a rate the run measured above the chip's peak. */
const warned = (bad: MeasurementError | undefined, quantity: MeasurementError['quantity']) =>
  bad?.quantity === quantity ? '⚠️ ' : '';

/** A case's TFLOPS and its share of the chip's peak (when there is a peak to share). */
function rateOf(c: CaseComparison, input: ReportInput) {
  const current = c.current;
  const tflops = current ? caseTflops(current) : undefined;
  const pct = current ? casePctPeak(current, input.results, input.config) : undefined;
  return { tflops, pct: tflops ? pct : undefined };
}

/** TFLOPS with its share of the chip's peak, "472.4 (47.7 %)", and GB/s: one column fewer. */
function rateCells(c: CaseComparison, input: ReportInput, bad: MeasurementError | undefined) {
  const current = c.current;
  const { tflops, pct } = rateOf(c, input);
  const gbps = current ? caseGbps(current) : undefined;
  const ofPeak = pct === undefined ? '' : ` (${fixed(pct, 1)} %)`;
  return [
    trusted(
      tflops === undefined || tflops === 0
        ? ''
        : `${warned(bad, 'tflops')}${fixed(tflops, 1)}${ofPeak}`,
    ),
    trusted(gbps === undefined ? '' : `${warned(bad, 'gbps')}${fixed(gbps, 0)}`),
  ];
}

/**
 * A trusted cell kept on one line but where it may break: before "(" (the threshold beside an
 * interval, a median's IQR, a rate's share of the peak) and after "…" (an interval's halves), so
 * that a 1012 px job summary holds the timing table without scrolling (issue 32). A number keeps
 * its unit.
 */
function breakable(cell: Cell): Cell {
  if (typeof cell !== 'object') return cell;
  const kept = keepUnits(cell.trusted).replace(/ /g, NBSP);
  return trusted(kept.replace(new RegExp(`${NBSP}(?=\\()|(?<=…)${NBSP}`, 'g'), ' '));
}

/**
 * Every case's timing: case, variant, Δ, verdict, CI, median (IQR), TFLOPS (% peak), GB/s; GPU
 * when several.
 */
export function timingTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
): string {
  const perf = cases.map((c) => perfCells(c, input));
  const mark = sharedMark(perf.map((p) => p[0] as Cell));
  const gpu = severalDevices(input.results);
  const hosts = gpu && manyHosts(input.results);
  const labels = caseCells(cases);
  const rows = cases.map((c, i): Cell[] => {
    const [delta, verdict, ci] = perf[i] as [Cell, Cell, Cell];
    const iqr = c.iqrMs === undefined ? '' : ` (${formatMs(c.iqrMs)})`;
    return [
      labels[i] as Cell,
      c.variant,
      strip(delta, mark),
      verdict,
      breakable(ci),
      ...(gpu ? [deviceCell(c.current, hosts)] : []),
      breakable(trusted(`${formatMs(c.medianMs)}${iqr}`)),
      ...rateCells(c, input, measured.get(c.key)).map(breakable),
    ];
  });
  const delta = `${input.comparison.paired ? 'Δ' : 'Δ vs baseline'}${mark.replace(' · ', ', ')}`;
  const header = ['case', 'variant', delta, 'verdict', 'CI of Δ'];
  // "(% peak)" only where some row has a share of a peak (a tool's cases have none).
  const shares = cases.some((c) => rateOf(c, input).pct !== undefined);
  const tflops = shares ? 'TFLOPS (% peak)' : 'TFLOPS';
  header.push(...(gpu ? ['GPU'] : []), 'median ms (IQR)', tflops, 'GB/s');
  const align: ('l' | 'r')[] = ['l', 'l', 'r', 'l', 'r', ...(gpu ? ['l' as const] : [])];
  align.push('r', 'r', 'r');
  const wrap = ['case', 'variant', 'CI of Δ', 'median ms (IQR)', tflops];
  return compactTable(header, rows, align, wrap);
}

/** Each case's note (why it was skipped, a floor, a second pair), as list items. */
export function noteLines(
  cases: CaseComparison[],
  measured: Map<string, MeasurementError>,
): string[] {
  // A case that did not pass says why in its own table.
  return cases.filter(passed).flatMap((c) => {
    const note = noteOf(c, measured);
    return note ? [`${esc(c.variant)} · ${esc(caseText(c))}: ${esc(note)}`] : [];
  });
}

/** The worst error of a variant's cases against its tolerance: "2.8e-4 / 2e-3", and where. */
function worstError(cases: CaseComparison[]): [Cell, Cell] {
  const margins = cases
    .filter((c) => typeof c.relL2 === 'number' && (c.tolRelL2 ?? 0) > 0)
    .map((c) => ({ c, m: (c.relL2 as number) / (c.tolRelL2 as number) }));
  if (!margins.length) return [trusted(''), ''];
  const worst = margins.reduce((a, b) => (b.m > a.m ? b : a));
  return [
    trusted(`${formatSci(worst.c.relL2 as number)} / ${formatSci(worst.c.tolRelL2)}`),
    caseText(worst.c),
  ];
}

/** The correctness of each variant: its cases, how many passed, the others, its worst error. */
export function correctnessTable(cases: CaseComparison[]): string {
  const variants = [...new Set(cases.map((c) => c.variant))];
  const rows = variants.map((v): Cell[] => {
    const mine = cases.filter((c) => c.variant === v);
    const others = new Map<string, number>();
    for (const c of mine.filter((x) => !passed(x))) {
      const cell = correctnessCell(c);
      const text = typeof cell === 'object' ? cell.trusted : String(cell);
      others.set(text, (others.get(text) ?? 0) + 1);
    }
    const pass = mine.filter(passed).length;
    return [
      v,
      trusted(String(mine.length)),
      trusted(pass ? `✅ ${pass}` : ''),
      trusted([...others].map(([text, n]) => `${text} ${n}`).join(' · ')),
      ...worstError(mine),
    ];
  });
  const header = ['variant', 'cases', 'passed', 'not passed', 'worst rel_l2 / tol', 'on case'];
  return compactTable(header, rows, ['l', 'r', 'r', 'l', 'r', 'l'], ['variant', 'on case']);
}

/** Every case that did not pass: case, variant, correctness, error against tolerance, why. */
export function unpassedTable(
  cases: CaseComparison[],
  measured: Map<string, MeasurementError>,
): string {
  const bad = cases.filter((c) => !passed(c));
  if (!bad.length) return '';
  const rows = bad.map((c): Cell[] => [
    caseText(c),
    c.variant,
    correctnessCell(c),
    errorCell(c),
    noteOf(c, measured),
  ]);
  const header = ['case', 'variant', 'correctness', 'rel_l2 / tol', 'why'];
  return compactTable(header, rows, ['l', 'l', 'l', 'r', 'l'], ['case', 'variant', 'why']);
}
