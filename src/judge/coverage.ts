// What a results document must cover (issue 26: an empty or cut-short document passed, and was
// stored as the next baseline): every case of the configured kernels the run selected, each of
// its variants, expanded as the harness expands them (src/config/cases.ts shardUnits). What the run
// selected is the document's own record of it (run.selection: --only, --ci, --variants,
// --case-params, --cases), a shard's cases (run.shard) or a merged run's (run.shards). A case
// the harness skipped, or that failed, has its record: it is covered. A document that says none
// of these (written before the harness recorded its selection, or by hand) is held to having a
// case at all, as every document is: what it was meant to cover is not known.
import { shardUnits, type Config, type Scalar, type ShardUnit } from '../config/index.js';
import { caseIdOf } from '../formats/index.js';
import type { KernelgateResults } from '../results/index.js';

/** What one kernel lacks. */
export interface CoverageGap {
  kernel: string;
  /** how many variant-cases the run selected of this kernel */
  selected: number;
  /** each one with no record, as variant and case id */
  missing: { variant: string; caseId: string }[];
}

export interface Coverage {
  /** the document says what the run selected (run.selection, run.shard or run.shards) */
  known: boolean;
  /** variant-cases selected, over every kernel (0 when unknown) */
  selected: number;
  /** the configured kernels the run selected */
  kernels: string[];
  gaps: CoverageGap[];
  /** the gate's reason when the document does not cover the selection; else undefined */
  problem?: string;
}

type Selection = NonNullable<KernelgateResults['run']['selection']>;

/** run.harness of the deep checks' own document (src/cli/deep.ts). */
const DEEP_HARNESS = 'kernelgate deep';

/** The kernel/case ids a shard's or a merged run's document answers for; undefined for others. */
function ownedIds(results: KernelgateResults): Set<string> | undefined {
  const merged = results.run.shards;
  if (merged?.length) {
    // A shard that did not report, or left cases out, is a reason of its own (shardProblems).
    const named = new Set(
      merged.filter((s) => s.status !== 'ok').flatMap((s) => s.unreported ?? []),
    );
    return new Set(merged.flatMap((s) => s.cases).filter((id) => !named.has(id)));
  }
  return results.run.shard ? new Set(results.run.shard.cases) : undefined;
}

/** `dtype=fp16,D=128` as the harness reads --case-params: each key's value as its case id writes it. */
function paramsMatch(
  selection: Selection | undefined,
): (params: Record<string, Scalar>) => boolean {
  const wanted = (selection?.case_params ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const at = kv.indexOf('=');
      return at < 0 ? [kv, ''] : [kv.slice(0, at), kv.slice(at + 1)];
    });
  return (params) =>
    wanted.every(
      ([k, v]) => k! in params && caseIdOf({ [k!]: params[k!] as Scalar }) === `${k}=${v}`,
    );
}

/**
 * The units (a case of a kernel, its variants) the run selected, in the harness's order; undefined
 * for a document that does not say (no run.selection, no shard: written before the harness
 * recorded it, or by hand).
 */
export function selectedUnits(results: KernelgateResults, config: Config): ShardUnit[] | undefined {
  const selection = results.run.selection;
  const owned = ownedIds(results);
  if (selection === undefined && owned === undefined) return undefined;
  // kernels: [] is a run that measured no kernel (benchmarks alone).
  if (selection?.kernels?.length === 0) return [];
  const units = shardUnits(config.kernels, {
    ...(selection?.kernels ? { only: selection.kernels } : {}),
    ci: selection?.ci === true,
  });
  const listed = selection?.cases ? new Set(selection.cases) : undefined;
  const matches = paramsMatch(selection);
  const variants = selection?.variants;
  return units
    .filter((u) => (owned?.has(u.id) ?? true) && (listed?.has(u.id) ?? true) && matches(u.params))
    .map((u) => (variants ? { ...u, variants: u.variants.filter((v) => variants.includes(v)) } : u))
    .filter((u) => u.variants.length > 0);
}

const count = (n: number) => n.toLocaleString('en-US');

