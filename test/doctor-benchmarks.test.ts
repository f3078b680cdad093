// The doctor's check of benchmark binaries (src/measure/doctor/checks-benchmarks.ts) on real
// nvcc 13.0 builds: a CUDA runtime newer than the driver supports, linked (ldd) or static (the
// toolkit note nvcc leaves in the device code), named with the binary, the versions and the fix;
// seed 000's driver (570.133.20, CUDA 12.8) with and without its cuda-compat layer.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BenchmarkConfig } from '../src/config/index.js';
import { actionsExec } from '../src/lib/index.js';
import { benchmarkBinaryChecks, binaryRuntime, commandBinaries } from '../src/measure/index.js';
import type { Environment } from '../src/results/index.js';
import { describeWithVenv } from './support/venv.js';

const SEED_DRIVER: Environment = {
  gpu: { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' },
  driver_version: '570.133.20',
  driver_cuda_version: '12.8',
};
const H200_DRIVER: Environment = {
  ...SEED_DRIVER,
  driver_version: '580.159.04',
  driver_cuda_version: '13.0',
};

const SOURCE = `#include <cstdio>
__global__ void scale(float *x) { x[threadIdx.x] *= 2.0f; }
int main() {
  float *d;
  cudaError_t e = cudaMalloc(&d, 4);
  std::printf("%s\\n", cudaGetErrorString(e));
  return 0;
}
`;

let root: string;

function bench(name: string, command: string): BenchmarkConfig {
  return {
    name,
    format: 'command',
    cwd: root,
    cwdRelative: '.',
    timeoutS: 60,
    references: [],
    work: {},
    command: {
      variants: { main: command },
      cases: [{}],
      repeat: 1,
      metric: { regex: /([0-9.]+) ms/, unit: 'ms' },
    },
  };
}

describeWithVenv('benchmark binaries on real nvcc 13.0 builds', () => {
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kg-doctor-bench-'));
    writeFileSync(join(root, 'k.cu'), SOURCE);
    const nvcc = (out: string, ...flags: string[]) =>
      execFileSync('nvcc', ['-arch=sm_90a', ...flags, 'k.cu', '-o', out], { cwd: root });
    nvcc('static_bench'); // nvcc links the CUDA runtime statically by default
    nvcc('shared_bench', '-cudart', 'shared');
    copyFileSync('/bin/true', join(root, 'cpu_bench'));
  }, 120_000);

  it('reads the static runtime from the toolkit note and the shared one through ldd', async () => {
    const exec = actionsExec();
    expect(await binaryRuntime(join(root, 'static_bench'), exec)).toEqual({
      version: '13.0.88',
      via: "static libcudart, linked by CUDA 13.0.88's nvcc",
    });
    const shared = await binaryRuntime(join(root, 'shared_bench'), exec);
    expect(shared?.version).toMatch(/^13(\.\d+)*$/);
    expect(shared?.via).toMatch(/^libcudart\.so\.13 → \/\S+libcudart\.so\.13[.\d]*$/);
    expect(await binaryRuntime(join(root, 'cpu_bench'), exec)).toBeUndefined();
  }, 60_000);

  it("names the binary, the versions and the fix on seed 000's driver", async () => {
    const found = await benchmarkBinaryChecks(
      [bench('fmha', './static_bench --b=1 && echo done'), bench('cpu', './cpu_bench')],
      SEED_DRIVER,
      root,
      actionsExec(),
    );
    expect(found).toEqual([
      {
        level: 'error',
        code: 'benchmark.cuda_runtime_too_new',
        message:
          "benchmark fmha: static_bench carries CUDA runtime 13.0.88 (static libcudart, linked by CUDA 13.0.88's nvcc), but driver 570.133.20 supports CUDA <= 12.8. " +
          'Its CUDA calls fail with "CUDA driver version is insufficient for CUDA runtime version"; a benchmark that catches the error may go on and print numbers from a slow or empty path.',
        fix: 'Install driver >= 580.65.06, or rebuild static_bench with a CUDA 12.8 toolkit (CMake: -DCMAKE_CUDA_COMPILER=/usr/local/cuda-12.8/bin/nvcc).',
        source: 'doctor',
        kernel: 'fmha',
      },
    ]);
  }, 60_000);

  it('through a forward-compat layer it is a warning that says a running binary proves nothing', async () => {
    const withCompat = { ...SEED_DRIVER, libraries: { cuda_compat: '580.95.05' } };
    const [d] = await benchmarkBinaryChecks(
      [bench('fmha', `{root}/shared_bench`)],
      withCompat,
      root,
      actionsExec(),
    );
    expect(d?.level).toBe('warning');
    expect(d?.message).toMatch(
      /^benchmark fmha: shared_bench carries CUDA runtime 13[.\d]* \(libcudart\.so\.13 → /,
    );
    expect(d?.message).toContain(
      "It can run only through the forward-compat libcuda 580.95.05 in LD_LIBRARY_PATH, and seed 000's CUTLASS Example 88 did so at 0.02 TFLOPS: a binary that starts is no proof that its fast path runs.",
    );
    expect(d?.fix).toBe(
      'Install driver >= 580.65.06 and take the compat folder out of LD_LIBRARY_PATH, or rebuild shared_bench with a CUDA 12.8 toolkit (CMake: -DCMAKE_CUDA_COMPILER=/usr/local/cuda-12.8/bin/nvcc).',
    );
  }, 60_000);

  it('says nothing when the driver supports the runtime, or when there is no driver', async () => {
    const benches = [bench('fmha', './static_bench'), bench('shared', './shared_bench')];
    expect(await benchmarkBinaryChecks(benches, H200_DRIVER, root, actionsExec())).toEqual([]);
    const noGpu: Environment = { gpu: { name: 'none', sku: 'none' } };
    expect(await benchmarkBinaryChecks(benches, noGpu, root, actionsExec())).toEqual([]);
  }, 60_000);
});

describe('the programs of a command line', () => {
  it('are the ELF files it names by path; tools on PATH and options are not', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-doctor-words-'));
    copyFileSync('/bin/true', join(dir, 'bench'));
    writeFileSync(join(dir, 'script.sh'), '#!/bin/sh\n');
    expect(
      commandBinaries(`g++ x.cc -o bench && ./bench --out=./x "${dir}/bench" ./script.sh`, dir),
    ).toEqual([join(dir, 'bench')]);
  });
});
