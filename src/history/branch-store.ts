// The history on a git data branch (default `kernelgate-data` in the user's repository): one
// compact record per trusted run, records/<sku>/<branch>/<yyyy-mm>/<started>-<sha>-<run>.json.
//
// Append-only and never forced: a write fetches the branch's tip, adds one file to the tip's tree
// (the tree is read from the tip object, so nothing the tip holds can go missing), commits it with
// the tip as parent and pushes without force. A push that loses a race (another matrix shard, the
// nightly) is rejected as non-fast-forward; the writer fetches the new tip, adds its file again
// and retries. A read that fails writes nothing; a record that cannot be used is skipped by name.
//
// Reads fetch only what they need: the tip commit and its trees (--depth=1 --filter=blob:none,
// a partial clone), then the blobs of the records asked for, in one batch.
//
// The git side (the cache repository, fetching the tip and the records) is branch-git.ts; the
// records' paths and the append are branch-write.ts; this module reads and is the store.
import {
  fromTheFuture,
  acceptanceOf,
  judgementOf,
  safeSegment,
  StoreError,
  type BaselineKey,
  type BaselineStore,
  type SaveContext,
  type StoredBaseline,
} from '../store/index.js';
import type { Exec } from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import { parseRecord, recordCases, RecordError, type HistoryRecord } from './record.js';
import { recordToResults } from './record-results.js';
import { type BranchGit, branchGit, fetchTip, listPaths, readPaths } from './branch-git.js';
import { recordDir, saveRecords, type WriteOptions } from './branch-write.js';

export { showRemote } from './branch-git.js';
export { recordDir, recordPath } from './branch-write.js';

export const DEFAULT_DATA_BRANCH = 'kernelgate-data';
/**
 * How long a write keeps losing races before the run is left unstored: five minutes. Sixteen
 * writers at once need about sixteen rounds of fetch and push; a fixed 12 tries had dropped one.
 */
export const DEFAULT_RACE_BUDGET_MS = 300_000;

