// The trend dashboard: built from thirteen recorded GPU runs (nine on the H200, four on the H100),
// from a history imported with `history import`, and from a thousand simulated runs, opened
// offline in headless Chromium (Debian's `chromium`), which reports how many charts the page made
// and painted, and what each chart drew (its series, marks and band: <script id="kg-drawn">).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { dashboardCommand, recordsFromResults } from '../src/cli/dashboard.js';
import { dashboardData } from '../src/history/dashboard-data.js';
import { buildDashboard, UPLOT_VERSION } from '../src/history/dashboard.js';
import { buildRecord, type HistoryRecord } from '../src/history/record.js';
import { importDirectory } from '../src/history/migrate.js';
import { loadResults, readResultsText, type KernelgateResults } from '../src/results/index.js';
import { seededRandom } from '../src/lib/index.js';
import { bareRemote } from './support/git-remote.js';
import { branchStore } from '../src/history/branch-store.js';
import { actionsExec } from '../src/lib/index.js';
import { Browser, BROWSER, HEADLESS_FLAGS, inBrowser } from './support/chromium.js';
import type { DrawnChart } from './support/dashboard.js';

export const RECORDED = [
  'calibration/run1',
  'calibration/run2',
  'main-1355',
  'calibration/aa-1359',
  'broken',
  'slowed',
  'nightly',
  'push',
  'pr',
  'paired-aa-h100',
  'paired-aa-h100-bursts',
  'paired-aa-h100-hostspin',
  'paired-slow2-h100',
];

const browser = BROWSER;

interface Drawn {
  hash: string;
  state: { branch: string; from: string; to: string; view: string };
  charts: (DrawnChart & { axis: string })[];
}
interface Opened {
  body: Record<string, string>;
  drawn: Drawn;
  /** the page's text as Chromium serialised it */
  dom: string;
}

/**
 * Opens the page (with `hash`, as a shared link would) with no network and returns the <body>
 * attributes the page sets once drawn and what each chart drew.
 */
