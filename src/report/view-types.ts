// The view the templates render (templates/*.mustache): their contract. buildView (view.ts) returns
// a ReportView, each section's module the section's interface; view-shape.ts mirrors every field
// for test/templates-view.test.ts, which fails on a template tag that names no field here. A field
// a template tests or prints is renamed here, in its module and in the templates together.
// Every field is present (undefined rather than absent), so a tag never falls through to an outer
// section's field of the same name.
import type { TierMetric } from '../config/index.js';
import type { ConfirmOutcome, GateCounts } from '../judge/index.js';

export interface ReportView {
  /** a hidden line publish uses to find its comment ('' without one) */
  marker: string;
  title: string;
  /** the title's outcome, Markdown */
  outcome: string;
  pr: boolean;
  nightly: boolean;
  /** the full report (job summary) rather than the comment */
  full: boolean;
  synthetic: boolean;
  baselineSynthetic: boolean;
  /** the pull request, as the trigger gave it */
  context: { prNumber: number | undefined; prTitle: string | undefined };
  runUrl: string | undefined;
  /** the trend dashboard's address, when it is given and looks like one */
  dashboardUrl: string | undefined;
  run: RunView;
  baseline: BaselineView | undefined;
  judged: JudgedView | undefined;
  policy: string | undefined;
  /** the nightly's accepted regressions since the last night, Markdown lines */
  acceptedSince: string[];
  counts: GateCounts;
  tailCounts: TailCountsView | undefined;
  buildsOrMeasurement: true | undefined;
  changes: ChangesView;
  why: WhyView | undefined;
  changedCases: ChangedKernelView[];
  changedLegend: string | undefined;
  findings: FindingsView;
  deep: DeepView | undefined;
  headline: HeadlineView | undefined;
  trends: TrendsView | undefined;
  history: HistoryView | undefined;
  notes: string[];
  hasNotes: boolean;
  /** every case, in the full report only ([] in the comment) */
  kernels: KernelView[];
  tiers: TierView[];
  hasTiers: boolean;
  diagnostics: DiagnosticsView;
  environment: EnvironmentView;
  builds: BuildsView;
  method: MethodView;
}

export interface RunView {
  id: string | undefined;
  startedAt: string;
  harness: string;
  /** the commit, Markdown (a link where the repository's address is known) */
  shaMd: string | undefined;
  gpu: string;
}

export interface BaselineView {
  id: string | undefined;
  shaMd: string | undefined;
  gpu: string;
}

/** summary: what a paired run judged against its base revision and the stored baseline */
export interface JudgedView {
  paired: number;
  baseShaMd: string | undefined;
  thresholdPct: string;
  mdcPct: string | undefined;
  stored: number;
  identical: number | undefined;
  /** how the identical variants were verified: "not timed, verified on the first seed only (…)" */
  identicalHowMd: string | undefined;
  storedCompared: boolean;
  storedOtherGpu: boolean;
  storedNone: boolean;
  confirm: Record<ConfirmOutcome, number> | undefined;
}

export interface ChangesView {
  none: boolean;
  /** no case changed and no tail case fails */
  nothing: boolean;
  /** no timed case changed, but this many tail cases (ci_cases) fail or erred */
  onlyTails: number | undefined;
  table: string;
}

/** The tail cases (ci_cases, verified on the device, untimed) when any fails or erred. */
export interface TailCountsView {
  verified: number;
  failed: number;
}

export interface WhyView {
  lines: string;
  /** the moved variants that have evidence to show (a build, tuning, profile or bisection) */
  variants: { title: string; table: string; functions: string }[];
  /** variants is not empty: the fold is drawn */
  evidence: boolean;
}

export interface ChangedKernelView {
  kernel: string;
  table: string;
  tails: string[];
  more: string | undefined;
}

export interface FindingsView {
  blocking: string[];
  other: string[];
  any: boolean;
}

