// Section `environment` (partials/environment.md.mustache): the GPU, driver, libraries, ceilings.
import { type Cell, fixed, table } from '../lib/index.js';
import { stagesLine } from './builds.js';
import { devicesTable } from './devices.js';
import type { ReportInput } from './types.js';
import type { EnvironmentView } from './view-types.js';

export function environmentView(input: ReportInput): EnvironmentView {
  const env = input.results.environment;
  const gpu = env.gpu;
  const rows: Cell[][] = [
    ['GPU', `${gpu.name}${gpu.count && gpu.count > 1 ? ` × ${gpu.count}` : ''}`],
    ['SKU', gpu.sku ?? 'unknown'],
  ];
  const add = (what: string, value: string | number | undefined) => {
    if (value !== undefined) rows.push([what, String(value)]);
  };
  add('compute capability', gpu.compute_capability);
  add('SMs', gpu.sm_count);
  add('memory GiB', gpu.memory_bytes && fixed(gpu.memory_bytes / 2 ** 30, 1));
  add('L2 MiB', gpu.l2_bytes && fixed(gpu.l2_bytes / 2 ** 20, 0));
  add('max SM clock MHz', gpu.sm_clock_max_mhz);
  add('power limit W', gpu.power_limit_w);
  add('driver', env.driver_version);
  add('driver supports CUDA', env.driver_cuda_version);
  add('CUDA runtime', env.cuda_runtime_version);
  add('CUDA toolkit (nvcc)', env.cuda_toolkit_version);
  for (const [lib, version] of Object.entries(env.libraries ?? {}).sort()) add(lib, version);
  const c = env.ceilings;
  add('measured copy GB/s', c?.copy_gbps && fixed(c.copy_gbps, 0));
  for (const [dtype, tflops] of Object.entries(c?.gemm_tflops ?? {})) {
    add(`measured cuBLAS GEMM ${dtype} TFLOPS`, fixed(tflops, 1));
  }
  // a pull request whose calibration kernel is identical takes them from a stored run (--ceilings)
  add('ceilings measured by', c?.source && `${c.source} (the calibration kernel is identical)`);
  const sku = gpu.sku;
  const peaks = sku ? input.config.peaks[sku] : undefined;
  for (const [dtype, tflops] of Object.entries(peaks?.tflops ?? c?.peak_tflops ?? {})) {
    add(`datasheet peak ${dtype} TFLOPS`, fixed(tflops, 1));
  }
  add('datasheet bandwidth GB/s', peaks?.gbps ?? c?.peak_gbps);
  return {
    table: table(['fact', 'value'], rows, ['l', 'l']),
    stages: stagesLine(input.results, input.baseline),
    devices: devicesTable(input.results) || undefined,
  };
}
