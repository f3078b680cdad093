// Issue 31's "done when", on real output of the three tools made on the H100 by programs of our own
// (examples/tools/: four benchmarks per tool, one of them slowed by KG_SLOW_PCT in the head runs),
// judged with the defaults exactly as a user would, `kernelgate adapt` then
// `kernelgate report --results HEAD --baseline BASE` in a repository with no kernelgate.yml.
// The recording: test/fixtures/recorded/tools-h100-run66/ (`bash .carry/tools/run.sh`,
// examples/tools/README.md; NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-26 16:05 UTC):
// base run twice (base1, base2), a head with KG_SLOW_PCT=2.5 and a head_extra with KG_SLOW_PCT=6.
// What it shows with today's defaults, asserted exactly:
// - the A/A pair (base2 against base1): no SLOWER, no FASTER;
// - head_extra (6 %) against either base: the slowed benchmark SLOWER, the three others neither;
// - the 2.5 % head against either base, with each source's default threshold (src/judge/sources.ts
//   toolThresholdPct; docs/adapters.md, "Thresholds by source"): nvbench's `fma` and
//   pytest-benchmark's `test_mul_chain` (five runs a side read together) SLOWER, the unchanged ones
//   neither; Google Benchmark's `BM_fma` is NOT SLOWER: its repetitions are one process's, and
//   between processes its unchanged benchmarks moved up to 1.55 % (BM_reduce, head against base2,
//   [-1.8 %, -1.3 %]), as much as the change it measured against base2 (+1.7 %), so its default
//   threshold is 2 % and the slowed benchmark reads AMBIGUOUS (against base1, +2.4 % in
//   [+1.6 %, +2.6 %]) or SAME flagged as a resolved change under the threshold (against base2).
// The second recording, test/fixtures/recorded/tools-h100-run74/ (the same script with Google
// Benchmark run five times a side, interleaved like pytest's; NVIDIA H100 80GB HBM3, driver
// 580.159.04, 2026-11-26 18:47 UTC, another machine): with the five runs read together (one sample
// per run) Google Benchmark's interval holds the drift between processes, so its default is the
// runs' 1 % and the 2.5 % head's BM_fma is SLOWER against either base (+2.4 % in [+2.3 %, +2.6 %]
// and [+1.8 %, +2.7 %]), as nvbench's and pytest-benchmark's are; the A/A pair and the unchanged
// benchmarks neither SLOWER nor FASTER.
// KG_TOOLS_RECORDING=DIR judges another recording in place of run 66 (a fresh $OUT/tools before it
// is copied); the exact figures below are the recordings', so another one fails where they differ.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliIn } from './support/cli-io.js';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults } from '../src/results/index.js';

const ROOT = join(import.meta.dirname, '..');
const RUN66 =
  process.env['KG_TOOLS_RECORDING'] ?? join(ROOT, 'test/fixtures/recorded/tools-h100-run66');
const RUN74 = join(ROOT, 'test/fixtures/recorded/tools-h100-run74');

type Arm = 'base1' | 'base2' | 'head' | 'head_extra';

interface Tool {
  format: 'nvbench' | 'gbench' | 'pytest-benchmark';
  kernel: string;
  /** The tool's name for the benchmark KG_SLOW_PCT slows, and its three unchanged ones. */
  slowed: string;
  unchanged: string[];
  /** The files of one arm, relative to the recording. */
  inputs: (arm: Arm) => string[];
  /**
   * The 2.5 % head's slowed benchmark against base1 and base2, judged with the defaults: its
   * verdict and, where it is not SLOWER, the reason the user reads (the case's note, or its row of
   * the report's table where the verdict carries no note).
   */
  head25: Record<
    'base1' | 'base2',
    { verdict: 'SLOWER' } | { verdict: 'SAME' | 'AMBIGUOUS'; reads: string }
  >;
}

