// Section `changed-cases` (partials/changed-cases.md.mustache): the cases behind each change,
// ordered by what a reviewer weighs: problems with correctness first, then the kernel's headline
// case, then the largest change in time. Launch-bound cases (head and base both under TAIL_MS)
// whose only change is their speed are counted in one line under the table instead of filling it.
import { type CaseComparison, CONFIRM_NOTES, type MeasurementError } from '../judge/index.js';
import { fixed } from '../lib/index.js';
import { countsText, esc, plural, rangeText } from './cells.js';
import { CHANGE_KINDS, type Changes, changeKind, ratioSpread, verdictCounts } from './digest.js';
import { changedTable } from './tables.js';
import type { ReportInput, ViewOptions } from './types.js';
import type { ChangedKernelView } from './view-types.js';

/** A case whose head and base both take less than this many ms is a launch-bound tail. */
export const TAIL_MS = 0.1;

/** The change in time of one call, in ms (0 when either side is unknown). */
function costMs(c: CaseComparison): number {
  if (c.medianMs === undefined || c.baselineMedianMs === undefined) return 0;
  return Math.abs(c.medianMs - c.baselineMedianMs);
}

/** A case that changed only in speed and takes under TAIL_MS on both sides. */
export function isTail(c: CaseComparison, aboveChip: Set<string>): boolean {
  const kind = changeKind(c, aboveChip);
  if (kind !== 'slower' && kind !== 'faster') return false;
  if (c.medianMs === undefined || c.baselineMedianMs === undefined) return false;
  return Math.max(c.medianMs, c.baselineMedianMs) < TAIL_MS;
}

/** Correctness and the other problems first, then the headline case, then the largest change in ms. */
export function byCost(headline: Set<string>, aboveChip: Set<string>) {
  const kind = (c: CaseComparison) => CHANGE_KINDS.indexOf(changeKind(c, aboveChip) ?? 'faster');
  const perf = (k: number) => (k >= CHANGE_KINDS.indexOf('slower') ? 1 : 0);
  return (a: CaseComparison, b: CaseComparison): number =>
    perf(kind(a)) - perf(kind(b)) ||
    (perf(kind(a)) ? 0 : kind(a) - kind(b)) ||
    Number(headline.has(b.caseId)) - Number(headline.has(a.caseId)) ||
    costMs(b) - costMs(a);
}

/** "🔴 10 slower of attention/triton_fa2 under 0.1 ms: +5.7 % … +22.9 %, at most 1.46 µs a call" */
function tailLine(variant: string, tails: CaseComparison[], aboveChip: Set<string>): string {
  const counts = countsText(verdictCounts(tails, aboveChip), [...CHANGE_KINDS]);
  const spread = ratioSpread(tails.map((c) => c.ratio ?? NaN));
  const most = Math.max(...tails.map(costMs)) * 1000;
  return (
    `${counts} ${tails.length === 1 ? 'case' : 'cases'} of ${esc(variant)} under ${TAIL_MS} ms ` +
    `(launch-bound): ${rangeText(spread)}, at most ${fixed(most, 2)} µs a call`
  );
}

/** A kernel's section of changed cases: its view, and the cases its table shows (for the legend). */
export interface ChangedSection extends ChangedKernelView {
  cases: CaseComparison[];
}

