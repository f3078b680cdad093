// The doctor stage: before anything is timed, finds out which GPU, driver, CUDA runtime,
// toolkit and libraries this machine really has, and says what will go wrong (a runtime newer
// than the driver, a forward-compat layer, throttling, a busy or misconfigured GPU) and the fix.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { findNvcc, toolkitRelease } from '../build/index.js';
import { diagnoseOutput } from '../diagnose.js';
import { NOT_FOUND_EXIT_CODE, type Exec } from '../../lib/index.js';
import { gpuModel, modelCapability } from '../../config/index.js';
import type { Diagnostic, Environment, Gpu } from '../../results/index.js';

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

/**
 * Run with `python -c`: loads libcuda.so.1 the way every CUDA program in this environment will
 * (so a forward-compat layer in LD_LIBRARY_PATH shows up by its path and its cuInit result),
 * then asks torch and triton for their versions.
 */
export const PYTHON_PROBE = `
import json, platform, warnings
out = {"python": platform.python_version()}
try:
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    rc = lib.cuInit(0)
    ver = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(ver))
    name = ctypes.c_char_p()
    lib.cuGetErrorName(rc, ctypes.byref(name))
    info = {"cu_init": rc, "cu_init_name": name.value.decode() if name.value else None, "driver_api_version": ver.value}
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libcuda.so" in line:
                info["path"] = line.split()[-1]
                break
    out["libcuda"] = info
except OSError as e:
    out["libcuda"] = {"error": str(e)}
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda
    try:
        out["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        out["cudnn"] = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out["cuda_available"] = torch.cuda.is_available()
    if caught:
        out["cuda_init_warning"] = " ".join(str(w.message) for w in caught)
    if out["cuda_available"]:
        out["devices"] = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            out["devices"].append({"name": p.name, "capability": [p.major, p.minor], "sm_count": p.multi_processor_count, "total_memory_bytes": p.total_memory, "l2_bytes": getattr(p, "L2_cache_size", None)})
except Exception as e:
    out["torch_error"] = type(e).__name__ + ": " + str(e)
try:
    import triton
    out["triton"] = triton.__version__
except Exception as e:
    out["triton_error"] = type(e).__name__ + ": " + str(e)
print(json.dumps(out))
`;

/** First Linux driver of each CUDA release (NVIDIA's CUDA Toolkit release notes, table 3). */
const MIN_DRIVER_FOR_CUDA: readonly [string, string][] = [
  ['13.1', '590.44.01'],
  ['13.0', '580.65.06'],
  ['12.9', '575.51.03'],
  ['12.8', '570.26'],
  ['12.6', '560.28.03'],
  ['12.5', '555.42.02'],
  ['12.4', '550.54.14'],
  ['12.3', '545.23.06'],
  ['12.2', '535.54.03'],
  ['12.1', '530.30.02'],
  ['12.0', '525.60.13'],
  ['11.8', '520.61.05'],
];

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function majorMinor(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

/** Highest CUDA release a driver version supports, from the table above. */
export function cudaForDriver(driverVersion: string): string | undefined {
  return MIN_DRIVER_FOR_CUDA.find(([, min]) => compareVersions(driverVersion, min) >= 0)?.[0];
}

function minDriverFor(cuda: string): string | undefined {
  return MIN_DRIVER_FOR_CUDA.find(([release]) => release === majorMinor(cuda))?.[1];
}

/** Normalised model from the PCI device id, else the name; `unknown` when neither says (data/gpus.json). */
export function gpuSku(name: string, pciDeviceId?: string): string {
  return gpuModel(name, pciDeviceId);
}

type XmlNode = Record<string, unknown>;

function node(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as XmlNode)[key];
  }
  return current;
}

function text(value: unknown, ...keys: string[]): string | undefined {
  const v = node(value, ...keys);
  if (typeof v !== 'string' || v === '' || v === 'N/A') return undefined;
  return v;
}

/** Leading number of "126.97 W", "1980 MHz", "0" and the like; undefined for N/A. */
function num(value: unknown, ...keys: string[]): number | undefined {
  const s = text(value, ...keys);
  const m = s === undefined ? null : /^-?\d+(\.\d+)?/.exec(s);
  return m ? Number(m[0]) : undefined;
}

