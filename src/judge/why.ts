// Why it moved: for every variant judged SLOWER or FASTER (and every wrong variant whose build or
// tuning changed), the evidence a kernel engineer gathers by hand, base against head: what was
// built (why-build.ts), the tuned configuration of its cases and, for Triton, the kernel it compiled
// to (why-compiled.ts), and Nsight Compute on its largest
// change where the run profiled both revisions (results deep.ncu_compare). The likeliest cause is
// named from that evidence only; when nothing differs it says so.
import { formatRatioPct } from '../lib/index.js';
import type { BuildRecord, KernelgateResults, NcuComparison } from '../results/index.js';
import { tuningText } from './tuning.js';
import type { CaseComparison } from './verdicts.js';
import { type BuildDiff, buildChanged, buildDiff } from './why-build.js';
import {
  type CompiledEvidence,
  compiledFinding,
  missingCompiledText,
  resourceCause,
} from './why-compiled.js';

export * from './why-build.js';
export * from './why-compiled.js';

export interface TuningEvidence {
  /** changed: some case launched another configuration; identical: all the same; none: no tuner */
  state: 'changed' | 'identical' | 'none';
  /** the cases whose configuration differs, the largest change first */
  changes: { caseId: string; from: string; to: string }[];
  /** cases with a configuration on both sides */
  compared: number;
  /** identical: the configuration of the largest change's case */
  config?: string;
  /**
   * the compiled Triton kernels (tuning.compiled) of the first changed case (changed), else of the
   * largest change's case compared; absent when neither side recorded any
   */
  compiled?: CompiledEvidence;
}

export const PROFILE_METRICS = [
  ['dram_throughput_pct', 'DRAM throughput'],
  ['sm_throughput_pct', 'SM throughput'],
  ['tensor_pipe_pct', 'tensor pipe'],
  ['achieved_occupancy_pct', 'achieved occupancy'],
] as const;

/**
 * A profile metric names a cause only when it moved by at least this much (relative): two H100
 * recordings of identical code a day apart (test/fixtures/deep: deep17, deep22) put every metric
 * of the ten headline profiles within 2.7 % of the other's.
 */
export const PROFILE_MIN_CHANGE = 0.05;

export interface ProfileEvidence {
  caseId: string;
  comparison: NcuComparison;
  /** the percentage that moved most (relative, at least PROFILE_MIN_CHANGE), both sides profiled */
  largest?: { label: string; from: number; to: number };
  /** the kernel launches profiled in one call, where base and head differ (both sides recorded) */
  launches?: { from: number; to: number };
}

/** The nightly's bisection of this variant (its nightly.bisect diagnostic). */
export interface BisectEvidence {
  /** the first bad commit, where the bisection found one */
  sha?: string;
  /**
   * what the bisection found, without the variant's name and, where it found the commit, without
   * "became slower at SHA: " (the commit is `sha`)
   */
  text: string;
}

export interface WhyMoved {
  kernel: string;
  variant: string;
  /** the worst change: SLOWER, FASTER, or FAIL (a wrong result with a changed build or tuning) */
  verdict: 'SLOWER' | 'FASTER' | 'FAIL';
  /** the variant's cases with that verdict */
  cases: number;
  /** the largest change (SLOWER/FASTER) */
  ratio?: number;
  /** the case of the largest change (the one Nsight Compute profiles) */
  caseId: string;
  build: BuildDiff;
  /** which build the base side is: the paired base revision's, or the stored run's */
  baseBuildFrom: 'base revision' | 'stored run' | 'none';
  tuning: TuningEvidence;
  profile?: ProfileEvidence;
  bisect?: BisectEvidence;
  /** the likeliest cause, one line of plain text (escaped where rendered) */
  cause: string;
}

/** What the line says when the evidence shows no difference. */
export const NOTHING_DIFFERS =
  'build and tuning identical: the change is in the code path or the machine';

