// The doctor's checks of the driver, the CUDA runtimes, the forward-compat layer, libcuda, torch
// and triton: each looks at the machine (and what earlier checks found) and returns diagnostics.
import type { Diagnostic } from '../../results/index.js';
import { diagnoseOutput } from '../diagnose.js';
import { doctorDiagnostic as diag, type Machine } from './machine.js';
import { compareVersions, cudaForDriver, majorMinor, minDriverFor } from './versions.js';

export type MachineCheck = (m: Machine, found: readonly Diagnostic[]) => Diagnostic[];

const DATACENTER_BRANDS = new Set(['NVIDIA', 'Tesla']);

/** What needs which CUDA: torch's build and nvcc's release. */
function cudaNeeds(m: Machine): { who: string; cuda: string }[] {
  const needs: { who: string; cuda: string }[] = [];
  if (m.torchCuda) {
    needs.push({
      who: `torch ${m.probe?.torch} (CUDA ${m.torchCuda})`,
      cuda: majorMinor(m.torchCuda),
    });
  }
  if (m.toolkitRuntime) {
    needs.push({ who: `nvcc ${m.toolkitRuntime}`, cuda: majorMinor(m.toolkitRuntime) });
  }
  return needs;
}

/** A runtime newer than the driver: through forward compat, minor-version compat, or not at all. */
const runtimeNewerThanDriver: MachineCheck = (m) => {
  const { driverVersion, driverCuda, activeCompat, libcuda, libcudaFailed } = m;
  if (!driverVersion || !driverCuda) return [];
  const tooNew = cudaNeeds(m).filter((n) => compareVersions(n.cuda, driverCuda) > 0);
  if (tooNew.length === 0) return [];
  const newest = tooNew
    .map((n) => n.cuda)
    .sort(compareVersions)
    .pop() as string;
  const minDriver = minDriverFor(newest);
  const needText = `${tooNew.map((n) => n.who).join(' and ')} need${tooNew.length === 1 ? 's' : ''} CUDA ${newest}${minDriver ? ` (driver >= ${minDriver})` : ''}`;
  const driverText = `Driver ${driverVersion} supports CUDA <= ${driverCuda}, but ${needText}.`;
  const upgrade = `Install driver >= ${minDriver ?? `one for CUDA ${newest}`}${activeCompat ? ` and take ${activeCompat.dir} out of LD_LIBRARY_PATH` : ''}; or build with a CUDA ${driverCuda} toolkit (and a torch built for it) that driver ${driverVersion.split('.')[0]} supports natively.`;
  const compatCuda = activeCompat?.libcudaVersion
    ? cudaForDriver(activeCompat.libcudaVersion)
    : undefined;
  if (activeCompat && compatCuda && compareVersions(compatCuda, newest) >= 0) {
    const loaded = libcuda?.path
      ? ` The probe loaded ${libcuda.path}${libcudaFailed ? ` and cuInit failed with ${libcuda.cu_init_name ?? libcuda.cu_init}` : ', and cuInit succeeded'}.`
      : '';
    return [
      diag(
        libcudaFailed ? 'error' : 'warning',
        'driver.forward_compat',
        `${driverText} It runs only through forward compatibility: LD_LIBRARY_PATH puts ${activeCompat.dir} (libcuda ${activeCompat.libcudaVersion}, CUDA ${compatCuda}) in front.${loaded} That works only on data-center GPUs and only in processes that inherit this LD_LIBRARY_PATH; any other shell, service or container fails with "CUDA driver version is insufficient for CUDA runtime version".`,
        upgrade,
      ),
    ];
  }
  if (tooNew.some((n) => n.cuda.split('.')[0] !== driverCuda.split('.')[0])) {
    return [
      diag(
        'error',
        'driver.cuda_too_old',
        `${driverText} CUDA calls will fail with "CUDA driver version is insufficient for CUDA runtime version".`,
        upgrade,
      ),
    ];
  }
  return [
    diag(
      'warning',
      'driver.minor_version_compat',
      `${driverText} It runs through minor-version compatibility: machine code works, but PTX from the newer toolkit cannot be JIT-compiled ("the provided PTX was compiled with an unsupported toolchain") and newer driver features are missing.`,
      `Install driver >= ${minDriver ?? `one for CUDA ${newest}`}, and embed SASS for the GPU (code=sm_90a) rather than PTX only.`,
    ),
  ];
};

/** A compat layer in front although the driver supports every runtime in use. */
const compatUnneeded: MachineCheck = (m) => {
  const { driverVersion, driverCuda, activeCompat } = m;
  if (!driverVersion || !driverCuda || !activeCompat) return [];
  const needs = cudaNeeds(m);
  if (needs.some((n) => compareVersions(n.cuda, driverCuda) > 0)) return [];
  return [
    diag(
      'warning',
      'compat.unneeded',
      `LD_LIBRARY_PATH puts the forward-compat libraries ${activeCompat.dir} (libcuda ${activeCompat.libcudaVersion}) in front, but driver ${driverVersion} already supports CUDA ${driverCuda}, enough for ${needs.map((n) => n.who).join(' and ') || 'this machine'}.`,
      `Remove ${activeCompat.dir} from LD_LIBRARY_PATH: the driver's own libcuda is the one to use.`,
    ),
  ];
};

