// Renders the report (PR comment, nightly report, job summary) from the judged results through
// the mustache templates in templates/: code computes the values, templates hold the wording.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Mustache from 'mustache';
import { describeChange, type GateResult } from './gate.js';
import type { CaseComparison, Comparison, CorrectnessVerdict, PerfVerdict } from './compare.js';
import type { Config } from './config.js';
import {
  codeBlock,
  escapeMarkdown,
  fixed,
  formatMs,
  formatRatioPct,
  formatSci,
  mermaidLabel,
  table,
  type Cell,
} from './markdown.js';
import type { KernelgateResults } from './results-types.js';
import {
  caseGbps,
  caseTflops,
  casePctPeak,
  caseDtype,
  peakTflops,
  type MeasurementError,
  type TierStatus,
} from './tiers.js';

/** GitHub refuses comment bodies over 65,536 characters; the margin leaves room for a marker. */
export const GITHUB_COMMENT_LIMIT = 65_536;
export const COMMENT_MARGIN = 1_024;
export const COMMENT_MAX_CHARS = GITHUB_COMMENT_LIMIT - COMMENT_MARGIN;

/** How far a comment had to degrade to fit: see renderReport. */
export type DegradeLevel = 0 | 1 | 2 | 3;

export interface ReportInput {
  kind: 'pr' | 'nightly';
  results: KernelgateResults;
  baseline?: KernelgateResults;
  comparison: Comparison;
  tiers: TierStatus[];
  gate: GateResult;
  config: Config;
  /** a hidden line publish uses to find its comment, e.g. <!-- kernelgate:report:default --> */
  marker?: string;
  /** facts about the trigger, shown as given (escaped) */
  context?: { prNumber?: number; prTitle?: string; sha?: string; ref?: string; runUrl?: string };
  /** override the templates folder (tests) */
  templatesDir?: string;
  /** override the comment size budget (tests) */
  commentMaxChars?: number;
}

export interface RenderedReport {
  /** everything, for the job summary and the report file */
  full: string;
  /** fits a GitHub comment (≤ COMMENT_MAX_CHARS) */
  comment: string;
  /** 0 full, 1 sections collapsed, 2 passing rows dropped, 3 truncated */
  commentLevel: DegradeLevel;
}

const PERF_ICON: Record<PerfVerdict, string> = {
  SLOWER: '🔴',
  FASTER: '🟢',
  SAME: '⚪',
  AMBIGUOUS: '🟡',
  NEW: '🆕',
  MISSING: '❓',
  UNTIMED: '➖',
};

const CORRECTNESS_ICON: Record<CorrectnessVerdict, string> = {
  PASS: '✅',
  FAIL: '❌',
  DRIFT: '🌊',
  ERROR: '💥',
  UNCHECKED: '❔',
  SKIPPED: '⏭️',
  MISSING: '❓',
};

/** Rows that need a reader's eye are kept when the comment must shrink. */
function needsAttention(c: CaseComparison, measured: Set<string>): boolean {
  return (
    !['PASS', 'SKIPPED'].includes(c.correctness) ||
    ['SLOWER', 'FASTER', 'AMBIGUOUS', 'MISSING'].includes(c.perf) ||
    measured.has(c.key)
  );
}

const ATTENTION_ORDER: PerfVerdict[] = ['MISSING', 'SLOWER', 'AMBIGUOUS', 'FASTER'];

function attentionRank(c: CaseComparison, measured: Set<string>): number {
  if (c.correctness === 'FAIL' || c.correctness === 'DRIFT') return 0;
  if (c.correctness === 'ERROR' || measured.has(c.key)) return 1;
  const perf = ATTENTION_ORDER.indexOf(c.perf);
  return perf >= 0 ? 2 + perf : 10;
}

interface ViewOptions {
  collapse: boolean;
  dropPassing: boolean;
  maxRows: number | undefined;
  logTails: boolean;
}

function trusted(text: string): Cell {
  return { trusted: text };
}

function correctnessCell(c: CaseComparison): Cell {
  const detail = c.correctness === 'ERROR' && c.status !== 'missing' ? ` (${c.status})` : '';
  return trusted(`${CORRECTNESS_ICON[c.correctness]} ${c.correctness}${detail}`);
}

