// Issue 13's GPU recording: an nvbench benchmark and a CUTLASS example judged through the adapters
// beside the kernel set, on an NVIDIA H100 80GB HBM3 (700 W, driver 580.159.04, CUDA 13.0; the
// device tool's nvidia-h100-x1), 2026-11-24 01:14-01:18 UTC, working tree of 9d2a2bf (the
// command, the binaries and their caveats: test/fixtures/recorded/byob-h100/README.md), and seed
// 000's build of CUTLASS example 88 reproduced on the same machine (seed000-h100/README.md).
// Judged again here with today's configuration; the tools' real outputs parsed again by today's
// adapters.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMetric } from '../src/adapters/command.js';
import type { CommandRunner } from '../src/adapters/index.js';
import { adaptFile, runBenchmarks } from '../src/adapters/index.js';
import { fileAdapterFor } from '../src/formats/index.js';
import { loadConfig } from '../src/config/index.js';
import { scriptedExec } from '../src/lib/index.js';
import { benchmarkFindings } from '../src/measure/benchmarks.js';
import { slowPathChecks } from '../src/measure/doctor/checks-benchmarks.js';
import { diagnoseOutput } from '../src/measure/diagnose.js';
import { judge } from '../src/pipeline/index.js';
import type { CaseResult } from '../src/results/index.js';
import { loadResults, validateResults } from '../src/results/index.js';

const ROOT = join(import.meta.dirname, '..');
const DIR = join(ROOT, 'test/fixtures/recorded/byob-h100');
const SEED = join(ROOT, 'test/fixtures/recorded/seed000-h100');
const config = loadConfig(ROOT);
const results = loadResults(join(DIR, 'results.json.gz'));
const casesOf = (kernel: string) => results.cases.filter((c) => c.kernel === kernel);
const text = (file: string) => readFileSync(file, 'utf8');

const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
const FMHA_CASE = 'B=16,H=96,S=4096,D=128';
/** The FLOPs example 88 counts for the full mask, 4·B·H·Q·K·D: as our attention kernel's. */
const FMHA_FLOPS = 4 * 16 * 96 * 4096 * 4096 * 128;
const COOP = 'tma ws cooperative 128x128x128';
const PING = 'tma ws ping-pong 128x128x128';
const tflopsOf = (ms: number) => FMHA_FLOPS / (ms * 1e-3) / 1e12;

/** examples/byob/kernelgate.yml loaded as a repository's kernelgate.yml. */
function exampleConfig() {
  const root = mkdtempSync(join(tmpdir(), 'kg-recorded-byob-'));
  cpSync(join(ROOT, 'examples/byob/kernelgate.yml'), join(root, 'kernelgate.yml'));
  return { root, config: loadConfig(root) };
}

/** cutlass88.txt is the example's output and, last, the exit status the recording's shell added. */
function cutlassOutput(): string {
  const raw = text(join(DIR, 'cutlass88.txt'));
  expect(raw.trimEnd().split('\n').at(-1)).toBe('exit=0');
  return raw.replace(/^exit=0\n$/m, '');
}

