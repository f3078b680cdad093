// Host side shared by the BSR x dense GEMM libraries: the contract's argument checks, the
// launch of a kernel with one CTA per (block row, column tile), and the fp16/bf16 dispatch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace kg {

// a_values (m / bm, topk, bm, bk); a_cols (m / bm, topk), each < k / bk; b (k, n); c (m, n).
// bm must be the kernel's block-row height, bk a multiple of its K step, n a multiple of 8
// (16-byte rows), 1 <= topk <= k / bk.
inline bool bsr_args_ok(int m, int n, int k, int bm, int bk, int topk, int tile_m, int tile_k) {
  return bm == tile_m && bk > 0 && bk % tile_k == 0 && m > 0 && m % bm == 0 && n > 0 && n % 8 == 0 && k > 0 &&
         k % bk == 0 && topk > 0 && topk <= k / bk;
}

// Grid (m / tile_m, ceil(n / tile_n)) of `threads` threads with `smem_bytes` of dynamic shared
// memory; the kernel takes (a_values, a_cols, b, c, n, topk, bk).
template <typename T>
cudaError_t launch_block_rows(void (*kernel)(const T*, const int*, const T*, T*, int, int, int), int smem_bytes,
                              int threads, int tile_m, int tile_n, const void* a_values, const int* a_cols,
                              const void* b, void* c, int m, int n, int topk, int bk, cudaStream_t stream) {
  if ((n + tile_n - 1) / tile_n > 65535) return cudaErrorInvalidValue;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  if (err != cudaSuccess) return err;
  const dim3 grid(m / tile_m, (n + tile_n - 1) / tile_n);
  kernel<<<grid, threads, smem_bytes, stream>>>(static_cast<const T*>(a_values), a_cols, static_cast<const T*>(b),
                                                static_cast<T*>(c), n, topk, bk);
  return cudaGetLastError();
}

// Calls launch.template operator()<T> with T = __half for dtype 0, __nv_bfloat16 for 1.
template <typename Launch>
int dispatch_dtype(int dtype, Launch launch) {
  if (dtype == 0) return launch(__half{});
  if (dtype == 1) return launch(__nv_bfloat16{});
  return cudaErrorInvalidValue;
}

}  // namespace kg