function errorCell(c: CaseComparison): Cell {
  if (c.relL2 === undefined && c.tolRelL2 === undefined) return trusted('');
  const rel = c.relL2 === null ? 'NaN' : formatSci(c.relL2);
  return trusted(`${rel} / ${formatSci(c.tolRelL2)}`);
}

/** How a judged case was compared, beside its Δ in a run that has pairs (methods mix there). */
const METHOD_MARK: Record<CaseComparison['method'], string> = {
  paired: ' · paired',
  baseline: ' · vs baseline',
  none: '',
};

/**
 * Δ, verdict and CI cells; a threshold raised above its method's default (calibrated noise, the
 * absolute floor) is shown beside the CI. In a run with pairs the Δ says how it was measured.
 */
function perfCells(c: CaseComparison, input: ReportInput): Cell[] {
  const verdict = trusted(`${PERF_ICON[c.perf]} ${c.perf}`);
  if (c.ratio === undefined) return [trusted(''), verdict, trusted('')];
  const ci =
    c.ciLo !== undefined && c.ciHi !== undefined
      ? `${formatRatioPct(c.ciLo)} … ${formatRatioPct(c.ciHi)}`
      : 'n/a';
  const compare = input.config.compare;
  const defaultThresholdPct =
    c.method === 'paired' ? compare.paired.thresholdPct : compare.thresholdPct;
  const threshold =
    c.thresholdPct !== defaultThresholdPct ? ` (±${fixed(c.thresholdPct, 1)} %)` : '';
  const mark = input.comparison.paired ? METHOD_MARK[c.method] : '';
  return [trusted(`${formatRatioPct(c.ratio)}${mark}`), verdict, trusted(`${ci}${threshold}`)];
}

function caseRow(
  c: CaseComparison,
  input: ReportInput,
  measured: Map<string, MeasurementError>,
): Cell[] {
  const current = c.current;
  const tflops = current ? caseTflops(current) : undefined;
  const gbps = current ? caseGbps(current) : undefined;
  const pct = current ? casePctPeak(current, input.results, input.config) : undefined;
  const bad = measured.get(c.key);
  const note = [c.correctnessReason, c.perfNote, bad?.message]
    .filter((n): n is string => Boolean(n) && n !== 'no correctness record')
    .join('; ');
  return [
    c.variant,
    c.caseId,
    trusted(formatMs(c.medianMs)),
    trusted(c.iqrMs === undefined ? '' : formatMs(c.iqrMs)),
    trusted(
      tflops === undefined || tflops === 0
        ? ''
        : `${bad?.quantity === 'tflops' ? '⚠️ ' : ''}${fixed(tflops, 1)}`,
    ),
    trusted(gbps === undefined ? '' : `${bad?.quantity === 'gbps' ? '⚠️ ' : ''}${fixed(gbps, 0)}`),
    trusted(
      pct === undefined || tflops === 0
        ? ''
        : `${bad?.quantity === 'tflops' ? '⚠️ ' : ''}${fixed(pct, 1)}`,
    ),
    ...perfCells(c, input),
    correctnessCell(c),
    errorCell(c),
    note,
  ];
}

const RESULT_HEADER = [
  'variant',
  'case',
  'median ms',
  'IQR ms',
  'TFLOPS',
  'GB/s',
  '% peak',
  'Δ vs baseline',
  'verdict',
  'CI of Δ',
  'correctness',
  'rel_l2 / tol',
  'note',
];
const RESULT_ALIGN: ('l' | 'r' | 'c')[] = [
  'l',
  'l',
  'r',
  'r',
  'r',
  'r',
  'r',
  'r',
  'l',
  'r',
  'l',
  'r',
  'l',
];

function chartsFor(kernel: string, input: ReportInput) {
  const tier = input.tiers.find((t) => t.kernel === kernel && t.caseId);
  const cases = input.results.cases.filter((c) => c.kernel === kernel);
  const headlineId = tier?.caseId ?? cases.find((c) => (caseTflops(c) ?? 0) >= 0.05)?.case;
  if (!headlineId) return [];
  const bars = cases
    // Bars that would round to 0.0 TFLOPS (tiny CI shapes, copies) say nothing.
    .filter((c) => c.case === headlineId && (caseTflops(c) ?? 0) >= 0.05)
    .map((c) => ({ label: mermaidLabel(c.variant), tflops: caseTflops(c) as number }));
  if (bars.length === 0) return [];
  const first = cases.find((c) => c.case === headlineId);
  const peak = first ? peakTflops(input.results, input.config, caseDtype(first)) : undefined;
  const top = Math.max(peak ?? 0, ...bars.map((b) => b.tflops));
  return [
    {
      title: mermaidLabel(`${kernel} ${headlineId}`),
      labels: bars.map((b) => `"${b.label}"`).join(', '),
      values: bars.map((b) => fixed(b.tflops, 1)).join(', '),
      yMax: Math.ceil(top / 100) * 100 || 1,
      peak: peak === undefined ? undefined : fixed(peak, 1),
    },
  ];
}

