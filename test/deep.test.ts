// The deep checks (src/deep, docs/scaling.md): compute-sanitizer's and Nsight Compute's output
// read from hand-written fixtures in NVIDIA's documented formats (test/fixtures/deep/README.md),
// the targets, the runner against scripted tools (a missing tool, no permission to the counters),
// the gate's rule and the report's folded section.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import {
  deviceFunction,
  MAX_COMPARED,
  ncuMetricsArg,
  ncuProblem,
  ncuTargets,
  parseDeepChecks,
  parseNcuCsv,
  parseSanitizer,
  runDeep,
  sanitizerTargets,
  slowerTargets,
  summarizeNcu,
  type DeepOptions,
} from '../src/deep/index.js';
import { deepCommand, runCli } from '../src/cli/index.js';
import { compare, evaluateTiers, gate } from '../src/judge/index.js';
import { scriptedExec } from '../src/lib/index.js';
import { harnessDocument } from './support/harness-document.js';
import { renderReport } from '../src/report/index.js';
import {
  loadResults,
  readResultsText,
  type KernelgateResults,
  validateResults,
} from '../src/results/index.js';
import { PLANTED_OOB_FINDING } from './support/deep.js';

const ROOT = join(import.meta.dirname, '..');

/** `kernelgate deep ARGS` through the CLI, its exit status and what it wrote to stderr. */
async function deepCli(args: string[]) {
  let stderr = '';
  const status = await runCli(['deep', ...args], {
    stdout: () => undefined,
    stderr: (t) => (stderr += t),
    cwd: ROOT,
  });
  return { status, stderr };
}
const FIXTURES = join(ROOT, 'test/fixtures/deep');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const config = loadConfig(ROOT);

/** runDeep's options for a sanitizer check of this repository's kernels, compute-sanitizer a stand-in in `bin`. */
function sanitizerOptions(
  dir: string,
  bin: string,
  checks: DeepOptions['checks'],
  extra: Partial<DeepOptions> = {},
): DeepOptions {
  return {
    workspace: ROOT,
    harnessRoot: ROOT,
    python: 'python3',
    kernelsDir: 'kernels',
    outDir: dir,
    sanitizerPath: join(bin, 'compute-sanitizer'),
    env: { PATH: '' },
    checks,
    ...extra,
  };
}

describe('compute-sanitizer output', () => {
  it('reads memcheck as recorded on the H100: the planted write, the API errors after it, the count', () => {
    // The planted-fault module's oob_store under memcheck (deep22, test/fixtures/deep/README.md):
    // its Triton kernel oob_tail stores one element past its output (faulty_bench.py:286), then
    // every CUDA call fails with the launch failure it left.
    const r = parseSanitizer(fixture('memcheck-oob.txt'));
    expect(r.errors).toBe(5);
    expect(r.findings[0]).toEqual(PLANTED_OOB_FINDING);
    const failure = (call: string) =>
      `Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to ${call}.`;
    expect(r.findings.slice(1)).toEqual([
      { what: failure('cudaEventSynchronize'), python_frame: 'synchronize in streams.py:254' },
      { what: failure('cudaGetLastError'), python_frame: 'synchronize in streams.py:254' },
      { what: failure('cudaMalloc'), python_frame: 'context_lost in device.py:28' },
      { what: failure('cudaGetLastError'), python_frame: 'context_lost in device.py:28' },
    ]);
    // The target's own lines ([kernelgate] ...) are not the tool's.
    expect(r.firstLines.split('\n')[0]).toBe('Invalid __global__ write of size 4 bytes');
    expect(r.firstLines).not.toContain('[kernelgate]');
    // The line the tool names is the planted store.
    const module = readFileSync(
      join(ROOT, 'test/python/fixtures/kernels/faulty/faulty_bench.py'),
      'utf8',
    ).split('\n');
    expect(module[286 - 1]).toContain('mask=offs < n + 1)  # the planted bug');
  });

  it('reads a clean run as 0 errors and no finding', () => {
    expect(parseSanitizer(fixture('memcheck-clean.txt'))).toEqual({
      errors: 0,
      findings: [],
      firstLines: 'ERROR SUMMARY: 0 errors',
    });
  });

  it("reads racecheck's hazards and its own summary", () => {
    const r = parseSanitizer(fixture('racecheck-hazard.txt'));
    expect(r.errors).toBe(2);
    expect(r.findings.map((f) => [f.kernel, f.detail])).toEqual([
      [
        'sumKernel',
        'and Read access at 0x180 in raceGroupBasic.cu:25:sumKernel(int *, int *) [16 hazards]',
      ],
      [
        'bsr_wgmma_ws_kernel',
        'and Read access at bsr_wgmma_ws_kernel(const __half *, const int *, __half *)+0x2a10 in bsr_gemm.cu:342 [128 hazards]',
      ],
    ]);
  });

  it("reads synccheck's findings", () => {
    const sync = parseSanitizer(fixture('synccheck-barrier.txt'));
    expect([sync.errors, sync.findings[0]?.what, sync.findings[0]?.kernel]).toEqual([
      1,
      'Barrier error detected. Divergent thread(s) in warp',
      'myKernel',
    ]);
  });

  it('reads initcheck as recorded on the H100: the count, not the "were not printed" line', () => {
    // bsr_gemm/triton_bsr under initcheck (test/fixtures/deep/README.md): 1300 errors, 100 printed
    // (two kept in the fixture), each in PyTorch's reduce kernel under the harness's fingerprint.
    const init = parseSanitizer(fixture('initcheck-uninit.txt'));
    expect(init.errors).toBe(1300);
    expect(init.findings).toHaveLength(2);
    const at =
      'at void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<long, at::native::func_wrapper_t<long, at::native::sum_functor<long, long, long>::operator ()(at::TensorIterator &)::[lambda(long, long) (instance 1)]>, unsigned int, long, (int)4, (int)4>>(T3)+0xe0d0';
    expect(init.findings[0]).toEqual({
      what: 'Uninitialized __global__ memory read of size 8 bytes',
      // The argument list is the last parenthesised group, not the first '(' (inside the template).
      kernel: `${at.slice(3, 162)}…`,
      detail: [at, 'by thread (27,0,0) in block (7,3,0)', 'Address 0x7f2b5300e0d8'].join('\n'),
      // The innermost Python frame of the host backtrace: the harness's input fingerprint.
      python_frame: 'fingerprint in worker.py:253',
    });
    expect(deviceFunction(at)).toBe(`${at.slice(3, 162)}…`);
    expect(deviceFunction(`${at.slice(0, 150)}>(T3)+0x10`)).toBe(`${at.slice(3, 150)}>`);
    expect(init.firstLines.split('\n')[0]).toBe(
      'Uninitialized __global__ memory read of size 8 bytes',
    );
  });

  it("reads racecheck's clean summary as recorded", () => {
    expect(parseSanitizer(fixture('racecheck-clean.txt'))).toEqual({
      errors: 0,
      findings: [],
      firstLines: 'RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)',
    });
  });

  it('has no count when the tool printed no summary (the target died first)', () => {
    const r = parseSanitizer(fixture('sanitizer-unfinished.txt'));
    expect(r.errors).toBeUndefined();
    expect(r.findings).toEqual([]);
  });

  it.each([
    ['at 0x70 in memcheck_demo.cu:6:unaligned_kernel()', 'unaligned_kernel'],
    ['at unaligned_kernel()+0x70 in memcheck_demo.cu:6', 'unaligned_kernel'],
    ['at _fwd_kernel+0x1a0', '_fwd_kernel'],
    ['at void ns::k<int>(int *)+0x10 in k.cu:3', 'void ns::k<int>'],
    ['by thread (0,0,0)', undefined],
  ])('names the device function of %j', (line, name) => {
    expect(deviceFunction(line)).toBe(name);
  });
});

