// The trend dashboard's data (src/history/dashboard.ts draws it): per GPU SKU, the runs in time
// order, each kernel's cases and variants as series over them (time, throughput, ratio to the
// kernel's reference, a flag for regressions and failures), and the newest run as table rows.
import { recordCases, type HistoryCase, type HistoryRecord } from './record.js';

/** Flags of a point: 1 SLOWER than its baseline, 2 FASTER, 3 a wrong result (or an error). */
const FLAG = { SLOWER: 1, FASTER: 2, FAIL: 3 } as const;

export interface DashboardRun {
  /** start, seconds since 1970 (the x axis) */
  t: number;
  commit?: string;
  branch: string;
  event?: string;
  id?: string;
  artifact?: string;
  verdict?: string;
}

export interface DashboardKernel {
  name: string;
  reference?: string;
  /** the throughput's unit: TFLOP/s when the kernel's cases do floating-point work, else GB/s */
  unit: 'TFLOP/s' | 'GB/s';
  cases: string[];
  /** index into cases shown first: the case with the most work */
  headline: number;
  variants: string[];
  /** variant → case index → per run: [median ms, throughput, ratio to reference, flag] arrays */
  series: Record<string, Record<number, { ms: Num[]; tp: Num[]; rr: Num[]; f: number[] }>>;
}
type Num = number | null;

export interface DashboardSku {
  sku: string;
  gpu: string;
  runs: DashboardRun[];
  kernels: DashboardKernel[];
  /** the newest run's cases, for the table */
  newest: (string | number | null)[][];
}

export interface DashboardData {
  title: string;
  generated: string;
  repository?: string;
  skus: DashboardSku[];
}

const r4 = (v: number | undefined | null): Num =>
  v === undefined || v === null || !Number.isFinite(v) ? null : Number(v.toPrecision(4));

/** The runs of one SKU, in time order: strictly increasing x, one second apart at least. */
function runsOf(list: HistoryRecord[]): DashboardRun[] {
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
    };
  });
}

/** A point's flag: a wrong result or an error first, then SLOWER, then FASTER. */
function flagOf(c: HistoryCase): number {
  const wrong = c.status === 'fail' || c.status === 'error' || c.status === 'timeout';
  if (wrong || c.correct === 'FAIL') return FLAG.FAIL;
  if (c.verdict === 'SLOWER') return FLAG.SLOWER;
  return c.verdict === 'FASTER' ? FLAG.FASTER : 0;
}

/**
 * Each kernel's cases, variants and series over the runs of one SKU (in time order), and the most
 * work any run gave each case (kernel NUL case → FLOPs, or bytes / 1000 without FLOPs).
 */
function seriesOf(list: HistoryRecord[]) {
  const kernels = new Map<string, DashboardKernel>();
  const work = new Map<string, number>();
  const caseIndex = new Map<string, number>();
  list.forEach((record, runIndex) => {
    for (const c of recordCases(record)) {
      let k = kernels.get(c.kernel);
      if (!k) {
        k = {
          name: c.kernel,
          ...(record.references[c.kernel] ? { reference: record.references[c.kernel] } : {}),
          unit: 'TFLOP/s',
          cases: [],
          headline: 0,
          variants: [],
          series: {},
        };
        kernels.set(c.kernel, k);
      }
      const caseKey = `${c.kernel}\u0000${c.case}`;
      let ci = caseIndex.get(caseKey);
      if (ci === undefined) {
        ci = k.cases.length;
        k.cases.push(c.case);
        caseIndex.set(caseKey, ci);
      }
      const w = record.work?.[c.kernel]?.[c.case];
      if (w) work.set(caseKey, Math.max(work.get(caseKey) ?? 0, w[0] || w[1] / 1e3));
      if (!k.variants.includes(c.variant)) k.variants.push(c.variant);
      const byCase = (k.series[c.variant] ??= {});
      const s = (byCase[ci] ??= {
        ms: Array<Num>(list.length).fill(null),
        tp: Array<Num>(list.length).fill(null),
        rr: Array<Num>(list.length).fill(null),
        f: Array<number>(list.length).fill(0),
      });
      s.ms[runIndex] = r4(c.median_ms);
      s.tp[runIndex] = r4(c.tflops ?? c.gbps);
      s.rr[runIndex] = r4(c.ref_ratio);
      s.f[runIndex] = flagOf(c);
    }
  });
  return { kernels, work };
}

/** A kernel's unit (from the newest run), its headline (the case with most work), its reference first. */
function finishKernel(
  k: DashboardKernel,
  newest: HistoryRecord | undefined,
  work: Map<string, number>,
) {
  const flops = k.cases.some((id) => (newest?.work?.[k.name]?.[id]?.[0] ?? 0) > 0);
  k.unit = flops ? 'TFLOP/s' : 'GB/s';
  let best = -1;
  k.cases.forEach((id, i) => {
    const w = work.get(`${k.name}\u0000${id}`) ?? 0;
    if (w > best) {
      best = w;
      k.headline = i;
    }
  });
  // The reference first, then the variants in the order the runs list them.
  if (k.reference && k.variants.includes(k.reference)) {
    k.variants = [k.reference, ...k.variants.filter((v) => v !== k.reference)];
  }
}

/** The newest run's cases as the table's rows. */
function newestRows(newest: HistoryRecord | undefined): DashboardSku['newest'] {
  if (!newest) return [];
  return recordCases(newest).map((c) => [
    c.kernel,
    c.variant,
    c.case,
    r4(c.median_ms),
    c.lo_pct ?? null,
    c.hi_pct ?? null,
    r4(c.tflops ?? c.gbps),
    c.tflops !== undefined ? 'TFLOP/s' : c.gbps !== undefined ? 'GB/s' : null,
    r4(c.ref_ratio),
    c.verdict ?? null,
    c.correct ?? c.status,
  ]);
}

/** The dashboard's data: runs in time order per SKU, each kernel's cases and variants as series. */
export function dashboardData(
  records: HistoryRecord[],
  options: { title?: string; repository?: string; now?: Date } = {},
): DashboardData {
  const bySku = new Map<string, HistoryRecord[]>();
  for (const r of records) {
    const list = bySku.get(r.run.sku) ?? [];
    list.push(r);
    bySku.set(r.run.sku, list);
  }
  const skus: DashboardSku[] = [];
  for (const [sku, list] of [...bySku].sort(([a], [b]) => a.localeCompare(b))) {
    list.sort((a, b) => a.run.started_at.localeCompare(b.run.started_at));
    const runs = runsOf(list);
    const { kernels, work } = seriesOf(list);
    const newest = list.at(-1);
    for (const k of kernels.values()) finishKernel(k, newest, work);
    skus.push({
      sku,
      gpu: newest?.run.gpu ?? sku,
      runs,
      kernels: [...kernels.values()],
      newest: newestRows(newest),
    });
  }
  return {
    title: options.title ?? 'kernelgate trends',
    generated: (options.now ?? new Date()).toISOString(),
    ...(options.repository ? { repository: options.repository } : {}),
    skus,
  };
}