function sumOf(values: (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length === 0 ? undefined : known.reduce((a, b) => a + b, 0);
}

const XML = new XMLParser({
  ignoreAttributes: false,
  parseTagValue: false,
  isArray: (name) => name === 'gpu' || name === 'process_info',
});

/** One GPU as nvidia-smi reports it: the facts kept in the report, plus what the checks need. */
export interface SmiGpu extends GpuFacts {
  pciDeviceId?: string;
  memoryMiB?: number;
  memClockMaxMhz?: number;
  appClockMhz?: number;
  pcieWidth?: number;
  pcieWidthMax?: number;
  eccPending?: string;
  migPending?: string;
  rowRemapPending?: boolean;
}

export interface SmiReading {
  driverVersion?: string;
  driverCudaVersion?: string;
  gpus: SmiGpu[];
}

const DETAIL_KEYS = [
  'pciDeviceId',
  'memoryMiB',
  'memClockMaxMhz',
  'appClockMhz',
  'pcieWidth',
  'pcieWidthMax',
  'eccPending',
  'migPending',
  'rowRemapPending',
] as const;

function gpuFacts(g: SmiGpu): GpuFacts {
  const facts: Record<string, unknown> = { ...g };
  for (const key of DETAIL_KEYS) delete facts[key];
  return facts as unknown as GpuFacts;
}

/** Parses `nvidia-smi -q -x`. */
export function parseNvidiaSmiXml(xmlText: string): SmiReading {
  const doc = XML.parse(xmlText) as XmlNode;
  const log = node(doc, 'nvidia_smi_log');
  const gpuNodes = (node(log, 'gpu') as XmlNode[] | undefined) ?? [];
  const gpus = gpuNodes.map((g, index): SmiGpu => {
    const name = text(g, 'product_name') ?? 'unknown';
    const pciDeviceId = text(g, 'pci', 'pci_device_id');
    const reasonsNode = (node(g, 'clocks_event_reasons') ?? node(g, 'clocks_throttle_reasons')) as
      XmlNode | undefined;
    const clockEventReasons = Object.entries(reasonsNode ?? {})
      .filter(([, v]) => v === 'Active')
      .map(([k]) => k.replace(/^clocks_(event|throttle)_reason_/, ''));
    const processes = ((node(g, 'processes', 'process_info') as XmlNode[] | undefined) ?? []).map(
      (p) => ({
        pid: num(p, 'pid') ?? 0,
        name: text(p, 'process_name') ?? 'unknown',
        usedMemoryMiB: num(p, 'used_memory'),
      }),
    );
    const volatile = node(g, 'ecc_errors', 'volatile');
    const power = node(g, 'gpu_power_readings') ?? node(g, 'power_readings');
    return {
      index,
      busId:
        (node(g, '@_id') as string | undefined) ?? text(g, 'pci', 'pci_bus_id') ?? String(index),
      name,
      sku: gpuSku(name, pciDeviceId),
      brand: text(g, 'product_brand'),
      pciDeviceId,
      memoryMiB: num(g, 'fb_memory_usage', 'total'),
      smClockMhz: num(g, 'clocks', 'sm_clock'),
      smClockMaxMhz: num(g, 'max_clocks', 'sm_clock'),
      memClockMaxMhz: num(g, 'max_clocks', 'mem_clock'),
      appClockMhz: num(g, 'applications_clocks', 'graphics_clock'),
      powerDrawW:
        num(power, 'instant_power_draw') ??
        num(power, 'average_power_draw') ??
        num(power, 'power_draw'),
      powerLimitW: num(power, 'current_power_limit') ?? num(power, 'power_limit'),
      powerLimitDefaultW: num(power, 'default_power_limit'),
      temperatureC: num(g, 'temperature', 'gpu_temp'),
      utilizationPct: num(g, 'utilization', 'gpu_util'),
      clockEventReasons,
      persistenceMode: text(g, 'persistence_mode'),
      eccMode: text(g, 'ecc_mode', 'current_ecc'),
      eccPending: text(g, 'ecc_mode', 'pending_ecc'),
      eccVolatileCorrectable: sumOf([
        num(volatile, 'sram_correctable'),
        num(volatile, 'dram_correctable'),
        num(volatile, 'single_bit', 'total'),
      ]),
      eccVolatileUncorrectable: sumOf([
        num(volatile, 'sram_uncorrectable_parity'),
        num(volatile, 'sram_uncorrectable_secded'),
        num(volatile, 'sram_uncorrectable'),
        num(volatile, 'dram_uncorrectable'),
        num(volatile, 'double_bit', 'total'),
      ]),
      rowRemapPending:
        text(g, 'remapped_rows', 'remapped_row_pending') === 'Yes' ||
        text(g, 'remapped_rows', 'remapped_row_failure') === 'Yes',
      migMode: text(g, 'mig_mode', 'current_mig'),
      migPending: text(g, 'mig_mode', 'pending_mig'),
      computeMode: text(g, 'compute_mode'),
      pcieWidth: num(g, 'pci', 'pci_gpu_link_info', 'link_widths', 'current_link_width'),
      pcieWidthMax: num(g, 'pci', 'pci_gpu_link_info', 'link_widths', 'max_link_width'),
      processes,
    };
  });
  return {
    driverVersion: text(log, 'driver_version'),
    driverCudaVersion: text(log, 'cuda_version'),
    gpus,
  };
}

/** `libcuda.so.580.95.05` among a folder's entries gives 580.95.05. */
function libcudaVersionIn(entries: string[]): string | undefined {
  for (const entry of entries) {
    const m = /^libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$/.exec(entry);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

/** cuDNN's integer version: 91900 is 9.19.0 (9.x: M*10000+m*100+p), 8902 is 8.9.2. */
export function cudnnVersion(code: number): string {
  if (code >= 10000)
    return `${Math.floor(code / 10000)}.${Math.floor((code % 10000) / 100)}.${code % 100}`;
  return `${Math.floor(code / 1000)}.${Math.floor((code % 1000) / 100)}.${code % 100}`;
}

// Clock event reasons that are not a problem for benchmarking (idle, or how the board is set up).
const BENIGN_CLOCK_REASONS = new Set(['gpu_idle', 'sync_boost', 'display_clocks_setting']);

const CLOCK_REASON_TEXT: Record<string, string> = {
  applications_clocks_setting: 'application clocks are set below the maximum',
  sw_power_cap: 'the power limit is capping clocks',
  hw_slowdown: 'hardware slowdown (too hot or power brake)',
  hw_thermal_slowdown: 'hardware thermal slowdown',
  hw_power_brake_slowdown: 'external power brake',
  sw_thermal_slowdown: 'the driver is slowing clocks to cool the GPU',
};

const DATACENTER_BRANDS = new Set(['NVIDIA', 'Tesla']);

async function defaultReadFile(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

async function defaultListDir(dir: string): Promise<string[] | undefined> {
  return readdir(dir).catch(() => undefined);
}

function doctorDiagnostic(
  level: Diagnostic['level'],
  code: string,
  message: string,
  fix?: string,
): Diagnostic {
  const d: Diagnostic = { level, code, message, source: 'doctor' };
  if (fix !== undefined) d.fix = fix;
  return d;
}

/**
 * Inspects the machine and returns the results document's `environment` plus findings. Never
 * throws for a missing GPU, driver, toolkit or python: each absence is a diagnostic.
 */
export async function runDoctor(deps: DoctorDeps): Promise<DoctorReport> {
  const env = deps.env ?? process.env;
  const readText = deps.readFile ?? defaultReadFile;
  const listDir = deps.listDir ?? defaultListDir;
  const python = deps.python ?? 'python3';
  const targetArchs = deps.targetArchs ?? ['sm_90a'];
  const diagnostics: Diagnostic[] = [];
  const add = (level: Diagnostic['level'], code: string, message: string, fix?: string) =>
    diagnostics.push(doctorDiagnostic(level, code, message, fix));

  // -- the driver's view: nvidia-smi --
  const smi = await deps.exec.run('nvidia-smi', ['-q', '-x']).catch(() => undefined);
  let reading: SmiReading = { gpus: [] };
  if (!smi || smi.exitCode === NOT_FOUND_EXIT_CODE) {
    add(
      deps.expectGpu === false ? 'info' : 'warning',
      'gpu.not_found',
      'No NVIDIA GPU or driver found (nvidia-smi is not installed): CUDA variants can be built and checked here, but nothing can be verified on a GPU or timed.',
      deps.expectGpu === false
        ? undefined
        : 'Run on a GPU runner (runs-on: [self-hosted, gpu]) with the NVIDIA driver installed, or use the recorded-results mode.',
    );
  } else if (smi.exitCode !== 0) {
    const said = `${smi.stdout}${smi.stderr}`.trim().split(/\r?\n/)[0] ?? '';
    add(
      'error',
      'driver.smi_failed',
      `nvidia-smi failed (exit ${smi.exitCode}): ${said}`,
      'The driver is not loaded or does not match its user-space libraries: check `cat /proc/driver/nvidia/version` against the installed driver package, then reboot or reload the nvidia module.',
    );
  } else {
    reading = parseNvidiaSmiXml(smi.stdout);
  }

  // -- the kernel module, the compat layer and libcuda as a CUDA program loads it --
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

  // -- toolkit and python --
  const nvcc = await findNvcc(deps.exec, env);
  const toolkit = nvcc
    ? { nvcc: nvcc.path, release: toolkitRelease(nvcc.version) ?? 'unknown' }
    : undefined;
  if (!nvcc) {
    add(
      'warning',
      'toolkit.nvcc_not_found',
      'nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin): CUDA variants cannot be built.',
      'Install the CUDA toolkit 13.0 or set CUDA_HOME.',
    );
  }
  const probeRun = await deps.exec.run(python, ['-c', PYTHON_PROBE]).catch(() => undefined);
  let probe: PythonProbe | undefined;
  if (!probeRun || probeRun.exitCode === NOT_FOUND_EXIT_CODE) {
    add(
      'warning',
      'python.not_found',
      `${python} not found: the harness cannot run.`,
      'Set the harness python in kernelgate.yml (harness.python) or put python3 on PATH.',
    );
  } else {
    try {
      probe = JSON.parse(probeRun.stdout.trim().split(/\r?\n/).pop() ?? '') as PythonProbe;
    } catch {
      add(
        'warning',
        'python.probe_failed',
        `${python} could not run the environment probe (exit ${probeRun.exitCode}): ${(probeRun.stderr || probeRun.stdout).trim().split(/\r?\n/).pop() ?? ''}`,
        'Run the same python by hand and fix its installation.',
      );
    }
  }

  const first = reading.gpus[0];
  const device = probe?.devices?.[0];
  const capability = device
    ? `${device.capability[0]}.${device.capability[1]}`
    : first
      ? modelCapability(first.sku)
      : undefined;

  // -- the environment section of the results --
  const gpu: Gpu = first
    ? {
        name: first.name,
        sku: first.sku,
        ...(first.pciDeviceId ? { pci_device_id: first.pciDeviceId.toLowerCase() } : {}),
        count: reading.gpus.length,
      }
    : { name: 'none', sku: 'none', count: 0 };
  if (capability) gpu.compute_capability = capability;
  if (device?.sm_count) gpu.sm_count = device.sm_count;
  if (first?.memoryMiB !== undefined) gpu.memory_bytes = first.memoryMiB * 1024 * 1024;
  if (device?.l2_bytes) gpu.l2_bytes = device.l2_bytes;
  if (first?.smClockMaxMhz !== undefined) gpu.sm_clock_max_mhz = first.smClockMaxMhz;
  if (first?.memClockMaxMhz !== undefined) gpu.mem_clock_max_mhz = first.memClockMaxMhz;
  if (first?.powerLimitW !== undefined) gpu.power_limit_w = first.powerLimitW;
  const environment: Environment = { gpu };
  if (reading.driverVersion) environment.driver_version = reading.driverVersion;
  if (reading.driverCudaVersion) environment.driver_cuda_version = reading.driverCudaVersion;
  const torchCuda = probe?.torch_cuda ?? undefined;
  const toolkitRuntime = toolkit && toolkit.release !== 'unknown' ? toolkit.release : undefined;
  const runtime = torchCuda ?? (toolkitRuntime ? majorMinor(toolkitRuntime) : undefined);
  if (runtime) environment.cuda_runtime_version = runtime;
  if (toolkitRuntime) environment.cuda_toolkit_version = toolkitRuntime;
  const libraries: Record<string, string> = {};
  if (probe?.python) libraries.python = probe.python;
  if (probe?.torch) libraries.torch = probe.torch;
  if (probe?.triton) libraries.triton = probe.triton;
  if (typeof probe?.cudnn === 'number') libraries.cudnn = cudnnVersion(probe.cudnn);
  if (kernelModuleVersion) libraries.nvidia_kernel_module = kernelModuleVersion;
  const activeCompat = compatDirs.find((c) => c.libcudaVersion !== undefined);
  if (activeCompat?.libcudaVersion) libraries.cuda_compat = activeCompat.libcudaVersion;
  if (Object.keys(libraries).length > 0) environment.libraries = libraries;

  // -- driver versus runtime, and the compat layer --
  const driverVersion = kernelModuleVersion ?? reading.driverVersion;
  const driverCuda =
    reading.driverCudaVersion ?? (driverVersion ? cudaForDriver(driverVersion) : undefined);
  const needs: { who: string; cuda: string }[] = [];
  if (torchCuda)
    needs.push({ who: `torch ${probe?.torch} (CUDA ${torchCuda})`, cuda: majorMinor(torchCuda) });
  if (toolkitRuntime)
    needs.push({ who: `nvcc ${toolkitRuntime}`, cuda: majorMinor(toolkitRuntime) });
  const libcuda = probe?.libcuda;
  const libcudaFailed = libcuda?.cu_init !== undefined && libcuda.cu_init !== 0;
  const compatCuda = activeCompat?.libcudaVersion
    ? cudaForDriver(activeCompat.libcudaVersion)
    : undefined;
  const isDatacenter = first
    ? DATACENTER_BRANDS.has(first.brand ?? '') || /^(H|A|L|B|GH)\d/.test(first.sku)
    : true;

  if (driverVersion && driverCuda) {
    const tooNew = needs.filter((n) => compareVersions(n.cuda, driverCuda) > 0);
    if (tooNew.length > 0) {
      const newest = tooNew
        .map((n) => n.cuda)
        .sort(compareVersions)
        .pop() as string;
      const minDriver = minDriverFor(newest);
      const needText = `${tooNew.map((n) => n.who).join(' and ')} need${tooNew.length === 1 ? 's' : ''} CUDA ${newest}${minDriver ? ` (driver >= ${minDriver})` : ''}`;
      const driverText = `Driver ${driverVersion} supports CUDA <= ${driverCuda}, but ${needText}.`;
      const upgrade = `Install driver >= ${minDriver ?? `one for CUDA ${newest}`}${activeCompat ? ` and take ${activeCompat.dir} out of LD_LIBRARY_PATH` : ''}; or build with a CUDA ${driverCuda} toolkit (and a torch built for it) that driver ${driverVersion.split('.')[0]} supports natively.`;
      if (activeCompat && compatCuda && compareVersions(compatCuda, newest) >= 0) {
        const loaded = libcuda?.path
          ? ` The probe loaded ${libcuda.path}${libcudaFailed ? ` and cuInit failed with ${libcuda.cu_init_name ?? libcuda.cu_init}` : ', and cuInit succeeded'}.`
          : '';
        add(
          libcudaFailed ? 'error' : 'warning',
          'driver.forward_compat',
          `${driverText} It runs only through forward compatibility: LD_LIBRARY_PATH puts ${activeCompat.dir} (libcuda ${activeCompat.libcudaVersion}, CUDA ${compatCuda}) in front.${loaded} That works only on data-center GPUs and only in processes that inherit this LD_LIBRARY_PATH; any other shell, service or container fails with "CUDA driver version is insufficient for CUDA runtime version".`,
          upgrade,
        );
      } else if (tooNew.some((n) => n.cuda.split('.')[0] !== driverCuda.split('.')[0])) {
        add(
          'error',
          'driver.cuda_too_old',
          `${driverText} CUDA calls will fail with "CUDA driver version is insufficient for CUDA runtime version".`,
          upgrade,
        );
      } else {
        add(
          'warning',
          'driver.minor_version_compat',
          `${driverText} It runs through minor-version compatibility: machine code works, but PTX from the newer toolkit cannot be JIT-compiled ("the provided PTX was compiled with an unsupported toolchain") and newer driver features are missing.`,
          `Install driver >= ${minDriver ?? `one for CUDA ${newest}`}, and embed SASS for the GPU (code=sm_90a) rather than PTX only.`,
        );
      }
    } else if (activeCompat) {
      add(
        'warning',
        'compat.unneeded',
        `LD_LIBRARY_PATH puts the forward-compat libraries ${activeCompat.dir} (libcuda ${activeCompat.libcudaVersion}) in front, but driver ${driverVersion} already supports CUDA ${driverCuda}, enough for ${needs.map((n) => n.who).join(' and ') || 'this machine'}.`,
        `Remove ${activeCompat.dir} from LD_LIBRARY_PATH: the driver's own libcuda is the one to use.`,
      );
    }
    if (
      activeCompat?.libcudaVersion &&
      compareVersions(activeCompat.libcudaVersion, driverVersion) < 0
    ) {
      add(
        'error',
        'compat.older_than_driver',
        `The forward-compat libcuda in ${activeCompat.dir} (${activeCompat.libcudaVersion}) is older than the loaded driver (${driverVersion}): CUDA initialisation fails with "system has unsupported display driver / cuda driver combination" (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH).`,
        `Remove ${activeCompat.dir} from LD_LIBRARY_PATH.`,
      );
    }
  }
  if (activeCompat && !isDatacenter && first) {
    add(
      'error',
      'compat.unsupported_gpu',
      `Forward-compat libraries (${activeCompat.dir}) are in LD_LIBRARY_PATH, but ${first.name} is not a data-center GPU: CUDA fails with "forward compatibility was attempted on non supported HW".`,
      `Remove ${activeCompat.dir} from LD_LIBRARY_PATH and install a driver that supports the runtime.`,
    );
  }
  if (libcuda?.error && first) {
    add(
      'error',
      'driver.libcuda_not_loaded',
      `libcuda.so.1 could not be loaded: ${libcuda.error}`,
      "Install the driver's user-space libraries (libcuda) into the runner or container (nvidia-container-toolkit maps them in).",
    );
  } else if (libcudaFailed && !diagnostics.some((d) => d.code === 'driver.forward_compat')) {
    add(
      'error',
      'driver.cuinit_failed',
      `cuInit failed with ${libcuda?.cu_init_name ?? libcuda?.cu_init}${libcuda?.path ? ` (libcuda loaded from ${libcuda.path})` : ''}: no CUDA program can run here.`,
      'Compare the loaded libcuda with the kernel module (cat /proc/driver/nvidia/version) and remove any compat folder from LD_LIBRARY_PATH that does not match.',
    );
  }

  // -- torch --
  if (probe && probe.torch === undefined) {
    add(
      'warning',
      'python.torch_missing',
      `torch is not importable from ${python}: ${probe.torch_error ?? 'not installed'}. The harness needs it for references and timing.`,
      `${python} -m pip install torch (built for CUDA ${driverCuda ?? runtime ?? 'of the driver'}).`,
    );
  } else if (probe && first) {
    if (!probe.torch_cuda) {
      add(
        'error',
        'torch.cpu_only',
        `torch ${probe.torch} is a CPU-only build on a machine with ${first.name}: nothing can run on the GPU.`,
        `Install a CUDA build of torch for this driver (CUDA ${driverCuda ?? '?'}), e.g. pip install torch --index-url https://download.pytorch.org/whl/cu${(driverCuda ?? '13.0').replace('.', '')}.`,
      );
    } else if (probe.cuda_available === false) {
      const said = probe.cuda_init_warning ?? 'no reason given';
      const known = diagnoseOutput(said, 'doctor')[0];
      add(
        'error',
        'torch.cuda_unavailable',
        `torch ${probe.torch} cannot use the GPU: ${said}${known ? ` (${known.code})` : ''}`,
        known?.fix ?? 'Run `python -c "import torch; torch.cuda.init()"` to see the full error.',
      );
    }
  }
  if (probe && probe.triton === undefined) {
    add(
      'info',
      'python.triton_missing',
      `triton is not importable from ${python}: Triton variants will be skipped.`,
      `${python} -m pip install triton`,
    );
  }
  if (
    torchCuda &&
    toolkitRuntime &&
    majorMinor(torchCuda).split('.')[0] !== toolkitRuntime.split('.')[0]
  ) {
    add(
      'info',
      'toolkit.torch_cuda_differs',
      `torch is built for CUDA ${torchCuda} and nvcc is ${toolkitRuntime}: the CUDA variants carry their own runtime (static cudart), so two CUDA runtimes share the harness process.`,
      'Prefer a torch built for the same CUDA major version as nvcc.',
    );
  }

  // -- each GPU: architecture, clocks, power, ECC, modes, other work --
  for (const g of reading.gpus) {
    const who = reading.gpus.length > 1 ? `GPU ${g.index} (${g.name}, ${g.busId})` : g.name;
    const cc = g.index === 0 ? capability : modelCapability(g.sku);
    if (cc) {
      const sm = `sm_${cc.replace('.', '')}`;
      const runnable = targetArchs.filter((t) => t.replace(/[af]$/, '') === sm);
      if (runnable.length === 0) {
        add(
          'warning',
          'gpu.arch_mismatch',
          `${who} is compute capability ${cc}, but the CUDA variants are built for ${targetArchs.join(', ')} only; arch-specific (a) machine code runs only on its own architecture, so they will fail with "no kernel image is available for execution on the device".`,
          `Run on a GPU of compute capability ${targetArchs.map((t) => t.replace(/^sm_(\d+)(\d)[af]?$/, '$1.$2')).join(' or ')} (H100/H200 for sm_90a), or add -gencode=arch=compute_${sm.slice(3)},code=${sm} for code that does not need the arch-specific features.`,
        );
      }
    }
    const badReasons = g.clockEventReasons.filter((r) => !BENIGN_CLOCK_REASONS.has(r));
    if (badReasons.length > 0) {
      add(
        'warning',
        'gpu.clocks_limited',
        `${who} clocks are being held down now (${badReasons.map((r) => CLOCK_REASON_TEXT[r] ?? r).join('; ')}): SM clock ${g.smClockMhz ?? '?'} of ${g.smClockMaxMhz ?? '?'} MHz.`,
        'Check cooling and power (nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE); the harness discards samples taken while throttled, so a throttling GPU makes runs long and noisy.',
      );
    }
    if (
      g.appClockMhz !== undefined &&
      g.smClockMaxMhz !== undefined &&
      g.appClockMhz < g.smClockMaxMhz
    ) {
      add(
        'warning',
        'gpu.application_clocks_low',
        `${who} application clocks are set to ${g.appClockMhz} MHz, below its ${g.smClockMaxMhz} MHz maximum: every kernel runs slower than on a default-configured GPU.`,
        'Reset them on the runner (sudo nvidia-smi -rac), as the machine owner; kernelgate never changes clocks.',
      );
    }
    if (
      g.powerLimitW !== undefined &&
      g.powerLimitDefaultW !== undefined &&
      g.powerLimitW < g.powerLimitDefaultW
    ) {
      add(
        'warning',
        'gpu.power_limit_reduced',
        `${who} power limit is ${g.powerLimitW} W, below its default ${g.powerLimitDefaultW} W: compute-bound kernels will clock lower than baselines taken at the default.`,
        'Restore the default limit on the runner (sudo nvidia-smi -pl <default>), or keep baselines for this limit only.',
      );
    }
    if (g.persistenceMode === 'Disabled') {
      add(
        'warning',
        'gpu.persistence_off',
        `${who} has persistence mode off: the driver tears the GPU down between processes, so each run pays the initialisation again and starts from idle clocks.`,
        'Enable it on the runner once per boot (sudo nvidia-smi -pm 1, or run nvidia-persistenced).',
      );
    }
    if (g.eccMode === 'Disabled') {
      add(
        'warning',
        'gpu.ecc_disabled',
        `${who} has ECC off: memory-bound kernels run a little faster than on production GPUs with ECC on, and memory errors go unnoticed.`,
        'Keep ECC on (the default on data-center GPUs) so results compare with baselines: sudo nvidia-smi -e 1 and a reset.',
      );
    }
    if (g.eccPending && g.eccMode && g.eccPending !== g.eccMode) {
      add(
        'warning',
        'gpu.ecc_pending',
        `${who} ECC mode will change from ${g.eccMode} to ${g.eccPending} at the next reset: results before and after will differ.`,
        'Reset the GPU (or reboot) before taking baselines.',
      );
    }
    if ((g.eccVolatileUncorrectable ?? 0) > 0 || g.rowRemapPending) {
      add(
        'error',
        'gpu.ecc_uncorrectable',
        `${who} reported ${g.eccVolatileUncorrectable ?? 0} uncorrectable ECC errors since the driver loaded${g.rowRemapPending ? ' and has a row remapping pending or failed' : ''}: results from this GPU cannot be trusted.`,
        'Drain the runner and reset the GPU (or reboot) so the row remapping takes effect; replace it if errors return.',
      );
    } else if ((g.eccVolatileCorrectable ?? 0) > 0) {
      add(
        'info',
        'gpu.ecc_correctable',
        `${who} corrected ${g.eccVolatileCorrectable} ECC errors since the driver loaded.`,
        'Nothing to do unless the count keeps growing.',
      );
    }
    if (g.migMode === 'Enabled') {
      add(
        'warning',
        'gpu.mig_enabled',
        `${who} is in MIG mode: kernels run on a slice with a fraction of the SMs and memory bandwidth, so the datasheet peaks and full-GPU baselines do not apply.`,
        'Disable MIG on the runner (sudo nvidia-smi -mig 0 and a reset), or keep baselines for this MIG profile only.',
      );
    } else if (g.migPending && g.migMode && g.migPending !== g.migMode) {
      add(
        'warning',
        'gpu.mig_pending',
        `${who} MIG mode changes from ${g.migMode} to ${g.migPending} at the next reset.`,
        'Reset the GPU before taking baselines.',
      );
    }
    if (g.computeMode === 'Prohibited') {
      add(
        'error',
        'gpu.compute_prohibited',
        `${who} compute mode is Prohibited: no CUDA context can be created.`,
        'Set the compute mode to Default on the runner (sudo nvidia-smi -c 0).',
      );
    }
    if (g.processes.length > 0) {
      const list = g.processes
        .map(
          (p) =>
            `pid ${p.pid} ${p.name}${p.usedMemoryMiB !== undefined ? ` ${p.usedMemoryMiB} MiB` : ''}`,
        )
        .join(', ');
      add(
        'warning',
        'gpu.busy',
        `${who} is in use by ${g.processes.length} other process${g.processes.length === 1 ? '' : 'es'} (${list}): timings will include their work and memory may run out.`,
        'Give kernelgate the GPU alone: one job per GPU on the runner, and no other services on it.',
      );
    } else if ((g.utilizationPct ?? 0) > 10) {
      add(
        'warning',
        'gpu.busy',
        `${who} is ${g.utilizationPct}% busy but no process is visible from here (another container?): timings will include its work.`,
        'Give kernelgate the GPU alone: one job per GPU on the runner, and no other services on it.',
      );
    }
    if (g.pcieWidth !== undefined && g.pcieWidthMax !== undefined && g.pcieWidth < g.pcieWidthMax) {
      add(
        'info',
        'gpu.pcie_narrow',
        `${who} PCIe link runs at x${g.pcieWidth} of x${g.pcieWidthMax}: host-device copies are slower; kernel timings are not affected.`,
        'Reseat the card or check the slot if copies matter.',
      );
    }
  }

  const facts: DoctorFacts = {
    gpus: reading.gpus.map(gpuFacts),
    compatDirs,
  };
  if (kernelModuleVersion) facts.kernelModuleVersion = kernelModuleVersion;
  if (libcuda) facts.libcuda = libcuda;
  if (toolkit) facts.toolkit = toolkit;
  return { environment, diagnostics, facts };
}

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/** The report as plain text for a terminal (`kernelgate doctor`): the machine, then each finding and its fix. */
export function describeDoctor(report: DoctorReport): string {
  const { environment: env, facts } = report;
  const lines: string[] = [];
  const gpu = env.gpu;
  if (gpu.count === 0) {
    lines.push('GPU        none');
  } else {
    const details = [
      gpu.sku,
      gpu.compute_capability ? `compute capability ${gpu.compute_capability}` : undefined,
      gpu.sm_count ? `${gpu.sm_count} SMs` : undefined,
      gpu.memory_bytes ? gib(gpu.memory_bytes) : undefined,
    ].filter(Boolean);
    lines.push(
      `GPU        ${gpu.name} (${details.join(', ')})${(gpu.count ?? 1) > 1 ? ` x${gpu.count}` : ''}`,
    );
  }
  if (env.driver_version) {
    const module =
      facts.kernelModuleVersion && facts.kernelModuleVersion !== env.driver_version
        ? `; kernel module ${facts.kernelModuleVersion}`
        : '';
    lines.push(
      `Driver     ${env.driver_version} (CUDA ${env.driver_cuda_version ?? '?'})${module}`,
    );
  }
  if (env.cuda_runtime_version || env.cuda_toolkit_version) {
    lines.push(
      `CUDA       runtime ${env.cuda_runtime_version ?? '?'}, toolkit ${env.cuda_toolkit_version ?? 'not found'}`,
    );
  }
  for (const compat of facts.compatDirs) {
    lines.push(
      `Compat     ${compat.dir} (libcuda ${compat.libcudaVersion ?? 'none'}) in LD_LIBRARY_PATH`,
    );
  }
  if (facts.libcuda?.path)
    lines.push(
      `libcuda    ${facts.libcuda.path} (cuInit ${facts.libcuda.cu_init_name ?? facts.libcuda.cu_init})`,
    );
  const libs = Object.entries(env.libraries ?? {}).filter(
    ([name]) => name !== 'nvidia_kernel_module' && name !== 'cuda_compat',
  );
  if (libs.length > 0)
    lines.push(`Libraries  ${libs.map(([name, version]) => `${name} ${version}`).join(', ')}`);
  for (const g of facts.gpus) {
    const prefix = facts.gpus.length > 1 ? `GPU ${g.index}: ` : '';
    lines.push(
      `State      ${prefix}SM ${g.smClockMhz ?? '?'}/${g.smClockMaxMhz ?? '?'} MHz, power ${g.powerDrawW ?? '?'}/${g.powerLimitW ?? '?'} W, ${g.temperatureC ?? '?'} C, persistence ${g.persistenceMode ?? '?'}, ECC ${g.eccMode ?? '?'}, MIG ${g.migMode ?? '?'}, ${g.processes.length} other process${g.processes.length === 1 ? '' : 'es'}`,
    );
  }
  lines.push('');
  if (report.diagnostics.length === 0) lines.push('No problems found.');
  for (const d of report.diagnostics) {
    lines.push(`${d.level.toUpperCase()} ${d.code}: ${d.message}`);
    if (d.fix) lines.push(`  fix: ${d.fix}`);
  }
  return `${lines.join('\n')}\n`;
}
