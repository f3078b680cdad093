// The findings of a pull request's own manifest changes (issue 30): "this pull request loosens
// attention's fp16 rel_l2 from 2e-3 to 5e-2". The harness verified the head with the head's
// tolerances, so a loosened one is what let its cases pass; a reviewer reads it here. Kernel
// names, dtypes and case values come from the manifests: escaped.
import { loosens, type ManifestChange } from '../config/index.js';
import { clip, esc, plural } from './cells.js';
import { COMMENT_NOTE_CHARS, type ReportInput } from './types.js';

/** A tolerance as written in a manifest: 0.002 → 2e-3, 0.0125 → 1.25e-2, 1 → 1. */
export function toleranceText(value: number): string {
  const [mantissa = '0', exponent = '0'] = value.toExponential().split('e');
  return Number(exponent) === 0 ? mantissa : `${mantissa}e${Number(exponent)}`;
}

const SHOWN = 3;

function listed(items: string[]): string {
  const shown = items.slice(0, SHOWN).map((x) => esc(clip(x, COMMENT_NOTE_CHARS)));
  const more = items.length > SHOWN ? `, and ${items.length - SHOWN} more` : '';
  return `${shown.join('; ')}${more}`;
}

function addedRemoved(added: string[], removed: string[], noun: string): string {
  const parts: string[] = [];
  if (added.length) parts.push(`adds ${plural(added.length, noun)} (${listed(added)})`);
  if (removed.length) parts.push(`removes ${plural(removed.length, noun)} (${listed(removed)})`);
  return parts.join(' and ');
}

/** One change as the finding words it, after "this pull request ". */
function changeText(c: ManifestChange): string {
  const k = esc(c.kernel);
  switch (c.kind) {
    case 'kernel-added':
      return `adds the kernel ${k}`;
    case 'kernel-removed':
      return `removes the kernel ${k}`;
    case 'bound':
      return `${loosens(c) ? 'loosens' : 'tightens'} ${k}'s ${esc(c.dtype)} ${esc(c.field)} from ${toleranceText(c.from)} to ${toleranceText(c.to)}`;
    case 'max-abs-added':
      return `tightens ${k}'s ${esc(c.dtype)} tolerance with a max\\_abs of ${toleranceText(c.value)}`;
    case 'max-abs-dropped':
      return `loosens ${k}'s ${esc(c.dtype)} tolerance: drops its max\\_abs of ${toleranceText(c.value)}`;
    case 'tolerance-added':
      return `adds a ${esc(c.dtype)} tolerance to ${k} (rel\\_l2 ${toleranceText(c.relL2)})`;
    case 'tolerance-removed':
      return `removes ${k}'s ${esc(c.dtype)} tolerance (rel\\_l2 ${toleranceText(c.relL2)})`;
    case 'groups':
      return `changes ${k}'s ${esc(c.field)}: ${addedRemoved(c.added, c.removed, 'group')}`;
    case 'variants':
      return `changes ${k}'s variants: ${addedRemoved(c.added, c.removed, 'variant')}`;
  }
}

/**
 * One finding per manifest change, those that loosen a tolerance first with ⚠️; or why the base
 * revision's could not be read.
 */
export function manifestFindingLines(input: ReportInput): string[] {
  const m = input.manifests;
  if (m === undefined) return [];
  if ('unreadable' in m) {
    const { root, error } = m.unreadable;
    return [
      `ℹ️ the base revision's configuration (${esc(root)}) could not be read, so no change to a tolerance or a manifest is named: ${esc(clip(error, 2 * COMMENT_NOTE_CHARS))}`,
    ];
  }
  // Loosened tolerances first: they are what a reviewer must not miss.
  const ordered = [...m.changes.filter(loosens), ...m.changes.filter((c) => !loosens(c))];
  return ordered.map((c) => `${loosens(c) ? '⚠️' : '📝'} this pull request ${changeText(c)}`);
}
