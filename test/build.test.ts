// The build stage on real nvcc 13.0 compiles of small CUDA sources (test/fixtures/cuda/), read
// back with the cuobjdump that ships in the Triton wheel of .venv, exactly as CI and users do.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildKernels,
  checkExpectations,
  parsePtxasInfo,
  parsePtxasPerformanceNotes,
  parseSass,
  shortKernelName,
  trimLog,
  type BuildOutcome,
  type BuildTarget,
} from '../src/measure/index.js';
import { actionsExec, scriptedExec, type ExecOptions } from '../src/lib/index.js';
import { describeWithVenv, RUN_VENV_TESTS, VENV_PYTHON } from './support/venv.js';
import type { BuildRecord } from '../src/results/index.js';

const FIXTURES = path.resolve('test/fixtures/cuda');
const PYTHON = VENV_PYTHON;
const COMPILE_TIMEOUT_MS = 240_000;
/** pressure_kernel<48> in local_memory.cu, as ptxas names it. */
const PRESSURE_KERNEL = '_Z15pressure_kernelILi48EEvPKfPf';

let work: string;
let kernelDir: string;
let first: BuildOutcome;
let firstLog: string[];

function targets(): BuildTarget[] {
  return [
    {
      kernel: 'gemm',
      dir: kernelDir,
      variants: [
        { name: 'torch_ref' },
        {
          name: 'wgmma',
          build: {
            sources: ['wgmma.cu'],
            expect: {
              archs: ['sm_90a'],
              sass: ['HGMMA'],
              sass_absent: ['LDL', 'STL'],
              spills: 0,
              stack_max: 0,
            },
          },
        },
        {
          name: 'mma_sync',
          build: {
            sources: ['mma_sync.cu'],
            expect: { archs: ['sm_90a'], sass: ['HMMA'], registers_max: 64 },
          },
        },
        {
          name: 'serialized',
          build: { sources: ['wgmma_serialized.cu'], expect: { sass: ['HGMMA'], spills: 0 } },
        },
      ],
    },
    {
      kernel: 'attention',
      dir: kernelDir,
      variants: [
        {
          name: 'cuda_fa2',
          build: {
            sources: ['wgmma.cu'],
            flags: ['-gencode=arch=compute_90,code=sm_90'],
            expect: { archs: ['sm_90a'], sass: ['HGMMA'] },
          },
        },
        {
          name: 'cuda_seed000',
          build: {
            sources: ['wgmma.cu'],
            flags: ['--generate-code=arch=compute_90,code=sm_90a'],
            expect: { archs: ['sm_90a'], sass: ['HGMMA'] },
          },
        },
        {
          // seed 000's CMAKE_CUDA_FLAGS, verbatim: "2x sm_90a.cubin", one of them without wgmma
          name: 'cuda_seed000_cmake',
          build: {
            sources: ['wgmma.cu'],
            flags: [
              '-lineinfo',
              '-Xptxas=-v',
              '-arch=sm_90a',
              '--generate-code=arch=compute_90,code=sm_90a',
              '--generate-code=arch=compute_90,code=compute_90',
            ],
            expect: { archs: ['sm_90a'], sass: ['HGMMA'] },
          },
        },
      ],
    },
    {
      kernel: 'bsr_gemm',
      dir: kernelDir,
      variants: [
        {
          name: 'local_memory',
          build: {
            sources: ['local_memory.cu'],
            flags: ['-gencode=arch=compute_90a,code=sm_90a', '-maxrregcount=24'],
            expect: { spills: 0, stack_max: 0, sass_absent: ['LDL'] },
          },
        },
        { name: 'broken', build: { sources: ['syntax_error.cu'] } },
      ],
    },
  ];
}

function byVariant(outcome: BuildOutcome, variant: string): BuildRecord {
  const record = outcome.records.find((r) => r.variant === variant);
  if (!record) throw new Error(`no build record for ${variant}`);
  return record;
}

