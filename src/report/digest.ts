// What a reader needs first, computed from the judged results: which variants this run changed
// (and by how much), the findings grouped by variant and pattern rather than listed case by case,
// the outcome the report's title states, and the headline ratios. No Markdown here: render.ts
// turns these into text and escapes what came from results, config or the pull request.
import type { CaseComparison } from '../judge/index.js';
import type { Config } from '../config/index.js';
import { blockingKinds as gateBlockingKinds, type GateResult } from '../judge/index.js';
import type { KernelgateResults } from '../results/index.js';
import type { TierStatus } from '../judge/index.js';

/** Why a case counts as changed, worst first. */
export const CHANGE_KINDS = [
  'wrong',
  'drift',
  'error',
  'above-peak',
  'missing',
  'slower',
  'faster',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** The worst reason a case changed, or undefined when it did not. */
export function changeKind(c: CaseComparison, aboveChip: Set<string>): ChangeKind | undefined {
  if (c.correctness === 'FAIL') return 'wrong';
  if (c.correctness === 'DRIFT') return 'drift';
  if (c.correctness === 'ERROR') return 'error';
  if (aboveChip.has(c.key)) return 'above-peak';
  if (c.perf === 'MISSING' || c.correctness === 'MISSING') return 'missing';
  if (c.perf === 'SLOWER') return 'slower';
  if (c.perf === 'FASTER') return 'faster';
  return undefined;
}

/** Orders changed cases worst first: by kind, then the largest slowdown or speed-up first. */
export function worstFirst(aboveChip: Set<string>) {
  return (a: CaseComparison, b: CaseComparison): number => {
    const ka = CHANGE_KINDS.indexOf(changeKind(a, aboveChip) ?? 'faster');
    const kb = CHANGE_KINDS.indexOf(changeKind(b, aboveChip) ?? 'faster');
    if (ka !== kb) return ka - kb;
    const ra = a.ratio ?? 1;
    const rb = b.ratio ?? 1;
    return a.perf === 'FASTER' ? ra - rb : rb - ra;
  };
}

/** Geometric mean, min and max of ratios (undefined when there are none). */
export function ratioSpread(
  ratios: number[],
): { geomean: number; lo: number; hi: number } | undefined {
  const ok = ratios.filter((r) => Number.isFinite(r) && r > 0);
  if (!ok.length) return undefined;
  const geomean = Math.exp(ok.reduce((s, r) => s + Math.log(r), 0) / ok.length);
  return { geomean, lo: Math.min(...ok), hi: Math.max(...ok) };
}

/** Counts of what a set of cases shows, in the order a verdict cell lists them. */
export type VerdictCounts = Partial<
  Record<ChangeKind | 'ambiguous' | 'same' | 'new' | 'untimed' | 'skipped' | 'unchecked', number>
>;

export function verdictCounts(cases: CaseComparison[], aboveChip: Set<string>): VerdictCounts {
  const counts: VerdictCounts = {};
  const add = (k: keyof VerdictCounts) => (counts[k] = (counts[k] ?? 0) + 1);
  for (const c of cases) {
    const kind = changeKind(c, aboveChip);
    if (kind) add(kind);
    else if (c.correctness === 'SKIPPED') add('skipped');
    else if (c.perf === 'AMBIGUOUS') add('ambiguous');
    else if (c.perf === 'SAME') add('same');
    else if (c.perf === 'NEW') add('new');
    else add('untimed');
    if (kind && c.perf === 'AMBIGUOUS') add('ambiguous');
    if (c.correctness === 'UNCHECKED') add('unchecked');
  }
  return counts;
}

export interface VariantChange {
  kernel: string;
  variant: string;
  /** every case of the variant in the comparison */
  cases: number;
  /** its changed cases, worst first */
  changed: CaseComparison[];
  /** over the changed cases judged SLOWER or FASTER */
  delta?: { geomean: number; lo: number; hi: number };
  counts: VerdictCounts;
}

export interface Untouched {
  variants: number;
  cases: number;
  /** over every judged case of these variants (SAME and AMBIGUOUS) */
  delta?: { geomean: number; lo: number; hi: number };
  counts: VerdictCounts;
}

export interface Changes {
  /** false when nothing was compared (no baseline, no base revision): every case NEW */
  judged: boolean;
  changed: VariantChange[];
  untouched: Untouched;
}

/** Groups the comparison by variant: those with a changed case, worst first, and the rest. */
export function variantChanges(cases: CaseComparison[], aboveChip: Set<string>): Changes {
  const byVariant = new Map<string, CaseComparison[]>();
  for (const c of cases) {
    const key = `${c.kernel}/${c.variant}`;
    byVariant.set(key, [...(byVariant.get(key) ?? []), c]);
  }
  const order = worstFirst(aboveChip);
  const changed: VariantChange[] = [];
  const rest: CaseComparison[] = [];
  let restVariants = 0;
  for (const list of byVariant.values()) {
    const hit = list.filter((c) => changeKind(c, aboveChip) !== undefined).sort(order);
    if (!hit.length) {
      rest.push(...list);
      restVariants++;
      continue;
    }
    const first = list[0] as CaseComparison;
    const moved = hit.filter((c) => c.perf === 'SLOWER' || c.perf === 'FASTER');
    changed.push({
      kernel: first.kernel,
      variant: first.variant,
      cases: list.length,
      changed: hit,
      delta: ratioSpread(moved.map((c) => c.ratio ?? NaN)),
      counts: verdictCounts(list, aboveChip),
    });
  }
  changed.sort((a, b) => {
    const byWorst = order(a.changed[0] as CaseComparison, b.changed[0] as CaseComparison);
    if (byWorst !== 0) return byWorst;
    return b.changed.length - a.changed.length;
  });
  const judgedRest = rest.filter((c) => c.perf === 'SAME' || c.perf === 'AMBIGUOUS');
  return {
    judged: cases.some((c) => c.method !== 'none'),
    changed,
    untouched: {
      variants: restVariants,
      cases: rest.length,
      delta: ratioSpread(judgedRest.map((c) => c.ratio ?? NaN)),
      counts: verdictCounts(rest, aboveChip),
    },
  };
}

/** Values an axis may name in a pattern (`W=7|100|257`); past that it is a list of cases. */
const MAX_PATTERN_VALUES = 4;

/** One axis's restriction: the subset's values of `key`, fewer than all cases have. */
interface Restriction {
  key: string;
  values: Set<string>;
}

function restrictions(subset: CaseComparison[], all: CaseComparison[]): Restriction[] {
  const keys = [...new Set(all.flatMap((c) => Object.keys(c.params)))];
  const out: Restriction[] = [];
  for (const key of keys) {
    if (subset.some((c) => c.params[key] === undefined)) continue;
    const inAll = new Set(all.map((c) => String(c.params[key])));
    const values = new Set(subset.map((c) => String(c.params[key])));
    if (values.size < inAll.size && values.size <= MAX_PATTERN_VALUES) out.push({ key, values });
  }
  return out;
}

/** Whether exactly the subset's cases have these axes' values (every other case differs). */
function separates(rs: Restriction[], subset: CaseComparison[], all: CaseComparison[]): boolean {
  const inSubset = new Set(subset);
  return all.every(
    (c) => rs.every((r) => r.values.has(String(c.params[r.key]))) === inSubset.has(c),
  );
}

/**
 * The case axes that separate a subset of a variant's cases from the rest: "W=7|100|257" when
 * the cases of those widths failed and every other passed, over every parameter (not the first
 * that the subset restricts: "dtype=fp16|bf16" was named for failures that were the widths', the
 * fp32 cases of those widths failing too). One axis if one separates, else the fewest values over
 * two; '' when one case, all cases, or no pair of axes separates them (then no pattern is claimed).
 */
export function commonAxes(subset: CaseComparison[], all: CaseComparison[]): string {
  // One case names itself; a pattern needs two.
  if (subset.length < 2 || subset.length === all.length) return '';
  const rs = restrictions(subset, all);
  const size = (x: Restriction[]) => x.reduce((n, r) => n + r.values.size, 0);
  const candidates: Restriction[][] = [];
  for (const r of rs) if (separates([r], subset, all)) candidates.push([r]);
  if (!candidates.length) {
    rs.forEach((a, i) =>
      rs.slice(i + 1).forEach((b) => {
        if (separates([a, b], subset, all)) candidates.push([a, b]);
      }),
    );
  }
  const best = candidates.sort((a, b) => size(a) - size(b))[0];
  return best ? best.map((r) => `${r.key}=${[...r.values].join('|')}`).join(', ') : '';
}

/** A failed case's pattern: what its correctness record shows, not its numbers. */
export function failurePattern(c: CaseComparison): string {
  const k = c.current?.correctness;
  const parts: string[] = [];
  if (k) {
    if (k.nan_count > 0) parts.push('NaN in the output');
    if (k.inf_count > 0) parts.push('Inf in the output');
    if (k.unwritten_count > 0) parts.push('elements never written');
    if (k.rel_l2 === null || k.rel_l2 > k.tol_rel_l2) parts.push('rel_l2 above tolerance');
    if (k.tol_max_abs !== undefined && k.max_abs !== null && k.max_abs > k.tol_max_abs) {
      parts.push('max_abs above tolerance');
    }
    const timed = k.timed_output_rel_l2;
    if (timed !== undefined && timed !== null && timed > k.tol_rel_l2) {
      parts.push('timed-run output wrong');
    }
    if (k.repeat_max_diff !== undefined && k.repeat_max_diff !== null && k.repeat_max_diff > 0) {
      parts.push('output differs between identical runs (race?)');
    }
  }
  return parts.length ? parts.join(', ') : 'marked fail by the harness';
}

/** An errored case's pattern: its status and the kind of error. */
export function errorPattern(c: CaseComparison): string {
  const kind = c.current?.error?.kind;
  return kind && kind !== c.status ? `${c.status}: ${kind}` : String(c.status);
}

export interface Group {
  kernel: string;
  variant: string;
  pattern: string;
  cases: CaseComparison[];
  /** every case of the variant */
  of: number;
}

/** Cases grouped by variant and pattern, largest group first (stable otherwise). */
export function groupCases(
  cases: CaseComparison[],
  all: CaseComparison[],
  pattern: (c: CaseComparison) => string,
): Group[] {
  const groups = new Map<string, Group>();
  for (const c of cases) {
    const p = pattern(c);
    const key = `${c.kernel}\u0000${c.variant}\u0000${p}`;
    let g = groups.get(key);
    if (!g) {
      const of = all.filter((x) => x.kernel === c.kernel && x.variant === c.variant).length;
      g = { kernel: c.kernel, variant: c.variant, pattern: p, cases: [], of };
      groups.set(key, g);
    }
    g.cases.push(c);
  }
  return [...groups.values()].sort((a, b) => b.cases.length - a.cases.length);
}

export type Outcome = 'pass' | 'regression' | 'fail';

/**
 * A reference variant that moved, paired (identical code in both arms) or against the stored run
 * (its code not changed): the machine moved (judge/controls.ts), which says nothing of the change.
 */
export function isControl(c: CaseComparison): boolean {
  return c.control !== undefined;
}

/**
 * pass / regression (a warning: SLOWER cases the policy lets through, A/A controls aside) /
 * fail.
 */
export function outcomeOf(gate: GateResult, cases: CaseComparison[]): Outcome {
  if (gate.verdict === 'fail') return 'fail';
  return cases.some((c) => c.perf === 'SLOWER' && !isControl(c)) ? 'regression' : 'pass';
}

/** Which gate categories fail the gate under the policy: the gate's own rules say (GATE_RULES). */
export function blockingKinds(config: Config): Set<ChangeKind | 'build'> {
  return new Set<ChangeKind | 'build'>(gateBlockingKinds(config.policy));
}

/** A numeric figure a diagnostic's message carries, in %: "(20 % of its median)" → 20. */
export function percentIn(message: string): number | undefined {
  const m = /(\d+(?:\.\d+)?)\s?%/.exec(message);
  return m ? Number(m[1]) : undefined;
}

export interface DiagnosticGroup {
  level: 'error' | 'warning' | 'info';
  code: string;
  count: number;
  /** kernel → variants it was raised for */
  where: Map<string, Set<string>>;
  /** the range of the percentages the messages carry, when each carries one */
  pct?: { lo: number; hi: number };
  example: string;
  fix?: string;
  /** every one was raised by a kernel's run (source kernel:…), one per case */
  perCase: boolean;
}

/** Diagnostics grouped by level and code, errors first, then the largest groups. */
export function groupDiagnostics(results: KernelgateResults): DiagnosticGroup[] {
  const order = { error: 0, warning: 1, info: 2 } as const;
  const groups = new Map<string, DiagnosticGroup & { pcts: number[] }>();
  for (const d of results.diagnostics) {
    const key = `${d.level}\u0000${d.code}`;
    let g = groups.get(key);
    if (!g) {
      g = {
        level: d.level,
        code: d.code,
        count: 0,
        where: new Map(),
        example: d.message,
        perCase: true,
        pcts: [],
        ...(d.fix ? { fix: d.fix } : {}),
      };
      groups.set(key, g);
    }
    g.count++;
    if (!d.source?.startsWith('kernel:') || !d.variant) g.perCase = false;
    if (d.kernel) {
      const set = g.where.get(d.kernel) ?? new Set<string>();
      if (d.variant) set.add(d.variant);
      g.where.set(d.kernel, set);
    }
    const pct = percentIn(d.message);
    if (pct !== undefined) g.pcts.push(pct);
  }
  return [...groups.values()]
    .map(({ pcts, ...g }) => ({
      ...g,
      ...(pcts.length === g.count && pcts.length > 0
        ? { pct: { lo: Math.min(...pcts), hi: Math.max(...pcts) } }
        : {}),
    }))
    .sort((a, b) => order[a.level] - order[b.level] || b.count - a.count);
}

export interface HeadlineRow {
  tier: TierStatus;
  /** the same ladder evaluated on the base revision's arm or the stored baseline */
  base?: TierStatus;
}

/** Each kernel's headline: its tier status now and, when known, on the base. */
export function headlineRows(tiers: TierStatus[], base: TierStatus[] | undefined): HeadlineRow[] {
  return tiers.map((tier) => {
    const b = base?.find((t) => t.kernel === tier.kernel);
    return b ? { tier, base: b } : { tier };
  });
}

/** One stored run's headline of a kernel: its value and the two medians behind it. */
export interface TrendPoint {
  startedAt: string;
  value?: number;
  variant?: string;
  medianMs?: number;
  referenceMs?: number;
}

export interface HeadlineTrend {
  kernel: string;
  unit: '×' | '%';
  /** oldest first; the last one is this run */
  points: TrendPoint[];
  /** this run against the stored runs before it */
  lastNight?: number;
  windowMedian?: number;
  best?: number;
  /** this run's value over the window median, − 1 */
  valueChange?: number;
  /** the reference's median (or, without one, ours) over its window median, − 1 */
  referenceChange?: number;
}

const SPARKS = '▁▂▃▄▅▆▇█';

/** How far from its center a sparkline's scale reaches, in %: ▁ is −5 %, █ is +5 %. */
export const SPARK_SPAN_PCT = 5;

/**
 * A text sparkline of the values (a gap where a run had none) on a fixed scale: ▁ is
 * SPARK_SPAN_PCT % under `center` (the values' median unless given) and █ as far over it, a value
 * beyond either end drawn at it. A −1.5 % night is a step of one or two eighths, not the whole
 * height, as it would be on a scale from the lowest value to the highest.
 */
export function sparkline(values: (number | undefined)[], center?: number): string {
  const ok = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
  const mid = center ?? middle(ok);
  if (!ok.length || mid === undefined || mid === 0) return '';
  const top = SPARKS.length - 1;
  return values
    .map((v) => {
      if (v === undefined || !Number.isFinite(v)) return ' ';
      const offset = (v / mid - 1) * 100;
      const level = Math.round(((offset + SPARK_SPAN_PCT) / (2 * SPARK_SPAN_PCT)) * top);
      return SPARKS[Math.min(top, Math.max(0, level))];
    })
    .join('');
}

function middle(values: number[]): number | undefined {
  if (!values.length) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * Each kernel's headline across the stored runs (oldest first) and this run: the value, and
 * whether the reference moved with it. A ratio that moves while the reference does not is the
 * code; both medians moving together, the ratio steady, is the machine.
 */
export function headlineTrends(
  current: TierStatus[],
  currentAt: string,
  stored: { startedAt: string; tiers: TierStatus[] }[],
): HeadlineTrend[] {
  const point = (t: TierStatus | undefined, startedAt: string): TrendPoint => ({
    startedAt,
    ...(t?.value !== undefined ? { value: t.value, variant: t.variant } : {}),
    ...(t?.medianMs !== undefined ? { medianMs: t.medianMs } : {}),
    ...(t?.referenceMedianMs !== undefined ? { referenceMs: t.referenceMedianMs } : {}),
  });
  return current.map((tier) => {
    const before = stored.map((s) =>
      point(
        s.tiers.find((x) => x.kernel === tier.kernel),
        s.startedAt,
      ),
    );
    const now = point(tier, currentAt);
    const values = before.map((p) => p.value).filter((v): v is number => v !== undefined);
    const windowMedian = middle(values);
    const refOf = (p: TrendPoint) => p.referenceMs ?? p.medianMs;
    const refs = before.map(refOf).filter((v): v is number => v !== undefined);
    const refMedian = middle(refs);
    const nowRef = refOf(now);
    return {
      kernel: tier.kernel,
      unit: tier.unit,
      points: [...before, now],
      ...(before.length && before[before.length - 1]?.value !== undefined
        ? { lastNight: before[before.length - 1]?.value }
        : {}),
      ...(windowMedian !== undefined ? { windowMedian } : {}),
      ...(values.length || now.value !== undefined
        ? { best: Math.max(...values, ...(now.value !== undefined ? [now.value] : [])) }
        : {}),
      ...(windowMedian && now.value !== undefined
        ? { valueChange: now.value / windowMedian - 1 }
        : {}),
      ...(refMedian && nowRef !== undefined ? { referenceChange: nowRef / refMedian - 1 } : {}),
    };
  });
}
