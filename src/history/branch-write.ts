// Appending records to the data branch (src/history/branch-store.ts): the records' paths, and a
// commit that adds them to the tip's tree, pushed without force; a push that loses a race is
// built again on the new tip.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { safeSegment, StoreError, type BaselineKey, type SaveContext } from '../store/index.js';
import type { KernelgateResults } from '../results/index.js';
import { buildRecord, HISTORY_FORMAT, serializeRecord, type HistoryRecord } from './record.js';
import { type BranchGit, fetchTip, gitReason, REMOTE } from './branch-git.js';

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
  attempts: number;
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
  let before: number;
  if (tip !== undefined) {
    await g.ok(['read-tree', tip], env);
    before = (await g.ok(['ls-files'], env)).split('\n').filter(Boolean).length;
  } else {
    const readme = (await g.ok(['hash-object', '-w', '--', writeReadme(work)])).trim();
    await g.ok(['read-tree', '--empty'], env);
    await g.ok(['update-index', '--add', '--cacheinfo', `100644,${readme},README.md`], env);
    before = 1;
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
  const paths: string[] = [];
  let added = 0;
  for (const p of prepared) {
    const blob = (await g.ok(['hash-object', '-w', '--', p.file])).trim();
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

/**
 * Appends records in one commit and pushes it without force; a lost race builds the commit again
 * on the new tip. Returns each entry's path; an entry whose file the tip already holds with the
 * same bytes (a retried step) is not added again.
 */
export async function saveRecords(
  g: BranchGit,
  entries: Entry[],
  options: WriteOptions,
): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), 'kg-history-write-'));
  try {
    const prepared = prepare(entries, options, work);
    const first = prepared[0];
    const what = prepared.length === 1 ? 'this run was' : `these ${prepared.length} runs were`;
    const notStored = (why: string) =>
      new StoreError(`${g.prefix}: ${what} not stored on ${g.where}: ${why}`);
    let lastReason = '';
    for (let attempt = 1; attempt <= options.attempts; attempt++) {
      const fetched = await fetchTip(g);
      if (!fetched.ok) {
        // Without the tip there is nothing to append to: write nothing.
        throw notStored(`cannot read it (${fetched.reason})`);
      }
      const tip = fetched.tip;
      const env = { GIT_INDEX_FILE: join(work, `index-${attempt}`) };
      const { before, added, paths } = await stage(g, tip, prepared, env, work);
      if (added === 0) return paths;
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
      const run = first!.record.run;
      const message =
        prepared.length === 1
          ? `kernelgate: ${run.event ?? 'run'} ${run.commit?.slice(0, 12) ?? ''} on ${first!.entry.key.branch}, ${first!.entry.key.sku}\n\n${paths[0]}\n`
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
      if (pushed.exitCode === 0) {
        options.info?.(
          `${g.prefix}: stored ${added === 1 ? paths[0] : `${added} records`} on ${g.where} (${commit.slice(0, 12)})`,
        );
        return paths;
      }
      lastReason = gitReason(pushed);
      if (pushed.timedOut) {
        // The remote may or may not have taken it; a later run finds it there and adds nothing.
        throw notStored(lastReason);
      }
      if (!LOST_RACE.test(`${pushed.stdout}\n${pushed.stderr}`)) {
        throw notStored(`git push failed: ${lastReason}`);
      }
      // Another writer moved the tip: back off (with jitter), then build on the new tip.
      const wait = Math.min(2000, 50 * 2 ** Math.min(attempt, 6)) * (0.5 + options.random());
      options.info?.(
        `${g.prefix}: the tip moved while storing (attempt ${attempt} of ${options.attempts}); retrying in ${Math.round(wait)} ms`,
      );
      await options.sleep(wait);
    }
    throw notStored(
      `the tip kept moving: ${options.attempts} attempts lost the race (${lastReason})`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
