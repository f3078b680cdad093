// The doctor's checks of kernelgate.yml's benchmarks (other tools' programs), made once they have
// run: seed 000's two failures. A CUDA binary whose runtime is newer than the driver supports
// (linked libcudart through ldd, or a static one from the toolkit release its device code names),
// and a benchmark that reads far under the chip's datasheet peak (a fallback path). Each
// diagnostic names the benchmark, the binary, the versions or the rates, and the fix.
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { fillTemplate } from '../../adapters/index.js';
import type { BenchmarkConfig, Config } from '../../config/index.js';
import { caseDtype, caseGbps, caseLabel, caseTflops } from '../../judge/index.js';
import type { Exec } from '../../lib/index.js';
import { fixed } from '../../lib/index.js';
import type { Diagnostic, Environment, KernelgateResults } from '../../results/index.js';
import { compareVersions, majorMinor, minDriverFor } from './versions.js';

/** The CUDA runtime a binary carries, and how it was found. */
export interface BinaryRuntime {
  /** 13.0.88, or 13 when only the soname says it */
  version: string;
  /** "libcudart.so.13 → /usr/local/cuda-13.0/lib64/libcudart.so.13.0.88", or "static (…)" */
  via: string;
}

/** The start of an ELF file. */
const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);
/** Binaries above this size are not read for the static runtime's release (a GiB of CUDA code). */
const MAX_SCAN_BYTES = 1 << 30;
/** nvcc's toolkit note in the device code it embeds (cubins keep it in an NVIDIA note). */
const TOOLKIT_NOTE = /Cuda compilation tools, release (\d+\.\d+), V(\d+\.\d+(?:\.\d+)?)/;
/** The object names the static CUDA runtime leaves in a binary that links it. */
const STATIC_CUDART = 'libcudart_static';

