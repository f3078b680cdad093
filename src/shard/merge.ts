// Joins the results documents of a split run's shards into one, and says by name which shard did
// not report or failed and which cases have no result: the gate fails on it (shardProblems), the
// report shows it, and nothing about a lost shard passes silently (docs/scaling.md).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type {
  Device,
  Diagnostic,
  KernelgateResults,
  KernelInfo,
  MergedShard,
} from '../results/index.js';
import { HARNESS_STOPPED_CODES, InputError, loadResults } from '../results/index.js';

export interface ShardDocument {
  /** where it was read from, as the messages show it */
  file: string;
  results: KernelgateResults;
}

/** At most this many case ids are named in one message; the rest are counted. */
export const NAMED_CASES = 6;

function caseList(ids: string[]): string {
  const shown = ids.slice(0, NAMED_CASES).join(', ');
  return ids.length > NAMED_CASES ? `${shown} and ${ids.length - NAMED_CASES} more` : shown;
}

/** Results documents under the given folders (artifacts as download-artifact lays them out). */
export function findShardFiles(dirs: string[], name = 'results.json'): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < 4) walk(path, depth + 1);
      else if (entry.isFile() && entry.name === name) found.push(path);
    }
  };
  for (const dir of dirs) {
    if (!existsSync(dir)) {
      throw new InputError(`${dir}: no such folder (the shards' downloaded results)`);
    }
    if (statSync(dir).isFile()) found.push(dir);
    else walk(dir, 0);
  }
  return found;
}

/** Reads and validates each shard's document; a document that is not a shard's is an error. */
export function readShardDocuments(files: string[], cwd: string): ShardDocument[] {
  return files.map((path) => {
    const file = relative(cwd, path) || path;
    const results = loadResults(path);
    if (results.run.shard === undefined) {
      throw new InputError(
        `${file}: run.shard is absent: these results are not one shard's (made by \`kernelgate run --shard i/n\` or the action's shard input).`,
      );
    }
    return { file, results };
  });
}

function gpuOf(doc: KernelgateResults): Device {
  if (doc.run.shard?.gpu) return doc.run.shard.gpu;
  const g = doc.environment.gpu;
  return {
    name: g.name,
    ...(g.sku !== undefined ? { sku: g.sku } : {}),
    ...(doc.run.host !== undefined ? { host: doc.run.host } : {}),
  };
}

export function skuOf(gpu: Device): string {
  return gpu.sku && gpu.sku !== 'unknown' ? gpu.sku : gpu.name;
}

export interface Merged {
  results: KernelgateResults;
  shards: MergedShard[];
  /** the GPU SKUs the shards ran on, with the shards (indices) of each */
  skus: Map<string, number[]>;
}

type ShardRecord = NonNullable<KernelgateResults['run']['shard']>;

/** The documents by their shard index; a count that disagrees, or an index twice, is an error. */
function indexShards(docs: ShardDocument[], count: number): Map<number, ShardDocument> {
  const byIndex = new Map<number, ShardDocument>();
  for (const d of docs) {
    const s = d.results.run.shard as ShardRecord;
    if (s.count !== count) {
      throw new InputError(
        `${d.file}: run.shard.count is ${s.count}, but the merge expects ${count} shards (the matrix and the merge disagree).`,
      );
    }
    const seen = byIndex.get(s.index);
    if (seen !== undefined) {
      throw new InputError(
        `${d.file} and ${seen.file} both say they are shard ${s.index}/${count}: keep one (a re-run job uploads its artifact again).`,
      );
    }
    byIndex.set(s.index, d);
  }
  return byIndex;
}

/** A shard that reported: ok, or failed when its harness stopped or a case it owned has no result. */
function reportedShard(doc: ShardDocument, index: number, count: number): MergedShard {
  const record = doc.results.run.shard as ShardRecord;
  const reported = new Set(doc.results.cases.map((c) => `${c.kernel}/${c.case}`));
  const unreported = record.cases.filter((id) => !reported.has(id));
  const harness = doc.results.diagnostics.filter((d) => HARNESS_STOPPED_CODES.has(d.code));
  const problems: string[] = [];
  for (const h of harness) {
    problems.push((h.message.split('\n')[0] as string).replace(/\s*Last lines:\s*$/, ''));
  }
  if (unreported.length) problems.push(`no results for cases ${caseList(unreported)}`);
  return {
    index,
    count,
    status: problems.length ? 'failed' : 'ok',
    cases: record.cases,
    ...(unreported.length ? { unreported } : {}),
    ...(problems.length
      ? { message: `shard ${index}/${count} failed: ${problems.join('; ')}` }
      : {}),
    file: doc.file,
    gpu: gpuOf(doc.results),
    ...(doc.results.run.duration_s !== undefined ? { duration_s: doc.results.run.duration_s } : {}),
  };
}

