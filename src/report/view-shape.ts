// The view's fields as data, for test/templates-view.test.ts: every tag of every template must name
// one of them. The compiler holds this mirror to view-types.ts both ways: a field missing here, or
// one here that the interface lacks, does not compile. Nothing in the bundle reads it.
import type { ReportView, TruncatedView } from './view-types.js';

type Scalar = string | number | boolean;

/**
 * What a template can do with a field: 'value' prints or tests it, 'values' is a list of them
 * ({{#list}}{{.}}{{/list}}), [shape] a list of objects, and an object shape is entered.
 */
export type FieldShape<T> = [NonNullable<T>] extends [Scalar]
  ? 'value'
  : [NonNullable<T>] extends [readonly (infer E)[]]
    ? [NonNullable<E>] extends [Scalar]
      ? 'values'
      : readonly [ViewShape<NonNullable<E>>]
    : ViewShape<NonNullable<T>>;

export type ViewShape<T> = { readonly [K in keyof T]-?: FieldShape<T[K]> };

export type AnyShape =
  'value' | 'values' | readonly [AnyShape] | { readonly [key: string]: AnyShape };

const V = 'value';
const VS = 'values';

export const REPORT_VIEW_SHAPE: ViewShape<ReportView> = {
  marker: V,
  title: V,
  outcome: V,
  pr: V,
  nightly: V,
  full: V,
  synthetic: V,
  baselineSynthetic: V,
  context: { prNumber: V, prTitle: V },
  runUrl: V,
  dashboardUrl: V,
  run: { id: V, startedAt: V, harness: V, shaMd: V, gpu: V },
  baseline: { id: V, shaMd: V, gpu: V },
  judged: {
    paired: V,
    baseShaMd: V,
    thresholdPct: V,
    mdcPct: V,
    stored: V,
    identical: V,
    identicalHowMd: V,
    storedCompared: V,
    storedOtherGpu: V,
    storedNone: V,
    confirm: { confirmed: V, 'not-repeated': V, unmeasured: V },
  },
  policy: V,
  acceptedSince: VS,
  counts: {
    cases: V,
    passed: V,
    failed: V,
    drift: V,
    errors: V,
    skipped: V,
    unchecked: V,
    faster: V,
    slower: V,
    same: V,
    ambiguous: V,
    new: V,
    missing: V,
    untimed: V,
    measurementErrors: V,
    buildFailures: V,
  },
  buildsOrMeasurement: V,
  tailCounts: { verified: V, failed: V },
  changes: { none: V, nothing: V, onlyTails: V, table: V },
  why: { lines: V, variants: [{ title: V, table: V, functions: V }], evidence: V },
  changedCases: [{ kernel: V, table: V, tails: VS, more: V }],
  changedLegend: V,
  findings: { blocking: VS, other: VS, any: V },
  deep: {
    sanitizer: { title: V, table: V, findings: [{ title: V, block: V }], more: V },
    ncu: { title: V, table: V },
  },
  headline: { referenceMoved: V, intervals: V, table: V },
  trends: {
    moved: V,
    runs: V,
    since: V,
    table: V,
    charts: [{ title: V, xAxis: V, values: V, unit: V, yMax: V, height: V }],
  },
  history: {
    runs: V,
    empty: V,
    since: V,
    window: V,
    spreads: V,
    nights: V,
    floorPct: V,
    floorUs: V,
    mode: V,
    leftOut: V,
    boundaries: VS,
    hasBoundaries: V,
    steps: V,
    watches: V,
    machine: VS,
    controlledLine: V,
    controlled: V,
    none: V,
  },
  notes: VS,
  hasNotes: V,
  kernels: [
    {
      open: V,
      summary: V,
      description: V,
      flopsFormula: V,
      table: V,
      notes: VS,
      hasNotes: V,
      correctness: V,
      unpassed: V,
      charts: [{ title: V, labels: V, values: V, yMax: V, peak: V, height: V }],
    },
  ],
  tiers: [
    {
      kernel: V,
      variant: V,
      pinned: V,
      others: V,
      metric: V,
      balanced: V,
      headline: V,
      value: V,
      interval: V,
      intervalProblem: V,
      medianMs: V,
      tflops: V,
      reference: V,
      referenceMs: V,
      gemmTflops: V,
      wallClock: V,
      current: { name: V, grade: V },
      below: V,
      next: {
        name: V,
        grade: V,
        requiredMs: V,
        impliedTflops: V,
        unreachable: V,
        speedupNeeded: V,
      },
      top: V,
      problem: V,
      ladderTable: V,
    },
  ],
  hasTiers: V,
  diagnostics: { count: V, errors: V, table: V },
  environment: { table: V, stages: V, devices: V },
  builds: { count: V, problems: V, table: V, logs: [{ name: V, log: V }] },
  method: {
    confidencePct: V,
    thresholdPct: V,
    resamples: V,
    driftFactor: V,
    driftFloor: V,
    paired: V,
    pairedThresholdPct: V,
  },
};

export const TRUNCATED_VIEW_SHAPE: ViewShape<TruncatedView> = { limit: V };
