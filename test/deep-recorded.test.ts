// The deep checks as recorded on the H100 (deep22: scripts/gpu-deep.sh on the tree of 9d2a2bf,
// 2026-11-24 about 01:20 UTC; test/fixtures/deep/README.md), judged again with today's code:
// the planted out-of-bounds write found and named, a sanitizer result for every CUDA and Triton
// variant under each tool, initcheck's findings in the harness's own input fingerprint a warning
// and not the variants', and the nightly report's sanitizer table and Nsight Compute section
// rendered from the recorded data.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deepCommand } from '../src/cli/index.js';
import { type Config, loadConfig } from '../src/config/index.js';
import { sanitizerTargets } from '../src/deep/index.js';
import { compare, evaluateTiers, gate, harnessOnly } from '../src/judge/index.js';
import { scriptedExec } from '../src/lib/index.js';
import { renderReport } from '../src/report/index.js';
import { PLANTED_OOB_FINDING } from './support/deep.js';
import { harnessDocument } from './support/harness-document.js';
import {
  type KernelgateResults,
  loadResults,
  type SanitizerRun,
  validateResults,
} from '../src/results/index.js';

const ROOT = join(import.meta.dirname, '..');
const FIXTURES = join(ROOT, 'test/fixtures/deep');
const DIR = join(FIXTURES, 'deep22');
const text = (name: string) => readFileSync(join(DIR, name), 'utf8');
const recorded = (step: string) => loadResults(join(DIR, `${step}-results.json`));
const config = loadConfig(ROOT);
const faultyConfig = loadConfig(join(FIXTURES, 'faulty-config'));

const TOOLS = ['memcheck', 'racecheck', 'synccheck', 'initcheck'] as const;
const ATTENTION = 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false';
const BSR = 'dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4';
const TORCH_BSR_NOT_CHECKED = `the harness skipped it on ${BSR} (torch's bsr_dense_mm needs N divisible by 16, got N=1000); its next case, dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16, is 1049× the size, past the sanitizer's limit of 8×`;
// PyTorch's reduction under the input fingerprint, as the parser names it (clipped).
const REDUCE =
  'void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<long, at::native::func_wrapper_t<long, at::native::sum_functor<long, long, long>::operato…';
const PLANTED =
  'sanitizer memcheck: faulty/oob_store dtype=fp32,n=100: 5 errors: Invalid __global__ write of size 4 bytes in oob_tail';

function judged(results: KernelgateResults, cfg: Config = config) {
  const comparison = compare(results, undefined, cfg);
  const tiers = evaluateTiers(results, cfg);
  const g = gate(comparison, tiers, results, cfg);
  const input = { kind: 'nightly' as const, results, comparison, tiers, gate: g, config: cfg };
  return { g, rendered: renderReport(input) };
}

/** The Deep checks section of a rendered report, up to the end of its last fold. */
function deepSection(markdown: string): string {
  const from = markdown.indexOf('### Deep checks');
  return markdown.slice(from, markdown.indexOf('### ', from + 4));
}

/** What the runner decides of a run (not when or how long it ran, nor the tool's path). */
const decided = (s: SanitizerRun) => ({
  tool: s.tool,
  kernel: s.kernel,
  variant: s.variant,
  case: s.case,
  status: s.status,
  errors: s.errors,
  reason: s.reason,
  findings: s.findings,
});

