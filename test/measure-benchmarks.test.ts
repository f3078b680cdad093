// The measuring run's benchmarks stage (src/measure/benchmarks.ts): kernelgate.yml's benchmarks run
// after the harness in the same job and join its results document; with the base revision checked
// out, command benchmarks run head and base alternately and are judged by their pairs; a command
// that fails is an error case and a diagnostic with its last lines; seed 000's CUTLASS output is
// explained (the arch-conditional trap, a rate far under the chip's peak). The harness is a
// stand-in here (it copies a results fixture); the benchmarks' commands run for real.
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../src/cli/index.js';
import { loadConfig } from '../src/config/index.js';
import { scriptedExec } from '../src/lib/index.js';
import type { LineExec, MeasureOptions, ProgressLog } from '../src/measure/index.js';
import { measure } from '../src/measure/index.js';
import { judge } from '../src/pipeline/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { validateResults } from '../src/results/index.js';
import { GEMM_KERNEL_YML } from './support/gemm-workspace.js';

const ENV = resolve('test/fixtures/env');
const H200_SMI = readFileSync(join(ENV, 'h200-2026-11-21/nvidia-smi-q-x.xml'), 'utf8');
const SEED_SMI = readFileSync(join(ENV, 'seed-000-h100-compat/nvidia-smi-q-x.xml'), 'utf8');
const SEED_LOG = join(ENV, 'seed-000-h100-compat/run-log.txt');
const CURRENT = 'test/fixtures/results/aa-current.json';
const BASE_SHA = 'b'.repeat(40);

/** Prints `time: X ms`, X the time it took to sleep `--ms` times the factor in slow.txt. */
const TIMER = `import pathlib, sys, time
ms = float(sys.argv[sys.argv.index("--ms") + 1])
slow = pathlib.Path("slow.txt")
factor = float(slow.read_text()) if slow.exists() else 1.0
t0 = time.perf_counter()
time.sleep(ms * factor / 1000)
print(f"time: {(time.perf_counter() - t0) * 1000:.3f} ms")
`;

/** A repository: the gemm kernel (unless `kernels` is false), bench/timer.py, kernelgate.yml. */
function workspace(benchmarks: string, opts: { kernels?: boolean; slow?: number } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'kg-measure-bench-'));
  if (opts.kernels !== false) {
    mkdirSync(join(dir, 'kernels', 'gemm'), { recursive: true });
    writeFileSync(join(dir, 'kernels', 'gemm', 'kernel.yml'), GEMM_KERNEL_YML);
  }
  mkdirSync(join(dir, 'bench'));
  writeFileSync(join(dir, 'bench', 'timer.py'), TIMER);
  if (opts.slow !== undefined) writeFileSync(join(dir, 'bench', 'slow.txt'), String(opts.slow));
  writeFileSync(join(dir, 'kernelgate.yml'), `benchmarks:\n${benchmarks}`);
  return dir;
}

const TIMER_BENCH = `  - name: sleeper
    format: command
    cwd: bench
    variants:
      sleep: python3 timer.py --ms {ms}
    cases: [{ ms: 20 }]
    repeat: 10
    metric: { regex: 'time: ([0-9.]+) ms', unit: ms }
`;

function recordingLog() {
  const lines: string[] = [];
  const log: ProgressLog & { warning(m: string): void } = {
    info: (l) => lines.push(l),
    startGroup: (n) => lines.push(`::group::${n}`),
    endGroup: () => lines.push('::endgroup::'),
    warning: (m) => lines.push(`warning: ${m}`),
  };
  return { lines, log };
}

/** A harness stand-in that writes the results fixture and says so in the log. */
const fakeHarness: LineExec = async (_cmd, args, { onLine }) => {
  onLine('[kernelgate] == gemm (1 variants, 1 cases) ==');
  copyFileSync(CURRENT, args[args.indexOf('--out') + 1]!);
  return 0;
};

