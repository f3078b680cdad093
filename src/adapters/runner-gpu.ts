// The runner's GPU, for a tool's output that names none (Google Benchmark and pytest-benchmark
// without a GPU in their context): what nvidia-smi says, when it is there.
import { gpuModel } from '../config/index.js';
import type { Exec } from '../lib/index.js';
import type { Environment } from '../results/index.js';

/** The first GPU nvidia-smi lists, with its model and the count; undefined without nvidia-smi. */
export async function runnerGpu(exec: Exec): Promise<Environment['gpu'] | undefined> {
  const smi = await exec
    .run('nvidia-smi', ['--query-gpu=name,pci.device_id', '--format=csv,noheader'], {
      timeoutS: 30,
    })
    .catch(() => undefined);
  if (smi === undefined || smi.exitCode !== 0) return undefined;
  const lines = smi.stdout.split(/\r?\n/).filter((l) => l.trim() !== '');
  const [name, pciDeviceId] = (lines[0] ?? '').split(',').map((s) => s.trim());
  if (name === undefined || name === '') return undefined;
  return {
    name,
    sku: gpuModel(name, pciDeviceId),
    ...(pciDeviceId ? { pci_device_id: pciDeviceId } : {}),
    count: lines.length,
  };
}

/**
 * The results' environment with the runner's GPU where the tools named none: `none` is kept only
 * where nvidia-smi is absent too (a CPU machine).
 */
export async function withRunnerGpu(
  environment: Environment,
  exec: Exec,
): Promise<{ environment: Environment; from?: string }> {
  if (environment.gpu.name !== 'none') return { environment };
  const gpu = await runnerGpu(exec);
  if (gpu === undefined) return { environment };
  return { environment: { ...environment, gpu }, from: `${gpu.name} (nvidia-smi on this machine)` };
}
