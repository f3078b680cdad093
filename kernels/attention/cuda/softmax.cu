// Row softmax for the unfused ("cuBLAS") attention reference: P = softmax(scale * S) in place,
// with keys past the query row zeroed when causal. S comes from a cuBLAS GEMM (torch.matmul)
// in the inputs' dtype; this kernel is the only non-GEMM step, so the reference pays exactly
// one extra read-read-write of the S x S scores per head on top of the two GEMMs.
//
// One warp per row: a first pass keeps a per-lane online (max, sum) pair, a butterfly
// reduction merges the pairs, a second pass writes exp2(x - max) / sum. The second read of
// the row mostly hits L2 (a 4096-key fp16 row is 8 KB).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

namespace {

constexpr int kWarpsPerBlock = 8;

template <typename T>
__device__ __forceinline__ float to_float(T x);
template <>
__device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Vector of kVec elements moved as one load/store (16 bytes when kVec = 8).
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

__device__ __forceinline__ void merge(float& max_a, float& sum_a, float max_b, float sum_b) {
  const float m = fmaxf(max_a, max_b);
  if (m == -INFINITY) return;  // both empty
  sum_a = sum_a * exp2f(max_a - m) + sum_b * exp2f(max_b - m);
  max_a = m;
}

template <typename T, int kVec, bool kCausal>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    softmax_rows_kernel(T* __restrict__ scores, int64_t n_rows, int seq_q, int seq_k, float scale_log2) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= n_rows) return;
  const int lane = threadIdx.x & 31;
  const int query = static_cast<int>(row % seq_q);
  const int keys = kCausal ? min(seq_k, query + 1) : seq_k;
  Pack<T, kVec>* data = reinterpret_cast<Pack<T, kVec>*>(scores + row * seq_k);
  const int n_packs = seq_k / kVec;

  float run_max = -INFINITY;
  float run_sum = 0.f;
  for (int p = lane; p * kVec < keys; p += 32) {
    const Pack<T, kVec> pack = data[p];
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      if (p * kVec + e < keys) {
        const float x = to_float(pack.v[e]) * scale_log2;
        if (x > run_max) {
          run_sum = run_sum * exp2f(run_max - x) + 1.f;
          run_max = x;
        } else {
          run_sum += exp2f(x - run_max);
        }
      }
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other_max = __shfl_xor_sync(0xffffffffu, run_max, offset);
    const float other_sum = __shfl_xor_sync(0xffffffffu, run_sum, offset);
    merge(run_max, run_sum, other_max, other_sum);
  }
  const float inv_sum = 1.f / run_sum;

  for (int p = lane; p < n_packs; p += 32) {
    Pack<T, kVec> pack = data[p];
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const bool visible = p * kVec + e < keys;
      const float prob = visible ? exp2f(to_float(pack.v[e]) * scale_log2 - run_max) * inv_sum : 0.f;
      pack.v[e] = from_float<T>(prob);
    }
    data[p] = pack;
  }
}

template <typename T, int kVec>
cudaError_t launch(void* scores, int64_t n_rows, int seq_q, int seq_k, bool causal, float scale,
                   cudaStream_t stream) {
  const int64_t blocks = (n_rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  const float scale_log2 = scale * 1.4426950408889634f;
  T* s = static_cast<T*>(scores);
  if (causal) {
    softmax_rows_kernel<T, kVec, true><<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(
        s, n_rows, seq_q, seq_k, scale_log2);
  } else {
    softmax_rows_kernel<T, kVec, false><<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(
        s, n_rows, seq_q, seq_k, scale_log2);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t dispatch(void* scores, int64_t n_rows, int seq_q, int seq_k, bool causal, float scale,
                     cudaStream_t stream) {
  // 16-byte packs need every row to start 16-byte aligned.
  if (seq_k % 8 == 0 && reinterpret_cast<uintptr_t>(scores) % 16 == 0) {
    return launch<T, 8>(scores, n_rows, seq_q, seq_k, causal, scale, stream);
  }
  return launch<T, 1>(scores, n_rows, seq_q, seq_k, causal, scale, stream);
}

}  // namespace

// scores: (n_matrices, seq_q, seq_k) contiguous, dtype 0 = fp16, 1 = bf16, overwritten with
// softmax(scale * scores) along the last axis; when causal, key j > query i gets probability 0.
extern "C" int kg_attention_softmax(void* scores, int n_matrices, int seq_q, int seq_k, int dtype,
                                    int causal, float scale, void* stream) {
  if (n_matrices <= 0 || seq_q <= 0 || seq_k <= 0) return cudaErrorInvalidValue;
  const int64_t n_rows = static_cast<int64_t>(n_matrices) * seq_q;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (dtype == 0) return dispatch<__half>(scores, n_rows, seq_q, seq_k, causal != 0, scale, s);
  if (dtype == 1) return dispatch<__nv_bfloat16>(scores, n_rows, seq_q, seq_k, causal != 0, scale, s);
  return cudaErrorInvalidValue;
}

// Name of a cudaError_t returned by the entry above, for the Python wrapper's messages.
extern "C" const char* kg_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
