// Renders the report (PR comment, nightly report, job summary) from the judged results through
// the mustache templates in templates/: code computes the values, templates hold the wording.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mustache from 'mustache';
import type { GateResult } from '../judge/index.js';
import type {
  CaseComparison,
  Comparison,
  CorrectnessVerdict,
  PerfVerdict,
} from '../judge/index.js';
import type { Config } from '../config/index.js';
import {
  codeBlock,
  escapeMarkdown,
  fixed,
  formatMs,
  formatRatioPct,
  formatSci,
  mermaidLabel,
  packageRoot,
  table,
  type Cell,
} from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import { shardProblems, shardTitleParts } from '../shard/index.js';
import {
  baseArmResults,
  caseGbps,
  caseTflops,
  casePctPeak,
  caseDtype,
  evaluateTiers,
  peakTflops,
  type MeasurementError,
  type TierStatus,
} from '../judge/index.js';
import {
  blockingKinds,
  CHANGE_KINDS,
  changeKind,
  isControl,
  commonAxes,
  errorPattern,
  failurePattern,
  groupCases,
  groupDiagnostics,
  headlineRows,
  headlineTrends,
  outcomeOf,
  ratioSpread,
  sparkline,
  variantChanges,
  verdictCounts,
  worstFirst,
  type ChangeKind,
  type Changes,
  type Group,
  type HeadlineTrend,
  type VerdictCounts,
} from './digest.js';

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
  /**
   * Earlier stored runs of the same branch and GPU (the store's history(), any order): the
   * nightly report shows each headline's trend across them. Runs of another GPU are left out.
   */
  history?: KernelgateResults[];
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
  /** 0 in full, 1 fewer changed-case rows and no examples, 2 no changed-case rows, 3 truncated */
  commentLevel: DegradeLevel;
  /**
   * A nightly report that found a regression or a failure: one line to post as a new comment on
   * the nightly issue (editing the issue's body notifies nobody; a comment notifies its
   * subscribers). Absent for pull requests and for a nightly that passed cleanly.
   */
  alert?: string;
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

function trusted(text: string): Cell {
  return { trusted: text };
}

function correctnessCell(c: CaseComparison): Cell {
  const detail = c.correctness === 'ERROR' && c.status !== 'missing' ? ` (${c.status})` : '';
  return trusted(`${CORRECTNESS_ICON[c.correctness]} ${c.correctness}${detail}`);
}

function errorCell(c: CaseComparison): Cell {
  if (c.relL2 === undefined && c.tolRelL2 === undefined) return trusted('');
  // A benchmark judged by its own check (an adapter's `check.regex`) measured no error.
  if (c.relL2 === null && c.tolRelL2 === 0) return trusted('');
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

/** The parameter names of a set of cases, in the order they first appear: one column each. */
function axisKeys(cases: CaseComparison[]): string[] {
  const keys: string[] = [];
  for (const c of cases) for (const k of Object.keys(c.params)) if (!keys.includes(k)) keys.push(k);
  return keys;
}

function axisCells(c: CaseComparison, keys: string[]): Cell[] {
  return keys.map((k) => (c.params[k] === undefined ? '' : String(c.params[k])));
}

/** A note cut to `max` characters (the full report keeps it whole). */
function clip(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  return `${text.slice(0, max - 1).trimEnd()}…`;
}

function noteOf(c: CaseComparison, measured: Map<string, MeasurementError>): string {
  return [c.correctnessReason, c.perfNote, measured.get(c.key)?.message]
    .filter((n): n is string => Boolean(n) && n !== 'no correctness record')
    .join('; ');
}

/** Every case of a kernel: Δ and verdict beside the variant, one column per case axis, the rest after. */
function resultTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
): string {
  const keys = axisKeys(cases);
  const rows = cases.map((c): Cell[] => {
    const current = c.current;
    const tflops = current ? caseTflops(current) : undefined;
    const gbps = current ? caseGbps(current) : undefined;
    const pct = current ? casePctPeak(current, input.results, input.config) : undefined;
    const bad = measured.get(c.key);
    const [delta, verdict, ci] = perfCells(c, input) as [Cell, Cell, Cell];
    return [
      c.variant,
      delta,
      verdict,
      ...axisCells(c, keys),
      trusted(formatMs(c.medianMs)),
      trusted(c.iqrMs === undefined ? '' : formatMs(c.iqrMs)),
      trusted(
        tflops === undefined || tflops === 0
          ? ''
          : `${bad?.quantity === 'tflops' ? '⚠️ ' : ''}${fixed(tflops, 1)}`,
      ),
      trusted(
        gbps === undefined ? '' : `${bad?.quantity === 'gbps' ? '⚠️ ' : ''}${fixed(gbps, 0)}`,
      ),
      trusted(
        pct === undefined || tflops === 0
          ? ''
          : `${bad?.quantity === 'tflops' ? '⚠️ ' : ''}${fixed(pct, 1)}`,
      ),
      ci,
      correctnessCell(c),
      errorCell(c),
      noteOf(c, measured),
    ];
  });
  const header = [
    'variant',
    input.comparison.paired ? 'Δ' : 'Δ vs baseline',
    'verdict',
    ...keys,
    'median ms',
    'IQR ms',
    'TFLOPS',
    'GB/s',
    '% peak',
    'CI of Δ',
    'correctness',
    'rel_l2 / tol',
    'note',
  ];
  const align: ('l' | 'r' | 'c')[] = [
    'l',
    'r',
    'l',
    ...keys.map((): 'l' => 'l'),
    'r',
    'r',
    'r',
    'r',
    'r',
    'r',
    'l',
    'r',
    'l',
  ];
  return table(header, rows, align);
}

