// What the doctor reads of the machine before it judges anything: the driver's view (nvidia-smi),
// the loaded kernel module, forward-compat folders, nvcc, the python probe; and what follows from
// them (the runtime in use, the driver's CUDA, the active compat layer). A reading that cannot be
// had is a diagnostic, never a throw.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { modelCapability } from '../../config/index.js';
import { NOT_FOUND_EXIT_CODE } from '../../lib/index.js';
import type { Diagnostic } from '../../results/index.js';
import { findNvcc, toolkitRelease } from '../build/index.js';
import { PYTHON_PROBE } from './probe.js';
import { parseNvidiaSmiXml, type SmiGpu, type SmiReading } from './smi.js';
import type { DoctorDeps, DoctorFacts, ProbeLibcuda, PythonProbe } from './types.js';
import { cudaForDriver, libcudaVersionIn, majorMinor } from './versions.js';

export interface Machine {
  python: string;
  targetArchs: string[];
  reading: SmiReading;
  first: SmiGpu | undefined;
  kernelModuleVersion: string | undefined;
  compatDirs: DoctorFacts['compatDirs'];
  /** the first compat folder that holds a libcuda: the one CUDA programs load */
  activeCompat: DoctorFacts['compatDirs'][number] | undefined;
  toolkit: { nvcc: string; release: string } | undefined;
  probe: PythonProbe | undefined;
  /** compute capability of the first GPU: torch's, else the GPU table's */
  capability: string | undefined;
  /** torch's CUDA, and nvcc's release when it is known */
  torchCuda: string | undefined;
  toolkitRuntime: string | undefined;
  runtime: string | undefined;
  /** the driver actually loaded (the kernel module's version, else nvidia-smi's) and its CUDA */
  driverVersion: string | undefined;
  driverCuda: string | undefined;
  libcuda: ProbeLibcuda | undefined;
  libcudaFailed: boolean;
}

export type Add = (level: Diagnostic['level'], code: string, message: string, fix?: string) => void;

async function defaultReadFile(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

async function defaultListDir(dir: string): Promise<string[] | undefined> {
  return readdir(dir).catch(() => undefined);
}

async function readSmi(deps: DoctorDeps, add: Add): Promise<SmiReading> {
  const smi = await deps.exec.run('nvidia-smi', ['-q', '-x']).catch(() => undefined);
  if (!smi || smi.exitCode === NOT_FOUND_EXIT_CODE) {
    add(
      deps.expectGpu === false ? 'info' : 'warning',
      'gpu.not_found',
      'No NVIDIA GPU or driver found (nvidia-smi is not installed): CUDA variants can be built and checked here, but nothing can be verified on a GPU or timed.',
      deps.expectGpu === false
        ? undefined
        : 'Run on a GPU runner (runs-on: [self-hosted, gpu]) with the NVIDIA driver installed, or use the recorded-results mode.',
    );
    return { gpus: [] };
  }
  if (smi.exitCode !== 0) {
    const said = `${smi.stdout}${smi.stderr}`.trim().split(/\r?\n/)[0] ?? '';
    add(
      'error',
      'driver.smi_failed',
      `nvidia-smi failed (exit ${smi.exitCode}): ${said}`,
      'The driver is not loaded or does not match its user-space libraries: check `cat /proc/driver/nvidia/version` against the installed driver package, then reboot or reload the nvidia module.',
    );
    return { gpus: [] };
  }
  return parseNvidiaSmiXml(smi.stdout);
}

/** The kernel module actually loaded, and the LD_LIBRARY_PATH folders named compat. */
async function readDriverFiles(deps: DoctorDeps) {
  const env = deps.env ?? process.env;
  const readText = deps.readFile ?? defaultReadFile;
  const listDir = deps.listDir ?? defaultListDir;
  const nvrm = await readText('/proc/driver/nvidia/version');
  const kernelModuleVersion = nvrm
    ? /Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)/.exec(nvrm)?.[1]
    : undefined;
  const ldPath = (env.LD_LIBRARY_PATH ?? '').split(':').filter((p) => p !== '');
  const compatDirs: DoctorFacts['compatDirs'] = [];
  for (const dir of ldPath) {
    if (!dir.split(path.sep).includes('compat')) continue;
    const entries = await listDir(dir);
    compatDirs.push({ dir, libcudaVersion: entries ? libcudaVersionIn(entries) : undefined });
  }
  return { kernelModuleVersion, compatDirs };
}

