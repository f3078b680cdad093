// The build cache: a variant's inputs (sources, the local headers they reach, flags, toolkit)
// hashed into its folder under the cache directory, and what was stored there.
import { access, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BuildRecord } from '../../results/index.js';
import type { PtxasPerformanceNote, SassFunction } from './inspect.js';

export async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The sources plus every local (`#include "..."`) header they reach, as absolute paths. */
export async function sourceClosure(
  sources: string[],
  kernelDir: string,
  flags: readonly string[],
): Promise<string[]> {
  const includeDirs = flags
    .map((f) => /^-I(.+)$/.exec(f)?.[1])
    .filter((d): d is string => d !== undefined)
    .map((d) => path.resolve(kernelDir, d));
  const seen = new Set<string>();
  const queue = [...sources];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) {
      const name = m[1] ?? '';
      for (const dir of [path.dirname(file), kernelDir, ...includeDirs]) {
        const candidate = path.resolve(dir, name);
        if (await exists(candidate)) {
          queue.push(candidate);
          break;
        }
      }
    }
  }
  return [...seen].sort();
}

/** What a cache entry was built from, kept in it so that a later miss can say what changed. */
export interface CacheInputs {
  format: string;
  flags: string[];
  libs: string[];
  command: string | null;
  /** The full `nvcc --version` text; null without nvcc (a `command:` build). */
  toolkit: string | null;
  /** sha256 of each source and local header, by its path relative to the kernel folder. */
  files: Record<string, string>;
}

export interface StoredBuild {
  record: BuildRecord;
  /** Absent in entries written before kernelgate recorded them. */
  inputs?: CacheInputs;
  flags: string[];
  /** Per-function SASS of each cubin, for the checks that the record's totals cannot answer. */
  sassFunctions?: SassFunction[];
  displayNames?: Record<string, string>;
  /** ptxas's performance-loss notes, reported again on every cache hit. */
  performanceNotes?: PtxasPerformanceNote[];
}

/** The entry's stored build, when it is complete and readable. */
export async function storedEntry(entry: {
  recordFile: string;
  library: string;
}): Promise<StoredBuild | undefined> {
  if (!(await exists(entry.recordFile)) || !(await exists(entry.library))) return undefined;
  try {
    return JSON.parse(await readFile(entry.recordFile, 'utf8')) as StoredBuild;
  } catch {
    return undefined;
  }
}

/** The first line where two tool version texts differ, before and after. */
function firstDifference(before: string | null, now: string | null): string {
  const a = (before ?? '(no nvcc)').split(/\r?\n/);
  const b = (now ?? '(no nvcc)').split(/\r?\n/);
  const i = a.findIndex((line, k) => line !== b[k]);
  const at = i === -1 ? a.length : i;
  return `"${a[at] ?? ''}" → "${b[at] ?? ''}"`;
}

const listed = (items: readonly string[]) => (items.length > 0 ? items.join(' ') : '(none)');

/** What differs between the inputs of an entry and this build's, one phrase each. */
export function changedInputs(before: CacheInputs, now: CacheInputs): string[] {
  const changes: string[] = [];
  if (before.format !== now.format)
    changes.push(`cache format changed: ${before.format} → ${now.format}`);
  if (before.toolkit !== now.toolkit)
    changes.push(`toolkit changed: ${firstDifference(before.toolkit, now.toolkit)}`);
  if (listed(before.flags) !== listed(now.flags))
    changes.push(`flags changed: ${listed(before.flags)} → ${listed(now.flags)}`);
  if (listed(before.libs) !== listed(now.libs))
    changes.push(`libs changed: ${listed(before.libs)} → ${listed(now.libs)}`);
  if (before.command !== now.command) changes.push('command changed');
  const names = Object.keys(now.files);
  const edited = names.filter((f) => f in before.files && before.files[f] !== now.files[f]);
  const added = names.filter((f) => !(f in before.files));
  const removed = Object.keys(before.files).filter((f) => !(f in now.files));
  if (edited.length > 0) changes.push(`source changed: ${edited.join(', ')}`);
  if (added.length > 0) changes.push(`source added: ${added.join(', ')}`);
  if (removed.length > 0) changes.push(`source removed: ${removed.join(', ')}`);
  return changes;
}

/** The entries of one variant's folder, newest record first (a build in progress left out). */
async function entriesNewestFirst(variantDir: string): Promise<{ hash: string; file: string }[]> {
  const names = await readdir(variantDir).catch(() => [] as string[]);
  const entries: { hash: string; file: string; mtime: number }[] = [];
  for (const hash of names.filter((n) => !n.includes('.tmp-'))) {
    const file = path.join(variantDir, hash, 'record.json');
    const info = await stat(file).catch(() => undefined);
    if (info) entries.push({ hash, file, mtime: info.mtimeMs });
  }
  return entries.sort((a, b) => b.mtime - a.mtime || a.hash.localeCompare(b.hash));
}

/**
 * Why this build is not a cache hit, for the log: what changed since the variant's newest entry
 * (sources, flags, libs, command, toolkit, format), or that there is none.
 */
export async function missReason(
  variantDir: string,
  hash: string,
  inputs: CacheInputs,
): Promise<string> {
  if (await exists(path.join(variantDir, hash)))
    return `the entry ${hash} is incomplete (its record.json is missing or unreadable, or its library is missing)`;
  const [newest] = await entriesNewestFirst(variantDir);
  if (!newest) return `no entry in ${variantDir}`;
  let stored: StoredBuild;
  try {
    stored = JSON.parse(await readFile(newest.file, 'utf8')) as StoredBuild;
  } catch {
    return `the newest entry ${newest.hash} has an unreadable record.json`;
  }
  if (!stored.inputs)
    return `the newest entry ${newest.hash} predates the record of its inputs (what changed is unknown)`;
  const changes = changedInputs(stored.inputs, inputs);
  if (changes.length === 0) return `no entry of these inputs (newest entry ${newest.hash})`;
  return `${changes.join('; ')} (newest entry ${newest.hash})`;
}
