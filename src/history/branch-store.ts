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
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  safeSegment,
  StoreError,
  type BaselineKey,
  type BaselineStore,
  type SaveContext,
  type StoredBaseline,
} from '../store/index.js';
import type { Exec, ExecResult } from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import {
  buildRecord,
  HISTORY_FORMAT,
  parseRecord,
  RecordError,
  recordToResults,
  serializeRecord,
  type HistoryRecord,
} from './record.js';

export const DEFAULT_DATA_BRANCH = 'kernelgate-data';
/** The local name of the remote inside the cache repository, and where its tip is kept. */
const REMOTE = 'kgdata';
const TIP_REF = 'refs/kernelgate/tip';

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
  /** written into each record */
  kernelgateVersion: string;
  /** tries of a push that loses a race before giving up (default 12) */
  attempts?: number;
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

/** The folder of a branch's records on one SKU. */
export function recordDir(key: BaselineKey): string {
  return `records/${safeSegment(key.sku, 'GPU SKU')}/${safeSegment(key.branch, 'branch')}`;
}

/** The path of a run's record: by SKU, branch and month, then start time, commit and run. */
export function recordPath(key: BaselineKey, results: KernelgateResults, runId?: string): string {
  const started = results.run.started_at;
  const month = /^(\d{4})-(\d{2})/.exec(started);
  const stamp = started.replace(/[^0-9A-Za-z]/g, '').replace(/^(\d{8})(\d{6})\d*/, '$1T$2');
  const sha = safeSegment((results.run.git_sha ?? 'nosha').slice(0, 12), 'git sha');
  const id = safeSegment(runId ?? results.run.id ?? 'local', 'run id');
  return `${recordDir(key)}/${month ? `${month[1]}-${month[2]}` : 'undated'}/${safeSegment(stamp, 'start time')}-${sha}-${id}.json`;
}

/** A remote as shown in messages: never with credentials. */
export function showRemote(remote: string): string {
  return remote.replace(/\/\/[^/@]*@/, '//***@');
}

/** git's own explanation: its first fatal/error line, else its last line. */
function gitReason(result: ExecResult): string {
  const lines = result.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const fatal = lines.find((l) => /^(fatal|error):/.test(l));
  return (fatal ?? lines.at(-1) ?? `git exited with status ${result.exitCode}`).replace(
    /\/\/[^/@\s]*@/g,
    '//***@',
  );
}

const README = `# kernelgate history

Written by kernelgate (https://github.com/kernelgate/kernelgate): one compact record per trusted
run (${HISTORY_FORMAT}), under records/<GPU SKU>/<branch>/<yyyy-mm>/. Append-only: kernelgate
adds files and never rewrites or force-pushes this branch. Do not commit to it by hand; see
docs/history.md in kernelgate for the layout and how to read it.
`;

