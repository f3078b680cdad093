// The findings of the tails (each manifest's ci_cases, verified on the device, untimed: the
// results' `tails`), one line per variant, each naming its cases: `❌ **softmax/triton_zero_pad**
// wrong on 3 of 3 tail cases (ci_cases, verified on the device, untimed): dtype=fp32,R=3,W=7; …`.
import { tailProblems, type TailProblem } from '../judge/index.js';
import { formatSci } from '../lib/index.js';
import { clip, esc } from './cells.js';
import { COMMENT_NOTE_CHARS, type ReportInput } from './types.js';
import type { TailCountsView } from './view-types.js';

const WHAT = '(ci\\_cases, verified on the device, untimed)';

function relRange(input: ReportInput, problems: TailProblem[]): string {
  const values = problems
    .map(
      (p) =>
        (input.results.tails ?? []).find(
          (t) =>
            t.kernel === p.tail.kernel && t.variant === p.tail.variant && t.case === p.tail.case,
        )?.correctness,
    )
    .filter((k) => k !== undefined);
  const rel = values.map((k) => k.rel_l2).filter((v): v is number => typeof v === 'number');
  if (!rel.length) return '';
  const lo = formatSci(Math.min(...rel));
  const hi = formatSci(Math.max(...rel));
  const tol = formatSci(Math.min(...values.map((k) => k.tol_rel_l2)));
  return ` (rel\\_l2 ${lo === hi ? lo : `${lo} … ${hi}`}, tolerance ${tol})`;
}

/** Each variant's wrong tails (and, apart, its tails that erred), with whether they fail the gate. */
export function tailFindingLines(input: ReportInput): { fails: boolean; line: string }[] {
  const problems = tailProblems(input.results, input.config);
  const groups = new Map<string, TailProblem[]>();
  for (const p of problems) {
    const kind = p.tail.correctness === 'ERROR' ? 'error' : 'wrong';
    const key = `${p.tail.kernel}/${p.tail.variant}\u0000${kind}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  const lines: { fails: boolean; line: string }[] = [];
  for (const [key, grp] of groups) {
    const [name, kind] = key.split('\u0000') as [string, string];
    const first = grp[0] as TailProblem;
    const of = (input.results.tails ?? []).filter(
      (t) => t.kernel === first.tail.kernel && t.variant === first.tail.variant,
    ).length;
    const cases = esc(clip(grp.map((p) => p.tail.case).join('; '), 2 * COMMENT_NOTE_CHARS));
    const head = `**${esc(name)}** ${kind === 'error' ? 'failed to run' : 'wrong'} on ${grp.length} of ${of} tail cases ${WHAT}: ${cases}`;
    const line =
      kind === 'error'
        ? `💥 ${head}. E.g. ${esc(clip(first.tail.reason ?? 'error', COMMENT_NOTE_CHARS))}`
        : `❌ ${head}${relRange(input, grp)}`;
    lines.push({ fails: first.fails, line });
  }
  return lines;
}

/** The tail cases counted for the summary's correctness line, only when any is wrong or erred. */
export function tailCountsView(input: ReportInput): TailCountsView | undefined {
  const failed = tailProblems(input.results, input.config).length;
  if (!failed) return undefined;
  return { verified: (input.results.tails ?? []).length, failed };
}