describe('the recorded run: nvbench and CUTLASS example 88 beside the kernel set', () => {
  const judged = judge(results, undefined, config, 'pr');
  const byKey = new Map(
    judged.comparison.cases.map((c) => [`${c.kernel}/${c.variant} ${c.caseId}`, c]),
  );

  it('holds the kernel set and the three benchmarks in one results document, on the H100', () => {
    expect(results.kernels.map((k) => [k.name, k.adapter?.format ?? 'harness'])).toEqual([
      ['gemm', 'harness'],
      ['attention', 'harness'],
      ['nvbench_copy', 'nvbench'],
      ['nvbench_convert', 'nvbench'],
      ['cutlass_fmha', 'command'],
    ]);
    expect(results.run.harness).toBe(
      'kernelgate-harness 0.1.0 + kernelgate adapters 0.1.0 (nvbench, command)',
    );
    expect(results.environment.gpu.name).toBe('NVIDIA H100 80GB HBM3');
    expect(results.environment.driver_version).toBe('580.159.04');
    expect(results.cases).toHaveLength(33);
    expect(
      ['gemm', 'attention', 'nvbench_copy', 'nvbench_convert', 'cutlass_fmha'].map(
        (k) => casesOf(k).length,
      ),
    ).toEqual([2, 16, 9, 4, 2]);
  });

  it('judged again: the verdict the run printed, the benchmarks UNCHECKED or PASS as their tools allow', () => {
    const printed = /^kernelgate: (PASS|FAIL) \((.*)\)$/m.exec(text(join(DIR, 'run.log')));
    expect(printed?.[1]).toBe('PASS');
    expect(printed?.[2]).toBe(
      '33 cases: 20 pass, 0 fail, 0 drift, 0 error/timeout, 1 skipped; 0 slower, 0 faster, 0 same, 0 ambiguous, 32 new, 0 missing',
    );
    expect(judged.verdict.verdict).toBe('pass');
    const n = judged.verdict.counts;
    expect([n.cases, n.passed, n.unchecked, n.skipped, n.errors, n.new]).toEqual([
      33, 20, 12, 1, 0, 32,
    ]);
    // 18 harness cases and the 2 of example 88 PASS; nvbench's 12 timed states cannot.
    const verdicts = (kernel: string) =>
      judged.comparison.cases.filter((c) => c.kernel === kernel).map((c) => c.correctness);
    expect(new Set([...verdicts('gemm'), ...verdicts('attention')])).toEqual(new Set(['PASS']));
    expect(verdicts('nvbench_copy')).toEqual(Array(9).fill('UNCHECKED'));
    expect(verdicts('nvbench_convert').sort()).toEqual([
      'SKIPPED',
      'UNCHECKED',
      'UNCHECKED',
      'UNCHECKED',
    ]);
    expect(verdicts('cutlass_fmha')).toEqual(['PASS', 'PASS']);
    expect(judged.verdict.warnings).toContain(
      '12 timed case(s) carry no correctness record: UNCHECKED',
    );
  });

  it("says per nvbench case why it cannot PASS, and gives the skipped state nvbench's reason", () => {
    const copy = byKey.get('nvbench_copy/copy_sweep_grid_shape BlockSize=64,NumBlocks=64');
    expect(copy?.correctnessReason).toBe(
      'not verified: nvbench 0.1.0 checks no results, so this case cannot PASS',
    );
    const convert = byKey.get('nvbench_convert/copy_type_conversion_sweep In=I8,Out=I32');
    expect(convert?.correctnessReason).toBe(
      'not verified: nvbench 0.1.0 checks no results, so this case cannot PASS',
    );
    const skipped = byKey.get('nvbench_convert/copy_type_conversion_sweep In=I32,Out=I32');
    expect(skipped?.current?.reason).toBe('Not a conversion: InputType == OutputType.');
  });

  it("PASSES example 88's two configurations by its own check, at the rates it printed", () => {
    const cases = casesOf('cutlass_fmha');
    expect(cases.map((c) => [c.variant, c.case, c.status, c.correctness?.status])).toEqual([
      [`example88:${COOP}`, FMHA_CASE, 'ok', 'PASS'],
      [`example88:${PING}`, FMHA_CASE, 'ok', 'PASS'],
    ]);
    for (const c of cases) {
      expect(c.correctness?.message).toBe("all 5 runs passed the benchmark's own check");
      expect(c.timing?.n_samples).toBe(5);
    }
    // kernelgate's median time, back to the example's TFLOPS/s
    expect(cases.map((c) => tflopsOf(c.timing!.median_ms).toFixed(3))).toEqual([
      '615.767',
      '633.788',
    ]);
  });

  it('puts example 88 beside our attention kernels and SDPA on the same shape, same run', () => {
    const rate = (kernel: string, variant: string, caseId: string) => {
      const c = results.cases.find(
        (x) => x.kernel === kernel && x.variant === variant && x.case === caseId,
      );
      return tflopsOf(c!.timing!.median_ms);
    };
    const row = {
      sdpa_cudnn: rate('attention', 'sdpa_cudnn', HEADLINE),
      sdpa_default: rate('attention', 'sdpa_default', HEADLINE),
      cuda_fa_wgmma: rate('attention', 'cuda_fa_wgmma', HEADLINE),
      triton_fa2: rate('attention', 'triton_fa2', HEADLINE),
      example88_coop: rate('cutlass_fmha', `example88:${COOP}`, FMHA_CASE),
      example88_ping: rate('cutlass_fmha', `example88:${PING}`, FMHA_CASE),
    };
    expect(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v.toFixed(1)]))).toEqual({
      sdpa_cudnn: '640.9',
      sdpa_default: '634.4',
      cuda_fa_wgmma: '522.0',
      triton_fa2: '454.6',
      example88_coop: '615.8',
      example88_ping: '633.8',
    });
  });

  it("renders the benchmarks' sections after the kernel set's, with their notes", () => {
    // Compact tables keep a number and its unit on one line (no-break spaces): read as spaces.
    const md = judged.rendered.full.replace(/\u00a0/g, ' ');
    const at = (h: string) => md.indexOf(`<summary><b>${h}</b>: `);
    // (the summary line is HTML, where a Markdown escape would show: no backslashes)
    const order = ['gemm', 'attention', 'nvbench_copy', 'nvbench_convert', 'cutlass_fmha'];
    const places = order.map(at);
    expect(places.every((p) => p > 0)).toBe(true);
    expect([...places].sort((a, b) => a - b)).toEqual(places);
    expect(md).toContain(
      [
        '| case | variant | verdict | median ms (IQR) | TFLOPS |',
        '| :- | :- | :- | -: | -: |',
        '| B=16, H=96, S=4096, D=128 | example88:tma ws cooperative 128x128x128 | 🆕 NEW | 21.43 (0.145) | 615.8 |',
        '| | example88:tma ws ping-pong 128x128x128 | 🆕 NEW | 20.82 (0.874) | 633.8 |',
      ].join('\n'),
    );
    expect(md).toContain(
      '| BlockSize=1024, NumBlocks=1024 | copy\\_sweep\\_grid\\_shape | 🆕 NEW | 0.226 (0.000896) | 2375 |',
    );
    expect(md).toContain(
      '| BlockSize=1024, NumBlocks=1024 | copy\\_sweep\\_grid\\_shape | ❔ UNCHECKED | not verified: nvbench 0.1.0 checks no results, so this case cannot PASS |',
    );
    expect(md).toContain(
      '| In=I8, Out=I32 | copy\\_type\\_conversion\\_sweep | 🆕 NEW | 0.454 | 739 |',
    );
    expect(md).toContain(
      '| In=I8, Out=I32 | copy\\_type\\_conversion\\_sweep | ❔ UNCHECKED | not verified: nvbench 0.1.0 checks no results, so this case cannot PASS; summary only: nvbench 0.1.0 gave statistics of 441 samples, not the samples, so no interval and no paired verdict |',
    );
    expect(md).toContain(
      '| In=I32, Out=I32 | copy\\_type\\_conversion\\_sweep | ⏭️ SKIPPED | Not a conversion: InputType == OutputType. |',
    );
  });

  it("renders the benchmarks' figures as the run's own report did", () => {
    // The run's report.md (the 19-column layout of before issue 32) and today's hold the same
    // median of every benchmark case: each recorded row's variant and median ms are found again.
    const section = (md: string) =>
      md.slice(md.indexOf('#### nvbench\\_copy'), md.indexOf('### Diagnostics'));
    const recorded = section(text(join(DIR, 'report.md')))
      .split('\n')
      .filter((l) => /^\| [^:-]/.test(l) && !l.startsWith('| variant '));
    expect(recorded.length).toBeGreaterThan(10);
    const today = judged.rendered.full.replace(/\u00a0/g, ' ');
    for (const row of recorded) {
      const cells = row.split(' | ');
      const variant = (cells[0] as string).slice(2);
      const median = cells.find((c) => /^(\d+\.\d+|n\/a)$/.test(c)) as string;
      expect(today, row).toMatch(
        new RegExp(
          `\\| ${variant.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')} \\| [^\\n]*\\| ${median.replace('.', '\\.')}( \\(|\\s\\|)`,
        ),
      );
    }
  });
});

