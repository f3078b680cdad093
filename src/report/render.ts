// Renders the report (PR comment, nightly report, job summary) from the judged results through
// the mustache templates in templates/: code computes the values, templates hold the wording.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Mustache from 'mustache';
import { escapeMarkdown, packageRoot } from '../lib/index.js';
import { nightlyAlert } from './alert.js';
import {
  COMMENT_MAX_CHARS,
  COMMENT_ROWS_PER_VARIANT,
  type DegradeLevel,
  GITHUB_COMMENT_LIMIT,
  type RenderedReport,
  type ReportInput,
  type ViewOptions,
} from './types.js';
import { buildView, digestOf } from './view.js';

function defaultTemplatesDir(): string {
  return join(packageRoot(), 'templates');
}

interface Templates {
  main: string;
  partials: Record<string, string>;
}

function loadTemplates(dir: string, kind: ReportInput['kind']): Templates {
  const main = readFileSync(
    join(dir, kind === 'pr' ? 'pr-comment.md.mustache' : 'nightly.md.mustache'),
    'utf8',
  );
  const partials: Record<string, string> = {};
  for (const file of readdirSync(join(dir, 'partials'))) {
    const match = /^(.+)\.md\.mustache$/.exec(file);
    if (match?.[1]) partials[match[1]] = readFileSync(join(dir, 'partials', file), 'utf8');
  }
  return { main, partials };
}

function renderView(templates: Templates, view: object): string {
  const text = Mustache.render(templates.main, view, templates.partials, {
    escape: escapeMarkdown,
  });
  return `${text.replace(/\n{3,}/g, '\n\n').trim()}\n`;
}

/**
 * Cuts a rendered report to `maxChars` at a line boundary without leaving a code fence or a
 * <details> open, then appends the template's truncation note.
 */
export function truncateMarkdown(markdown: string, maxChars: number, note: string): string {
  const budget = maxChars - note.length - 64;
  let lines = markdown.slice(0, Math.max(0, budget)).split('\n');
  lines.pop();
  const fenceAt = (l: string) => /^\s*(`{3,}|~{3,})/.test(l);
  const fences = lines.filter(fenceAt).length;
  if (fences % 2 === 1) {
    let lastFence = lines.length - 1;
    while (lastFence >= 0 && !fenceAt(lines[lastFence] as string)) lastFence--;
    lines = lines.slice(0, lastFence);
  }
  const opened = lines.filter((l) => l.includes('<details>')).length;
  const closed = lines.filter((l) => l.includes('</details>')).length;
  const closing = Array.from({ length: Math.max(0, opened - closed) }, () => '\n</details>');
  return `${lines.join('\n')}\n${closing.join('')}\n\n${note}\n`;
}

/**
 * Renders the full report (the job summary and the report file: every case) and the comment: the
 * verdict, what changed, the headline, grouped findings and the changed cases, within GitHub's
 * limit. The comment degrades in steps: fewer changed-case rows and no example messages (1), no
 * changed-case rows (2), then truncated with a note pointing to the full report (3).
 */
export function renderReport(input: ReportInput): RenderedReport {
  const templates = loadTemplates(input.templatesDir ?? defaultTemplatesDir(), input.kind);
  const maxChars = input.commentMaxChars ?? COMMENT_MAX_CHARS;
  const digest = digestOf(input);
  const alert = nightlyAlert(input, digest.changes);
  const full = renderView(
    templates,
    buildView(
      input,
      { full: true, rowsPerVariant: undefined, maxRows: undefined, examples: true, logTails: true },
      digest,
    ),
  );
  const maxRows = input.config.report.maxRows;
  const comment = (rowsPerVariant: number, examples: boolean): ViewOptions => ({
    full: false,
    rowsPerVariant,
    maxRows,
    examples,
    logTails: false,
  });
  const levels: [DegradeLevel, ViewOptions][] = [
    [0, comment(COMMENT_ROWS_PER_VARIANT, true)],
    [1, comment(3, false)],
    [2, comment(0, false)],
  ];
  let last = '';
  for (const [level, opts] of levels) {
    last = renderView(templates, buildView(input, opts, digest));
    if (last.length <= maxChars) return { full, comment: last, commentLevel: level, ...alert };
  }
  const note = Mustache.render(
    templates.partials.truncated ?? '',
    { limit: GITHUB_COMMENT_LIMIT.toLocaleString('en-US') },
    {},
    { escape: escapeMarkdown },
  ).trim();
  return { full, comment: truncateMarkdown(last, maxChars, note), commentLevel: 3, ...alert };
}
