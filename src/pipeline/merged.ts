// A merged run (docs/scaling.md): the shards' downloaded results joined into one run that is
// judged, reported and gated once, with the baseline each case is judged against. The action's
// `merge: DIR` input and `kernelgate merge` both come here.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { explicitBaseline, type BaselineStore, type StoredBaseline } from '../store/index.js';
import {
  compositeBaseline,
  findShardFiles,
  mergeShards,
  readShardDocuments,
} from '../shard/index.js';
import { type AncestryCheck, ancestorBaseline } from './pr-baseline.js';
import type { FullRun } from './run.js';

export interface MergeContext {
  /** the folders holding the shards' results, resolved */
  dirs: string[];
  shards: number;
  cwd: string;
  /** where the merged results are written */
  outDir: string;
  /** an explicit baseline file (the `baseline` input), resolved */
  baselinePath: string | undefined;
  store: BaselineStore;
  /** the branch whose baseline judges the run (a PR's base branch) */
  baselineBranch: string | undefined;
  /**
   * a pull request's base commit and a checkout: each GPU model's stored baseline is the nearest
   * stored ancestor of it (src/pipeline/pr-baseline.ts); undefined: the newest stored run
   */
  ancestry?: AncestryCheck | undefined;
  /** the branch the run is stored under when trusted; undefined: not stored */
  saveBranch: string | undefined;
  warning(message: string): void;
  info(message: string): void;
}

/**
 * The shards' results merged, with the baseline each case is judged against (the stored baseline
 * of its shard's GPU SKU) and, for a trusted run on one SKU, where it is stored after the gate.
 */
export async function mergedRun(ctx: MergeContext): Promise<FullRun> {
  const files = findShardFiles(ctx.dirs);
  const docs = readShardDocuments(files, ctx.cwd);
  const merged = mergeShards(docs, ctx.shards);
  for (const s of merged.shards) {
    if (s.status === 'ok')
      ctx.info(`${`shard ${s.index}/${s.count}`}: ${s.cases.length} cases from ${s.file ?? '?'}`);
    else ctx.warning(s.message ?? `shard ${s.index}/${s.count} ${s.status}`);
  }
  mkdirSync(ctx.outDir, { recursive: true });
  const resultsPath = join(ctx.outDir, 'results.json');
  writeFileSync(resultsPath, JSON.stringify(merged.results, null, 2) + '\n');
  const notes: string[] = [];
  let baseline: StoredBaseline | undefined;
  if (ctx.baselinePath !== undefined) {
    if (existsSync(ctx.baselinePath)) baseline = explicitBaseline(ctx.baselinePath);
    else {
      notes.push(
        `The baseline ${ctx.baselinePath} does not exist: every case is NEW. Baselines are written by trusted runs (push, schedule); run one first.`,
      );
    }
  } else if (ctx.baselineBranch !== undefined) {
    const branch = ctx.baselineBranch;
    const seen = { passedOver: false };
    baseline = await compositeBaseline(merged, (sku) =>
      storedOf(ctx, { branch, sku }, notes, seen),
    );
    if (baseline === undefined && !seen.passedOver) {
      notes.push(
        `No stored baseline for branch ${branch} on ${[...merged.skus.keys()].join(', ') || 'any GPU'}: every case is NEW.`,
      );
    }
  }
  let pendingBaseline: FullRun['pendingBaseline'];
  if (ctx.saveBranch !== undefined) {
    if (merged.skus.size === 1) {
      pendingBaseline = {
        store: ctx.store,
        branch: ctx.saveBranch,
        sku: [...merged.skus.keys()][0] as string,
      };
    } else if (merged.skus.size > 1) {
      notes.push(
        "Not stored as a baseline: the shards ran on several GPU SKUs, and a stored run holds one SKU's results.",
      );
    }
  }
  for (const note of notes) ctx.warning(note);
  return { results: merged.results, resultsPath, baseline, pendingBaseline, notes };
}

/**
 * One GPU model's stored baseline of the merged run: for a pull request whose base commit is
 * known, the nearest stored ancestor of it (the lines in the log, a note when none is, and
 * `seen.passedOver` set); else the newest stored run.
 */
async function storedOf(
  ctx: MergeContext,
  key: { branch: string; sku: string },
  notes: string[],
  seen: { passedOver: boolean },
): Promise<StoredBaseline | undefined> {
  if (ctx.ancestry === undefined) return ctx.store.latest(key);
  const found = await ancestorBaseline(ctx.store, key, ctx.ancestry);
  for (const line of found.lines) ctx.info(line);
  if (found.stored === undefined && found.lines.length > 0) {
    seen.passedOver = true;
    notes.push(
      `No stored run of branch ${key.branch} on ${key.sku} is an ancestor of the pull request's base ` +
        `${ctx.ancestry.baseSha.slice(0, 12)} (the log names those passed over): every case on it not timed beside the base is NEW.`,
    );
  }
  return found.stored;
}