describe('Nsight Compute output', () => {
  it('reads the raw page: header, units, one row per launch, grouped digits', () => {
    const launches = parseNcuCsv(fixture('ncu-raw-two-launches.csv'));
    expect(launches.map((l) => l.kernel)).toEqual(['_attn_fwd', '_attn_fwd_reduce']);
    expect(launches[0]?.values['gpu__time_duration.sum']).toBe(1842016);
    expect(launches[0]?.units['gpu__time_duration.sum']).toBe('nsecond');
    // n/a is no number.
    expect(launches[1]?.values['smsp__pcsamp_warps_issue_stalled_wait']).toBeUndefined();
  });

  it('summarises the launches: durations summed, percentages weighted by duration, top stalls', () => {
    const s = summarizeNcu(parseNcuCsv(fixture('ncu-raw-two-launches.csv')));
    // 1.842016 ms and 0.157984 ms: weights 0.921008 and 0.078992.
    expect(s).toEqual({
      deviceKernel: '_attn_fwd + 1 more',
      launches: 2,
      metrics: {
        duration_ms: 2,
        sm_throughput_pct: 69.49, // 72.45 and 35.00
        tensor_pipe_pct: 56.37, // the larger of wgmma (61.20) and mma.sync (0.00)
        achieved_occupancy_pct: 21.96, // 18.70 and 60.00
        dram_throughput_pct: 26.01, // 21.37 and 80.10
      },
      // "selected" issued and "_not_issued" splits a reason: neither is a stall.
      stalls: [
        { reason: 'long_scoreboard', value: 4877 },
        { reason: 'math_pipe_throttle', value: 2518 },
        { reason: 'barrier', value: 1214 },
      ],
    });
  });

  it('summarises the raw page recorded on the H100 to what that run reported', () => {
    // attention/triton_fa2 on the headline case (ncu 2025.3.1, --print-units base): one launch,
    // grouped digits ("32,167,552" ns); this Nsight Compute recorded no gmma column, so the
    // tensor pipe is the hmma metric (52.9 %).
    const launches = parseNcuCsv(fixture('ncu-raw.csv'));
    expect(launches.map((l) => [l.kernel, l.units['gpu__time_duration.sum']])).toEqual([
      ['_attn_fwd', 'ns'],
    ]);
    const s = summarizeNcu(launches);
    expect(s).toEqual({
      deviceKernel: '_attn_fwd',
      launches: 1,
      metrics: {
        duration_ms: 32.167552,
        sm_throughput_pct: 52.72,
        tensor_pipe_pct: 52.9,
        achieved_occupancy_pct: 12.47,
        dram_throughput_pct: 5.97,
      },
      // "selected" (569,637) is issued, not a stall.
      stalls: [
        { reason: 'barrier', value: 708051 },
        { reason: 'wait', value: 583120 },
        { reason: 'mio_throttle', value: 269947 },
      ],
    });
    const recorded = loadResults(join(FIXTURES, 'ncu-results.json')).deep?.ncu?.[0];
    expect(recorded).toMatchObject({
      variant: 'triton_fa2',
      device_kernel: s.deviceKernel,
      metrics: s.metrics,
      stalls: s.stalls,
    });
  });

  it('says what is missing from a table that is not the raw page', () => {
    expect(() => parseNcuCsv('==PROF== Disconnected\n')).toThrow(
      'no "ID",... header row: this is not ncu --csv --page raw output',
    );
  });

  it('names the fix when the counters are not permitted', () => {
    expect(ncuProblem(fixture('ncu-nvgpuctrperm.txt'))).toBe(
      'ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run the job as root, or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)',
    );
  });

  it("asks for Hopper's tensor metric on Hopper only", () => {
    expect(ncuMetricsArg('9.0')).toBe(
      'gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,regex:^smsp__pcsamp_warps_issue_stalled_',
    );
    expect(ncuMetricsArg('8.9')).not.toContain('gmma');
  });
});

describe('what the deep checks run', () => {
  it('sanitizes every CUDA and Triton variant, each on its smallest case', () => {
    const targets = sanitizerTargets(config);
    expect(targets.map((t) => `${t.kernel}/${t.variant}`)).toEqual([
      'attention/triton_fa2',
      'attention/cuda_fa2',
      'attention/cuda_fa_wgmma',
      ...config.kernels
        .find((k) => k.manifest.name === 'bsr_gemm')!
        .manifest.variants.filter((v) => v.backend === 'cuda' || v.backend === 'triton')
        .map((v) => `bsr_gemm/${v.name}`),
    ]);
    const fa2 = targets.find((t) => t.variant === 'triton_fa2');
    expect(fa2?.caseId).toBe('dtype=fp16,B=2,H=3,S=77,D=64,causal=false');
  });

  it('profiles each headline case: the CUDA and Triton variants and the tier reference', () => {
    const targets = ncuTargets(config, ['attention']);
    expect(targets.map((t) => t.variant)).toEqual([
      'triton_fa2',
      'sdpa_default',
      'cuda_fa2',
      'cuda_fa_wgmma',
    ]);
    expect(new Set(targets.map((t) => t.caseId))).toEqual(
      new Set(['dtype=fp16,B=16,H=96,S=4096,D=128,causal=false']),
    );
  });

  it('reads the checks asked for, and names a bad one', () => {
    expect(parseDeepChecks('sanitizer,ncu', 'deep')).toEqual([
      'memcheck',
      'racecheck',
      'synccheck',
      'initcheck',
      'ncu',
    ]);
    expect(parseDeepChecks(' memcheck ', 'deep')).toEqual(['memcheck']);
    expect(() => parseDeepChecks('memcheck,asan', "input 'deep'")).toThrow(
      "input 'deep': unknown deep check 'asan'; expected sanitizer, ncu, ncu-slower, ncu-compare, or any of memcheck, racecheck, synccheck, initcheck",
    );
  });
});

