// Section `changes` (partials/changes.md.mustache): a row per changed variant.
import { type Cell, formatRatioPct, table } from '../lib/index.js';
import { CHANGED_COUNTS, countsText, rangeText, trusted } from './cells.js';
import { keepUnits } from './compact.js';
import { type Changes, isControl } from './digest.js';
import type { ReportInput } from './types.js';
import type { ChangesView } from './view-types.js';

/** One row per changed variant, then one for all the others. */
/** `failingTails`: the tail cases wrong or erred (tailCountsView's `failed`), 0 when none. */
export function changesView(input: ReportInput, changes: Changes, failingTails = 0): ChangesView {
  const rows: Cell[][] = changes.changed.map((v) => [
    `${v.kernel}/${v.variant}`,
    trusted(`${v.changed.length} of ${v.cases}`),
    trusted(v.delta ? keepUnits(formatRatioPct(v.delta.geomean)) : ''),
    trusted(keepUnits(rangeText(v.delta))),
    trusted(
      `${countsText(v.counts, CHANGED_COUNTS)}${v.changed.every(isControl) ? ' (an A/A control: the machine moved, not the code)' : ''}`,
    ),
  ]);
  const u = changes.untouched;
  if (u.variants > 0) {
    const label = changes.changed.length
      ? `${u.variants} other variants`
      : `all ${u.variants} variants`;
    rows.push([
      trusted(u.variants === 1 && changes.changed.length ? '1 other variant' : label),
      trusted(`0 of ${u.cases}`),
      trusted(u.delta ? keepUnits(formatRatioPct(u.delta.geomean)) : ''),
      trusted(keepUnits(rangeText(u.delta))),
      trusted(countsText(u.counts)),
    ]);
  }
  const unchanged = changes.judged && changes.changed.length === 0;
  return {
    none: !changes.judged,
    nothing: unchanged && failingTails === 0,
    onlyTails: unchanged && failingTails > 0 ? failingTails : undefined,
    table: table(['variant', 'changed', 'Δ (geomean)', 'range', 'verdict'], rows, [
      'l',
      'r',
      'r',
      'r',
      'l',
    ]),
  };
}
