// Small pieces every section uses: verdict icons and cells, counts in words, escaping.
import type {
  CaseComparison,
  CorrectnessVerdict,
  MeasurementError,
  PerfVerdict,
  TierStatus,
} from '../judge/index.js';
import {
  type Cell,
  escapeCell,
  escapeMarkdown,
  fixed,
  formatMs,
  formatRatioPct,
  formatSci,
} from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import { CHANGE_KINDS, type VerdictCounts } from './digest.js';
import type { ReportInput } from './types.js';

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

export function trusted(text: string): Cell {
  return { trusted: text };
}

export function correctnessCell(c: CaseComparison): Cell {
  const detail = c.correctness === 'ERROR' && c.status !== 'missing' ? ` (${c.status})` : '';
  return trusted(`${CORRECTNESS_ICON[c.correctness]} ${c.correctness}${detail}`);
}

export function errorCell(c: CaseComparison): Cell {
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
  identical: '',
  none: '',
};

/**
 * Δ, verdict and CI cells; a threshold raised above its method's default (calibrated noise, the
 * absolute floor) is shown beside the CI. In a run with pairs the Δ says how it was measured.
 */
export function perfCells(c: CaseComparison, input: ReportInput): Cell[] {
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

/**
 * A note cut to at most `max` characters at a word boundary, with an ellipsis (the full report
 * keeps it whole): "… compare clock-…" never, "… compare …" instead. A text with no space in its
 * second half is cut where it must.
 */
export function clip(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  const head = text.slice(0, max - 1);
  const space = head.search(/\s\S*$/);
  const cut = space > max / 2 ? head.slice(0, space) : head;
  return `${cut.replace(/[\s,;:.(\-–—]+$/, '')}…`;
}

export function noteOf(c: CaseComparison, measured: Map<string, MeasurementError>): string {
  return [c.correctnessReason, c.perfNote, measured.get(c.key)?.message]
    .filter((n): n is string => Boolean(n) && n !== 'no correctness record')
    .join('; ');
}

export const esc = escapeMarkdown;

/**
 * Text escaped for a table cell that may break after each comma (and, with `slash`, each slash)
 * inside a word: a case key such as "attention/triton_fa2/dtype=fp16,B=16,…,causal=false" has no
 * space, and a cell of it widened its table past a 780 px column (issue 32). The break is a
 * `<wbr>`, which GitHub keeps, written after the escaping.
 */
export function breakableCell(text: string, slash = false): Cell {
  const at = slash ? /([,/])(?=[^\s,/])/g : /(,)(?=[^\s,])/g;
  return trusted(escapeCell(text).replace(at, '$1<wbr>'));
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

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

export const KIND_WORDS: Record<keyof VerdictCounts, string> = {
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

export function countsText(counts: VerdictCounts, only?: (keyof VerdictCounts)[]): string {
  return (Object.keys(KIND_ICON) as (keyof VerdictCounts)[])
    .filter((k) => (counts[k] ?? 0) > 0 && (!only || only.includes(k)))
    .map((k) => `${KIND_ICON[k]} ${counts[k]} ${KIND_WORDS[k]}`)
    .join(' · ');
}

export const CHANGED_COUNTS: (keyof VerdictCounts)[] = [...CHANGE_KINDS, 'ambiguous', 'unchecked'];

export function rangeText(d: { lo: number; hi: number } | undefined): string {
  if (!d) return '';
  return d.lo === d.hi ? formatRatioPct(d.lo) : `${formatRatioPct(d.lo)} … ${formatRatioPct(d.hi)}`;
}

/** A link to the run when its address looks like one, else nothing. */
export function runLink(url: string | undefined): string | undefined {
  return url && /^https:\/\/[^\s()<>"'`\\]+$/.test(url) ? url : undefined;
}

export function valueText(t: TierStatus): string {
  if (t.value === undefined) return 'n/a';
  if (t.unit === '%') return `${fixed(t.value, 1)} % of peak`;
  return `${fixed(t.value, 2)}×`;
}

/** The value's interval, e.g. "99 % CI 1.05–1.11×"; '' where it has none. */
export function intervalText(t: TierStatus): string {
  const i = t.interval;
  if (!i) return '';
  const [digits, unit] = t.unit === '%' ? [1, ' %'] : [2, '×'];
  return `${fixed(i.confidence * 100, 0)} % CI ${fixed(i.lo, digits)}–${fixed(i.hi, digits)}${unit}`;
}

/** ", within the noise" after a rung the value's interval holds (TierMilestone.withinNoise). */
export const WITHIN_NOISE = ', within the noise';

export function tierCell(t: TierStatus): string {
  // the rung graded: the highest reached (status.current)
  const reached = [...t.ladder].reverse().find((m) => m.achieved);
  const now = t.current
    ? (t.current.grade
        ? `**${esc(t.current.grade)}** (${esc(t.current.name)})`
        : `**${esc(t.current.name)}**`) + (reached?.withinNoise ? WITHIN_NOISE : '')
    : 'below the first rung';
  const next = t.next
    ? t.next.reachable === false
      ? `; next ${esc(t.next.grade ?? t.next.name)} needs more than the chip's peak`
      : `; next ${esc(t.next.grade ?? t.next.name)} at ${formatMs(t.next.requiredMs)} ms (${fixed(t.speedupNeeded, 2)}× faster${t.next.withinNoise ? WITHIN_NOISE : ''})`
    : '';
  return `${now}${next}`;
}

/** A run whose tools named no GPU and whose machine had none (CPU benchmarks). */
export const NO_GPU_NAMED = 'a machine with no GPU named';

/** The SKU when the harness could normalise it, else the name the driver reported. */
export function gpuName(results: KernelgateResults): string {
  const { sku, name } = results.environment.gpu;
  if (name === 'none') return NO_GPU_NAMED;
  return sku && sku !== 'unknown' && sku !== 'none' ? sku : name;
}
