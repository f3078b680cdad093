// The split of a run's cases over n shards (runners of a matrix): deterministic, and balanced by
// how long each case took in the newest stored baseline, or by an estimate (its variants at the
// run's time cap) when the baseline does not have it. Every shard computes the same split from the same inputs and records
// all of it, so a merge can name what a shard that never reported owned (docs/scaling.md).
import { createHash } from 'node:crypto';
import { shardUnits, type Config, type ShardUnit } from '../config/index.js';
import type { CaseResult, KernelgateResults, Shard } from '../results/index.js';

/** baseline: balanced by the stored baseline's timings (an estimate where it has none); estimate: by the estimate only. */
export const SHARD_BALANCE = ['baseline', 'estimate'] as const;
export type ShardBalance = (typeof SHARD_BALANCE)[number];

/** `--shard 2/3`: shard 2 of 3 (1-based). */
export interface ShardSpec {
  index: number;
  count: number;
}

/** Shards past this are refused: a matrix of more GPU runners than this is a typo. */
export const MAX_SHARDS = 256;

/** Reads `i/n`; the error names where the value came from and the bad value. */
export function parseShardSpec(text: string, where: string): ShardSpec {
  const m = /^\s*(\d{1,4})\s*\/\s*(\d{1,4})\s*$/.exec(text);
  if (!m) {
    throw new Error(`${where} must be i/n (shard i of n, counted from 1), got '${text}'.`);
  }
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) {
    throw new Error(`${where}: n must be 1 to ${MAX_SHARDS}, got '${text}'.`);
  }
  if (index < 1 || index > count) {
    throw new Error(`${where}: i must be 1 to n (${count}), got '${text}'.`);
  }
  return { index, count };
}

/**
 * The twins of python/kernelgate_harness/lanes.py VARIANT_OVERHEAD_S, VARIANT_CALLS and
 * ESTIMATE_OVERHEAD_S, calibrated on the case lines of test/fixtures/recorded/nightly-h100-run32
 * (H100 80GB HBM3, 2026-11-26): a unit's time outside its pairs is 0.131 s per variant plus 27.8
 * calls of each variant's median time (verification over the seeds, the repeat and timed-output
 * checks, both arms' burst warm-ups; least squares, the kernels' first cases left out), and 0.44 s
 * a variant spread evenly over its 217 (warm paired runs 24-39: 0.42-0.56 s). docs/scaling.md.
 */
export const VARIANT_OVERHEAD_S = 0.13;
export const VARIANT_CALLS = 28;
export const ESTIMATE_OVERHEAD_S = 0.44;
/** The harness's defaults (--paired-time-cap-s: both arms; --time-cap-s). */
export const PAIRED_TIME_CAP_S = 3;
export const TIME_CAP_S = 2;

/** How the run will time its cases: paired or not, and its time cap per variant. */
export interface CostRule {
  paired: boolean;
  capS: number;
}
export const PAIRED_RULE: CostRule = { paired: true, capS: PAIRED_TIME_CAP_S };

/**
 * What one variant's record took, as the run will take it again: its pairs' seconds
 * (`paired.seconds`, both arms and the round trips), else its samples (both arms', or twice the
 * head's when the run is paired and the record was not), plus the overhead and VARIANT_CALLS calls
 * of its median. Not `warmup_ms`: a kernel's first case books its case-wide warm-up to every
 * variant (27.6 s over nightly-h100-run32's first attention case, whose case line says 5.2 s).
 */
export function recordSeconds(r: CaseResult, paired: boolean): number {
  if (!r.timing) return VARIANT_OVERHEAD_S;
  const sum = (xs: number[] | undefined) => (xs ?? []).reduce((s, x) => s + x, 0) / 1000;
  let pairs = r.paired?.seconds;
  if (pairs === undefined) {
    const base = r.paired?.base_timing;
    pairs =
      sum(r.timing.samples_ms) * (base ? 1 : paired ? 2 : 1) + (base ? sum(base.samples_ms) : 0);
  }
  return pairs + VARIANT_OVERHEAD_S + (VARIANT_CALLS * (r.timing.median_ms ?? 0)) / 1000;
}

/**
 * Seconds a unit took in the baseline (recordSeconds of each record; variants it lacks estimated).
 * Undefined when the baseline has none of the unit's variants timed.
 */
export function measuredSeconds(
  unit: ShardUnit,
  records: CaseResult[],
  rule: CostRule = PAIRED_RULE,
): number | undefined {
  if (!records.some((r) => r.timing)) return undefined;
  const seconds = records.reduce((s, r) => s + recordSeconds(r, rule.paired), 0);
  return (
    seconds + Math.max(0, unit.variants.length - records.length) * (rule.capS + ESTIMATE_OVERHEAD_S)
  );
}

