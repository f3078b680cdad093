// The build cache with a stand-in toolchain: what a warm build runs (the commands asked of the
// injected Exec), that its records are the cold build's, that the base revision's copy of the same
// sources is taken from the same entries, and the line that says why an entry was not reused.
// No real compiler here (test/build.test.ts has those); nothing depends on the CPU's speed.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildKernels,
  runDoctor,
  type BuildOutcome,
  type BuildTarget,
} from '../src/measure/index.js';
import { NOT_FOUND_EXIT_CODE, type Exec, type ExecOptions } from '../src/lib/index.js';
import type { BuildRecord } from '../src/results/index.js';

const V48 = 'nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.48';
const V88 = 'nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88';
const KERNEL = '_Z6kernelPf';

interface FakeToolchain extends Exec {
  calls: string[];
}

/**
 * nvcc and cuobjdump as far as the build stage sees them: `nvcc ... -o LIB SOURCES` writes LIB
 * (bytes from the sources and flags) and prints ptxas -v lines whose register count is the
 * source's `// regs: N`; `cuobjdump -sass LIB` lists one sm_90a function with one HGMMA.
 */
function fakeToolchain(options: { version?: string; cuobjdump?: boolean } = {}): FakeToolchain {
  const calls: string[] = [];
  const ok = (stdout: string) => ({ exitCode: 0, stdout, stderr: '' });
  const missing = (command: string) => ({
    exitCode: NOT_FOUND_EXIT_CODE,
    stdout: '',
    stderr: `${command}: not found`,
  });
  return {
    calls,
    async run(command: string, args: readonly string[], given: ExecOptions = {}) {
      calls.push([command, ...args].join(' '));
      if (command === 'nvcc' && args[0] === '--version') return ok(options.version ?? V88);
      if (command === 'nvcc' && args.includes('-o')) {
        const library = args[args.indexOf('-o') + 1] as string;
        const sources = args.filter((a) => a.endsWith('.cu'));
        const text = (
          await Promise.all(sources.map((s) => readFile(path.resolve(given.cwd ?? '.', s), 'utf8')))
        ).join('\n');
        await writeFile(library, `fake library\n${args.join(' ')}\n${text}`);
        const registers = /\/\/ regs: (\d+)/.exec(text)?.[1] ?? '32';
        return ok(
          [
            `ptxas info    : Compiling entry function '${KERNEL}' for 'sm_90a'`,
            `ptxas info    : Function properties for ${KERNEL}`,
            '    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads',
            `ptxas info    : Used ${registers} registers, used 1 barriers`,
          ].join('\n'),
        );
      }
      if (command === 'cuobjdump' && options.cuobjdump !== false) {
        if (args[0] === '--version') return ok('cuobjdump: NVIDIA (R) CUDA cuobjdump\nV13.0.88');
        return ok(
          [
            'Fatbin elf code:',
            '================',
            'arch = sm_90a',
            '',
            `\t\tFunction : ${KERNEL}`,
            '        /*0000*/                   LDC R1, c[0x0][0x28] ;',
            '        /*0010*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ ;',
            '        /*0020*/                   EXIT ;',
          ].join('\n'),
        );
      }
      if (command === 'c++filt') return ok('kernel(float*)');
      return missing(command);
    },
  };
}

let work: string;
let kernelDir: string;
let cacheDir: string;

beforeEach(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'kg-build-cache-'));
  kernelDir = path.join(work, 'head', 'kernels', 'gemm');
  cacheDir = path.join(work, 'cache');
  await mkdir(kernelDir, { recursive: true });
  await writeFile(path.join(kernelDir, 'fake.cu'), '#include "fake.cuh"\n// regs: 40\n');
  await writeFile(path.join(kernelDir, 'fake.cuh'), '// a local header\n');
});

afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

function targets(
  dir = kernelDir,
  build: NonNullable<BuildTarget['variants'][number]['build']> = {
    sources: ['fake.cu'],
    expect: { archs: ['sm_90a'], sass: ['HGMMA'], spills: 0, registers_max: 64 },
  },
): BuildTarget[] {
  return [{ kernel: 'gemm', dir, variants: [{ name: 'cublas' }, { name: 'fake', build }] }];
}

