// Section `why` (partials/why.md.mustache): one line per moved variant naming the likeliest cause
// (src/judge/why.ts), then the evidence folded: what was built base against head, the tuned
// configuration and the Triton kernel it compiled to, and Nsight Compute's comparison where the run profiled both revisions. Everything
// that came from the results (names, opcodes, configurations, stall reasons) is escaped.
import { movedText, type ResourceChange, type WhyMoved, whyItMoved } from '../judge/index.js';
import { type Cell, fixed, table } from '../lib/index.js';
import type { NcuRun } from '../results/index.js';
import { esc, trusted } from './cells.js';
import { shaText } from './summary.js';
import type { ReportInput, ViewOptions } from './types.js';
import type { WhyView } from './view-types.js';

/** Functions listed per variant in a comment's evidence (the full report lists all). */
const FUNCTIONS_IN_COMMENT = 6;
/** Opcodes beyond the key ones whose counts changed, shown per variant. */
const OTHER_OPCODES = 4;

const ICON: Record<WhyMoved['verdict'], string> = { SLOWER: '🔴', FASTER: '🟢', FAIL: '❌' };

/**
 * "- 🔴 **attention/cuda\_fa2** SLOWER on 8 cases, up to +31.2 %: spills 0 → 96 bytes", and on a
 * nightly that bisected the variant, the commit it found: "; bisected to [`1f9d3f121398`](…)".
 */
export function whyLine(w: WhyMoved, repoUrl?: string): string {
  const sha = w.bisect?.sha ? shaText(w.bisect.sha, repoUrl) : '';
  const bisected = sha ? `; bisected to ${sha}` : '';
  return `- ${ICON[w.verdict]} **${esc(`${w.kernel}/${w.variant}`)}** ${esc(movedText(w))}: ${esc(w.cause)}${bisected}`;
}

const num = (v: number | undefined, digits = 0) => (v === undefined ? '' : fixed(v, digits));
/** The change as shown: none where the two figures read the same at these digits. */
const change = (from: number | undefined, to: number | undefined, digits = 0) =>
  from === undefined || to === undefined || fixed(from, digits) === fixed(to, digits)
    ? ''
    : `${to > from ? '+' : '−'}${fixed(Math.abs(to - from), digits)}`;

function buildRows(w: WhyMoved): Cell[][] {
  const d = w.build;
  if (d.state !== 'compared') return [];
  const [a, b] = [d.base ?? {}, d.head ?? {}];
  const row = (label: string, from?: number, to?: number): Cell[] => [
    trusted(label),
    trusted(num(from)),
    trusted(num(to)),
    trusted(change(from, to)),
  ];
  const key = new Set(d.census.map((c) => c.opcode));
  const others = d.opcodes.filter((o) => !key.has(o.opcode)).slice(0, OTHER_OPCODES);
  return [
    ['build (cache key)', d.baseHash?.slice(0, 16) ?? '', d.headHash?.slice(0, 16) ?? '', ''],
    row('registers (most of any function)', a.registers, b.registers),
    row('spilled bytes (stores + loads)', a.spills, b.spills),
    row('stack bytes', a.stack, b.stack),
    row('static shared memory bytes', a.smem, b.smem),
    ...[...d.census, ...others].map((o): Cell[] => [
      `SASS ${o.opcode}`,
      trusted(String(o.from)),
      trusted(String(o.to)),
      trusted(change(o.from, o.to)),
    ]),
    ...(d.archs ? [['machine code', d.archs.from.join(', '), d.archs.to.join(', '), '']] : []),
  ];
}

function tuningRows(w: WhyMoved): Cell[][] {
  const t = w.tuning;
  if (t.state === 'none') return [];
  if (t.state === 'identical')
    return [['tuning (every case compared)', t.config ?? '', t.config ?? '', 'same']];
  return t.changes.map((c, i): Cell[] => [
    i === 0 ? `tuning, ${c.caseId}` : c.caseId,
    c.from,
    c.to,
    trusted('changed'),
  ]);
}

/** The compiled Triton kernels of the tuning's case, base and head (why-compiled.ts). */
function compiledRows(w: WhyMoved): Cell[][] {
  const k = w.tuning.compiled;
  if (!k) return [];
  const [a, b] = [k.base, k.head];
  const row = (label: string, from?: number, to?: number): Cell[] => [
    trusted(label),
    trusted(num(from)),
    trusted(num(to)),
    trusted(change(from, to)),
  ];
  const words = (c: typeof a) => (c?.n_spills === undefined ? undefined : c.n_spills * 4);
  return [
    [`compiled kernel, ${k.caseId}`, a?.name ?? 'not recorded', b?.name ?? 'not recorded', ''],
    row('registers (n\\_regs)', a?.n_regs, b?.n_regs),
    row('local memory bytes (n\\_spills × 4)', words(a), words(b)),
    row('shared memory bytes', a?.shared_bytes, b?.shared_bytes),
    row('warps', a?.num_warps, b?.num_warps),
    row('stages', a?.num_stages, b?.num_stages),
  ];
}

const stalls = (n: NcuRun) => (n.stalls ?? []).map((s) => s.reason).join(', ');