function failedMessages(record: BuildRecord): string[] {
  return (record.expectations ?? []).filter((e) => !e.ok).map((e) => e.message);
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'kg-build-'));
  kernelDir = path.join(work, 'src');
  await cp(FIXTURES, kernelDir, { recursive: true });
  if (!RUN_VENV_TESTS) return; // the builds below need .venv's cuobjdump
  firstLog = [];
  first = await buildKernels(targets(), {
    exec: actionsExec(),
    cacheDir: path.join(work, 'cache'),
    env: { PATH: process.env.PATH },
    python: PYTHON,
    log: (line) => firstLog.push(line),
  });
}, COMPILE_TIMEOUT_MS);

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describeWithVenv('buildKernels on real nvcc builds', () => {
  it('builds one record per variant with a build section, in manifest order', () => {
    expect(first.records.map((r) => `${r.kernel}/${r.variant}:${r.status}`)).toEqual([
      'gemm/wgmma:ok',
      'gemm/mma_sync:ok',
      'gemm/serialized:ok',
      'attention/cuda_fa2:expectation_failed',
      'attention/cuda_seed000:expectation_failed',
      'attention/cuda_seed000_cmake:expectation_failed',
      'bsr_gemm/local_memory:expectation_failed',
      'bsr_gemm/broken:failed',
    ]);
  });

  it('finds cuobjdump in the Triton wheel and records sm_90a, resources and the SASS census', () => {
    expect(firstLog[0]).toMatch(/^build: cuobjdump .*\/triton\/backends\/nvidia\/bin\/cuobjdump$/);
    const wgmma = byVariant(first, 'wgmma');
    expect(wgmma.archs).toEqual({ sass: ['sm_90a'], ptx: [] });
    expect(wgmma.sass_census?.HGMMA).toBe(1);
    expect(wgmma.sass_census?.WARPGROUP).toBeGreaterThan(0);
    expect(wgmma.sass_census?.FFMA).toBeUndefined();
    expect(wgmma.functions).toHaveLength(1);
    expect(wgmma.functions?.[0]).toMatchObject({
      name: 'wgmma_kernel',
      arch: 'sm_90a',
      smem_bytes: 0,
      stack_bytes: 0,
      spill_store_bytes: 0,
      spill_load_bytes: 0,
    });
    expect(wgmma.functions?.[0]?.registers).toBeGreaterThan(0);
    expect(wgmma.expectations?.every((e) => e.ok)).toBe(true);
    expect(wgmma.expectations?.map((e) => e.name)).toEqual([
      'archs:sm_90a',
      'sass:HGMMA',
      'sass_absent:LDL',
      'sass_absent:STL',
      'spills',
      'stack_max',
    ]);
    expect(wgmma.library).toMatch(/\/gemm\/wgmma\/[0-9a-f]{16}\/libgemm_wgmma\.so$/);
    expect(wgmma.cached).toBe(false);
  });

  it('sees mma.sync as HMMA and never HGMMA', () => {
    const mma = byVariant(first, 'mma_sync');
    expect(mma.sass_census?.HMMA).toBe(1);
    expect(mma.sass_census?.HGMMA).toBeUndefined();
    expect(mma.status).toBe('ok');
  });

  it('rejects a compute_90/sm_90 build with the flag that fixes it', () => {
    const fa2 = byVariant(first, 'cuda_fa2');
    expect(fa2.archs).toEqual({ sass: ['sm_90'], ptx: [] });
    expect(failedMessages(fa2)).toEqual([
      'attention/cuda_fa2: no sm_90a machine code (found sm_90); wgmma/setmaxnreg need it. Build with -gencode=arch=compute_90a,code=sm_90a (not compute_90 or sm_90).',
      'attention/cuda_fa2: no HGMMA in the SASS (found instead: FFMA x32). HGMMA (wgmma) exists only in sm_90a machine code: build with -gencode=arch=compute_90a,code=sm_90a.',
    ]);
  });

  it("catches seed 000's flags: sm_90a machine code from compute_90 PTX has no HGMMA", () => {
    const seed = byVariant(first, 'cuda_seed000');
    expect(seed.archs).toEqual({ sass: ['sm_90a'], ptx: [] });
    expect(failedMessages(seed)).toEqual([
      'attention/cuda_seed000: no HGMMA in the SASS (found instead: FFMA x32). The sm_90a code was compiled from compute_90 PTX, which does not define __CUDA_ARCH_FEAT_SM90_ALL, so the wgmma path was compiled out. Build with -gencode=arch=compute_90a,code=sm_90a.',
    ]);
    const warning = first.diagnostics.find((d) => d.code === 'build.generic_ptx_for_arch_specific');
    expect(warning).toEqual({
      level: 'warning',
      code: 'build.generic_ptx_for_arch_specific',
      message:
        'attention/cuda_seed000: arch=compute_90,code=sm_90a makes sm_90a machine code from compute_90 PTX, so __CUDA_ARCH_FEAT_SM90_ALL is undefined and arch-specific paths (wgmma, setmaxnreg) are compiled out; CUTLASS kernels then abort with "Arch conditional MMA instruction used without targeting appropriate compute capability".',
      fix: 'Use -gencode=arch=compute_90a,code=sm_90a.',
      source: 'build',
      kernel: 'attention',
      variant: 'cuda_seed000',
    });
  });

  it("catches seed 000's full CMake flags: two different sm_90a copies of one kernel", () => {
    const seed = byVariant(first, 'cuda_seed000_cmake');
    expect(seed.archs).toEqual({ sass: ['sm_90a'], ptx: ['compute_90', 'compute_90a'] });
    expect(seed.sass_census?.HGMMA).toBe(1);
    expect(seed.functions?.map((f) => `${f.name}@${f.arch}`)).toEqual([
      'wgmma_kernel@sm_90a',
      'wgmma_kernel@sm_90a',
    ]);
    expect(failedMessages(seed)).toEqual([
      'attention/cuda_seed000_cmake: wgmma_kernel is embedded 2 times as sm_90a machine code and the copies differ (FFMA x32 in one, HGMMA x1 in another); the driver runs only one of them, possibly the slow one. Drop arch=compute_90,code=sm_90a and keep one -gencode per target: -gencode=arch=compute_90a,code=sm_90a.',
    ]);
    expect(seed.expectations?.map((e) => `${e.name}:${e.ok}`)).toEqual([
      'archs:sm_90a:true',
      'sass:HGMMA:true',
      'unique:wgmma_kernel@sm_90a:false',
    ]);
  });

  it('rejects spills and stack frames with the flag and the function that cause them', () => {
    const local = byVariant(first, 'local_memory');
    const functions = Object.fromEntries((local.functions ?? []).map((f) => [f.name, f]));
    expect(functions.local_array_kernel).toMatchObject({ stack_bytes: 256, spill_store_bytes: 0 });
    expect(functions[PRESSURE_KERNEL]?.registers).toBe(24);
    const spilled =
      (functions[PRESSURE_KERNEL]?.spill_store_bytes ?? 0) +
      (functions[PRESSURE_KERNEL]?.spill_load_bytes ?? 0);
    expect(spilled).toBeGreaterThan(0);
    const pressureStack = functions[PRESSURE_KERNEL]?.stack_bytes ?? 0;
    expect(failedMessages(local)).toEqual([
      `bsr_gemm/local_memory: LDL x${local.sass_census?.LDL} in the SASS (expected none); local-memory loads come from register spills or run-time-indexed local arrays. See the stack and spill bytes per function (pressure_kernel<48>: ${pressureStack} bytes stack, ${spilled} bytes spilled; local_array_kernel: 256 bytes stack, 0 bytes spilled): index local arrays only with compile-time constants, or keep them in shared memory.`,
      `bsr_gemm/local_memory: pressure_kernel<48> (sm_90a) spills ${spilled} bytes (${functions[PRESSURE_KERNEL]?.spill_store_bytes} stored, ${functions[PRESSURE_KERNEL]?.spill_load_bytes} loaded); limit 0. The flag -maxrregcount=24 caps registers at 24: raise or remove it (or use __launch_bounds__), or reduce live values (smaller tiles, fewer accumulators).`,
      `bsr_gemm/local_memory: pressure_kernel<48> (sm_90a) uses ${pressureStack} bytes of stack; local_array_kernel (sm_90a) uses 256 bytes of stack; limit 0. A stack frame comes from local arrays indexed at run time, register spills or calls that were not inlined: index arrays with compile-time constants (fully unrolled loops), keep them in shared memory, and check the spills.`,
    ]);
  });

  it("keeps the compiler's error, trimmed, and builds the others anyway", () => {
    const broken = byVariant(first, 'broken');
    expect(broken.status).toBe('failed');
    expect(broken.library).toBeUndefined();
    expect(broken.log_tail).toContain(
      'syntax_error.cu(3): error: identifier "undeclared_value" is undefined',
    );
    expect(broken.log_tail?.split('\n').length).toBeLessThanOrEqual(31);
    const diagnostic = first.diagnostics.find((d) => d.code === 'build.failed');
    expect(diagnostic?.message).toMatch(
      /^bsr_gemm\/broken: nvcc exited with 2: .*syntax_error\.cu\(3\): error: identifier "undeclared_value" is undefined$/,
    );
    expect(diagnostic).toMatchObject({
      level: 'error',
      source: 'build',
      kernel: 'bsr_gemm',
      variant: 'broken',
    });
  });

  it('turns each failed expectation into an error diagnostic with the fix apart', () => {
    const codes = first.diagnostics
      .filter((d) => d.code.startsWith('build.expect.'))
      .map((d) => `${d.variant}:${d.code}`);
    expect(codes).toEqual([
      'cuda_fa2:build.expect.archs',
      'cuda_fa2:build.expect.sass',
      'cuda_seed000:build.expect.sass',
      'cuda_seed000_cmake:build.expect.unique',
      'local_memory:build.expect.sass_absent',
      'local_memory:build.expect.spills',
      'local_memory:build.expect.stack_max',
    ]);
    const arch = first.diagnostics.find((d) => d.code === 'build.expect.archs');
    expect(arch?.message).toBe(
      'attention/cuda_fa2: no sm_90a machine code (found sm_90); wgmma/setmaxnreg need it.',
    );
    expect(arch?.fix).toBe(
      'Build with -gencode=arch=compute_90a,code=sm_90a (not compute_90 or sm_90).',
    );
  });

  it('warns when ptxas serialises the wgmmas of a kernel that otherwise builds clean', () => {
    const warnings = first.diagnostics.filter((d) => d.code === 'build.wgmma_serialized');
    expect(warnings).toEqual([
      {
        level: 'warning',
        code: 'build.wgmma_serialized',
        message:
          'gemm/serialized: ptxas C7514: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of a wgmma between start and end of the pipeline stage (1 function: serialized)',
        fix: 'ptxas makes each wgmma wait for the previous one. Usual causes: a branch around a wgmma inside the loop (peel the first or last iteration out of the loop, as kernels/attention/cuda/fa_wgmma.cu does), accumulator registers read before the wgmma.wait_group that retires them, or a call between a wgmma and its wait.',
        source: 'build',
        kernel: 'gemm',
        variant: 'serialized',
      },
    ]);
    expect(byVariant(first, 'serialized').status).toBe('ok');
  });

  it('writes builds.json with every record, for the harness', async () => {
    const written = JSON.parse(await readFile(first.buildsJsonPath, 'utf8')) as BuildRecord[];
    expect(written).toEqual(first.records);
    expect(first.buildsJsonPath).toBe(path.join(work, 'cache', 'builds.json'));
  });

  it(
    'reuses the cache on the second build and rebuilds when a local header changes',
    async () => {
      const log: string[] = [];
      const real = actionsExec();
      const calls: string[] = [];
      const recorded = {
        run: (command: string, args: readonly string[], options?: ExecOptions) => {
          calls.push([command, ...args].join(' '));
          return real.run(command, args, options);
        },
      };
      const second = await buildKernels(targets(), {
        exec: recorded,
        cacheDir: path.join(work, 'cache'),
        env: { PATH: process.env.PATH },
        python: PYTHON,
        log: (line) => log.push(line),
      });
      const built = second.records.filter((r) => r.status !== 'failed');
      expect(built.every((r) => r.cached === true)).toBe(true);
      // The toolkit's identity, then no compile and no inspection of a cached variant: the only
      // compile is the broken variant's (it has no entry, so it is compiled and fails again).
      expect(calls[0]).toBe('nvcc --version');
      expect(calls.filter((c) => /-shared|-sass|^c\+\+filt/.test(c))).toEqual([
        expect.stringMatching(/^nvcc -shared .*syntax_error\.cu$/),
      ]);
      expect(log).toContain(
        `build gemm/wgmma: cached (${byVariant(first, 'wgmma').hash}); sass sm_90a; HGMMA x1; max ${byVariant(first, 'wgmma').functions?.[0]?.registers} registers; 0 bytes spilled`,
      );
      const strip = (r: BuildRecord) => ({ ...r, cached: undefined, duration_s: undefined });
      expect(second.records.map(strip)).toEqual(first.records.map(strip));
      // A cache hit reports ptxas's notes again: the log of that build is not re-read.
      expect(second.diagnostics.filter((d) => d.code === 'build.wgmma_serialized')).toEqual(
        first.diagnostics.filter((d) => d.code === 'build.wgmma_serialized'),
      );

      await writeFile(
        path.join(kernelDir, 'wgmma_common.cuh'),
        `${await readFile(path.join(kernelDir, 'wgmma_common.cuh'), 'utf8')}// edited\n`,
      );
      const thirdLog: string[] = [];
      const third = await buildKernels(
        [{ kernel: 'gemm', dir: kernelDir, variants: [targets()[0]!.variants[1]!] }],
        {
          exec: actionsExec(),
          cacheDir: path.join(work, 'cache'),
          env: { PATH: process.env.PATH },
          python: PYTHON,
          log: (line) => thirdLog.push(line),
        },
      );
      expect(thirdLog).toContain(
        `build gemm/wgmma: not cached: source changed: wgmma_common.cuh (newest entry ${byVariant(first, 'wgmma').hash})`,
      );
      expect(third.records[0]?.cached).toBe(false);
      expect(third.records[0]?.hash).not.toBe(byVariant(first, 'wgmma').hash);
    },
    COMPILE_TIMEOUT_MS,
  );
});

