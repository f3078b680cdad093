// Tuning is part of the result: a kernel whose host-side tuner picks a configuration per case
// (a Triton tiling) runs different code when two runs pick differently. On the H100 all eight
// large `triton_fa2` cases chose at least two tilings over 13 runs of identical code, a worse one
// costing +0.8 … +5.9 % (docs/notes/nightly.md). Such a move is a re-tune, reported with both
// configurations, not a regression of the code.
import { formatRatioPct } from '../lib/index.js';
import type { CaseResult } from '../results/index.js';
import type { CaseComparison } from './verdicts.js';

type Tuning = NonNullable<CaseResult['tuning']>;

/** A configuration as the report names it: its JSON, compact (`[128,64,4,3]`). */
export function tuningText(config: Tuning['config']): string {
  return typeof config === 'string' ? config : JSON.stringify(config);
}

/** What the tuner's own table says the configuration took, where this process timed it. */
function timedMs(table: Tuning | undefined, config: string): number | undefined {
  return table?.candidates_ms?.find((c) => tuningText(c.config) === config)?.ms;
}

function retuneOf(
  before: Tuning,
  after: Tuning,
  against: 'stored' | 'arms',
): NonNullable<CaseComparison['retune']> | undefined {
  const from = tuningText(before.config);
  const to = tuningText(after.config);
  if (from === to) return undefined;
  // Either side's tuner may have timed both configurations in its own table.
  const fromMs = timedMs(after, from) ?? timedMs(before, from);
  const toMs = timedMs(after, to) ?? timedMs(before, to);
  return {
    against,
    from,
    to,
    ...(fromMs !== undefined && toMs !== undefined ? { fromMs, toMs } : {}),
  };
}

const moved = (c: CaseComparison) => c.perf === 'SLOWER' || c.perf === 'FASTER';

/** "[64,64,4,3] → [128,64,4,3] (the tuner timed them at 1.021 ms and 1.034 ms)" */
export function retuneText(r: NonNullable<CaseComparison['retune']>): string {
  const timed =
    r.fromMs !== undefined && r.toMs !== undefined
      ? ` (the tuner timed them at ${r.fromMs.toFixed(3)} ms and ${r.toMs.toFixed(3)} ms)`
      : '';
  return `${r.from} → ${r.to}${timed}`;
}

/**
 * Marks the cases whose tuned configuration differs from what they are compared with.
 *
 * - Judged against a stored run (no pairs): the stored run's choice against this run's. A case
 *   that moved with a different configuration is AMBIGUOUS, named a re-tune with both
 *   configurations: the two runs timed different code paths, and the comparison cannot tell the
 *   code's change from the tuner's.
 * - Paired: the arms share one tuning unless the pull request changed the tuner's source (the tune
 *   cache is keyed on it); then the arms' configurations differ, and that is part of what the
 *   change did: the verdict stands, the note names both. A stored run that chose differently
 *   from both arms is a re-tune since then, reported; the pairs are unaffected.
 *
 * Returns the cases marked.
 */
export function applyTuning(cases: CaseComparison[]): CaseComparison[] {
  const marked: CaseComparison[] = [];
  for (const c of cases) {
    const now = c.current?.tuning;
    if (now === undefined) continue;
    const arm = c.method === 'paired' ? c.current?.paired?.base_tuning : undefined;
    const armMove = arm !== undefined ? retuneOf(arm, now, 'arms') : undefined;
    const stored = c.baseline?.tuning;
    const storedMove =
      stored !== undefined && !armMove ? retuneOf(stored, now, 'stored') : undefined;
    const retune = armMove ?? storedMove;
    if (!retune) continue;
    c.retune = retune;
    marked.push(c);
    if (retune.against === 'arms') {
      c.perfNote = joinNote(
        c.perfNote,
        `the arms launched different tunings (base ${retuneText(retune)}): the change altered the tuner's source, so its choice is part of what it did`,
      );
    } else if (c.method !== 'paired' && moved(c)) {
      c.perfNote = `was ${c.perf} ${formatRatioPct(c.ratio)}, but the tuner chose differently than in the stored run (${retuneText(retune)}): a re-tune, not a change of the code`;
      c.perf = 'AMBIGUOUS';
    } else {
      c.perfNote = joinNote(
        c.perfNote,
        `re-tuned since the stored run (${retuneText(retune)})${c.method === 'paired' ? '; both arms launched the new tuning' : ''}`,
      );
    }
  }
  return marked;
}

function joinNote(note: string | undefined, more: string): string {
  return note ? `${note}; ${more}` : more;
}
