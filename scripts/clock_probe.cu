// The SM clock while another kernel runs (issue 28's experiments, scripts/fa-experiment.py
// --clock-probe): one warp's thread 0, launched on a second stream just before the kernel under
// study, reads the global timer (ns) and its SM's cycle counter every `period_ns` until
// `duration_ns` have passed, into out[2 i] (ns) and out[2 i + 1] (cycles). The cycles between two
// readings over the nanoseconds between them are the SM clock of that interval, as the chip ran
// it: NVML's reading is a sample of what the driver asked for, taken by the host. The probe needs
// one warp's registers and no shared memory, so it shares an SM with the kernel under study where
// that kernel leaves room; where not, that SM takes no block of it until the probe ends.
// kg_clock_stamp, queued on the kernel's stream before and after it, says which readings fall within
// its run. Built by scripts/fa-experiment.py (nvcc -shared), called through ctypes; not part of the
// kernel set.
#include <cuda_runtime.h>
#include <stdint.h>

namespace {

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_probe_kernel(uint64_t* out, int max_samples, uint64_t duration_ns, uint32_t period_ns,
                                   int* count) {
  if (threadIdx.x != 0) return;
  const uint64_t t0 = global_ns();
  out[0] = t0;
  out[1] = clock64();
  int n = 1;
  uint64_t next = t0 + period_ns;
  while (n < max_samples) {
    const uint64_t t = global_ns();
    if (t < next) continue;
    out[2 * n] = t;
    out[2 * n + 1] = clock64();
    ++n;
    next = t + period_ns;
    if (t - t0 >= duration_ns) break;
  }
  *count = n;
}

__global__ void clock_stamp_kernel(uint64_t* out) { *out = global_ns(); }

}  // namespace

// out: 2 * max_samples uint64 on the device; count: one int on the device. 0 or a cudaError_t.
extern "C" int kg_clock_probe(void* out, int max_samples, unsigned long long duration_ns, unsigned period_ns,
                              void* count, void* stream) {
  if (out == nullptr || count == nullptr || max_samples < 2) return cudaErrorInvalidValue;
  clock_probe_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint64_t*>(out), max_samples,
                                                                      duration_ns, period_ns, static_cast<int*>(count));
  return static_cast<int>(cudaGetLastError());
}

// The global timer (ns) into *out (one uint64 on the device) when the stream reaches it: queued
// before and after the kernel under study, it bounds that kernel's run on the probe's time line.
extern "C" int kg_clock_stamp(void* out, void* stream) {
  if (out == nullptr) return cudaErrorInvalidValue;
  clock_stamp_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint64_t*>(out));
  return static_cast<int>(cudaGetLastError());
}