/** A count with its noun: "1 case", "1,217 cases". */
function cases(n: number): string {
  return `${count(n)} ${n === 1 ? 'case' : 'cases'}`;
}

/** "attention 49 of 196 (triton_fa2 25, cuda_fa2 24)": a kernel's missing variant-cases. */
function gapText(gap: CoverageGap): string {
  if (gap.missing.length === gap.selected) return `${gap.kernel} all ${gap.selected}`;
  const byVariant = new Map<string, number>();
  for (const m of gap.missing) byVariant.set(m.variant, (byVariant.get(m.variant) ?? 0) + 1);
  const shown = [...byVariant].slice(0, 6).map(([v, n]) => `${v} ${n}`);
  const more = byVariant.size - shown.length;
  if (more > 0) shown.push(`${more} more ${more === 1 ? 'variant' : 'variants'}`);
  return `${gap.kernel} ${gap.missing.length} of ${gap.selected} (${shown.join(', ')})`;
}

/** The gate's line for a document that holds no case, or covers less than its selection. */
function problemOf(results: KernelgateResults, coverage: Omit<Coverage, 'problem'>) {
  const { selected, kernels, gaps } = coverage;
  if (results.cases.length === 0) {
    // The deep checks' own document (kernelgate deep without --results) has no case by design.
    if (results.deep !== undefined && results.run.harness === DEEP_HARNESS) return;
    const what = selected
      ? `the run selected ${cases(selected)} of ${kernels.join(', ')} and has a record of none`
      : 'nothing was measured';
    return `the results hold no case: ${what}; a run that measured nothing is no pass`;
  }
  const missing = gaps.reduce((n, g) => n + g.missing.length, 0);
  if (missing === 0) return;
  return (
    `the results are incomplete: ${count(missing)} of the ${cases(selected)} the run selected ` +
    `have no record: ${gaps.map(gapText).join(', ')}. The run stopped early or its results were ` +
    'cut short: a partial run is no pass'
  );
}

/**
 * A record's kernel, variant and params, keys sorted: matched by value, not by the case id's text
 * (Python writes a YAML 1.0 as "1.0" in an id, JavaScript as "1"; the JSON values agree).
 */
function recordKey(kernel: string, variant: string, params: Record<string, Scalar>): string {
  const sorted = Object.keys(params)
    .sort()
    .map((k) => [k, params[k]]);
  return JSON.stringify([kernel, variant, sorted]);
}

/**
 * Which of the selected variant-cases the document has a record of (any status), per kernel,
 * and the gate's line when it lacks any or holds no case at all.
 */
export function coverage(results: KernelgateResults, config: Config): Coverage {
  const have = new Set(results.cases.map((c) => recordKey(c.kernel, c.variant, c.params)));
  const byKernel = new Map<string, CoverageGap>();
  let selected = 0;
  const units = selectedUnits(results, config);
  for (const u of units ?? []) {
    const gap = byKernel.get(u.kernel) ?? { kernel: u.kernel, selected: 0, missing: [] };
    byKernel.set(u.kernel, gap);
    for (const variant of u.variants) {
      gap.selected += 1;
      selected += 1;
      if (!have.has(recordKey(u.kernel, variant, u.params))) {
        gap.missing.push({ variant, caseId: u.caseId });
      }
    }
  }
  const gaps = [...byKernel.values()].filter((g) => g.missing.length > 0);
  const found = { known: units !== undefined, selected, kernels: [...byKernel.keys()], gaps };
  const problem = problemOf(results, found);
  return { ...found, ...(problem !== undefined ? { problem } : {}) };
}

/**
 * The gate's reasons from a merged run: one line per shard that did not report or failed, and
 * one for cases no shard owned. Empty for a run that was not merged.
 */
export function shardProblems(results: KernelgateResults): string[] {
  const lines = (results.run.shards ?? [])
    .filter((s) => s.status !== 'ok')
    .map((s) => s.message ?? `shard ${s.index}/${s.count} ${s.status}`);
  for (const d of results.diagnostics) if (d.code === 'shard.unowned') lines.push(d.message);
  return lines;
}