async function measured(
  ws: string,
  extra: Partial<MeasureOptions> = {},
  deps: { smi?: string; harness?: LineExec } = {},
) {
  const config = loadConfig(ws);
  const { lines, log } = recordingLog();
  const exec = scriptedExec([
    { match: 'nvidia-smi -q -x', result: { stdout: deps.smi ?? H200_SMI } },
  ]);
  const run = await measure(
    { config, workspace: ws, harnessRoot: '/action', outDir: join(ws, 'out'), ...extra },
    { exec, lineExec: deps.harness ?? fakeHarness, log },
  );
  const results = validateResults(run.results, 'measured');
  return {
    config,
    results,
    lines,
    onDisk: JSON.parse(readFileSync(run.resultsPath, 'utf8')) as KernelgateResults,
  };
}

const noHarness: LineExec = async () => {
  throw new Error('the harness must not run: no kernel is selected');
};

describe('the measuring run runs kernelgate.yml benchmarks after the harness', () => {
  it('merges their cases into the one results document, beside the kernel set', async () => {
    const ws = workspace(TIMER_BENCH);
    const { config, results, lines, onDisk } = await measured(ws);
    expect(onDisk).toEqual(results);
    expect(results.kernels.map((k) => k.name)).toEqual([
      'attention',
      'bsr_gemm',
      'gemm',
      'sleeper',
    ]);
    expect(results.kernels[3]?.adapter).toEqual({
      format: 'command',
      samples: 'raw',
      work: false,
      correctness: 'none',
      paired: false,
    });
    const mine = results.cases.filter((c) => c.kernel === 'sleeper');
    expect(mine.map((c) => `${c.variant} ${c.case} ${c.status}`)).toEqual(['sleep ms=20 ok']);
    expect(mine[0]?.timing?.samples_ms).toHaveLength(10);
    expect(mine[0]?.timing?.median_ms).toBeGreaterThanOrEqual(20);
    // the harness's GPU stays the run's; the stage is timed and named
    expect(results.environment.gpu.name).toBe('NVIDIA H100 80GB HBM3');
    expect(Object.keys(results.run.stage_seconds ?? {})).toEqual(
      expect.arrayContaining(['doctor', 'build', 'harness', 'benchmarks']),
    );
    expect(results.run.harness).toBe(
      'synthetic fixture generator (test/fixtures/results/generate.mjs) + kernelgate adapters 0.1.0 (command)',
    );
    // progress on the log: the harness first, then the benchmarks' group, a line per run
    const group = lines.indexOf('::group::kernelgate benchmarks');
    expect(group).toBeGreaterThan(lines.indexOf('[kernelgate] == gemm (1 variants, 1 cases) =='));
    expect(lines[group + 1]).toBe('benchmark sleeper (command)');
    expect(lines[group + 2]).toBe('  sleeper/sleep ms=20: python3 timer.py --ms 20');
    expect(lines.filter((l) => l.startsWith('  sleeper/sleep ms=20: '))).toHaveLength(10);
    expect(lines[group + 12]).toMatch(/^benchmark sleeper: 1 case\(s\): 1 ok \(\d+\.\d s\)$/);
    expect(lines[group + 13]).toBe('::endgroup::');
    // judged beside the kernels: no check, so UNCHECKED and never PASS
    const { comparison } = judge(results, undefined, config, 'pr');
    const c = comparison.cases.find((x) => x.kernel === 'sleeper');
    expect(c?.correctness).toBe('UNCHECKED');
    expect(c?.correctnessReason).toBe(
      'not verified: command checks no results, so this case cannot PASS',
    );
  }, 60_000);

  it('a command that fails is an error case and a diagnostic naming the benchmark, the command and its last lines', async () => {
    const ws = workspace(`  - name: crasher
    format: command
    cwd: bench
    variants:
      main: >-
        python3 -c 'import sys; print("loading"); print("boom: out of memory"); sys.exit(3)'
    repeat: 3
    metric: { regex: 'time: ([0-9.]+) ms', unit: ms }
`);
    const { config, results } = await measured(ws);
    const command = `python3 -c 'import sys; print("loading"); print("boom: out of memory"); sys.exit(3)'`;
    const c = results.cases.find((x) => x.kernel === 'crasher');
    expect(c).toMatchObject({
      variant: 'main',
      case: 'default',
      status: 'error',
      reason: `${command}: exit status 3`,
      error: {
        kind: 'command',
        message: `${command}: exit status 3`,
        log_tail: 'loading\nboom: out of memory',
      },
    });
    expect(results.diagnostics.find((d) => d.code === 'adapter.command_failed')).toEqual({
      level: 'error',
      code: 'adapter.command_failed',
      message: `benchmark crasher (main default, in bench): ${command}: exit status 3. Last lines:\nloading\nboom: out of memory`,
      fix: 'run the command by hand in bench; metric must match what it prints',
      source: 'kernel:crasher',
      kernel: 'crasher',
      variant: 'main',
    });
    const { verdict } = judge(results, undefined, config, 'pr');
    expect(verdict.verdict).toBe('fail');
    expect(verdict.reasons).toContain(
      `crasher/main default: error: command: ${command}: exit status 3`,
    );
  }, 60_000);

  it('a command that prints nothing parseable is an error case too, never a silent pass', async () => {
    const ws = workspace(`  - name: mute
    format: command
    variants:
      main: >-
        echo 'elapsed: 1.5 ms'
    repeat: 2
    metric: { regex: 'time: ([0-9.]+) ms', unit: ms }
  - name: broken_gbench
    format: gbench
    run: >-
      echo '{"context": {' > out.json
    output: out.json
  - name: empty_gbench
    format: gbench
    run: >-
      echo '{"context": {}, "benchmarks": []}' > empty.json
    output: empty.json
`);
    const { results } = await measured(ws);
    const byKernel = (k: string) => results.cases.find((c) => c.kernel === k);
    expect(byKernel('mute')).toMatchObject({
      status: 'error',
      reason: "echo 'elapsed: 1.5 ms': no /time: ([0-9.]+) ms/ in its output",
    });
    expect(byKernel('broken_gbench')?.status).toBe('error');
    expect(byKernel('broken_gbench')?.reason).toMatch(
      /^echo '\{"context": \{' > out\.json: its output is not Google Benchmark JSON: out\.json:2:1: not valid JSON: /,
    );
    expect(byKernel('empty_gbench')).toMatchObject({
      status: 'error',
      reason: `echo '{"context": {}, "benchmarks": []}' > empty.json: empty.json holds no benchmark`,
    });
  }, 60_000);

  it('a repository with benchmarks and no kernels runs no harness', async () => {
    const ws = workspace(TIMER_BENCH.replace('repeat: 10', 'repeat: 3'), { kernels: false });
    const { results } = await measured(ws, {}, { harness: noHarness });
    expect(results.run.harness).toBe('kernelgate adapters 0.1.0 (command)');
    expect(results.kernels.map((k) => k.name)).toEqual(['sleeper']);
    expect(results.diagnostics.filter((d) => d.code.startsWith('harness.'))).toEqual([]);
    // no kernels: the doctor's GPU is the run's
    expect(results.environment.gpu.sku).toBe('H200');
  }, 60_000);

  it("the kernels input may name benchmarks: the harness gets only the kernels' names", async () => {
    const ws = workspace(TIMER_BENCH.replace('repeat: 10', 'repeat: 3'));
    let harnessArgs: string[] = [];
    const harness: LineExec = async (cmd, args, o) => {
      harnessArgs = args;
      return fakeHarness(cmd, args, o);
    };
    await measured(ws, { only: ['gemm', 'sleeper'] }, { harness });
    expect(harnessArgs[harnessArgs.indexOf('--only') + 1]).toBe('gemm');
    const onlyBench = await measured(ws, { only: ['sleeper'] }, { harness: noHarness });
    expect(onlyBench.results.cases.map((c) => c.kernel)).toEqual(['sleeper']);
  }, 60_000);

  it('a shard of a split run runs no benchmarks and says so', async () => {
    const ws = workspace(TIMER_BENCH);
    const { results, lines } = await measured(ws, { selectCases: async () => [] });
    expect(results.cases.some((c) => c.kernel === 'sleeper')).toBe(false);
    const message =
      "kernelgate.yml's 1 benchmark(s) (sleeper) are not run in a shard of a split run: each shard would repeat them.";
    expect(lines).toContain(message);
    expect(results.diagnostics.find((d) => d.code === 'benchmarks.not_in_shard')?.message).toBe(
      message,
    );
  });
});

