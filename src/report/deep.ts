// Section `deep` (partials/deep.md.mustache): the nightly's deep checks, folded. compute-sanitizer:
// one row per variant, a column per tool, and each finding's first lines; Nsight Compute: one row
// per case and variant profiled (the headline cases; with ncu-slower the SLOWER ones) with its
// metrics and top stalls. Every text the tools printed is
// escaped or fenced.
import { harnessOnly, sanitizerLine } from '../judge/index.js';
import { type Cell, codeBlock, fixed, table } from '../lib/index.js';
import type { NcuRun, SanitizerRun } from '../results/index.js';
import { esc, plural, trusted } from './cells.js';
import type { ReportInput, ViewOptions } from './types.js';
import type { DeepView } from './view-types.js';

const TOOLS = ['memcheck', 'racecheck', 'synccheck', 'initcheck'] as const;
/** Findings shown with their first lines in a comment (the full report shows all). */
export const DEEP_FINDINGS_IN_COMMENT = 8;
const FIRST_LINES_IN_COMMENT = 600;

function toolCell(s: SanitizerRun | undefined): Cell {
  if (!s) return trusted('');
  if (s.status === 'clean') return trusted('✅ 0');
  if (harnessOnly(s)) return trusted(`⚠️ ${s.errors} (harness)`);
  if (s.status === 'findings') return trusted(`❌ ${s.errors}`);
  if (s.status === 'skipped') return trusted('➖ not checked');
  return trusted('💥 did not finish');
}

function sanitizerTable(runs: SanitizerRun[]): string {
  const keys = [...new Set(runs.map((s) => `${s.kernel}\u0000${s.variant}\u0000${s.case}`))];
  const rows = keys.map((key): Cell[] => {
    const [kernel, variant, caseId] = key.split('\u0000') as [string, string, string];
    const mine = runs.filter(
      (s) => s.kernel === kernel && s.variant === variant && s.case === caseId,
    );
    return [
      `${kernel}/${variant}`,
      caseId,
      ...TOOLS.map((t) => toolCell(mine.find((s) => s.tool === t))),
    ];
  });
  return table(['variant', 'case', ...TOOLS], rows, ['l', 'l', 'c', 'c', 'c', 'c']);
}

function findingBlock(s: SanitizerRun, full: boolean) {
  const lines = (s.findings ?? [])
    .map((f) =>
      [
        `${f.what}${f.kernel ? `  [${f.kernel}]` : ''}`,
        ...(f.detail ?? '').split('\n'),
        f.python_frame
          ? `launched by ${f.python_frame}${f.harness ? " (the harness's own code)" : ''}`
          : '',
      ]
        .filter(Boolean)
        .join('\n    '),
    )
    .join('\n');
  const text =
    lines || (s.status === 'skipped' ? `not checked: ${s.reason ?? ''}` : s.first_lines) || '';
  const clipped =
    !full && text.length > FIRST_LINES_IN_COMMENT
      ? `${text.slice(0, FIRST_LINES_IN_COMMENT - 1)}…`
      : text;
  return { title: esc(sanitizerLine(s)), block: codeBlock(clipped) };
}

const pct = (v: number | undefined) => (v === undefined ? '' : fixed(v, 1));

function ncuTable(runs: NcuRun[]): string {
  const rows = runs.map((n): Cell[] => {
    const m = n.metrics ?? {};
    return [
      `${n.kernel}/${n.variant}`,
      n.case,
      n.status === 'ok'
        ? (n.device_kernel ?? '')
        : `${n.status === 'skipped' ? '➖ not profiled:' : '💥'} ${n.message ?? 'error'}`,
      trusted(m.duration_ms === undefined ? '' : fixed(m.duration_ms, 3)),
      trusted(pct(m.sm_throughput_pct)),
      trusted(pct(m.tensor_pipe_pct)),
      trusted(pct(m.achieved_occupancy_pct)),
      trusted(pct(m.dram_throughput_pct)),
      (n.stalls ?? []).map((s) => s.reason).join(', '),
    ];
  });
  return table(
    [
      'variant',
      'case',
      'device kernel',
      'ms',
      'SM %',
      'tensor pipe %',
      'occupancy %',
      'DRAM %',
      'top stalls (PC samples)',
    ],
    rows,
    ['l', 'l', 'l', 'r', 'r', 'r', 'r', 'r', 'l'],
  );
}

/** The section's view, or undefined when the run has no deep checks. */
export function deepView(input: ReportInput, opts: ViewOptions): DeepView | undefined {
  const deep = input.results.deep;
  if (!deep || (!deep.sanitizer?.length && !deep.ncu?.length)) return undefined;
  const sanitizer = deep.sanitizer ?? [];
  const found = sanitizer.filter((s) => s.status === 'findings' && !harnessOnly(s));
  const harness = sanitizer.filter(harnessOnly);
  const unfinished = sanitizer.filter((s) => s.status === 'error');
  const unchecked = sanitizer.filter((s) => s.status === 'skipped');
  const variants = new Set(sanitizer.map((s) => `${s.kernel}/${s.variant}`)).size;
  const shown = opts.full ? found : found.slice(0, DEEP_FINDINGS_IN_COMMENT);
  const ncu = deep.ncu ?? [];
  const cases = [...new Set(ncu.map((n) => `${n.kernel} ${n.case}`))];
  return {
    sanitizer: sanitizer.length
      ? {
          title: `${found.length ? '❌' : unfinished.length || unchecked.length || harness.length ? '⚠️' : '✅'} ${plural(found.length, 'run')} with findings, ${unfinished.length} that did not finish${unchecked.length ? `, ${unchecked.length} not checked` : ''}${harness.length ? `, ${harness.length} with findings in the harness's own code` : ''}, of ${plural(sanitizer.length, 'run')} over ${plural(variants, 'variant')}`,
          table: sanitizerTable(sanitizer),
          findings: [...shown, ...(opts.full ? [...harness, ...unfinished, ...unchecked] : [])].map(
            (s) => findingBlock(s, opts.full),
          ),
          more:
            found.length > shown.length
              ? `${found.length - shown.length} more run(s) with findings: in the full report.`
              : undefined,
        }
      : undefined,
    ncu: ncu.length
      ? {
          title: `${plural(ncu.length, 'run')} over ${plural(cases.length, 'case')} (${[...new Set(ncu.map((n) => n.kernel))].map((k) => esc(k)).join(', ')})`,
          table: ncuTable(ncu),
        }
      : undefined,
  };
}

/** The title's words for sanitizer findings that fail the gate. */
export function deepTitleParts(input: ReportInput): string[] {
  if (!input.config.policy.failOnSanitizer) return [];
  const parts = new Map<string, Set<string>>();
  for (const s of input.results.deep?.sanitizer ?? []) {
    if (s.status !== 'findings' || harnessOnly(s)) continue;
    const key = `${s.kernel}/${s.variant}`;
    parts.set(key, (parts.get(key) ?? new Set()).add(s.tool));
  }
  return [...parts.entries()].map(
    ([variant, tools]) => `${esc(variant)} sanitizer findings (${[...tools].join(', ')})`,
  );
}
