// Section `findings` (partials/findings.md.mustache): findings grouped by variant and pattern.
import {
  type CaseComparison,
  harnessOnly,
  type MeasurementError,
  retuneText,
  sanitizerLine,
  shardProblems,
} from '../judge/index.js';
import { fixed, formatRatioPct, formatSci } from '../lib/index.js';
import { clip, esc, plural, rangeText } from './cells.js';
import {
  blockingKinds,
  type ChangeKind,
  type Changes,
  commonAxes,
  errorPattern,
  failurePattern,
  type Group,
  groupCases,
  groupDiagnostics,
  isControl,
  ratioSpread,
} from './digest.js';
import { manifestFindingLines } from './manifest-changes.js';
import { tailFindingLines } from './tails.js';
import { COMMENT_NOTE_CHARS, type ReportInput, type ViewOptions } from './types.js';
import type { FindingsView } from './view-types.js';

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

/** What every finder gets: the input, and how to word and file a finding. */
interface Finder {
  input: ReportInput;
  changes: Changes;
  opts: ViewOptions;
  all: CaseComparison[];
  blocking: string[];
  other: string[];
  /** Files a finding as blocking when the policy fails the gate on its kind. */
  put: (kind: ChangeKind | 'build', line: string) => void;
  name: (grp: { kernel: string; variant: string }) => string;
  ofCases: (grp: Group) => string;
  where: (grp: Group) => string;
  example: (c: CaseComparison, text: string | undefined) => string;
}

function finder(input: ReportInput, changes: Changes, opts: ViewOptions): Finder {
  const all = input.comparison.cases;
  const blocks = blockingKinds(input.config);
  const blocking: string[] = [];
  const other: string[] = [];
  return {
    input,
    changes,
    opts,
    all,
    blocking,
    other,
    put: (kind, line) => (blocks.has(kind) ? blocking : other).push(line),
    name: (grp) => `**${esc(`${grp.kernel}/${grp.variant}`)}**`,
    ofCases: (grp) => `${grp.cases.length} of ${grp.of} cases`,
    where: (grp) => {
      const axes = commonAxes(
        grp.cases,
        all.filter((c) => c.kernel === grp.kernel && c.variant === grp.variant),
      );
      return axes ? ` (only where ${esc(axes)})` : '';
    },
    example: (c, text) =>
      opts.examples && text
        ? `. E.g. ${esc(c.caseId)}: ${esc(clip(text, COMMENT_NOTE_CHARS))}`
        : '',
  };
}

function shardFindings(f: Finder): void {
  const { input, blocking } = f;
  const { results } = input;
  // A merged run's shards that did not report or failed (src/shard): they always fail the gate.
  for (const line of shardProblems(results)) blocking.push(`🧩 ${esc(line)}`);
}

function deepFindings(f: Finder): void {
  const { input, blocking, other } = f;
  // The nightly's compute-sanitizer runs (src/deep): a finding fails the gate under
  // policy.fail_on_sanitizer, unless the harness's own code launched all of the run's findings
  // (a warning, as the gate has it: src/judge/sanitizer.ts); a run that did not finish is worth
  // a look.
  for (const s of input.results.deep?.sanitizer ?? []) {
    if (s.status === 'findings') {
      const fails = input.config.policy.failOnSanitizer && !harnessOnly(s);
      (fails ? blocking : other).push(`🧪 ${esc(sanitizerLine(s))}`);
    } else if (s.status === 'error') {
      const line = (s.first_lines ?? '').split('\n')[0] ?? '';
      other.push(
        `🧪 ${esc(`sanitizer ${s.tool}: ${s.kernel}/${s.variant} ${s.case} did not run to the end${line ? `: ${clip(line, COMMENT_NOTE_CHARS)}` : ''}`)}`,
      );
    }
  }
}

function wrongFindings(f: Finder): void {
  const { all, put, name, ofCases, where, example } = f;
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
}

function tailFindings(f: Finder): void {
  for (const { fails, line } of tailFindingLines(f.input))
    (fails ? f.blocking : f.other).push(line);
}

/** A pull request's own tolerance and manifest changes, against its base revision's. */
function manifestFindings(f: Finder): void {
  f.other.push(...manifestFindingLines(f.input));
}

function driftFindings(f: Finder): void {
  const { all, put, name, ofCases, where, example } = f;
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
}

function errorFindings(f: Finder): void {
  const { all, put, name, ofCases, where, example } = f;
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
}

function buildFindings(f: Finder): void {
  const { input, opts, put } = f;
  const { results } = input;
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
}

function aboveChipFindings(f: Finder): void {
  const { input, put, name } = f;
  const { gate: g } = input;
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
}

function missingFindings(f: Finder): void {
  const { all, put, name } = f;
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
}

