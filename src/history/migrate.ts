// From baseline-dir to the data branch: every results file of a directory store
// (<root>/<branch>/<sku>/<started>-<sha>.json) becomes a record, oldest first, in commits of up to
// 200 records, pushed like any other write (never forced). Running it again adds nothing.
import type { CliIo } from '../cli/index.js';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { actionsExec } from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import { InputError, loadResults } from '../results/index.js';
import { KERNELGATE_VERSION } from './action.js';
import { branchStore, DEFAULT_DATA_BRANCH, type BranchStore } from './branch-store.js';

export interface Imported {
  /** paths on the data branch, one per file, oldest first */
  stored: string[];
  /** files that are not results documents, with why */
  skipped: string[];
}

/** The results files of a directory store, by branch and SKU folder. */
export function directoryRuns(root: string): {
  branch: string;
  sku: string;
  file: string;
}[] {
  if (!existsSync(root)) throw new InputError(`${root}: no such folder`);
  const out: { branch: string; sku: string; file: string }[] = [];
  const dirs = (path: string) =>
    readdirSync(path).filter((name) => statSync(join(path, name)).isDirectory());
  for (const branch of dirs(root)) {
    for (const sku of dirs(join(root, branch))) {
      for (const name of readdirSync(join(root, branch, sku))) {
        if (name.endsWith('.json')) out.push({ branch, sku, file: join(root, branch, sku, name) });
      }
    }
  }
  return out;
}

export async function importDirectory(
  root: string,
  store: BranchStore,
  batch = 200,
): Promise<Imported> {
  const skipped: string[] = [];
  const runs: { branch: string; sku: string; results: KernelgateResults }[] = [];
  for (const run of directoryRuns(root)) {
    try {
      runs.push({ branch: run.branch, sku: run.sku, results: loadResults(run.file) });
    } catch (error) {
      skipped.push(`${run.file}: ${(error as Error).message}`);
    }
  }
  runs.sort((a, b) => a.results.run.started_at.localeCompare(b.results.run.started_at));
  const stored: string[] = [];
  for (let i = 0; i < runs.length; i += batch) {
    const part = runs.slice(i, i + batch);
    stored.push(
      ...(await store.saveMany(
        part.map((r) => ({
          key: { branch: r.branch, sku: r.sku },
          results: r.results,
          context: { event: 'imported from baseline-dir' },
          runId: r.results.run.id ?? 'imported',
        })),
      )),
    );
  }
  return { stored, skipped };
}

export const HISTORY_USAGE = `kernelgate history import --baseline-dir DIR --history-remote URL_OR_PATH [--history-branch NAME]
  stores every run of a baseline-dir store on the data branch as a record, oldest first; running
  it again adds nothing (docs/history.md, "Moving from baseline-dir")
`;

/** `kernelgate history import`'s options (HISTORY_USAGE names each of them). */
export const HISTORY_OPTIONS = {
  'baseline-dir': { type: 'string' },
  'history-remote': { type: 'string' },
  'history-branch': { type: 'string', default: DEFAULT_DATA_BRANCH },
} as const;

/** `kernelgate history import`. */
export async function historyCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'import') {
    throw new InputError(`history: unknown subcommand ${JSON.stringify(sub ?? null)}; try: import`);
  }
  const { values } = parseArgs({
    args: rest,
    options: HISTORY_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  const dir = values['baseline-dir'];
  const remote = values['history-remote'];
  if (dir === undefined || remote === undefined) {
    throw new InputError(
      'history import needs --baseline-dir DIR and --history-remote URL_OR_PATH',
    );
  }
  const cache = mkdtempSync(join(tmpdir(), 'kg-import-'));
  const warnings: string[] = [];
  try {
    const store = branchStore({
      remote:
        /^[a-z]+:\/\//.test(remote) || /^[^/]+@[^:]+:/.test(remote)
          ? remote
          : resolve(io.cwd, remote),
      branch: values['history-branch'],
      cacheDir: join(cache, 'history.git'),
      exec: actionsExec(),
      warn: (m) => warnings.push(m),
      info: (m) => io.stderr(`${m}\n`),
      kernelgateVersion: KERNELGATE_VERSION,
    });
    const done = await importDirectory(resolve(io.cwd, dir), store);
    for (const s of done.skipped) io.stderr(`skipped ${s}\n`);
    for (const w of warnings) io.stderr(`warning: ${w}\n`);
    io.stdout(
      `${done.stored.length} runs on ${values['history-branch']}, ${done.skipped.length} files skipped\n`,
    );
    return 0;
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}