describe('build stage without the tools', () => {
  it('says nvcc is missing and fails each CUDA variant without stopping', async () => {
    const exec = scriptedExec([]);
    const outcome = await buildKernels(targets(), {
      exec,
      cacheDir: path.join(work, 'none'),
      env: {},
      log: () => undefined,
    });
    expect(outcome.records.every((r) => r.status === 'failed')).toBe(true);
    expect(outcome.diagnostics[0]?.code).toBe('build.nvcc_not_found');
    // Nothing was compiled, so nothing was looked for to inspect it with.
    expect(outcome.diagnostics.map((d) => d.code)).not.toContain('build.cuobjdump_not_found');
    expect(exec.calls).toEqual(['nvcc --version', '/usr/local/cuda/bin/nvcc --version']);
  });

  it('turns an unexpected error in one variant into its failed record', async () => {
    const exec = scriptedExec([
      {
        match: 'nvcc --version',
        result: { stdout: 'Cuda compilation tools, release 13.0, V13.0.88' },
      },
    ]);
    const outcome = await buildKernels(
      [
        {
          kernel: 'gemm',
          dir: kernelDir,
          variants: [{ name: 'folder', build: { sources: ['.'] } }],
        },
      ],
      { exec, cacheDir: path.join(work, 'none'), env: {}, log: () => undefined },
    );
    expect(outcome.records).toEqual([
      expect.objectContaining({ kernel: 'gemm', variant: 'folder', status: 'failed' }),
    ]);
    expect(outcome.diagnostics.find((d) => d.code === 'build.failed')?.message).toBe(
      'gemm/folder: the build stopped: EISDIR: illegal operation on a directory, read',
    );
  });

  it('names the missing source file and where it looked', async () => {
    const outcome = await buildKernels(
      [
        {
          kernel: 'gemm',
          dir: kernelDir,
          variants: [{ name: 'lost', build: { sources: ['nope.cu'] } }],
        },
      ],
      { exec: scriptedExec([]), cacheDir: path.join(work, 'none'), env: {}, log: () => undefined },
    );
    expect(outcome.diagnostics.find((d) => d.code === 'build.failed')?.message).toBe(
      `gemm/lost: build.sources[0] "nope.cu" not found (looked for ${path.join(kernelDir, 'nope.cu')}).`,
    );
  });
});