const compatOlderThanDriver: MachineCheck = ({ driverVersion, driverCuda, activeCompat }) =>
  driverVersion &&
  driverCuda &&
  activeCompat?.libcudaVersion &&
  compareVersions(activeCompat.libcudaVersion, driverVersion) < 0
    ? [
        diag(
          'error',
          'compat.older_than_driver',
          `The forward-compat libcuda in ${activeCompat.dir} (${activeCompat.libcudaVersion}) is older than the loaded driver (${driverVersion}): CUDA initialisation fails with "system has unsupported display driver / cuda driver combination" (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH).`,
          `Remove ${activeCompat.dir} from LD_LIBRARY_PATH.`,
        ),
      ]
    : [];

const compatOnConsumerGpu: MachineCheck = ({ first, activeCompat }) => {
  if (!first || !activeCompat) return [];
  const datacenter = DATACENTER_BRANDS.has(first.brand ?? '') || /^(H|A|L|B|GH)\d/.test(first.sku);
  if (datacenter) return [];
  return [
    diag(
      'error',
      'compat.unsupported_gpu',
      `Forward-compat libraries (${activeCompat.dir}) are in LD_LIBRARY_PATH, but ${first.name} is not a data-center GPU: CUDA fails with "forward compatibility was attempted on non supported HW".`,
      `Remove ${activeCompat.dir} from LD_LIBRARY_PATH and install a driver that supports the runtime.`,
    ),
  ];
};

const libcudaLoads: MachineCheck = ({ first, libcuda, libcudaFailed }, found) => {
  if (libcuda?.error && first) {
    return [
      diag(
        'error',
        'driver.libcuda_not_loaded',
        `libcuda.so.1 could not be loaded: ${libcuda.error}`,
        "Install the driver's user-space libraries (libcuda) into the runner or container (nvidia-container-toolkit maps them in).",
      ),
    ];
  }
  if (libcudaFailed && !found.some((d) => d.code === 'driver.forward_compat')) {
    return [
      diag(
        'error',
        'driver.cuinit_failed',
        `cuInit failed with ${libcuda?.cu_init_name ?? libcuda?.cu_init}${libcuda?.path ? ` (libcuda loaded from ${libcuda.path})` : ''}: no CUDA program can run here.`,
        'Compare the loaded libcuda with the kernel module (cat /proc/driver/nvidia/version) and remove any compat folder from LD_LIBRARY_PATH that does not match.',
      ),
    ];
  }
  return [];
};

const torchUsesTheGpu: MachineCheck = ({ probe, first, python, driverCuda, runtime }) => {
  if (probe && probe.torch === undefined) {
    return [
      diag(
        'warning',
        'python.torch_missing',
        `torch is not importable from ${python}: ${probe.torch_error ?? 'not installed'}. The harness needs it for references and timing.`,
        `${python} -m pip install torch (built for CUDA ${driverCuda ?? runtime ?? 'of the driver'}).`,
      ),
    ];
  }
  if (!probe || !first) return [];
  if (!probe.torch_cuda) {
    return [
      diag(
        'error',
        'torch.cpu_only',
        `torch ${probe.torch} is a CPU-only build on a machine with ${first.name}: nothing can run on the GPU.`,
        `Install a CUDA build of torch for this driver (CUDA ${driverCuda ?? '?'}), e.g. pip install torch --index-url https://download.pytorch.org/whl/cu${(driverCuda ?? '13.0').replace('.', '')}.`,
      ),
    ];
  }
  if (probe.cuda_available !== false) return [];
  const said = probe.cuda_init_warning ?? 'no reason given';
  const known = diagnoseOutput(said, 'doctor')[0];
  return [
    diag(
      'error',
      'torch.cuda_unavailable',
      `torch ${probe.torch} cannot use the GPU: ${said}${known ? ` (${known.code})` : ''}`,
      known?.fix ?? 'Run `python -c "import torch; torch.cuda.init()"` to see the full error.',
    ),
  ];
};

const tritonImports: MachineCheck = ({ probe, python }) =>
  probe && probe.triton === undefined
    ? [
        diag(
          'info',
          'python.triton_missing',
          `triton is not importable from ${python}: Triton variants will be skipped.`,
          `${python} -m pip install triton`,
        ),
      ]
    : [];

const torchAndNvccCudaDiffer: MachineCheck = ({ torchCuda, toolkitRuntime }) =>
  torchCuda &&
  toolkitRuntime &&
  majorMinor(torchCuda).split('.')[0] !== toolkitRuntime.split('.')[0]
    ? [
        diag(
          'info',
          'toolkit.torch_cuda_differs',
          `torch is built for CUDA ${torchCuda} and nvcc is ${toolkitRuntime}: the CUDA variants carry their own runtime (static cudart), so two CUDA runtimes share the harness process.`,
          'Prefer a torch built for the same CUDA major version as nvcc.',
        ),
      ]
    : [];

/** The machine-wide checks, in the order their findings are reported. */
export const MACHINE_CHECKS: readonly MachineCheck[] = [
  runtimeNewerThanDriver,
  compatUnneeded,
  compatOlderThanDriver,
  compatOnConsumerGpu,
  libcudaLoads,
  torchUsesTheGpu,
  tritonImports,
  torchAndNvccCudaDiffer,
];
