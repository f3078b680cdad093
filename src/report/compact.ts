// Tables that fit a reader's screen: a column no row fills is dropped, and a number with its unit
// (or an interval) stays on one line, so a cell such as "+22.8 % … +22.9 % (±19.0 %)" does not
// wrap at every space and make each row five lines tall.
import { type Cell, table } from '../lib/index.js';

/** No-break space: GitHub wraps a table cell at spaces, never at this. */
export const NBSP = '\u00a0';

/**
 * A text's numbers kept with their units ("+40.1 %", "1.46 µs", "27.9 ms", "513 TFLOPS"): a no-break space
 * between them, so a cell or a line that must wrap never breaks before the last "%" of
 * "+0.8 % … +40.1 %" (issue 32); it may still break between the numbers.
 */
export function keepUnits(text: string): string {
  return text.replace(/(\d) (%|ms|µs|×|TFLOPS|GB\/s)(?![\p{L}\d])/gu, `$1${NBSP}$2`);
}

function empty(cell: Cell | undefined): boolean {
  if (cell === undefined) return true;
  if (typeof cell === 'object') return cell.trusted.trim() === '';
  return String(cell).trim() === '';
}

/** A trusted cell's spaces as no-break spaces; a plain (escaped) one as it is. */
function unbroken(cell: Cell): Cell {
  return typeof cell === 'object' ? { trusted: cell.trusted.replace(/ /g, NBSP) } : cell;
}

/**
 * `table` with the columns no row fills left out, and the cells of every column but those named
 * in `wrap` (the variant, the note: words) kept on one line.
 */
export function compactTable(
  header: string[],
  rows: Cell[][],
  align: ('l' | 'r' | 'c')[],
  wrap: readonly string[] = ['variant', 'note'],
): string {
  const kept = header
    .map((_, i) => i)
    .filter((i) => rows.length === 0 || rows.some((row) => !empty(row[i])));
  const pick = <T>(xs: T[]) => kept.map((i) => xs[i] as T);
  const body = rows.map((row) =>
    kept.map((i) => (wrap.includes(header[i] ?? '') ? row[i]! : unbroken(row[i] ?? ''))),
  );
  return table(pick(header), body, pick(align));
}
