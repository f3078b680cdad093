// What each format gives, as one Markdown table (`kernelgate adapt --formats`): the list's own
// words, so the table is never behind the list.
import type { CommandEntry, FileAdapter } from './types.js';

/** A cell's text with its pipes escaped, so a note cannot split a row. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** One row per format: its name, tool and how to produce its output, samples, work, correctness, paired. */
export function formatsTable(formats: readonly (FileAdapter | CommandEntry)[]): string {
  const rows = formats.map((f) => {
    const { notes } = f.capabilities;
    const paired = f.capabilities.paired ? (notes.paired ?? 'yes') : 'no';
    return [
      `\`${f.format}\``,
      `${f.title}: ${f.produce}`,
      notes.samples,
      notes.work,
      notes.correctness,
      paired,
    ].map(cell);
  });
  return [
    '| format | tool, how to produce its output | samples | work | correctness | paired A/B |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ]
    .map((line) => `${line}\n`)
    .join('');
}
