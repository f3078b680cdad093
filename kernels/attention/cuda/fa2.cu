// FlashAttention-2 forward for sm_90a on the warp-level tensor-core path (mma.sync m16n8k16).
//
// One CTA owns kBlockM = 16 * kWarps query rows of one (batch, head); each warp owns 16,
// so a warp's softmax statistics never leave its registers (a quad of lanes shares a row).
// K and V tiles of kBlockN = 64 keys stream through double-buffered shared memory with
// cp.async: K[j+1] is in flight while S = Q K[j]^T and the softmax run, V[j+1] while
// O += P V[j] runs. Q is read once into registers (A fragments). P never touches shared
// memory: the S accumulator layout of m16n8k16 is exactly the A-operand layout of the next
// MMA, so P is repacked in registers. Shared-memory rows are XOR-swizzled in 16-byte chunks
// so that ldmatrix's 8 row addresses hit 8 different bank groups.
#include <cuda_runtime.h>
#include <math.h>

#include "ptx.cuh"

namespace {

// Warps per CTA (16 query rows each); the build may override it to compare configurations.
#ifndef KG_FA2_WARPS
#define KG_FA2_WARPS 8
#endif
constexpr int kWarps = KG_FA2_WARPS;
constexpr int kBlockM = 16 * kWarps;
constexpr int kBlockN = 64;
constexpr int kThreads = kWarps * 32;
// Registers cap occupancy: D = 128 needs ~210 per thread, D = 64 fits in 128.
constexpr int kMinBlocksD128 = kWarps >= 8 ? 1 : 8 / kWarps;
constexpr int kMinBlocksD64 = 16 / kWarps;

// Element offset of 16-byte chunk `chunk` of row `row` in a [rows][kD] swizzled tile.
template <int kD>
__device__ __forceinline__ int swizzled(int row, int chunk) {
  return row * kD + ((chunk ^ (row & 7)) << 3);
}

// Copies rows [row0, row0 + kRows) of a [seq][kD] matrix into a swizzled tile; rows at or
// past seq are zero-filled so tails need no special case in the MMA loops.
template <int kRows, int kD, typename T>
__device__ __forceinline__ void load_tile(T* tile, const T* src, int row0, int seq) {
  constexpr int kChunksPerRow = kD / 8;
  constexpr int kIters = kRows * kChunksPerRow / kThreads;
  static_assert(kRows * kChunksPerRow % kThreads == 0, "tile must split evenly over the CTA");
#pragma unroll
  for (int it = 0; it < kIters; ++it) {
    const int idx = it * kThreads + threadIdx.x;
    const int row = idx / kChunksPerRow;
    const int chunk = idx % kChunksPerRow;
    const int global_row = row0 + row;
    const bool in_range = global_row < seq;
    const T* from = src + static_cast<int64_t>(in_range ? global_row : 0) * kD + chunk * 8;
    kg::cp_async_16(kg::smem_u32(tile + swizzled<kD>(row, chunk)), from, in_range ? 16 : 0);
  }
}

template <typename T, int kD, bool kCausal>
__global__ void __launch_bounds__(kThreads, kD == 64 ? kMinBlocksD64 : kMinBlocksD128)
    fa2_fwd_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                   T* __restrict__ out, int heads, int seq_q, int seq_k, float scale_log2) {
  using Mma = kg::Mma<T>;
  constexpr int kKSteps = kD / 16;       // MMA k-steps over the head dimension (S = Q K^T)
  constexpr int kNTiles = kBlockN / 8;   // n8 tiles of S
  constexpr int kPSteps = kBlockN / 16;  // MMA k-steps over keys (O += P V)
  constexpr int kDTiles = kD / 8;        // n8 tiles of O

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* s_q = reinterpret_cast<T*>(smem_raw);
  T* s_k = s_q + kBlockM * kD;       // two stages
  T* s_v = s_k + 2 * kBlockN * kD;   // two stages

  // Causal CTAs with the most key tiles start first, so the short ones fill the tail.
  const int m_block = kCausal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int m0 = m_block * kBlockM;
  const int64_t bh = static_cast<int64_t>(blockIdx.z) * heads + blockIdx.y;
  const T* q_bh = q + bh * seq_q * kD;
  const T* k_bh = k + bh * seq_k * kD;
  const T* v_bh = v + bh * seq_k * kD;

  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int group = lane >> 2;  // row within an 8-row half of the MMA tile
  const int quad = lane & 3;    // column pair within an n8 tile
  const int ld_matrix = lane >> 3;
  const int ld_row = lane & 7;

  const int keys_needed = kCausal ? min(seq_k, m0 + kBlockM) : seq_k;
  const int n_tiles = (keys_needed + kBlockN - 1) / kBlockN;

  load_tile<kBlockM, kD>(s_q, q_bh, m0, seq_q);
  load_tile<kBlockN, kD>(s_k, k_bh, 0, seq_k);
  kg::cp_async_commit();
  load_tile<kBlockN, kD>(s_v, v_bh, 0, seq_k);
  kg::cp_async_commit();

  kg::cp_async_wait<1>();
  __syncthreads();
  uint32_t q_frag[kKSteps][4];
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks) {
    const int row = warp * 16 + (ld_matrix & 1) * 8 + ld_row;
    const int chunk = ks * 2 + (ld_matrix >> 1);
    kg::ldmatrix_x4(q_frag[ks][0], q_frag[ks][1], q_frag[ks][2], q_frag[ks][3],
                    kg::smem_u32(s_q + swizzled<kD>(row, chunk)));
  }

  float o_acc[kDTiles][4];
