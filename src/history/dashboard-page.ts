// The dashboard page's style and drawing code (plain browser JavaScript, no modules), inlined by
// src/history/dashboard.ts. The view's state (branch, range, view, each kernel's case and
// focused variant) lives in the URL's hash, so a link opens the same view; a drag across a chart
// sets the range to the runs it covers (to the second), written into the hash like the date pickers. What was drawn is
// written into <script id="kg-drawn"> (series, marks, band, the y axis's range per chart) for the headless tests.

export const PAGE_CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5em 3em; color: #1b1f23; }
h1 { font-size: 1.5em; margin: .6em 0 .2em; }
h2 { border-bottom: 2px solid #d0d7de; padding-bottom: .2em; margin-top: 1.6em; }
h3 { margin: 1.2em 0 .3em; }
#meta, .note { color: #57606a; margin: .2em 0; }
#controls { display: flex; flex-wrap: wrap; gap: .4em 1.2em; align-items: center; margin: .6em 0;
  padding: .5em .7em; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; }
.kernel { margin-bottom: 1.5em; }
.picks { display: flex; flex-wrap: wrap; gap: .6em; align-items: center; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
.chart { border: 1px solid #d0d7de; border-radius: 6px; padding: .4em; }
.chart .title { font-weight: 600; margin: 0 0 .2em .3em; max-width: 34em; }
select { font: inherit; max-width: 44em; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid #d0d7de; padding: 2px 6px; text-align: right; }
td:nth-child(-n+3), th { text-align: left; }
tr.bad td { background: #ffebe9; }
tr.slow td { background: #fff8c5; }
#detail { position: fixed; right: 1em; bottom: 1em; max-width: 30em; background: #fff;
  border: 1px solid #57606a; border-radius: 6px; padding: .6em .8em; box-shadow: 0 2px 8px #0003; }
.u-legend { font-size: 11px; }
.u-legend .u-marker { width: .8em; height: .8em; }
`;

export const PAGE_JS = String.raw`
(function () {
  var t0 = performance.now();
  var data = JSON.parse(document.getElementById('data').textContent);
  var app = document.getElementById('app');
  var palette = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bf8700', '#0598bc', '#bc4c00',
    '#6e7781', '#e85aad', '#2da44e', '#953800', '#1f883d'];
  var dashes = [[], [6, 3], [2, 3], [8, 3, 2, 3]];
  var MARKS = [[1, 'SLOWER', 'SLOWER (judged)', '#d1242f'], [2, 'FASTER', 'FASTER (judged)', '#1a7f37'],
    [3, 'WRONG', 'wrong result', '#8250df']];
  var charts = [], drawn = [];
  // The time charts open relative to the first run in range: there a 5 % step is 100 → 105 on an
  // axis of the variants' own moves; on the log scale of their times (22-92 ms for the H100's
  // attention headline) it was 5.9 px of 193 (issue 32). The log scale is the option.
  var state = { branch: 'all', from: '', to: '', view: 'rel', pick: {} };
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function link(href, text) { return el('a', { href: href, target: '_blank', rel: 'noopener' }, text); }
  function day(t) { return new Date(t * 1000).toISOString().slice(0, 10); }
  function stamp(t) { return new Date(t * 1000).toISOString().slice(0, 19); }
  // ---- URL state: #branch=…&from=…&to=…&view=…&case:SKU/kernel=…&focus:SKU/kernel=…
  // from and to are a day (2026-11-21, from the date pickers) or a UTC time to the second
  // (2026-11-21T03:15:07, from a drag across a chart: its first and last run).
  function readHash() {
    var q = new URLSearchParams(location.hash.replace(/^#/, ''));
    state = { branch: q.get('branch') || 'all', from: q.get('from') || '', to: q.get('to') || '',
      view: q.get('view') === 'log' ? 'log' : 'rel', pick: {} };
    q.forEach(function (v, k) {
      var m = /^(case|focus):(.+)$/.exec(k);
      if (m) (state.pick[m[2]] = state.pick[m[2]] || {})[m[1]] = v;
    });
  }
  function hashOf() {
    var q = new URLSearchParams();
    if (state.branch !== 'all') q.set('branch', state.branch);
    if (state.from) q.set('from', state.from);
    if (state.to) q.set('to', state.to);
    if (state.view !== 'rel') q.set('view', state.view);
    Object.keys(state.pick).sort().forEach(function (k) {
      if (state.pick[k].case) q.set('case:' + k, state.pick[k].case);
      if (state.pick[k].focus) q.set('focus:' + k, state.pick[k].focus);
    });
    return '#' + q.toString();
  }
  function writeHash() {
    var h = hashOf();
    if (location.hash !== h) history.replaceState(null, '', h === '#' ? location.pathname : h);
    document.getElementById('permalink').href = h;
  }
  function visible(run) {
    if (state.branch !== 'all' && run.branch !== state.branch) return false;
    var at = stamp(run.t), d = at.slice(0, 10);
    return (!state.from || (state.from.length > 10 ? at : d) >= state.from) &&
      (!state.to || (state.to.length > 10 ? at : d) <= state.to);
  }
  function commitUrl(run) {
    if (!run.commit) return null;
    if (data.repository) return 'https://github.com/' + data.repository + '/commit/' + run.commit;
    var m = /^(https:\/\/[^/]+\/[^/]+\/[^/]+)\/actions\//.exec(run.artifact || '');
    return m ? m[1] + '/commit/' + run.commit : null;
  }
  function trOf(cells, head) {
    var tr = el('tr');
    cells.forEach(function (c) { tr.appendChild(el(head ? 'th' : 'td', {}, c === null || c === undefined ? '' : String(c))); });
    return tr;
  }
  function showDetail(sku, kernel, ci, idx) {
    var run = sku.runs[idx], box = document.getElementById('detail');
    box.hidden = false;
    box.textContent = '';
    var close = el('button', { style: 'float:right' }, '×');
    close.onclick = function () { box.hidden = true; };
    box.appendChild(close);
    box.appendChild(el('strong', {}, sku.sku + ' · ' + kernel.name + ' · ' + new Date(run.t * 1000).toISOString().slice(0, 16).replace('T', ' ')));
    box.appendChild(el('div', {}, kernel.cases[ci]));
    var p = el('div'), c = commitUrl(run);
    p.appendChild(document.createTextNode((run.event || 'run') + ' on ' + run.branch + ', commit '));
    if (c) p.appendChild(link(c, run.commit.slice(0, 12))); else p.appendChild(document.createTextNode((run.commit || '?').slice(0, 12)));
    if (run.artifact) { p.appendChild(document.createTextNode(', ')); p.appendChild(link(run.artifact, 'run ' + (run.id || ''))); }
    if (run.verdict) p.appendChild(document.createTextNode(', gate ' + run.verdict));
    if (run.computed) p.appendChild(document.createTextNode('; verdicts computed by this page (the record carried none)'));
    box.appendChild(p);
    var rows = el('table');
    rows.appendChild(trOf(['variant', 'ms', kernel.units[ci] || 'throughput', 'speedup (×)', 'threshold', 'mark'], true));
    kernel.variants.forEach(function (v) {
      var s = (kernel.series[v] || {})[ci];
      if (!s || s.ms[idx] === null) return;
      rows.appendChild(trOf([v, s.ms[idx], s.tp[idx], s.sp[idx], '±' + s.th + ' %', ['', 'SLOWER', 'FASTER', 'WRONG RESULT'][s.f[idx]]]));
    });
    box.appendChild(rows);
  }
  // The value a chart draws for a series at run j: the field, or in the relative view the time
  // as % of the series' first visible value on the run's branch.
  function valuesOf(sku, s, field, rel, idx) {
    var first = {};
    return idx.map(function (j) {
      var y = s[field][j];
      if (!rel || y === null) return y;
      var b = sku.runs[j].branch;
      if (first[b] === undefined) first[b] = y;
      return Math.round(1000 * y / first[b]) / 10;
    });
  }
  // The ±threshold band around the focused variant's previous level (on each run's branch).
  function bandOf(sku, s, rel, idx) {
    var prev = {}, first = {}, hi = [], lo = [], n = 0;
    idx.forEach(function (j) {
      var b = sku.runs[j].branch, y = s.ms[j], p = prev[b];
      if (y !== null && first[b] === undefined) first[b] = y;
      var k = rel && first[b] ? 100 / first[b] : 1;
      hi.push(p === undefined ? null : p * (1 + s.th / 100) * k);
      lo.push(p === undefined ? null : p * (1 - s.th / 100) * k);
      if (p !== undefined) n++;
      if (y !== null) prev[b] = y;
    });
    return { hi: hi, lo: lo, n: n };
  }
  // One chart: x the visible runs' times, a line per variant and branch, the judged marks, the band.
  function chart(parent, spec, sku, kernel, ci) {
    var idx = [];
    sku.runs.forEach(function (r, j) { if (visible(r)) idx.push(j); });
    var xs = idx.map(function (j) { return sku.runs[j].t; });
    var branches = sku.branches.filter(function (b) { return idx.some(function (j) { return sku.runs[j].branch === b; }); });
    var series = [{}], columns = [xs], info = [], points = 0, bands = [];
    var rel = spec.field === 'ms' && state.view === 'rel';
    var skipRef = spec.field === 'sp', vals = {};
    kernel.variants.forEach(function (v, i) {
      var s = (kernel.series[v] || {})[ci];
      if (!s || (skipRef && v === kernel.reference)) return;
      var ys = vals[v] = valuesOf(sku, s, spec.field, rel, idx);
      branches.forEach(function (b, bi) {
        var line = ys.map(function (y, n) { return sku.runs[idx[n]].branch === b ? y : null; });
        var count = line.filter(function (y) { return y !== null; }).length;
        if (count === 0) return;
        points += count;
        var label = branches.length > 1 ? v + ' · ' + b : v;
        columns.push(line);
        info.push({ label: label, variant: v, branch: b, points: count, y: xs.length <= 100 ? line : undefined });
        series.push({ label: label, stroke: palette[i % palette.length], width: 1.5, dash: dashes[bi % dashes.length],
          spanGaps: true, points: { show: xs.length < 60, size: 4 } });
      });
    });
    var marks = {};
    MARKS.forEach(function (m) {
      var at = [];
      var ys = idx.map(function (j, n) {
        var worst = null;
        kernel.variants.forEach(function (v) {
          var s = (kernel.series[v] || {})[ci];
          if (!s || !vals[v] || s.f[j] !== m[0]) return;
          // a wrong result has no time: its mark sits at the variant's level before it
          for (var p = n; p >= 0 && worst === null; p--) { if (vals[v][p] !== null) worst = vals[v][p]; if (m[0] !== 3) break; }
        });
        if (worst !== null) at.push(j);
        return worst;
      });
      marks[m[1]] = at;
      if (at.length === 0) return;
      columns.push(ys);
      series.push({ label: m[2], stroke: m[3], width: 0, paths: function () { return null; },
        points: { show: true, size: 11, width: 2, stroke: m[3], fill: '#fff0' } });
    });
    var band = null, focus = focusOf(sku, kernel);
    var fs = spec.field === 'ms' && focus ? (kernel.series[focus] || {})[ci] : null;
    if (fs && fs.th > 0 && points > 0) {
      var bd = bandOf(sku, fs, rel, idx);
      columns.push(bd.hi, bd.lo);
      var style = { stroke: '#0969da66', width: 1, dash: [3, 3], spanGaps: false, points: { show: false } };
      series.push(Object.assign({ label: '+' + fs.th + ' % of ' + focus + "'s previous run" }, style),
        Object.assign({ label: '−' + fs.th + ' %' }, style));
      bands.push({ series: [series.length - 2, series.length - 1], fill: '#0969da1c' });
      band = { variant: focus, pct: fs.th, points: bd.n };
    }
    if (points === 0 && spec.field === 'sp') return null;
    var box = el('div', { class: 'chart', 'data-chart': spec.field });
    box.appendChild(el('div', { class: 'title' }, spec.title));
    parent.appendChild(box);
    var log = !!spec.log && !rel;
    var record = { sku: sku.sku, kernel: kernel.name, case: kernel.cases[ci], chart: spec.field === 'ms' && rel ? 'rel' : spec.field,
      title: spec.title, axis: spec.label, log: log, runs: idx, series: info, marks: marks, band: band };
    drawn.push(record);
    if (points === 0) { box.appendChild(el('p', { class: 'note' }, 'no data in this range')); return null; }
    var width = Math.max(320, Math.min(560, Math.floor((app.clientWidth - 100) / 3)));
    var u = new uPlot({
      width: width, height: 260, bands: bands,
      scales: { x: { time: true }, y: { distr: log ? 3 : 1 } },
      axes: [{}, { label: rel ? '% of first run' : spec.label, size: 60 }],
      series: series, legend: { live: true },
      cursor: { points: { size: 6 }, drag: { x: true, y: false, setScale: false } },
      hooks: { setSelect: [function (u) { zoomTo(u, sku, idx); }] },
    }, columns, box);
    u.over.addEventListener('click', function () {
      if (u.cursor.idx !== null && u.cursor.idx !== undefined) showDetail(sku, kernel, ci, idx[u.cursor.idx]);
    });
    u.kgPoints = points;
    u.kgRecord = record;
    charts.push(u);
    return u;
  }
  // A drag across a chart: the range becomes the visible runs of this SKU it covers, for every
  // chart (and the link); a drag that covers no run changes nothing.
  function zoomTo(u, sku, idx) {
    var left = u.select.left, width = u.select.width;
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    if (width < 2) return;
    var lo = u.posToVal(left, 'x'), hi = u.posToVal(left + width, 'x');
    var inside = idx.filter(function (j) { return sku.runs[j].t >= lo && sku.runs[j].t <= hi; });
    if (inside.length === 0) return;
    state.from = stamp(sku.runs[inside[0]].t);
    state.to = stamp(sku.runs[inside[inside.length - 1]].t);
    setTimeout(redraw, 0); // after uPlot's own mouseup handling, not inside it
  }
  // The variant whose band is drawn: the one the link names, else the first that is not the reference.
  function focusOf(sku, kernel) {
    var f = (state.pick[sku.sku + '/' + kernel.name] || {}).focus;
    if (f && kernel.series[f]) return f;
    return kernel.variants.filter(function (v) { return v !== kernel.reference; })[0] || kernel.variants[0];
  }
  function drawKernel(holder, sku, kernel, ci) {
    charts = charts.filter(function (u) { if (holder.contains(u.root)) { u.destroy(); return false; } return true; });
    drawn = drawn.filter(function (d) { return d.sku !== sku.sku || d.kernel !== kernel.name; });
    holder.textContent = '';
    var rel = state.view === 'rel';
    chart(holder, rel ? { field: 'ms', title: 'time relative to the first run in range (%; 100 = that run, higher is slower)', label: '%' }
      : { field: 'ms', title: 'time (median ms, log scale; lower is faster)', label: 'ms', log: true }, sku, kernel, ci);
    if (kernel.units[ci]) chart(holder, { field: 'tp', title: 'throughput (' + kernel.units[ci] + '; higher is faster)', label: kernel.units[ci] }, sku, kernel, ci);
    if (kernel.reference) chart(holder, { field: 'sp', title: 'speedup over ' + kernel.reference + ' (its time ÷ this time; > 1 is faster)', label: '×' }, sku, kernel, ci);
  }
  function selectOf(label, options, value, onchange) {
    var s = el('select', { 'aria-label': label });
    options.forEach(function (o) { s.appendChild(el('option', { value: o[0] }, o[1])); });
    s.value = value;
    s.onchange = function () { onchange(s.value); };
    return s;
  }
  function drawSku(sku) {
    app.appendChild(el('h2', {}, sku.sku + ' (' + sku.gpu + '), ' + sku.runs.length + ' runs on ' + sku.branches.length + ' branch' + (sku.branches.length > 1 ? 'es' : '')));
    sku.kernels.forEach(function (kernel) {
      var key = sku.sku + '/' + kernel.name, pick = state.pick[key] = state.pick[key] || {};
      var ci = kernel.cases.indexOf(pick.case);
      if (ci < 0) { ci = kernel.headline; delete pick.case; }
      if (pick.focus && !kernel.series[pick.focus]) delete pick.focus;
      var section = el('section', { class: 'kernel', id: key });
      section.appendChild(el('h3', {}, kernel.name + (kernel.reference ? ' — speedups over ' + kernel.reference + ' (' + (kernel.referenceFrom === 'kernel.yml' ? "kernel.yml's reference" : 'as the records name it') + ')' : '')));
      var picks = el('div', { class: 'picks' }), holder = el('div', { class: 'charts' });
      picks.appendChild(selectOf('case', kernel.cases.map(function (c, i) { return [c, c + (i === kernel.headline ? ' (headline)' : '')]; }), kernel.cases[ci], function (v) {
        pick.case = v; writeHash(); drawKernel(holder, sku, kernel, kernel.cases.indexOf(v)); report();
      }));
      picks.appendChild(el('span', { class: 'note' }, 'band:'));
      picks.appendChild(selectOf('band variant', kernel.variants.map(function (v) { return [v, v]; }), focusOf(sku, kernel), function (v) {
        pick.focus = v; writeHash(); drawKernel(holder, sku, kernel, ci); report();
      }));
      section.appendChild(picks);
      section.appendChild(holder);
      app.appendChild(section);
      drawKernel(holder, sku, kernel, ci);
    });
    var details = el('details');
    details.appendChild(el('summary', {}, 'Newest run on ' + sku.sku + ' (' + sku.newestBranch + '): every case'));
    var table = el('table');
    table.appendChild(trOf(['kernel', 'variant', 'case', 'median ms', '−%', '+%', 'throughput', 'unit', 'speedup over the reference (×, > 1 faster)', 'verdict', 'correct'], true));
    sku.newest.forEach(function (row) {
      var tr = trOf(row);
      if (row[10] !== 'PASS' && row[10] !== 'ok' && row[10] !== 'skipped') tr.className = 'bad';
      else if (row[9] === 'SLOWER') tr.className = 'slow';
      table.appendChild(tr);
    });
    details.appendChild(table);
    app.appendChild(details);
  }
  function controls() {
    var box = document.getElementById('controls');
    box.textContent = '';
    var counts = {};
    data.skus.forEach(function (s) { s.runs.forEach(function (r) { counts[r.branch] = (counts[r.branch] || 0) + 1; }); });
    var branches = Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a] || (a < b ? -1 : 1); });
    if (state.branch !== 'all' && !counts[state.branch]) state.branch = 'all';
    box.appendChild(el('label', {}, 'branch '));
    box.appendChild(selectOf('branch', [['all', 'every branch, a line each']].concat(branches.map(function (b) { return [b, b + ' (' + counts[b] + ' runs)']; })), state.branch, function (v) { state.branch = v; redraw(); }));
    ['from', 'to'].forEach(function (name) {
      var input = el('input', { type: 'date', 'aria-label': name, value: state[name].slice(0, 10) });
      input.onchange = function () { state[name] = input.value; redraw(); };
      box.appendChild(el('label', {}, name + ' '));
      box.appendChild(input);
    });
    if (state.from || state.to) {
      var all = el('button', { id: 'all-runs', title: 'the range is ' + (state.from || '…') + ' to ' + (state.to || '…') }, 'all runs');
      all.onclick = function () { state.from = ''; state.to = ''; redraw(); };
      box.appendChild(all);
    }
    box.appendChild(el('label', {}, 'time '));
    box.appendChild(selectOf('view', [['rel', 'relative to the first run in range'], ['log', 'median ms, log scale']], state.view, function (v) { state.view = v; redraw(); }));
    box.appendChild(el('a', { id: 'permalink', href: '#' }, 'link to this view'));
  }
  function report() {
    var painted = 0;
    charts.forEach(function (u) {
      var ctx = u.ctx, px = ctx.getImageData(0, 0, ctx.canvas.width, ctx.canvas.height).data, ink = 0;
      for (var i = 3; i < px.length; i += 16) if (px[i] !== 0) ink++;
      if (ink > 50 && u.kgPoints > 0) painted++;
      // the y axis as drawn, for the tests: its range and the plot's height in CSS pixels
      u.kgRecord.y = { min: u.scales.y.min, max: u.scales.y.max, px: u.over.clientHeight };
    });
    document.getElementById('kg-drawn').textContent = JSON.stringify({ hash: hashOf(), state: state, charts: drawn });
    document.body.setAttribute('data-charts', String(charts.length));
    document.body.setAttribute('data-drawn', String(painted));
    document.body.setAttribute('data-render-ms', String(Math.round(performance.now() - t0)));
  }
  function redraw() {
    charts.forEach(function (u) { u.destroy(); });
    charts = []; drawn = [];
    app.textContent = '';
    controls();
    data.skus.forEach(drawSku);
    writeHash();
    // uPlot paints in a microtask after it is made: what was painted is counted after that.
    setTimeout(report, 0);
  }
  var meta = 'Built ' + data.generated.replace('T', ' ').slice(0, 16) + ' UTC from ' +
    data.skus.map(function (s) { return s.runs.length + ' runs on ' + s.sku; }).join(', ') + '. ' +
    (data.configFile ? 'References and thresholds from ' + data.configFile + ' and the kernel manifests, as the report uses them. '
      : 'No kernelgate.yml was read: references as the records name them, no threshold bands. ') +
    'Speedup is the reference’s time ÷ the variant’s time (> 1 is faster), as in the PR comment. ' +
    'Marks are the judged verdicts: SLOWER and FASTER beyond the threshold, wrong results. Click a point for its commit and run; drag across a chart to show only the runs it covers (the link keeps that range).';
  if (data.computedVerdicts) {
    meta += ' ' + data.computedVerdicts + ' run' + (data.computedVerdicts > 1 ? 's' : '') + ' carried no verdicts (imported with history import): ' +
      'their marks were computed here, each case against the previous run of its branch from the two medians’ intervals at the configured thresholds.';
  }
  // Regressions a pull request accepted (the label), and who accepted them: the stored runs say so
  data.skus.forEach(function (s) {
    s.runs.forEach(function (run) {
      var a = run.accepted;
      if (!a) return;
      meta += ' Accepted on ' + s.sku + ', ' + new Date(run.t * 1000).toISOString().slice(0, 16).replace('T', ' ') +
        ' (' + (run.event || 'run') + ' on ' + run.branch + ', commit ' + (run.commit || '?').slice(0, 12) + '): ' +
        a.cases + ' SLOWER case' + (a.cases === 1 ? '' : 's') + ' passed' + (a.by ? ', accepted by @' + a.by : '') +
        ' with the label ' + a.label + (a.pr ? ' on pull request #' + a.pr : '') + '.';
    });
  });
  document.getElementById('meta').textContent = meta;
  readHash();
  window.addEventListener('hashchange', function () { readHash(); redraw(); });
  redraw();
})();
`;
