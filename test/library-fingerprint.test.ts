// What identity compares of a CUDA variant's library (src/measure/build/fingerprint.ts), on real
// nvcc 13.0 builds of one small kernel in an anonymous namespace: an unused function added to the
// translation unit (what a shared header's new helper does to every kernel that includes it)
// changes the library's bytes but not its fingerprint; a changed instruction or launch
// configuration changes both.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { libraryFingerprint } from '../src/measure/index.js';

const run = promisify(execFile);
const NVCC = existsSync('/usr/local/cuda/bin/nvcc') ? '/usr/local/cuda/bin/nvcc' : 'nvcc';

const kernel = (body: string, block: number, extra = '') => `#include <cuda_runtime.h>
${extra}
namespace {
__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ${body};
}
}  // namespace
extern "C" int kg_scale(float* x, float a, int n) {
  scale<<<(n + ${block - 1}) / ${block}, ${block}>>>(x, a, n);
  return static_cast<int>(cudaGetLastError());
}
`;

const SOURCES = {
  base: kernel('x[i] *= a', 256),
  // a helper nothing calls, as tma.cuh's tma_store_2d was to fa_wgmma.cu (run 133)
  unusedHelper: kernel(
    'x[i] *= a',
    256,
    '__device__ __forceinline__ float unused_helper(float v) { return v * 3.f; }',
  ),
  body: kernel('x[i] *= a + 1.f', 256),
  launch: kernel('x[i] *= a', 128),
};
type Name = keyof typeof SOURCES;

let dir: string;
const libs = {} as Record<Name, Buffer>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kg-fingerprint-'));
  await Promise.all(
    (Object.keys(SOURCES) as Name[]).map(async (name) => {
      // one file name for all (nvcc puts it in the kernel's name), each in its own folder
      await mkdir(path.join(dir, name));
      const src = path.join(dir, name, 'kernel.cu');
      const lib = path.join(dir, name, 'kernel.so');
      await writeFile(src, SOURCES[name]);
      await run(NVCC, [
        '-shared',
        '-Xcompiler',
        '-fPIC',
        '-O3',
        '-gencode=arch=compute_90a,code=sm_90a',
        '-o',
        lib,
        src,
      ]);
      libs[name] = await readFile(lib);
    }),
  );
}, 240_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('libraryFingerprint on nvcc builds', () => {
  it('an unused helper changes the bytes (the anonymous namespace is renamed) but not the fingerprint', () => {
    expect(sha(libs.unusedHelper)).not.toBe(sha(libs.base));
    const names = (b: Buffer) =>
      new Set(b.toString('latin1').match(/_GLOBAL__N__[0-9a-f]{8}_/g) ?? []);
    expect(names(libs.base).size).toBe(1);
    expect(names(libs.unusedHelper)).not.toEqual(names(libs.base));
    expect(libraryFingerprint(libs.unusedHelper)).toBe(libraryFingerprint(libs.base));
  });

  it('a changed instruction or launch configuration changes the fingerprint', () => {
    const base = libraryFingerprint(libs.base);
    expect(libraryFingerprint(libs.body)).not.toBe(base);
    expect(libraryFingerprint(libs.launch)).not.toBe(base);
    expect(libraryFingerprint(libs.launch)).not.toBe(libraryFingerprint(libs.body));
  });

  it('is the same for the same file, and a plain hash for what is not a 64-bit ELF', () => {
    expect(libraryFingerprint(Buffer.from(libs.base))).toBe(libraryFingerprint(libs.base));
    const text = Buffer.from('not a library');
    expect(libraryFingerprint(text)).toBe(sha(text));
    // headers pointing past the end of the file: hashed whole, never taken for another library
    const cut = libs.base.subarray(0, 4096);
    expect(libraryFingerprint(cut)).toBe(sha(cut));
  });
});