async function build(
  exec: Exec,
  log: string[] = [],
  target = targets(),
  label = '',
): Promise<BuildOutcome> {
  return buildKernels(target, {
    exec,
    cacheDir,
    env: {},
    log: (line) => log.push(`${label}${line}`),
  });
}

/** A record less what differs by design between a cold build and a warm one. */
const facts = (r: BuildRecord) => ({ ...r, cached: undefined, duration_s: undefined });
const compiles = (exec: FakeToolchain) => exec.calls.filter((c) => c.startsWith('nvcc -shared'));

describe('a warm build', () => {
  it('runs nvcc --version and nothing else, and gives the cold build records', async () => {
    const coldExec = fakeToolchain();
    const cold = await build(coldExec);
    expect(coldExec.calls.map((c) => c.split(' ').slice(0, 2).join(' '))).toEqual([
      'nvcc --version',
      'cuobjdump --version',
      'nvcc -shared',
      'cuobjdump -sass',
      'c++filt _Z6kernelPf',
    ]);
    const record = cold.records[0] as BuildRecord;
    expect(record).toMatchObject({ status: 'ok', cached: false, archs: { sass: ['sm_90a'] } });
    expect(record.functions?.[0]?.registers).toBe(40);

    const warmExec = fakeToolchain();
    const log: string[] = [];
    const warm = await build(warmExec, log);
    expect(warmExec.calls).toEqual(['nvcc --version']);
    expect(warm.records.map(facts)).toEqual(cold.records.map(facts));
    expect(warm.records[0]?.cached).toBe(true);
    expect(warm.diagnostics).toEqual(cold.diagnostics);
    expect(log).toEqual([
      `build gemm/fake: cached (${record.hash}); sass sm_90a; HGMMA x1; max 40 registers; 0 bytes spilled`,
    ]);
  });

  it("takes the base revision's identical variants from the same entries, asking no tool again", async () => {
    const exec = fakeToolchain();
    const head = await build(exec);
    const baseDir = path.join(work, 'base', 'kernels', 'gemm');
    await cp(kernelDir, baseDir, { recursive: true });
    const before = exec.calls.length;
    const log: string[] = [];
    const base = await build(exec, log, targets(baseDir), 'base: ');
    expect(exec.calls.slice(before)).toEqual([]);
    expect(base.records.map((r) => [r.hash, r.library, r.cached])).toEqual(
      head.records.map((r) => [r.hash, r.library, true]),
    );
    expect(log[0]).toMatch(/^base: build gemm\/fake: cached \([0-9a-f]{16}\); sass sm_90a/);
  });

  it("asks nvcc --version once in a run: the doctor's answer is the build's", async () => {
    await build(fakeToolchain());
    const exec = fakeToolchain();
    await runDoctor({ exec, env: {}, readFile: async () => undefined, expectGpu: false });
    const warm = await build(exec);
    expect(warm.records[0]?.cached).toBe(true);
    expect(exec.calls.filter((c) => c.includes('nvcc'))).toEqual(['nvcc --version']);
  });

  it('checks a changed expect against the cached facts, without rebuilding', async () => {
    await build(fakeToolchain());
    const exec = fakeToolchain();
    const tighter = await build(
      exec,
      [],
      targets(kernelDir, { sources: ['fake.cu'], expect: { registers_max: 32, sass: ['HMMA'] } }),
    );
    expect(exec.calls).toEqual(['nvcc --version']);
    expect(tighter.records[0]?.status).toBe('expectation_failed');
    expect(tighter.records[0]?.expectations?.map((e) => `${e.name}:${e.ok}`)).toEqual([
      'sass:HMMA:false',
      'registers_max:false',
    ]);
  });
});

