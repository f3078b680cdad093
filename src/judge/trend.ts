// The history as a trend (issue 25): each case's series of nightly medians from the stored runs of
// the branch on this GPU and tonight's, cut where the comparison stops being like for like, and
// the step test (steps.ts) over the newest segment. A step is a finding of the nightly report,
// never a reason of the gate.
//
// Like for like: a run's harness version, timing mode (paired, or a single revision), driver, CUDA,
// torch and triton versions and GPU model; a case's timing method (its kind: events, graph, ...)
// and its tuned configuration (`tuning`, where both runs carry one). A change of any of these is a
// boundary: the series restarts after it. Runs timed in the other mode than tonight's (the pushes
// between paired nights) are left out of the series rather than cutting it at every push: a
// paired night's head arm and a single-revision run differ by up to 12 % on the same machine.
import type { CaseResult, KernelgateResults } from '../results/index.js';
import { timingMethodKind } from './performance.js';
import { type StepFinding, STEP_WINDOW, stepTest } from './steps.js';

/** What must be equal for two runs' medians to be compared. */
export const RUN_IDENTITY = ['harness', 'driver', 'CUDA', 'torch', 'triton', 'GPU'] as const;
export type IdentityField = (typeof RUN_IDENTITY)[number] | 'timing method' | 'tuning';

export interface TrendBoundary {
  field: IdentityField;
  from: string;
  to: string;
  /** the first run after the boundary */
  startedAt: string;
  commit?: string;
  /** the cases it cut ("kernel/variant/case"); undefined: every case (a run's field) */
  cases?: string[];
}

export interface TrendPoint {
  startedAt: string;
  commit?: string;
  ms: number;
  /** a paired night: head / base of the night's pairs (the good base, same machine, same night) */
  pairedRatio?: number;
}

export interface CaseTrend {
  key: string;
  kernel: string;
  variant: string;
  caseId: string;
  reference: boolean;
  /** the segment's nights in the window, oldest first, tonight last */
  points: TrendPoint[];
  finding?: StepFinding & {
    startedAt: string;
    commit?: string;
    /**
     * why it is not a kernel's step: a reference's own (its code does not change); the machine
     * moved (half the references moved with it); the case's reference moved the same way; the
     * night's pairs saw no such change beside the good base on the same machine
     */
    control?: 'reference' | 'same-case' | 'machine' | 'paired';
  };
}

export interface MachineStep {
  direction: StepFinding['direction'];
  startedAt: string;
  moved: number;
  of: number;
  medianPct: number;
}

export interface HistoryTrend {
  /** tonight's timing mode, and the stored runs left out because they were timed the other way */
  mode: 'paired' | 'single';
  leftOut: number;
  /** the stored runs of tonight's mode in the window, and the oldest one's start */
  runs: number;
  since?: string;
  /** boundaries met in the window (a run's field once; a case's per field and night) */
  boundaries: TrendBoundary[];
  /** every case with a finding (steps and watches), references included */
  cases: CaseTrend[];
  machine: MachineStep[];
  window: number;
}

const paired = (r: KernelgateResults) =>
  r.run.paired_base !== undefined || r.cases.some((c) => c.paired !== undefined);

function runIdentity(
  r: KernelgateResults,
): Record<(typeof RUN_IDENTITY)[number], string | undefined> {
  const env = r.environment;
  return {
    harness: r.run.harness,
    driver: env.driver_version,
    CUDA: env.cuda_runtime_version,
    torch: env.libraries?.['torch'],
    triton: env.libraries?.['triton'],
    GPU: env.gpu.name,
  };
}