/** The changed cases of a kernel, worst first: the verdict, then the case, then why. */
function changedTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
  noteMax: number | undefined,
): string {
  const keys = axisKeys(cases);
  const rows = cases.map((c): Cell[] => {
    const [delta, verdict, ci] = perfCells(c, input) as [Cell, Cell, Cell];
    const bad = c.correctness !== 'PASS' && c.correctness !== 'SKIPPED';
    return [
      c.variant,
      delta,
      bad
        ? correctnessCell(c)
        : measured.has(c.key)
          ? trusted("⚠️ above the chip's peak")
          : verdict,
      ...axisCells(c, keys),
      trusted(c.medianMs === undefined ? '' : formatMs(c.medianMs)),
      trusted(c.baselineMedianMs === undefined ? '' : formatMs(c.baselineMedianMs)),
      ci,
      clip(noteOf(c, measured), noteMax),
    ];
  });
  return table(['variant', 'Δ', 'verdict', ...keys, 'ms', 'base ms', 'CI of Δ', 'note'], rows, [
    'l',
    'r',
    'l',
    ...keys.map((): 'l' => 'l'),
    'r',
    'r',
    'r',
    'l',
  ]);
}

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

interface ViewOptions {
  /** the full report (job summary) rather than the comment */
  full: boolean;
  /** changed-case rows per variant in the comment (undefined: all) */
  rowsPerVariant: number | undefined;
  /** changed-case rows in all, in the comment (report.max_rows) */
  maxRows: number | undefined;
  /** an example message beside each finding */
  examples: boolean;
  logTails: boolean;
}

/** Changed-case rows a comment shows of each variant, and notes cut to this many characters. */
export const COMMENT_ROWS_PER_VARIANT = 10;
export const COMMENT_NOTE_CHARS = 140;

const esc = escapeMarkdown;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const KIND_ICON: Record<keyof VerdictCounts, string> = {
  wrong: '❌',
  drift: '🌊',
  error: '💥',
  'above-peak': '⚠️',
  missing: '❓',
  slower: '🔴',
  faster: '🟢',
  ambiguous: '🟡',
  same: '⚪',
  new: '🆕',
  untimed: '➖',
  skipped: '⏭️',
  unchecked: '❔',
};
const KIND_WORDS: Record<keyof VerdictCounts, string> = {
  wrong: 'wrong',
  drift: 'drift',
  error: 'error or timeout',
  'above-peak': "above the chip's peak",
  missing: 'missing',
  slower: 'slower',
  faster: 'faster',
  ambiguous: 'ambiguous',
  same: 'same',
  new: 'new',
  untimed: 'untimed',
  skipped: 'skipped',
  unchecked: 'unchecked',
};

function countsText(counts: VerdictCounts, only?: (keyof VerdictCounts)[]): string {
  return (Object.keys(KIND_ICON) as (keyof VerdictCounts)[])
    .filter((k) => (counts[k] ?? 0) > 0 && (!only || only.includes(k)))
    .map((k) => `${KIND_ICON[k]} ${counts[k]} ${KIND_WORDS[k]}`)
    .join(' · ');
}

const CHANGED_COUNTS: (keyof VerdictCounts)[] = [...CHANGE_KINDS, 'ambiguous', 'unchecked'];

function rangeText(d: { lo: number; hi: number } | undefined): string {
  if (!d) return '';
  return d.lo === d.hi ? formatRatioPct(d.lo) : `${formatRatioPct(d.lo)} … ${formatRatioPct(d.hi)}`;
}

/** One row per changed variant, then one for all the others. */
function changesView(input: ReportInput, changes: Changes) {
  const rows: Cell[][] = changes.changed.map((v) => [
    `${v.kernel}/${v.variant}`,
    trusted(`${v.changed.length} of ${v.cases}`),
    trusted(v.delta ? formatRatioPct(v.delta.geomean) : ''),
    trusted(rangeText(v.delta)),
    trusted(
      `${countsText(v.counts, CHANGED_COUNTS)}${v.changed.every(isControl) ? ' (an A/A control: the machine moved, not the code)' : ''}`,
    ),
  ]);
  const u = changes.untouched;
  if (u.variants > 0) {
    const label = changes.changed.length
      ? `${u.variants} other variants`
      : `all ${u.variants} variants`;
    rows.push([
      trusted(u.variants === 1 && changes.changed.length ? '1 other variant' : label),
      trusted(`0 of ${u.cases}`),
      trusted(u.delta ? formatRatioPct(u.delta.geomean) : ''),
      trusted(rangeText(u.delta)),
      trusted(countsText(u.counts)),
    ]);
  }
  return {
    none: !changes.judged,
    nothing: changes.judged && changes.changed.length === 0,
    table: table(['variant', 'changed', 'Δ (geomean)', 'range', 'verdict'], rows, [
      'l',
      'r',
      'r',
      'r',
      'l',
    ]),
  };
}

