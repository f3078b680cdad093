// A simulated year of kernelgate history on a real git repository (issue 18): nightlies and pushes
// on two GPU SKUs, made from a real recorded results file whose timings are jittered run to run (a
// slow drift over the year, a per-run clock factor, per-case noise). Measures the bytes of a
// record, the branch's packed size, and how long a fresh reader takes, through the data-branch
// store over git's own transport, to read the newest baseline and a 30-run trend window.
// Used by scripts/history-growth.ts (the figures in docs/history.md) and test/history-growth.test.ts.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { actionsExec } from '../../src/lib/index.js';
import { branchStore, recordPath } from '../../src/history/branch-store.js';
import { buildRecord, serializeRecord } from '../../src/history/record.js';
import { readResultsText, type KernelgateResults } from '../../src/results/index.js';
import { seededRandom } from '../../src/lib/index.js';

export interface YearOptions {
  results: string;
  nightlies: number;
  pushes: number;
  skus?: string[];
  /** folder for the repositories (default: a new temporary one) */
  out?: string;
  /** how many fresh readers to time (the smallest time is reported) */
  readers?: number;
}

export interface YearFigures {
  date: string;
  machine: string;
  source: string;
  records: number;
  runs: string;
  build_s: number;
  bytes_per_record_raw: number;
  raw_total_mb: number;
  packed_mb: number;
  packed_bytes_per_record: number;
  newest_found: string | undefined;
  window_records: number;
  times_ms: Record<string, number>;
  /** the packs in a reader's and the writer's cache: what they fetched */
  fetched_kib: Record<string, number>;
  warnings: string[];
  remote: string;
}

const git = (args: string[], input?: string) =>
  execFileSync('git', args, { encoding: 'utf8', input, maxBuffer: 1 << 30 });

