// The results' `environment` section from what the doctor read of the machine.
import type { Environment, Gpu } from '../../results/index.js';
import type { Machine } from './machine.js';
import { cudnnVersion } from './versions.js';

function gpuOf(m: Machine): Gpu {
  const { first, capability } = m;
  const device = m.probe?.devices?.[0];
  const gpu: Gpu = first
    ? {
        name: first.name,
        sku: first.sku,
        ...(first.pciDeviceId ? { pci_device_id: first.pciDeviceId.toLowerCase() } : {}),
        count: m.reading.gpus.length,
      }
    : { name: 'none', sku: 'none', count: 0 };
  if (capability) gpu.compute_capability = capability;
  if (device?.sm_count) gpu.sm_count = device.sm_count;
  if (first?.memoryMiB !== undefined) gpu.memory_bytes = first.memoryMiB * 1024 * 1024;
  if (device?.l2_bytes) gpu.l2_bytes = device.l2_bytes;
  if (first?.smClockMaxMhz !== undefined) gpu.sm_clock_max_mhz = first.smClockMaxMhz;
  if (first?.memClockMaxMhz !== undefined) gpu.mem_clock_max_mhz = first.memClockMaxMhz;
  if (first?.powerLimitW !== undefined) gpu.power_limit_w = first.powerLimitW;
  return gpu;
}

function librariesOf(m: Machine): Record<string, string> {
  const { probe } = m;
  const libraries: Record<string, string> = {};
  if (probe?.python) libraries.python = probe.python;
  if (probe?.torch) libraries.torch = probe.torch;
  if (probe?.triton) libraries.triton = probe.triton;
  if (typeof probe?.cudnn === 'number') libraries.cudnn = cudnnVersion(probe.cudnn);
  if (m.kernelModuleVersion) libraries.nvidia_kernel_module = m.kernelModuleVersion;
  if (m.activeCompat?.libcudaVersion) libraries.cuda_compat = m.activeCompat.libcudaVersion;
  return libraries;
}

export function environmentOf(m: Machine): Environment {
  const environment: Environment = { gpu: gpuOf(m) };
  if (m.reading.driverVersion) environment.driver_version = m.reading.driverVersion;
  if (m.reading.driverCudaVersion) environment.driver_cuda_version = m.reading.driverCudaVersion;
  if (m.runtime) environment.cuda_runtime_version = m.runtime;
  if (m.toolkitRuntime) environment.cuda_toolkit_version = m.toolkitRuntime;
  const libraries = librariesOf(m);
  if (Object.keys(libraries).length > 0) environment.libraries = libraries;
  return environment;
}