/** The results table's header: Δ is not only "vs baseline" in a run with pairs. */
function resultHeader(input: ReportInput): string[] {
  if (!input.comparison.paired) return RESULT_HEADER;
  return RESULT_HEADER.map((h) => (h === 'Δ vs baseline' ? 'Δ' : h));
}

function kernelViews(input: ReportInput, opts: ViewOptions) {
  const measuredList = input.gate.measurementErrors;
  const measured = new Map(measuredList.map((m) => [m.key, m]));
  const measuredKeys = new Set(measured.keys());
  const names = [...new Set(input.comparison.cases.map((c) => c.kernel))];
  return names.map((name) => {
    const all = input.comparison.cases.filter((c) => c.kernel === name);
    let rows = all;
    if (opts.dropPassing) rows = rows.filter((c) => needsAttention(c, measuredKeys));
    if (opts.maxRows !== undefined && rows.length > opts.maxRows) {
      const keep = new Set(
        [...rows]
          .sort((a, b) => attentionRank(a, measuredKeys) - attentionRank(b, measuredKeys))
          .slice(0, opts.maxRows),
      );
      rows = rows.filter((c) => keep.has(c));
    }
    const info = input.results.kernels.find((k) => k.name === name);
    const attention = all.filter((c) => needsAttention(c, measuredKeys)).length;
    return {
      name,
      description: info?.description,
      flopsFormula: info?.flops_formula,
      rowCount: all.length,
      attention,
      table: rows.length
        ? table(
            resultHeader(input),
            rows.map((c) => caseRow(c, input, measured)),
            RESULT_ALIGN,
          )
        : '',
      dropped: all.length - rows.length || undefined,
      charts: chartsFor(name, input),
    };
  });
}

function tierViews(input: ReportInput) {
  return input.tiers.map((t) => {
    const value =
      t.value === undefined
        ? 'n/a'
        : `${fixed(t.value, t.unit === '%' ? 1 : 2)}${t.unit === '%' ? ' %' : '×'}`;
    const ladderRows = t.ladder.map((m): Cell[] => [
      m.name,
      m.grade ?? '',
      trusted(`${fixed(m.min, 2)}${t.unit === '%' ? ' %' : '×'}`),
      trusted(formatMs(m.requiredMs)),
      trusted(fixed(m.impliedTflops, 1)),
      trusted(
        m.achieved
          ? '✅ reached'
          : m.reachable === false
            ? `🚫 unreachable: needs ${fixed(m.impliedTflops, 0)} TFLOPS > ${fixed(t.peakTflops, 1)} peak`
            : m.reachable === true
              ? '⬜ ahead'
              : '⬜ ahead (peak unknown)',
      ),
    ]);
    const unreachable = t.ladder.filter((m) => m.reachable === false && !m.achieved);
    return {
      kernel: t.kernel,
      variant: t.variant,
      metric: t.metric,
      headline: t.caseId ?? t.headline,
      value,
      medianMs: formatMs(t.medianMs),
      tflops: fixed(t.tflops, 1),
      reference: t.referenceVariant,
      referenceMs: t.referenceMedianMs === undefined ? undefined : formatMs(t.referenceMedianMs),
      gemmTflops: t.gemmTflops === undefined ? undefined : fixed(t.gemmTflops, 1),
      current: t.current,
      below: t.value !== undefined && !t.current,
      next: t.next
        ? {
            name: t.next.name,
            grade: t.next.grade,
            requiredMs: formatMs(t.next.requiredMs),
            impliedTflops: fixed(t.next.impliedTflops, 1),
            unreachable: t.next.reachable === false,
            speedupNeeded: fixed(t.speedupNeeded, 2),
          }
        : undefined,
      top: !t.next && t.value !== undefined,
      unreachableCount: unreachable.length || undefined,
      problem: t.problem,
      ladderTable: table(
        ['tier', 'grade', 'min', 'needs ms', 'implies TFLOPS', 'status'],
        ladderRows,
        ['l', 'l', 'r', 'r', 'r', 'l'],
      ),
    };
  });
}