/** The configuration a case's tuner chose (`tuning.config`, when it has one), as stable text. */
export function tuningOf(c: CaseResult): string | undefined {
  // read loosely: results written before `tuning` was in the contract have none
  const config = (c as { tuning?: { config?: unknown } }).tuning?.config;
  if (config === undefined || config === null) return undefined;
  const stable = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(stable)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, stable((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(stable(config));
}

const differ = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a !== b;

/** The runs' own boundaries: a field of the run that changed from one run to the next. */
function runBoundaries(runs: KernelgateResults[]): { at: number[]; list: TrendBoundary[] } {
  const at: number[] = [];
  const list: TrendBoundary[] = [];
  for (let i = 1; i < runs.length; i++) {
    const [a, b] = [runIdentity(runs[i - 1]!), runIdentity(runs[i]!)];
    for (const field of RUN_IDENTITY) {
      if (!differ(a[field], b[field])) continue;
      const run = runs[i]!.run;
      list.push({
        field,
        from: a[field]!,
        to: b[field]!,
        startedAt: run.started_at,
        ...(run.git_sha ? { commit: run.git_sha } : {}),
      });
      if (at[at.length - 1] !== i) at.push(i);
    }
  }
  return { at, list };
}

interface CaseSeries {
  c: CaseResult;
  runIndex: number;
}

/** A case's segment after its last boundary (a run's, or its own method or tuning changing). */
function caseSegment(
  series: CaseSeries[],
  runs: KernelgateResults[],
  runCuts: number[],
  own: TrendBoundary[],
  key: string,
): CaseSeries[] {
  let start = 0;
  for (let i = 1; i < series.length; i++) {
    const [a, b] = [series[i - 1]!, series[i]!];
    if (runCuts.some((cut) => cut > a.runIndex && cut <= b.runIndex)) start = i;
    const run = runs[b.runIndex]!.run;
    const fields: [IdentityField, string | undefined, string | undefined][] = [
      ['timing method', timingMethodKind(a.c.timing!.method), timingMethodKind(b.c.timing!.method)],
      ['tuning', tuningOf(a.c), tuningOf(b.c)],
    ];
    for (const [field, from, to] of fields) {
      if (!differ(from, to)) continue;
      start = i;
      const same = own.find(
        (x) =>
          x.field === field && x.startedAt === run.started_at && x.from === from && x.to === to,
      );
      if (same) same.cases!.push(key);
      else {
        own.push({
          field,
          from: from!,
          to: to!,
          startedAt: run.started_at,
          ...(run.git_sha ? { commit: run.git_sha } : {}),
          cases: [key],
        });
      }
    }
  }
  return series.slice(start);
}

function referencesOf(results: KernelgateResults): Set<string> {
  const refs = new Set<string>();
  for (const k of results.kernels) {
    for (const v of k.variants) if (v.role === 'reference') refs.add(`${k.name}/${v.name}`);
  }
  return refs;
}

/** Each timed case's series over the runs (oldest first), by "kernel/variant/case". */
function seriesByCase(runs: KernelgateResults[]): Map<string, CaseSeries[]> {
  const byCase = new Map<string, CaseSeries[]>();
  runs.forEach((r, runIndex) => {
    for (const c of r.cases) {
      if (c.status !== 'ok' || !(c.timing?.median_ms !== undefined && c.timing.median_ms > 0)) {
        continue;
      }
      const key = `${c.kernel}/${c.variant}/${c.case}`;
      byCase.set(key, [...(byCase.get(key) ?? []), { c, runIndex }]);
    }
  });
  return byCase;
}

/**
 * The trend of the stored runs (any order; runs of another GPU model cut the series like any
 * boundary) and tonight's: per case its segment in the window and the step test's finding, the
 * boundaries met, and the nights on which the references (A/A controls: their code does not change)
 * moved together, which makes the candidates' steps of that night the machine's (controls.ts's
 * rule, applied to the history).
 */
export function historyTrend(
  history: readonly KernelgateResults[],
  tonight: KernelgateResults,
  /** the floors (compare.paired.threshold_pct and min_change_ms) and the window in nights */
  options: { floorPct: number; floorMs: number; window?: number },
): HistoryTrend {
  const window = options.window ?? STEP_WINDOW;
  const mode = paired(tonight) ? 'paired' : 'single';
  const earlier = history
    .filter((r) => r.run.started_at < tonight.run.started_at)
    .sort((a, b) => a.run.started_at.localeCompare(b.run.started_at));
  const same = earlier.filter((r) => (paired(r) ? 'paired' : 'single') === mode);
  const runs = [...same.slice(-(window - 1)), tonight];
  const { at: runCuts, list } = runBoundaries(runs);
  const own: TrendBoundary[] = [];
  const refs = referencesOf(tonight);
  const cases: CaseTrend[] = [];
  const last = runs.length - 1;
  for (const [key, series] of seriesByCase(runs)) {
    if (series[series.length - 1]!.runIndex !== last) continue;
    const segment = caseSegment(series, runs, runCuts, own, key);
    const points = segment.map(({ c, runIndex }) => ({
      startedAt: runs[runIndex]!.run.started_at,
      ...(runs[runIndex]!.run.git_sha ? { commit: runs[runIndex]!.run.git_sha } : {}),
      ms: c.timing!.median_ms,
      ...(c.paired?.median_ratio !== undefined ? { pairedRatio: c.paired.median_ratio } : {}),
    }));
    const finding = stepTest(
      points.map((p) => p.ms),
      { floorPct: options.floorPct, floorMs: options.floorMs, window },
    );
    if (finding === undefined) continue;
    const { c } = series[series.length - 1]!;
    const first = points[finding.index]!;
    cases.push({
      key,
      kernel: c.kernel,
      variant: c.variant,
      caseId: c.case,
      reference: refs.has(`${c.kernel}/${c.variant}`),
      points,
      finding: {
        ...finding,
        startedAt: first.startedAt,
        ...(first.commit ? { commit: first.commit } : {}),
      },
    });
  }
  const machine = attributeToMachine(cases, options.floorPct, seriesByCase(runs), refs, last);
  return {
    mode,
    leftOut: earlier.length - same.length,
    runs: runs.length - 1,
    ...(runs.length > 1 ? { since: runs[0]!.run.started_at } : {}),
    boundaries: [...list, ...own].sort((a, b) => a.startedAt.localeCompare(b.startedAt)),
    cases,
    machine,
    window,
  };
}

/**
 * The controls of a finding. The first night after the change, when it was paired, was timed beside
 * the last good run on the same machine, and its pairs decide: when they saw less than the paired
 * threshold (median ratio within ±floorPct), the code did not move that night, the machine or the
 * night did ('paired'); otherwise the code moved. Without pairs, the references as the
 * history's A/A controls: a reference's step is the machine's or the night's
 * (control 'reference'). When at least half of tonight's timed reference cases (and at least
 * three) moved the same way from the same night, the machine moved that night: the candidates'
 * findings of that night and direction are its ('machine'). Otherwise a candidate whose own case's
 * reference moved the same way from the same night is marked 'same-case'.
 */
function attributeToMachine(
  cases: CaseTrend[],
  floorPct: number,
  byCase: Map<string, CaseSeries[]>,
  refs: Set<string>,
  last: number,
): MachineStep[] {
  const isRef = (key: string) => refs.has(key.split('/').slice(0, 2).join('/'));
  const timedRefs = [...byCase.entries()].filter(
    ([key, s]) => isRef(key) && s[s.length - 1]!.runIndex === last,
  ).length;
  const moves = new Map<string, CaseTrend[]>();
  for (const t of cases) {
    if (!t.reference) continue;
    t.finding!.control = 'reference';
    const at = `${t.finding!.startedAt}\u0000${t.finding!.direction}`;
    moves.set(at, [...(moves.get(at) ?? []), t]);
  }
  const machine: MachineStep[] = [];
  for (const [at, moved] of moves) {
    if (timedRefs < 3 || moved.length * 2 < timedRefs) continue;
    const [startedAt, direction] = at.split('\u0000') as [string, StepFinding['direction']];
    const pcts = moved.map((t) => t.finding!.changePct).sort((a, b) => a - b);
    const mid = pcts.length / 2;
    const medianPct = pcts.length % 2 ? pcts[Math.floor(mid)]! : (pcts[mid - 1]! + pcts[mid]!) / 2;
    machine.push({ direction, startedAt, moved: moved.length, of: timedRefs, medianPct });
  }
  for (const t of cases) {
    if (t.reference) continue;
    const f = t.finding!;
    const ratio = t.points[f.index]!.pairedRatio;
    // The night's pairs decide when there are any: the code moved that night, or it did not.
    if (ratio !== undefined) {
      if (Math.abs(ratio - 1) * 100 < floorPct) f.control = 'paired';
      continue;
    }
    if (machine.some((m) => m.startedAt === f.startedAt && m.direction === f.direction)) {
      f.control = 'machine';
    } else if (
      cases.some(
        (r) =>
          r.reference &&
          r.kernel === t.kernel &&
          r.caseId === t.caseId &&
          r.finding!.startedAt === f.startedAt &&
          r.finding!.direction === f.direction,
      )
    ) {
      f.control = 'same-case';
    }
  }
  return machine;
}