/** The changed cases of each kernel, worst first; in a comment capped per variant and in all. */
function changedCasesView(
  input: ReportInput,
  changes: Changes,
  opts: ViewOptions,
  measured: Map<string, MeasurementError>,
) {
  let budget = opts.full ? Infinity : (opts.maxRows ?? Infinity);
  const kernels = [...new Set(changes.changed.map((v) => v.kernel))];
  const out = [];
  for (const kernel of kernels) {
    const shown: CaseComparison[] = [];
    const hidden: string[] = [];
    for (const v of changes.changed.filter((x) => x.kernel === kernel)) {
      const cap = opts.full ? v.changed.length : Math.min(opts.rowsPerVariant ?? Infinity, budget);
      const rows = v.changed.slice(0, Math.max(0, cap));
      budget -= rows.length;
      shown.push(...rows);
      const rest = v.changed.slice(rows.length);
      if (rest.length) {
        const what = countsText(verdictCounts(rest, new Set(measured.keys())), [...CHANGE_KINDS]);
        hidden.push(
          `${plural(rest.length, 'more case')} of ${esc(`${kernel}/${v.variant}`)} (${what})`,
        );
      }
    }
    out.push({
      kernel,
      table: shown.length
        ? changedTable(shown, input, measured, opts.full ? undefined : COMMENT_NOTE_CHARS)
        : '',
      more: hidden.length ? `${hidden.join('; ')}: in the full report.` : undefined,
    });
  }
  return out;
}