describe("the real nvbench output, parsed again by today's nvbench adapter", () => {
  const nvbench = fileAdapterFor('nvbench')!;
  const NV = join(DIR, 'nvbench');

  it('--jsonbin: every state timed from the float32 cold-launch times nvbench wrote beside the JSON', () => {
    const again = adaptFile(nvbench, join(NV, 'nvbench.json'), { kernel: 'nvbench_copy' });
    const recorded = casesOf('nvbench_copy');
    expect(again.cases.map((c) => c.case)).toEqual(recorded.map((c) => c.case));
    expect(again.cases.map((c) => c.timing?.samples_ms)).toEqual(
      recorded.map((c) => c.timing?.samples_ms),
    );
    // The samples are the .bin files' float32 seconds, in ms, file by file (state k: k.bin).
    const json = JSON.parse(text(join(NV, 'nvbench.json'))) as {
      benchmarks: {
        states: { summaries: { tag: string; data: { name: string; value: string }[] }[] }[];
      }[];
    };
    const states = json.benchmarks[0]!.states;
    expect(states).toHaveLength(9);
    expect(readdirSync(join(NV, 'nvbench.json-bin')).sort()).toEqual(
      [...Array(9).keys()].map((k) => `${k}.bin`).sort(),
    );
    states.forEach((state, k) => {
      const bin = readFileSync(join(NV, 'nvbench.json-bin', `${k}.bin`));
      const fromBin = [...Array(bin.length / 4).keys()].map((i) => bin.readFloatLE(4 * i) * 1e3);
      expect(again.cases[k]?.timing?.samples_ms).toEqual(fromBin);
      const size = state.summaries.find((s) => s.tag === 'nv/cold/sample_size')!.data[0]!.value;
      expect(again.cases[k]?.timing?.n_samples).toBe(Number(size));
    });
    // 256 MiB of int32 read and as many written, from nvbench's add_global_memory_reads/writes
    for (const c of again.cases) {
      expect(c.throughput?.gbps).toBeDefined();
      const bytes = c.throughput!.gbps! * 1e9 * c.timing!.median_ms * 1e-3;
      expect(bytes / (2 * 256 * 2 ** 20)).toBeCloseTo(1, 6);
    }
    expect(again.info.adapter).toMatchObject({ tool: 'nvbench 0.1.0', samples: 'raw' });
  });

  it('--json: nvbench summaries only, the skipped state with its reason, and the finding that says so', () => {
    const again = adaptFile(nvbench, join(NV, 'nvbench-convert.json'), {
      kernel: 'nvbench_convert',
    });
    const strip = (c: CaseResult) => ({ ...c, timing: c.timing && { ...c.timing } });
    expect(again.cases.map(strip)).toEqual(casesOf('nvbench_convert').map(strip));
    expect(again.cases.map((c) => [c.case, c.status, c.timing?.samples_ms.length])).toEqual([
      ['In=I8,Out=I32', 'ok', 0],
      ['In=I8,Out=F64', 'ok', 0],
      ['In=I32,Out=I32', 'skipped', undefined],
      ['In=I32,Out=F64', 'ok', 0],
    ]);
    expect(again.info.adapter).toMatchObject({ samples: 'summary' });
    expect(again.diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'adapter.nvbench.no_samples',
        `${join(NV, 'nvbench-convert.json')}: 3 state(s) carry nvbench's summaries only: they get no interval and no paired verdict`,
      ],
    ]);
  });

  it('without the sample files beside it, the --jsonbin output falls back to summaries and says which file it missed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-recorded-nvbench-'));
    cpSync(join(NV, 'nvbench.json'), join(dir, 'nvbench.json'));
    const again = adaptFile(nvbench, join(dir, 'nvbench.json'), { kernel: 'nvbench_copy' });
    expect(again.cases.every((c) => c.timing?.samples_ms.length === 0)).toBe(true);
    const missing = again.diagnostics.filter(
      (d) => d.code === 'adapter.nvbench.samples_unreadable',
    );
    expect(missing).toHaveLength(9);
    const file = join(dir, 'nvbench.json-bin', '0.bin');
    expect(missing[0]?.message).toBe(
      `benchmarks[0].states[0]: its sample file nvbench.json-bin/0.bin cannot be read (ENOENT: no such file or directory, open '${file}'): judged from the summaries`,
    );
  });
});