export interface BranchStoreOptions {
  /** the repository holding the data branch: a URL or a path */
  remote: string;
  /** the data branch (default kernelgate-data) */
  branch?: string;
  /** a local bare repository used as a partial clone of the data branch (made when missing) */
  cacheDir: string;
  exec: Exec;
  /** a record skipped, a read or a write that failed: one line naming it */
  warn: (message: string) => void;
  info?: (message: string) => void;
  /** added to git's environment, e.g. GIT_CONFIG_* carrying an authorisation header */
  gitEnv?: Record<string, string>;
  /** each git command's deadline in seconds, the 'git-timeout' input (default 120) */
  timeoutS?: number;
  /** written into each record */
  kernelgateVersion: string;
  /**
   * how long a write keeps trying while other writers win the race (default
   * DEFAULT_RACE_BUDGET_MS); each try's git commands have their own deadline (timeoutS)
   */
  raceBudgetMs?: number;
  /** the clock of the race budget (tests) */
  nowMs?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** what every save knows (the run's page, the event, the references), merged under its own */
  defaults?: SaveContext;
  /** the run id a record's file name carries (GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT) */
  runId?: string;
}

export interface StoredRecord {
  /** the record's path on the data branch */
  path: string;
  record: HistoryRecord;
}

export interface BranchStore extends BaselineStore {
  latest(key: BaselineKey): Promise<StoredBaseline | undefined>;
  save(key: BaselineKey, results: KernelgateResults, context?: SaveContext): Promise<string>;
  history(key: BaselineKey, limit: number): Promise<StoredBaseline[]>;
  /** up to `limit` records of the branch and SKU, newest first (records that cannot be used skipped) */
  records(key: BaselineKey, limit: number): Promise<StoredRecord[]>;
  /** every record on the data branch, for the dashboard: newest first within each SKU and branch */
  allRecords(): Promise<StoredRecord[]>;
  /**
   * Several runs in one commit (the migration from baseline-dir): each with its key and, when it
   * has one, the run id its file name carries.
   */
  saveMany(
    entries: {
      key: BaselineKey;
      results: KernelgateResults;
      context: SaveContext;
      runId?: string;
    }[],
  ): Promise<string[]>;
  /** the data branch's tip after the last fetch; undefined when the branch does not exist yet */
  tip(): Promise<string | undefined>;
}

/** Parses records newest first until `limit` usable ones; warns, by name, about the others. */
function usable(
  g: BranchGit,
  warn: (message: string) => void,
  texts: Map<string, string>,
  paths: string[],
  key: BaselineKey | undefined,
  limit: number,
): { found: StoredRecord[]; skipped: number } {
  const found: StoredRecord[] = [];
  let skipped = 0;
  for (const path of paths) {
    if (found.length >= limit) break;
    const text = texts.get(path);
    if (text === undefined) {
      warn(`${g.prefix}: skipped ${path}: it could not be read from ${g.where}`);
      skipped++;
      continue;
    }
    try {
      const record = parseRecord(text);
      const [, sku, branch] = path.split('/');
      if (
        (key && (record.run.sku !== key.sku || record.run.branch !== key.branch)) ||
        safeSegment(record.run.sku, 'GPU SKU') !== sku ||
        safeSegment(record.run.branch, 'branch') !== branch
      ) {
        throw new RecordError(
          `its run is ${record.run.branch} on ${record.run.sku}, not what its folder says`,
          'foreign',
        );
      }
      const future = fromTheFuture(record.run.started_at, Date.now());
      if (future !== undefined) throw new RecordError(future, 'newer');
      found.push({ path, record });
    } catch (error) {
      if (!(error instanceof RecordError)) throw error;
      skipped++;
      warn(
        error.kind === 'newer'
          ? `${g.prefix}: refused ${path}: ${error.message}`
          : `${g.prefix}: skipped ${path}: ${error.message}`,
      );
    }
  }
  return { found, skipped };
}

/** Up to `limit` usable records of a branch and SKU, newest first; a failed read warns, gives none. */
async function readRecords(
  g: BranchGit,
  warn: (message: string) => void,
  key: BaselineKey,
  limit: number,
): Promise<StoredRecord[]> {
  const fetched = await fetchTip(g);
  if (!fetched.ok) {
    warn(
      `${g.prefix}: cannot read ${g.where}: ${fetched.reason}. No baseline or trend is taken from the history in this run.`,
    );
    return [];
  }
  if (fetched.tip === undefined) return [];
  const tip = fetched.tip;
  const found: StoredRecord[] = [];
  try {
    const paths = await listPaths(g, tip, recordDir(key));
    // Read the newest `limit`; each record skipped brings in the next older one.
    let start = 0;
    while (found.length < limit && start < paths.length) {
      const batch = paths.slice(start, start + (limit - found.length));
      start += batch.length;
      const texts = await readPaths(g, tip, batch);
      found.push(...usable(g, warn, texts, batch, key, limit - found.length).found);
    }
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    warn(`${error.message}. No baseline or trend is taken from the history in this run.`);
    return [];
  }
  return found;
}

/** A record's run as the store hands it out: the results, where it is, what the gate said. */
function storedOf(dataBranch: string, stored: StoredRecord): StoredBaseline {
  const { record } = stored;
  // The same judgement the directory store keeps, from the verdicts the record holds per case.
  const verdicts: Record<string, string> = {};
  for (const c of recordCases(record)) {
    if (c.verdict) verdicts[`${c.kernel}/${c.variant}/${c.case}`] = c.verdict;
  }
  const { verdict, event } = record.run;
  const accepted = acceptanceOf(record.run.accepted);
  const judged = judgementOf({
    ...(verdict ? { verdict } : {}),
    ...(event ? { event } : {}),
    ...(accepted ? { accepted } : {}),
    verdicts,
  });
  return {
    results: recordToResults(record),
    path: `${dataBranch}:${stored.path}`,
    ...(verdict !== undefined ? { judged } : {}),
  };
}

export function branchStore(options: BranchStoreOptions): BranchStore {
  const dataBranch = options.branch ?? DEFAULT_DATA_BRANCH;
  const g = branchGit(options, dataBranch);
  const { prefix, where } = g;
  const writing: WriteOptions = {
    kernelgateVersion: options.kernelgateVersion,
    ...(options.defaults ? { defaults: options.defaults } : {}),
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    raceBudgetMs: options.raceBudgetMs ?? DEFAULT_RACE_BUDGET_MS,
    nowMs: options.nowMs ?? Date.now,
    sleep: options.sleep ?? ((ms: number) => new Promise((done) => setTimeout(done, ms))),
    random: options.random ?? Math.random,
    ...(options.info ? { info: options.info } : {}),
  };
  let queue: Promise<unknown> = Promise.resolve();
  /** one operation at a time on the cache repository */
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const readKey = (key: BaselineKey, limit: number) => readRecords(g, options.warn, key, limit);
  const save = (entries: Parameters<typeof saveRecords>[1]) => saveRecords(g, entries, writing);

  return {
    latest: (key) =>
      serial(async () => {
        const [newest] = await readKey(key, 1);
        return newest === undefined ? undefined : storedOf(dataBranch, newest);
      }),
    history: (key, limit) =>
      serial(async () => (await readKey(key, limit)).map((r) => storedOf(dataBranch, r))),
    records: (key, limit) => serial(() => readKey(key, limit)),
    allRecords: () =>
      serial(async () => {
        const fetched = await fetchTip(g);
        if (!fetched.ok) {
          options.warn(`${prefix}: cannot read ${where}: ${fetched.reason}.`);
          return [];
        }
        if (fetched.tip === undefined) return [];
        const paths = await listPaths(g, fetched.tip, 'records');
        const texts = await readPaths(g, fetched.tip, paths);
        return usable(g, options.warn, texts, paths, undefined, paths.length).found;
      }),
    save: (key, results, context = {}) =>
      serial(async () => {
        const [path] = await save([{ key, results, context }]);
        return `${dataBranch}:${path}`;
      }),
    saveMany: (entries) =>
      serial(async () =>
        entries.length === 0 ? [] : (await save(entries)).map((path) => `${dataBranch}:${path}`),
      ),
    tip: () =>
      serial(async () => {
        const fetched = await fetchTip(g);
        return fetched.ok ? fetched.tip : undefined;
      }),
  };
}