/** The note of a SAME that resolved a change under Google Benchmark's default threshold (2 %). */
function underThreshold(change: string): string {
  return `a resolved change under the threshold: ${change} is more than half of ±2.0 % but not past it, so it is not called SLOWER; see whether it repeats`;
}

/** pytest-benchmark: run.sh's five runs per arm, read together (one sample per run). */
const PYTEST_RUNS = 5;
const runs = (folder: string, arm: Arm) =>
  Array.from({ length: PYTEST_RUNS }, (_, i) => `${folder}/${arm}-run${i + 1}.json`);

const TOOLS_RUN66: Tool[] = [
  {
    format: 'nvbench',
    kernel: 'tools_nvbench',
    slowed: 'fma',
    unchanged: ['copy', 'saxpy', 'reduce'],
    inputs: (arm) => [`nvbench/${arm}.json`],
    head25: { base1: { verdict: 'SLOWER' }, base2: { verdict: 'SLOWER' } },
  },
  {
    format: 'gbench',
    kernel: 'tools_gbench',
    slowed: 'BM_fma',
    unchanged: ['BM_copy', 'BM_saxpy', 'BM_reduce'],
    inputs: (arm) => [`gbench/${arm}.json`],
    head25: {
      base1: {
        verdict: 'AMBIGUOUS',
        reads: '| | BM\\_fma | +2.4 % | 🟡 AMBIGUOUS | +1.6 % … +2.6 % (±2.0 %) |',
      },
      base2: { verdict: 'SAME', reads: underThreshold('+1.7 % in [+1.6 %, +1.8 %]') },
    },
  },
  {
    format: 'pytest-benchmark',
    kernel: 'tools_pytest',
    slowed: 'test_mul_chain',
    unchanged: ['test_copy', 'test_saxpy', 'test_sum'],
    inputs: (arm) => runs('pytest', arm),
    head25: { base1: { verdict: 'SLOWER' }, base2: { verdict: 'SLOWER' } },
  },
];

/** Run 74: every tool's 2.5 % head SLOWER; Google Benchmark's five runs a side read together. */
const TOOLS_RUN74: Tool[] = TOOLS_RUN66.map((tool) => ({
  ...tool,
  ...(tool.format === 'gbench' ? { inputs: (arm: Arm) => runs('gbench', arm) } : {}),
  head25: { base1: { verdict: 'SLOWER' }, base2: { verdict: 'SLOWER' } },
}));

interface Recording {
  name: string;
  dir: string;
  tools: Tool[];
}

const RECORDINGS: Recording[] = [
  { name: 'run 66', dir: RUN66, tools: TOOLS_RUN66 },
  { name: 'run 74', dir: RUN74, tools: TOOLS_RUN74 },
];

/** An empty repository: kernelgate's defaults, no kernelgate.yml. */
const defaults = loadConfig(mkdtempSync(join(tmpdir(), 'kg-recorded-tools-')));

/** One empty repository per recording; the CLI runs in it. */
function workspace(rec: Recording) {
  const repo = mkdtempSync(join(tmpdir(), 'kg-recorded-tools-'));
  return { rec, repo, cli: cliIn(repo) };
}
type Workspace = ReturnType<typeof workspace>;

/** `kernelgate adapt` of one arm's files into REPO/<kernel>-<arm>.json. */
async function adapt({ rec, repo, cli }: Workspace, tool: Tool, arm: Arm) {
  const out = join(repo, `${tool.kernel}-${arm}.json`);
  const inputs = tool.inputs(arm).flatMap((f) => ['--input', join(rec.dir, f)]);
  const run = await cli(
    'adapt',
    '--format',
    tool.format,
    ...inputs,
    '--kernel',
    tool.kernel,
    '--out',
    out,
  );
  return { out, ...run };
}

