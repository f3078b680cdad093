// The changed cases' table (the comment's, and the full report's with the case in one column);
// every case of a kernel is results-tables.ts's.
import { type CaseComparison, CONFIRM_NOTES, type MeasurementError } from '../judge/index.js';
import { type Cell, formatMs } from '../lib/index.js';
import { clip, correctnessCell, esc, noteOf, perfCells, rangeText, trusted } from './cells.js';
import { compactTable, NBSP } from './compact.js';
import { deviceCell, manyHosts, severalDevices } from './devices.js';
import { sharedMark, strip } from './results-tables.js';
import { COMMENT_NOTE_CHARS, type ReportInput } from './types.js';

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

/** The axes every one of several cases has with one value (`B=16` on every row): said once. */
export function sharedAxes(cases: CaseComparison[]): [string, string][] {
  if (cases.length < 2) return [];
  const first = cases[0]!.params;
  const shared = Object.keys(first)
    .filter((k) => cases.every((c) => k in c.params && c.params[k] === first[k]))
    .map((k): [string, string] => [k, String(first[k])]);
  // a case with no axis of its own left would have an empty cell
  return cases.every((c) => Object.keys(c.params).length > shared.length) ? shared : [];
}

/**
 * The case column: each case's axes but those said once above the table. Where every row has the
 * same axes, the header names them once and the cells hold their values ("dtype, D, causal" over
 * "fp16, 128, false"); else each cell is `key=value, …`. Joined by no-break spaces in the full
 * report (issue 32: `dtype=fp16, B=16, …` took two lines at 1012 px); in the comment's narrower
 * column a cell may wrap between axes.
 */
function caseColumn(
  cases: CaseComparison[],
  shared: Set<string>,
  full: boolean,
): Column<CaseComparison> {
  const own = (c: CaseComparison) => Object.keys(c.params).filter((k) => !shared.has(k));
  const join = (xs: string[]) => xs.join(full ? `,${NBSP}` : ', ');
  const keys = own(cases[0]!).join(',');
  if (keys && cases.every((c) => own(c).join(',') === keys)) {
    const axes = own(cases[0]!);
    return {
      header: join(axes),
      align: 'l',
      cell: (c) => join(axes.map((k) => String(c.params[k]))),
    };
  }
  return {
    header: 'case',
    align: 'l',
    cell: (c) =>
      own(c).length ? join(own(c).map((k) => `${k}=${String(c.params[k])}`)) : c.caseId,
  };
}

/**
 * A case's note in the changed table: a second pair's verdict said in a word, "confirmed +0.8 % …
 * +1.7 %" (its interval, as the CI of Δ is written) or "not confirmed: why", which the legend
 * under the table explains once (issue 32: the whole sentence took two lines at 1012 px).
 */
export function tableNote(c: CaseComparison, measured: Map<string, MeasurementError>): string {
  const perfNote =
    c.confirmed === 'confirmed' && c.confirmLo !== undefined && c.confirmHi !== undefined
      ? `confirmed ${rangeText({ lo: c.confirmLo, hi: c.confirmHi })}`
      : c.perfNote?.replace(CONFIRM_NOTES.unmeasured, 'not confirmed: ');
  return noteOf({ ...c, perfNote }, measured);
}

const variantOf = (c: CaseComparison): Cell => c.variant;

/** The `GPU` column, when several GPUs measured the run. */
function gpuColumns(input: ReportInput): Column<CaseComparison>[] {
  if (!severalDevices(input.results)) return [];
  const hosts = manyHosts(input.results);
  return [{ header: 'GPU', align: 'l', cell: (c) => deviceCell(c.current, hosts) }];
}

/** What every row of a changed table shares, said once above it instead of in each row. */
interface Shared {
  /** the variant, when every row is of one */
  variant: string | undefined;
  /** the method mark every Δ has (" · paired") */
  mark: string;
  axes: [string, string][];
}

function sharedOf(cases: CaseComparison[], deltas: Cell[]): Shared {
  const variants = new Set(cases.map((c) => c.variant));
  return {
    variant: cases.length > 1 && variants.size === 1 ? cases[0]!.variant : undefined,
    mark: cases.length > 1 ? sharedMark(deltas) : '',
    axes: sharedAxes(cases),
  };
}

/** "Every row: variant triton\_fa2 · Δ paired · B=16, H=96, S=4096." */
function sharedLine(shared: Shared): string {
  const parts = [
    ...(shared.variant ? [`variant ${esc(shared.variant)}`] : []),
    ...(shared.mark ? [`Δ ${shared.mark.replace(' · ', '')}`] : []),
    ...(shared.axes.length ? [esc(shared.axes.map(([k, v]) => `${k}=${v}`).join(', '))] : []),
  ];
  return parts.length ? `Every row: ${parts.join(' · ')}.` : '';
}

/**
 * The changed cases of a kernel, worst first: the verdict, then the case, then why. One case
 * column in both (issue 32: a column per axis made 13 columns that scrolled sideways in a pull
 * request's 780 px column): in the full report it does not wrap; in the comment it wraps between
 * axes and the note is cut to `COMMENT_NOTE_CHARS`. What every row shares (the variant, the Δ's
 * method, axes) is said once above the table, so the full report's fits 1012 px on one line a row.
 * The `GPU` column (several GPUs measured the run) is the full report's only.
 */
export function changedTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
  full: boolean,
): string {
  const perf = new Map(cases.map((c) => [c, perfCells(c, input) as [Cell, Cell, Cell]]));
  const perfOf = (c: CaseComparison) => perf.get(c) as [Cell, Cell, Cell];
  const shared = sharedOf(
    cases,
    cases.map((c) => perfOf(c)[0]),
  );
  const axes = new Set(shared.axes.map(([k]) => k));
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
    ...(shared.variant ? [] : [{ header: 'variant', align: 'l' as const, cell: variantOf }]),
    { header: 'Δ', align: 'r', cell: (c) => strip(perfOf(c)[0], shared.mark) },
    {
      header: 'verdict',
      align: 'l',
      cell: (c) => (measured.has(c.key) ? trusted("⚠️ above the chip's peak") : perfOf(c)[1]),
    },
    ...checks,
    caseColumn(cases, axes, full),
    // Which GPU measured a case is the full report's: in the comment an eighth column made the
    // table scroll in the 780 px conversation column (run 84, two H100s, 2026-11-27).
    ...(full ? gpuColumns(input) : []),
    { header: 'ms', align: 'r', cell: (c) => ms(c.medianMs) },
    { header: 'base', align: 'r', cell: (c) => ms(c.baselineMedianMs) },
    { header: 'CI of Δ', align: 'r', cell: (c) => perfOf(c)[2] },
    {
      header: 'note',
      align: 'l',
      cell: (c) => clip(tableNote(c, measured), full ? undefined : COMMENT_NOTE_CHARS),
    },
  ];
  const t = columnsOf(columns, cases);
  const table = compactTable(t.header, t.rows, t.align, ['variant', 'case', 'note']);
  const line = sharedLine(shared);
  return line ? `${line}\n\n${table}` : table;
}