describe('running the tools', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kg-deep-'));
  const bin = mkdtempSync(join(tmpdir(), 'kg-deep-bin-'));
  const sanitizer = join(bin, 'compute-sanitizer');
  const ncu = join(bin, 'ncu');
  writeFileSync(sanitizer, '');
  writeFileSync(ncu, '');
  const base = {
    workspace: ROOT,
    harnessRoot: ROOT,
    python: 'python3',
    kernelsDir: 'kernels',
    outDir: dir,
    only: ['attention'],
    sanitizerPath: sanitizer,
    ncuPath: ncu,
    computeCapability: '9.0',
    env: { PATH: '' },
  };

  it('says which tool is missing and how to get it, and runs nothing', async () => {
    const exec = scriptedExec([]);
    const out = await runDeep(
      config,
      { ...base, checks: ['memcheck', 'ncu'], sanitizerPath: undefined, ncuPath: undefined },
      exec,
    );
    expect(exec.calls).toEqual([]);
    expect(out.deep).toEqual({});
    expect(out.diagnostics.map((d) => [d.level, d.code, d.message])).toEqual([
      [
        'error',
        'deep.tool_missing',
        'compute-sanitizer was not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin: the sanitizer checks (memcheck, racecheck, synccheck, initcheck) did not run',
      ],
      [
        'warning',
        'deep.tool_missing',
        'ncu was not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin: the Nsight Compute summaries did not run',
      ],
    ]);
    expect(out.diagnostics[0]?.fix).toContain('cuda-sanitizer');
  });

  it('runs the sanitizer through the harness, one variant and case, and reads its findings', async () => {
    const exec = scriptedExec([
      {
        match: /--tool memcheck .* --variants triton_fa2 /,
        result: { stdout: fixture('memcheck-oob.txt'), exitCode: 1 },
      },
      { match: /--tool memcheck /, result: { stdout: fixture('memcheck-clean.txt') } },
    ]);
    const out = await runDeep(config, { ...base, checks: ['memcheck'] }, exec);
    expect(exec.calls[0]).toBe(
      `${sanitizer} --tool memcheck --target-processes all python3 ${ROOT}/python/kernelgate_launch.py kernelgate_harness --kernels kernels --out ${dir}/sanitizer/memcheck/attention-triton_fa2.json --only attention --variants triton_fa2 --case-params dtype=fp16,B=2,H=3,S=77,D=64,causal=false --no-timing --seeds 1 --gpus 1 --timeout-per-case 900`,
    );
    const runs = out.deep.sanitizer ?? [];
    const [, ...others] = sanitizerTargets(config, ['attention']).map((t) => t.variant);
    expect(others).toEqual(expect.arrayContaining(['cuda_fa2', 'cuda_fa_wgmma']));
    expect(runs.map((s) => [s.variant, s.status, s.errors])).toEqual([
      ['triton_fa2', 'findings', 5],
      // The harness wrote no results here (a scripted tool): a clean summary over nothing is no pass.
      ...others.map((v) => [v, 'error', 0]),
    ]);
    expect(runs[1]?.first_lines).toBe(
      'memcheck saw nothing of the variant: the harness wrote no results',
    );
    expect(readFileSync(join(dir, 'sanitizer/memcheck/attention-triton_fa2.log'), 'utf8')).toBe(
      fixture('memcheck-oob.txt'),
    );
  });

  it('profiles with ncu between the profiler start and stop, then reads the raw page', async () => {
    const exec = scriptedExec([
      {
        match: /--import .*attention-triton_fa[23]\.ncu-rep/,
        result: { stdout: fixture('ncu-raw.csv') },
      },
      { match: /--profile-from-start off .* --variant triton_fa[23] /, result: {} },
      {
        match: /--profile-from-start off .* --variant sdpa_default /,
        result: { stdout: fixture('ncu-nvgpuctrperm.txt') },
      },
    ]);
    const out = await runDeep(config, { ...base, checks: ['ncu'] }, exec);
    expect(exec.calls[0]).toContain(
      '--target-processes all --profile-from-start off --metrics gpu__time_duration.sum,',
    );
    expect(exec.calls[0]).toContain(
      `python3 ${ROOT}/python/kernelgate_launch.py kernelgate_harness.profile_one --kernels kernels --kernel attention --variant triton_fa2 --case-params dtype=fp16,B=16,H=96,S=4096,D=128,causal=false`,
    );
    const runs = out.deep.ncu ?? [];
    expect(runs[0]).toMatchObject({
      variant: 'triton_fa2',
      status: 'ok',
      device_kernel: '_attn_fwd',
      metrics: { duration_ms: 32.167552 },
      report: `${dir}/ncu/attention-triton_fa2.ncu-rep`,
    });
    // No permission: said once, and the other targets are not tried.
    const tried = ncuTargets(config, ['attention']).map((t) => t.variant);
    expect(runs.map((n) => [n.variant, n.status])).toEqual(
      tried
        .slice(0, tried.indexOf('sdpa_default') + 1)
        .map((v) => [v, v === 'sdpa_default' ? 'error' : 'ok']),
    );
    expect(runs.at(-1)?.variant).toBe('sdpa_default');
    expect(out.diagnostics.map((d) => d.code)).toEqual(['deep.ncu_permission']);
  });
});