function diagnosticsView(input: ReportInput) {
  const diags = input.results.diagnostics;
  const levelIcon = { error: '❌ error', warning: '⚠️ warning', info: 'ℹ️ info' } as const;
  const order = { error: 0, warning: 1, info: 2 } as const;
  const sorted = [...diags].sort((a, b) => order[a.level] - order[b.level]);
  return {
    count: diags.length,
    errors: diags.filter((d) => d.level === 'error').length,
    table: diags.length
      ? table(
          ['level', 'code', 'where', 'message', 'fix'],
          sorted.map((d) => [
            trusted(levelIcon[d.level]),
            d.code,
            [d.source, d.kernel && `${d.kernel}${d.variant ? `/${d.variant}` : ''}`]
              .filter(Boolean)
              .join(' '),
            d.message,
            d.fix ?? '',
          ]),
        )
      : '',
  };
}

function environmentView(input: ReportInput) {
  const env = input.results.environment;
  const gpu = env.gpu;
  const rows: Cell[][] = [
    ['GPU', `${gpu.name}${gpu.count && gpu.count > 1 ? ` × ${gpu.count}` : ''}`],
    ['SKU', gpu.sku ?? 'unknown'],
  ];
  const add = (what: string, value: string | number | undefined) => {
    if (value !== undefined) rows.push([what, String(value)]);
  };
  add('compute capability', gpu.compute_capability);
  add('SMs', gpu.sm_count);
  add('memory GiB', gpu.memory_bytes && fixed(gpu.memory_bytes / 2 ** 30, 1));
  add('L2 MiB', gpu.l2_bytes && fixed(gpu.l2_bytes / 2 ** 20, 0));
  add('max SM clock MHz', gpu.sm_clock_max_mhz);
  add('power limit W', gpu.power_limit_w);
  add('driver', env.driver_version);
  add('driver supports CUDA', env.driver_cuda_version);
  add('CUDA runtime', env.cuda_runtime_version);
  add('CUDA toolkit (nvcc)', env.cuda_toolkit_version);
  for (const [lib, version] of Object.entries(env.libraries ?? {}).sort()) add(lib, version);
  const c = env.ceilings;
  add('measured copy GB/s', c?.copy_gbps && fixed(c.copy_gbps, 0));
  for (const [dtype, tflops] of Object.entries(c?.gemm_tflops ?? {})) {
    add(`measured cuBLAS GEMM ${dtype} TFLOPS`, fixed(tflops, 1));
  }
  const sku = gpu.sku;
  const peaks = sku ? input.config.peaks[sku] : undefined;
  for (const [dtype, tflops] of Object.entries(peaks?.tflops ?? c?.peak_tflops ?? {})) {
    add(`datasheet peak ${dtype} TFLOPS`, fixed(tflops, 1));
  }
  add('datasheet bandwidth GB/s', peaks?.gbps ?? c?.peak_gbps);
  return { table: table(['fact', 'value'], rows, ['l', 'l']), stages: stagesLine(input.results) };
}

/** The action's stages and, inside the harness, its phases, in the order they run. */
const STAGES: [string, string][] = [
  ['doctor', 'doctor'],
  ['build', 'build'],
  ['build_base', 'base build'],
  ['harness', 'harness'],
];
const PHASES: [string, string][] = [
  ['environment', 'environment'],
  ['setup', 'set-up'],
  ['verify', 'verify'],
  ['base setup', 'base set-up'],
  ['base verify', 'base verify'],
  ['bench', 'timing'],
  ['ceilings', 'ceilings'],
];

/**
 * "Time: 320 s: doctor 6 s · build 26 s · … harness 287 s (set-up 52 s, …; by kernel: gemm 9 s,
 * …)" from results run.stage_seconds, or '' when the run recorded none. Names that are neither a
 * known stage or phase nor a kernel of the run are listed last, escaped.
 */
