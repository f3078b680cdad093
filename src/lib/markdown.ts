// Escaping for untrusted text on its way into GitHub Markdown, and the table/code/chart helpers
// the renderer uses. Kernel names, messages, logs and config values all pass through here.
import { markdownTable } from 'markdown-table';

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

// Characters that make Markdown syntax anywhere in a line (emphasis, links, images, code, tables).
const MARKDOWN_SPECIALS = /[\\`*_[\]|~]/g;
// What makes a block when it starts a line (heading, list, quote, setext underline, numbered list).
const LINE_START = /^(\s*)([#+\-=]|\d+[.)])(?=[\s=-]|$)/;

/**
 * Makes untrusted text inert inline Markdown: HTML is entity-encoded (no tags, no image
 * beacons), Markdown punctuation is backslash-escaped (no links, images, emphasis, code), a
 * block marker at the start is escaped, and `@` gets a zero-width space after it so `@org/team`
 * mentions nobody. Newlines become spaces: an inline value never starts a new block.
 */
export function escapeMarkdown(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  return text
    .replace(/\r\n?|\n/g, ' ')
    .replace(/[&<>"']/g, (ch) => HTML_ENTITIES[ch] ?? ch)
    .replace(MARKDOWN_SPECIALS, (ch) => `\\${ch}`)
    .replace(LINE_START, (_m, space: string, mark: string) =>
      mark.length > 1 ? `${space}${mark.slice(0, -1)}\\${mark.slice(-1)}` : `${space}\\${mark}`,
    )
    .replace(/@/g, '@&#8203;');
}

/**
 * Makes untrusted text inert inside raw HTML (a `<summary>` line, where GitHub reads no Markdown
 * and so shows a backslash escape as it is): HTML specials become entities, the characters of
 * an image or link (`!`, `[`, `]`) and code (`` ` ``) character references, which display as
 * the characters themselves in case a renderer reads Markdown there after all, and `@` gets a
 * zero-width space after it: GitHub finds mentions in HTML text too. Newlines become spaces.
 */
export function escapeHtmlText(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  return text
    .replace(/\r\n?|\n/g, ' ')
    .replace(/[&<>"']/g, (ch) => HTML_ENTITIES[ch] ?? ch)
    .replace(/[!`[\]]/g, (ch) => `&#${ch.charCodeAt(0)};`)
    .replace(/@/g, '@&#8203;');
}

/**
 * Escapes a table cell: inline escaping plus what keeps the row intact. Pipes are already
 * backslash-escaped by escapeMarkdown; newlines become `<br>` so multi-line messages stay in
 * their cell.
 */
export function escapeCell(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  return text
    .split(/\r\n?|\n/)
    .map((line) => escapeMarkdown(line))
    .join('<br>');
}

/** A cell whose content was produced by code (numbers, emoji, our own words): no escaping. */
export interface TrustedCell {
  trusted: string;
}

export type Cell = string | number | TrustedCell;

function cellText(cell: Cell): string {
  if (typeof cell === 'object') return cell.trusted;
  return escapeCell(cell);
}

/** A GitHub table; every plain string cell is escaped, so callers may pass untrusted text. */
export function table(header: string[], rows: Cell[][], align?: ('l' | 'r' | 'c')[]): string {
  const body = [header.map((h) => escapeCell(h)), ...rows.map((row) => row.map(cellText))];
  // Unaligned delimiters keep large tables small (padding would spend the comment's budget).
  return markdownTable(body, { align: align ?? null, alignDelimiters: false });
}

/**
 * A fenced code block around untrusted text: the fence is longer than any backtick run inside,
 * so the text cannot close it early. Inside a fence nothing is rendered, so no other escaping.
 */
export function codeBlock(text: string, lang = ''): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}${lang}\n${text.replace(/\n+$/, '')}\n${fence}`;
}

/** A label inside a Mermaid chart's quoted string: no quotes, brackets, backticks, directives (%%) or newlines. */
export function mermaidLabel(value: unknown): string {
  return String(value ?? '')
    .replace(/[\r\n]+/g, ' ')
    .replace(/["`[\]{}<>;#&%\\]/g, '')
    .slice(0, 60);
}

/** Number formatting that carries its unit in the caller's column header. */
export function fixed(value: number | null | undefined, digits: number): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  return value.toFixed(digits);
}

/** Milliseconds with about four significant digits. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return 'n/a';
  if (ms >= 100) return ms.toFixed(1);
  if (ms >= 10) return ms.toFixed(2);
  if (ms >= 1) return ms.toFixed(3);
  return ms.toPrecision(3);
}

/** Short scientific notation as engineers write error norms: 3.1e-2, 5e-3. */
export function formatSci(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  if (value === 0) return '0';
  const [mantissa = '0', exponent = '0'] = value.toExponential(1).split('e');
  const trimmed = mantissa.replace(/\.0$/, '');
  return Number(exponent) === 0 ? trimmed : `${trimmed}e${Number(exponent)}`;
}

/** A signed percentage such as +8.3 % or −2.0 %, from a ratio (1.083 → +8.3 %). */
export function formatRatioPct(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return 'n/a';
  const pct = (ratio - 1) * 100;
  const sign = pct > 0 ? '+' : pct < 0 ? '−' : '±';
  return `${sign}${Math.abs(pct).toFixed(1)} %`;
}