/** Each shard's status; `owned` collects the cases the shards owned (the reference's split for a missing one). */
function shardStatuses(
  byIndex: Map<number, ShardDocument>,
  count: number,
  reference: ShardRecord | undefined,
  owned: Set<string>,
): MergedShard[] {
  const shards: MergedShard[] = [];
  for (let index = 1; index <= count; index++) {
    const doc = byIndex.get(index);
    if (doc === undefined) {
      const name = `shard ${index}/${count}`;
      const cases = reference?.plan.shards[index - 1] ?? [];
      cases.forEach((id) => owned.add(id));
      const message = cases.length
        ? `${name} did not report: no results for cases ${caseList(cases)}`
        : `${name} did not report${reference ? ' (it owned no case)' : ', and no shard reported its split'}`;
      shards.push({ index, count, status: 'missing', cases, unreported: cases, message });
      continue;
    }
    (doc.results.run.shard as ShardRecord).cases.forEach((id) => owned.add(id));
    shards.push(reportedShard(doc, index, count));
  }
  return shards;
}

/** The error of a shard that did not report or failed, with what to do. */
function shardDiagnostic(s: MergedShard): Diagnostic {
  return {
    level: 'error',
    code: s.status === 'missing' ? 'shard.missing' : 'shard.failed',
    message: s.message as string,
    fix:
      s.status === 'missing'
        ? `Open the matrix job of shard ${s.index}: it failed before uploading its results or was cancelled. Re-run it, then the merge.`
        : `Read shard ${s.index}'s harness.log (in its artifact); re-run the job once the cause is fixed.`,
    source: 'merge',
  };
}

/**
 * The reporting shards' cases, each with the GPU it ran on; a case measured twice (splits that
 * disagree) keeps the first shard's record and is named. And the SKUs with their shards.
 */
function joinCases(byIndex: Map<number, ShardDocument>, reporting: number[], count: number) {
  const cases: KernelgateResults['cases'] = [];
  const seenCase = new Set<string>();
  const twice: string[] = [];
  const skus = new Map<string, number[]>();
  for (const index of reporting) {
    const doc = byIndex.get(index) as ShardDocument;
    const gpu = gpuOf(doc.results);
    const sku = skuOf(gpu);
    skus.set(sku, [...(skus.get(sku) ?? []), index]);
    for (const c of doc.results.cases) {
      const key = `${c.kernel}/${c.variant}/${c.case}`;
      if (seenCase.has(key)) {
        twice.push(`${key} (shard ${index}/${count})`);
        continue;
      }
      seenCase.add(key);
      cases.push(c.device ? c : { ...c, device: gpu });
    }
  }
  return { cases, twice, skus };
}

/** What the joined cases say: cases measured twice, cases no shard owned, several SKUs. */
function joinDiagnostics(
  byIndex: Map<number, ShardDocument>,
  reporting: number[],
  count: number,
  { twice, owned, skus }: { twice: string[]; owned: Set<string>; skus: Map<string, number[]> },
): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  if (twice.length) {
    diagnostics.push({
      level: 'warning',
      code: 'shard.duplicate_case',
      message: `Measured by more than one shard; the lower shard's result is kept: ${caseList(twice)}`,
      source: 'merge',
    });
  }
  // Cases the shards' splits leave to nobody: only when the splits disagree.
  const allPlanned = new Set<string>();
  for (const index of reporting) {
    for (const list of byIndex.get(index)?.results.run.shard?.plan.shards ?? []) {
      list.forEach((id) => allPlanned.add(id));
    }
  }
  const orphaned = [...allPlanned].filter((id) => !owned.has(id));
  if (orphaned.length) {
    diagnostics.push({
      level: 'error',
      code: 'shard.unowned',
      message: `No shard owned cases ${caseList(orphaned)}: the shards' splits disagree`,
      fix: 'Let every shard read the same baseline (or none): docs/scaling.md.',
      source: 'merge',
    });
  }
  if (skus.size > 1) {
    diagnostics.push({
      level: 'info',
      code: 'shard.skus',
      message: `The shards ran on ${[...skus].map(([sku, idx]) => `${sku} (shard ${idx.map((i) => `${i}/${count}`).join(', ')})`).join(' and ')}: each case is compared with the baseline of its own GPU SKU.`,
      source: 'merge',
    });
  }
  return diagnostics;
}

