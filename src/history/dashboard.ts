// The trend dashboard: one static HTML page built from history records, with uPlot (vendor/uplot,
// MIT) and the data inlined, so it opens from a file or GitHub Pages with no server and no
// network. Per GPU SKU and kernel, for a case chosen from a list (the kernel's heaviest by
// default): each variant's time over runs, its throughput, and its ratio to the kernel's reference
// (machine drift moves a variant and its reference together, code drift moves the ratio);
// regressions and correctness failures marked; a click on a point names its commit and run. The
// newest run of each SKU as a table.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dashboardData } from './dashboard-data.js';
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
  options: { title?: string; repository?: string; now?: Date; vendorDir?: string } = {},
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
<header><h1>${escapeHtml(data.title)}</h1><p id="meta"></p></header>
<main id="app"></main>
<aside id="detail" hidden></aside>
<script>${js.replace(/<\/script/gi, '<\\/script')}</script>
<script id="data" type="application/json">${scriptJson(data)}</script>
<script>${PAGE_JS}</script>
</body>
</html>
`;
}

const PAGE_CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5em 3em; color: #1b1f23; }
h1 { font-size: 1.5em; margin: .6em 0 .2em; }
h2 { border-bottom: 2px solid #d0d7de; padding-bottom: .2em; margin-top: 1.6em; }
h3 { margin: 1.2em 0 .3em; }
#meta { color: #57606a; margin: 0; }
.kernel { margin-bottom: 1.5em; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
.chart { border: 1px solid #d0d7de; border-radius: 6px; padding: .4em; }
.chart .title { font-weight: 600; margin: 0 0 .2em .3em; }
select { font: inherit; max-width: 44em; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid #d0d7de; padding: 2px 6px; text-align: right; }
td:nth-child(-n+3), th { text-align: left; }
tr.bad td { background: #ffebe9; }
tr.slow td { background: #fff8c5; }
#detail { position: fixed; right: 1em; bottom: 1em; max-width: 30em; background: #fff;
  border: 1px solid #57606a; border-radius: 6px; padding: .6em .8em; box-shadow: 0 2px 8px #0003; }
.legend-note { color: #57606a; font-size: 12px; }
.u-legend { font-size: 11px; }
.u-legend .u-marker { width: .8em; height: .8em; }
`;

