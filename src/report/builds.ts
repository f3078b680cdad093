// Section `builds` (partials/builds.md.mustache): each variant's build, and the stages' wall time.
import { type Cell, codeBlock, escapeMarkdown, fixed } from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import { breakableCell, trusted } from './cells.js';
import { compactTable } from './compact.js';
import { identitySkipped } from './identity-cost.js';
import type { ReportInput, ViewOptions } from './types.js';
import type { BuildsView } from './view-types.js';

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
  ['prepare', 'preparation'],
  ['base prepare', 'base preparation'],
  ['bench', 'timing'],
  ['bench warm-up', 'of it warm-ups'],
  ['finish', 'finish'],
  ['ceilings', 'ceilings'],
];

/**
 * "GPU-seconds of each stage (320 s in all): doctor 6 s · build 26 s · … harness 287 s (set-up
 * 52 s, …; by kernel: gemm 9 s, …)" from results run.stage_seconds (the GPU machine's wall time),
 * or '' when the run recorded none, then what identity skipping saved, priced on `baseline` (the
 * stored run). Names that are neither a known stage or phase nor a kernel of the run are listed
 * last, escaped.
 */
export function stagesLine(results: KernelgateResults, baseline?: KernelgateResults): string {
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
    checksByVariant(results),
  ]
    .filter(Boolean)
    .join('; ');
  const parts = stages.map(([k, label]) =>
    k === 'harness' && inner ? `${label} ${s(k)} (${inner})` : `${label} ${s(k)}`,
  );
  if (!stages.some(([k]) => k === 'harness') && inner) parts.push(inner);
  parts.push(...other.map((k) => `${escapeMarkdown(k)} ${s(k)}`));
  const total = stages.reduce((sum, [k]) => sum + (secs[k] ?? 0), 0);
  return `GPU-seconds of each stage${stages.length ? ` (${fixed(total, 0)} s in all)` : ''}: ${parts.join(' · ')}.${identitySkipped(results, baseline)}`;
}

/** The variants named one by one in the checks' split; the rest are summed. */
const CHECKS_NAMED = 3;

/**
 * "checks by variant: attention/triton_fa2 9 s, attention/cublas_attn 4 s, attention/cuda_fa2 3 s,
 * 12 more 10 s": what each variant's verification took over the run's cases (their
 * correctness.seconds, the most first), or '' when the harness recorded none.
 */
function checksByVariant(results: KernelgateResults): string {
  const spent = new Map<string, number>();
  for (const c of results.cases) {
    const sec = c.correctness?.seconds;
    if (sec === undefined) continue;
    const name = `${c.kernel}/${c.variant}`;
    spent.set(name, (spent.get(name) ?? 0) + sec);
  }
  if (!spent.size) return '';
  const sorted = [...spent].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const named = sorted
    .slice(0, CHECKS_NAMED)
    .map(([name, sec]) => `${escapeMarkdown(name)} ${fixed(sec, 0)} s`);
  const rest = sorted.slice(CHECKS_NAMED);
  if (rest.length)
    named.push(`${rest.length} more ${fixed(rest.reduce((sum, [, sec]) => sum + sec, 0), 0)} s`);
  return `checks by variant: ${named.join(', ')}`;
}

/** Opcodes worth a reader's attention in a SASS census: tensor cores, async copies, local memory. */
const SASS_HIGHLIGHTS = ['HGMMA', 'HMMA', 'LDSM', 'LDGSTS', 'UTMALDG', 'LDL', 'STL'];

const BUILD_COLUMNS = [
  'kernel/variant',
  'status',
  'archs',
  'max registers',
  'max smem bytes',
  'max stack / spill bytes',
  'SASS highlights',
  'unmet expectations',
];
const BUILD_ALIGN: ('l' | 'r')[] = ['l', 'l', 'l', 'r', 'r', 'r', 'l', 'l'];

export function buildsView(input: ReportInput, opts: ViewOptions): BuildsView {
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
    const stackSpill = [
      maxOf((f) => f.stack_bytes),
      maxOf((f) => (f.spill_load_bytes ?? 0) + (f.spill_store_bytes ?? 0)),
    ];
    const unmet = (b.expectations ?? []).filter((e) => !e.ok).map((e) => `${e.name}: ${e.message}`);
    return [
      breakableCell(`${b.kernel}/${b.variant}`, true),
      trusted(`${statusText[b.status]}${b.cached ? ' (cached)' : ''}`),
      [...(b.archs?.sass ?? []), ...(b.archs?.ptx ?? []).map((p) => `PTX ${p}`)].join(', '),
      trusted(maxOf((f) => f.registers)),
      trusted(maxOf((f) => f.smem_bytes)),
      trusted(stackSpill.some(Boolean) ? stackSpill.join(' / ') : ''),
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
    // What no build has (no unmet expectation, say) is left out: the table fits the column.
    table: builds.length ? compactTable(BUILD_COLUMNS, rows, BUILD_ALIGN, BUILD_COLUMNS) : '',
    logs,
  };
}