export function stagesLine(results: KernelgateResults): string {
  const secs = results.run.stage_seconds ?? {};
  const keys = Object.keys(secs).filter((k) => Number.isFinite(secs[k]));
  if (!keys.length) return '';
  const s = (k: string) => `${fixed(secs[k], 0)} s`;
  const kernels = new Set(results.cases.map((c) => c.kernel));
  const known = new Set([...STAGES, ...PHASES].map(([k]) => k));
  const stages = STAGES.filter(([k]) => k in secs);
  const phases = PHASES.filter(([k]) => k in secs).map(([k, label]) => `${label} ${s(k)}`);
  const byKernel = keys.filter((k) => kernels.has(k) && !known.has(k));
  const other = keys.filter((k) => !kernels.has(k) && !known.has(k));
  const inner = [
    phases.join(', '),
    byKernel.length
      ? `by kernel: ${byKernel.map((k) => `${escapeMarkdown(k)} ${s(k)}`).join(', ')}`
      : '',
  ]
    .filter(Boolean)
    .join('; ');
  const parts = stages.map(([k, label]) =>
    k === 'harness' && inner ? `${label} ${s(k)} (${inner})` : `${label} ${s(k)}`,
  );
  if (!stages.some(([k]) => k === 'harness') && inner) parts.push(inner);
  parts.push(...other.map((k) => `${escapeMarkdown(k)} ${s(k)}`));
  const total = stages.reduce((sum, [k]) => sum + (secs[k] ?? 0), 0);
  return `Time of each stage${stages.length ? ` (${fixed(total, 0)} s in all)` : ''}: ${parts.join(' · ')}.`;
}

/** Opcodes worth a reader's attention in a SASS census: tensor cores, async copies, local memory. */
const SASS_HIGHLIGHTS = ['HGMMA', 'HMMA', 'LDSM', 'LDGSTS', 'UTMALDG', 'LDL', 'STL'];

function buildsView(input: ReportInput, opts: ViewOptions) {
  const builds = input.results.builds ?? [];
  const statusText = {
    ok: '✅ ok',
    failed: '❌ failed',
    expectation_failed: '⚠️ expectation unmet',
  };
  const rows = builds.map((b): Cell[] => {
    const fns = b.functions ?? [];
    const maxOf = (pick: (f: (typeof fns)[number]) => number | undefined) => {
      const values = fns.map(pick).filter((v): v is number => v !== undefined);
      return values.length ? String(Math.max(...values)) : '';
    };
    const census = b.sass_census ?? {};
    const highlights = SASS_HIGHLIGHTS.filter((op) => census[op] !== undefined).map(
      (op) => `${op} ${census[op]}`,
    );
    const unmet = (b.expectations ?? []).filter((e) => !e.ok).map((e) => `${e.name}: ${e.message}`);
    return [
      `${b.kernel}/${b.variant}`,
      trusted(`${statusText[b.status]}${b.cached ? ' (cached)' : ''}`),
      [...(b.archs?.sass ?? []), ...(b.archs?.ptx ?? []).map((p) => `PTX ${p}`)].join(', '),
      trusted(maxOf((f) => f.registers)),
      trusted(maxOf((f) => f.smem_bytes)),
      trusted(maxOf((f) => f.stack_bytes)),
      trusted(maxOf((f) => (f.spill_load_bytes ?? 0) + (f.spill_store_bytes ?? 0))),
      highlights.join(', '),
      unmet.join('\n'),
    ];
  });
  const logs = opts.logTails
    ? builds
        .filter((b) => b.status !== 'ok' && b.log_tail)
        .map((b) => ({ name: `${b.kernel}/${b.variant}`, log: codeBlock(b.log_tail as string) }))
    : [];
  return {
    count: builds.length,
    problems: builds.filter((b) => b.status !== 'ok').length,
    table: builds.length
      ? table(
          [
            'kernel/variant',
            'status',
            'archs',
            'max registers',
            'max smem bytes',
            'max stack bytes',
            'max spill bytes',
            'SASS highlights',
            'unmet expectations',
          ],
          rows,
          ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'l', 'l'],
        )
      : '',
    logs,
  };
}

