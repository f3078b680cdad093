// Screenshots of the first screen of kernelgate's rendered reports, as a reader sees them on
// GitHub: docs/examples/*.md rendered by a GitHub-flavoured Markdown renderer (marked, gfm) with
// GitHub's own stylesheet (github-markdown-css, light), in a column as wide as a comment's, shot
// by Debian's headless Chromium. Mermaid blocks stay code here (GitHub draws them).
// Usage: node scripts/screenshot-reports.mjs   (writes docs/examples/<name>.png)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marked } from 'marked';

const ROOT = join(import.meta.dirname, '..');
const EXAMPLES = join(ROOT, 'docs/examples');
const PAGES = [
  'pr-comment-aa-h100',
  'pr-comment-slow2-h100',
  'pr-comment-broken',
  'nightly-report-trends',
];
const css = readFileSync(
  join(ROOT, 'node_modules/github-markdown-css/github-markdown-light.css'),
  'utf8',
);
const browser = ['chromium', 'chromium-browser'].find((b) => {
  try {
    execFileSync('which', [b], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});
if (!browser)
  throw new Error('scripts/screenshot-reports.mjs needs chromium (apt-get install chromium)');

const dir = mkdtempSync(join(tmpdir(), 'kg-shots-'));
for (const name of PAGES) {
  // The examples start with a comment line naming their source; GitHub does not show it.
  const markdown = readFileSync(join(EXAMPLES, `${name}.md`), 'utf8');
  const body = marked.parse(markdown, { gfm: true });
  const page = `<!doctype html><meta charset="utf-8"><style>${css}
body { margin: 0; background: #fff; }
.markdown-body { box-sizing: border-box; width: 780px; margin: 16px; padding: 16px;
  border: 1px solid #d0d7de; border-radius: 6px; }</style>
<article class="markdown-body">${body}</article>`;
  const file = join(dir, `${name}.html`);
  writeFileSync(file, page);
  execFileSync(
    browser,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--hide-scrollbars',
      '--proxy-server=127.0.0.1:9',
      '--window-size=814,1000',
      `--screenshot=${join(EXAMPLES, `${name}.png`)}`,
      `file://${file}`,
    ],
    { stdio: 'ignore', timeout: 60_000 },
  );
  console.log(`docs/examples/${name}.png`);
}
