// Block-sparse (BSR) x dense GEMM on Hopper's warpgroup tensor-core path (wgmma, sm_90a).
//
// Same decomposition as bsr_mma.cu: a CTA owns one 128-row block row and kTileN columns
// of C and walks only that row's non-zero blocks in K steps of 64. Two warpgroups
// each own 64 rows x kTileN columns and issue wgmma.m64nNk16 with both operands read by the
// tensor cores straight from shared memory: A as a K-major tile, B as kTileN / 64 N-major
// 64 x 64 sub-tiles, both in the 128-byte swizzled layout the wgmma descriptors describe.
// The copies are cp.async (16 bytes per thread, written to the swizzled address) into a
// kStages-deep ring; a proxy fence makes those generic-proxy writes visible to the tensor
// cores' async proxy before the barrier that publishes a stage.
#include <cuda_runtime.h>
#include <stdint.h>

#include "../../common/cuda/ptx.cuh"
#include "bsr_entry.cuh"
#include "../../common/cuda/wgmma.cuh"

namespace {

constexpr int kTileM = 128;  // = bm
constexpr int kTileN = 256;
constexpr int kTileK = 64;   // 64 fp16 = one 128-byte swizzle row
constexpr int kStages = 4;
constexpr int kAccRegs = kTileN / 2;  // fp32 accumulators per thread (64 rows x kTileN per warpgroup)
constexpr int kThreads = 256;  // 2 warpgroups
constexpr int kSubTileN = 64;  // N extent of one swizzle atom column of B
constexpr int kABytes = kTileM * kTileK * 2;
constexpr int kBBytes = kTileK * kTileN * 2;
constexpr int kBSubBytes = kTileK * kSubTileN * 2;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kSmemBytes = kStages * kStageBytes + 1024;  // + slack to align the ring to 1024

template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    bsr_wgmma_kernel(const T* __restrict__ a_values, const int* __restrict__ a_cols,
                     const T* __restrict__ b, T* __restrict__ c, int n, int topk, int bk) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t ring = (kg::smem_u32(smem_raw) + 1023) & ~1023u;

  const int block_row = blockIdx.x;
  const int n0 = blockIdx.y * kTileN;
  const int warpgroup = threadIdx.x >> 7;

  const int steps_per_block = bk / kTileK;
  const int n_steps = topk * steps_per_block;
  const T* a_row = a_values + static_cast<int64_t>(block_row) * topk * kTileM * bk;
  const int* cols_row = a_cols + static_cast<int64_t>(block_row) * topk;

  auto load_step = [&](int step, int stage) {
    const int t = step / steps_per_block;
    const int k_in_block = (step % steps_per_block) * kTileK;
    const T* a_src = a_row + static_cast<int64_t>(t) * kTileM * bk + k_in_block;
    const uint32_t a_dst = ring + stage * kStageBytes;
#pragma unroll
    for (int it = 0; it < kABytes / 16 / kThreads; ++it) {
      const int idx = it * kThreads + threadIdx.x;
      const int row = idx / 8;
      const int chunk = idx % 8;
      kg::cp_async_16(a_dst + kg::swizzle128(row, chunk), a_src + static_cast<int64_t>(row) * bk + chunk * 8, 16);
    }
    const int64_t k_row0 = static_cast<int64_t>(cols_row[t]) * bk + k_in_block;
    const uint32_t b_dst = a_dst + kABytes;
#pragma unroll
    for (int it = 0; it < kBBytes / 16 / kThreads; ++it) {
      const int idx = it * kThreads + threadIdx.x;
      const int row = idx / (kTileN / 8);
      const int chunk_n = idx % (kTileN / 8);
      const int col = n0 + chunk_n * 8;
      const bool in_range = col < n;  // n % 8 == 0, so a chunk is all in or all out
      const T* src = b + (k_row0 + row) * n + (in_range ? col : 0);
      kg::cp_async_16(b_dst + (chunk_n / 8) * kBSubBytes + kg::swizzle128(row, chunk_n % 8), src, in_range ? 16 : 0);
    }
  };

  float acc[kAccRegs];
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_steps) load_step(s, s);
    kg::cp_async_commit();
  }

  for (int step = 0; step < n_steps; ++step) {
    kg::cp_async_wait<kStages - 2>();
    kg::fence_proxy_async();
    __syncthreads();
    // The stage refilled here was read by the previous step's wgmmas, which every thread
    // waited for before the barrier above.
    const int next = step + kStages - 1;
    if (next < n_steps) load_step(next, next % kStages);
    kg::cp_async_commit();

    const uint32_t a_tile = ring + (step % kStages) * kStageBytes + warpgroup * 64 * 128;
    const uint32_t b_tile = ring + (step % kStages) * kStageBytes + kABytes;
    kg::wgmma_fence();
#pragma unroll
    for (int k16 = 0; k16 < kTileK / 16; ++k16) {
      const uint64_t desc_a = kg::make_desc(a_tile + k16 * 32, 16, 1024);
      const uint64_t desc_b = kg::make_desc(b_tile + k16 * 16 * 128, kBSubBytes, 1024);
      kg::Wgmma<T, kTileN>::run(acc, desc_a, desc_b);
    }
    kg::wgmma_commit();
    kg::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kAccRegs; ++i) kg::pin(acc[i]);
  }
  kg::cp_async_wait<0>();

  // Accumulator layout of m64nNk16: warp w of the warpgroup holds rows 16w + (lane / 4)
  // and + 8; register 4j + {0,1} are columns 8j + 2 (lane % 4) + {0,1} of the first row,
  // 4j + {2,3} the same columns of the second.
  const int warp_in_group = (threadIdx.x >> 5) & 3;
  const int lane = threadIdx.x & 31;
  const int64_t row0 = static_cast<int64_t>(block_row) * kTileM + warpgroup * 64 + warp_in_group * 16 + (lane >> 2);
#pragma unroll
  for (int j = 0; j < kTileN / 8; ++j) {
    const int col = n0 + j * 8 + (lane & 3) * 2;
    if (col < n) {
      *reinterpret_cast<uint32_t*>(c + row0 * n + col) = kg::Mma<T>::pack(acc[4 * j], acc[4 * j + 1]);
      *reinterpret_cast<uint32_t*>(c + (row0 + 8) * n + col) = kg::Mma<T>::pack(acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}

}  // namespace

// Same contract as kg_bsr_gemm_mma: a_values (m / bm, topk, bm, bk) contiguous; a_cols
// (m / bm, topk) int32, each < k / bk; b (k, n) row-major; c (m, n) row-major; dtype 0 = fp16,
// 1 = bf16; bm = 128, bk % 64 == 0, n % 8 == 0; column tails masked.
extern "C" int kg_bsr_gemm_wgmma(const void* a_values, const int* a_cols, const void* b, void* c, int m,
                                 int n, int k, int bm, int bk, int topk, int dtype, void* stream) {
  if (!kg::bsr_args_ok(m, n, k, bm, bk, topk, kTileM, kTileK)) return cudaErrorInvalidValue;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return kg::dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    return static_cast<int>(kg::launch_block_rows<T>(bsr_wgmma_kernel<T>, kSmemBytes, kThreads, kTileM, kTileN, a_values, a_cols,
                                                      b, c, m, n, topk, bk, s));
  });
}

// Name of a cudaError_t returned by the entry above, for the Python wrapper's messages.
extern "C" const char* kg_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