describe('the recorded memcheck step (H100, deep17)', () => {
  // Each bsr_gemm variant's memcheck log as recorded, and the harness's results beside it (the
  // cases only: test/fixtures/deep/README.md), put where the run expects them.
  const RECORDED = join(FIXTURES, 'memcheck-bsr_gemm');
  const replay = (dir: string) => {
    const out = join(dir, 'sanitizer', 'memcheck');
    mkdirSync(out, { recursive: true });
    for (const f of readdirSync(RECORDED).filter((f) => f.endsWith('.json'))) {
      const { cases } = JSON.parse(readFileSync(join(RECORDED, f), 'utf8')) as {
        cases: Record<string, unknown>[];
      };
      writeFileSync(join(out, f), harnessDocument(cases));
    }
  };
  // The tool answers each run with its recorded log.
  const recordedExec = () => {
    const calls: string[] = [];
    const exec = {
      calls,
      async run(command: string, args: readonly string[]) {
        const line = [command, ...args].join(' ');
        calls.push(line);
        const variant = /--variants (\S+)/.exec(line)?.[1] ?? '';
        const log = join(RECORDED, `bsr_gemm-${variant}.log`);
        return { exitCode: 0, stdout: readFileSync(log, 'utf8'), stderr: '' };
      },
    };
    return exec;
  };

  it('reads every run; the variant the harness skipped is not checked, with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-deep-recorded-'));
    replay(dir);
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-recorded-bin-'));
    writeFileSync(join(bin, 'compute-sanitizer'), '');
    const exec = recordedExec();
    const out = await runDeep(
      config,
      sanitizerOptions(dir, bin, ['memcheck'], { only: ['bsr_gemm'] }),
      exec,
    );
    const runs = out.deep.sanitizer ?? [];
    expect(runs.map((s) => [s.variant, s.status, s.errors])).toEqual([
      ['triton_bsr', 'clean', 0],
      ['torch_bsr_dense_mm', 'skipped', 0],
      ['cuda_bsr_mma', 'clean', 0],
      ['cuda_bsr_wgmma', 'clean', 0],
      ['cuda_bsr_wgmma_ws', 'clean', 0],
    ]);
    // Recorded: "error 0" (a clean summary over a variant the harness skipped). Its only larger
    // case is 1049× the size: not tried, and said so.
    expect(runs[1]).toMatchObject({
      case: 'dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4',
      reason:
        "the harness skipped it on dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4 (torch's bsr_dense_mm needs N divisible by 16, got N=1000); its next case, dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16, is 1049× the size, past the sanitizer's limit of 8×",
    });
    expect(exec.calls.filter((c) => c.includes('torch_bsr_dense_mm'))).toHaveLength(1);
    expect(runs[0]?.first_lines).toBe('ERROR SUMMARY: 0 errors');
    const g = judged(
      withDeep(loadResults(join(ROOT, 'test/fixtures/recorded/push/results.json.gz')), out.deep),
    );
    expect(g.g.warnings).toContain(
      "sanitizer memcheck: bsr_gemm/torch_bsr_dense_mm dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4: not checked: the harness skipped it on dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4 (torch's bsr_dense_mm needs N divisible by 16, got N=1000); its next case, dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16, is 1049× the size, past the sanitizer's limit of 8×",
    );
    expect(g.g.warnings.join('\n')).not.toContain('did not run to the end');
    const { comment, full } = g.rendered;
    expect(comment).toContain(
      '<details><summary>compute-sanitizer: ⚠️ 0 runs with findings, 0 that did not finish, 1 not checked, of 5 runs over 5 variants</summary>',
    );
    expect(comment).toContain(
      '| bsr\\_gemm/torch\\_bsr\\_dense\\_mm | dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4 | ➖ not checked | | | |',
    );
    expect(comment).toContain(
      '| bsr\\_gemm/cuda\\_bsr\\_wgmma\\_ws | dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4 | ✅ 0 | | | |',
    );
    // The full report says why, fenced.
    expect(full).toContain(
      "```\nnot checked: the harness skipped it on dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4 (torch's bsr_dense_mm needs N divisible by 16, got N=1000); its next case",
    );
  });

  it('checks a variant the harness skips on its smallest case on the next case it takes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-deep-fallback-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-fallback-bin-'));
    writeFileSync(join(bin, 'compute-sanitizer'), '');
    const attention = config.kernels.find((k) => k.manifest.name === 'attention')!;
    const skipped = JSON.parse(
      readFileSync(join(RECORDED, 'bsr_gemm-torch_bsr_dense_mm.json'), 'utf8'),
    ) as { cases: Record<string, string>[] };
    // triton_fa2 skipped (as the harness records it) on fp16, taken on the next case (causal).
    const harness = (caseId: string, status: string) =>
      harnessDocument([
        {
          ...skipped.cases[0],
          kernel: 'attention',
          variant: 'triton_fa2',
          case: caseId,
          status,
          reason: 'needs a multiple of 16',
        },
      ]);
    const calls: string[] = [];
    const exec = {
      async run(command: string, args: readonly string[]) {
        calls.push([command, ...args].join(' '));
        const out = args[args.indexOf('--out') + 1] as string;
        const caseId = args[args.indexOf('--case-params') + 1] as string;
        const status = caseId.endsWith('causal=false') ? 'skipped' : 'ok';
        writeFileSync(out, harness(caseId, status));
        return { exitCode: 0, stdout: fixture('memcheck-clean.txt'), stderr: '' };
      },
    };
    const out = await runDeep(
      { ...config, kernels: [attention] },
      sanitizerOptions(dir, bin, ['memcheck'], { jobs: 1 }),
      exec,
    );
    const fa2 = out.deep.sanitizer?.find((s) => s.variant === 'triton_fa2');
    expect(fa2).toMatchObject({
      status: 'clean',
      case: 'dtype=fp16,B=2,H=3,S=77,D=64,causal=true',
      reason:
        'checked on the smallest case it takes: the harness skipped it on dtype=fp16,B=2,H=3,S=77,D=64,causal=false (needs a multiple of 16)',
    });
    expect(calls.filter((c) => c.includes('--variants triton_fa2 '))).toHaveLength(2);
    // Both results kept apart: the smallest case under the plain name, the next beside it.
    expect(
      readdirSync(join(dir, 'sanitizer', 'memcheck')).filter((f) =>
        f.startsWith('attention-triton_fa2'),
      ),
    ).toEqual([
      'attention-triton_fa2-dtype_fp16_B_2_H_3_S_77_D_64_causal_true.json',
      'attention-triton_fa2-dtype_fp16_B_2_H_3_S_77_D_64_causal_true.log',
      'attention-triton_fa2.json',
      'attention-triton_fa2.log',
    ]);
  });
});

