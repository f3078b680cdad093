// The doctor's checks of each GPU: architecture, clocks, power, ECC, modes, other work on it.
// Each looks at one GPU and returns diagnostics; they run per GPU in this order.
import { modelCapability } from '../../config/index.js';
import type { Diagnostic } from '../../results/index.js';
import { doctorDiagnostic as diag, type Machine } from './machine.js';
import type { SmiGpu } from './smi.js';

/** `who` names the GPU in messages (its name, with index and bus id when there are several). */
export type GpuCheck = (g: SmiGpu, who: string, m: Machine) => Diagnostic[];

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

const archMatchesBuild: GpuCheck = (g, who, m) => {
  const cc = g.index === 0 ? m.capability : modelCapability(g.sku);
  if (!cc) return [];
  const sm = `sm_${cc.replace('.', '')}`;
  const { targetArchs } = m;
  if (targetArchs.some((t) => t.replace(/[af]$/, '') === sm)) return [];
  return [
    diag(
      'warning',
      'gpu.arch_mismatch',
      `${who} is compute capability ${cc}, but the CUDA variants are built for ${targetArchs.join(', ')} only; arch-specific (a) machine code runs only on its own architecture, so they will fail with "no kernel image is available for execution on the device".`,
      `Run on a GPU of compute capability ${targetArchs.map((t) => t.replace(/^sm_(\d+)(\d)[af]?$/, '$1.$2')).join(' or ')} (H100/H200 for sm_90a), or add -gencode=arch=compute_${sm.slice(3)},code=${sm} for code that does not need the arch-specific features.`,
    ),
  ];
};

const clocksNotHeldDown: GpuCheck = (g, who) => {
  const badReasons = g.clockEventReasons.filter((r) => !BENIGN_CLOCK_REASONS.has(r));
  if (badReasons.length === 0) return [];
  return [
    diag(
      'warning',
      'gpu.clocks_limited',
      `${who} clocks are being held down now (${badReasons.map((r) => CLOCK_REASON_TEXT[r] ?? r).join('; ')}): SM clock ${g.smClockMhz ?? '?'} of ${g.smClockMaxMhz ?? '?'} MHz.`,
      'Check cooling and power (nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE); the harness discards samples taken while throttled, so a throttling GPU makes runs long and noisy.',
    ),
  ];
};

const applicationClocksAtMax: GpuCheck = (g, who) =>
  g.appClockMhz !== undefined && g.smClockMaxMhz !== undefined && g.appClockMhz < g.smClockMaxMhz
    ? [
        diag(
          'warning',
          'gpu.application_clocks_low',
          `${who} application clocks are set to ${g.appClockMhz} MHz, below its ${g.smClockMaxMhz} MHz maximum: every kernel runs slower than on a default-configured GPU.`,
          'Reset them on the runner (sudo nvidia-smi -rac), as the machine owner; kernelgate never changes clocks.',
        ),
      ]
    : [];

const powerLimitAtDefault: GpuCheck = (g, who) =>
  g.powerLimitW !== undefined &&
  g.powerLimitDefaultW !== undefined &&
  g.powerLimitW < g.powerLimitDefaultW
    ? [
        diag(
          'warning',
          'gpu.power_limit_reduced',
          `${who} power limit is ${g.powerLimitW} W, below its default ${g.powerLimitDefaultW} W: compute-bound kernels will clock lower than baselines taken at the default.`,
          'Restore the default limit on the runner (sudo nvidia-smi -pl <default>), or keep baselines for this limit only.',
        ),
      ]
    : [];

const persistenceOn: GpuCheck = (g, who) =>
  g.persistenceMode === 'Disabled'
    ? [
        diag(
          'warning',
          'gpu.persistence_off',
          `${who} has persistence mode off: the driver tears the GPU down between processes, so each run pays the initialisation again and starts from idle clocks.`,
          'Enable it on the runner once per boot (sudo nvidia-smi -pm 1, or run nvidia-persistenced).',
        ),
      ]
    : [];

const eccModeSteady: GpuCheck = (g, who) => {
  const found: Diagnostic[] = [];
  if (g.eccMode === 'Disabled') {
    found.push(
      diag(
        'warning',
        'gpu.ecc_disabled',
        `${who} has ECC off: memory-bound kernels run a little faster than on production GPUs with ECC on, and memory errors go unnoticed.`,
        'Keep ECC on (the default on data-center GPUs) so results compare with baselines: sudo nvidia-smi -e 1 and a reset.',
      ),
    );
  }
  if (g.eccPending && g.eccMode && g.eccPending !== g.eccMode) {
    found.push(
      diag(
        'warning',
        'gpu.ecc_pending',
        `${who} ECC mode will change from ${g.eccMode} to ${g.eccPending} at the next reset: results before and after will differ.`,
        'Reset the GPU (or reboot) before taking baselines.',
      ),
    );
  }
  return found;
};

