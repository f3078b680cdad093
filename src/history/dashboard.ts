// The trend dashboard: one static HTML page built from history records, with uPlot (vendor/uplot,
// MIT) and the data inlined, so it opens from a file or GitHub Pages with no server and no
// network. Per GPU SKU and kernel, for a case chosen from a list (the kernel's heaviest by
// default): each variant's time over runs (log scale, or relative to the first run in range), a
// line per branch, its throughput in the case's unit, and its speedup over the kernel's reference
// (kernel.yml's, as the report's); judged SLOWER/FASTER runs and wrong results marked, the
// ±threshold band around a chosen variant's previous level; branch, range, view and each kernel's
// case in the URL. A click on a point names its commit and run. The newest run as a table. The
// page's code: src/history/dashboard-page.ts.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dashboardData, type DashboardOptions } from './dashboard-data.js';
import { PAGE_CSS, PAGE_JS } from './dashboard-page.js';
import type { HistoryRecord } from './record.js';

export const UPLOT_VERSION = '1.6.32';

/** vendor/uplot of this package: from src/history (tests) or dist (the bundle). */
export function uplotDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '..', '.']) {
    const dir = resolve(here, up, 'vendor', 'uplot');
    if (existsSync(join(dir, 'uPlot.iife.min.js'))) return dir;
  }
  throw new Error(
    `vendor/uplot not found above ${here}: the dashboard needs uPlot ${UPLOT_VERSION}`,
  );
}

/** JSON safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The page: uPlot, its licence, the data and the drawing code, in one file. */
export function buildDashboard(
  records: HistoryRecord[],
  options: DashboardOptions & { vendorDir?: string } = {},
): string {
  const data = dashboardData(records, options);
  const dir = options.vendorDir ?? uplotDir();
  const js = readFileSync(join(dir, 'uPlot.iife.min.js'), 'utf8');
  const css = readFileSync(join(dir, 'uPlot.min.css'), 'utf8');
  const licence = readFileSync(join(dir, 'LICENSE'), 'utf8');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.title)}</title>
<!--
The charts are drawn by uPlot ${UPLOT_VERSION} (https://github.com/leeoniya/uPlot), inlined below under its licence:

${escapeHtml(licence)}
-->
<style>${css}</style>
<style>${PAGE_CSS}</style>
</head>
<body>
<header><h1>${escapeHtml(data.title)}</h1><p id="meta"></p><form id="controls"></form></header>
<main id="app"></main>
<aside id="detail" hidden></aside>
<script>${js.replace(/<\/script/gi, '<\\/script')}</script>
<script id="data" type="application/json">${scriptJson(data)}</script>
<script id="kg-drawn" type="application/json"></script>
<script>${PAGE_JS}</script>
</body>
</html>
`;
}