describe('paired A/B through the command adapter in the measuring run', () => {
  it('runs the base revision and the head alternately (ABBA) and judges the pairs: a planted sleep is SLOWER', async () => {
    // The head's copy sleeps 3x as long (bench/slow.txt): a planted slowdown.
    const head = workspace(TIMER_BENCH, { slow: 3 });
    const base = mkdtempSync(join(tmpdir(), 'kg-measure-base-'));
    cpSync(head, base, { recursive: true });
    writeFileSync(join(base, 'bench', 'slow.txt'), '1');
    const { config, results, lines } = await measured(head, {
      base: { root: base, sha: BASE_SHA, ref: 'main' },
    });
    expect(results.run.paired_base).toEqual({
      root: base,
      git_sha: BASE_SHA,
      git_ref: 'main',
      order: 'ABBA',
    });
    const c = results.cases.find((x) => x.kernel === 'sleeper');
    expect(c?.paired).toMatchObject({ base_status: 'ok', n_pairs: 10 });
    expect(c?.paired?.log_ratios).toHaveLength(5);
    expect(results.kernels.find((k) => k.name === 'sleeper')?.adapter?.paired).toBe(true);
    // the log shows the order: head, base, base, head
    const runs = lines.filter((l) => l.startsWith('  sleeper/sleep ms=20: '));
    expect(runs.slice(0, 4)).toEqual([
      '  sleeper/sleep ms=20: python3 timer.py --ms 20',
      '  sleeper/sleep ms=20: python3 timer.py --ms 20 (base)',
      '  sleeper/sleep ms=20: python3 timer.py --ms 20 (base)',
      '  sleeper/sleep ms=20: python3 timer.py --ms 20',
    ]);
    expect(lines).toContain(
      'benchmark sleeper (command): head and base revision alternately (ABBA)',
    );
    const { comparison } = judge(results, undefined, config, 'pr');
    const judged = comparison.cases.find((x) => x.kernel === 'sleeper');
    expect(judged?.method).toBe('paired');
    expect(judged?.perf).toBe('SLOWER');
    expect(judged?.ratio).toBeGreaterThan(2);
  }, 60_000);

  it('{root} names each tree in its own arm; a benchmark the base lacks runs in the head only', async () => {
    const head = workspace(`  - name: rooted
    format: command
    variants:
      main: python3 {root}/bench/timer.py --ms 5
    repeat: 2
    metric: { regex: 'time: ([0-9.]+) ms', unit: ms }
  - name: new_one
    format: command
    cwd: bench/new
    variants:
      main: python3 ../timer.py --ms 5
    repeat: 2
    metric: { regex: 'time: ([0-9.]+) ms', unit: ms }
`);
    mkdirSync(join(head, 'bench', 'new'));
    const base = mkdtempSync(join(tmpdir(), 'kg-measure-base-'));
    cpSync(join(head, 'bench', 'timer.py'), join(base, 'bench', 'timer.py'));
    const { config, results, lines } = await measured(head, {
      base: { root: base, sha: BASE_SHA },
    });
    expect(lines).toContain(`  rooted/main default: python3 ${head}/bench/timer.py --ms 5`);
    expect(lines).toContain(`  rooted/main default: python3 ${base}/bench/timer.py --ms 5 (base)`);
    expect(results.cases.find((c) => c.kernel === 'rooted')?.paired?.base_status).toBe('ok');
    expect(lines).toContain(
      '  new_one: not paired: the base revision has no bench/new (its commands run in the head only)',
    );
    expect(results.cases.find((c) => c.kernel === 'new_one')?.paired).toBeUndefined();
    const { comparison } = judge(results, undefined, config, 'pr');
    const newOne = comparison.cases.find((c) => c.kernel === 'new_one');
    // The typed field says it (annotateAdapted reads it), the note says it in words.
    expect(newOne?.unpaired).toBe('not-timed');
    expect(newOne?.perfNote).toBe(
      'not timed against the base revision: its folder is not in the base revision; no stored baseline',
    );
    const rooted = comparison.cases.find((c) => c.kernel === 'rooted');
    expect(rooted?.method).toBe('paired');
    expect(rooted?.unpaired).toBeUndefined();
  }, 60_000);
});