const moved = (c: CaseComparison) => (c.perf === 'SLOWER' || c.perf === 'FASTER') && !c.control;
const distance = (c: CaseComparison) => Math.abs(Math.log(c.ratio ?? 1));

function tuningEvidence(cases: CaseComparison[]): TuningEvidence {
  const changes: TuningEvidence['changes'] = [];
  let compared = 0;
  let config: string | undefined;
  let [changedKernels, sameKernels]: (CompiledEvidence | undefined)[] = [];
  for (const c of cases) {
    const now = c.current?.tuning;
    const before = c.method === 'paired' ? c.current?.paired?.base_tuning : c.baseline?.tuning;
    if (now === undefined || before === undefined) continue;
    compared++;
    const [from, to] = [tuningText(before.config), tuningText(now.config)];
    const kernels = {
      caseId: c.caseId,
      ...(before.compiled ? { base: before.compiled } : {}),
      ...(now.compiled ? { head: now.compiled } : {}),
    };
    if (from !== to) {
      if (!changes.length) changedKernels = kernels;
      changes.push({ caseId: c.caseId, from, to });
    } else {
      config ??= to;
      sameKernels ??= kernels;
    }
  }
  if (compared === 0) return { state: 'none', changes, compared };
  const pick = (k: CompiledEvidence | undefined) =>
    k && (k.base || k.head) ? { compiled: k } : {};
  if (changes.length) return { state: 'changed', changes, compared, ...pick(changedKernels) };
  return {
    state: 'identical',
    changes,
    compared,
    ...(config ? { config } : {}),
    ...pick(sameKernels),
  };
}

function profileEvidence(results: KernelgateResults, kernel: string, variant: string) {
  const found = (results.deep?.ncu_compare ?? []).find(
    (n) => n.kernel === kernel && n.variant === variant,
  );
  if (!found) return undefined;
  const [a, b] = [found.base.metrics ?? {}, found.head.metrics ?? {}];
  let largest: ProfileEvidence['largest'];
  if (found.base.status === 'ok' && found.head.status === 'ok') {
    for (const [key, label] of PROFILE_METRICS) {
      const [from, to] = [a[key], b[key]];
      if (from === undefined || to === undefined || from <= 0 || from === to) continue;
      const size = Math.abs(Math.log(Math.max(to, 1e-9) / from));
      if (size < Math.log(1 + PROFILE_MIN_CHANGE)) continue;
      if (!largest || size > Math.abs(Math.log(Math.max(largest.to, 1e-9) / largest.from))) {
        largest = { label, from, to };
      }
    }
  }
  const [la, lb] = [found.base.launches, found.head.launches];
  const launches =
    found.base.status === 'ok' && found.head.status === 'ok' && la && lb && la !== lb
      ? { launches: { from: la, to: lb } }
      : {};
  return {
    caseId: found.case,
    comparison: found,
    ...(largest ? { largest } : {}),
    ...launches,
  };
}

/** The nightly's bisection of the variant, from its nightly.bisect diagnostic. */
function bisectEvidence(
  results: KernelgateResults,
  kernel: string,
  variant: string,
): BisectEvidence | undefined {
  const d = results.diagnostics.find(
    (x) => x.code === 'nightly.bisect' && x.kernel === kernel && x.variant === variant,
  );
  if (!d) return undefined;
  const name = `${kernel}/${variant} `;
  const text = d.message.startsWith(name) ? d.message.slice(name.length) : d.message;
  const found = /^became slower at ([0-9a-f]{7,64}): /.exec(text);
  return found ? { sha: found[1] as string, text: text.slice(found[0].length) } : { text };
}

