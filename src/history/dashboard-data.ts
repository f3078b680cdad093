// The trend dashboard's data (src/history/dashboard.ts draws it): per GPU SKU, the runs in time
// order with their branch, each kernel's cases and variants as series over them (time,
// throughput in the case's own unit, speedup over the kernel's reference, a flag for judged
// steps and failures, the threshold band), and the newest run as table rows. References and
// thresholds are the repository's configuration's (src/history/dashboard-verdicts.ts), as the
// report's are.
import { relative } from 'node:path';
import type { Config } from '../config/index.js';
import type { StoredAcceptance } from '../store/index.js';
import { refTimes } from '../judge/index.js';
import { configReferences, fillVerdicts, thresholdPctOf } from './dashboard-verdicts.js';
import { recordCases, type HistoryCase, type HistoryRecord } from './record.js';

/** Flags of a point: 1 SLOWER than its baseline, 2 FASTER, 3 a wrong result (or an error). */
const FLAG = { SLOWER: 1, FASTER: 2, FAIL: 3 } as const;

export type ThroughputUnit = 'TFLOP/s' | 'GB/s';

export interface DashboardRun {
  /** start, seconds since 1970 (the x axis) */
  t: number;
  commit?: string;
  branch: string;
  event?: string;
  id?: string;
  artifact?: string;
  verdict?: string;
  /** its verdicts were computed by the dashboard (the record carried none) */
  computed?: true;
  /** the SLOWER cases its gate let through because a pull request accepted them, and who did */
  accepted?: StoredAcceptance;
}

/** One variant on one case: per run, the median, throughput, speedup and flag. */
export interface DashboardSeries {
  ms: Num[];
  tp: Num[];
  /** the reference's time ÷ this time on the same case and run (their balanced estimates where
   * both carry one, else their medians: judge's refTimes): > 1 is faster */
  sp: Num[];
  f: number[];
  /** the case's threshold, %, as the report judges it (at the newest median) */
  th: number;
}

export interface DashboardKernel {
  name: string;
  /** the variant speedups are against: kernel.yml's tiers.reference / speed_reference */
  reference?: string;
  /** where the reference came from: the manifest, or the records (a manifest naming none) */
  referenceFrom?: 'kernel.yml' | 'records';
  cases: string[];
  /** per case, its throughput's unit: TFLOP/s with a FLOP count, GB/s with bytes only */
  units: (ThroughputUnit | null)[];
  /** index into cases shown first: the case with the most work */
  headline: number;
  variants: string[];
  /** variant → case index → series */
  series: Record<string, Record<number, DashboardSeries>>;
}
type Num = number | null;

export interface DashboardSku {
  sku: string;
  gpu: string;
  runs: DashboardRun[];
  /** the branches of the runs, most runs first */
  branches: string[];
  kernels: DashboardKernel[];
  /** the newest run's cases, for the table */
  newest: (string | number | null)[][];
  newestBranch?: string;
}

export interface DashboardData {
  title: string;
  generated: string;
  repository?: string;
  /** the configuration whose references and thresholds were used (undefined: the defaults) */
  configFile?: string;
  /** runs whose records carried no verdicts, judged by the dashboard */
  computedVerdicts: number;
  skus: DashboardSku[];
}

export interface DashboardOptions {
  title?: string;
  repository?: string;
  now?: Date;
  /** the repository's configuration (references, thresholds); defaults when absent */
  config?: Config;
}

const r4 = (v: number | undefined | null): Num =>
  v === undefined || v === null || !Number.isFinite(v) ? null : Number(v.toPrecision(4));

/** The runs of one SKU, in time order: strictly increasing x, one second apart at least. */
function runsOf(list: HistoryRecord[], computed: Set<HistoryRecord>): DashboardRun[] {
  let last = -Infinity;
  return list.map((r) => {
    const t = Math.max(Math.floor(Date.parse(r.run.started_at) / 1000), last + 1);
    last = t;
    return {
      t,
      ...(r.run.commit ? { commit: r.run.commit } : {}),
      branch: r.run.branch,
      ...(r.run.event ? { event: r.run.event } : {}),
      ...(r.run.id ? { id: r.run.id } : {}),
      ...(r.run.artifact ? { artifact: r.run.artifact } : {}),
      ...(r.run.verdict ? { verdict: r.run.verdict } : {}),
      ...(computed.has(r) ? { computed: true as const } : {}),
      ...(r.run.accepted ? { accepted: r.run.accepted } : {}),
    };
  });
}