/** A link to the run when its address looks like one, else nothing. */
function runLink(url: string | undefined): string | undefined {
  return url && /^https:\/\/[^\s()<>"'`\\]+$/.test(url) ? url : undefined;
}

function valueText(t: TierStatus): string {
  if (t.value === undefined) return 'n/a';
  if (t.unit === '%') return `${fixed(t.value, 1)} % of peak`;
  return `${fixed(t.value, 2)}×`;
}

function tierCell(t: TierStatus): string {
  const now = t.current
    ? t.current.grade
      ? `**${esc(t.current.grade)}** (${esc(t.current.name)})`
      : `**${esc(t.current.name)}**`
    : 'below the first rung';
  const next = t.next
    ? t.next.reachable === false
      ? `; next ${esc(t.next.grade ?? t.next.name)} needs more than the chip's peak`
      : `; next ${esc(t.next.grade ?? t.next.name)} at ${formatMs(t.next.requiredMs)} ms (${fixed(t.speedupNeeded, 2)}× faster)`
    : '';
  return `${now}${next}`;
}

/** Each kernel's headline case: our fastest passing candidate against its honest reference. */
function headlineView(input: ReportInput, base: TierStatus[] | undefined) {
  const rows = headlineRows(input.tiers, base);
  if (!rows.length) return undefined;
  const hasBase = rows.some((r) => r.base);
  const cells = rows.map(({ tier: t, base: b }): Cell[] => {
    // The case's axes with spaces after the commas, so the cell wraps in a comment's column.
    const workload = trusted(
      `${esc(t.kernel)} ${esc(t.caseId ?? t.headline).replaceAll(',', ', ')}`,
    );
    if (t.problem) {
      return [
        workload,
        trusted(`no value: ${esc(t.problem)}`),
        ...(hasBase ? [trusted('')] : []),
        trusted(''),
        trusted(''),
        trusted(''),
      ];
    }
    const ours = `${esc(t.variant)} ${formatMs(t.medianMs)} ms, ${fixed(t.tflops, 0)} TFLOPS${
      t.pinned ? ' (pinned)' : t.passing.length > 1 ? ` (fastest of ${t.passing.length})` : ''
    }`;
    let against: string;
    let value = `**${valueText(t)}**`;
    if (t.metric === 'pct_peak') {
      against = `datasheet peak ${fixed(t.peakTflops, 1)} TFLOPS`;
    } else if (t.metric === 'speedup') {
      against = `${esc(t.referenceVariant)} ${formatMs(t.referenceMedianMs)} ms, ${fixed(t.referenceTflops, 0)} TFLOPS`;
    } else if (t.referenceVariant !== undefined) {
      against = `${esc(t.referenceVariant)} ${formatMs(t.referenceMedianMs)} ms, ${fixed(t.gemmTflops, 0)} dense TFLOPS`;
      value += ` per useful FLOP · ${fixed(t.wallClockRatio, 2)}× wall clock`;
    } else {
      against = `measured cuBLAS ${fixed(t.gemmTflops, 0)} TFLOPS`;
      value += ' per useful FLOP';
    }
    let baseText = '—';
    if (b && b.value !== undefined) {
      baseText = `${valueText(b)}${b.variant !== t.variant ? ` (${esc(b.variant)})` : ''}`;
    } else if (b?.problem) baseText = 'n/a';
    // The answer first (the ratio, the base's, the tier), what it was measured on after: the
    // right-hand columns are the ones a narrow comment column scrolls out of view.
    return [
      workload,
      trusted(value),
      ...(hasBase ? [trusted(baseText)] : []),
      trusted(tierCell(t)),
      trusted(ours),
      trusted(against),
    ];
  });
  const paired = input.comparison.paired !== undefined;
  const baseHeader = paired ? 'base (same job)' : 'baseline';
  const now = input.kind === 'pr' ? 'this PR' : 'this run';
  return {
    table: table(
      [
        'kernel · headline case',
        now,
        ...(hasBase ? [baseHeader] : []),
        'tier',
        'fastest passing candidate',
        'against',
      ],
      cells,
      ['l', 'l', ...(hasBase ? ['l' as const] : []), 'l', 'l', 'l'],
    ),
  };
}

const PCT_LABEL: Record<string, string> = { 'clock-unstable': 'SM clock spread' };
const LEVEL_ICON = { error: '❌', warning: '⚠️', info: 'ℹ️' } as const;

function whereText(where: Map<string, Set<string>>): string {
  return [...where.entries()]
    .map(([kernel, variants]) =>
      variants.size > 1
        ? `${esc(kernel)} (${plural(variants.size, 'variant')})`
        : `${esc(kernel)}${variants.size ? `/${esc([...variants][0])}` : ''}`,
    )
    .join(', ');
}

function sci(values: (number | null | undefined)[]): string {
  const ok = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (!ok.length) return 'n/a';
  const lo = formatSci(Math.min(...ok));
  const hi = formatSci(Math.max(...ok));
  return lo === hi ? lo : `${lo} … ${hi}`;
}

/** Gate failures and everything else worth a look, grouped by variant and pattern. */
function findingsView(input: ReportInput, changes: Changes, opts: ViewOptions) {
  const { comparison, gate: g, config, results } = input;
  const all = comparison.cases;
  const blocks = blockingKinds(config);
  const blocking: string[] = [];
  const other: string[] = [];
  const put = (kind: ChangeKind | 'build', line: string) =>
    (blocks.has(kind) ? blocking : other).push(line);
  const name = (grp: { kernel: string; variant: string }) =>
    `**${esc(`${grp.kernel}/${grp.variant}`)}**`;
  const ofCases = (grp: Group) => `${grp.cases.length} of ${grp.of} cases`;
  const where = (grp: Group) => {
    const axes = commonAxes(
      grp.cases,
      all.filter((c) => c.kernel === grp.kernel && c.variant === grp.variant),
    );
    return axes ? ` (only where ${esc(axes)})` : '';
  };
  const example = (c: CaseComparison, text: string | undefined) =>
    opts.examples && text ? `. E.g. ${esc(c.caseId)}: ${esc(clip(text, COMMENT_NOTE_CHARS))}` : '';
  // A merged run's shards that did not report or failed (src/shard): they always fail the gate.
  for (const line of shardProblems(results)) blocking.push(`🧩 ${esc(line)}`);

  for (const grp of groupCases(
    all.filter((c) => c.correctness === 'FAIL'),
    all,
    failurePattern,
  )) {
    const first = grp.cases[0] as CaseComparison;
    put(
      'wrong',
      `❌ ${name(grp)} wrong on ${ofCases(grp)}${where(grp)}: ${esc(grp.pattern)} (rel\\_l2 ${sci(
        grp.cases.map((c) => c.relL2),
      )}, tolerance ${sci(grp.cases.map((c) => c.tolRelL2))})${example(first, first.correctnessReason)}`,
    );
  }
  for (const grp of groupCases(
    all.filter((c) => c.correctness === 'DRIFT'),
    all,
    () => 'drift',
  )) {
    const growth = grp.cases
      .map((c) => (c.relL2 && c.baselineRelL2 ? c.relL2 / c.baselineRelL2 : undefined))
      .filter((x): x is number => x !== undefined);
    const lo = fixed(Math.min(...growth), 1);
    const hi = fixed(Math.max(...growth), 1);
    const range = growth.length ? `${lo === hi ? lo : `${lo}–${hi}`}×` : 'n/a';
    const first = grp.cases[0] as CaseComparison;
    put(
      'drift',
      `🌊 ${name(grp)} error grew on ${ofCases(grp)}${where(grp)}: rel\\_l2 ${range} the baseline's (or the base revision's)${example(first, first.correctnessReason)}`,
    );
  }
  for (const grp of groupCases(
    all.filter((c) => c.correctness === 'ERROR'),
    all,
    errorPattern,
  )) {
    const first = grp.cases[0] as CaseComparison;
    put(
      'error',
      `💥 ${name(grp)} ${esc(grp.pattern)} on ${ofCases(grp)}${where(grp)}${example(first, first.correctnessReason)}`,
    );
  }
  for (const b of results.builds ?? []) {
    if (b.status === 'ok') continue;
    const label = `**${esc(`${b.kernel}/${b.variant}`)}**`;
    const where = opts.full ? 'under Build facts' : 'in the full report';
    if (b.status === 'failed') {
      const last = (b.log_tail ?? '').trim().split('\n').filter(Boolean).pop();
      put(
        'build',
        `🔨 ${label} did not build${last ? `: ${esc(clip(last, COMMENT_NOTE_CHARS))} (compiler output ${where})` : ''}`,
      );
    } else {
      const unmet = (b.expectations ?? [])
        .filter((e) => !e.ok)
        .map((e) => `${e.name}: ${e.message}`);
      put(
        'build',
        `🔨 ${label} built, but not as kernel.yml expects: ${esc(clip(unmet.join('; ') || 'no detail', 2 * COMMENT_NOTE_CHARS))}`,
      );
    }
  }
  const byVariantQuantity = new Map<string, MeasurementError[]>();
  for (const m of g.measurementErrors) {
    const key = `${m.kernel}/${m.variant}\u0000${m.quantity}`;
    byVariantQuantity.set(key, [...(byVariantQuantity.get(key) ?? []), m]);
  }
  for (const list of byVariantQuantity.values()) {
    const m = list[0] as MeasurementError;
    const unit = m.quantity === 'tflops' ? 'TFLOPS' : 'GB/s';
    const digits = m.quantity === 'tflops' ? 1 : 0;
    const values = list.map((x) => x.value);
    const lo = fixed(Math.min(...values), digits);
    const hi = fixed(Math.max(...values), digits);
    put(
      'above-peak',
      `⚠️ ${name(m)} above what the chip can do on ${plural(list.length, 'case')}: ${lo === hi ? lo : `${lo}–${hi}`} ${unit} &gt; ${fixed(m.limit, digits)} ${unit} ${esc(m.limitName)}. A measurement error, not a result: check the FLOP or byte count (e.g. causal halving) and the timing`,
    );
  }
  for (const grp of groupCases(
    all.filter((c) => c.perf === 'MISSING'),
    all,
    () => 'missing',
  )) {
    put(
      'missing',
      `❓ ${name(grp)} missing ${plural(grp.cases.length, 'case')}: in the baseline, not in this run`,
    );
  }
  for (const v of changes.changed) {
    const slower = v.changed.filter((c) => c.perf === 'SLOWER');
    if (!slower.length) continue;
    const d = ratioSpread(slower.map((c) => c.ratio ?? NaN));
    const paired = slower.every(isControl)
      ? ': a reference, the same code in both arms, so the machine was not quiet (not this PR); rerun'
      : slower.every((c) => c.method === 'paired')
        ? ', paired against the base revision'
        : '';
    const grp: Group = {
      kernel: v.kernel,
      variant: v.variant,
      pattern: '',
      cases: slower,
      of: v.cases,
    };
    put(
      'slower',
      `🔴 ${name(v)} slower on ${ofCases(grp)}${where(grp)}: ${rangeText(d)} (geomean ${formatRatioPct(d?.geomean)})${paired}`,
    );
  }
  const ambiguous = all.filter((c) => c.perf === 'AMBIGUOUS');
  if (ambiguous.length) {
    const groups = groupCases(ambiguous, all, () => '');
    const shown = groups
      .slice(0, 4)
      .map((grp) => `${esc(`${grp.kernel}/${grp.variant}`)} ${grp.cases.length}`);
    const more = groups.length > 4 ? `, and ${plural(groups.length - 4, 'more variant')}` : '';
    other.push(
      `🟡 ${plural(ambiguous.length, 'case')} AMBIGUOUS (${shown.join(', ')}${more}): the data cannot tell a change from noise. Rerun, or raise the sample count: ambiguous is not a pass`,
    );
  }
  if (g.counts.unchecked) {
    other.push(
      `❔ ${plural(g.counts.unchecked, 'timed case')} carry no correctness record: UNCHECKED`,
    );
  }
  for (const t of input.tiers) {
    if (t.problem) other.push(`🏷️ ${esc(t.kernel)} tiers: no grade: ${esc(t.problem)}`);
    const out = t.ladder.filter((m) => m.reachable === false);
    if (!t.problem && out.length) {
      const declared =
        t.declaredReferencePctPeak !== undefined
          ? ` (kernel.yml's tiers.reference_pct_peak says ${fixed(t.declaredReferencePctPeak, 1)} %; the reference reached ${fixed(t.measuredReferencePctPeak, 1)} % here)`
          : '';
      other.push(
        `🏷️ ${esc(t.kernel)} tiers: ${plural(out.length, 'rung')} need more than the chip's peak on this run${declared}: ${out.map((m) => esc(m.name)).join(', ')}. Revise the ladder`,
      );
    }
  }
  for (const d of groupDiagnostics(results)) {
    const count = d.perCase ? `on ${plural(d.count, 'case')}` : `× ${d.count}`;
    const place = d.where.size ? ` of ${whereText(d.where)}` : '';
    const pct = d.pct
      ? `, ${PCT_LABEL[d.code] ?? 'figures'} ${d.pct.lo === d.pct.hi ? d.pct.lo : `${d.pct.lo}–${d.pct.hi}`} %`
      : '';
    const ex = opts.examples ? `. E.g. ${esc(clip(d.example, COMMENT_NOTE_CHARS))}` : '';
    const fix = d.fix ? `. Fix: ${esc(clip(d.fix, COMMENT_NOTE_CHARS))}` : '';
    other.push(`${LEVEL_ICON[d.level]} ${esc(d.code)} ${count}${place}${pct}${ex}${fix}`);
  }
  return { blocking, other, any: blocking.length + other.length > 0 };
}

/** The title's outcome: pass / regression / fail, and what. */
function outcomeText(input: ReportInput, changes: Changes): string {
  const outcome = outcomeOf(input.gate, input.comparison.cases);
  const blocks = blockingKinds(input.config);
  const say = (kinds: ChangeKind[]) => {
    const parts: string[] = [];
    for (const v of changes.changed) {
      for (const kind of kinds) {
        const controls = kind === 'slower' || kind === 'faster' ? v.changed.filter(isControl) : [];
        const n =
          (v.counts[kind] ?? 0) - controls.filter((c) => c.perf === kind.toUpperCase()).length;
        if (n)
          parts.push(
            `${esc(`${v.kernel}/${v.variant}`)} ${KIND_WORDS[kind]} on ${plural(n, 'case')}`,
          );
      }
    }
    return parts;
  };
  const join = (parts: string[]) =>
    parts.length > 2
      ? `${parts.slice(0, 2).join(', ')} and ${parts.length - 2} more`
      : parts.join(', ');
  if (outcome === 'fail') {
    const kinds = CHANGE_KINDS.filter((k) => blocks.has(k));
    const parts = [...shardTitleParts(input.results), ...say(kinds)];
    for (const b of input.results.builds ?? []) {
      if (b.status !== 'ok' && blocks.has('build')) {
        parts.push(
          `${esc(`${b.kernel}/${b.variant}`)} ${b.status === 'failed' ? 'build failed' : 'build expectation unmet'}`,
        );
      }
    }
    const n = input.gate.reasons.length;
    return `❌ fail: ${parts.length ? join(parts) : plural(n, 'reason')}`;
  }
  if (outcome === 'regression') return `⚠️ regression: ${join(say(['slower']))}`;
  const faster = say(['faster']);
  const moved = changes.changed.filter((v) => v.changed.some(isControl));
  const control = moved.length
    ? ` (the A/A control ${moved.map((v) => esc(`${v.kernel}/${v.variant}`)).join(', ')} moved: the machine was not quiet)`
    : '';
  if (faster.length) return `✅ pass: ${join(faster)}${control}`;
  if (!changes.judged) return '✅ pass';
  return `✅ pass: ${moved.length ? 'no candidate' : 'no case'} slower or faster${control}`;
}

/** Every result of every kernel, for the full report. */
function kernelViews(input: ReportInput) {
  const measured = new Map(input.gate.measurementErrors.map((m) => [m.key, m]));
  const names = [...new Set(input.comparison.cases.map((c) => c.kernel))];
  return names.map((name) => {
    const all = input.comparison.cases.filter((c) => c.kernel === name);
    const info = input.results.kernels.find((k) => k.name === name);
    return {
      name,
      description: info?.description,
      flopsFormula: info?.flops_formula,
      rowCount: all.length,
      table: all.length ? resultTable(all, input, measured) : '',
      charts: chartsFor(name, input),
    };
  });
}

function tierViews(input: ReportInput) {
  return input.tiers.map((t) => {
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
    const others = t.passing.slice(1).map((p) => `${p.variant} ${formatMs(p.medianMs)} ms`);
    return {
      kernel: t.kernel,
      variant: t.variant,
      pinned: t.pinned,
      others: others.length ? others.join(', ') : undefined,
      metric: t.metric,
      headline: t.caseId ?? t.headline,
      value: valueText(t),
      medianMs: formatMs(t.medianMs),
      tflops: fixed(t.tflops, 1),
      reference: t.referenceVariant,
      referenceMs: t.referenceMedianMs === undefined ? undefined : formatMs(t.referenceMedianMs),
      gemmTflops: t.gemmTflops === undefined ? undefined : fixed(t.gemmTflops, 1),
      wallClock: t.wallClockRatio === undefined ? undefined : fixed(t.wallClockRatio, 2),
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

/**
 * The base's tier statuses, for the headline's "base" column: the base revision's arm of a paired
 * run, else the stored baseline when it was compared (same GPU).
 */
function baseTiers(input: ReportInput): TierStatus[] | undefined {
  if (input.comparison.paired) {
    const arm = baseArmResults(input.results);
    return arm ? evaluateTiers(arm, input.config) : undefined;
  }
  if (input.comparison.baseline === 'compared' && input.baseline) {
    return evaluateTiers(input.baseline, input.config);
  }
  return undefined;
}

function trendValue(v: number | undefined, unit: '×' | '%'): string {
  if (v === undefined) return '';
  return unit === '%' ? `${fixed(v, 1)} %` : `${fixed(v, 2)}×`;
}

/** "11-21 14:03" from an ISO time, for a chart's axis (nothing else survives mermaidLabel). */
function shortTime(iso: string): string {
  const m = /^\d{4}-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(iso);
  return m ? `${m[1]}-${m[2]} ${m[3]}:${m[4]}` : mermaidLabel(iso).slice(0, 16);
}

/** The lowest and highest value of a trend: a sparkline spans them, whatever their distance. */
function trendRange(tr: HeadlineTrend): string {
  const values = tr.points.map((p) => p.value).filter((v): v is number => v !== undefined);
  if (!values.length) return '';
  const digits = tr.unit === '%' ? 1 : 2;
  const lo = fixed(Math.min(...values), digits);
  const hi = fixed(Math.max(...values), digits);
  return lo === hi
    ? `(${trendValue(Math.min(...values), tr.unit)})`
    : `(${lo}–${trendValue(Math.max(...values), tr.unit)})`;
}

/** The nightly's trends: each headline across the stored runs and tonight's. */
function trendsView(input: ReportInput, opts: ViewOptions) {
  if (input.kind !== 'nightly' || !input.history?.length) return undefined;
  const gpu = gpuName(input.results);
  const stored = input.history
    .filter((r) => gpuName(r) === gpu && r.run.started_at < input.results.run.started_at)
    .sort((a, b) => a.run.started_at.localeCompare(b.run.started_at))
    .map((r) => ({ startedAt: r.run.started_at, tiers: evaluateTiers(r, input.config) }));
  if (!stored.length) return undefined;
  const trends = headlineTrends(input.tiers, input.results.run.started_at, stored);
  const rows = trends.map((tr): Cell[] => {
    const now = tr.points[tr.points.length - 1];
    return [
      trusted(`${esc(tr.kernel)}${now?.variant ? ` (${esc(now.variant)})` : ''}`),
      trusted(String(tr.points.length)),
      trusted(`\`${sparkline(tr.points.map((p) => p.value))}\` ${trendRange(tr)}`),
      trusted(`**${trendValue(now?.value, tr.unit) || 'n/a'}**`),
      trusted(trendValue(tr.lastNight, tr.unit)),
      trusted(trendValue(tr.windowMedian, tr.unit)),
      trusted(trendValue(tr.best, tr.unit)),
      trusted(tr.valueChange === undefined ? '' : formatRatioPct(1 + tr.valueChange)),
      trusted(tr.referenceChange === undefined ? '' : formatRatioPct(1 + tr.referenceChange)),
    ];
  });
  const charts = opts.full
    ? trends
        .filter((tr) => tr.points.some((p) => p.value !== undefined))
        .map((tr) => {
          const values = tr.points.map((p) => p.value ?? 0);
          const top = Math.max(...values);
          return {
            title: mermaidLabel(`${tr.kernel} headline`),
            labels: tr.points.map((p) => `"${mermaidLabel(shortTime(p.startedAt))}"`).join(', '),
            values: values.map((v) => fixed(v, tr.unit === '%' ? 1 : 3)).join(', '),
            unit: tr.unit === '%' ? '% of peak' : '× the reference',
            yMax: tr.unit === '%' ? 100 : Math.ceil(top * 12) / 10 || 1,
          };
        })
    : [];
  const first = stored[0]?.startedAt ?? '';
  return {
    runs: stored.length,
    since: first,
    table: table(
      [
        'headline (graded tonight)',
        'runs',
        'trend, oldest first',
        'tonight',
        'last night',
        'window median',
        'best',
        'tonight vs median',
        'reference ms vs median',
      ],
      rows,
      ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    charts,
  };
}

interface Digest {
  changes: Changes;
  measured: Map<string, MeasurementError>;
  base: TierStatus[] | undefined;
}

function digestOf(input: ReportInput): Digest {
  const measured = new Map(input.gate.measurementErrors.map((m) => [m.key, m]));
  return {
    changes: variantChanges(input.comparison.cases, new Set(measured.keys())),
    measured,
    base: baseTiers(input),
  };
}

function buildView(input: ReportInput, opts: ViewOptions, digest: Digest) {
  const { gate: g, results, comparison, config } = input;
  const run = results.run;
  const headline = headlineView(input, digest.base);
  return {
    marker: input.marker ?? '',
    title: config.report.title,
    outcome: outcomeText(input, digest.changes),
    pr: input.kind === 'pr',
    nightly: input.kind === 'nightly',
    full: opts.full,
    synthetic: run.synthetic === true,
    baselineSynthetic: input.baseline?.run.synthetic === true,
    context: input.context,
    runUrl: runLink(input.context?.runUrl),
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
    buildsOrMeasurement: g.counts.buildFailures > 0 || g.counts.measurementErrors > 0 || undefined,
    changes: changesView(input, digest.changes),
    changedCases: changedCasesView(input, digest.changes, opts, digest.measured),
    findings: findingsView(input, digest.changes, opts),
    headline,
    trends: trendsView(input, opts),
    notes: comparison.notes,
    hasNotes: comparison.notes.length > 0 || input.baseline?.run.synthetic === true,
    kernels: opts.full ? kernelViews(input) : [],
    tiers: tierViews(input),
    hasTiers: input.tiers.length > 0,
    diagnostics: diagnosticsView(input),
    environment: environmentView(input),
    builds: buildsView(input, opts),
    method: {
      confidencePct: fixed(config.compare.confidence * 100, 0),
      thresholdPct: fixed(config.compare.thresholdPct, 1),
      resamples: config.compare.resamples,
      driftFactor: config.correctness.driftFactor,
      driftFloor: formatSci(config.correctness.driftFloorRelL2),
      paired: comparison.paired !== undefined,
      pairedThresholdPct: fixed(config.compare.paired.thresholdPct, 1),
    },
  };
}

/** The SKU when the harness could normalise it, else the name the driver reported. */
function gpuName(results: KernelgateResults): string {
  const { sku, name } = results.environment.gpu;
  return sku && sku !== 'unknown' && sku !== 'none' ? sku : name;
}

function defaultTemplatesDir(): string {
  return join(packageRoot(), 'templates');
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
 * Renders the full report (the job summary and the report file: every case) and the comment: the
 * verdict, what changed, the headline, grouped findings and the changed cases, within GitHub's
 * limit. The comment degrades in steps: fewer changed-case rows and no example messages (1), no
 * changed-case rows (2), then truncated with a note pointing to the full report (3).
 */
export function renderReport(input: ReportInput): RenderedReport {
  const templates = loadTemplates(input.templatesDir ?? defaultTemplatesDir(), input.kind);
  const maxChars = input.commentMaxChars ?? COMMENT_MAX_CHARS;
  const digest = digestOf(input);
  const alert = nightlyAlert(input, digest.changes);
  const full = renderView(
    templates,
    buildView(
      input,
      { full: true, rowsPerVariant: undefined, maxRows: undefined, examples: true, logTails: true },
      digest,
    ),
  );
  const maxRows = input.config.report.maxRows;
  const comment = (rowsPerVariant: number, examples: boolean): ViewOptions => ({
    full: false,
    rowsPerVariant,
    maxRows,
    examples,
    logTails: false,
  });
  const levels: [DegradeLevel, ViewOptions][] = [
    [0, comment(COMMENT_ROWS_PER_VARIANT, true)],
    [1, comment(3, false)],
    [2, comment(0, false)],
  ];
  let last = '';
  for (const [level, opts] of levels) {
    last = renderView(templates, buildView(input, opts, digest));
    if (last.length <= maxChars) return { full, comment: last, commentLevel: level, ...alert };
  }
  const note = Mustache.render(
    templates.partials.truncated ?? '',
    { limit: GITHUB_COMMENT_LIMIT.toLocaleString('en-US') },
    {},
    { escape: escapeMarkdown },
  ).trim();
  return { full, comment: truncateMarkdown(last, maxChars, note), commentLevel: 3, ...alert };
}

/** How many cases the nightly's alert names (worst first); the issue's report has the rest. */
const ALERT_CASES = 3;

/**
 * The nightly's alert (see RenderedReport.alert): the title's outcome, then the worst cases it is
 * about by name, each with its change, so the notification alone says where to look.
 */
function nightlyAlert(input: ReportInput, changes: Changes): { alert?: string } {
  if (input.kind !== 'nightly') return {};
  const outcome = outcomeOf(input.gate, input.comparison.cases);
  if (outcome === 'pass') return {};
  const sha = input.results.run.git_sha;
  const at = sha && /^[0-9a-f]{7,40}$/i.test(sha) ? ` at \`${sha.slice(0, 12)}\`` : '';
  const kinds: ChangeKind[] =
    outcome === 'regression'
      ? ['slower']
      : CHANGE_KINDS.filter((k) => blockingKinds(input.config).has(k));
  const aboveChip = new Set(input.gate.measurementErrors.map((m) => m.key));
  const cases = changes.changed
    .flatMap((v) => v.changed)
    .filter((c) => kinds.includes(changeKind(c, aboveChip) as ChangeKind) && !isControl(c))
    .sort(worstFirst(aboveChip));
  const named = cases.slice(0, ALERT_CASES).map((c) => {
    const kind = changeKind(c, aboveChip) as ChangeKind;
    const how =
      (kind === 'slower' || kind === 'faster') && c.ratio !== undefined
        ? formatRatioPct(c.ratio)
        : KIND_WORDS[kind];
    return `${esc(c.label)} ${how}`;
  });
  const more = cases.length > named.length ? `; and ${cases.length - named.length} more` : '';
  const which = named.length
    ? ` ${cases.length === 1 ? 'Case' : 'Worst'}: ${named.join('; ')}${more}.`
    : '';
  return {
    alert: `kernelgate nightly${at}: ${outcomeText(input, changes)}.${which} The issue's report has the cases.`,
  };
}