describe("seed 000's CUTLASS Example 88 run as a command benchmark", () => {
  it('names the arch-conditional trap in its output and its rate far under the H100 peak', async () => {
    // The example's output as seed 000 recorded it (test/fixtures/env/seed-000-h100-compat):
    // 312 "Arch conditional MMA" errors around 0.0193 TFLOPS/s, exit status 0.
    const ws = workspace(`  - name: fmha_cutlass
    format: command
    variants:
      example: cat ${SEED_LOG}
    cases: [{ B: 1, H: 1, Q: 128, K: 128, D: 64 }]
    repeat: 3
    metric: { regex: '^\\s*(?<variant>[^:\\n]+?):\\s+(?<value>[0-9.]+) TFLOPS/s', unit: tflops }
    work: { flops: "4*B*H*Q*K*D" }
`);
    const { results } = await measured(ws, {}, { smi: SEED_SMI });
    const cases = results.cases.filter((c) => c.kernel === 'fmha_cutlass');
    expect(cases.map((c) => c.variant)).toEqual([
      'example:tma ws cooperative 128x64x64',
      'example:tma ws ping-pong 128x64x64',
    ]);
    const codes = results.diagnostics
      .filter((d) => d.kernel === 'fmha_cutlass')
      .map((d) => `${d.code} ${d.variant}`);
    expect(codes).toEqual([
      'cuda.arch_conditional_mma example',
      'benchmark.slow_path example:tma ws cooperative 128x64x64',
      'benchmark.slow_path example:tma ws ping-pong 128x64x64',
    ]);
    const slow = results.diagnostics.find((d) => d.code === 'benchmark.slow_path');
    expect(slow?.message).toBe(
      'benchmark fmha_cutlass/example:tma ws cooperative 128x64x64 B=1,H=1,Q=128,K=128,D=64 reads 0.0193 TFLOPS of H100-SXM\'s 989.4 TFLOPS bf16 peak (0.0020 %): under 0.1 % of the datasheet peak over 50 µs or more is no tuning gap but a fallback path (seed 000: CUTLASS Example 88 at 0.0193 TFLOPS on an H100, a CUDA 13 runtime on a CUDA 12.8 driver through cuda-compat, "Arch conditional MMA instruction used without targeting appropriate compute capability" in its output).',
    );
    expect(slow?.level).toBe('warning');
  }, 60_000);
});

