// From baseline-dir to the data branch: every results file of a directory store
// (<root>/<branch>/<sku>/<started>-<sha>.json) becomes a record, oldest first, in commits of up to
// 200 records, pushed like any other write (never forced). Running it again adds nothing. `kernelgate history import` is src/cli/history.ts.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KernelgateResults } from '../results/index.js';
import { InputError, loadResults } from '../results/index.js';
import type { BranchStore } from './branch-store.js';

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