export async function simulateYear(options: YearOptions): Promise<YearFigures> {
  const { nightlies, pushes } = options;
  const source = JSON.parse(readResultsText(options.results)) as KernelgateResults;
  const skus = options.skus ?? ['H100-SXM', 'H200'];
  const branch = 'kernelgate-data';
  const work = options.out ?? mkdtempSync(join(tmpdir(), 'kg-growth-'));
  const remote = join(work, 'remote.git');
  git(['init', '--quiet', '--bare', remote]);
  git(['--git-dir', remote, 'config', 'uploadpack.allowFilter', 'true']);

  const rand = seededRandom(20261123);
  const normal = () => {
    const u = Math.max(rand(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
  /** One simulated run: the recorded one, its timings scaled by drift × run factor × case noise. */
  function simulate(day: number, n: number, sku: string, event: string): KernelgateResults {
    const drift = 1 + 0.03 * Math.sin(day / 58); // a slow wander over the year
    const runFactor = Math.exp(0.01 * normal()); // clocks, power, the machine's day
    // 2025: a year that has passed (the store refuses runs that start after its clock).
    const started = new Date(Date.UTC(2025, 0, 1) + day * 86_400_000 + n * 1000);
    const sha = createHash('sha1').update(`${sku}-${event}-${day}-${n}`).digest('hex');
    const cases = source.cases.map((c) => {
      if (!c.timing) return c;
      const f = drift * runFactor * Math.exp(0.005 * normal());
      const scale = (v: number | undefined) => (v === undefined ? undefined : v * f);
      const samples = c.timing.samples_ms.map((s) => s * f * Math.exp(0.003 * normal()));
      return {
        ...c,
        timing: {
          ...c.timing,
          samples_ms: samples,
          median_ms: c.timing.median_ms * f,
          ...(c.timing.q1_ms !== undefined ? { q1_ms: scale(c.timing.q1_ms) } : {}),
          ...(c.timing.q3_ms !== undefined ? { q3_ms: scale(c.timing.q3_ms) } : {}),
          ...(c.timing.sm_clock_mhz
            ? { sm_clock_mhz: c.timing.sm_clock_mhz.map((m) => Math.round(m + 15 * normal())) }
            : {}),
          ...(c.timing.power_w ? { power_w: c.timing.power_w.map((w) => w + 5 * normal()) } : {}),
        },
        ...(c.throughput
          ? {
              throughput: {
                ...c.throughput,
                ...(c.throughput.tflops !== undefined ? { tflops: c.throughput.tflops / f } : {}),
                ...(c.throughput.gbps !== undefined ? { gbps: c.throughput.gbps / f } : {}),
              },
            }
          : {}),
      } as typeof c;
    });
    return {
      ...source,
      run: {
        ...source.run,
        id: `${event}-${day}-${n}`,
        started_at: started.toISOString().replace(/\.\d+Z$/, 'Z'),
        finished_at: new Date(started.getTime() + 173_000).toISOString().replace(/\.\d+Z$/, 'Z'),
        git_sha: sha,
        git_ref: 'refs/heads/main',
      },
      environment: { ...source.environment, gpu: { ...source.environment.gpu, sku } },
      cases,
    };
  }

  // The year, in time order: each day a nightly, and the pushes spread over the days, on each SKU.
  const runs: { day: number; n: number; event: string }[] = [];
  for (let day = 0; day < nightlies; day++) runs.push({ day, n: 0, event: 'schedule' });
  for (let i = 0; i < pushes; i++) {
    runs.push({ day: Math.floor((i * nightlies) / pushes), n: 1 + (i % 7), event: 'push' });
  }
  runs.sort((a, b) => a.day - b.day || a.n - b.n);

  const t0 = Date.now();
  let rawBytes = 0;
  let records = 0;
  const stream: string[] = [];
  let mark = 0;
  for (const run of runs) {
    for (const sku of skus) {
      const results = simulate(run.day, run.n, sku, run.event);
      const key = { branch: 'main', sku };
      const runId = `${run.event}-${run.day}-${run.n}`;
      const record = buildRecord(results, {
        branch: 'main',
        sku,
        kernelgateVersion: '0.1.0',
        event: run.event,
        runId,
        artifact: `https://github.com/your-org/your-repo/actions/runs/${1000 + mark}`,
        verdict: 'pass',
      });
      const text = serializeRecord(record);
      rawBytes += Buffer.byteLength(text);
      records++;
      const path = recordPath(key, results, runId);
      const when = Math.floor(Date.parse(results.run.started_at) / 1000);
      const message = `kernelgate: ${run.event} ${results.run.git_sha?.slice(0, 12)} on main, ${sku}\n`;
      mark++;
      stream.push(
        `commit refs/heads/${branch}\nmark :${mark}\n` +
          `committer kernelgate <kernelgate@users.noreply.github.com> ${when} +0000\n` +
          `data ${Buffer.byteLength(message)}\n${message}` +
          (mark > 1 ? `from :${mark - 1}\n` : '') +
          `M 100644 inline ${path}\ndata ${Buffer.byteLength(text)}\n${text}\n`,
      );
    }
  }
  const built = (Date.now() - t0) / 1000;
  await new Promise<void>((done, fail) => {
    const child = spawn('git', ['--git-dir', remote, 'fast-import', '--quiet'], {
      stdio: ['pipe', 'inherit', 'inherit'],
    });
    child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`fast-import: ${code}`))));
    for (const chunk of stream) child.stdin.write(chunk);
    child.stdin.end();
  });
  // As a server keeps it: one pack, git gc's default delta search.
  git(['--git-dir', remote, 'gc', '--quiet']);
  const sizePack =
    Number(/size-pack: (\d+)/.exec(git(['--git-dir', remote, 'count-objects', '-v']))?.[1]) * 1024;

  // A fresh reader (a pull request run on a new runner): newest baseline, then a 30-run window.
  const times: Record<string, number> = {};
  const timeIt = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const start = process.hrtime.bigint();
    const out = await work();
    times[name] = Number(process.hrtime.bigint() - start) / 1e6;
    return out;
  };
  const warnings: string[] = [];
  const caches: string[] = [];
  const reader = () =>
    branchStore({
      remote: `file://${remote}`,
      cacheDir: caches[caches.push(join(mkdtempSync(join(work, 'reader-')), 'history.git')) - 1]!,
      exec: actionsExec(),
      warn: (m) => warnings.push(m),
      kernelgateVersion: '0.1.0',
    });
  const key = { branch: 'main', sku: skus[skus.length - 1] ?? 'H200' };
  const fresh = reader();
  const newest = await timeIt('newest baseline, fresh runner', () => fresh.latest(key));
  const window = await timeIt('30-run window, same runner after it', () => fresh.records(key, 30));
  // The figure that matters: a new runner reads both. The smallest of a few tries, each with an
  // empty cache, as timings of a shared machine are.
  let best = Infinity;
  for (let i = 0; i < (options.readers ?? 3); i++) {
    const r = reader();
    const start = process.hrtime.bigint();
    await r.latest(key);
    const got = await r.records(key, 30);
    if (got.length !== Math.min(30, records / skus.length)) {
      throw new Error(`a fresh reader found ${got.length} records`);
    }
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
  }
  times['newest baseline + 30-run window, fresh runner (best of ' + (options.readers ?? 3) + ')'] =
    best;
  // One more trusted run stored on the year-old branch, through the store (fetch, commit, push).
  const writer = reader();
  const extra = simulate(nightlies, 9, key.sku, 'push');
  await timeIt('store one more run (fetch, commit, push)', () => writer.save(key, extra, {}));
  // What each fetched: its cache holds nothing else.
  const packKib = (dir: string) =>
    Number(/size-pack: (\d+)/.exec(git(['--git-dir', dir, 'count-objects', '-v']))?.[1] ?? 0);
  const fetched_kib = {
    'fresh reader (newest + 30-run window)': packKib(caches[1]!),
    'writer (one more run)': packKib(caches.at(-1)!),
  };

  return {
    date: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}, ${git(['--version']).trim()}`,
    source: `${options.results} (${source.cases.length} cases, ${statSync(options.results).size} bytes)`,
    records,
    runs: `${nightlies} nightlies + ${pushes} pushes on ${skus.join(' and ')}`,
    build_s: built,
    bytes_per_record_raw: Math.round(rawBytes / records),
    raw_total_mb: +(rawBytes / 2 ** 20).toFixed(1),
    packed_mb: +(sizePack / 2 ** 20).toFixed(2),
    packed_bytes_per_record: Math.round(sizePack / records),
    newest_found: newest?.path,
    window_records: window.length,
    times_ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(v)])),
    fetched_kib,
    warnings,
    remote,
  };
}