describe('parsers', () => {
  it('reads ptxas performance notes and leaves the other info lines alone', () => {
    // Lines of nvcc 13.0 (V13.0.88) on the first fa_wgmma.cu and on a fixture, 2026-11-21.
    const log = [
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 192 by compiler to allow use of registers in GMMA in function '_Z1fv'",
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function '_ZN44_GLOBAL__N__db334923_11_fa_wgmma_cu_62f15b6b15fa_wgmma_kernelI6__halfLi64ELb1EEEv14CUtensorMap_stS2_S2_PT_iiif'",
      'ptxas info    : Used 186 registers, used 1 barriers',
      // nvcc 13.0, fa_wgmma.cu with -DKG_FA_D64_BLOCK_N=192 (2026-11-27): "for the function"
      "ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the function '_ZN44_GLOBAL__N__db334923_11_fa_wgmma_cu_62f15b6b15fa_wgmma_kernelI6__halfLi64ELb0ELi192ELi3EEEv14CUtensorMap_stS2_S2_S2_PT_iiif'",
    ].join('\n');
    expect(parsePtxasPerformanceNotes(log)).toEqual([
      {
        id: 'C7514',
        text: 'wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of a wgmma between start and end of the pipeline stage',
        function:
          '_ZN44_GLOBAL__N__db334923_11_fa_wgmma_cu_62f15b6b15fa_wgmma_kernelI6__halfLi64ELb1EEEv14CUtensorMap_stS2_S2_PT_iiif',
      },
      {
        id: 'C7512',
        text: 'wgmma.mma_async instructions are serialized due to insufficient register resources',
        function:
          '_ZN44_GLOBAL__N__db334923_11_fa_wgmma_cu_62f15b6b15fa_wgmma_kernelI6__halfLi64ELb0ELi192ELi3EEEv14CUtensorMap_stS2_S2_S2_PT_iiif',
      },
    ]);
  });

  it('reads ptxas -v lines of older toolkits that print cmem and smem', () => {
    const log = [
      "ptxas info    : Compiling entry function '_Z4gemmPf' for 'sm_80'",
      'ptxas info    : Function properties for _Z4gemmPf',
      '    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads',
      'ptxas info    : Used 168 registers, 57376 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]',
    ].join('\n');
    expect(parsePtxasInfo(log)).toEqual([
      {
        name: '_Z4gemmPf',
        arch: 'sm_80',
        registers: 168,
        smem_bytes: 57376,
        cmem_bytes: 388,
        stack_bytes: 8,
        spill_store_bytes: 4,
        spill_load_bytes: 4,
      },
    ]);
  });

  it('reads PTX-only fatbins as compute_ archs and counts predicated opcodes', () => {
    const listing = [
      'Fatbin ptx code:',
      '================',
      'arch = sm_90a',
      'Fatbin elf code:',
      '================',
      'arch = sm_80',
      '\t\tFunction : k',
      '        /*0000*/                   LDC R1, c[0x0][0x28] ;',
      '        /*0010*/              @!P0 BRA 0x70 ;',
      '        /*0020*/                   HMMA.16816.F32 R8, R8, R12, RZ ;',
      '        /*0030*/                   NOP;',
    ].join('\n');
    expect(parseSass(listing)).toEqual({
      sass: ['sm_80'],
      ptx: ['compute_90a'],
      census: { LDC: 1, BRA: 1, HMMA: 1, NOP: 1 },
      functions: [{ name: 'k', arch: 'sm_80', census: { LDC: 1, BRA: 1, HMMA: 1, NOP: 1 } }],
    });
  });

  it('says when an arch is only there as PTX', () => {
    const { expectations } = checkExpectations(
      'k/v',
      { archs: ['sm_90a'] },
      {
        functions: [],
        listing: { sass: [], ptx: ['compute_90a'], census: {}, functions: [] },
        flags: [],
      },
    );
    expect(expectations[0]?.message).toBe(
      'k/v: no sm_90a machine code (found only PTX compute_90a); wgmma/setmaxnreg need it. Build with -gencode=arch=compute_90a,code=sm_90a (not compute_90 or sm_90).',
    );
  });

  it('flags static shared memory and registers above the limits', () => {
    const fn = { name: 'attn', arch: 'sm_90a', registers: 200, smem_bytes: 57376, stack_bytes: 0 };
    const { expectations } = checkExpectations(
      'attention/v',
      { smem_max: 49152, registers_max: 168 },
      {
        functions: [fn],
        listing: undefined,
        flags: [],
      },
    );
    expect(expectations.map((e) => e.message)).toEqual([
      'attention/v: attn (sm_90a) uses 57376 bytes of static shared memory; limit 49152. Shrink the tile or the pipeline stages, or move the buffer to dynamic shared memory (extern __shared__) and raise cudaFuncAttributeMaxDynamicSharedMemorySize before launching.',
      'attention/v: attn (sm_90a) uses 200 registers; limit 168. Reduce live values per thread, or bound them with __launch_bounds__(threads, blocksPerSM) and check that it does not spill.',
    ]);
  });

  it('shortens c++filt output to the kernel name and its template arguments', () => {
    expect(
      shortKernelName(
        'void (anonymous namespace)::fa2_fwd_kernel<__nv_bfloat16, 128, false>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, int, int, int, float)',
      ),
    ).toBe('fa2_fwd_kernel<__nv_bfloat16, 128, false>');
    expect(shortKernelName('local_array_kernel')).toBe('local_array_kernel');
  });

  it('says when spilling functions are already at the register maximum', () => {
    const fn = {
      name: 'fa2',
      arch: 'sm_90a',
      registers: 255,
      stack_bytes: 8,
      spill_store_bytes: 4,
      spill_load_bytes: 4,
    };
    const { expectations } = checkExpectations(
      'attention/cuda_fa2',
      { spills: 0 },
      { functions: [fn], listing: undefined, flags: ['-gencode=arch=compute_90a,code=sm_90a'] },
    );
    expect(expectations[0]?.message).toBe(
      'attention/cuda_fa2: fa2 (sm_90a) spills 8 bytes (4 stored, 4 loaded); limit 0. They already use the 255-register maximum, so only fewer live values help: smaller tiles, fewer accumulators or fewer loads in flight per thread.',
    );
  });

  it('trims long logs from the front and says so', () => {
    const log = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const tail = trimLog(log);
    expect(tail.split('\n')[0]).toBe('[70 earlier lines cut]');
    expect(tail.endsWith('line 99')).toBe(true);
  });
});