describe("example 88's real output through examples/byob/kernelgate.yml's command entry", () => {
  const { root, config: example } = exampleConfig();
  const entry = example.benchmarks.find((b) => b.name === 'cutlass_fmha')!;
  const carried = loadConfig(ROOT, { configFile: join(DIR, 'kernelgate.byob.yml') });
  const ran = carried.benchmarks.find((b) => b.name === 'cutlass_fmha')!;

  it("the recording ran the example entry's metric and check", () => {
    expect(ran.command?.metric.regex?.source).toBe(entry.command?.metric.regex?.source);
    expect(ran.command?.metric.unit).toBe('tflops');
    expect(ran.command?.check?.source).toBe(entry.command?.check?.source);
  });

  it('reads both configurations from the output and passes its check', () => {
    const output = cutlassOutput();
    expect(readMetric(output, entry.command!.metric)).toEqual(
      new Map([
        [COOP, [617.684]],
        [PING, [618.815]],
      ]),
    );
    expect(entry.command!.check!.test(output)).toBe(true);
  });

  const run = async (output: string) => {
    const runner: CommandRunner = () => Promise.resolve({ exitCode: 0, output, timedOut: false });
    return runBenchmarks(example.benchmarks, { root, only: ['cutlass_fmha'], runner });
  };

  it("as the command adapter: a PASS per configuration, its time the example's rate through 4·B·H·S·S·D", async () => {
    mkdirSync(join(root, 'build/cutlass/examples/88_hopper_fmha'), { recursive: true });
    const got = await run(cutlassOutput());
    expect(got.cases.map((c) => [c.variant, c.status, c.correctness?.status])).toEqual([
      [`example88:${COOP}`, 'ok', 'PASS'],
      [`example88:${PING}`, 'ok', 'PASS'],
    ]);
    expect(got.cases.map((c) => tflopsOf(c.timing!.median_ms).toFixed(3))).toEqual([
      '617.684',
      '618.815',
    ]);
  });

  it('FAILS the case when the same output has a configuration that failed its verification', async () => {
    const failed = cutlassOutput().replace(` [OK]  ${PING}`, `[FAIL] ${PING}`);
    expect(failed).not.toBe(cutlassOutput());
    const got = await run(failed);
    expect(got.cases.map((c) => [c.variant, c.status])).toEqual([['example88', 'fail']]);
    expect(got.cases[0]?.reason).toBe(
      String.raw`the benchmark's own check failed: its output did not match /(?<![\s\S])(?![\s\S]*\[FAIL\])[\s\S]*^ \[OK\] /`,
    );
  });
});