describe('kernelgate bench (the command line) runs the same checks', () => {
  it("names seed 000's arch-conditional trap in what the benchmark printed", async () => {
    const ws = workspace(
      `  - name: fmha_cutlass
    format: command
    variants:
      example: cat ${SEED_LOG}
    cases: [{ B: 1, H: 1, Q: 128, K: 128, D: 64 }]
    repeat: 2
    metric: { regex: '^\\s*(?<variant>[^:\\n]+?):\\s+(?<value>[0-9.]+) TFLOPS/s', unit: tflops }
    work: { flops: "4*B*H*Q*K*D" }
`,
      { kernels: false },
    );
    let stderr = '';
    const io: CliIo = { stdout: () => undefined, stderr: (t) => void (stderr += t), cwd: ws };
    expect(await runCli(['bench', '--out-dir', 'out', '--out', 'report.md'], io)).toBe(0);
    expect(stderr).toContain(`fmha_cutlass/example B=1,H=1,Q=128,K=128,D=64: cat ${SEED_LOG}`);
    const results = JSON.parse(
      readFileSync(join(ws, 'out', 'results.json'), 'utf8'),
    ) as KernelgateResults;
    expect(results.diagnostics.map((d) => `${d.code} ${d.kernel}/${d.variant}`)).toEqual([
      'cuda.arch_conditional_mma fmha_cutlass/example',
    ]);
    expect(readFileSync(join(ws, 'report.md'), 'utf8')).toContain('cuda.arch\\_conditional\\_mma');
  }, 60_000);
});
