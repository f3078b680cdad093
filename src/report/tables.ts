// The per-case tables: every case of a kernel, and the cases that changed.
import {
  type CaseComparison,
  caseGbps,
  casePctPeak,
  caseTflops,
  type MeasurementError,
} from '../judge/index.js';
import { type Cell, fixed, formatMs, table } from '../lib/index.js';
import {
  axisCells,
  axisKeys,
  clip,
  correctnessCell,
  errorCell,
  noteOf,
  perfCells,
  trusted,
} from './cells.js';
import { compactTable } from './compact.js';
import { deviceCell, manyHosts, severalDevices } from './devices.js';
import type { ReportInput } from './types.js';

/** One column of a case table: its header, its alignment and each row's cell. */
interface Column<Row> {
  header: string;
  align: 'l' | 'r' | 'c';
  cell: (row: Row) => Cell;
}

function columnsOf<Row>(columns: Column<Row>[], rows: Row[]) {
  return {
    header: columns.map((col) => col.header),
    rows: rows.map((row) => columns.map((col) => col.cell(row))),
    align: columns.map((col) => col.align),
  };
}

/** One column per case axis (dtype, shape …), in the order the cases first name them. */
function axisColumns(keys: string[]): Column<CaseComparison>[] {
  return keys.map((key) => ({ header: key, align: 'l', cell: (c) => axisCells(c, [key])[0]! }));
}

/** The `GPU` column, when several GPUs measured the run. */
function gpuColumns(input: ReportInput): Column<CaseComparison>[] {
  if (!severalDevices(input.results)) return [];
  const hosts = manyHosts(input.results);
  return [{ header: 'GPU', align: 'l', cell: (c) => deviceCell(c.current, hosts) }];
}

/** A case of the full table, with the figures its cells share. */
interface ResultRow {
  c: CaseComparison;
  /** Δ, verdict, CI of Δ */
  perf: [Cell, Cell, Cell];
  tflops: number | undefined;
  gbps: number | undefined;
  pct: number | undefined;
  bad: MeasurementError | undefined;
}

const ofCase = (columns: Column<CaseComparison>[]): Column<ResultRow>[] =>
  columns.map((col) => ({ ...col, cell: (r) => col.cell(r.c) }));

/** "⚠️ " before a rate the run measured above the chip's peak. */
const warned = (r: ResultRow, quantity: MeasurementError['quantity']) =>
  r.bad?.quantity === quantity ? '⚠️ ' : '';

function resultColumns(
  input: ReportInput,
  keys: string[],
  measured: Map<string, MeasurementError>,
): Column<ResultRow>[] {
  return [
    { header: 'variant', align: 'l', cell: (r) => r.c.variant },
    {
      header: input.comparison.paired ? 'Δ' : 'Δ vs baseline',
      align: 'r',
      cell: (r) => r.perf[0],
    },
    { header: 'verdict', align: 'l', cell: (r) => r.perf[1] },
    ...ofCase(axisColumns(keys)),
    ...ofCase(gpuColumns(input)),
    { header: 'median ms', align: 'r', cell: (r) => trusted(formatMs(r.c.medianMs)) },
    {
      header: 'IQR ms',
      align: 'r',
      cell: (r) => trusted(r.c.iqrMs === undefined ? '' : formatMs(r.c.iqrMs)),
    },
    {
      header: 'TFLOPS',
      align: 'r',
      cell: (r) =>
        trusted(
          r.tflops === undefined || r.tflops === 0
            ? ''
            : `${warned(r, 'tflops')}${fixed(r.tflops, 1)}`,
        ),
    },
    {
      header: 'GB/s',
      align: 'r',
      cell: (r) => trusted(r.gbps === undefined ? '' : `${warned(r, 'gbps')}${fixed(r.gbps, 0)}`),
    },
    {
      header: '% peak',
      align: 'r',
      cell: (r) =>
        trusted(
          r.pct === undefined || r.tflops === 0 ? '' : `${warned(r, 'tflops')}${fixed(r.pct, 1)}`,
        ),
    },
    { header: 'CI of Δ', align: 'r', cell: (r) => r.perf[2] },
    { header: 'correctness', align: 'l', cell: (r) => correctnessCell(r.c) },
    { header: 'rel_l2 / tol', align: 'r', cell: (r) => errorCell(r.c) },
    { header: 'note', align: 'l', cell: (r) => noteOf(r.c, measured) },
  ];
}

/** Every case of a kernel: Δ and verdict beside the variant, one column per case axis, the rest after. */
export function resultTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
): string {
  const rows = cases.map((c): ResultRow => {
    const current = c.current;
    return {
      c,
      perf: perfCells(c, input) as [Cell, Cell, Cell],
      tflops: current ? caseTflops(current) : undefined,
      gbps: current ? caseGbps(current) : undefined,
      pct: current ? casePctPeak(current, input.results, input.config) : undefined,
      bad: measured.get(c.key),
    };
  });
  const t = columnsOf(resultColumns(input, axisKeys(cases), measured), rows);
  return table(t.header, t.rows, t.align);
}

/** The changed cases of a kernel, worst first: the verdict, then the case, then why. */
export function changedTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
  noteMax: number | undefined,
): string {
  const perf = new Map(cases.map((c) => [c, perfCells(c, input) as [Cell, Cell, Cell]]));
  const perfOf = (c: CaseComparison) => perf.get(c) as [Cell, Cell, Cell];
  // The verdict column is always the performance verdict; a correctness other than PASS (FAIL,
  // ERROR, UNCHECKED: another tool's case) has a column of its own.
  const unpassed = (c: CaseComparison) => c.correctness !== 'PASS' && c.correctness !== 'SKIPPED';
  const checks: Column<CaseComparison>[] = cases.some(unpassed)
    ? [
        {
          header: 'correctness',
          align: 'l',
          cell: (c) => (unpassed(c) ? correctnessCell(c) : trusted('')),
        },
      ]
    : [];
  const ms = (v: number | undefined) => trusted(v === undefined ? '' : formatMs(v));
  const columns: Column<CaseComparison>[] = [
    { header: 'variant', align: 'l', cell: (c) => c.variant },
    { header: 'Δ', align: 'r', cell: (c) => perfOf(c)[0] },
    {
      header: 'verdict',
      align: 'l',
      cell: (c) => (measured.has(c.key) ? trusted("⚠️ above the chip's peak") : perfOf(c)[1]),
    },
    ...checks,
    ...axisColumns(axisKeys(cases)),
    ...gpuColumns(input),
    { header: 'ms', align: 'r', cell: (c) => ms(c.medianMs) },
    { header: 'base ms', align: 'r', cell: (c) => ms(c.baselineMedianMs) },
    { header: 'CI of Δ', align: 'r', cell: (c) => perfOf(c)[2] },
    { header: 'note', align: 'l', cell: (c) => clip(noteOf(c, measured), noteMax) },
  ];
  const t = columnsOf(columns, cases);
  return compactTable(t.header, t.rows, t.align);
}