describe("seed 000's build reproduced on the H100: compute_90 PTX, no wgmma", () => {
  const seed = loadResults(join(SEED, 'results.json'));
  const raw = text(join(SEED, 'raw.txt'));
  const ARCH =
    '"ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting."';
  const CAUSE =
    'the sm_90a-only tensor-core path (wgmma) was compiled out: the code was compiled from compute_90 PTX, not compute_90a, so __CUDA_ARCH_FEAT_SM90_ALL was undefined and the kernel hit its arch-conditional trap. Any result it still prints comes from a fallback path and its timings are meaningless (seed 000 ran 10,000x slower).';

  it('the raw run: the trap 256 times, a launch failure, a 0 TFLOPS/s line and an abort', () => {
    const found = diagnoseOutput(raw, 'raw.txt');
    expect(found.map((d) => [d.code, d.message])).toEqual([
      ['cuda.arch_conditional_mma', `${ARCH} (seen 256 times): ${CAUSE}`],
      [
        'cuda.launch_failure',
        '"Error running the CUTLASS kernel. Last CUDA error is: unspecified launch failure" (seen once): the kernel crashed without a more precise reason; a device-side stack overflow (large local arrays, deep calls) is a common one.',
      ],
    ]);
    expect(found[0]?.fix).toBe(
      'Compile with -gencode=arch=compute_90a,code=sm_90a (CMake: CMAKE_CUDA_ARCHITECTURES=90a, and no --generate-code=arch=compute_90,code=sm_90a), then check that `cuobjdump -sass` shows HGMMA.',
    );
    expect(raw).toContain('[FAIL] tma 64x128x64                    : 0 TFLOPS/s\n');
    expect(raw.trimEnd().split('\n').at(-1)).toBe('exit=134'); // 128 + SIGABRT
  });

  it('kernelgate bench --doctor: both benchmarks ERROR, the trap named on each, the gate fails', () => {
    expect(seed.cases.map((c) => [c.kernel, c.status, c.reason])).toEqual([
      [
        'seed000_fmha',
        'error',
        '.carry/byob/88_hopper_fmha_compute90 --b=1 --h=1 --q=128 --k=128 --d=64 --iterations=1: exit status null',
      ],
      [
        'seed000_fmha_verified',
        'error',
        '.carry/byob/88_hopper_fmha_compute90 --b=1 --h=1 --q=128 --k=128 --d=64 --iterations=1 --verify: exit status null',
      ],
    ]);
    const arch = seed.diagnostics.filter((d) => d.code === 'cuda.arch_conditional_mma');
    expect(arch.map((d) => d.kernel)).toEqual(['seed000_fmha', 'seed000_fmha_verified']);
    // the doctor read the failure's last 20 lines: 16 of them the trap
    expect(arch[0]?.message).toBe(`${ARCH} (seen 16 times): ${CAUSE}`);
    // today's diagnosis of the recorded last lines is the recorded one
    for (const c of seed.cases) {
      const again = diagnoseOutput(c.error!.log_tail!, {
        source: `kernel:${c.kernel}`,
        kernel: c.kernel,
        variant: c.variant,
      });
      const recorded = seed.diagnostics.filter(
        (d) => d.kernel === c.kernel && d.code.startsWith('cuda.'),
      );
      expect(again).toEqual(recorded);
    }
    const judgedSeed = judge(seed, undefined, config, 'pr');
    expect(judgedSeed.verdict.verdict).toBe('fail');
    expect(/^kernelgate: (PASS|FAIL)/m.exec(text(join(SEED, 'bench.log')))?.[1]).toBe('FAIL');
    expect(text(join(SEED, 'bench.log')).trimEnd().split('\n').at(-1)).toBe('exit=1');
    expect(judgedSeed.rendered.full).toContain(
      '- ❌ cuda.arch\\_conditional\\_mma on 2 cases of seed000\\_fmha/example88, seed000\\_fmha\\_verified/example88.',
    );
  });

  it("today's command adapter, given the same output and death, names the signal", async () => {
    // What the recording's runs printed (raw.txt without the shell's exit line) and how they
    // ended: Node reported exit status null, the binary having died of SIGABRT (exit=134 above).
    const output = raw.replace(/^exit=134\n$/m, '');
    const root = mkdtempSync(join(tmpdir(), 'kg-recorded-seed000-'));
    const seedConfig = loadConfig(root, { configFile: join(SEED, 'kernelgate.seed000.yml') });
    const runner: CommandRunner = () =>
      Promise.resolve({ exitCode: null, signal: 'SIGABRT', output, timedOut: false });
    const again = await runBenchmarks(seedConfig.benchmarks, {
      root,
      runner,
      environment: seed.environment,
      findings: (ran, chosen) =>
        benchmarkFindings(ran, chosen, seed.environment, root, scriptedExec([])),
    });
    expect(again.cases.map((c) => [c.kernel, c.status, c.reason])).toEqual([
      [
        'seed000_fmha',
        'error',
        '.carry/byob/88_hopper_fmha_compute90 --b=1 --h=1 --q=128 --k=128 --d=64 --iterations=1: killed by signal SIGABRT',
      ],
      [
        'seed000_fmha_verified',
        'error',
        '.carry/byob/88_hopper_fmha_compute90 --b=1 --h=1 --q=128 --k=128 --d=64 --iterations=1 --verify: killed by signal SIGABRT',
      ],
    ]);
    // the same findings as the recording's, from the same last 20 lines
    const codes = (d: { code: string; kernel?: string }[]) =>
      d.filter((x) => x.code.startsWith('cuda.')).map((x) => `${x.kernel} ${x.code}`);
    expect(codes(again.diagnostics)).toEqual(codes(seed.diagnostics));
    expect(codes(again.diagnostics)).toEqual([
      'seed000_fmha cuda.arch_conditional_mma',
      'seed000_fmha cuda.launch_failure',
      'seed000_fmha_verified cuda.arch_conditional_mma',
      'seed000_fmha_verified cuda.launch_failure',
    ]);
    expect(again.diagnostics.find((d) => d.code === 'cuda.arch_conditional_mma')?.message).toBe(
      `${ARCH} (seen 16 times): ${CAUSE}`,
    );
  });

  it('had it exited 0, its "0 TFLOPS/s" line would be an ERROR, not an infinite time', async () => {
    // Seed 000's team saw exit 0 through cuda-compat; the same output read as a success here.
    const output = raw.replace(/^exit=134\n$/m, '');
    const root = mkdtempSync(join(tmpdir(), 'kg-recorded-seed000-'));
    const seedConfig = loadConfig(root, { configFile: join(SEED, 'kernelgate.seed000.yml') });
    const runner: CommandRunner = () => Promise.resolve({ exitCode: 0, output, timedOut: false });
    const again = await runBenchmarks(seedConfig.benchmarks, { root, runner });
    expect(again.cases.map((c) => [c.kernel, c.variant, c.status, c.reason])).toEqual([
      [
        'seed000_fmha',
        'example88',
        'error',
        '.carry/byob/88_hopper_fmha_compute90 --b=1 --h=1 --q=128 --k=128 --d=64 --iterations=1: it printed a rate of 0 tflops for tma 64x128x64: a rate must be above zero to be timed',
      ],
      [
        'seed000_fmha_verified',
        'example88',
        'fail',
        String.raw`the benchmark's own check failed: its output did not match /(?<![\s\S])(?![\s\S]*\[FAIL\])[\s\S]*^ \[OK\] /`,
      ],
    ]);
    // one valid results document: no infinite time in it
    expect(() => validateResults(JSON.parse(JSON.stringify(again)), 'replayed')).not.toThrow();
  });

  it('no slow path to flag on this driver: the binary aborted instead of printing a slow rate', () => {
    // Seed 000's 0.0193 TFLOPS came through cuda-compat on a CUDA 12.8 driver; on 580.159.04
    // (CUDA 13.0, the binary's own runtime) the trap aborts the process, so no case is timed,
    // and the runtime check has nothing to say either.
    expect(seed.environment.driver_cuda_version).toBe('13.0');
    expect(seed.cases.filter((c) => c.status === 'ok')).toEqual([]);
    expect(slowPathChecks(seed, ['seed000_fmha', 'seed000_fmha_verified'], config)).toEqual([]);
    expect(seed.diagnostics.filter((d) => d.code.startsWith('benchmark.'))).toEqual([]);
  });
});