/** The changed cases of each kernel, by cost; in a comment capped per variant and in all. */
export function changedCasesView(
  input: ReportInput,
  changes: Changes,
  opts: ViewOptions,
  measured: Map<string, MeasurementError>,
): ChangedSection[] {
  const aboveChip = new Set(measured.keys());
  let budget = opts.full ? Infinity : (opts.maxRows ?? Infinity);
  const kernels = [...new Set(changes.changed.map((v) => v.kernel))];
  const out: ChangedSection[] = [];
  for (const kernel of kernels) {
    const headline = new Set(
      input.tiers.filter((t) => t.kernel === kernel && t.caseId).map((t) => t.caseId as string),
    );
    const shown: CaseComparison[] = [];
    const hidden: string[] = [];
    const tails: string[] = [];
    for (const v of changes.changed.filter((x) => x.kernel === kernel)) {
      const tail = v.changed.filter((c) => isTail(c, aboveChip));
      const listed = v.changed
        .filter((c) => !isTail(c, aboveChip))
        .sort(byCost(headline, aboveChip));
      if (tail.length) tails.push(tailLine(`${kernel}/${v.variant}`, tail, aboveChip));
      const cap = opts.full ? listed.length : Math.min(opts.rowsPerVariant ?? Infinity, budget);
      const rows = listed.slice(0, Math.max(0, cap));
      budget -= rows.length;
      shown.push(...rows);
      const rest = listed.slice(rows.length);
      if (rest.length) {
        const what = countsText(verdictCounts(rest, aboveChip), [...CHANGE_KINDS]);
        hidden.push(
          `${plural(rest.length, 'more case')} of ${esc(`${kernel}/${v.variant}`)} (${what})`,
        );
      }
    }
    out.push({
      kernel,
      cases: shown,
      table: shown.length ? changedTable(shown, input, measured, Boolean(opts.full)) : '',
      tails,
      more: hidden.length ? `${hidden.join('; ')}: in the full report.` : undefined,
    });
  }
  return out;
}

const VERDICT_WORDS: Record<string, string> = {
  SLOWER: '🔴 SLOWER: the whole interval is above the threshold',
  FASTER: '🟢 FASTER: the whole interval is below minus the threshold',
  AMBIGUOUS: '🟡 AMBIGUOUS: the interval straddles the threshold',
  SAME: '⚪ SAME: the interval is inside the threshold',
  MISSING: '❓ MISSING: in the base, not in this run',
  NEW: '🆕 NEW: nothing to compare with',
};

/** What the note's "confirmed" and "not confirmed" mean, for the notes the tables show. */
function confirmWords(cases: CaseComparison[]): string[] {
  const words: string[] = [];
  if (cases.some((c) => c.confirmed === 'confirmed'))
    words.push(
      'confirmed LO … HI: measured again in a second pair of worker processes, which read the same verdict with that interval',
    );
  if (cases.some((c) => c.perfNote?.startsWith(CONFIRM_NOTES.unmeasured)))
    words.push('not confirmed: the second pair of worker processes could not measure it, and why');
  return words;
}

/**
 * One line under the changed-cases tables that says once what each column's symbols mean, for the
 * symbols the tables show.
 */
export function changedLegend(
  input: ReportInput,
  sections: { cases: CaseComparison[]; tails: string[] }[],
): string | undefined {
  const cases = sections.flatMap((s) => s.cases);
  if (!cases.length && !sections.some((s) => s.tails.length)) return undefined;
  const compare = input.config.compare;
  const raised = cases.some(
    (c) =>
      c.ratio !== undefined &&
      c.thresholdPct !==
        (c.method === 'paired' ? compare.paired.thresholdPct : compare.thresholdPct),
  );
  const parts = [
    'Δ: the change in a call’s median time, this run against its base (> 0 is slower)',
  ];
  if (input.comparison.paired) {
    parts.push(
      'paired: timed in pairs with the base revision in this job; vs baseline: against the stored run',
    );
  }
  parts.push(`CI of Δ: its ${fixed(compare.confidence * 100, 0)} % confidence interval`);
  if (cases.some((c) => c.medianMs !== undefined || c.baselineMedianMs !== undefined))
    parts.push('ms, base: a call’s median time in this run and in its base');
  parts.push(...confirmWords(cases));
  if (raised) {
    parts.push(
      "(±x %): the threshold that case had to clear where it is not the default: raised by its measured noise or the floor for short cases, or another tool's own (docs/adapters.md)",
    );
  }
  for (const v of Object.keys(VERDICT_WORDS)) {
    if (cases.some((c) => c.perf === v)) parts.push(VERDICT_WORDS[v]!);
  }
  if (sections.some((s) => s.tails.length)) {
    parts.push(
      `under ${TAIL_MS} ms (launch-bound): head and base both take less; counted below the table, not listed`,
    );
  }
  return `<sub>${parts.join('. ')}.</sub>`;
}
