// Appending records to the data branch (src/history/branch-store.ts): the records' paths, and a
// commit that adds them to the tip's tree, pushed without force; a push that loses a race is
// built again on the new tip.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { safeSegment, StoreError, type BaselineKey, type SaveContext } from '../store/index.js';
import type { KernelgateResults } from '../results/index.js';
import { buildRecord, HISTORY_FORMAT, serializeRecord, type HistoryRecord } from './record.js';
import type { ExecResult } from '../lib/index.js';
import {
  type BranchGit,
  fetchTip,
  gitReason,
  localLines,
  pushRefusal,
  REMOTE,
} from './branch-git.js';

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

const README = `# kernelgate history

Written by kernelgate (https://github.com/kernelgate/kernelgate): one compact record per trusted
run (${HISTORY_FORMAT}), under records/<GPU SKU>/<branch>/<yyyy-mm>/. Append-only: kernelgate
adds files and never rewrites or force-pushes this branch. Do not commit to it by hand; see
docs/history.md in kernelgate for the layout and how to read it.
`;

function writeReadme(work: string): string {
  const path = join(work, 'README.md');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, README);
  return path;
}

/** One record to append: its key, the run, and what the judge knew. */
export interface Entry {
  key: BaselineKey;
  results: KernelgateResults;
  context: SaveContext;
  runId?: string;
}

/** What writing needs of the store's options. */
export interface WriteOptions {
  kernelgateVersion: string;
  defaults?: SaveContext;
  runId?: string;
  /** how long a write may keep losing races to other writers before it gives up */
  raceBudgetMs: number;
  nowMs: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  info?: (message: string) => void;
}

/** A record made and written to a scratch file, with the path it is to have. */
interface Prepared {
  entry: Entry;
  record: HistoryRecord;
  file: string;
  basePath: string;
  /** its blob, once hashed */
  blob?: string;
}

function prepare(entries: Entry[], options: WriteOptions, work: string): Prepared[] {
  return entries.map((entry, i) => {
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
      ...(merged.accepted !== undefined ? { accepted: merged.accepted } : {}),
      ...(merged.references !== undefined ? { references: merged.references } : {}),
      ...(merged.confidence !== undefined ? { confidence: merged.confidence } : {}),
    });
    const file = join(work, `record-${i}.json`);
    writeFileSync(file, serializeRecord(record));
    return { entry, record, file, basePath: recordPath(entry.key, entry.results, runId) };
  });
}

/**
 * An index (GIT_INDEX_FILE in `env`) holding the tip's tree, or a README on a new branch, plus the
 * records: `before` files, `added` new ones at `paths` (a record the tip holds with the same bytes,
 * a retried step, is not added again; another one at its path gets -2, -3, …).
 */
async function stage(
  g: BranchGit,
  tip: string | undefined,
  prepared: Prepared[],
  env: Record<string, string>,
  work: string,
): Promise<{ before: number; added: number; paths: string[] }> {
  if (tip !== undefined) {
    await g.ok(['read-tree', tip], env);
  } else {
    const readme = (await g.ok(['hash-object', '-w', '--', writeReadme(work)])).trim();
    await g.ok(['read-tree', '--empty'], env);
    await g.ok(['update-index', '--add', '--cacheinfo', `100644,${readme},README.md`], env);
  }
  const existing = new Map(
    (await g.ok(['ls-files', '--stage'], env))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [meta = '', name = ''] = l.split('\t');
        return [name, meta.split(' ')[1] ?? ''] as const;
      }),
  );
  const before = existing.size;
  const paths: string[] = [];
  let added = 0;
  for (const p of prepared) {
    // The same bytes on every try: hashed (and written to the cache repository) once.
    p.blob ??= (await g.ok(['hash-object', '-w', '--', p.file])).trim();
    const blob = p.blob;
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
    await g.ok(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], env);
    added++;
  }
  return { before, added, paths };
}

/** A push the remote refused because another writer moved the tip first. */
const LOST_RACE =
  /non-fast-forward|fetch first|\[rejected\]|stale info|cannot lock ref|failed to update ref|failed to lock|incorrect old value|reference already exists/i;

/** One try: stored (the paths), nothing to add (the paths), or the push's result. */
type Try =
  | { done: true; paths: string[]; commit?: string; added: number }
  | { done: false; pushed: ExecResult };