// The drawing code runs in the browser; plain JavaScript, no modules.
const PAGE_JS = String.raw`
(function () {
  var t0 = performance.now();
  var data = JSON.parse(document.getElementById('data').textContent);
  var app = document.getElementById('app');
  var palette = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bf8700', '#0598bc', '#bc4c00',
    '#6e7781', '#e85aad', '#2da44e', '#953800', '#1f883d'];
  var charts = [];
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function link(href, text) {
    var a = el('a', { href: href, target: '_blank', rel: 'noopener' }, text);
    return a;
  }
  document.getElementById('meta').textContent = 'Built ' + data.generated.replace('T', ' ').slice(0, 16) +
    ' UTC from ' + data.skus.map(function (s) { return s.runs.length + ' runs on ' + s.sku; }).join(', ') +
    '. Click a point for its commit and run.';
  function commitUrl(run) {
    if (!run.commit) return null;
    if (data.repository) return 'https://github.com/' + data.repository + '/commit/' + run.commit;
    var m = /^(https:\/\/[^/]+\/[^/]+\/[^/]+)\/actions\//.exec(run.artifact || '');
    return m ? m[1] + '/commit/' + run.commit : null;
  }
  function showDetail(sku, kernel, caseId, idx, chartName) {
    var run = sku.runs[idx];
    var box = document.getElementById('detail');
    box.hidden = false;
    box.textContent = '';
    var close = el('button', { style: 'float:right' }, '×');
    close.onclick = function () { box.hidden = true; };
    box.appendChild(close);
    box.appendChild(el('strong', {}, sku.sku + ' · ' + kernel.name + ' · ' + new Date(run.t * 1000).toISOString().slice(0, 16).replace('T', ' ')));
    box.appendChild(el('div', {}, caseId));
    var p = el('div');
    var c = commitUrl(run);
    p.appendChild(document.createTextNode((run.event || 'run') + ' on ' + run.branch + ', commit '));
    if (c) p.appendChild(link(c, run.commit.slice(0, 12))); else p.appendChild(document.createTextNode((run.commit || '?').slice(0, 12)));
    if (run.artifact) { p.appendChild(document.createTextNode(', ')); p.appendChild(link(run.artifact, 'run ' + (run.id || ''))); }
    if (run.verdict) p.appendChild(document.createTextNode(', gate ' + run.verdict));
    box.appendChild(p);
    var ci = kernel.cases.indexOf(caseId);
    var rows = el('table');
    rows.appendChild(trOf(['variant', 'ms', kernel.unit, 'ratio', 'mark'], true));
    kernel.variants.forEach(function (v) {
      var s = (kernel.series[v] || {})[ci];
      if (!s || s.ms[idx] === null) return;
      rows.appendChild(trOf([v, s.ms[idx], s.tp[idx], s.rr[idx], ['', 'SLOWER', 'FASTER', 'WRONG RESULT'][s.f[idx]]]));
    });
    box.appendChild(rows);
  }
  function trOf(cells, head) {
    var tr = el('tr');
    cells.forEach(function (c) { tr.appendChild(el(head ? 'th' : 'td', {}, c === null || c === undefined ? '' : String(c))); });
    return tr;
  }
  // One chart: x the runs' times, a line per variant, and the marks as points on top.
  function chart(parent, title, sku, kernel, ci, field, opts) {
    var box = el('div', { class: 'chart' });
    box.appendChild(el('div', { class: 'title' }, title));
    var xs = sku.runs.map(function (r) { return r.t; });
    var series = [{}];
    var columns = [xs];
    var points = 0;
    kernel.variants.forEach(function (v, i) {
      var s = (kernel.series[v] || {})[ci];
      if (!s || (field === 'rr' && v === kernel.reference)) return;
      var ys = s[field];
      if (!ys.some(function (y) { return y !== null; })) return;
      points += ys.filter(function (y) { return y !== null; }).length;
      columns.push(ys);
      series.push({ label: v, stroke: palette[i % palette.length], width: 1.5, spanGaps: false,
        points: { show: xs.length < 60, size: 4 } });
    });
    var marks = [[1, 'regression (SLOWER)', '#d1242f'], [3, 'wrong result', '#8250df']];
    marks.forEach(function (m) {
      var ys = xs.map(function (_, j) {
        var worst = null;
        kernel.variants.forEach(function (v) {
          var s = (kernel.series[v] || {})[ci];
          if (s && s.f[j] === m[0] && s[field][j] !== null && (field !== 'rr' || v !== kernel.reference)) worst = s[field][j];
        });
        return worst;
      });
      if (!ys.some(function (y) { return y !== null; })) return;
      columns.push(ys);
      series.push({ label: m[1], stroke: m[2], width: 0, paths: function () { return null; },
        points: { show: true, size: 11, width: 2, stroke: m[2], fill: '#fff0' } });
    });
    // A case the reference does not run has no ratio: no chart, rather than an empty one.
    if (points === 0 && field === 'rr') return null;
    parent.appendChild(box);
    if (points === 0) { box.appendChild(el('p', { class: 'legend-note' }, 'no data')); return null; }
    var width = Math.max(320, Math.min(560, Math.floor((app.clientWidth - 100) / 3)));
    var u = new uPlot({
      width: width, height: 240,
      scales: { x: { time: true }, y: { distr: opts.log ? 3 : 1 } },
      axes: [{}, { label: opts.label, size: 60 }],
      series: series,
      legend: { live: true },
      cursor: { points: { size: 6 } },
    }, columns, box);
    u.over.addEventListener('click', function () {
      if (u.cursor.idx !== null && u.cursor.idx !== undefined) showDetail(sku, kernel, kernel.cases[ci], u.cursor.idx, title);
    });
    u.kgPoints = points;
    charts.push(u);
    return u;
  }
  function drawKernel(holder, sku, kernel, ci) {
    charts = charts.filter(function (u) { if (holder.contains(u.root)) { u.destroy(); return false; } return true; });
    holder.textContent = '';
    chart(holder, 'time (median ms)', sku, kernel, ci, 'ms', { log: true, label: 'ms' });
    chart(holder, 'throughput (' + kernel.unit + ')', sku, kernel, ci, 'tp', { label: kernel.unit });
    if (kernel.reference) chart(holder, 'ratio to ' + kernel.reference + ' (time ÷ its time)', sku, kernel, ci, 'rr', { label: '×' });
  }
  data.skus.forEach(function (sku) {
    app.appendChild(el('h2', {}, sku.sku + ' (' + sku.gpu + '), ' + sku.runs.length + ' runs'));
    sku.kernels.forEach(function (kernel) {
      var section = el('section', { class: 'kernel' });
      section.appendChild(el('h3', {}, kernel.name + (kernel.reference ? ' — reference ' + kernel.reference : '')));
      var select = el('select', { 'aria-label': 'case' });
      kernel.cases.forEach(function (c, i) { select.appendChild(el('option', { value: String(i) }, c)); });
      select.value = String(kernel.headline);
      section.appendChild(select);
      var holder = el('div', { class: 'charts' });
      section.appendChild(holder);
      app.appendChild(section);
      select.onchange = function () { drawKernel(holder, sku, kernel, Number(select.value)); };
      drawKernel(holder, sku, kernel, kernel.headline);
    });
    var details = el('details');
    details.appendChild(el('summary', {}, 'Newest run on ' + sku.sku + ': every case'));
    var table = el('table');
    table.appendChild(trOf(['kernel', 'variant', 'case', 'median ms', '−%', '+%', 'throughput', 'unit', 'ratio to reference', 'verdict', 'correct'], true));
    sku.newest.forEach(function (row) {
      var tr = trOf(row);
      if (row[10] !== 'PASS' && row[10] !== 'ok' && row[10] !== 'skipped') tr.className = 'bad';
      else if (row[9] === 'SLOWER') tr.className = 'slow';
      table.appendChild(tr);
    });
    details.appendChild(table);
    app.appendChild(details);
  });
  // What a headless browser checks: every chart has data and painted pixels (uPlot paints in a
  // microtask after it is made, so this runs after them).
  setTimeout(function () {
  var drawn = 0;
  charts.forEach(function (u) {
    var ctx = u.ctx, w = u.ctx.canvas.width, h = u.ctx.canvas.height;
    var px = ctx.getImageData(0, 0, w, h).data, ink = 0;
    for (var i = 3; i < px.length; i += 16) if (px[i] !== 0) ink++;
    if (ink > 50 && u.kgPoints > 0) drawn++;
  });
  document.body.setAttribute('data-charts', String(charts.length));
  document.body.setAttribute('data-drawn', String(drawn));
  document.body.setAttribute('data-render-ms', String(Math.round(performance.now() - t0)));
  }, 0);
})();
`;