/** The verdict line `kernelgate report` prints last, and each variant's verdict as judged. */
async function report({ repo, cli }: Workspace, tool: Tool, head: Arm, base: Arm) {
  const results = join(repo, `${tool.kernel}-${head}.json`);
  const baseline = join(repo, `${tool.kernel}-${base}.json`);
  const printed = await cli('report', '--results', results, '--baseline', baseline);
  const line = /^kernelgate: (?:PASS|FAIL) \(.*\)$/m.exec(printed.stderr)?.[0];
  const ambiguousNote = /^ {2}note: \d+ case\(s\) AMBIGUOUS: .*$/m.exec(printed.stderr)?.[0];
  const { comparison } = judge(loadResults(results), loadResults(baseline), defaults, 'pr');
  const perf = new Map(comparison.cases.map((c) => [c.variant, c.perf]));
  const counts = /(\d+) slower, (\d+) faster/.exec(line ?? '');
  return {
    line,
    printed: printed.stdout,
    ambiguousNote,
    perf,
    slower: Number(counts?.[1]),
    faster: Number(counts?.[2]),
    cases: comparison.cases,
  };
}

/** The tool's own median of a variant in an adapted arm (ms). */
function medianOf({ repo }: Workspace, tool: Tool, arm: Arm, variant: string): number {
  const results = loadResults(join(repo, `${tool.kernel}-${arm}.json`));
  const c = results.cases.find((x) => x.variant === variant);
  if (c?.timing === undefined)
    throw new Error(`${tool.kernel}-${arm}: no timed case of ${variant}`);
  return c.timing.median_ms;
}

/** The tool's own slowdown of the slowed benchmark, head over base (%). */
function measuredPct(ws: Workspace, tool: Tool, head: Arm, base: Arm): number {
  return (medianOf(ws, tool, head, tool.slowed) / medianOf(ws, tool, base, tool.slowed) - 1) * 100;
}

const CASES = RECORDINGS.flatMap((rec) =>
  rec.tools.map((tool) => ({ rec, tool, name: `${rec.name}, ${tool.format}` })),
);

const BASES = ['base1', 'base2'] as const;

