// `kernelgate doctor` on a terminal: the machine, then each finding and its fix.
import type { DoctorReport } from './types.js';

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