function profileRows(w: WhyMoved): Cell[][] {
  const p = w.profile?.comparison;
  if (!p) return [];
  const [a, b] = [p.base, p.head];
  if (a.status !== 'ok' || b.status !== 'ok') {
    return [
      [
        'Nsight Compute',
        a.status === 'ok' ? 'profiled' : (a.message ?? a.status),
        b.status === 'ok' ? 'profiled' : (b.message ?? b.status),
        '',
      ],
    ];
  }
  const [ma, mb] = [a.metrics ?? {}, b.metrics ?? {}];
  const metric = (label: string, from?: number, to?: number, digits = 1): Cell[] => [
    trusted(label),
    trusted(num(from, digits)),
    trusted(num(to, digits)),
    trusted(change(from, to, digits)),
  ];
  const launches = (n: NcuRun) => (n.launches === undefined ? '' : String(n.launches));
  const [la, lb] = [launches(a), launches(b)];
  return [
    ...(la || lb
      ? [
          [
            trusted('ncu kernel launches per call'),
            trusted(la),
            trusted(lb),
            trusted(la && lb ? change(a.launches, b.launches) : ''),
          ],
        ]
      : []),
    metric('ncu duration ms', ma.duration_ms, mb.duration_ms, 3),
    metric('ncu SM throughput %', ma.sm_throughput_pct, mb.sm_throughput_pct),
    metric('ncu tensor pipe %', ma.tensor_pipe_pct, mb.tensor_pipe_pct),
    metric('ncu achieved occupancy %', ma.achieved_occupancy_pct, mb.achieved_occupancy_pct),
    metric('ncu DRAM throughput %', ma.dram_throughput_pct, mb.dram_throughput_pct),
    ['ncu top stalls', stalls(a), stalls(b), ''],
  ];
}

/**
 * A line per resource that moved in a function both sides built, and one per function only one
 * side built, with its resources (H100 run 154: two kernels re-instantiated with a new template
 * argument read as 16 lines of "absent").
 */
function resourceLines(changes: readonly ResourceChange[]): string[] {
  const name = (r: ResourceChange) => `${esc(r.function)}${r.arch ? ` (${esc(r.arch)})` : ''}`;
  const key = (r: ResourceChange) => `${r.function}\u0000${r.arch ?? ''}`;
  const oneSided = new Map<string, ResourceChange[]>();
  for (const r of changes) {
    if (r.only) oneSided.set(key(r), [...(oneSided.get(key(r)) ?? []), r]);
  }
  const lines: string[] = [];
  for (const r of changes) {
    if (!r.only) {
      lines.push(`- ${name(r)}: ${r.resource} ${r.from ?? 'absent'} → ${r.to ?? 'absent'}`);
      continue;
    }
    const all = oneSided.get(key(r));
    if (!all) continue; // listed with its first resource
    oneSided.delete(key(r));
    const facts = all.map((c) => `${c.resource} ${r.only === 'head' ? c.to : c.from}`).join(', ');
    lines.push(`- ${name(r)}: only in the ${r.only}'s build (${facts})`);
  }
  return lines;
}

function functionLines(w: WhyMoved, full: boolean): string[] {
  const all = resourceLines(w.build.resources);
  const lines = full ? all : all.slice(0, FUNCTIONS_IN_COMMENT);
  const rest = all.length - lines.length;
  return rest > 0 ? [...lines, `- … ${rest} more: in the full report`] : lines;
}

const BASE_FROM: Record<WhyMoved['baseBuildFrom'], string> = {
  'base revision': "base: the base revision's build in this job",
  'stored run': "base: the stored run's build",
  none: 'base: no build record',
};

function evidence(w: WhyMoved, full: boolean, repoUrl: string | undefined) {
  const rows = [...buildRows(w), ...tuningRows(w), ...compiledRows(w), ...profileRows(w)];
  const where = w.profile ? `; Nsight Compute on ${w.profile.caseId}` : '';
  const b = w.bisect;
  const found = b?.sha ? shaText(b.sha, repoUrl) : '';
  const bisect = b
    ? `\n\nBisected by tonight's run: ${found ? `slower from ${found}, ` : ''}${esc(b.text)}`
    : '';
  return {
    title: `**${esc(`${w.kernel}/${w.variant}`)}**: largest change on ${esc(w.caseId)} (${BASE_FROM[w.baseBuildFrom]}${esc(where)})${bisect}`,
    table: rows.length ? table(['', 'base', 'head', 'change'], rows, ['l', 'l', 'l', 'r']) : '',
    functions: functionLines(w, full).join('\n'),
  };
}

/** The section's view, or undefined when no variant moved. */
export function whyView(input: ReportInput, opts: ViewOptions): WhyView | undefined {
  const found = whyItMoved(input.comparison.cases, input.results, input.baseline);
  if (!found.length) return undefined;
  // A variant with nothing to show (no build, tuning, profile or bisection) has no place in the
  // fold: its line already says so; with none, there is no fold (a title over nothing, in the
  // README's first screen until 2026-11-27).
  const variants = found
    .map((w) => ({ w, e: evidence(w, opts.full, input.repoUrl) }))
    .filter(({ w, e }) => e.table || e.functions || w.bisect)
    .map(({ e }) => e);
  return {
    lines: found.map((w) => whyLine(w, input.repoUrl)).join('\n'),
    variants,
    evidence: variants.length > 0,
  };
}