const memoryErrorFree: GpuCheck = (g, who) => {
  if ((g.eccVolatileUncorrectable ?? 0) > 0 || g.rowRemapPending) {
    return [
      diag(
        'error',
        'gpu.ecc_uncorrectable',
        `${who} reported ${g.eccVolatileUncorrectable ?? 0} uncorrectable ECC errors since the driver loaded${g.rowRemapPending ? ' and has a row remapping pending or failed' : ''}: results from this GPU cannot be trusted.`,
        'Drain the runner and reset the GPU (or reboot) so the row remapping takes effect; replace it if errors return.',
      ),
    ];
  }
  if ((g.eccVolatileCorrectable ?? 0) > 0) {
    return [
      diag(
        'info',
        'gpu.ecc_correctable',
        `${who} corrected ${g.eccVolatileCorrectable} ECC errors since the driver loaded.`,
        'Nothing to do unless the count keeps growing.',
      ),
    ];
  }
  return [];
};

const wholeGpu: GpuCheck = (g, who) => {
  if (g.migMode === 'Enabled') {
    return [
      diag(
        'warning',
        'gpu.mig_enabled',
        `${who} is in MIG mode: kernels run on a slice with a fraction of the SMs and memory bandwidth, so the datasheet peaks and full-GPU baselines do not apply.`,
        'Disable MIG on the runner (sudo nvidia-smi -mig 0 and a reset), or keep baselines for this MIG profile only.',
      ),
    ];
  }
  if (g.migPending && g.migMode && g.migPending !== g.migMode) {
    return [
      diag(
        'warning',
        'gpu.mig_pending',
        `${who} MIG mode changes from ${g.migMode} to ${g.migPending} at the next reset.`,
        'Reset the GPU before taking baselines.',
      ),
    ];
  }
  return [];
};

const computeAllowed: GpuCheck = (g, who) =>
  g.computeMode === 'Prohibited'
    ? [
        diag(
          'error',
          'gpu.compute_prohibited',
          `${who} compute mode is Prohibited: no CUDA context can be created.`,
          'Set the compute mode to Default on the runner (sudo nvidia-smi -c 0).',
        ),
      ]
    : [];

const ALONE_FIX =
  'Give kernelgate the GPU alone: one job per GPU on the runner, and no other services on it.';

const gpuIdle: GpuCheck = (g, who) => {
  if (g.processes.length > 0) {
    const list = g.processes
      .map(
        (p) =>
          `pid ${p.pid} ${p.name}${p.usedMemoryMiB !== undefined ? ` ${p.usedMemoryMiB} MiB` : ''}`,
      )
      .join(', ');
    return [
      diag(
        'warning',
        'gpu.busy',
        `${who} is in use by ${g.processes.length} other process${g.processes.length === 1 ? '' : 'es'} (${list}): timings will include their work and memory may run out.`,
        ALONE_FIX,
      ),
    ];
  }
  if ((g.utilizationPct ?? 0) > 10) {
    return [
      diag(
        'warning',
        'gpu.busy',
        `${who} is ${g.utilizationPct}% busy but no process is visible from here (another container?): timings will include its work.`,
        ALONE_FIX,
      ),
    ];
  }
  return [];
};

const pcieFullWidth: GpuCheck = (g, who) =>
  g.pcieWidth !== undefined && g.pcieWidthMax !== undefined && g.pcieWidth < g.pcieWidthMax
    ? [
        diag(
          'info',
          'gpu.pcie_narrow',
          `${who} PCIe link runs at x${g.pcieWidth} of x${g.pcieWidthMax}: host-device copies are slower; kernel timings are not affected.`,
          'Reseat the card or check the slot if copies matter.',
        ),
      ]
    : [];

/** The per-GPU checks, in the order their findings are reported for each GPU. */
export const GPU_CHECKS: readonly GpuCheck[] = [
  archMatchesBuild,
  clocksNotHeldDown,
  applicationClocksAtMax,
  powerLimitAtDefault,
  persistenceOn,
  eccModeSteady,
  memoryErrorFree,
  wholeGpu,
  computeAllowed,
  gpuIdle,
  pcieFullWidth,
];