export interface DeepView {
  sanitizer:
    | {
        title: string;
        table: string;
        findings: { title: string; block: string }[];
        more: string | undefined;
      }
    | undefined;
  ncu: { title: string; table: string } | undefined;
}

export interface HeadlineView {
  referenceMoved: string | undefined;
  /** a row shows its ratio's interval (TierStatus.interval) */
  intervals: boolean;
  table: string;
}

export interface TrendsView {
  moved: string | undefined;
  runs: number;
  since: string;
  table: string;
  charts: {
    title: string;
    /** the x-axis after `x-axis `: `["11-21", …]`, or numbered runs `"run …" 1 --> n` */
    xAxis: string;
    values: string;
    unit: string;
    yMax: number;
    /** pixels */
    height: number;
  }[];
}

export interface HistoryView {
  runs: number;
  /** no stored run of tonight's kind in the window (only ones left out): nothing to read yet */
  empty: boolean;
  since: string;
  window: number;
  spreads: number;
  nights: number;
  floorPct: string;
  floorUs: string;
  mode: string;
  leftOut: string | undefined;
  boundaries: string[];
  hasBoundaries: boolean;
  steps: string | undefined;
  watches: string | undefined;
  machine: string[];
  controlledLine: string | undefined;
  controlled: string | undefined;
  none: boolean;
}

export interface KernelView {
  /** the kernel's <details> starts open: a case of it is wrong, slower, an error … */
  open: boolean;
  /** the <details>' one line: the kernel, its cases and their verdicts counted */
  summary: string;
  description: string | undefined;
  flopsFormula: string | undefined;
  /** the timing of every case (at most MAX_COLUMNS columns) */
  table: string;
  /** each case's note, one list item each */
  notes: string[];
  hasNotes: boolean;
  /** per variant: cases, passed, not passed, the worst error against its tolerance */
  correctness: string;
  /** every case that did not pass, with why ('' when all passed) */
  unpassed: string;
  charts: KernelChartView[];
}

/** A horizontal bar chart of the headline case, drawn only with MIN_CHART_BARS bars or more. */
export interface KernelChartView {
  title: string;
  labels: string;
  values: string;
  yMax: number;
  peak: string | undefined;
  /** pixels: the frame and one band per bar */
  height: number;
}

export interface TierView {
  kernel: string;
  variant: string;
  pinned: boolean;
  others: string | undefined;
  metric: TierMetric;
  /** the speedup compares the balanced times (timing.balanced_ms), not the medians */
  balanced: boolean;
  headline: string;
  value: string;
  /** the value's interval ("99 % CI 1.05–1.11×"), or why it has none */
  interval: string | undefined;
  intervalProblem: string | undefined;
  medianMs: string;
  tflops: string;
  reference: string | undefined;
  referenceMs: string | undefined;
  gemmTflops: string | undefined;
  wallClock: string | undefined;
  current: { name: string; grade?: string | undefined } | undefined;
  below: boolean;
  next:
    | {
        name: string;
        grade: string | undefined;
        requiredMs: string;
        impliedTflops: string;
        unreachable: boolean;
        speedupNeeded: string;
      }
    | undefined;
  top: boolean;
  problem: string | undefined;
  ladderTable: string;
}

export interface DiagnosticsView {
  count: number;
  errors: number;
  table: string;
}

export interface EnvironmentView {
  table: string;
  stages: string;
  devices: string | undefined;
}

export interface BuildsView {
  count: number;
  problems: number;
  table: string;
  logs: { name: string; log: string }[];
}

/** the footer's and the full table's words on how verdicts are made */
export interface MethodView {
  confidencePct: string;
  thresholdPct: string;
  resamples: number;
  driftFactor: number;
  driftFloor: string;
  paired: boolean;
  pairedThresholdPct: string;
}

/** partials/truncated.md.mustache, rendered on its own when a comment is cut */
export interface TruncatedView {
  limit: string;
}