function nextSteps(input: ReportInput) {
  const steps: Record<string, unknown>[] = [];
  for (const c of input.comparison.cases) {
    if (['FAIL', 'DRIFT', 'ERROR'].includes(c.correctness)) {
      steps.push({
        fixCase: true,
        label: c.label,
        verdict: c.correctness,
        reason: c.correctnessReason,
      });
    }
  }
  for (const b of input.results.builds ?? []) {
    if (b.status === 'ok') continue;
    const unmet = (b.expectations ?? []).filter((e) => !e.ok).map((e) => `${e.name}: ${e.message}`);
    steps.push({
      fixBuild: true,
      label: `${b.kernel}/${b.variant}`,
      failed: b.status === 'failed',
      detail: unmet.join('; '),
    });
  }
  for (const m of input.gate.measurementErrors) {
    steps.push({ fixMeasurement: true, label: m.label });
  }
  for (const d of input.results.diagnostics) {
    if (d.fix && d.level !== 'info')
      steps.push({ diagnostic: true, message: d.message, fix: d.fix });
  }
  const slower = input.comparison.cases.filter((c) => c.perf === 'SLOWER');
  for (const c of slower) steps.push({ slower: true, label: c.label, change: describeChange(c) });
  const ambiguous = input.gate.counts.ambiguous;
  if (ambiguous) steps.push({ ambiguous: true, count: ambiguous });
  for (const t of input.tiers) {
    if (t.next && t.next.reachable !== false) {
      steps.push({
        tier: true,
        kernel: t.kernel,
        variant: t.variant,
        name: t.next.name,
        grade: t.next.grade,
        requiredMs: formatMs(t.next.requiredMs),
        impliedTflops: fixed(t.next.impliedTflops, 1),
        caseId: t.caseId,
      });
    } else if (t.next) {
      steps.push({ tierUnreachable: true, kernel: t.kernel, name: t.next.name });
    }
  }
  return steps;
}

/** "Judged: N cases paired against base `abc1234` in this job (…), M against the stored baseline …" */
function judgedView(input: ReportInput) {
  const paired = input.comparison.paired;
  if (!paired) return undefined;
  const state = input.comparison.baseline;
  return {
    paired: paired.cases,
    // Shown as code: only a commit id (hex) can be, anything else is left out.
    baseSha: /^[0-9a-f]{4,64}$/i.test(paired.baseSha ?? '')
      ? paired.baseSha?.slice(0, 12)
      : undefined,
    thresholdPct: fixed(paired.thresholdPct, 1),
    mdcPct: paired.medianMdcPct === undefined ? undefined : fixed(paired.medianMdcPct, 2),
    stored: paired.baselineCases,
    storedCompared: state === 'compared',
    storedOtherGpu: state === 'other-gpu',
    storedNone: state === 'none',
  };
}

function buildView(input: ReportInput, opts: ViewOptions) {
  const { gate: g, results, comparison, config } = input;
  const maxReasons = 10;
  const run = results.run;
  return {
    marker: input.marker ?? '',
    title: config.report.title,
    pr: input.kind === 'pr',
    nightly: input.kind === 'nightly',
    pass: g.verdict === 'pass',
    synthetic: run.synthetic === true,
    baselineSynthetic: input.baseline?.run.synthetic === true,
    context: input.context,
    run: {
      id: run.id,
      startedAt: run.started_at,
      harness: run.harness,
      sha: run.git_sha?.slice(0, 12),
      ref: run.git_ref,
      gpu: gpuName(results),
    },
    baseline: comparison.baselineRun
      ? { ...comparison.baselineRun, gitSha: comparison.baselineRun.gitSha?.slice(0, 12) }
      : undefined,
    baselineCompared: comparison.baseline === 'compared',
    judged: judgedView(input),
    counts: g.counts,
    reasons: g.reasons.slice(0, maxReasons),
    moreReasons: Math.max(0, g.reasons.length - maxReasons) || undefined,
    warnings: g.warnings.slice(0, maxReasons),
    moreWarnings: Math.max(0, g.warnings.length - maxReasons) || undefined,
    notes: comparison.notes,
    hasNotes: comparison.notes.length > 0 || input.baseline?.run.synthetic === true,
    collapse: opts.collapse,
    kernels: kernelViews(input, opts),
    tiers: tierViews(input),
    hasTiers: input.tiers.length > 0,
    diagnostics: diagnosticsView(input),
    environment: environmentView(input),
    builds: buildsView(input, opts),
    nextSteps: nextSteps(input),
    method: {
      confidencePct: fixed(config.compare.confidence * 100, 0),
      thresholdPct: fixed(config.compare.thresholdPct, 1),
      resamples: config.compare.resamples,
      driftFactor: config.correctness.driftFactor,
      driftFloor: formatSci(config.correctness.driftFloorRelL2),
      paired: comparison.paired !== undefined,
      pairedThresholdPct: fixed(config.compare.paired.thresholdPct, 1),
    },
    truncated: false,
  };
}