async function readToolkit(deps: DoctorDeps, add: Add): Promise<Machine['toolkit']> {
  const nvcc = await findNvcc(deps.exec, deps.env ?? process.env);
  if (nvcc) return { nvcc: nvcc.path, release: toolkitRelease(nvcc.version) ?? 'unknown' };
  add(
    'warning',
    'toolkit.nvcc_not_found',
    'nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin): CUDA variants cannot be built.',
    'Install the CUDA toolkit 13.0 or set CUDA_HOME.',
  );
  return undefined;
}

async function runProbe(deps: DoctorDeps, python: string, add: Add) {
  const probeRun = await deps.exec.run(python, ['-c', PYTHON_PROBE]).catch(() => undefined);
  if (!probeRun || probeRun.exitCode === NOT_FOUND_EXIT_CODE) {
    add(
      'warning',
      'python.not_found',
      `${python} not found: the harness cannot run.`,
      'Set the harness python in kernelgate.yml (harness.python) or put python3 on PATH.',
    );
    return undefined;
  }
  try {
    return JSON.parse(probeRun.stdout.trim().split(/\r?\n/).pop() ?? '') as PythonProbe;
  } catch {
    add(
      'warning',
      'python.probe_failed',
      `${python} could not run the environment probe (exit ${probeRun.exitCode}): ${(probeRun.stderr || probeRun.stdout).trim().split(/\r?\n/).pop() ?? ''}`,
      'Run the same python by hand and fix its installation.',
    );
    return undefined;
  }
}

/** An Add that keeps its diagnostics until flush() hands them on, in the order they came. */
function held(add: Add) {
  const kept: Parameters<Add>[] = [];
  return {
    add: ((...d: Parameters<Add>) => void kept.push(d)) as Add,
    flush: () => kept.forEach((d) => add(...d)),
  };
}

/**
 * Reads the machine; what cannot be read is added as a diagnostic. nvidia-smi, the driver's files,
 * nvcc and the Python probe (torch's import and a CUDA context: seconds) are read at once, their
 * diagnostics added in that order.
 */
export async function inspectMachine(deps: DoctorDeps, add: Add): Promise<Machine> {
  const python = deps.python ?? 'python3';
  const [smiAdd, toolkitAdd, probeAdd] = [held(add), held(add), held(add)];
  const [reading, { kernelModuleVersion, compatDirs }, toolkit, probe] = await Promise.all([
    readSmi(deps, smiAdd.add),
    readDriverFiles(deps),
    readToolkit(deps, toolkitAdd.add),
    runProbe(deps, python, probeAdd.add),
  ]);
  for (const h of [smiAdd, toolkitAdd, probeAdd]) h.flush();

  const first = reading.gpus[0];
  const device = probe?.devices?.[0];
  const capability = device
    ? `${device.capability[0]}.${device.capability[1]}`
    : first
      ? modelCapability(first.sku)
      : undefined;
  const torchCuda = probe?.torch_cuda ?? undefined;
  const toolkitRuntime = toolkit && toolkit.release !== 'unknown' ? toolkit.release : undefined;
  const driverVersion = kernelModuleVersion ?? reading.driverVersion;
  const libcuda = probe?.libcuda;
  return {
    python,
    targetArchs: deps.targetArchs ?? ['sm_90a'],
    reading,
    first,
    kernelModuleVersion,
    compatDirs,
    activeCompat: compatDirs.find((c) => c.libcudaVersion !== undefined),
    toolkit,
    probe,
    capability,
    torchCuda,
    toolkitRuntime,
    runtime: torchCuda ?? (toolkitRuntime ? majorMinor(toolkitRuntime) : undefined),
    driverVersion,
    driverCuda:
      reading.driverCudaVersion ?? (driverVersion ? cudaForDriver(driverVersion) : undefined),
    libcuda,
    libcudaFailed: libcuda?.cu_init !== undefined && libcuda.cu_init !== 0,
  };
}

/** A diagnostic from the doctor. */
export function doctorDiagnostic(
  level: Diagnostic['level'],
  code: string,
  message: string,
  fix?: string,
): Diagnostic {
  const d: Diagnostic = { level, code, message, source: 'doctor' };
  if (fix !== undefined) d.fix = fix;
  return d;
}