function slowerFindings(f: Finder): void {
  const { changes, put, name, ofCases, where } = f;
  for (const v of changes.changed) {
    const slower = v.changed.filter((c) => c.perf === 'SLOWER');
    if (!slower.length) continue;
    const d = ratioSpread(slower.map((c) => c.ratio ?? NaN));
    const paired = slower.every(isControl)
      ? slower.some((c) => c.control === 'stored')
        ? ': a reference, its code not changed since the stored run, so the machine or the night moved, not the code'
        : ': a reference, the same code in both arms, so the machine was not quiet (not this PR); rerun'
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
}

/** Cases whose tuner chose another configuration than the stored run, or than the base arm. */
function retuneFindings(f: Finder): void {
  const { all, other, name } = f;
  const retuned = all.filter((c) => c.retune !== undefined);
  const byVariant = new Map<string, CaseComparison[]>();
  for (const c of retuned) {
    const at = `${c.kernel}/${c.variant}`;
    byVariant.set(at, [...(byVariant.get(at) ?? []), c]);
  }
  for (const cases of byVariant.values()) {
    const first = cases[0]!;
    const of = all.filter((c) => c.kernel === first.kernel && c.variant === first.variant).length;
    const r = first.retune!;
    const shown = cases
      .slice(0, 3)
      .map((c) => `${esc(c.caseId)}: ${esc(clip(retuneText(c.retune!), COMMENT_NOTE_CHARS))}`);
    const more = cases.length > 3 ? `; and ${plural(cases.length - 3, 'more case')}` : '';
    const movedText = (() => {
      const n = cases.filter((c) => c.perf === 'AMBIGUOUS' && c.method !== 'paired').length;
      return n ? `; ${n} of them moved, AMBIGUOUS rather than a verdict on the code` : '';
    })();
    const lead =
      r.against === 'arms'
        ? `the arms launched different tunings on ${cases.length} of ${of} cases (the change altered the tuner's source; the pairs judge what it did)`
        : `re-tuned since the stored run on ${cases.length} of ${of} cases: the tuner chose another configuration, a re-tune, not a regression${cases.some((c) => c.method === 'paired') ? " (both arms of tonight's pairs launched the new one)" : ''}`;
    other.push(`🎛️ ${name(first)} ${lead}${movedText}. ${shown.join('; ')}${more}`);
  }
}

function ambiguousFindings(f: Finder): void {
  const { all, other } = f;
  // A re-tune that moved is AMBIGUOUS, said by its own finding.
  const ambiguous = all.filter(
    (c) => c.perf === 'AMBIGUOUS' && !(c.retune?.against === 'stored' && c.method !== 'paired'),
  );
  if (ambiguous.length) {
    const groups = groupCases(ambiguous, all, () => '');
    const shown = groups
      .slice(0, 4)
      .map((grp) => `${esc(`${grp.kernel}/${grp.variant}`)} ${grp.cases.length}`);
    const more = groups.length > 4 ? `, and ${plural(groups.length - 4, 'more variant')}` : '';
    other.push(
      `🟡 ${plural(ambiguous.length, 'case')} AMBIGUOUS (${shown.join(', ')}${more}): the data cannot tell a change from noise, so it neither blocks the merge nor is shown unchanged. Rerun, or raise the sample count`,
    );
  }
}

function uncheckedFindings(f: Finder): void {
  const { input, other } = f;
  const { gate: g } = input;
  if (g.counts.unchecked) {
    other.push(
      `❔ ${plural(g.counts.unchecked, 'timed case')} carry no correctness record: UNCHECKED`,
    );
  }
}

function tierFindings(f: Finder): void {
  const { input, other } = f;
  for (const t of input.tiers) {
    if (t.problem) other.push(`🏷️ ${esc(t.kernel)} tiers: no grade: ${esc(t.problem)}`);
    const out = t.ladder.filter((m) => m.reachable === false);
    if (!t.problem && out.length) {
      const measured =
        t.measuredReferencePctPeak !== undefined
          ? `the reference reached ${fixed(t.measuredReferencePctPeak, 1)} % of the peak here`
          : undefined;
      const why =
        t.declaredReferencePctPeak !== undefined
          ? ` (kernel.yml's tiers.reference_pct_peak says ${fixed(t.declaredReferencePctPeak, 1)} %${measured ? `; ${measured}` : ''})`
          : measured
            ? ` (${measured})`
            : '';
      const needs = out.length === 1 ? 'needs' : 'need';
      other.push(
        `🏷️ ${esc(t.kernel)} tiers: ${plural(out.length, 'rung')} ${needs} more than the chip's peak on this run${why}: ${out.map((m) => esc(m.name)).join(', ')}. Revise the ladder`,
      );
    }
  }
}

function diagnosticFindings(f: Finder): void {
  const { input, opts, other } = f;
  const { results } = input;
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
}

/** The finders, in the order their findings are listed. */
const FINDERS: readonly ((f: Finder) => void)[] = [
  shardFindings,
  deepFindings,
  wrongFindings,
  tailFindings,
  manifestFindings,
  driftFindings,
  errorFindings,
  buildFindings,
  aboveChipFindings,
  missingFindings,
  slowerFindings,
  retuneFindings,
  ambiguousFindings,
  uncheckedFindings,
  tierFindings,
  diagnosticFindings,
];

export function findingsView(
  input: ReportInput,
  changes: Changes,
  opts: ViewOptions,
): FindingsView {
  const f = finder(input, changes, opts);
  for (const find of FINDERS) find(f);
  return { blocking: f.blocking, other: f.other, any: f.blocking.length + f.other.length > 0 };
}