/** The SKU when the harness could normalise it, else the name the driver reported. */
function gpuName(results: KernelgateResults): string {
  const { sku, name } = results.environment.gpu;
  return sku && sku !== 'unknown' && sku !== 'none' ? sku : name;
}

function defaultTemplatesDir(): string {
  // src/render.ts and dist/*.js both sit one level below the repository root.
  return fileURLToPath(new URL('../templates/', import.meta.url));
}

interface Templates {
  main: string;
  partials: Record<string, string>;
}

function loadTemplates(dir: string, kind: ReportInput['kind']): Templates {
  const main = readFileSync(
    join(dir, kind === 'pr' ? 'pr-comment.md.mustache' : 'nightly.md.mustache'),
    'utf8',
  );
  const partials: Record<string, string> = {};
  for (const file of readdirSync(join(dir, 'partials'))) {
    const match = /^(.+)\.md\.mustache$/.exec(file);
    if (match?.[1]) partials[match[1]] = readFileSync(join(dir, 'partials', file), 'utf8');
  }
  return { main, partials };
}

function renderView(templates: Templates, view: object): string {
  const text = Mustache.render(templates.main, view, templates.partials, {
    escape: escapeMarkdown,
  });
  return `${text.replace(/\n{3,}/g, '\n\n').trim()}\n`;
}

/**
 * Cuts a rendered report to `maxChars` at a line boundary without leaving a code fence or a
 * <details> open, then appends the template's truncation note.
 */
export function truncateMarkdown(markdown: string, maxChars: number, note: string): string {
  const budget = maxChars - note.length - 64;
  let lines = markdown.slice(0, Math.max(0, budget)).split('\n');
  lines.pop();
  const fenceAt = (l: string) => /^\s*(`{3,}|~{3,})/.test(l);
  const fences = lines.filter(fenceAt).length;
  if (fences % 2 === 1) {
    let lastFence = lines.length - 1;
    while (lastFence >= 0 && !fenceAt(lines[lastFence] as string)) lastFence--;
    lines = lines.slice(0, lastFence);
  }
  const opened = lines.filter((l) => l.includes('<details>')).length;
  const closed = lines.filter((l) => l.includes('</details>')).length;
  const closing = Array.from({ length: Math.max(0, opened - closed) }, () => '\n</details>');
  return `${lines.join('\n')}\n${closing.join('')}\n\n${note}\n`;
}

/**
 * Renders the full report and a comment that fits GitHub's limit. The comment degrades in steps:
 * detail sections collapsed and log tails left out (1), then rows that need no attention dropped
 * with a count (2), then truncated with a note pointing to the full report (3).
 */
export function renderReport(input: ReportInput): RenderedReport {
  const templates = loadTemplates(input.templatesDir ?? defaultTemplatesDir(), input.kind);
  const maxChars = input.commentMaxChars ?? COMMENT_MAX_CHARS;
  const full = renderView(
    templates,
    buildView(input, { collapse: false, dropPassing: false, maxRows: undefined, logTails: true }),
  );
  const maxRows = input.config.report.maxRows;
  const levels: [DegradeLevel, ViewOptions][] = [
    [0, { collapse: false, dropPassing: false, maxRows, logTails: true }],
    [1, { collapse: true, dropPassing: false, maxRows, logTails: false }],
    [2, { collapse: true, dropPassing: true, maxRows, logTails: false }],
  ];
  let last = '';
  for (const [level, opts] of levels) {
    last = renderView(templates, buildView(input, opts));
    if (last.length <= maxChars) return { full, comment: last, commentLevel: level };
  }
  const note = Mustache.render(
    templates.partials.truncated ?? '',
    { limit: GITHUB_COMMENT_LIMIT.toLocaleString('en-US') },
    {},
    { escape: escapeMarkdown },
  ).trim();
  return { full, comment: truncateMarkdown(last, maxChars, note), commentLevel: 3 };
}