/** The merged run's record: the earliest start, the latest finish, the first shard's commit. */
function mergedRunRecord(
  docsInOrder: KernelgateResults[],
  count: number,
  shards: MergedShard[],
): KernelgateResults['run'] {
  const first = docsInOrder[0];
  const starts = docsInOrder.map((d) => d.run.started_at).sort();
  const ends = docsInOrder
    .map((d) => d.run.finished_at)
    .filter((x): x is string => x !== undefined)
    .sort();
  return {
    started_at: starts[0] ?? new Date(0).toISOString(),
    ...(ends.length ? { finished_at: ends[ends.length - 1] as string } : {}),
    harness: first?.run.harness ?? 'none: no shard reported',
    command: `kernelgate merge (${docsInOrder.length} of ${count} shards reported)`,
    ...(first?.run.id !== undefined ? { id: first.run.id } : {}),
    ...(first?.run.git_sha !== undefined ? { git_sha: first.run.git_sha } : {}),
    ...(first?.run.git_ref !== undefined ? { git_ref: first.run.git_ref } : {}),
    ...(first?.run.paired_base !== undefined ? { paired_base: first.run.paired_base } : {}),
    ...(docsInOrder.some((d) => d.run.synthetic) ? { synthetic: true } : {}),
    ...mergedSelection(first),
    shards,
  };
}

/**
 * What the shards were asked to measure (the first's --only, --ci, --variants, --case-params),
 * less its own case list: the merged run answers for what every shard owned (run.shards).
 */
function mergedSelection(first: KernelgateResults | undefined) {
  const selection = first?.run.selection;
  if (selection === undefined) return {};
  const rest = { ...selection };
  delete rest.cases;
  return { selection: rest };
}

/**
 * One results document from the shards of an n-way split. Shards are matched by run.shard.index;
 * what a shard owned comes from its own record or, for one that never reported, from the split a
 * reporting shard recorded. A shard is `failed` when its harness failed or any case it owned has no
 * result, `missing` when it left no document; each gets an error diagnostic naming it and its cases.
 */
export function mergeShards(docs: ShardDocument[], count: number): Merged {
  if (!Number.isInteger(count) || count < 1) {
    throw new InputError(`shards must be a whole number of at least 1, got ${count}`);
  }
  const byIndex = indexShards(docs, count);
  const reporting = [...byIndex.keys()].sort((a, b) => a - b);
  const diagnostics: Diagnostic[] = [];
  // The split as the lowest reporting shard recorded it; shards that disagree are said to.
  const reference = reporting.length
    ? (byIndex.get(reporting[0] as number) as ShardDocument).results.run.shard
    : undefined;
  const digests = new Set(reporting.map((i) => byIndex.get(i)?.results.run.shard?.plan.digest));
  if (digests.size > 1) {
    diagnostics.push({
      level: 'warning',
      code: 'shard.plan_mismatch',
      message: `The shards computed different splits (${[...digests].join(', ')}): each reporting shard's own case list is used, and cases no shard measured are listed below. Shards agree when they read the same stored baseline; a matrix over several GPU SKUs balances by estimate (docs/scaling.md).`,
      source: 'merge',
    });
  }
  const owned = new Set<string>();
  const shards = shardStatuses(byIndex, count, reference, owned);
  diagnostics.push(...shards.filter((s) => s.status !== 'ok').map(shardDiagnostic));
  const { cases, twice, skus } = joinCases(byIndex, reporting, count);
  diagnostics.push(...joinDiagnostics(byIndex, reporting, count, { twice, owned, skus }));

  const docsInOrder = reporting.map((i) => (byIndex.get(i) as ShardDocument).results);
  const first = docsInOrder[0];
  const merged: KernelgateResults = {
    schema: 'kernelgate/results@1',
    run: mergedRunRecord(docsInOrder, count, shards),
    environment: first?.environment ?? { gpu: { name: 'unknown', sku: 'unknown' } },
    diagnostics: [...diagnostics, ...dedupeDiagnostics(docsInOrder.flatMap((d) => d.diagnostics))],
    ...(docsInOrder.some((d) => d.builds)
      ? {
          builds: dedupeBy(
            docsInOrder.flatMap((d) => d.builds ?? []),
            (b) => `${b.kernel}/${b.variant}`,
          ),
        }
      : {}),
    kernels: mergeKernels(docsInOrder.flatMap((d) => d.kernels)),
    cases,
    ...(docsInOrder.some((d) => d.tails) ? { tails: mergeTails(docsInOrder) } : {}),
    ...(docsInOrder.some((d) => d.deep)
      ? {
          deep: {
            sanitizer: docsInOrder.flatMap((d) => d.deep?.sanitizer ?? []),
            ncu: docsInOrder.flatMap((d) => d.deep?.ncu ?? []),
          },
        }
      : {}),
  };
  return { results: merged, shards, skus };
}