#pragma unroll
  for (int t = 0; t < kDTiles; ++t) o_acc[t][0] = o_acc[t][1] = o_acc[t][2] = o_acc[t][3] = 0.f;
  // Running max (in log2 units, scale folded in) and this thread's partial row sums for
  // its two rows: group and group + 8. The sums are reduced across the quad once, at the end.
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};
  const int row_a = m0 + warp * 16 + group;

  for (int j = 0; j < n_tiles; ++j) {
    const int n0 = j * kBlockN;
    kg::cp_async_wait<1>();
    __syncthreads();
    if (j + 1 < n_tiles) load_tile<kBlockN, kD>(s_k + ((j + 1) & 1) * kBlockN * kD, k_bh, n0 + kBlockN, seq_k);
    kg::cp_async_commit();

    // -- S = Q K^T --
    const T* k_tile = s_k + (j & 1) * kBlockN * kD;
    float s_acc[kNTiles][4];
#pragma unroll
    for (int t = 0; t < kNTiles; ++t) s_acc[t][0] = s_acc[t][1] = s_acc[t][2] = s_acc[t][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
#pragma unroll
      for (int tp = 0; tp < kNTiles / 2; ++tp) {
        const int row = tp * 16 + (ld_matrix >> 1) * 8 + ld_row;
        const int chunk = ks * 2 + (ld_matrix & 1);
        uint32_t b[4];
        kg::ldmatrix_x4(b[0], b[1], b[2], b[3], kg::smem_u32(k_tile + swizzled<kD>(row, chunk)));
        Mma::run(s_acc[2 * tp], q_frag[ks], b);
        Mma::run(s_acc[2 * tp + 1], q_frag[ks], b + 2);
      }
    }

    // -- mask: key tail, and keys after the query row when causal --
    const bool needs_mask = (n0 + kBlockN > seq_k) || (kCausal && n0 + kBlockN - 1 > m0);
    if (needs_mask) {
#pragma unroll
      for (int t = 0; t < kNTiles; ++t) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = n0 + t * 8 + quad * 2 + (e & 1);
          const int row = row_a + (e >> 1) * 8;
          if (col >= seq_k || (kCausal && col > row)) s_acc[t][e] = -INFINITY;
        }
      }
    }

    // -- online softmax --
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int t = 0; t < kNTiles; ++t) tile_max = fmaxf(tile_max, fmaxf(s_acc[t][2 * h], s_acc[t][2 * h + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float new_max = fmaxf(row_max[h], tile_max * scale_log2);
      // A row whose keys are all masked so far keeps max -inf; subtracting 0 keeps exp2 at 0.
      const float base = new_max == -INFINITY ? 0.f : new_max;
      const float rescale = kg::fast_exp2(row_max[h] - base);
      row_max[h] = new_max;
      float sum = 0.f;
#pragma unroll
      for (int t = 0; t < kNTiles; ++t) {
        s_acc[t][2 * h] = kg::fast_exp2(fmaf(s_acc[t][2 * h], scale_log2, -base));
        s_acc[t][2 * h + 1] = kg::fast_exp2(fmaf(s_acc[t][2 * h + 1], scale_log2, -base));
        sum += s_acc[t][2 * h] + s_acc[t][2 * h + 1];
      }
      row_sum[h] = row_sum[h] * rescale + sum;
#pragma unroll
      for (int t = 0; t < kDTiles; ++t) {
        o_acc[t][2 * h] *= rescale;
        o_acc[t][2 * h + 1] *= rescale;
      }
    }

    kg::cp_async_wait<1>();
    __syncthreads();
    if (j + 1 < n_tiles) load_tile<kBlockN, kD>(s_v + ((j + 1) & 1) * kBlockN * kD, v_bh, n0 + kBlockN, seq_k);
    kg::cp_async_commit();

    // -- O += P V --
    const T* v_tile = s_v + (j & 1) * kBlockN * kD;
#pragma unroll
    for (int ps = 0; ps < kPSteps; ++ps) {
      uint32_t p_frag[4];
      p_frag[0] = Mma::pack(s_acc[2 * ps][0], s_acc[2 * ps][1]);
      p_frag[1] = Mma::pack(s_acc[2 * ps][2], s_acc[2 * ps][3]);
      p_frag[2] = Mma::pack(s_acc[2 * ps + 1][0], s_acc[2 * ps + 1][1]);
      p_frag[3] = Mma::pack(s_acc[2 * ps + 1][2], s_acc[2 * ps + 1][3]);
#pragma unroll
      for (int dp = 0; dp < kDTiles / 2; ++dp) {
        const int row = ps * 16 + (ld_matrix & 1) * 8 + ld_row;
        const int chunk = dp * 2 + (ld_matrix >> 1);
        uint32_t b[4];
        kg::ldmatrix_x4_trans(b[0], b[1], b[2], b[3], kg::smem_u32(v_tile + swizzled<kD>(row, chunk)));
        Mma::run(o_acc[2 * dp], p_frag, b);
        Mma::run(o_acc[2 * dp + 1], p_frag, b + 2);
      }
    }
  }

  // -- epilogue: normalise and store this thread's two rows --
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float sum = row_sum[h];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const float inv = 1.f / sum;
    const int row = row_a + h * 8;
    if (row < seq_q) {
      T* out_row = out + (bh * seq_q + row) * kD;
#pragma unroll
      for (int t = 0; t < kDTiles; ++t) {
        *reinterpret_cast<uint32_t*>(out_row + t * 8 + quad * 2) =
            Mma::pack(o_acc[t][2 * h] * inv, o_acc[t][2 * h + 1] * inv);
      }
    }
  }
}

