// The trend dashboard: built from thirteen recorded GPU runs (nine on the H200, four on the H100)
// and from a thousand simulated ones, opened offline in headless Chromium (Debian's `chromium`),
// which reports how many charts the page made and how many of them painted their data.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { dashboardCommand, recordsFromResults } from '../src/history/dashboard-cli.js';
import { dashboardData } from '../src/history/dashboard-data.js';
import { buildDashboard, UPLOT_VERSION } from '../src/history/dashboard.js';
import { buildRecord, type HistoryRecord } from '../src/history/record.js';
import { loadResults } from '../src/results/index.js';
import { seededRandom } from '../src/lib/index.js';
import { bareRemote } from './support/git-remote.js';
import { branchStore } from '../src/history/branch-store.js';
import { actionsExec } from '../src/lib/index.js';

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

function chromium(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'pipe' });
      return name;
    } catch {
      // not this one
    }
  }
  return undefined;
}
const browser = chromium();
// CI installs it (scripts/test.sh); elsewhere the browser checks are skipped, saying so.
const inBrowser = browser || process.env['CI'] ? it : it.skip;

/** Opens the page with no network and returns the <body> attributes the page sets once drawn. */
function open(file: string): Promise<Record<string, string>> {
  return new Promise((done, fail) => {
    execFile(
      browser ?? 'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--no-first-run',
        '--proxy-server=127.0.0.1:9', // nothing outside the file can load
        '--virtual-time-budget=10000',
        '--dump-dom',
        `file://${file}`,
      ],
      { maxBuffer: 256 * 1024 * 1024, timeout: 60_000 },
      (error, stdout) => {
        if (error) return fail(error);
        const body = /<body([^>]*)>/.exec(stdout)?.[1] ?? '';
        done(
          Object.fromEntries([...body.matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]])),
        );
      },
    );
  });
}

let cached: HistoryRecord[] | undefined;
/** The recorded runs as records, each judged against the one before it on its SKU (~10 s). */
function recordedRecords(): HistoryRecord[] {
  cached ??= recordsFromResults(
    RECORDED.map((r) => loadResults(`test/fixtures/recorded/${r}/results.json`)),
    loadConfig('.'),
  );
  return cached;
}

describe('trend dashboard', () => {
  it(
    'lays out each SKU, kernel and case with the regressions and wrong results marked',
    { timeout: 120_000 },
    () => {
      const data = dashboardData(recordedRecords(), { now: new Date('2026-11-23T19:00:00Z') });
      expect(data.skus.map((s) => [s.sku, s.runs.length])).toEqual([
        ['H100-SXM', 4],
        ['H200', 9],
      ]);
      const h200 = data.skus[1]!;
      const attention = h200.kernels.find((k) => k.name === 'attention')!;
      // The ratio line is against what users call: SDPA's default dispatch (kernel.yml).
      expect(attention.reference).toBe('sdpa_default');
      expect(attention.variants[0]).toBe('sdpa_default');
      expect(attention.cases[attention.headline]).toBe(
        'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
      );
      // The planted wrong result (run "broken", the 5th H200 run) is marked on all 26 of its cases,
      // and the planted slowdown (run "slowed", the 6th) as SLOWER against the run before it.
      const flags = (run: number, flag: number) =>
        h200.kernels
          .flatMap((k) => Object.values(k.series).flatMap((byCase) => Object.values(byCase)))
          .filter((s) => s.f[run] === flag).length;
      expect(flags(4, 3)).toBe(26);
      // Each run judged against the one before it: slowed (6th) against broken, whose triton_fa2
      // cases it slows were wrong (so NEW, not SLOWER) but for one; the nightly (7th), of the code
      // before the slowdown, is FASTER than slowed on those 26 cases.
      expect(h200.runs.map((_, i) => [flags(i, 1), flags(i, 2), flags(i, 3)])).toEqual([
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 26],
        [1, 0, 0],
        [0, 26, 0],
        [0, 0, 0],
        [0, 0, 0],
      ]);
      const fa2 = attention.series['triton_fa2']![attention.headline]!;
      expect(fa2.ms[7]).toBe(30.59); // push: 30.5847 ms, kept as 30.585, drawn to 4 digits
      expect(fa2.rr[7]).toBeCloseTo(30.585 / 20.304, 3); // sdpa_default: 20.3039 ms
      expect(h200.newest).toHaveLength(217);
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
      for (const r of RECORDED) args.push('--results', `test/fixtures/recorded/${r}/results.json`);
      const err: string[] = [];
      expect(
        await dashboardCommand(args, {
          stdout: () => undefined,
          stderr: (t) => err.push(t),
          cwd: '.',
        }),
      ).toBe(0);
      expect(err.join('')).toMatch(/: 13 runs on H200, H100-SXM \(\d+ KiB\)\n$/);
      const body = await open(file);
      // per SKU: gemm time and throughput (its copy has no reference ratio), attention and
      // bsr_gemm time, throughput and ratio: 8 charts, 16 in all, each with its data painted
      expect(body['data-charts']).toBe('16');
      expect(body['data-drawn']).toBe('16');
    },
    120_000,
  );

  inBrowser(
    'stays responsive at 1,000 runs × 217 cases',
    async () => {
      const base = buildRecord(loadResults('test/fixtures/recorded/push/results.json'), {
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
      const body = await open(file);
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
        loadResults(`test/fixtures/recorded/${r}/results.json`),
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
