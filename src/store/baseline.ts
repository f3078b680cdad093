// The baseline store: results of trusted runs (push to main, schedule), kept per branch and GPU SKU,
// with history for trend charts. PR runs only read it, so fork PRs need no write access. Two
// stores sit behind one interface: a directory of full results files (this file; the command
// line's default) and a git data branch of compact records (src/history/branch-store.ts).
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadResults } from '../results/index.js';
import type { KernelgateResults } from '../results/index.js';

export interface BaselineKey {
  /** Branch whose newest trusted results are the baseline, e.g. `main` (a PR's base branch). */
  branch: string;
  /** Normalised GPU SKU (`H100-SXM`, `H200`, ...): results never cross SKUs. */
  sku: string;
}

export interface StoredBaseline {
  results: KernelgateResults;
  /** Where it came from, for the report ("baseline: main @ 1a2b3c4, 2026-11-21"). */
  path: string;
}

/** A value now (the directory store) or later (the data-branch store, which runs git). */
export type Awaitable<T> = T | Promise<T>;

/** What the judge knew about a run when it is stored; a store keeps what it has room for. */
export interface SaveContext {
  /** the event that triggered the run: push, schedule, workflow_dispatch */
  event?: string;
  /** the gate's verdict on this run */
  verdict?: 'pass' | 'fail';
  /** per case ("kernel/variant/case"): its performance verdict against its own baseline */
  verdicts?: Record<string, string>;
  /** where the full results (raw samples included) are kept: the run's page and artifact */
  artifact?: string;
  /** per kernel: the variant its candidates are measured against (kernel.yml speed_reference) */
  references?: Record<string, string>;
  /** confidence of the median intervals a compact record keeps (compare.confidence) */
  confidence?: number;
}

export interface BaselineStore {
  /** The newest stored run of the branch on the SKU; undefined when there is none. */
  latest(key: BaselineKey): Awaitable<StoredBaseline | undefined>;
  /** Stores a trusted run; returns where it was stored. */
  save(key: BaselineKey, results: KernelgateResults, context?: SaveContext): Awaitable<string>;
  /** Up to `limit` stored runs, newest first. */
  history(key: BaselineKey, limit: number): Awaitable<StoredBaseline[]>;
}

/**
 * A store that could not read or write: the message says what and why. The run is judged as if
 * nothing were stored (a failed read) or is left out of the store (a failed write); its verdict
 * does not change.
 */
export class StoreError extends Error {}

/** The directory store answers at once. */
export interface DirectoryBaselineStore extends BaselineStore {
  latest(key: BaselineKey): StoredBaseline | undefined;
  save(key: BaselineKey, results: KernelgateResults, context?: SaveContext): string;
  history(key: BaselineKey, limit: number): StoredBaseline[];
}

/** Branch and SKU become folder names; anything outside a safe set is replaced, never trusted. */
export function safeSegment(value: string, field: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_');
  if (cleaned === '' || cleaned === '_') {
    throw new Error(`baseline store: ${field} ${JSON.stringify(value)} is not usable as a name`);
  }
  return cleaned;
}

/**
 * A directory store: `<root>/<branch>/<sku>/<started_at>-<sha>.json`, one file per trusted run.
 * Writes go to a temporary name and are renamed into place, so a reader never sees half a file and
 * concurrent writers (matrix jobs) each add their own file instead of clobbering one `latest.json`.
 */
export function fileBaselineStore(root: string): DirectoryBaselineStore {
  const dirOf = (key: BaselineKey) =>
    join(root, safeSegment(key.branch, 'branch'), safeSegment(key.sku, 'GPU SKU'));

  const entries = (key: BaselineKey): string[] => {
    const dir = dirOf(key);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .reverse()
      .map((name) => join(dir, name));
  };

  return {
    latest(key) {
      const [newest] = entries(key);
      return newest === undefined ? undefined : { results: loadResults(newest), path: newest };
    },
    history(key, limit) {
      return entries(key)
        .slice(0, limit)
        .map((path) => ({ results: loadResults(path), path }));
    },
    save(key, results) {
      const dir = dirOf(key);
      mkdirSync(dir, { recursive: true });
      const stamp = results.run.started_at.replace(/[^0-9A-Za-z]/g, '');
      const sha = safeSegment((results.run.git_sha ?? 'nosha').slice(0, 12), 'git sha');
      const path = join(dir, `${stamp}-${sha}.json`);
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(results, null, 2) + '\n');
      renameSync(tmp, path);
      return path;
    },
  };
}

/** Reads a results file given explicitly (the `baseline` input or `--baseline`). */
export function explicitBaseline(path: string): StoredBaseline {
  if (!existsSync(path)) {
    throw new Error(`baseline ${path}: no such file`);
  }
  return { results: loadResults(path), path };
}
