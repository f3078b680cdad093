// `kernelgate dashboard`: the trend page, from the data branch or from results files.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/index.js';
import {
  branchStore,
  buildDashboard,
  buildRecord,
  configReferences,
  DEFAULT_DATA_BRANCH,
  type HistoryRecord,
  KERNELGATE_VERSION,
} from '../history/index.js';
import { actionsExec, writeOutput } from '../lib/index.js';
import { judge } from '../pipeline/index.js';
import type { KernelgateResults } from '../results/index.js';
import { InputError, loadResults } from '../results/index.js';
import type { CliIo } from './common.js';

export const DASHBOARD_USAGE = `kernelgate dashboard --out FILE.html (--history-remote URL_OR_PATH [--history-branch NAME]
                     | --results FILE [--results FILE ...]) [--config DIR_OR_FILE]
                     [--repository OWNER/NAME] [--title TEXT]
  one static page (uPlot inlined, opens offline): per GPU SKU and kernel, each variant's time
  (log or relative), throughput in the case's unit and speedup over kernel.yml's reference, a
  line per branch, judged SLOWER/FASTER runs and wrong results marked with the threshold band,
  the view in the link; from the data branch's records (records without verdicts judged against
  the previous run of their branch), or from results files (each judged against the previous one
  of its SKU and branch); references and thresholds from --config (default: this folder)
`;

/** A branch name from a ref: refs/heads/main → main, refs/pull/42/merge → pull/42. */
export function branchOfRef(ref: string | undefined): string {
  if (!ref) return 'unknown';
  return ref.replace(/^refs\/heads\//, '').replace(/^refs\/pull\/(\d+)\/merge$/, 'pull/$1');
}

/**
 * Records made from results files: in time order per SKU and branch, each judged against the one
 * before it (its verdicts mark regressions), the way a trusted run is judged against its stored
 * baseline; the references are the manifests' (tiers.reference, else speed_reference).
 */
export function recordsFromResults(
  runs: KernelgateResults[],
  config: ReturnType<typeof loadConfig>,
): HistoryRecord[] {
  const references = configReferences(config);
  const sorted = [...runs].sort((a, b) => a.run.started_at.localeCompare(b.run.started_at));
  const previous = new Map<string, KernelgateResults>();
  return sorted.map((results) => {
    const sku = results.environment.gpu.sku ?? results.environment.gpu.name;
    const branch = branchOfRef(results.run.git_ref);
    const before = previous.get(`${sku}\u0000${branch}`);
    previous.set(`${sku}\u0000${branch}`, results);
    const judged = judge(results, before, config, 'nightly');
    return buildRecord(results, {
      branch,
      sku,
      kernelgateVersion: KERNELGATE_VERSION,
      verdict: judged.verdict.verdict,
      verdicts: Object.fromEntries(judged.comparison.cases.map((c) => [c.key, c.perf])),
      references,
      confidence: config.compare.confidence,
    });
  });
}

/** `kernelgate dashboard`'s options (DASHBOARD_USAGE names each of them). */
export const DASHBOARD_OPTIONS = {
  out: { type: 'string' },
  results: { type: 'string', multiple: true },
  config: { type: 'string' },
  'history-remote': { type: 'string' },
  'history-branch': { type: 'string', default: DEFAULT_DATA_BRANCH },
  repository: { type: 'string' },
  title: { type: 'string' },
} as const;

export async function dashboardCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: DASHBOARD_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  if (values.out === undefined) throw new InputError('dashboard needs --out FILE.html');
  const fromResults = values.results !== undefined && values.results.length > 0;
  const remote = values['history-remote'];
  if (fromResults === (remote !== undefined)) {
    throw new InputError('dashboard needs either --history-remote or --results (one of them)');
  }
  if (values.repository !== undefined && !/^[\w.-]+\/[\w.-]+$/.test(values.repository)) {
    throw new InputError(
      `--repository must be OWNER/NAME (got ${JSON.stringify(values.repository)})`,
    );
  }
  let records: HistoryRecord[];
  const warnings: string[] = [];
  const config = loadConfig(resolve(io.cwd, values.config ?? '.'));
  if (fromResults) {
    records = recordsFromResults(
      (values.results ?? []).map((p) => loadResults(resolve(io.cwd, p))),
      config,
    );
  } else {
    const cache = mkdtempSync(join(tmpdir(), 'kg-dashboard-'));
    try {
      const store = branchStore({
        remote: /^[a-z]+:\/\//.test(remote!) ? remote! : resolve(io.cwd, remote!),
        branch: values['history-branch'],
        cacheDir: join(cache, 'history.git'),
        exec: actionsExec(),
        warn: (m) => warnings.push(m),
        kernelgateVersion: KERNELGATE_VERSION,
      });
      records = (await store.allRecords()).map((r) => r.record);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  }
  for (const w of warnings) io.stderr(`warning: ${w}\n`);
  if (records.length === 0) throw new InputError('dashboard: no records to draw');
  const html = buildDashboard(records, {
    config,
    ...(values.title !== undefined ? { title: values.title } : {}),
    ...(values.repository !== undefined ? { repository: values.repository } : {}),
  });
  writeOutput(resolve(io.cwd, values.out), html, values.out);
  const skus = new Set(records.map((r) => r.run.sku));
  io.stderr(
    `${values.out}: ${records.length} runs on ${[...skus].join(', ')} (${Math.round(html.length / 1024)} KiB)\n`,
  );
  return 0;
}
