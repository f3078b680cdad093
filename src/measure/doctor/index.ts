// The doctor: the machine checked before anything is timed (GPU, driver and CUDA, clocks, power,
// ECC, other work), facts for the results' environment and diagnostics with fixes. Its only door.
export {
  benchmarkBinaryChecks,
  binaryRuntime,
  commandBinaries,
  slowPathChecks,
  type BinaryRuntime,
} from './checks-benchmarks.js';
export { MACHINE_CHECKS, type MachineCheck } from './checks-driver.js';
export { GPU_CHECKS, type GpuCheck } from './checks-gpu.js';
export { describeDoctor } from './describe.js';
export { runDoctor } from './doctor.js';
export { PYTHON_PROBE } from './probe.js';
export { gpuSku, parseNvidiaSmiXml, type SmiGpu, type SmiReading } from './smi.js';
export type * from './types.js';
export { cudaForDriver, cudnnVersion } from './versions.js';