function open(file: string, hash = ''): Promise<Opened> {
  return new Promise((done, fail) => {
    execFile(
      browser ?? 'chromium',
      [...HEADLESS_FLAGS, '--virtual-time-budget=10000', '--dump-dom', `file://${file}${hash}`],
      { maxBuffer: 256 * 1024 * 1024, timeout: 60_000 },
      (error, stdout) => {
        if (error) return fail(error);
        const body = /<body([^>]*)>/.exec(stdout)?.[1] ?? '';
        const drawn = /<script id="kg-drawn" type="application\/json">([\s\S]*?)<\/script>/.exec(
          stdout,
        );
        done({
          body: Object.fromEntries(
            [...body.matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
          ),
          drawn: JSON.parse(drawn?.[1] || '{"charts":[]}') as Drawn,
          dom: stdout,
        });
      },
    );
  });
}

let cached: HistoryRecord[] | undefined;
/** The recorded runs as records, each judged against the one before it on its SKU and branch (~10 s). */
function recordedRecords(): HistoryRecord[] {
  cached ??= recordsFromResults(
    RECORDED.map((r) => loadResults(`test/fixtures/recorded/${r}/results.json.gz`)),
    loadConfig('.'),
  );
  return cached;
}

const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
const COPY = 'op=copy,dtype=fp32,MiB=1024';

describe('trend dashboard', () => {
  it(
    'lays out each SKU, branch, kernel and case with the judged steps and wrong results marked',
    { timeout: 120_000 },
    () => {
      const data = dashboardData(recordedRecords(), {
        now: new Date('2026-11-23T19:00:00Z'),
        config: loadConfig('.'),
      });
      expect(data.configFile).toBe('kernelgate.yml');
      expect(data.skus.map((s) => [s.sku, s.runs.length, s.branches])).toEqual([
        ['H100-SXM', 4, ['pull/42']],
        ['H200', 9, ['main', 'pull/42']],
      ]);
      const h200 = data.skus[1]!;
      expect(h200.runs.map((r) => r.branch)).toEqual([
        ...['main', 'main', 'main', 'pull/42', 'pull/42', 'pull/42', 'main', 'main', 'pull/42'],
      ]);
      const attention = h200.kernels.find((k) => k.name === 'attention')!;
      // Speedups are against what the report grades against: kernel.yml's tiers.reference.
      expect([attention.reference, attention.referenceFrom]).toEqual([
        'sdpa_default',
        'kernel.yml',
      ]);
      expect(attention.variants[0]).toBe('sdpa_default');
      expect(attention.cases[attention.headline]).toBe(HEADLINE);
      const flags = (run: number, flag: number) =>
        h200.kernels
          .flatMap((k) => Object.values(k.series).flatMap((byCase) => Object.values(byCase)))
          .filter((s) => s.f[run] === flag).length;
      // Each run judged against the previous run of its branch: the planted wrong result
      // ("broken", 5th) marked on its 26 cases; "slowed" (6th) against broken, whose triton_fa2
      // cases were wrong (NEW) but for one; the nightly (7th, main) against main-1355, of the same
      // code: nothing; "pr" (9th, pull/42) against slowed: its 26 cases FASTER.
      expect(h200.runs.map((_, i) => [flags(i, 1), flags(i, 2), flags(i, 3)])).toEqual([
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 26],
        [1, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 26, 0],
      ]);
      const fa2 = attention.series['triton_fa2']![attention.headline]!;
      expect(fa2.ms[7]).toBe(30.59); // push: 30.5847 ms, kept as 30.585, drawn to 4 digits
      // One direction: speedup = the reference's time ÷ the variant's (sdpa_default: 20.3039 ms)
      expect(fa2.sp[7]).toBeCloseTo(20.304 / 30.585, 3);
      expect(fa2.sp[7]).toBeLessThan(1);
      // The case's threshold as the report judges it: compare.noise_pct.H200 says 10 % here
      expect(fa2.th).toBe(10);
      // Each case in its unit: the copy is GB/s (4,145), the matmuls TFLOP/s
      const gemm = h200.kernels.find((k) => k.name === 'gemm')!;
      const copy = gemm.cases.indexOf(COPY);
      expect(gemm.units).toEqual(['TFLOP/s', 'TFLOP/s', 'GB/s']);
      expect(gemm.units[copy]).toBe('GB/s');
      expect(gemm.series['torch_copy']![copy]!.tp[7]).toBe(4145);
      // ... and on the recorded H100 runs too
      const h100gemm = data.skus[0]!.kernels.find((k) => k.name === 'gemm')!;
      expect(h100gemm.units[h100gemm.cases.indexOf(COPY)]).toBe('GB/s');
      expect(h200.newest).toHaveLength(217);
      // the newest run ("pr", the 9th) as the table's rows, the copy in GB/s there too
      expect(h200.newest.find((row) => row[2] === COPY)?.slice(6, 8)).toEqual([
        gemm.series['torch_copy']![copy]!.tp[8],
        'GB/s',
      ]);
    },
  );

  it('is one file: uPlot and its licence inlined, nothing fetched', { timeout: 120_000 }, () => {
    const html = buildDashboard(recordedRecords());
    expect(html).toContain(`uPlot ${UPLOT_VERSION}`);
    expect(html).toContain('Copyright (c) 2022 Leon Sorokin');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|@import|url\(http/i);
  });

  inBrowser(
    'opens offline in headless Chromium and every chart draws (13 recorded runs)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kg-dash-'));
      const file = join(dir, 'dashboard.html');
      const args = ['--out', file, '--repository', 'your-org/kernels'];
      for (const r of RECORDED)
        args.push('--results', `test/fixtures/recorded/${r}/results.json.gz`);
      const err: string[] = [];
      expect(
        await dashboardCommand(args, {
          stdout: () => undefined,
          stderr: (t) => err.push(t),
          cwd: '.',
        }),
      ).toBe(0);
      expect(err.join('')).toMatch(/: 13 runs on H200, H100-SXM \(\d+ KiB\)\n$/);
      // the time charts on the log scale of the times, the view's option (#view=log)
      const { body, drawn, dom } = await open(file, '#view=log');
      // per SKU: gemm time and throughput (cuBLAS is its own reference), attention and bsr_gemm
      // time, throughput and speedup: 8 charts, 16 in all, each with its data painted
      expect(body['data-charts']).toBe('16');
      expect(body['data-drawn']).toBe('16');
      expect(dom).toContain('References and thresholds from kernelgate.yml');
      const chart = (sku: string, kernel: string, kind: string) =>
        drawn.charts.find((c) => c.sku === sku && c.kernel === kernel && c.chart === kind)!;
      // Branches are separate series: main's 5 runs and pull/42's 4, never one line
      const time = chart('H200', 'attention', 'ms');
      expect(time.log).toBe(true);
      const fa2 = time.series.filter((s) => s.variant === 'triton_fa2');
      expect(fa2.map((s) => [s.label, s.points])).toEqual([
        ['triton_fa2 · main', 5],
        ['triton_fa2 · pull/42', 3], // "broken" has no time: a wrong result
      ]);
      expect(
        time.series.every((s) => s.y!.every((y, n) => y === null || time.runs[n] !== undefined)),
      ).toBe(true);
      // The judged marks: pr FASTER than slowed (run 9), broken's wrong result (run 5) drawn at
      // triton_fa2's level before it; the ±10 % band around triton_fa2's previous run
      expect(time.marks).toEqual({ SLOWER: [], FASTER: [8], WRONG: [4] });
      expect(time.band).toEqual({ variant: 'triton_fa2', pct: 10, points: 7 });
      // On the H100: the planted 2 % (paired-slow2-h100, the 4th run) is SLOWER, band ±3 %
      const h100 = chart('H100-SXM', 'attention', 'ms');
      expect(h100.marks.SLOWER).toEqual([3]);
      expect(h100.band).toEqual({ variant: 'triton_fa2', pct: 3, points: 3 });
      // One direction for the ratio, labelled: speedup over kernel.yml's reference
      const speedup = chart('H200', 'attention', 'sp');
      expect(speedup.title).toBe('speedup over sdpa_default (its time ÷ this time; > 1 is faster)');
      expect(speedup.series.some((s) => s.variant === 'sdpa_default')).toBe(false);
      expect(dom).toContain('speedup over the reference (×, &gt; 1 faster)');
      expect(drawn.charts.some((c) => /ratio|time ÷ its time/.test(c.title))).toBe(false);
    },
    120_000,
  );

  inBrowser(
    'keeps the branch, range, view and each case in the link, and opens the same view from it',
    async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'kg-dash-')), 'dashboard.html');
      writeFileSync(file, buildDashboard(recordedRecords(), { config: loadConfig('.') }));
      const q = new URLSearchParams();
      q.set('branch', 'main');
      q.set('to', '2026-11-21');
      // the view, relative to the first run in range, is the default: a link does not name it
      q.set('case:H200/attention', 'dtype=fp16,B=16,H=96,S=4096,D=64,causal=true');
      q.set('focus:H200/attention', 'cuda_fa2');
      q.set('case:H200/gemm', COPY);
      const hash = `#${q.toString()}`;
      const { drawn, dom } = await open(file, hash);
      // The page reads the link's state and writes the same link back (its permalink)
      expect(drawn.hash).toBe(hash);
      expect(dom).toContain(`id="permalink" href="${hash.replace(/&/g, '&amp;')}"`);
      expect(drawn.state).toMatchObject({
        branch: 'main',
        from: '',
        to: '2026-11-21',
        view: 'rel',
      });
      // Only main's runs up to 2026-11-21: the H100's (pull/42, 11-23) are out of range
      for (const c of drawn.charts.filter((c) => c.sku === 'H100-SXM')) {
        expect(c.series).toEqual([]);
      }
      const att = drawn.charts.filter((c) => c.sku === 'H200' && c.kernel === 'attention');
      expect(att.map((c) => [c.case, c.chart])).toEqual([
        ['dtype=fp16,B=16,H=96,S=4096,D=64,causal=true', 'rel'],
        ['dtype=fp16,B=16,H=96,S=4096,D=64,causal=true', 'tp'],
        ['dtype=fp16,B=16,H=96,S=4096,D=64,causal=true', 'sp'],
      ]);
      const rel = att[0]!;
      expect(rel.runs).toEqual([0, 1, 2, 6, 7]);
      expect(rel.series.every((s) => s.branch === 'main' && s.y![0] === 100)).toBe(true);
      expect(rel.band?.variant).toBe('cuda_fa2');
      // The copy in GB/s, not TFLOP/s
      const copyTp = drawn.charts.find(
        (c) => c.sku === 'H200' && c.kernel === 'gemm' && c.chart === 'tp',
      )!;
      expect([copyTp.case, copyTp.title, copyTp.axis]).toEqual([
        COPY,
        'throughput (GB/s; higher is faster)',
        'GB/s',
      ]);
    },
    120_000,
  );

  inBrowser(
    'a drag across a chart keeps its runs as the range, in the link, and the link opens it again',
    async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'kg-dash-')), 'dashboard.html');
      writeFileSync(file, buildDashboard(recordedRecords(), { config: loadConfig('.') }));
      const chrome = Browser.launch();
      try {
        // What the page drew, once it has drawn what its link says
        const drawnNow = `new Promise((done) => { const wait = () => {
          const d = document.getElementById('kg-drawn').textContent;
          if (d && JSON.parse(d).hash === (location.hash || '#')) done(JSON.parse(d));
          else setTimeout(wait, 20); }; wait(); })`;
        const page = await chrome.page(1600, 1500);
        await page.goto(`file://${file}#view=log`);
        const before = await page.evaluate<Drawn>(drawnNow);
        // H200's attention time: its 9 runs (5 on main, 4 on pull/42)
        const at = before.charts.findIndex(
          (c) => c.sku === 'H200' && c.kernel === 'attention' && c.chart === 'ms',
        );
        const all = before.charts[at]!;
        expect(all.runs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
        // Drag across its plot from half-way between runs 1 and 2 to half-way between runs 4
        // and 5 (the x axis spans the first run's time to the last's)
        const box = await page.evaluate<{
          x: number;
          y: number;
          w: number;
          h: number;
          t: number[];
        }>(
          `(() => { const over = document.querySelectorAll('.chart')[${at}].querySelector('.u-over');
            over.scrollIntoView({ block: 'center' });
            const r = over.getBoundingClientRect();
            const sku = JSON.parse(document.getElementById('data').textContent).skus
              .find((s) => s.sku === 'H200');
            return { x: r.left, y: r.top, w: r.width, h: r.height, t: sku.runs.map((r) => r.t) }; })()`,
        );
        const xOf = (t: number) =>
          box.x + (box.w * (t - box.t[0]!)) / (box.t[box.t.length - 1]! - box.t[0]!);
        const mid = (a: number) => (xOf(box.t[a]!) + xOf(box.t[a + 1]!)) / 2;
        await page.drag(mid(1), mid(4), box.y + box.h / 2);
        const zoomed = await page.evaluate<Drawn>(
          `new Promise((done, fail) => { const end = Date.now() + 5000; const wait = () =>
            /from=/.test(location.hash) ? done() : Date.now() > end ?
            fail(new Error('no range in the link after the drag: ' + location.hash)) :
            setTimeout(wait, 20); wait(); }).then(() => ${drawnNow})`,
        );
        // The range is the first and last run the drag covered, to the second, in the link
        const { from, to } = zoomed.state;
        expect(from).toMatch(/^2026-\d\d-\d\dT\d\d:\d\d:\d\d$/);
        expect(to).toMatch(/^2026-\d\d-\d\dT\d\d:\d\d:\d\d$/);
        const q = new URLSearchParams(zoomed.hash.slice(1));
        expect([q.get('from'), q.get('to')]).toEqual([from, to]);
        const runs = zoomed.charts[at]!.runs;
        expect(runs).toEqual([2, 3, 4]);
        const iso = (t: number) => new Date(t * 1000).toISOString().slice(0, 19);
        expect([from, to]).toEqual([iso(box.t[2]!), iso(box.t[4]!)]);
        // every chart of the SKU shows that range
        for (const c of zoomed.charts.filter((c) => c.sku === 'H200' && c.series.length))
          expect(c.runs, c.title).toEqual(runs);
        const link = await page.evaluate<string>('location.href');
        expect(link).toContain(zoomed.hash);
        // A fresh tab opened on the link draws the same range
        const again = await chrome.page(1600, 1500);
        await again.goto(link);
        const reopened = await again.evaluate<Drawn>(drawnNow);
        expect(reopened.state).toMatchObject({ from, to });
        expect(reopened.charts.map((c) => [c.sku, c.kernel, c.chart, c.runs])).toEqual(
          zoomed.charts.map((c) => [c.sku, c.kernel, c.chart, c.runs]),
        );
        // "all runs" takes the range away again
        await again.evaluate("document.getElementById('all-runs').click()");
        const reset = await again.evaluate<Drawn>(drawnNow);
        expect([reset.state.from, reset.state.to, reset.charts[at]!.runs]).toEqual([
          '',
          '',
          all.runs,
        ]);
      } finally {
        chrome.close();
      }
    },
    120_000,
  );

  for (const [fixture, sku] of [
    ['push', 'H200'],
    ['push-h100x2-run83', 'H100-SXM'],
  ] as const) {
    inBrowser(
      `after history import (${fixture}, ${sku}): kernel.yml's reference, and a planted +5 % step judged and marked`,
      async () => {
        // A baseline-dir store of 8 pushes to main (the recorded push of the SKU), triton_fa2 5 %
        // slower from the 5th on, moved to the data branch with `history import` (no verdicts).
        const root = mkdtempSync(join(tmpdir(), 'kg-basedir-'));
        const folder = join(root, 'main', sku);
        mkdirSync(folder, { recursive: true });
        const push = readResultsText(`test/fixtures/recorded/${fixture}/results.json.gz`);
        for (let i = 0; i < 8; i++) {
          const doc = JSON.parse(push) as KernelgateResults;
          doc.run.started_at = new Date(Date.UTC(2026, 10, 1 + i, 3))
            .toISOString()
            .replace('.000', '');
          doc.run.git_sha = String(i + 1).repeat(40);
          for (const c of doc.cases) {
            if (i < 4 || c.variant !== 'triton_fa2' || !c.timing) continue;
            c.timing.samples_ms = c.timing.samples_ms.map((x) => x * 1.05);
            c.timing.median_ms *= 1.05;
          }
          writeFileSync(
            join(folder, `${doc.run.started_at}-${doc.run.git_sha}.json`),
            JSON.stringify(doc),
          );
        }
        const { remote } = bareRemote();
        const store = () =>
          branchStore({
            remote,
            cacheDir: join(mkdtempSync(join(tmpdir(), 'kg-cache-')), 'h.git'),
            exec: actionsExec(),
            warn: () => undefined,
            kernelgateVersion: '0.1.0',
          });
        // what `kernelgate history import --baseline-dir ROOT --history-remote REMOTE` runs
        expect((await importDirectory(root, store())).stored).toHaveLength(8);
        const io = { stdout: () => undefined, stderr: () => undefined, cwd: '.' };
        const file = join(mkdtempSync(join(tmpdir(), 'kg-dash-')), 'imported.html');
        const err: string[] = [];
        const status = await dashboardCommand(['--out', file, '--history-remote', remote], {
          ...io,
          stderr: (t) => err.push(t),
        });
        expect([status, err.join('')]).toEqual([0, expect.stringContaining(`: 8 runs on ${sku} `)]);
        // The stored records name the first reference variant (sdpa_flash) and carry no verdicts;
        // the page grades against kernel.yml's reference and says whose verdicts these are
        const stored = await store().allRecords();
        expect(stored.map((r) => r.record.references['attention'])).toEqual(
          Array(8).fill('sdpa_flash'),
        );
        const verdictAt = stored[0]!.record.fields.indexOf('verdict');
        expect(stored.every((r) => r.record.cases.every((row) => row[verdictAt] === null))).toBe(
          true,
        );
        const q = new URLSearchParams(); // the relative view: the default
        q.set(`case:${sku}/attention`, 'dtype=fp16,B=16,H=96,S=4096,D=64,causal=true');
        const { drawn, dom } = await open(file, `#${q.toString()}`);
        expect(dom).toContain(
          '8 runs carried no verdicts (imported with history import): their marks were computed here, each case against the previous run of its branch',
        );
        const att = drawn.charts.filter((c) => c.kernel === 'attention');
        expect(att[2]!.title).toBe(
          'speedup over sdpa_default (its time ÷ this time; > 1 is faster)',
        );
        const rel = att[0]!;
        expect(rel.chart).toBe('rel');
        // The 5 % step, relative to the first run: 100 → 105, judged SLOWER at the 5th run only
        // (its threshold here is compare.threshold_pct's 3 %; the runs after it are SAME as it)
        const fa2 = rel.series.find((s) => s.variant === 'triton_fa2')!;
        expect(fa2.y).toEqual([100, 100, 100, 100, 105, 105, 105, 105]);
        expect(rel.series.find((s) => s.variant === 'sdpa_default')!.y).toEqual(Array(8).fill(100));
        expect(rel.marks).toEqual({ SLOWER: [4], FASTER: [], WRONG: [] });
        expect(rel.band).toEqual({ variant: 'triton_fa2', pct: 3, points: 7 });
      },
      180_000,
    );
  }

  inBrowser(
    'names each accepted regression, who accepted it and on which pull request',
    async () => {
      // The recorded H200 push, stored as a merge whose pull request was accepted with the label
      // (as test/accept.e2e.test.ts stores it: run.accepted in its record)
      const at_ = RECORDED.indexOf('push');
      const records = recordedRecords().map((r, i) =>
        i === at_
          ? {
              ...r,
              run: {
                ...r.run,
                accepted: { label: 'kernelgate-accept', by: 'alice', pr: 41, cases: 26 },
              },
            }
          : r,
      );
      const push = records[at_]!;
      const h200 = dashboardData(records, { config: loadConfig('.') }).skus.find(
        (s) => s.sku === 'H200',
      )!;
      expect(h200.runs.filter((r) => r.accepted).map((r) => [r.commit, r.accepted])).toEqual([
        [push.run.commit, { label: 'kernelgate-accept', by: 'alice', pr: 41, cases: 26 }],
      ]);
      const file = join(mkdtempSync(join(tmpdir(), 'kg-dash-')), 'accepted.html');
      writeFileSync(file, buildDashboard(records, { config: loadConfig('.') }));
      const { dom } = await open(file);
      const at = push.run.started_at.slice(0, 16).replace('T', ' ');
      expect(dom).toContain(
        `Accepted on H200, ${at} (${push.run.event ?? 'run'} on ${push.run.branch}, commit ${push.run.commit!.slice(0, 12)}): ` +
          '26 SLOWER cases passed, accepted by @alice with the label kernelgate-accept on pull request #41.',
      );
      expect(dom.match(/Accepted on H/g)).toHaveLength(1); // the text, not the page's script
    },
    120_000,
  );

  inBrowser(
    'names the accepted regression of two H100s (runs 83 and 84, stored as test/accept.e2e.test.ts stores them)',
    async () => {
      // Run 83's push of main, then run 84's results as the merge of the accepted pull request
      const [main, merge] = recordsFromResults(
        ['push-h100x2-run83', 'accept-h100x2-run84'].map((r) =>
          loadResults(`test/fixtures/recorded/${r}/results.json.gz`),
        ),
        loadConfig('.'),
      );
      const merged = {
        ...merge!,
        run: {
          ...merge!.run,
          branch: 'main',
          accepted: { label: 'kernelgate-accept', by: 'alice', pr: 43, cases: 26 },
        },
      };
      const records = [main!, merged];
      const h100 = dashboardData(records, { config: loadConfig('.') }).skus.find(
        (s) => s.sku === 'H100-SXM',
      )!;
      expect(h100.runs.filter((r) => r.accepted).map((r) => r.accepted)).toEqual([
        { label: 'kernelgate-accept', by: 'alice', pr: 43, cases: 26 },
      ]);
      const file = join(mkdtempSync(join(tmpdir(), 'kg-dash-')), 'accepted-h100.html');
      writeFileSync(file, buildDashboard(records, { config: loadConfig('.') }));
      const { dom } = await open(file);
      const at = merged.run.started_at.slice(0, 16).replace('T', ' ');
      expect(dom).toContain(
        `Accepted on H100-SXM, ${at} (${merged.run.event ?? 'run'} on main, commit 0504f3669cba): ` +
          '26 SLOWER cases passed, accepted by @alice with the label kernelgate-accept on pull request #43.',
      );
    },
    120_000,
  );

  inBrowser(
    'stays responsive at 1,000 runs × 217 cases',
    async () => {
      const base = buildRecord(loadResults('test/fixtures/recorded/push/results.json.gz'), {
        branch: 'main',
        sku: 'H200',
        kernelgateVersion: '0.1.0',
      });
      const rand = seededRandom(7);
      const at = base.fields.indexOf('median_ms');
      const records: HistoryRecord[] = Array.from({ length: 1000 }, (_, i) => ({
        ...base,
        run: {
          ...base.run,
          started_at: new Date(Date.UTC(2026, 0, 1) + i * 8.6e6).toISOString(),
          commit: i.toString(16).padStart(40, '0'),
        },
        cases: base.cases.map((row) => {
          const copy = [...row];
          if (typeof copy[at] === 'number')
            copy[at] = (copy[at] as number) * (0.97 + 0.06 * rand());
          return copy;
        }),
      }));
      const file = join(mkdtempSync(join(tmpdir(), 'kg-dash-')), 'big.html');
      const started = Date.now();
      writeFileSync(file, buildDashboard(records));
      const built = Date.now() - started;
      const { body } = await open(file);
      const size = readFileSync(file).length;
      console.log(
        `1,000 runs × 217 cases: built in ${built} ms, ${(size / 2 ** 20).toFixed(1)} MiB, ` +
          `drawn in ${body['data-render-ms']} ms in the page`,
      );
      expect(body['data-drawn']).toBe(body['data-charts']);
      expect(Number(body['data-charts'])).toBe(8);
      expect(Number(body['data-render-ms'])).toBeLessThan(2000);
      expect(size).toBeLessThan(16 * 2 ** 20);
    },
    120_000,
  );

  it('reads the data branch', async () => {
    const { remote } = bareRemote();
    const store = branchStore({
      remote,
      cacheDir: join(mkdtempSync(join(tmpdir(), 'kg-cache-')), 'h.git'),
      exec: actionsExec(),
      warn: () => undefined,
      kernelgateVersion: '0.1.0',
    });
    for (const r of ['main-1355', 'nightly', 'push']) {
      await store.save(
        { branch: 'main', sku: 'H200' },
        loadResults(`test/fixtures/recorded/${r}/results.json.gz`),
        {},
      );
    }
    const file = join(mkdtempSync(join(tmpdir(), 'kg-dash-')), 'd.html');
    const err: string[] = [];
    const status = await dashboardCommand(['--out', file, '--history-remote', remote], {
      stdout: () => undefined,
      stderr: (t) => err.push(t),
      cwd: '.',
    });
    expect(status).toBe(0);
    expect(err.join('')).toMatch(/: 3 runs on H200 /);
  }, 60_000);
});