/** The build's strongest evidence: a resource's maximum that moved, then the SASS. */
function buildCause(d: BuildDiff): string | undefined {
  if (d.state === 'failed') return `the ${d.missing} revision's build failed`;
  if (d.state !== 'compared') return undefined;
  const moved = resourceCause(d.base, d.head);
  if (moved) return moved;
  if (d.archs)
    return `machine code for ${d.archs.from.join(', ') || 'none'} → ${d.archs.to.join(', ') || 'none'}`;
  const key = d.census.filter((c) => c.from !== c.to);
  const shown = (key.length ? key : d.opcodes).slice(0, 2);
  if (shown.length) return `SASS ${shown.map((o) => `${o.opcode} ${o.from} → ${o.to}`).join(', ')}`;
  if (d.resources.length) {
    const r = d.resources[0] as (typeof d.resources)[number];
    const unit = r.resource === 'registers' ? '' : ' bytes';
    return `${r.resource} of one function ${r.from ?? 'none'} → ${r.to ?? 'none'}${unit}`;
  }
  return undefined;
}

/**
 * The tuning's evidence and the kernels it compiled to (Triton): "tuning A → B, compiled kernel
 * spills 0 → 96 bytes", "compiled kernel spills 0 → 96 bytes; tuning identical", or the side that
 * recorded no compiled kernel; undefined when neither differs nor is missing.
 */
function tuningCause(t: TuningEvidence): string | undefined {
  const k = compiledFinding(t.compiled);
  const kernels =
    k.kind === 'differs'
      ? `compiled kernel ${k.text}`
      : k.kind === 'missing'
        ? missingCompiledText(k.side)
        : undefined;
  if (t.state !== 'changed') {
    if (k.kind === 'differs') return `${kernels as string}; tuning identical`;
    if (k.kind === 'missing' && t.state === 'identical')
      return `tuning identical; ${kernels as string}`;
    return undefined;
  }
  const first = t.changes[0] as TuningEvidence['changes'][number];
  const where =
    t.changes.length === t.compared ? '' : ` on ${t.changes.length} of ${t.compared} cases`;
  const joint = k.kind === 'differs' ? ', ' : '; ';
  return `tuning ${first.from} → ${first.to}${where}${kernels ? `${joint}${kernels}` : ''}`;
}

/** Nothing differs and nothing was built ahead (Triton, torch): what is known to be the same. */
function unbuiltSameText(t: TuningEvidence): string {
  const tail = 'the change is in the code path or the machine';
  if (t.state !== 'identical')
    return `nothing built ahead of the run and no tuning to compare: ${tail}`;
  const k = compiledFinding(t.compiled);
  if (k.kind === 'same') return `tuning and compiled kernel identical (${k.text}): ${tail}`;
  return `tuning identical, nothing built ahead of the run to compare: ${tail}`;
}

/**
 * More launches in one call is the plainest cause there is (a kernel run twice, a copy or a
 * second pass added): it leads the line, with what the profile says of each launch. The
 * percentages are duration-weighted means over the launches, so "per launch unchanged" means
 * none of them moved by PROFILE_MIN_CHANGE.
 */
function launchesCause(p: ProfileEvidence | undefined): string | undefined {
  const l = p?.launches;
  if (!p || !l) return undefined;
  const [a, b] = [p.comparison.base.metrics ?? {}, p.comparison.head.metrics ?? {}];
  const time =
    a.duration_ms && b.duration_ms
      ? `, GPU time per call ${a.duration_ms.toFixed(3)} → ${b.duration_ms.toFixed(3)} ms`
      : '';
  const m = p.largest;
  const same = m
    ? `, ${m.label} ${m.from.toFixed(1)} → ${m.to.toFixed(1)} % of peak`
    : ', the profile of each launch unchanged';
  return `Nsight Compute: kernel launches per call ${l.from} → ${l.to}${time}${same}`;
}

