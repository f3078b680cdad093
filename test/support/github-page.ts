// kernelgate's Markdown laid out as GitHub lays it out, for the browser tests and the screenshots
// in docs/examples/: GitHub-flavoured Markdown (marked, gfm; raw HTML such as <details> passes
// through as GitHub's sanitiser keeps it) in GitHub's own stylesheet (github-markdown-css, light),
// in the column GitHub gives it. Mermaid blocks stay code: GitHub draws them in a frame of its own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { marked } from 'marked';

const ROOT = join(import.meta.dirname, '..', '..');
const CSS = readFileSync(
  join(ROOT, 'node_modules/github-markdown-css/github-markdown-light.css'),
  'utf8',
);

/** The comment's column in a pull request's conversation (the timeline's comment box). */
export const PR_COLUMN_PX = 780;
/** The job summary's column on a workflow run's page, as issue 32 measured it. */
export const SUMMARY_COLUMN_PX = 1012;
/** The window each page is shot in. */
export const PR_WINDOW = { width: 1280, height: 1000 };
export const SUMMARY_WINDOW = { width: SUMMARY_COLUMN_PX + 48, height: 1000 };

const html = (markdown: string) => marked.parse(markdown, { gfm: true, async: false });

const page = (style: string, body: string) => `<!doctype html>
<html><head><meta charset="utf-8"><style>${CSS}
body { margin: 0; background: #fff; font-family: -apple-system, "Segoe UI", "Noto Sans",
  Helvetica, Arial, sans-serif; }
${style}</style></head><body>${body}</body></html>`;

/**
 * A pull request's conversation: the sticky comment in a timeline comment box 780 px wide (its
 * header, a 1 px border, the body's 16 px padding), the avatar to its left and the sidebar to its
 * right, in a 1280 px window.
 */
export function prViewPage(markdown: string, title: string): string {
  return page(
    `.layout { display: flex; gap: 24px; width: 1216px; margin: 0 auto; padding: 16px 32px; }
.avatar { width: 40px; height: 40px; border-radius: 50%; background: #d0d7de; flex: none; }
.timeline { display: flex; gap: 16px; }
.comment { width: ${PR_COLUMN_PX}px; box-sizing: border-box; border: 1px solid #d0d7de;
  border-radius: 6px; flex: none; }
.comment-header { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px;
  font-size: 14px; color: #59636e; border-radius: 6px 6px 0 0; }
.comment .markdown-body { padding: 16px; }
.sidebar { width: 296px; flex: none; font-size: 12px; color: #59636e; }
.sidebar h4 { border-bottom: 1px solid #d0d7de; padding-bottom: 8px; margin: 0 0 8px; }
h1.pr-title { font-size: 32px; font-weight: 400; margin: 0 32px; padding: 16px 0 8px;
  width: 1216px; margin: 0 auto; }`,
    `<h1 class="pr-title">${title} <span style="color:#59636e">#7</span></h1>
<div class="layout"><div class="timeline"><div class="avatar"></div>
<div class="comment" id="comment"><div class="comment-header"><b>github-actions</b> bot commented</div>
<article class="markdown-body">${html(markdown)}</article></div></div>
<div class="sidebar"><h4>Reviewers</h4><p>No reviews</p><h4>Labels</h4><p>None yet</p></div></div>`,
  );
}

/** A job summary: the report in a 1012 px column with the summary box's border and padding. */
export function summaryPage(markdown: string): string {
  return page(
    `.summary { box-sizing: border-box; width: ${SUMMARY_COLUMN_PX}px; margin: 16px 24px;
  border: 1px solid #d0d7de; border-radius: 6px; }
.summary h2.job { font-size: 14px; margin: 0; padding: 12px 16px; border-bottom: 1px solid #d0d7de; }
.summary .markdown-body { padding: 16px 24px; }`,
    `<div class="summary" id="summary"><h2 class="job">kernelgate summary</h2>
<article class="markdown-body">${html(markdown)}</article></div>`,
  );
}