template <typename T, int kD, bool kCausal>
cudaError_t launch(const void* q, const void* k, const void* v, void* out, int batch, int heads,
                   int seq_q, int seq_k, float scale, cudaStream_t stream) {
  constexpr int kSmemBytes = (kBlockM + 4 * kBlockN) * kD * static_cast<int>(sizeof(T));
  auto kernel = fa2_fwd_kernel<T, kD, kCausal>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (err != cudaSuccess) return err;
  const dim3 grid((seq_q + kBlockM - 1) / kBlockM, heads, batch);
  const float scale_log2 = scale * 1.4426950408889634f;
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k),
                                                 static_cast<const T*>(v), static_cast<T*>(out), heads,
                                                 seq_q, seq_k, scale_log2);
  return cudaGetLastError();
}

template <typename T>
cudaError_t dispatch(const void* q, const void* k, const void* v, void* out, int batch, int heads,
                     int seq_q, int seq_k, int head_dim, bool causal, float scale, cudaStream_t stream) {
  if (head_dim == 64) {
    return causal ? launch<T, 64, true>(q, k, v, out, batch, heads, seq_q, seq_k, scale, stream)
                  : launch<T, 64, false>(q, k, v, out, batch, heads, seq_q, seq_k, scale, stream);
  }
  if (head_dim == 128) {
    return causal ? launch<T, 128, true>(q, k, v, out, batch, heads, seq_q, seq_k, scale, stream)
                  : launch<T, 128, false>(q, k, v, out, batch, heads, seq_q, seq_k, scale, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

// q: (batch, heads, seq_q, head_dim); k, v: (batch, heads, seq_k, head_dim); out like q.
// All contiguous, dtype 0 = fp16, 1 = bf16; head_dim 64 or 128. Causal masking is top-left
// aligned (key j visible to query i when j <= i), as torch's is_causal.
extern "C" int kg_attention_fa2(const void* q, const void* k, const void* v, void* out, int batch,
                                int heads, int seq_q, int seq_k, int head_dim, int dtype, int causal,
                                float scale, void* stream) {
  if (batch <= 0 || heads <= 0 || seq_q <= 0 || seq_k <= 0 || batch > 65535 || heads > 65535) {
    return cudaErrorInvalidValue;
  }
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (dtype == 0) return dispatch<__half>(q, k, v, out, batch, heads, seq_q, seq_k, head_dim, causal != 0, scale, s);
  if (dtype == 1) {
    return dispatch<__nv_bfloat16>(q, k, v, out, batch, heads, seq_q, seq_k, head_dim, causal != 0, scale, s);
  }
  return cudaErrorInvalidValue;
}

// Name of a cudaError_t returned by the entry above, for the Python wrapper's messages.
extern "C" const char* kg_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