describe.each(CASES)('$name: recorded on the H100, judged with the defaults', ({ rec, tool }) => {
  const arms: Arm[] = ['base1', 'base2', 'head', 'head_extra'];
  const adapted = new Map<Arm, Awaited<ReturnType<typeof adapt>>>();
  const ws = workspace(rec);
  beforeAll(async () => {
    for (const arm of arms) adapted.set(arm, await adapt(ws, tool, arm));
  });

  it('adapts every arm: four timed benchmarks on the GPU the tool names', () => {
    for (const arm of arms) {
      const { out, status, stderr } = adapted.get(arm)!;
      expect(status, stderr).toBe(0);
      const first = stderr.split('\n')[0] ?? '';
      expect(first.startsWith(`${out}: 4 case(s) `), first).toBe(true);
      expect(first, first).toContain(': 4 timed, 0 error(s), 0 skipped; ');
      expect(first, first).toMatch(/GPU: NVIDIA H100/);
      const results = loadResults(out);
      expect(results.cases.map((c) => c.variant).sort()).toEqual(
        [tool.slowed, ...tool.unchanged].sort(),
      );
    }
  });

  it('A/A (base2 against base1): no SLOWER, no FASTER', async () => {
    const aa = await report(ws, tool, 'base2', 'base1');
    expect(aa.line).toBeDefined();
    expect([aa.slower, aa.faster], aa.line).toEqual([0, 0]);
    for (const v of [tool.slowed, ...tool.unchanged])
      expect(['SLOWER', 'FASTER']).not.toContain(aa.perf.get(v));
  });

  it('head_extra (KG_SLOW_PCT=6) against either base: the slowed benchmark SLOWER, the unchanged ones neither SLOWER nor FASTER', async () => {
    for (const base of BASES) {
      const pct = measuredPct(ws, tool, 'head_extra', base);
      const said = `${tool.slowed} head_extra against ${base}: ${pct.toFixed(2)} %`;
      expect(pct, said).toBeGreaterThan(4.5);
      expect(pct, said).toBeLessThan(7);
      const r = await report(ws, tool, 'head_extra', base);
      expect(r.perf.get(tool.slowed), said).toBe('SLOWER');
      for (const v of tool.unchanged)
        expect(['SLOWER', 'FASTER'], `${v} against ${base}`).not.toContain(r.perf.get(v));
      expect([r.slower, r.faster], r.line).toEqual([1, 0]);
    }
  });

  it('the 2.5 % head: the tool measured the slowed benchmark 1.5-3 % slower', () => {
    for (const base of BASES) {
      const pct = measuredPct(ws, tool, 'head', base);
      const said = `${tool.slowed} head against ${base}: ${pct.toFixed(2)} %`;
      expect(pct, said).toBeGreaterThanOrEqual(1.5);
      expect(pct, said).toBeLessThan(3);
    }
  });

  // Issue 31's done-when: SLOWER with the defaults where the source's data resolves it (nvbench,
  // pytest-benchmark's five runs a side); Google Benchmark's does not (see the top of this file).
  it('the 2.5 % head with the defaults: SLOWER where the data resolves it, else the reason shown; the unchanged ones neither SLOWER nor FASTER', async () => {
    for (const base of BASES) {
      const want = tool.head25[base];
      const r = await report(ws, tool, 'head', base);
      const slowed = r.cases.find((c) => c.variant === tool.slowed);
      expect(r.perf.get(tool.slowed), `${tool.slowed} against ${base}`).toBe(want.verdict);
      if (want.verdict === 'SAME') {
        expect(slowed?.perfNote).toBe(want.reads);
      } else if (want.verdict === 'AMBIGUOUS') {
        // The report keeps a number and its unit together with no-break spaces; compared as spaces.
        expect(r.printed.replaceAll('\u00a0', ' ')).toContain(want.reads);
        expect(r.ambiguousNote).toMatch(
          /^ {2}note: \d+ case\(s\) AMBIGUOUS: the data cannot tell a change from noise \(rerun, or more samples\)$/,
        );
      }
      for (const v of tool.unchanged)
        expect(['SLOWER', 'FASTER'], `${v} against ${base}`).not.toContain(r.perf.get(v));
      const slower = want.verdict === 'SLOWER' ? 1 : 0;
      expect([r.slower, r.faster], r.line).toEqual([slower, 0]);
    }
  });

  it("kernelgate.yml's compare.threshold_pct wins over the source's default", async () => {
    const repo = mkdtempSync(join(tmpdir(), 'kg-recorded-tools-yml-'));
    writeFileSync(join(repo, 'kernelgate.yml'), 'compare:\n  threshold_pct: 3\n');
    const config = loadConfig(repo);
    const results = loadResults(join(ws.repo, `${tool.kernel}-head.json`));
    for (const base of BASES) {
      const baseline = loadResults(join(ws.repo, `${tool.kernel}-${base}.json`));
      const { comparison } = judge(results, baseline, config, 'pr');
      const slowed = comparison.cases.find((c) => c.variant === tool.slowed);
      expect(slowed?.thresholdPct, `${tool.slowed} against ${base}`).toBe(3);
      expect(slowed?.perf, `${tool.slowed} against ${base}`).not.toBe('SLOWER');
    }
  });
});

describe.each(RECORDINGS)('the recording of $name', (rec) => {
  it('says where and when it ran, and every run exited 0', () => {
    const machine = readFileSync(join(rec.dir, 'machine.txt'), 'utf8');
    expect(machine).toMatch(/NVIDIA H100/);
    const rows = readFileSync(join(rec.dir, 'runs.tsv'), 'utf8').trim().split('\n').slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(3 + 3 + 3 * PYTEST_RUNS);
    for (const row of rows) expect(row.split('\t').at(-1), row).toBe('0');
  });
});