describe("findings in the harness's own code", () => {
  // initcheck over bsr_gemm/triton_bsr as recorded: every finding launched by the harness's input
  // fingerprint (worker.py at d309bdb; the harness's modules are read from python/).
  async function initcheck(log: string, kernelsDir = 'kernels') {
    const dir = mkdtempSync(join(tmpdir(), 'kg-deep-harness-own-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-harness-own-bin-'));
    writeFileSync(join(bin, 'compute-sanitizer'), '');
    const exec = {
      async run(_command: string, args: readonly string[]) {
        const out = args[args.indexOf('--out') + 1] as string;
        const variant = args[args.indexOf('--variants') + 1] as string;
        const caseId = args[args.indexOf('--case-params') + 1] as string;
        const record = { kernel: 'bsr_gemm', variant, case: caseId, status: 'ok' };
        writeFileSync(out, harnessDocument([record]));
        const stdout = variant === 'triton_bsr' ? log : fixture('memcheck-clean.txt');
        return { exitCode: 0, stdout, stderr: '' };
      },
    };
    const out = await runDeep(
      config,
      sanitizerOptions(dir, bin, ['initcheck'], { kernelsDir, only: ['bsr_gemm'] }),
      exec,
    );
    const push = loadResults(join(ROOT, 'test/fixtures/recorded/push/results.json.gz'));
    return { run: out.deep.sanitizer?.[0], ...judged(withDeep(push, out.deep)) };
  }
  const caseId = 'dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4';

  it('are kept and reported, a warning that names the frame, not a finding of the variant', async () => {
    const { run, g, rendered } = await initcheck(fixture('initcheck-uninit.txt'));
    expect(run).toMatchObject({ variant: 'triton_bsr', status: 'findings', errors: 1300 });
    expect(run?.findings?.map((f) => [f.python_frame, f.harness])).toEqual([
      ['fingerprint in worker.py:253', true],
      ['fingerprint in worker.py:253', true],
    ]);
    expect(g.verdict).toBe('pass');
    expect(g.reasons.join('\n')).not.toContain('sanitizer');
    const warning = g.warnings.find((w) => w.startsWith('sanitizer initcheck'));
    expect(warning).toBe(
      `sanitizer initcheck: bsr_gemm/triton_bsr ${caseId}: 1300 errors in the harness's own code (fingerprint in worker.py:253), not the variant's: Uninitialized __global__ memory read of size 8 bytes in ${run?.findings?.[0]?.kernel}`,
    );
    expect(rendered.comment).toContain(
      `| bsr\\_gemm/triton\\_bsr | ${caseId} | | | | ⚠️ 1300 (harness) |`,
    );
    expect(rendered.comment).toContain(
      "compute-sanitizer: ⚠️ 0 runs with findings, 0 that did not finish, 1 with findings in the harness's own code, of 5 runs over 5 variants",
    );
    expect(rendered.full).toContain(
      "launched by fingerprint in worker.py:253 (the harness's own code)",
    );
  });

  it("are the harness's as recorded again on the H100 (deep22): verify.py's fingerprint, listed as needing attention", async () => {
    // The same findings a day later: the fingerprint had moved to verify.py (test/fixtures/deep/
    // README.md); classified here from the log by today's runner as the GPU machine did.
    const { run, g, rendered } = await initcheck(
      readFileSync(join(FIXTURES, 'deep22/initcheck-triton_bsr.txt'), 'utf8'),
    );
    const recorded = loadResults(join(FIXTURES, 'deep22/initcheck-results.json')).deep?.sanitizer;
    const gpu = recorded?.find((s) => s.variant === 'triton_bsr');
    expect(run).toMatchObject({ status: 'findings', errors: 1300 });
    expect(run?.findings).toEqual(gpu?.findings?.slice(0, 2));
    expect(run?.findings?.map((f) => [f.python_frame, f.harness])).toEqual([
      ['fingerprint in verify.py:65', true],
      ['fingerprint in verify.py:65', true],
    ]);
    expect(g.verdict).toBe('pass');
    // A warning in the report too: under "Needs attention", never under "Why the gate fails".
    const line = `- 🧪 sanitizer initcheck: bsr\\_gemm/triton\\_bsr ${caseId}: 1300 errors in the harness&#39;s own code (fingerprint in verify.py:65), not the variant&#39;s`;
    expect(rendered.full).not.toContain('**Why the gate fails**');
    expect(rendered.full).toContain(line);
    expect(rendered.full.indexOf(line)).toBeGreaterThan(rendered.full.indexOf('**Needs attention'));
  });

  it("are the variant's when a kernel file has the same name as the harness's module", async () => {
    // The tool prints a frame's file name only: worker.py under the kernels could be either.
    const kernels = mkdtempSync(join(tmpdir(), 'kg-deep-kernels-'));
    mkdirSync(join(kernels, 'bsr_gemm'));
    writeFileSync(join(kernels, 'bsr_gemm', 'worker.py'), '');
    const { run, g } = await initcheck(fixture('initcheck-uninit.txt'), kernels);
    expect(run?.findings?.map((f) => f.harness)).toEqual([undefined, undefined]);
    expect(g.verdict).toBe('fail');
  });

  /** The recorded initcheck log with its findings launched from `frame` instead of the harness's fingerprint. */
  const launchedFrom = (frame: string) =>
    initcheck(fixture('initcheck-uninit.txt').replaceAll('fingerprint in worker.py:253', frame));

  it("are the variant's when the harness replays the variant's captured graph", async () => {
    const { run, g } = await launchedFrom('check_late_work in timed_output.py:45');
    expect(run?.findings?.map((f) => f.harness)).toEqual([undefined, undefined]);
    expect(g.verdict).toBe('fail');
  });

  it("fail the gate when the variant's own module launched them", async () => {
    const { run, g } = await launchedFrom('launch in triton_bsr.py:88');
    expect(run?.findings?.map((f) => [f.python_frame, f.harness])).toEqual([
      ['launch in triton_bsr.py:88', undefined],
      ['launch in triton_bsr.py:88', undefined],
    ]);
    expect(g.verdict).toBe('fail');
    expect(g.reasons).toContain(
      `sanitizer initcheck: bsr_gemm/triton_bsr ${caseId}: 1300 errors: Uninitialized __global__ memory read of size 8 bytes in ${run?.findings?.[0]?.kernel}`,
    );
  });
});

describe("the harness's document of a sanitizer run", () => {
  it('is read through the validating reader: one the schema refuses is an error naming file, field and value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-deep-invalid-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-invalid-bin-'));
    writeFileSync(join(bin, 'compute-sanitizer'), '');
    const attention = config.kernels.find((k) => k.manifest.name === 'attention')!;
    const exec = {
      async run(_command: string, args: readonly string[]) {
        const out = args[args.indexOf('--out') + 1] as string;
        const variant = args[args.indexOf('--variants') + 1] as string;
        const caseId = args[args.indexOf('--case-params') + 1] as string;
        const status = variant === 'triton_fa2' ? 'passed' : 'ok';
        writeFileSync(
          out,
          harnessDocument([{ kernel: 'attention', variant, case: caseId, status }]),
        );
        return { exitCode: 0, stdout: fixture('memcheck-clean.txt'), stderr: '' };
      },
    };
    const out = await runDeep(
      { ...config, kernels: [attention] },
      sanitizerOptions(dir, bin, ['memcheck'], { jobs: 1 }),
      exec,
    );
    const fa2 = out.deep.sanitizer?.find((s) => s.variant === 'triton_fa2');
    const file = join(dir, 'sanitizer', 'memcheck', 'attention-triton_fa2.json');
    expect(fa2).toMatchObject({ status: 'error', errors: 0 });
    expect(fa2?.first_lines).toBe(
      `memcheck saw nothing of the variant: the harness's results cannot be read: ${file}: cases[0].status (attention/triton_fa2 ${fa2?.case}) must be one of "ok", "fail", "error", "timeout", "skipped" (got "passed")`,
    );
    const others = out.deep.sanitizer?.filter((s) => s.variant !== 'triton_fa2') ?? [];
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((s) => s.status === 'clean')).toBe(true);
  });
});

