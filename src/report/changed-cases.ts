// Section `changed-cases` (partials/changed-cases.md.mustache): the cases behind each change.
import type { CaseComparison, MeasurementError } from '../judge/index.js';
import { countsText, esc, plural } from './cells.js';
import { CHANGE_KINDS, type Changes, verdictCounts } from './digest.js';
import { changedTable } from './tables.js';
import { COMMENT_NOTE_CHARS, type ReportInput, type ViewOptions } from './types.js';

/** The changed cases of each kernel, worst first; in a comment capped per variant and in all. */
export function changedCasesView(
  input: ReportInput,
  changes: Changes,
  opts: ViewOptions,
  measured: Map<string, MeasurementError>,
) {
  let budget = opts.full ? Infinity : (opts.maxRows ?? Infinity);
  const kernels = [...new Set(changes.changed.map((v) => v.kernel))];
  const out = [];
  for (const kernel of kernels) {
    const shown: CaseComparison[] = [];
    const hidden: string[] = [];
    for (const v of changes.changed.filter((x) => x.kernel === kernel)) {
      const cap = opts.full ? v.changed.length : Math.min(opts.rowsPerVariant ?? Infinity, budget);
      const rows = v.changed.slice(0, Math.max(0, cap));
      budget -= rows.length;
      shown.push(...rows);
      const rest = v.changed.slice(rows.length);
      if (rest.length) {
        const what = countsText(verdictCounts(rest, new Set(measured.keys())), [...CHANGE_KINDS]);
        hidden.push(
          `${plural(rest.length, 'more case')} of ${esc(`${kernel}/${v.variant}`)} (${what})`,
        );
      }
    }
    out.push({
      kernel,
      table: shown.length
        ? changedTable(shown, input, measured, opts.full ? undefined : COMMENT_NOTE_CHARS)
        : '',
      more: hidden.length ? `${hidden.join('; ')}: in the full report.` : undefined,
    });
  }
  return out;
}