/** Builds the commit on the tip just fetched and pushes it without force. */
async function tryOnce(
  g: BranchGit,
  prepared: Prepared[],
  work: string,
  attempt: number,
  notStored: (why: string) => StoreError,
): Promise<Try> {
  const fetched = await fetchTip(g);
  if (!fetched.ok) {
    // Without the tip there is nothing to append to: write nothing.
    throw notStored(`cannot read it (${fetched.reason})`);
  }
  const tip = fetched.tip;
  const env = { GIT_INDEX_FILE: join(work, `index-${attempt}`) };
  const { before, added, paths } = await stage(g, tip, prepared, env, work);
  if (added === 0) return { done: true, paths, added };
  const after = (await g.ok(['ls-files'], env)).split('\n').filter(Boolean).length;
  if (after !== before + added) {
    // Never reached by construction; a guard so that no bug can push a smaller tree.
    throw notStored(
      `the new tree would hold ${after} files, the tip ${before} and ${added} new; not pushed`,
    );
  }
  // --missing-ok: the other records' blobs are on the remote, not here (a partial clone);
  // without it git would fetch every one of them to check.
  const tree = (await g.ok(['write-tree', '--missing-ok'], env)).trim();
  const first = prepared[0]!;
  const run = first.record.run;
  const message =
    prepared.length === 1
      ? `kernelgate: ${run.event ?? 'run'} ${run.commit?.slice(0, 12) ?? ''} on ${first.entry.key.branch}, ${first.entry.key.sku}\n\n${paths[0]}\n`
      : `kernelgate: ${added} runs imported\n\n${paths.join('\n')}\n`;
  const commit = (
    await g.ok(['commit-tree', tree, ...(tip ? ['-p', tip] : []), '-m', message])
  ).trim();
  // No '+' and no --force: the remote takes it only as a fast-forward of the tip we built on.
  const pushed = await g.run([
    'push',
    '--quiet',
    '--porcelain',
    REMOTE,
    `${commit}:refs/heads/${g.dataBranch}`,
  ]);
  return pushed.exitCode === 0 ? { done: true, paths, commit, added } : { done: false, pushed };
}

/**
 * The wait before try `attempt + 1`: 0.5 s doubling to at most 8 s, times 0.5 to 1.5 at random,
 * so that writers who lost together do not come back together.
 */
export function backoffMs(attempt: number, random: () => number): number {
  return Math.min(8000, 500 * 2 ** Math.min(attempt - 1, 4)) * (0.5 + random());
}

/**
 * Appends records in one commit and pushes it without force; a lost race builds the commit again
 * on the new tip, with a jittered backoff, until `raceBudgetMs` has passed (not a number of tries:
 * sixteen writers at once had dropped a record after 12). Returns each entry's path; an entry
 * whose file the tip already holds with the same bytes (a retried step) is not added again.
 */
export async function saveRecords(
  g: BranchGit,
  entries: Entry[],
  options: WriteOptions,
): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), 'kg-history-write-'));
  try {
    const prepared = prepare(entries, options, work);
    const what = prepared.length === 1 ? 'this run was' : `these ${prepared.length} runs were`;
    const notStored = (why: string) =>
      new StoreError(`${g.prefix}: ${what} not stored on ${g.where}: ${why}`);
    const startMs = options.nowMs();
    for (let attempt = 1; ; attempt++) {
      const tried = await tryOnce(g, prepared, work, attempt, notStored);
      if (tried.done) {
        if (tried.commit !== undefined) {
          options.info?.(
            `${g.prefix}: stored ${tried.added === 1 ? tried.paths[0] : `${tried.added} records`} on ${g.where} (${tried.commit.slice(0, 12)})`,
          );
        }
        return tried.paths;
      }
      const { pushed } = tried;
      if (pushed.timedOut) {
        // The remote may or may not have taken it; a later run finds it there and adds nothing.
        throw notStored(gitReason(pushed));
      }
      if (!LOST_RACE.test(localLines(pushed))) {
        throw notStored(pushRefusal(pushed) ?? `git push failed: ${gitReason(pushed)}`);
      }
      // Another writer moved the tip: back off (with jitter), then build on the new tip.
      const wait = backoffMs(attempt, options.random);
      const spentS = (options.nowMs() - startMs) / 1000;
      if (spentS + wait / 1000 > options.raceBudgetMs / 1000) {
        throw notStored(
          `the tip kept moving: ${attempt} attempts in ${Math.round(spentS)} s lost the race to other writers ` +
            `(${gitReason(pushed)}); kernelgate tries for ${options.raceBudgetMs / 1000} s`,
        );
      }
      options.info?.(
        `${g.prefix}: the tip moved while storing (attempt ${attempt}); retrying in ${Math.round(wait)} ms`,
      );
      await options.sleep(wait);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