/** The reference's time ÷ this case's on the same case (judge's refTimes: balanced where both
 * carry it); null for the reference itself or without one. */
function speedupOf(
  c: HistoryCase,
  refCase: Map<string, HistoryCase>,
  reference: string | undefined,
): Num {
  const ref = refCase.get(`${c.kernel}/${c.case}`);
  const times = ref && c.variant !== reference ? refTimes(c, ref) : undefined;
  return times ? r4(times.ms[1] / times.ms[0]) : null;
}

/** A point's flag: a wrong result or an error first, then SLOWER, then FASTER. */
function flagOf(c: HistoryCase): number {
  const wrong = c.status === 'fail' || c.status === 'error' || c.status === 'timeout';
  if (wrong || c.correct === 'FAIL') return FLAG.FAIL;
  if (c.verdict === 'SLOWER') return FLAG.SLOWER;
  return c.verdict === 'FASTER' ? FLAG.FASTER : 0;
}

interface Built {
  kernels: Map<string, DashboardKernel>;
  /** kernel NUL case → the most work any run gave it (FLOPs, or bytes / 1000 without FLOPs) */
  work: Map<string, number>;
  /** kernel NUL case → [flops, bytes] */
  kinds: Map<string, [number, number]>;
}

function kernelOf(b: Built, name: string, reference: string | undefined, fromConfig: boolean) {
  let k = b.kernels.get(name);
  if (!k) {
    k = {
      name,
      ...(reference ? { reference, referenceFrom: fromConfig ? 'kernel.yml' : 'records' } : {}),
      cases: [],
      units: [],
      headline: 0,
      variants: [],
      series: {},
    };
    b.kernels.set(name, k);
  }
  return k;
}

/** Each kernel's cases, variants and series over the runs of one SKU (in time order). */
function seriesOf(list: HistoryRecord[], configured: Record<string, string>): Built {
  const b: Built = { kernels: new Map(), work: new Map(), kinds: new Map() };
  const caseIndex = new Map<string, number>();
  const empty = () => ({
    ms: Array<Num>(list.length).fill(null),
    tp: Array<Num>(list.length).fill(null),
    sp: Array<Num>(list.length).fill(null),
    f: Array<number>(list.length).fill(0),
    th: 0,
  });
  list.forEach((record, runIndex) => {
    const cases = recordCases(record);
    const refCase = new Map<string, HistoryCase>();
    for (const c of cases) {
      const ref = configured[c.kernel] ?? record.references[c.kernel];
      if (ref === c.variant && c.median_ms !== undefined) refCase.set(`${c.kernel}/${c.case}`, c);
    }
    for (const c of cases) {
      const k = kernelOf(
        b,
        c.kernel,
        configured[c.kernel] ?? record.references[c.kernel],
        configured[c.kernel] !== undefined,
      );
      const caseKey = `${c.kernel}\u0000${c.case}`;
      let ci = caseIndex.get(caseKey);
      if (ci === undefined) {
        ci = k.cases.length;
        k.cases.push(c.case);
        caseIndex.set(caseKey, ci);
      }
      const w = record.work?.[c.kernel]?.[c.case];
      if (w) {
        b.work.set(caseKey, Math.max(b.work.get(caseKey) ?? 0, w[0] || w[1] / 1e3));
        b.kinds.set(caseKey, w);
      }
      if (!k.variants.includes(c.variant)) k.variants.push(c.variant);
      const s = ((k.series[c.variant] ??= {})[ci] ??= empty());
      s.ms[runIndex] = r4(c.median_ms);
      s.tp[runIndex] = r4((w?.[0] ?? 0) > 0 ? c.tflops : c.gbps);
      s.sp[runIndex] = speedupOf(c, refCase, k.reference);
      s.f[runIndex] = flagOf(c);
    }
  });
  return b;
}