describe('a cache miss says why', () => {
  it('on the first build: no entry', async () => {
    const log: string[] = [];
    await build(fakeToolchain(), log);
    expect(log).toContain(
      `build gemm/fake: not cached: no entry in ${path.join(cacheDir, 'gemm', 'fake')}`,
    );
  });

  it('when a source or a header it includes changed', async () => {
    const first = await build(fakeToolchain());
    await writeFile(path.join(kernelDir, 'fake.cu'), '#include "fake.cuh"\n// regs: 48\n');
    const exec = fakeToolchain();
    const log: string[] = [];
    const second = await build(exec, log);
    expect(log).toContain(
      `build gemm/fake: not cached: source changed: fake.cu (newest entry ${first.records[0]?.hash})`,
    );
    expect(compiles(exec)).toHaveLength(1);
    expect(second.records[0]?.functions?.[0]?.registers).toBe(48);

    await writeFile(path.join(kernelDir, 'fake.cuh'), '// a local header, edited\n');
    const again: string[] = [];
    await build(fakeToolchain(), again);
    expect(again).toContain(
      `build gemm/fake: not cached: source changed: fake.cuh (newest entry ${second.records[0]?.hash})`,
    );
  });

  it('when a flag changed', async () => {
    const first = await build(fakeToolchain());
    const log: string[] = [];
    await build(
      fakeToolchain(),
      log,
      targets(kernelDir, {
        sources: ['fake.cu'],
        flags: ['-gencode=arch=compute_90a,code=sm_90a', '-lineinfo'],
      }),
    );
    expect(log).toContain(
      `build gemm/fake: not cached: flags changed: -gencode=arch=compute_90a,code=sm_90a → -gencode=arch=compute_90a,code=sm_90a -lineinfo (newest entry ${first.records[0]?.hash})`,
    );
  });

  it('when the toolkit changed', async () => {
    const first = await build(fakeToolchain({ version: V48 }));
    const exec = fakeToolchain({ version: V88 });
    const log: string[] = [];
    const second = await build(exec, log);
    expect(log).toContain(
      `build gemm/fake: not cached: toolkit changed: "Cuda compilation tools, release 13.0, V13.0.48" → "Cuda compilation tools, release 13.0, V13.0.88" (newest entry ${first.records[0]?.hash})`,
    );
    expect(compiles(exec)).toHaveLength(1);
    expect(second.records[0]?.hash).not.toBe(first.records[0]?.hash);
  });

  it('when its entry lost its library', async () => {
    const first = await build(fakeToolchain());
    await rm(first.records[0]?.library as string);
    const log: string[] = [];
    const second = await build(fakeToolchain(), log);
    expect(log).toContain(
      `build gemm/fake: not cached: the entry ${first.records[0]?.hash} is incomplete (its record.json is missing or unreadable, or its library is missing)`,
    );
    expect(second.records[0]).toMatchObject({ status: 'ok', cached: false });
  });
});

describe('an entry built without cuobjdump', () => {
  it('is read with cuobjdump once it is there, so the SASS checks run as on a cold build', async () => {
    const blind = await build(fakeToolchain({ cuobjdump: false }));
    expect(blind.records[0]?.archs).toBeUndefined();
    expect(blind.diagnostics.map((d) => d.code)).toContain('build.cuobjdump_not_found');

    // Still no cuobjdump: the same warning as the cold build, nothing compiled.
    const stillBlind = fakeToolchain({ cuobjdump: false });
    const warmBlind = await build(stillBlind);
    expect(compiles(stillBlind)).toEqual([]);
    expect(warmBlind.diagnostics).toEqual(blind.diagnostics);

    const exec = fakeToolchain();
    const log: string[] = [];
    const completed = await build(exec, log);
    expect(compiles(exec)).toEqual([]);
    expect(exec.calls.map((c) => c.split(' ').slice(0, 2).join(' '))).toEqual([
      'nvcc --version',
      'cuobjdump --version',
      'cuobjdump -sass',
      'c++filt _Z6kernelPf',
    ]);
    expect(log).toContain(
      'build gemm/fake: cached entry had no SASS listing; read it with cuobjdump',
    );
    await rm(cacheDir, { recursive: true });
    const cold = await build(fakeToolchain());
    expect(completed.records.map(facts)).toEqual(cold.records.map(facts));

    // ... and the entry keeps what was read: the next warm build runs nvcc --version only.
    await rm(cacheDir, { recursive: true });
    await build(fakeToolchain({ cuobjdump: false }));
    await build(fakeToolchain());
    const last = fakeToolchain();
    await build(last);
    expect(last.calls).toEqual(['nvcc --version']);
  });
});