/**
 * Without a measurement: each variant at the run's time cap plus the overhead. Not the case's size:
 * 10⁻⁹ s per element of its axes put 6.8 million seconds on 30 of 32 cases (issue 27).
 */
export function estimatedSeconds(unit: ShardUnit, rule: CostRule = PAIRED_RULE): number {
  return unit.variants.length * (rule.capS + ESTIMATE_OVERHEAD_S);
}

export interface ShardPlan {
  count: number;
  /** each shard's unit ids (kernel/case), in the harness's order */
  shards: string[][];
  /** each shard's expected seconds under the rule */
  seconds: number[];
  source: 'baseline' | 'estimate';
  baseline?: string;
  digest: string;
}

/**
 * Longest first onto the least loaded shard (ties: the lower shard number), each unit's cost its
 * baseline seconds or its estimate. The plan's source is `baseline` when the baseline timed at
 * least one unit (units it did not time are estimated). Deterministic: the same units and
 * baseline give the same split on every runner.
 */
export function planShards(
  units: ShardUnit[],
  count: number,
  baseline?: { results: KernelgateResults; path: string },
  rule: CostRule = PAIRED_RULE,
): ShardPlan {
  const byUnit = new Map<string, CaseResult[]>();
  for (const c of baseline?.results.cases ?? []) {
    const id = `${c.kernel}/${c.case}`;
    byUnit.set(id, [...(byUnit.get(id) ?? []), c]);
  }
  let measured = 0;
  const cost = new Map<string, number>();
  for (const u of units) {
    const got = measuredSeconds(u, byUnit.get(u.id) ?? [], rule);
    if (got !== undefined) measured += 1;
    cost.set(u.id, got ?? estimatedSeconds(u, rule));
  }
  const order = units
    .map((u, i) => ({ u, i, s: cost.get(u.id) as number }))
    .sort((a, b) => b.s - a.s || a.i - b.i);
  const load = Array.from({ length: count }, () => 0);
  const owner = new Map<string, number>();
  for (const { u, s } of order) {
    let best = 0;
    for (let k = 1; k < count; k++) if ((load[k] as number) < (load[best] as number)) best = k;
    load[best] = (load[best] as number) + s;
    owner.set(u.id, best);
  }
  const shards = Array.from({ length: count }, (_, k) =>
    units.filter((u) => owner.get(u.id) === k).map((u) => u.id),
  );
  const seconds = load.map((s) => Math.round(s * 10) / 10);
  const source = measured > 0 ? 'baseline' : 'estimate';
  return {
    count,
    shards,
    seconds,
    source,
    ...(source === 'baseline' && baseline ? { baseline: baseline.path } : {}),
    digest: planDigest(shards),
  };
}

export function planDigest(shards: string[][]): string {
  return createHash('sha256').update(JSON.stringify(shards)).digest('hex').slice(0, 16);
}

/** The results' run.shard for shard `index` of the plan. */
export function shardRecord(plan: ShardPlan, index: number, gpu?: Shard['gpu']): Shard {
  return {
    index,
    count: plan.count,
    cases: plan.shards[index - 1] ?? [],
    plan: {
      digest: plan.digest,
      source: plan.source,
      ...(plan.baseline !== undefined ? { baseline: plan.baseline } : {}),
      shards: plan.shards,
      seconds: plan.seconds,
    },
    ...(gpu ? { gpu } : {}),
  };
}

/** The units of a config: every kernel of the run. */
export function configUnits(config: Config, only?: string[]): ShardUnit[] {
  return shardUnits(config.kernels, only !== undefined ? { only } : {});
}

/** The units a results document measured, in its order (to split recorded runs). */
export function unitsOfResults(results: KernelgateResults): ShardUnit[] {
  const units = new Map<string, ShardUnit>();
  for (const c of results.cases) {
    const id = `${c.kernel}/${c.case}`;
    const seen = units.get(id);
    if (seen) seen.variants.push(c.variant);
    else {
      units.set(id, {
        id,
        kernel: c.kernel,
        caseId: c.case,
        params: c.params,
        variants: [c.variant],
      });
    }
  }
  return [...units.values()];
}

/**
 * Shard `index` of a recorded run as the shard's own run would have written it: its cases only,
 * with run.shard. For tests and for replaying a recorded run as a matrix.
 */
export function splitResults(
  results: KernelgateResults,
  plan: ShardPlan,
  index: number,
): KernelgateResults {
  const mine = new Set(plan.shards[index - 1] ?? []);
  const gpu = results.environment.gpu;
  return {
    ...results,
    run: {
      ...results.run,
      shard: shardRecord(plan, index, {
        name: gpu.name,
        ...(gpu.sku !== undefined ? { sku: gpu.sku } : {}),
        ...(results.run.host !== undefined ? { host: results.run.host } : {}),
      }),
    },
    cases: results.cases.filter((c) => mine.has(`${c.kernel}/${c.case}`)),
  };
}