describe('the time box', () => {
  it('keeps the finished runs, stops the one in flight, and does not start the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-deep-box-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-box-bin-'));
    writeFileSync(join(bin, 'compute-sanitizer'), '');
    // Each run takes 10 s on this clock; the box ends at 15 s: one finishes, the second is stopped
    // at its limit with what it printed (initcheck's recorded findings, no summary yet).
    let now = 0;
    const limits: (number | undefined)[] = [];
    const partial =
      fixture('initcheck-uninit.txt').split('[kernelgate] bsr_gemm/triton_bsr')[0] ?? '';
    const exec = {
      async run(_command: string, args: readonly string[], options: { timeoutS?: number } = {}) {
        limits.push(options.timeoutS);
        const out = args[args.indexOf('--out') + 1] as string;
        const caseId = args[args.indexOf('--case-params') + 1] as string;
        const variant = args[args.indexOf('--variants') + 1] as string;
        if (options.timeoutS !== undefined && options.timeoutS < 10) {
          now += options.timeoutS;
          return { exitCode: 124, stdout: partial, stderr: '', timedOut: true };
        }
        now += 10;
        const record = { kernel: 'attention', variant, case: caseId, status: 'ok' };
        writeFileSync(out, harnessDocument([record]));
        return { exitCode: 0, stdout: fixture('memcheck-clean.txt'), stderr: '' };
      },
    };
    const out = await runDeep(
      config,
      sanitizerOptions(dir, bin, ['memcheck'], {
        only: ['attention'],
        jobs: 1,
        clock: () => now,
        deadline: 15,
        timeBoxS: 15,
      }),
      exec,
    );
    expect(limits).toEqual([15, 5]);
    const runs = out.deep.sanitizer ?? [];
    const variants = sanitizerTargets(config, ['attention']).map((t) => t.variant);
    expect(runs.map((s) => [s.variant, s.status])).toEqual(
      variants.map((v, i) => [v, i === 0 ? 'clean' : i === 1 ? 'error' : 'skipped']),
    );
    const last = variants.at(-1);
    expect(runs[1]?.first_lines?.split('\n')[0]).toBe(
      "memcheck was stopped after 5 s: the time box (15 s) ran out; it printed no ERROR SUMMARY; the output's last lines:",
    );
    // What it printed before the stop is kept (not counted: no summary).
    expect(runs[1]?.findings?.map((f) => f.what)).toEqual([
      'Uninitialized __global__ memory read of size 8 bytes',
      'Uninitialized __global__ memory read of size 8 bytes',
    ]);
    expect(runs.at(-1)).toMatchObject({
      status: 'skipped',
      reason: 'the time box (15 s) ran out before this run started',
    });
    const { g } = judged(
      withDeep(loadResults(join(ROOT, 'test/fixtures/recorded/push/results.json.gz')), out.deep),
    );
    expect(g.warnings).toContain(
      `sanitizer memcheck: attention/${last} dtype=fp16,B=2,H=3,S=77,D=64,causal=false: not checked: the time box (15 s) ran out before this run started`,
    );
  });

  it('stops ncu too: the targets after the box are not profiled, and said so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-deep-box-ncu-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-box-ncu-bin-'));
    writeFileSync(join(bin, 'ncu'), '');
    let now = 0;
    const exec = scriptedExec([
      { match: /--import /, result: { stdout: fixture('ncu-raw.csv') } },
      { match: /--profile-from-start off/, result: {} },
    ]);
    const timed = {
      async run(command: string, args: readonly string[], options?: { timeoutS?: number }) {
        now += 20;
        return exec.run(command, args, options);
      },
    };
    const out = await runDeep(
      config,
      {
        workspace: ROOT,
        harnessRoot: ROOT,
        python: 'python3',
        kernelsDir: 'kernels',
        outDir: dir,
        only: ['attention'],
        ncuPath: join(bin, 'ncu'),
        computeCapability: '9.0',
        env: { PATH: '' },
        checks: ['ncu'],
        clock: () => now,
        deadline: 30,
        timeBoxS: 30,
      },
      timed,
    );
    const [first, ...rest] = ncuTargets(config, ['attention']).map((t) => t.variant);
    expect(rest.length).toBeGreaterThan(2);
    expect(out.deep.ncu?.map((n) => [n.variant, n.status, n.message])).toEqual([
      [first, 'ok', undefined],
      ...rest.map((v) => [v, 'skipped', 'the time box (30 s) ran out before it']),
    ]);
    expect(exec.options[0]?.timeoutS).toBe(30);
  });
});

function withDeep(results: KernelgateResults, deep: KernelgateResults['deep']) {
  return validateResults({ ...results, deep }, 'test');
}

function judged(results: KernelgateResults, cfg = config) {
  const comparison = compare(results, undefined, cfg);
  const tiers = evaluateTiers(results, cfg);
  const g = gate(comparison, tiers, results, cfg);
  return {
    g,
    rendered: renderReport({ kind: 'nightly', results, comparison, tiers, gate: g, config: cfg }),
  };
}

describe('the gate and the nightly report', { timeout: 120_000 }, () => {
  const push = loadResults(join(ROOT, 'test/fixtures/recorded/push/results.json.gz'));
  const oob = parseSanitizer(fixture('memcheck-oob.txt'));
  const deep: KernelgateResults['deep'] = {
    sanitizer: [
      {
        tool: 'memcheck',
        kernel: 'attention',
        variant: 'triton_fa2',
        case: 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false',
        status: 'findings',
        errors: 5,
        findings: [
          { ...oob.findings[0]!, detail: '<img src=x onerror=alert(1)> ``` @everyone' },
          ...oob.findings.slice(1),
        ],
      },
      {
        tool: 'racecheck',
        kernel: 'attention',
        variant: 'triton_fa2',
        case: 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false',
        status: 'clean',
        errors: 0,
      },
      {
        tool: 'memcheck',
        kernel: 'attention',
        variant: 'cuda_fa2',
        case: 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false',
        status: 'error',
        errors: 0,
        first_lines: 'memcheck printed no ERROR SUMMARY (exit status 1); the output’s last lines:',
      },
    ],
    ncu: [
      {
        kernel: 'attention',
        variant: 'triton_fa2',
        case: 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
        status: 'ok',
        device_kernel: '_attn_fwd',
        metrics: { duration_ms: 2.5, sm_throughput_pct: 69.49, tensor_pipe_pct: 56.37 },
        stalls: [{ reason: 'long_scoreboard', value: 4877 }],
      },
    ],
  };

  it('fails the nightly on a sanitizer finding, naming tool, variant and the first finding', () => {
    const { g } = judged(withDeep(push, deep));
    const line =
      'sanitizer memcheck: attention/triton_fa2 dtype=fp16,B=2,H=3,S=77,D=64,causal=false: 5 errors: Invalid __global__ write of size 4 bytes in oob_tail';
    expect(g.verdict).toBe('fail');
    expect(g.reasons).toContain(line);
    expect(g.warnings).toContain(
      'sanitizer memcheck: attention/cuda_fa2 dtype=fp16,B=2,H=3,S=77,D=64,causal=false: did not run to the end: memcheck printed no ERROR SUMMARY (exit status 1); the output’s last lines:',
    );
    const lenient = { ...config, policy: { ...config.policy, failOnSanitizer: false } };
    const relaxed = judged(withDeep(push, deep), lenient).g;
    expect(relaxed.reasons).not.toContain(line);
    expect(relaxed.warnings).toContain(line);
  });

  it('folds the section: a row per variant and tool, each finding fenced, ncu metrics', () => {
    const { rendered } = judged(withDeep(push, deep));
    const { comment } = rendered;
    expect(comment).toMatch(
      /^## kernelgate nightly: ❌ fail: attention\/triton\\_fa2 sanitizer findings \(memcheck\)/m,
    );
    expect(comment).toContain(
      '<details><summary>compute-sanitizer: ❌ 1 run with findings, 1 that did not finish, of 3 runs over 2 variants</summary>',
    );
    expect(comment).toContain(
      [
        '| variant | case | memcheck | racecheck | synccheck | initcheck |',
        '| :- | :- | :-: | :-: | :-: | :-: |',
        '| attention/triton\\_fa2 | dtype=fp16,B=2,H=3,S=77,D=64,causal=false | ❌ 5 | ✅ 0 | | |',
        '| attention/cuda\\_fa2 | dtype=fp16,B=2,H=3,S=77,D=64,causal=false | 💥 did not finish | | | |',
      ].join('\n'),
    );
    // The tool's text is fenced with a fence longer than any backtick run in it: inert.
    expect(comment).toContain(
      '````\nInvalid __global__ write of size 4 bytes  [oob_tail]\n    <img src=x onerror=alert(1)> ``` @everyone\n',
    );
    expect(comment).toContain(
      '<details><summary>Nsight Compute: 1 run over 1 case (attention)</summary>',
    );
    expect(comment).toContain(
      '| attention/triton\\_fa2 | dtype=fp16,B=16,H=96,S=4096,D=128,causal=false | \\_attn\\_fwd | 2.500 | 69.5 | 56.4 | | | long\\_scoreboard |',
    );
    expect(comment).toContain('- 🧪 sanitizer memcheck: attention/triton\\_fa2');
  });

  it('folds the Nsight Compute summaries recorded on the H100 into the nightly report', () => {
    // The ncu step's results as recorded (deep17): ten runs over the two headline cases. The rows
    // are the ones the GPU machine rendered itself (its report.md), here from the recorded data.
    const { rendered, g } = judged(loadResults(join(FIXTURES, 'ncu-results.json')));
    expect(g.verdict).toBe('pass');
    const { comment } = rendered;
    expect(comment).toContain(
      '<details><summary>Nsight Compute: 10 runs over 2 cases (attention, bsr\\_gemm)</summary>',
    );
    expect(comment).toContain(
      [
        '| variant | case | device kernel | ms | SM % | tensor pipe % | occupancy % | DRAM % | top stalls (PC samples) |',
        '| :- | :- | :- | -: | -: | -: | -: | -: | :- |',
        '| attention/triton\\_fa2 | dtype=fp16,B=16,H=96,S=4096,D=128,causal=false | \\_attn\\_fwd | 32.168 | 52.7 | 52.9 | 12.5 | 6.0 | barrier, wait, mio\\_throttle |',
      ].join('\n'),
    );
    expect(comment).toContain(
      '| bsr\\_gemm/cuda\\_bsr\\_wgmma\\_ws | dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16 | void &lt;unnamed&gt;::bsr\\_wgmma\\_ws\\_kernel&lt;\\_\\_half&gt;(CUtensorMap\\_st, CUtensorMap\\_st, const int \\*, T1 \\*, int, int, int, int, int) | 0.528 | 68.9 | 74.3 | 14.0 | 51.5 | long\\_scoreboard, barrier, lg\\_throttle |',
    );
    expect(comment).toContain(
      '| bsr\\_gemm/cublas\\_dense | dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16 | nvjet\\_sm90\\_hsh\\_320x128\\_64x3\\_1x2\\_h\\_bz\\_coopB\\_NNT | 1.543 | 93.8 | 97.1 | 14.8 | 26.7 | warpgroup\\_arrive, long\\_scoreboard, barrier |',
    );
  });

  it('shows nothing of deep checks in a run without them', () => {
    const { rendered } = judged(push);
    expect(rendered.full).not.toContain('Deep checks');
  });
});

