// The GPU work of issue 31's recordings (examples/tools/README.md): four small kernels of our own,
// timed by nvbench (nvbench_kernels.cu) and by Google Benchmark (gbench_kernels.cu).
//
// - copy:   dst[i] = src[i], memory-bound
// - saxpy:  y[i] = a * x[i] + y[i], memory-bound
// - reduce: the sum of x, a grid-stride loop, warp shuffles and one atomicAdd per block
// - fma:    each element runs a dependent chain of `iters` multiply-adds, compute-bound: its time
//           grows with `iters`, which KG_SLOW_PCT raises (fmaIters below). This is the slowed
//           benchmark of the head runs: the same binary, a fraction more iterations of the same
//           loop. The slowdown the GPU shows is measured, not assumed (the README says where).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kg_tools {

constexpr int kThreads = 256;
/** Elements of the memory-bound kernels: 32 Mi floats (128 MiB per buffer). */
constexpr size_t kElements = size_t{32} << 20;
/** Threads of the compute-bound kernel, one chain each. */
constexpr size_t kFmaElements = size_t{4} << 20;
/** Iterations of each chain in the base (unslowed) runs. */
constexpr int kFmaBaseIters = 1000;

inline void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

/**
 * The fma kernel's iterations: kFmaBaseIters, raised by KG_SLOW_PCT percent (rounded), so
 * KG_SLOW_PCT=2.5 gives 1025. Unset or empty is the base. A value that is not a number in
 * [0, 100] stops the program, naming the variable and the value.
 */
inline int fmaIters() {
  const char *raw = std::getenv("KG_SLOW_PCT");
  if (raw == nullptr || *raw == '\0') return kFmaBaseIters;
  char *end = nullptr;
  const double pct = std::strtod(raw, &end);
  if (end == raw || *end != '\0' || !(pct >= 0.0 && pct <= 100.0)) {
    std::fprintf(stderr, "KG_SLOW_PCT must be a number of percent in [0, 100] (got \"%s\")\n", raw);
    std::exit(2);
  }
  return static_cast<int>(std::lround(kFmaBaseIters * (1.0 + pct / 100.0)));
}

__global__ void copyKernel(const float *__restrict__ src, float *__restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = src[i];
}

__global__ void saxpyKernel(float a, const float *__restrict__ x, float *__restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    y[i] = a * x[i] + y[i];
}

__global__ void reduceKernel(const float *__restrict__ x, float *__restrict__ sum, size_t n) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    acc += x[i];
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ float warps[kThreads / 32];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < kThreads / 32 ? warps[threadIdx.x] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2)
      acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (threadIdx.x == 0) atomicAdd(sum, acc);
  }
}

/** A dependent chain of `iters` multiply-adds per element: its time is linear in iters. */
__global__ void fmaKernel(float *__restrict__ x, size_t n, int iters) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = fmaf(v, 0.999f, 0.001f);
  x[i] = v;
}

/** Blocks of the grid-stride kernels: enough to fill the GPU several times over. */
inline int strideBlocks() {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  return sms * 8;
}

/** The device buffers every benchmark uses, filled once. */
struct Buffers {
  float *a = nullptr;
  float *b = nullptr;
  float *sum = nullptr;
  Buffers() {
    check(cudaMalloc(&a, kElements * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&b, kElements * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&sum, sizeof(float)), "cudaMalloc");
    check(cudaMemset(a, 0, kElements * sizeof(float)), "cudaMemset");
    check(cudaMemset(b, 0, kElements * sizeof(float)), "cudaMemset");
  }
  ~Buffers() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(sum);
  }
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;
};

inline void launchCopy(const Buffers &buf, int blocks, cudaStream_t stream) {
  copyKernel<<<blocks, kThreads, 0, stream>>>(buf.a, buf.b, kElements);
}
inline void launchSaxpy(const Buffers &buf, int blocks, cudaStream_t stream) {
  saxpyKernel<<<blocks, kThreads, 0, stream>>>(2.0f, buf.a, buf.b, kElements);
}
inline void launchReduce(const Buffers &buf, int blocks, cudaStream_t stream) {
  reduceKernel<<<blocks, kThreads, 0, stream>>>(buf.a, buf.sum, kElements);
}
inline void launchFma(const Buffers &buf, int iters, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((kFmaElements + kThreads - 1) / kThreads);
  fmaKernel<<<blocks, kThreads, 0, stream>>>(buf.a, kFmaElements, iters);
}

/** The GPU's name, for the tools' context (kernelgate reads the GPU from it). */
inline std::string gpuName() {
  int device = 0;
  cudaDeviceProp prop{};
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return prop.name;
}

}  // namespace kg_tools
