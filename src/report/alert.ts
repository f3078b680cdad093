// The nightly's alert: one comment naming the worst cases, which notifies (a body edit does not).
import { formatRatioPct } from '../lib/index.js';
import { esc, KIND_WORDS } from './cells.js';
import {
  blockingKinds,
  CHANGE_KINDS,
  changeKind,
  type ChangeKind,
  type Changes,
  isControl,
  outcomeOf,
  worstFirst,
} from './digest.js';
import { outcomeText } from './summary.js';
import type { ReportInput } from './types.js';

/** How many cases the nightly's alert names (worst first); the report has the rest. */
const ALERT_CASES = 3;

/**
 * The nightly's alert (see RenderedReport.alert): the title's outcome, then the worst cases it is
 * about by name, each with its change, so the notification alone says where to look.
 */
export function nightlyAlert(input: ReportInput, changes: Changes): { alert?: string } {
  if (input.kind !== 'nightly') return {};
  const outcome = outcomeOf(input.gate, input.comparison.cases);
  if (outcome === 'pass') return {};
  const sha = input.results.run.git_sha;
  const at = sha && /^[0-9a-f]{7,40}$/i.test(sha) ? ` at \`${sha.slice(0, 12)}\`` : '';
  const kinds: ChangeKind[] =
    outcome === 'regression'
      ? ['slower']
      : CHANGE_KINDS.filter((k) => blockingKinds(input.config).has(k));
  const aboveChip = new Set(input.gate.measurementErrors.map((m) => m.key));
  const cases = changes.changed
    .flatMap((v) => v.changed)
    .filter((c) => kinds.includes(changeKind(c, aboveChip) as ChangeKind) && !isControl(c))
    .sort(worstFirst(aboveChip));
  const named = cases.slice(0, ALERT_CASES).map((c) => {
    const kind = changeKind(c, aboveChip) as ChangeKind;
    const how =
      (kind === 'slower' || kind === 'faster') && c.ratio !== undefined
        ? formatRatioPct(c.ratio)
        : KIND_WORDS[kind];
    return `${esc(c.label)} ${how}`;
  });
  const more = cases.length > named.length ? `; and ${cases.length - named.length} more` : '';
  const which = named.length
    ? ` ${cases.length === 1 ? 'Case' : 'Worst'}: ${named.join('; ')}${more}.`
    : '';
  return {
    alert: `kernelgate nightly${at}: ${outcomeText(input, changes)}.${which} The issue's report has the cases.`,
  };
}