/**
 * The shards' tails, one record of each kernel/variant/case: every shard with a case of a kernel
 * verifies its tails (tails.py), so a tail verified twice keeps its worse record.
 */
function mergeTails(docs: KernelgateResults[]): NonNullable<KernelgateResults['tails']> {
  const all = docs.flatMap((d) => d.tails ?? []);
  const worstFirst = [...all].sort((a, b) => Number(a.status === 'ok') - Number(b.status === 'ok'));
  const kept = new Set(dedupeBy(worstFirst, (t) => `${t.kernel}/${t.variant}/${t.case}`));
  return all.filter((t) => kept.has(t));
}

function dedupeBy<T>(items: T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((t) => {
    const k = key(t);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function dedupeDiagnostics(items: Diagnostic[]): Diagnostic[] {
  return dedupeBy(
    items,
    (d) => `${d.code}\u0000${d.kernel ?? ''}\u0000${d.variant ?? ''}\u0000${d.message}`,
  );
}

/** Each kernel once; a variant's status is the worst any shard saw (error over ok over skipped). */
function mergeKernels(infos: KernelInfo[]): KernelInfo[] {
  const rank = (s: string | undefined) =>
    s === 'error' ? 3 : s === 'ok' ? 2 : s === 'skipped' ? 1 : 0;
  const out = new Map<string, KernelInfo>();
  for (const k of infos) {
    const seen = out.get(k.name);
    if (seen === undefined) {
      out.set(k.name, { ...k, variants: k.variants.map((v) => ({ ...v })) });
      continue;
    }
    for (const v of k.variants) {
      const i = seen.variants.findIndex((x) => x.name === v.name);
      if (i < 0) seen.variants.push({ ...v });
      else if (rank(v.status) > rank(seen.variants[i]?.status)) seen.variants[i] = { ...v };
    }
  }
  return [...out.values()];
}

/**
 * A baseline for a merged run whose shards ran on several GPU SKUs: each case from the stored
 * baseline of the SKU its shard ran on. `latest` answers per SKU (the store, keyed by GPU model).
 */
export async function compositeBaseline(
  merged: Merged,
  latest: (sku: string) => Promise<{ results: KernelgateResults; path: string } | undefined>,
): Promise<{ results: KernelgateResults; path: string } | undefined> {
  const parts: {
    sku: string;
    ids: Set<string>;
    got: { results: KernelgateResults; path: string };
  }[] = [];
  for (const [sku, indices] of merged.skus) {
    const got = await latest(sku);
    if (got === undefined) continue;
    const ids = new Set(
      merged.shards.filter((s) => indices.includes(s.index)).flatMap((s) => s.cases),
    );
    parts.push({ sku, ids, got });
  }
  if (parts.length === 0) return undefined;
  const first = parts[0] as (typeof parts)[number];
  if (merged.skus.size === 1) return first.got;
  const cases = parts.flatMap((p) =>
    p.got.results.cases.filter((c) => p.ids.has(`${c.kernel}/${c.case}`)),
  );
  return {
    path: parts.map((p) => `${p.sku}: ${p.got.path}`).join('; '),
    results: {
      ...first.got.results,
      // The comparison checks the GPU: the composite stands for the merged run's own.
      environment: { ...first.got.results.environment, gpu: merged.results.environment.gpu },
      cases,
    },
  };
}

/** What the report's title says about shards that did not report or failed. */
export function shardTitleParts(results: KernelgateResults): string[] {
  return (results.run.shards ?? [])
    .filter((s) => s.status !== 'ok')
    .map(
      (s) => `shard ${s.index}/${s.count} ${s.status === 'missing' ? 'did not report' : 'failed'}`,
    );
}
