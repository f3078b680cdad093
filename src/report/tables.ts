// The changed cases' table (the comment's, and the full report's with the case in one column);
// every case of a kernel is results-tables.ts's.
import { type CaseComparison, type MeasurementError } from '../judge/index.js';
import { type Cell, formatMs } from '../lib/index.js';
import { axisCells, axisKeys, clip, correctnessCell, noteOf, perfCells, trusted } from './cells.js';
import { compactTable } from './compact.js';
import { deviceCell, manyHosts, severalDevices } from './devices.js';
import { caseText } from './results-tables.js';
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

/** The changed cases of a kernel, worst first: the verdict, then the case, then why. */
export function changedTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
  noteMax: number | undefined,
  oneCaseColumn = false,
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
    ...(oneCaseColumn
      ? [{ header: 'case', align: 'l' as const, cell: (c: CaseComparison) => caseText(c) }]
      : axisColumns(axisKeys(cases))),
    ...gpuColumns(input),
    { header: 'ms', align: 'r', cell: (c) => ms(c.medianMs) },
    { header: 'base ms', align: 'r', cell: (c) => ms(c.baselineMedianMs) },
    { header: 'CI of Δ', align: 'r', cell: (c) => perfOf(c)[2] },
    { header: 'note', align: 'l', cell: (c) => clip(noteOf(c, measured), noteMax) },
  ];
  const t = columnsOf(columns, cases);
  return compactTable(t.header, t.rows, t.align, ['variant', 'case', 'note']);
}