describe('kernelgate deep', { timeout: 120_000 }, () => {
  async function deep(exec: ReturnType<typeof scriptedExec>, ...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const status = await deepCommand(exec)(argv, {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
      cwd: ROOT,
    });
    return { status, stdout, stderr };
  }

  it('adds the findings to the results, judges them, and fails on a sanitizer finding', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kg-deep-cli-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-cli-bin-'));
    const sanitizer = join(bin, 'compute-sanitizer');
    writeFileSync(sanitizer, '');
    const exec = scriptedExec([
      {
        match: /--tool memcheck .* --variants triton_fa2 /,
        result: { stdout: fixture('memcheck-oob.txt'), exitCode: 1 },
      },
      { match: /--tool memcheck /, result: { stdout: fixture('memcheck-clean.txt') } },
    ]);
    const r = await deep(
      exec,
      ...['--checks', 'memcheck', '--only', 'attention', '--out-dir', out],
      ...[
        '--builds',
        join(out, 'none.json'),
        '--sanitizer',
        sanitizer,
        '--out',
        join(out, 'report.md'),
      ],
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      '  fail: sanitizer memcheck: attention/triton_fa2 dtype=fp16,B=2,H=3,S=77,D=64,causal=false: 5 errors: Invalid __global__ write of size 4 bytes in oob_tail',
    );
    const written = loadResults(join(out, 'results.json'));
    expect(written.run.harness).toBe('kernelgate deep');
    expect(written.deep?.sanitizer?.map((s) => s.status)).toEqual(
      sanitizerTargets(config, ['attention']).map((_, i) => (i === 0 ? 'findings' : 'error')),
    );
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('### Deep checks');
  });

  it('ncu-compare needs a paired run to compare: without --results it says so, and runs nothing', async () => {
    const r = await deepCli(['--checks', 'ncu-compare']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      '--checks ncu-compare needs --results FILE: a paired run (kernelgate run --base-sha SHA) whose moved variants ncu profiles in base and head',
    );
  });

  it("ncu-compare profiles each moved variant of a paired run in the head and in the base's checkout", async () => {
    const out = mkdtempSync(join(tmpdir(), 'kg-deep-cli-'));
    const baseRoot = mkdtempSync(join(tmpdir(), 'kg-deep-base-'));
    // H100 run 52: triton_fa2 planted 1 % slower, paired against its base on the same machine
    const recorded = JSON.parse(
      gunzipSync(
        readFileSync(join(ROOT, 'test/fixtures/recorded/paired-slow1-h100-run52/results.json.gz')),
      ).toString('utf8'),
    ) as KernelgateResults;
    const resultsPath = join(out, 'run52.json');
    writeFileSync(
      resultsPath,
      JSON.stringify({
        ...recorded,
        run: { ...recorded.run, paired_base: { ...recorded.run.paired_base, root: baseRoot } },
      }),
    );
    const exec = scriptedExec([]);
    const r = await deep(
      exec,
      ...['--checks', 'ncu-compare', '--results', resultsPath, '--out-dir', out],
      ...['--builds', join(out, 'none.json'), '--ncu', '/bin/sh', '--kind', 'pr'],
    );
    const moved = /ncu-compare: base and head of (\d+) moved variant\(s\)/.exec(r.stderr);
    expect(moved, r.stderr).not.toBeNull();
    const n = Math.min(Number(moved![1]), MAX_COMPARED);
    const profiled = exec.calls.filter((c) => c.includes('--export'));
    expect(profiled).toHaveLength(2 * n);
    expect(profiled[0]).toContain(`${out}/deep/compare/head/ncu/attention-triton_fa2`);
    expect(profiled[1]).toContain(`${out}/deep/compare/base/ncu/attention-triton_fa2`);
    expect(profiled[1]).toContain(`--kernels ${join(baseRoot, 'kernels')} --kernel attention`);
    expect(profiled[1]).toContain(`--builds ${join(out, 'deep', 'base-builds.json')}`);
    const written = loadResults(resultsPath);
    expect(written.deep?.ncu_compare?.map((c) => c.variant)[0]).toBe('triton_fa2');
  });

  it('names the missing tool and the fix, and does not crash', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kg-deep-cli-'));
    const r = await deep(
      scriptedExec([]),
      ...['--checks', 'sanitizer,ncu', '--out-dir', out, '--builds', join(out, 'none.json')],
      ...['--sanitizer', '/nonexistent/compute-sanitizer', '--ncu', '/nonexistent/ncu'],
      ...['--out', join(out, 'report.md')],
    );
    expect(r.stderr).toContain(
      "warning: compute-sanitizer was not found at /nonexistent/compute-sanitizer: the sanitizer checks (memcheck, racecheck, synccheck, initcheck) did not run (fix: install the CUDA toolkit's compute-sanitizer",
    );
    expect(r.stderr).toContain(
      'warning: ncu was not found at /nonexistent/ncu: the Nsight Compute summaries did not run (fix: install Nsight Compute',
    );
    expect(r.status).toBe(0);
    expect(loadResults(join(out, 'results.json')).diagnostics.map((d) => d.code)).toEqual(
      expect.arrayContaining(['deep.tool_missing']),
    );
  });

  it('passes --time-box on to each run as its limit, and refuses a box of nothing', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kg-deep-cli-box-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-cli-box-bin-'));
    const sanitizer = join(bin, 'compute-sanitizer');
    writeFileSync(sanitizer, '');
    const exec = scriptedExec([
      { match: /--tool memcheck /, result: { stdout: fixture('memcheck-clean.txt') } },
    ]);
    await deep(
      exec,
      ...['--checks', 'memcheck', '--only', 'attention', '--out-dir', out, '--time-box', '300'],
      ...['--builds', join(out, 'none.json'), '--sanitizer', sanitizer],
    );
    const sanitized = exec.calls
      .map((c, i) => [c, exec.options[i]?.timeoutS] as const)
      .filter(([c]) => c.startsWith(sanitizer));
    expect(sanitized).toHaveLength(sanitizerTargets(config, ['attention']).length);
    for (const [, limit] of sanitized) {
      expect(limit).toBeGreaterThan(250);
      expect(limit).toBeLessThanOrEqual(300);
    }
    const { status, stderr } = await deepCli(['--time-box', '0']);
    expect(status).toBe(2);
    expect(stderr).toContain(
      'kernelgate deep: --time-box must be a number of seconds above 0, got "0"',
    );
  });

  it('refuses an unknown check by name', async () => {
    const { status, stderr } = await deepCli(['--checks', 'asan']);
    expect(status).toBe(2);
    expect(stderr).toContain(
      "kernelgate deep: --checks: unknown deep check 'asan'; expected sanitizer, ncu, ncu-slower, ncu-compare, or any of memcheck, racecheck, synccheck, initcheck",
    );
  });
});

