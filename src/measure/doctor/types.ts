// The doctor's types: what it is given, what it finds, what it hands back.
import type { Exec } from '../../lib/index.js';
import type { Diagnostic, Environment } from '../../results/index.js';

export interface DoctorDeps {
  exec: Exec;
  /** Environment of the runs to come (LD_LIBRARY_PATH, CUDA_HOME); default process.env. */
  env?: Record<string, string | undefined>;
  /** Reads a file, undefined when it does not exist (for /proc/driver/nvidia/version). */
  readFile?: (file: string) => Promise<string | undefined>;
  /** Lists a folder's entries, undefined when it does not exist (for compat folders). */
  listDir?: (dir: string) => Promise<string[] | undefined>;
  /** The python the harness runs with; default `python3`. */
  python?: string;
  /** False on CI machines without a GPU: a missing GPU is then `info`, not a `warning`. */
  expectGpu?: boolean;
  /** SASS targets the CUDA variants are built for; default sm_90a. */
  targetArchs?: string[];
}

/** Readings that have no field in the results schema but that a report or a person wants. */
export interface GpuFacts {
  index: number;
  busId: string;
  name: string;
  sku: string;
  brand?: string;
  smClockMhz?: number;
  smClockMaxMhz?: number;
  powerDrawW?: number;
  powerLimitW?: number;
  powerLimitDefaultW?: number;
  temperatureC?: number;
  utilizationPct?: number;
  clockEventReasons: string[];
  persistenceMode?: string;
  eccMode?: string;
  eccVolatileCorrectable?: number;
  eccVolatileUncorrectable?: number;
  migMode?: string;
  computeMode?: string;
  processes: { pid: number; name: string; usedMemoryMiB?: number }[];
}

export interface DoctorFacts {
  gpus: GpuFacts[];
  /** NVRM version from /proc/driver/nvidia/version: the kernel module actually loaded. */
  kernelModuleVersion?: string;
  /** LD_LIBRARY_PATH folders named compat, with the libcuda version each one holds. */
  compatDirs: { dir: string; libcudaVersion?: string }[];
  /** What the python probe saw when it loaded libcuda.so.1 itself. */
  libcuda?: ProbeLibcuda;
  toolkit?: { nvcc: string; release: string };
}

export interface DoctorReport {
  environment: Environment;
  diagnostics: Diagnostic[];
  facts: DoctorFacts;
}

/** What the python probe prints (one JSON object). */
export interface ProbeLibcuda {
  path?: string;
  cu_init?: number;
  cu_init_name?: string | null;
  driver_api_version?: number;
  error?: string;
}

export interface PythonProbe {
  python?: string;
  libcuda?: ProbeLibcuda;
  torch?: string;
  torch_cuda?: string | null;
  cudnn?: number | null;
  cuda_available?: boolean;
  cuda_init_warning?: string;
  devices?: {
    name: string;
    capability: [number, number];
    sm_count?: number;
    total_memory_bytes?: number;
    l2_bytes?: number | null;
  }[];
  torch_error?: string;
  triton?: string;
  triton_error?: string;
}