function readHead(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function isElf(path: string): boolean {
  try {
    return statSync(path).isFile() && readHead(path, 4).equals(ELF_MAGIC);
  } catch {
    return false;
  }
}

/**
 * The programs a command line runs that are files of the repository or of an absolute path:
 * `./bench`, `build/examples/88_hopper_fmha/88_hopper_fmha`, `{root}/build/bench`; tools found on
 * PATH (python3, g++) are not the benchmark's own binaries and are left out.
 */
export function commandBinaries(command: string, cwd: string): string[] {
  const words = command
    .split(/[\s;&|()<>]+/)
    .map((w) => w.replace(/^['"]|['"]$/g, ''))
    .filter((w) => w.includes('/') && !w.startsWith('-') && !w.includes('='));
  const found: string[] = [];
  for (const word of words) {
    const path = isAbsolute(word) ? word : resolve(cwd, word);
    if (!found.includes(path) && isElf(path)) found.push(path);
  }
  return found;
}

/** `libcudart.so.13 => /usr/local/cuda-13.0/lib64/libcudart.so.13 (0x…)` in ldd's answer. */
function linkedRuntime(lddOutput: string): BinaryRuntime | undefined {
  const m = /^\s*(libcudart\.so\.(\d+))\s+=>\s+(\S+)/m.exec(lddOutput);
  if (!m?.[1] || !m[2] || !m[3] || m[3] === 'not') return undefined;
  let real = m[3];
  try {
    real = realpathSync(m[3]);
  } catch {
    // ldd's path as it is
  }
  const full = /^libcudart\.so\.(\d+\.\d+(?:\.\d+)?)$/.exec(basename(real))?.[1];
  const via = real === m[3] ? `${m[1]} → ${m[3]}` : `${m[1]} → ${real}`;
  return { version: full ?? m[2], via };
}

/** A statically linked runtime: the release of the toolkit that built and linked the binary. */
function staticRuntime(path: string): BinaryRuntime | undefined {
  const size = statSync(path).size;
  if (size > MAX_SCAN_BYTES) return undefined;
  const text = readHead(path, size).toString('latin1');
  if (!text.includes(STATIC_CUDART)) return undefined;
  const m = TOOLKIT_NOTE.exec(text);
  if (!m?.[2]) return undefined;
  return { version: m[2], via: `static libcudart, linked by CUDA ${m[2]}'s nvcc` };
}

/** The CUDA runtime of a binary: the shared one ldd resolves, else a static one; none found. */
export async function binaryRuntime(path: string, exec: Exec): Promise<BinaryRuntime | undefined> {
  const ldd = await exec.run('ldd', [path]).catch(() => undefined);
  const linked = ldd && ldd.exitCode === 0 ? linkedRuntime(ldd.stdout) : undefined;
  return linked ?? staticRuntime(path);
}

/** The command lines of a benchmark with its first case's parameters: what its programs are. */
function commandsOf(bench: BenchmarkConfig, root: string): string[] {
  if (bench.command) {
    const params = bench.command.cases[0] ?? {};
    return Object.values(bench.command.variants).map((t) => fillTemplate(t, params, root));
  }
  return bench.run !== undefined ? [bench.run] : [];
}

function runtimeDiagnostic(
  bench: BenchmarkConfig,
  shown: string,
  runtime: BinaryRuntime,
  environment: Environment,
): Diagnostic | undefined {
  const driverCuda = environment.driver_cuda_version;
  const driver = environment.driver_version ?? 'of this machine';
  if (driverCuda === undefined) return undefined;
  const needs = majorMinor(
    runtime.version.includes('.') ? runtime.version : `${runtime.version}.0`,
  );
  if (compareVersions(needs, driverCuda) <= 0) return undefined;
  const minDriver = minDriverFor(needs);
  const compat = environment.libraries?.['cuda_compat'];
  const sameMajor = needs.split('.')[0] === driverCuda.split('.')[0];
  const how = compat
    ? `It can run only through the forward-compat libcuda ${compat} in LD_LIBRARY_PATH, and seed 000's CUTLASS Example 88 did so at 0.02 TFLOPS: a binary that starts is no proof that its fast path runs.`
    : sameMajor
      ? 'It runs through minor-version compatibility: its machine code works, but PTX it carries cannot be JIT-compiled and newer features fall back or fail.'
      : 'Its CUDA calls fail with "CUDA driver version is insufficient for CUDA runtime version"; a benchmark that catches the error may go on and print numbers from a slow or empty path.';
  return {
    level: compat || sameMajor ? 'warning' : 'error',
    code: 'benchmark.cuda_runtime_too_new',
    message: `benchmark ${bench.name}: ${shown} carries CUDA runtime ${runtime.version} (${runtime.via}), but driver ${driver} supports CUDA <= ${driverCuda}. ${how}`,
    fix: `Install driver >= ${minDriver ?? `one for CUDA ${needs}`}${compat ? ' and take the compat folder out of LD_LIBRARY_PATH' : ''}, or rebuild ${basename(shown)} with a CUDA ${driverCuda} toolkit (CMake: -DCMAKE_CUDA_COMPILER=/usr/local/cuda-${driverCuda}/bin/nvcc).`,
    source: 'doctor',
    kernel: bench.name,
  };
}

/**
 * Each benchmark binary's CUDA runtime against the driver's CUDA (nvidia-smi's, which the doctor
 * read into `environment`). Nothing to say on a machine without a driver, or for a binary with no
 * CUDA runtime (a CPU benchmark, a script).
 */
export async function benchmarkBinaryChecks(
  benchmarks: readonly BenchmarkConfig[],
  environment: Environment,
  root: string,
  exec: Exec,
): Promise<Diagnostic[]> {
  if (environment.driver_cuda_version === undefined) return [];
  const found: Diagnostic[] = [];
  for (const bench of benchmarks) {
    const binaries = new Set(commandsOf(bench, root).flatMap((c) => commandBinaries(c, bench.cwd)));
    for (const path of binaries) {
      const runtime = await binaryRuntime(path, exec);
      if (!runtime) continue;
      const rel = relative(root, path);
      const shown = rel.startsWith('..') || isAbsolute(rel) ? path : rel;
      const d = runtimeDiagnostic(bench, shown, runtime, environment);
      if (d) found.push(d);
    }
  }
  return found;
}

/** Below this share of the datasheet peak a benchmark is on a fallback path, not slow code. */
export const SLOW_PATH_SHARE = 0.001;
/** Runs shorter than this may be launch-bound: a tiny problem is far under the peak by nature. */
export const SLOW_PATH_MIN_MS = 0.05;

/** The dense tensor-core peak a case is held to: its dtype's, else the chip's 16-bit one. */
function peakFor(tflops: Record<string, number>, dtype: string | undefined) {
  for (const key of [dtype, 'bf16', 'fp16']) {
    const value = key === undefined ? undefined : tflops[key];
    if (key !== undefined && value !== undefined) return { value, dtype: key };
  }
  return undefined;
}

/**
 * Benchmarks' cases that read under SLOW_PATH_SHARE of the chip's datasheet peak (TFLOPS or GB/s)
 * over a run long enough not to be launch-bound: seed 000's 0.02 TFLOPS on an H100. One
 * diagnostic per benchmark and variant, naming its slowest case.
 */
export function slowPathChecks(
  results: KernelgateResults,
  benchmarks: readonly string[],
  config: Pick<Config, 'peaks'>,
): Diagnostic[] {
  const sku = results.environment.gpu.sku;
  const peaks = sku ? config.peaks[sku] : undefined;
  if (!peaks) return [];
  const worst = new Map<string, { share: number; text: string; kernel: string; variant: string }>();
  for (const c of results.cases) {
    if (!benchmarks.includes(c.kernel) || c.status !== 'ok') continue;
    if ((c.timing?.median_ms ?? 0) < SLOW_PATH_MIN_MS) continue;
    const tflops = caseTflops(c);
    const peak = peakFor(peaks.tflops, caseDtype(c));
    const gbps = caseGbps(c);
    const readings = [
      tflops !== undefined && peak
        ? {
            share: tflops / peak.value,
            text: `${fixed(tflops, 4)} TFLOPS of ${sku}'s ${fixed(peak.value, 1)} TFLOPS ${peak.dtype} peak`,
          }
        : undefined,
      gbps !== undefined && peaks.gbps
        ? {
            share: gbps / peaks.gbps,
            text: `${fixed(gbps, 3)} GB/s of ${sku}'s ${fixed(peaks.gbps, 0)} GB/s`,
          }
        : undefined,
    ].filter((r): r is { share: number; text: string } => r !== undefined);
    const best = readings.sort((a, b) => b.share - a.share)[0];
    if (!best || best.share >= SLOW_PATH_SHARE) continue;
    const key = `${c.kernel}/${c.variant}`;
    const text = `${caseLabel(c)} reads ${best.text} (${fixed(best.share * 100, 4)} %)`;
    if (!worst.has(key) || (worst.get(key)?.share ?? 1) > best.share) {
      worst.set(key, { share: best.share, text, kernel: c.kernel, variant: c.variant });
    }
  }
  return [...worst.values()].map((w) => ({
    level: 'warning',
    code: 'benchmark.slow_path',
    message: `benchmark ${w.text}: under ${fixed(SLOW_PATH_SHARE * 100, 1)} % of the datasheet peak over ${SLOW_PATH_MIN_MS * 1000} µs or more is no tuning gap but a fallback path (seed 000: CUTLASS Example 88 at 0.0193 TFLOPS on an H100, a CUDA 13 runtime on a CUDA 12.8 driver through cuda-compat, "Arch conditional MMA instruction used without targeting appropriate compute capability" in its output).`,
    fix: "Read the benchmark's output for CUDA errors and arch messages (kernelgate names the known ones above), compare its CUDA runtime with the driver's (benchmark.cuda_runtime_too_new), and build its device code for this GPU (sm_90a for H100/H200: -gencode=arch=compute_90a,code=sm_90a).",
    source: 'doctor',
    kernel: w.kernel,
    variant: w.variant,
  }));
}