export function branchStore(options: BranchStoreOptions): BranchStore {
  const dataBranch = options.branch ?? DEFAULT_DATA_BRANCH;
  const gitDir = options.cacheDir;
  const attempts = options.attempts ?? 12;
  const sleep = options.sleep ?? ((ms: number) => new Promise((done) => setTimeout(done, ms)));
  const random = options.random ?? Math.random;
  const where = `branch ${dataBranch} of ${showRemote(options.remote)}`;
  const prefix = 'kernelgate history';
  let queue: Promise<unknown> = Promise.resolve();
  /** one operation at a time on the cache repository */
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  const git = (args: string[], env: Record<string, string> = {}) =>
    options.exec.run('git', ['--git-dir', gitDir, ...args], {
      env: {
        GIT_TERMINAL_PROMPT: '0',
        GIT_AUTHOR_NAME: 'kernelgate',
        GIT_AUTHOR_EMAIL: 'kernelgate@users.noreply.github.com',
        GIT_COMMITTER_NAME: 'kernelgate',
        GIT_COMMITTER_EMAIL: 'kernelgate@users.noreply.github.com',
        ...options.gitEnv,
        ...env,
      },
    });
  const gitOk = async (args: string[], env?: Record<string, string>) => {
    const result = await git(args, env);
    if (result.exitCode !== 0) {
      throw new StoreError(`${prefix}: git ${args[0]} failed in ${gitDir}: ${gitReason(result)}`);
    }
    return result.stdout;
  };

  let ready = false;
  async function ensureCache(): Promise<void> {
    if (ready) return;
    if (!existsSync(join(gitDir, 'HEAD'))) {
      mkdirSync(gitDir, { recursive: true });
      const init = await options.exec.run('git', ['init', '--quiet', '--bare', gitDir]);
      if (init.exitCode !== 0) {
        throw new StoreError(`${prefix}: cannot make ${gitDir}: ${gitReason(init)}`);
      }
    }
    // A partial clone of the data branch: blobs come when a record is read.
    await gitOk(['config', `remote.${REMOTE}.url`, options.remote]);
    await gitOk(['config', `remote.${REMOTE}.promisor`, 'true']);
    await gitOk(['config', `remote.${REMOTE}.partialclonefilter`, 'blob:none']);
    await gitOk(['config', 'core.logAllRefUpdates', 'false']);
    ready = true;
  }

  type Fetched = { ok: true; tip: string | undefined } | { ok: false; reason: string };

  /** The data branch's tip and its trees (no blobs); tip undefined: the branch does not exist. */
  async function fetchTip(): Promise<Fetched> {
    try {
      await ensureCache();
    } catch (error) {
      return { ok: false, reason: (error as Error).message };
    }
    const fetched = await git([
      'fetch',
      '--quiet',
      '--no-tags',
      '--depth=1',
      '--filter=blob:none',
      REMOTE,
      `+refs/heads/${dataBranch}:${TIP_REF}`,
    ]);
    if (fetched.exitCode === 0) {
      const tip = (await gitOk(['rev-parse', '--verify', `${TIP_REF}^{commit}`])).trim();
      return { ok: true, tip };
    }
    if (/couldn't find remote ref/i.test(fetched.stderr)) {
      await git(['update-ref', '-d', TIP_REF]);
      return { ok: true, tip: undefined };
    }
    return { ok: false, reason: gitReason(fetched) };
  }

  async function listPaths(tip: string, dir: string): Promise<string[]> {
    const out = await gitOk(['ls-tree', '-r', '--name-only', tip, '--', `${dir}/`]);
    return out
      .split('\n')
      .filter((p) => p.endsWith('.json'))
      .sort()
      .reverse();
  }

  /** The files at `paths` of `tip`, fetched in one batch, as text (undefined: not readable). */
  async function readPaths(tip: string, paths: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (paths.length === 0) return out;
    const work = mkdtempSync(join(tmpdir(), 'kg-history-read-'));
    try {
      // A checkout into a scratch folder fetches the missing blobs in one batch.
      const env = { GIT_INDEX_FILE: join(work, 'index') };
      const tree = join(work, 'tree');
      mkdirSync(tree);
      const chunk = 500;
      for (let i = 0; i < paths.length; i += chunk) {
        const part = paths.slice(i, i + chunk);
        // The blobs in one request (a checkout alone would fetch them one by one); what this
        // leaves missing, the checkout fetches itself.
        const oids = (await gitOk(['ls-tree', tip, '--', ...part]))
          .split('\n')
          .map((line) => line.split(/\s+/)[2])
          .filter((oid): oid is string => oid !== undefined && /^[0-9a-f]{40,64}$/.test(oid));
        await git([
          '-c',
          'fetch.negotiationAlgorithm=noop',
          'fetch',
          '--quiet',
          '--no-tags',
          '--no-write-fetch-head',
          '--recurse-submodules=no',
          '--filter=blob:none',
          REMOTE,
          ...oids,
        ]);
        const result = await git(['--work-tree', tree, 'checkout', tip, '--', ...part], env);
        if (result.exitCode !== 0) {
          throw new StoreError(`${prefix}: cannot read records of ${where}: ${gitReason(result)}`);
        }
      }
      for (const path of paths) {
        try {
          out.set(path, readFileSync(join(tree, path), 'utf8'));
        } catch {
          // left out: reported by the caller as unreadable
        }
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return out;
  }

  /** Parses records newest first until `limit` usable ones; warns, by name, about the others. */
  function usable(
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
        options.warn(`${prefix}: skipped ${path}: it could not be read from ${where}`);
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
        found.push({ path, record });
      } catch (error) {
        if (!(error instanceof RecordError)) throw error;
        skipped++;
        options.warn(
          error.kind === 'newer'
            ? `${prefix}: refused ${path}: ${error.message}`
            : `${prefix}: skipped ${path}: ${error.message}`,
        );
      }
    }
    return { found, skipped };
  }

  async function readRecords(key: BaselineKey, limit: number): Promise<StoredRecord[]> {
    const fetched = await fetchTip();
    if (!fetched.ok) {
      options.warn(
        `${prefix}: cannot read ${where}: ${fetched.reason}. No baseline or trend is taken from the history in this run.`,
      );
      return [];
    }
    if (fetched.tip === undefined) return [];
    const tip = fetched.tip;
    const paths = await listPaths(tip, recordDir(key));
    const found: StoredRecord[] = [];
    // Read the newest `limit`; each record skipped brings in the next older one.
    let start = 0;
    while (found.length < limit && start < paths.length) {
      const batch = paths.slice(start, start + (limit - found.length));
      start += batch.length;
      let texts: Map<string, string>;
      try {
        texts = await readPaths(tip, batch);
      } catch (error) {
        if (!(error instanceof StoreError)) throw error;
        options.warn(
          `${error.message}. No baseline or trend is taken from the history in this run.`,
        );
        return [];
      }
      found.push(...usable(texts, batch, key, limit - found.length).found);
    }
    return found;
  }

  /** One record to append: its key, the run, and what the judge knew. */
  interface Entry {
    key: BaselineKey;
    results: KernelgateResults;
    context: SaveContext;
    runId?: string;
  }

  /**
   * Appends records in one commit and pushes it without force; a lost race builds the commit again
   * on the new tip. Returns each entry's path; an entry whose file the tip already holds with the
   * same bytes (a retried step) is not added again.
   */
  async function saveRecords(entries: Entry[]): Promise<string[]> {
    const work = mkdtempSync(join(tmpdir(), 'kg-history-write-'));
    try {
      const prepared = entries.map((entry, i) => {
        const merged: SaveContext = { ...options.defaults, ...entry.context };
        const runId = entry.runId ?? options.runId;
        const record = buildRecord(entry.results, {
          branch: entry.key.branch,
          sku: entry.key.sku,
          kernelgateVersion: options.kernelgateVersion,
          ...(runId !== undefined ? { runId } : {}),
          ...(merged.event !== undefined ? { event: merged.event } : {}),
          ...(merged.artifact !== undefined ? { artifact: merged.artifact } : {}),
          ...(merged.verdict !== undefined ? { verdict: merged.verdict } : {}),
          ...(merged.verdicts !== undefined ? { verdicts: merged.verdicts } : {}),
          ...(merged.references !== undefined ? { references: merged.references } : {}),
          ...(merged.confidence !== undefined ? { confidence: merged.confidence } : {}),
        });
        const file = join(work, `record-${i}.json`);
        writeFileSync(file, serializeRecord(record));
        return { entry, record, file, basePath: recordPath(entry.key, entry.results, runId) };
      });
      const first = prepared[0];
      const what = prepared.length === 1 ? 'this run was' : `these ${prepared.length} runs were`;
      const notStored = (why: string) =>
        new StoreError(`${prefix}: ${what} not stored on ${where}: ${why}`);
      let lastReason = '';
      for (let attempt = 1; attempt <= attempts; attempt++) {
        const fetched = await fetchTip();
        if (!fetched.ok) {
          // Without the tip there is nothing to append to: write nothing.
          throw notStored(`cannot read it (${fetched.reason})`);
        }
        const tip = fetched.tip;
        const env = { GIT_INDEX_FILE: join(work, `index-${attempt}`) };
        let before: number;
        if (tip !== undefined) {
          await gitOk(['read-tree', tip], env);
          before = (await gitOk(['ls-files'], env)).split('\n').filter(Boolean).length;
        } else {
          const readme = (await gitOk(['hash-object', '-w', '--', writeReadme(work)])).trim();
          await gitOk(['read-tree', '--empty'], env);
          await gitOk(['update-index', '--add', '--cacheinfo', `100644,${readme},README.md`], env);
          before = 1;
        }
        const existing = new Map(
          (await gitOk(['ls-files', '--stage'], env))
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => {
              const [meta = '', name = ''] = l.split('\t');
              return [name, meta.split(' ')[1] ?? ''] as const;
            }),
        );
        const paths: string[] = [];
        let added = 0;
        for (const p of prepared) {
          const blob = (await gitOk(['hash-object', '-w', '--', p.file])).trim();
          let path = p.basePath;
          let stored = false;
          for (let n = 2; existing.has(path); n++) {
            if (existing.get(path) === blob) {
              stored = true; // stored already (a retried step)
              break;
            }
            path = p.basePath.replace(/\.json$/, `-${n}.json`);
          }
          paths.push(path);
          if (stored) continue;
          existing.set(path, blob);
          await gitOk(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], env);
          added++;
        }
        if (added === 0) return paths;
        const after = (await gitOk(['ls-files'], env)).split('\n').filter(Boolean).length;
        if (after !== before + added) {
          // Never reached by construction; a guard so that no bug can push a smaller tree.
          throw notStored(
            `the new tree would hold ${after} files, the tip ${before} and ${added} new; not pushed`,
          );
        }
        // --missing-ok: the other records' blobs are on the remote, not here (a partial clone);
        // without it git would fetch every one of them to check.
        const tree = (await gitOk(['write-tree', '--missing-ok'], env)).trim();
        const run = first!.record.run;
        const message =
          prepared.length === 1
            ? `kernelgate: ${run.event ?? 'run'} ${run.commit?.slice(0, 12) ?? ''} on ${first!.entry.key.branch}, ${first!.entry.key.sku}\n\n${paths[0]}\n`
            : `kernelgate: ${added} runs imported\n\n${paths.join('\n')}\n`;
        const commit = (
          await gitOk(['commit-tree', tree, ...(tip ? ['-p', tip] : []), '-m', message])
        ).trim();
        // No '+' and no --force: the remote takes it only as a fast-forward of the tip we built on.
        const pushed = await git([
          'push',
          '--quiet',
          '--porcelain',
          REMOTE,
          `${commit}:refs/heads/${dataBranch}`,
        ]);
        if (pushed.exitCode === 0) {
          options.info?.(
            `${prefix}: stored ${added === 1 ? paths[0] : `${added} records`} on ${where} (${commit.slice(0, 12)})`,
          );
          return paths;
        }
        const said = `${pushed.stdout}\n${pushed.stderr}`;
        lastReason = gitReason(pushed);
        const lostRace =
          /non-fast-forward|fetch first|\[rejected\]|stale info|cannot lock ref|failed to update ref|failed to lock|incorrect old value|reference already exists/i.test(
            said,
          );
        if (!lostRace) throw notStored(`git push failed: ${lastReason}`);
        // Another writer moved the tip: back off (with jitter), then build on the new tip.
        const wait = Math.min(2000, 50 * 2 ** Math.min(attempt, 6)) * (0.5 + random());
        options.info?.(
          `${prefix}: the tip moved while storing (attempt ${attempt} of ${attempts}); retrying in ${Math.round(wait)} ms`,
        );
        await sleep(wait);
      }
      throw notStored(`the tip kept moving: ${attempts} attempts lost the race (${lastReason})`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  return {
    latest: (key) =>
      serial(async () => {
        const [newest] = await readRecords(key, 1);
        return newest === undefined
          ? undefined
          : {
              results: recordToResults(newest.record),
              path: `${dataBranch}:${newest.path}`,
            };
      }),
    history: (key, limit) =>
      serial(async () =>
        (await readRecords(key, limit)).map((r) => ({
          results: recordToResults(r.record),
          path: `${dataBranch}:${r.path}`,
        })),
      ),
    records: (key, limit) => serial(() => readRecords(key, limit)),
    allRecords: () =>
      serial(async () => {
        const fetched = await fetchTip();
        if (!fetched.ok) {
          options.warn(`${prefix}: cannot read ${where}: ${fetched.reason}.`);
          return [];
        }
        if (fetched.tip === undefined) return [];
        const paths = await listPaths(fetched.tip, 'records');
        const texts = await readPaths(fetched.tip, paths);
        return usable(texts, paths, undefined, paths.length).found;
      }),
    save: (key, results, context = {}) =>
      serial(async () => {
        const [path] = await saveRecords([{ key, results, context }]);
        return `${dataBranch}:${path}`;
      }),
    saveMany: (entries) =>
      serial(async () =>
        entries.length === 0
          ? []
          : (await saveRecords(entries)).map((path) => `${dataBranch}:${path}`),
      ),
    tip: () =>
      serial(async () => {
        const fetched = await fetchTip();
        return fetched.ok ? fetched.tip : undefined;
      }),
  };
}

function writeReadme(work: string): string {
  const path = join(work, 'README.md');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, README);
  return path;
}