/** The one line: the build's and the tuning's differences, else what is known to be the same. */
export function causeOf(w: Pick<WhyMoved, 'build' | 'tuning' | 'profile'>): string {
  const found = [launchesCause(w.profile), buildCause(w.build), tuningCause(w.tuning)].filter(
    (s): s is string => !!s,
  );
  let text: string;
  if (found.length) text = found.join('; ');
  else if (w.build.state === 'one-sided') {
    text = `no ${w.build.missing} build record to compare${w.tuning.state === 'identical' ? '; tuning identical' : ''}`;
  } else if (w.build.state === 'none') text = unbuiltSameText(w.tuning);
  else text = NOTHING_DIFFERS;
  const p = w.profile?.largest;
  if (p && !w.profile?.launches) {
    const rel = formatRatioPct(p.to / p.from).replace(/\.\d %$/, ' %');
    text += `; Nsight Compute: ${p.label} ${p.from.toFixed(1)} → ${p.to.toFixed(1)} % of peak (${rel})`;
  }
  return text;
}

function buildsOf(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  paired: boolean,
): { base: BuildRecord[]; from: WhyMoved['baseBuildFrom'] } {
  if (paired && results.base_builds) return { base: results.base_builds, from: 'base revision' };
  if (!paired && baseline?.builds) return { base: baseline.builds, from: 'stored run' };
  return { base: [], from: 'none' };
}

function oneVariant(
  cases: CaseComparison[],
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
): WhyMoved | undefined {
  const hit = cases.filter(moved);
  const wrong = cases.filter((c) => c.correctness === 'FAIL');
  const shown = hit.length ? hit : wrong;
  if (!shown.length) return undefined;
  const byChange = [...shown].sort((a, b) => distance(b) - distance(a));
  const worst = byChange[0] as CaseComparison;
  const { kernel, variant } = worst;
  const verdict = hit.length ? (worst.perf as 'SLOWER' | 'FASTER') : 'FAIL';
  const sameWay = verdict === 'FAIL' ? wrong : hit.filter((c) => c.perf === verdict);
  const { base, from } = buildsOf(results, baseline, worst.method === 'paired');
  const find = (list: BuildRecord[] | undefined) =>
    list?.find((b) => b.kernel === kernel && b.variant === variant);
  const build = buildDiff(from === 'none' ? undefined : find(base), find(results.builds));
  const tuning = tuningEvidence(byChange);
  // A wrong result is explained here only where the build or the tuning changed.
  const compiledMoved = compiledFinding(tuning.compiled).kind === 'differs';
  if (verdict === 'FAIL' && !buildChanged(build) && tuning.state !== 'changed' && !compiledMoved)
    return undefined;
  const profile = profileEvidence(results, kernel, variant);
  const why = { build, tuning, ...(profile ? { profile } : {}) };
  const bisect = bisectEvidence(results, kernel, variant);
  return {
    kernel,
    variant,
    verdict,
    cases: sameWay.length,
    ...(verdict !== 'FAIL' && worst.ratio !== undefined ? { ratio: worst.ratio } : {}),
    caseId: worst.caseId,
    baseBuildFrom: from,
    ...why,
    ...(bisect ? { bisect } : {}),
    cause: causeOf(why),
  };
}

/** The evidence for each moved variant, in the comparison's order of variants. */
export function whyItMoved(
  cases: CaseComparison[],
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
): WhyMoved[] {
  const byVariant = new Map<string, CaseComparison[]>();
  for (const c of cases) {
    const key = `${c.kernel}/${c.variant}`;
    byVariant.set(key, [...(byVariant.get(key) ?? []), c]);
  }
  return [...byVariant.values()]
    .map((list) => oneVariant(list, results, baseline))
    .filter((w): w is WhyMoved => w !== undefined);
}

/** "SLOWER on 3 cases, up to +12.4 %" */
export function movedText(w: WhyMoved): string {
  const n = `${w.cases} case${w.cases === 1 ? '' : 's'}`;
  if (w.verdict === 'FAIL') return `wrong on ${n}`;
  return `${w.verdict} on ${n}${w.ratio !== undefined ? `, up to ${formatRatioPct(w.ratio)}` : ''}`;
}
