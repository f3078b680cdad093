// The build cache: a variant's inputs (sources, the local headers they reach, flags, toolkit)
// hashed into its folder under the cache directory, and what was stored there.
import { access, readFile } from 'node:fs/promises';
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

export interface StoredBuild {
  record: BuildRecord;
  flags: string[];
  /** Per-function SASS of each cubin, for the checks that the record's totals cannot answer. */
  sassFunctions?: SassFunction[];
  displayNames?: Record<string, string>;
  /** ptxas's performance-loss notes, reported again on every cache hit. */
  performanceNotes?: PtxasPerformanceNote[];
}