/** A kernel's units per case, its headline (the case with most work), its reference first. */
function finishKernel(k: DashboardKernel, b: Built, sku: string, config: Config | undefined) {
  let best = -1;
  k.cases.forEach((id, i) => {
    const key = `${k.name}\u0000${id}`;
    const [flops, bytes] = b.kinds.get(key) ?? [0, 0];
    k.units[i] = flops > 0 ? 'TFLOP/s' : bytes > 0 ? 'GB/s' : null;
    const w = b.work.get(key) ?? 0;
    if (w > best) {
      best = w;
      k.headline = i;
    }
  });
  for (const [variant, byCase] of Object.entries(k.series)) {
    for (const [ci, s] of Object.entries(byCase)) {
      const newest = [...s.ms].reverse().find((m) => m !== null) ?? undefined;
      const c = { kernel: k.name, variant, case: k.cases[Number(ci)] ?? '' };
      s.th = config ? r4(thresholdPctOf(config, sku, c, newest))! : 0;
    }
  }
  // The reference first, then the variants in the order the runs list them.
  if (k.reference && k.variants.includes(k.reference)) {
    k.variants = [k.reference, ...k.variants.filter((v) => v !== k.reference)];
  }
}

/** The newest run's cases as the table's rows. */
function newestRows(
  newest: HistoryRecord | undefined,
  kernels: Map<string, DashboardKernel>,
): DashboardSku['newest'] {
  if (!newest) return [];
  const cases = recordCases(newest);
  const refCase = new Map<string, HistoryCase>();
  for (const c of cases) {
    if (kernels.get(c.kernel)?.reference === c.variant && c.median_ms !== undefined) {
      refCase.set(`${c.kernel}/${c.case}`, c);
    }
  }
  return cases.map((c) => {
    const flops = (newest.work?.[c.kernel]?.[c.case]?.[0] ?? 0) > 0;
    const tp = flops ? c.tflops : c.gbps;
    return [
      c.kernel,
      c.variant,
      c.case,
      r4(c.median_ms),
      c.lo_pct ?? null,
      c.hi_pct ?? null,
      r4(tp),
      tp === undefined ? null : flops ? 'TFLOP/s' : 'GB/s',
      speedupOf(c, refCase, kernels.get(c.kernel)?.reference),
      c.verdict ?? null,
      c.correct ?? c.status,
    ];
  });
}

/** The branches of the runs, most runs first (ties by name). */
function branchesOf(runs: DashboardRun[]): string[] {
  const count = new Map<string, number>();
  for (const r of runs) count.set(r.branch, (count.get(r.branch) ?? 0) + 1);
  return [...count].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([b]) => b);
}

/** The dashboard's data: runs in time order per SKU, each kernel's cases and variants as series. */
export function dashboardData(
  records: HistoryRecord[],
  options: DashboardOptions = {},
): DashboardData {
  const config = options.config;
  const filled = config ? fillVerdicts(records, config) : { records, computed: 0 };
  const computed = new Set(filled.records.filter((r, i) => r !== records[i]));
  const references = config ? configReferences(config) : {};
  const bySku = new Map<string, HistoryRecord[]>();
  for (const r of filled.records) {
    const list = bySku.get(r.run.sku) ?? [];
    list.push(r);
    bySku.set(r.run.sku, list);
  }
  const skus: DashboardSku[] = [];
  for (const [sku, list] of [...bySku].sort(([a], [b]) => a.localeCompare(b))) {
    list.sort((a, b) => a.run.started_at.localeCompare(b.run.started_at));
    const runs = runsOf(list, computed);
    const built = seriesOf(list, references);
    for (const k of built.kernels.values()) finishKernel(k, built, sku, config);
    const newest = list.at(-1);
    skus.push({
      sku,
      gpu: newest?.run.gpu ?? sku,
      runs,
      branches: branchesOf(runs),
      kernels: [...built.kernels.values()],
      newest: newestRows(newest, built.kernels),
      ...(newest ? { newestBranch: newest.run.branch } : {}),
    });
  }
  return {
    title: options.title ?? 'kernelgate trends',
    generated: (options.now ?? new Date()).toISOString(),
    ...(options.repository ? { repository: options.repository } : {}),
    ...(config?.configFile ? { configFile: relative(config.rootDir, config.configFile) } : {}),
    computedVerdicts: filled.computed,
    skus,
  };
}