describe('a metric this GPU lacks', () => {
  it('is dropped once, said once, and every target profiled without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-deep-metric-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-metric-bin-'));
    const ncu = join(bin, 'ncu');
    writeFileSync(ncu, '');
    const gmma = 'sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active';
    const exec = scriptedExec([
      { match: /--import /, result: { stdout: fixture('ncu-raw.csv') } },
      {
        match: new RegExp(`--metrics \\S*${gmma.replace(/\./g, '\\.')}`),
        result: { exitCode: 1, stdout: `==ERROR== Failed to find metric ${gmma}\n` },
      },
      { match: /--profile-from-start off/, result: {} },
    ]);
    const out = await runDeep(
      config,
      {
        workspace: ROOT,
        harnessRoot: ROOT,
        python: 'python3',
        kernelsDir: 'kernels',
        outDir: dir,
        only: ['attention'],
        ncuPath: ncu,
        computeCapability: '9.0',
        env: { PATH: '' },
        checks: ['ncu'],
      },
      exec,
    );
    expect(out.deep.ncu?.map((n) => n.status)).toEqual(
      ncuTargets(config, ['attention']).map(() => 'ok'),
    );
    expect(exec.calls.filter((c) => c.includes(gmma))).toHaveLength(1);
    expect(out.diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'deep.ncu_metric_missing',
        `ncu on this GPU has no metric ${gmma}: the Nsight Compute summaries go without it`,
      ],
    ]);
  });
});

describe('ncu-slower: the cases a run is judged SLOWER in', { timeout: 120_000 }, () => {
  it('orders them by the change, the largest first', () => {
    const c = (variant: string, ratio: number) => ({
      kernel: 'k',
      variant,
      caseId: 'n=1',
      params: { n: 1 },
      ratio,
    });
    expect(
      slowerTargets([c('a', 1.05), c('b', 2.1), c('c', 1.05), c('d', 1.3)]).map((t) => t.variant),
    ).toEqual(['b', 'd', 'a', 'c']);
  });

  it('profiles the first six of a recorded slowed run through kernelgate deep --results', async () => {
    const out = mkdtempSync(join(tmpdir(), 'kg-deep-slower-'));
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-slower-bin-'));
    const ncu = join(bin, 'ncu');
    writeFileSync(ncu, '');
    const results = join(out, 'results.json');
    writeFileSync(
      results,
      readResultsText(join(ROOT, 'test/fixtures/recorded/slowed/results.json.gz')),
    );
    const baseline = join(ROOT, 'test/fixtures/recorded/push/results.json.gz');
    const slowed = compare(loadResults(results), loadResults(baseline), config).cases.filter(
      (c) => c.perf === 'SLOWER',
    );
    const exec = scriptedExec([
      { match: /--import /, result: { stdout: fixture('ncu-raw.csv') } },
      { match: /--profile-from-start off/, result: {} },
    ]);
    let stdout = '';
    const status = await deepCommand(exec)(
      [
        ...['--checks', 'ncu-slower', '--results', results, '--baseline', baseline],
        ...['--out-dir', out, '--builds', join(out, 'none.json'), '--ncu', ncu],
        ...['--out', join(out, 'report.md')],
      ],
      { stdout: (t) => (stdout += t), stderr: () => undefined, cwd: ROOT },
    );
    expect(status).toBe(0); // fail_on_slower is off in kernelgate.yml
    const profiled = exec.calls
      .filter((c) => c.includes('--profile-from-start off'))
      .map((c) => /--variant (\S+) --case-params (\S+)/.exec(c)?.slice(1).join(' '));
    const largest = [...slowed]
      .sort((a, b) => (b.ratio ?? 0) - (a.ratio ?? 0))
      .slice(0, 6)
      .map((c) => `${c.variant} ${c.caseId}`);
    expect(slowed.length).toBeGreaterThan(6);
    expect(profiled).toEqual(largest);
    expect(loadResults(results).deep?.ncu).toHaveLength(6);
    expect(stdout).toContain('kernelgate: PASS');
  });

  it('needs the run it profiles', async () => {
    const { status, stderr } = await deepCli(['--checks', 'ncu-slower']);
    expect(status).toBe(2);
    expect(stderr).toContain(
      'kernelgate deep: --checks ncu-slower needs --results FILE: the run whose SLOWER cases ncu profiles',
    );
  });
});

describe('the planted out-of-bounds write', () => {
  it('is a sanitizer target of the planted-fault module, on the case it runs', () => {
    const faulty = loadConfig(join(FIXTURES, 'faulty-config'));
    expect(sanitizerTargets(faulty).map((t) => `${t.kernel}/${t.variant} ${t.caseId}`)).toEqual([
      'faulty/library dtype=fp32,n=64',
      'faulty/oob_store dtype=fp32,n=100',
    ]);
  });
});