describe('the planted out-of-bounds write (deep22)', { timeout: 120_000 }, () => {
  it('was found and named on the GPU: the script says FOUND, with the finding', () => {
    const [verdict, json] = text('planted.txt')
      .trim()
      .split(/: (?=\{)/);
    expect(verdict).toBe('planted out-of-bounds write: FOUND');
    expect(JSON.parse(json ?? '')).toEqual({
      status: 'findings',
      errors: 5,
      first: PLANTED_OOB_FINDING,
    });
  });

  it('fails the gate, named, and the report the GPU machine rendered is what today renders', () => {
    const results = recorded('faulty');
    const { g, rendered } = judged(results, faultyConfig);
    expect(g.verdict).toBe('fail');
    expect(g.reasons).toEqual([PLANTED]);
    expect(g.warnings).toContain(
      'sanitizer memcheck: faulty/library dtype=fp32,n=64: not checked: the harness skipped it on dtype=fp32,n=64 (no library for faulty/library: the harness was given no --builds file)',
    );
    // Two of its five findings are the harness's (the CUDA calls after the launch failure, from
    // its device.py): the run is still the variant's, since the write's launch is not.
    const oob = results.deep?.sanitizer?.find((s) => s.variant === 'oob_store');
    expect(oob?.findings?.map((f) => f.harness ?? false)).toEqual([
      false,
      false,
      false,
      true,
      true,
    ]);
    expect(harnessOnly(oob!)).toBe(false);
    const gpu = text('faulty-report.md');
    expect(gpu.split('\n')[0]).toBe(
      '## kernelgate nightly: ❌ fail: faulty/oob\\_store sanitizer findings (memcheck) · 2026-11-24T01:18:43Z',
    );
    expect(rendered.full.split('\n')[0]).toBe(gpu.split('\n')[0]);
    expect(rendered.full).toContain(
      '**Why the gate fails**\n\n- 🧪 sanitizer memcheck: faulty/oob\\_store dtype=fp32,n=100: 5 errors: Invalid \\_\\_global\\_\\_ write of size 4 bytes in oob\\_tail\n',
    );
    expect(deepSection(rendered.full)).toBe(deepSection(gpu));
    expect(deepSection(gpu)).toContain('| faulty/oob\\_store | dtype=fp32,n=100 | ❌ 5 | | | |');
  });

  it('is found again when kernelgate deep reads the recorded output', async () => {
    // The faulty step replayed: the tool answers each run with its recorded log (the planted
    // run's trimmed: test/fixtures/deep/README.md), the harness's record of the skipped variant
    // beside it.
    const out = mkdtempSync(join(tmpdir(), 'kg-deep22-faulty-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep22-faulty-bin-'));
    const sanitizer = join(bin, 'compute-sanitizer');
    writeFileSync(sanitizer, '');
    const scripted = scriptedExec([]);
    const exec = {
      async run(command: string, args: readonly string[]) {
        if (command !== sanitizer) return scripted.run(command, args);
        const variant = args[args.indexOf('--variants') + 1];
        if (variant === 'library') {
          const { cases } = JSON.parse(text('faulty-library.json')) as {
            cases: Record<string, unknown>[];
          };
          writeFileSync(args[args.indexOf('--out') + 1] as string, harnessDocument(cases));
          return { exitCode: 0, stdout: text('faulty-library.log'), stderr: '' };
        }
        const log = readFileSync(join(FIXTURES, 'memcheck-oob.txt'), 'utf8');
        return { exitCode: 0, stdout: log, stderr: '' };
      },
    };
    let stdout = '';
    const status = await deepCommand(exec)(
      [
        ...['--config', join(FIXTURES, 'faulty-config'), '--only', 'faulty'],
        ...['--checks', 'memcheck', '--out-dir', out, '--builds', join(out, 'no-builds.json')],
        ...['--sanitizer', sanitizer, '--out', join(out, 'report.md')],
      ],
      { stdout: (t) => (stdout += t), stderr: () => undefined, cwd: ROOT },
    );
    expect(status).toBe(1);
    // The lines the GPU machine printed (faulty.log).
    const gpu = text('faulty.log').split('\n');
    for (const line of gpu.filter((l) => /^ {2}(fail|note): /.test(l))) {
      expect(stdout).toContain(`${line}\n`);
    }
    expect(gpu).toContain(`  fail: ${PLANTED}`);
    const again = loadResults(join(out, 'results.json')).deep?.sanitizer ?? [];
    expect(again.map(decided)).toEqual((recorded('faulty').deep?.sanitizer ?? []).map(decided));
  });
});

describe('every CUDA and Triton variant under each tool (deep22)', { timeout: 120_000 }, () => {
  const steps = Object.fromEntries(TOOLS.map((t) => [t, recorded(t)]));
  const sanitizer = TOOLS.flatMap((t) => steps[t]?.deep?.sanitizer ?? []);
  // The nightly's document: the four steps' runs and the ncu step's summaries in one deep section.
  const nightly = validateResults(
    { ...recorded('memcheck'), deep: { sanitizer, ncu: recorded('ncu').deep?.ncu } },
    'deep22',
  );

  it('has a result per tool for each target: clean, findings, not checked or did not finish, each with its why', () => {
    const targets = sanitizerTargets(config);
    expect(targets).toHaveLength(8);
    for (const tool of TOOLS) {
      const runs = steps[tool]?.deep?.sanitizer ?? [];
      expect(runs.map((s) => [s.tool, s.kernel, s.variant, s.case])).toEqual(
        targets.map((t) => [tool, t.kernel, t.variant, t.caseId]),
      );
      for (const s of runs) {
        if (s.status === 'skipped') expect(s.reason).toBe(TORCH_BSR_NOT_CHECKED);
        if (s.status === 'error') {
          expect(s.first_lines?.split('\n')[0]).toBe(
            "initcheck was stopped after 97.1 s: the time box (100 s) ran out; it printed no ERROR SUMMARY; the output's last lines:",
          );
        }
      }
    }
    const table = Object.fromEntries(
      targets.map((t) => [
        `${t.kernel}/${t.variant}`,
        TOOLS.map((tool) => {
          const s = sanitizer.find((r) => r.tool === tool && r.variant === t.variant);
          return `${s?.status} ${s?.errors}`;
        }).join(', '),
      ]),
    );
    expect(table).toEqual({
      'attention/triton_fa2': 'clean 0, clean 0, clean 0, clean 0',
      'attention/cuda_fa2': 'clean 0, clean 0, clean 0, clean 0',
      'attention/cuda_fa_wgmma': 'clean 0, clean 0, clean 0, clean 0',
      'bsr_gemm/triton_bsr': 'clean 0, clean 0, clean 0, findings 1300',
      'bsr_gemm/torch_bsr_dense_mm': 'skipped 0, skipped 0, skipped 0, skipped 0',
      'bsr_gemm/cuda_bsr_mma': 'clean 0, clean 0, clean 0, findings 1300',
      'bsr_gemm/cuda_bsr_wgmma': 'clean 0, clean 0, clean 0, findings 1300',
      'bsr_gemm/cuda_bsr_wgmma_ws': 'clean 0, clean 0, clean 0, error 0',
    });
  });

  it("classifies initcheck's findings as the harness's own: every kept one under its input fingerprint", () => {
    const runs = steps.initcheck?.deep?.sanitizer ?? [];
    const found = runs.filter((s) => (s.findings ?? []).length > 0);
    expect(found.map((s) => [s.variant, s.status, s.findings?.length, harnessOnly(s)])).toEqual([
      ['triton_bsr', 'findings', 20, true],
      ['cuda_bsr_mma', 'findings', 20, true],
      ['cuda_bsr_wgmma', 'findings', 20, true],
      // Stopped by the time box after printing its findings: no summary, so no count.
      ['cuda_bsr_wgmma_ws', 'error', 20, false],
    ]);
    const kinds = new Set(
      found.flatMap((s) =>
        (s.findings ?? []).map((f) => `${f.what} | ${f.kernel} | ${f.python_frame} | ${f.harness}`),
      ),
    );
    expect([...kinds]).toEqual([
      `Uninitialized __global__ memory read of size 8 bytes | ${REDUCE} | fingerprint in verify.py:65 | true`,
    ]);
  });

  it('passes the gate and says exactly what it warns of', () => {
    const { g } = judged(nightly);
    expect(g.verdict).toBe('pass');
    expect(g.reasons).toEqual([]);
    const harness = (variant: string) =>
      `sanitizer initcheck: bsr_gemm/${variant} ${BSR}: 1300 errors in the harness's own code (fingerprint in verify.py:65), not the variant's: Uninitialized __global__ memory read of size 8 bytes in ${REDUCE}`;
    expect(g.warnings.filter((w) => w.startsWith('sanitizer '))).toEqual([
      ...['memcheck', 'racecheck', 'synccheck'].map(
        (tool) =>
          `sanitizer ${tool}: bsr_gemm/torch_bsr_dense_mm ${BSR}: not checked: ${TORCH_BSR_NOT_CHECKED}`,
      ),
      harness('triton_bsr'),
      `sanitizer initcheck: bsr_gemm/torch_bsr_dense_mm ${BSR}: not checked: ${TORCH_BSR_NOT_CHECKED}`,
      harness('cuda_bsr_mma'),
      harness('cuda_bsr_wgmma'),
      `sanitizer initcheck: bsr_gemm/cuda_bsr_wgmma_ws ${BSR}: did not run to the end: initcheck was stopped after 97.1 s: the time box (100 s) ran out; it printed no ERROR SUMMARY; the output's last lines:`,
    ]);
  });

  it('renders the sanitizer table of all four tools, the findings to look at, and the Nsight Compute section', () => {
    const { rendered } = judged(nightly);
    const { comment, full } = rendered;
    expect(comment).toMatch(/^## kernelgate nightly: ✅ pass/);
    expect(comment).toContain(
      "<details><summary>compute-sanitizer: ⚠️ 0 runs with findings, 1 that did not finish, 4 not checked, 3 with findings in the harness's own code, of 32 runs over 8 variants</summary>",
    );
    const a = ATTENTION;
    expect(comment).toContain(
      [
        '| variant | case | memcheck | racecheck | synccheck | initcheck |',
        '| :- | :- | :-: | :-: | :-: | :-: |',
        `| attention/triton\\_fa2 | ${a} | ✅ 0 | ✅ 0 | ✅ 0 | ✅ 0 |`,
        `| attention/cuda\\_fa2 | ${a} | ✅ 0 | ✅ 0 | ✅ 0 | ✅ 0 |`,
        `| attention/cuda\\_fa\\_wgmma | ${a} | ✅ 0 | ✅ 0 | ✅ 0 | ✅ 0 |`,
        `| bsr\\_gemm/triton\\_bsr | ${BSR} | ✅ 0 | ✅ 0 | ✅ 0 | ⚠️ 1300 (harness) |`,
        `| bsr\\_gemm/torch\\_bsr\\_dense\\_mm | ${BSR} | ➖ not checked | ➖ not checked | ➖ not checked | ➖ not checked |`,
        `| bsr\\_gemm/cuda\\_bsr\\_mma | ${BSR} | ✅ 0 | ✅ 0 | ✅ 0 | ⚠️ 1300 (harness) |`,
        `| bsr\\_gemm/cuda\\_bsr\\_wgmma | ${BSR} | ✅ 0 | ✅ 0 | ✅ 0 | ⚠️ 1300 (harness) |`,
        `| bsr\\_gemm/cuda\\_bsr\\_wgmma\\_ws | ${BSR} | ✅ 0 | ✅ 0 | ✅ 0 | 💥 did not finish |`,
      ].join('\n'),
    );
    // The harness's findings are no reason for a failure (the GPU machine's report of that step
    // listed them under "Why the gate fails" above a pass; fixed since): they need attention.
    expect(full).not.toContain('**Why the gate fails**');
    const attention = full.slice(
      full.indexOf('**Needs attention'),
      full.indexOf('### Deep checks'),
    );
    expect(attention).toContain(
      '- 🧪 sanitizer initcheck: bsr\\_gemm/triton\\_bsr dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4: 1300 errors in the harness&#39;s own code (fingerprint in verify.py:65), not the variant&#39;s: Uninitialized \\_\\_global\\_\\_ memory read of size 8 bytes in',
    );
    expect(attention).toContain(
      '- 🧪 sanitizer initcheck: bsr\\_gemm/cuda\\_bsr\\_wgmma\\_ws dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4 did not run to the end: initcheck was stopped after 97.1 s',
    );
    // Each finding of the harness's says whose it is, in the full report.
    expect(full).toContain(
      "    by thread (27,3,0) in block (7,28,0)\n    Address 0x7f1a0d00e3d8\n    launched by fingerprint in verify.py:65 (the harness's own code)\n",
    );
    // Nsight Compute: the fold the GPU machine rendered from the ncu step, rendered again here
    // from the recorded data beside the sanitizer's.
    const gpu = deepSection(text('ncu-report.md'));
    const ncuFold = gpu.slice(gpu.indexOf('<details><summary>Nsight Compute'));
    expect(ncuFold).toContain(
      '| bsr\\_gemm/cuda\\_bsr\\_wgmma\\_ws | dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16 | void &lt;unnamed&gt;::bsr\\_wgmma\\_ws\\_kernel&lt;\\_\\_half&gt;(CUtensorMap\\_st, CUtensorMap\\_st, const int \\*, T1 \\*, int, int, int, int, int) | 0.520 | 69.7 | 74.2 | 14.1 | 52.2 | long\\_scoreboard, barrier, lg\\_throttle |',
    );
    expect(ncuFold.split('\n').filter((l) => l.startsWith('| '))).toHaveLength(12);
    expect(comment).toContain(ncuFold.trim());
    expect(full).toContain(ncuFold.trim());
  });

  it('took the times the script recorded, each step within its time box', () => {
    const times = Object.fromEntries(
      text('times.txt')
        .trim()
        .split('\n')
        .map((l) => l.split(' ') as [string, string])
        .map(([k, v]) => [k.replace(/_s$/, ''), Number(v)]),
    );
    expect(times).toEqual({
      faulty: 14.4,
      memcheck: 14.8,
      racecheck: 71.5,
      synccheck: 15.2,
      initcheck: 100.4,
      ncu: 66.9,
    });
    const script = readFileSync(join(ROOT, 'scripts/gpu-deep.sh'), 'utf8');
    for (const [step, seconds] of Object.entries(times)) {
      const box = Number(new RegExp(`\\bstep ${step} (\\d+) `).exec(script)?.[1]);
      expect(seconds, step).toBeLessThanOrEqual(box + 10);
    }
    expect(text('exits.txt').trim().split('\n')).toEqual([
      'faulty exit 1',
      'memcheck exit 0',
      'racecheck exit 0',
      'synccheck exit 0',
      'initcheck exit 0',
      'ncu exit 0',
    ]);
    // docs/scaling.md quotes them as recorded.
    const docs = readFileSync(join(ROOT, 'docs/scaling.md'), 'utf8');
    for (const [step, seconds] of Object.entries(times)) {
      expect(docs, step).toMatch(
        new RegExp(
          `\\| ${step}\\b[^\\n]* \\| ${seconds} \\| 2026-11-24 \\| H100 80GB HBM3 \\| 9d2a2bf \\|`,
        ),
      );
    }
  });
});
