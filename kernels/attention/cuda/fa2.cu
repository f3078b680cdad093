// FlashAttention-2 forward for sm_90a on the warp-level tensor-core path (mma.sync m16n8k16).
//
// One CTA owns kBlockM = 128 query rows of one (batch, head): 4 warps of two m16 tiles each,
// so a warp's softmax statistics never leave its registers (a quad of lanes shares a row).
// K and V tiles of kBlockN keys stream through a ring of kStages shared-memory buffers
// filled by cp.async; one barrier per key tile publishes K[j], V[j] and frees the buffers
// of tile j - 1, which are refilled with tile j + kStages - 1 at once. Every
// B fragment read by ldmatrix feeds the warp's two m16 tiles. P never touches shared memory:
// the S accumulator layout of m16n8k16 is exactly the A-operand layout of the next MMA, so P
// is repacked in registers. Shared-memory rows are XOR-swizzled in 16-byte chunks so that
// ldmatrix's 8 row addresses hit 8 different bank groups. Out-of-range rows load as zeros;
// masked scores are -inf before the row max, so tails need no other special case.
#include <cuda_runtime.h>
#include <math.h>

#include "../../common/cuda/ptx.cuh"

namespace {

// Per head dimension, chosen on the H200 among 8 or 4 warps, 1 or 2 m16 tiles per warp,
// 64 or 32 keys per tile and 2 or 3 buffers (docs/notes/cuda-kernels.md, 2026-11-21): 4 warps
// x 32 rows = 128 query rows per CTA for both. Two m16 tiles per warp halve the shared-memory
// reads of K and V per MMA (each B fragment feeds two MMAs) at the price of a 2x larger O
// accumulator and Q re-read from shared memory at every k-step; at D = 128 that fits in 255
// registers without spills only with 32-key tiles.
template <int kD>
struct Config;
template <>
struct Config<128> {
  static constexpr int kWarps = 4;
  static constexpr int kMTiles = 2;
  static constexpr int kBlockN = 32;
  static constexpr int kStages = 2;
};
template <>
struct Config<64> {
  static constexpr int kWarps = 4;
  static constexpr int kMTiles = 2;
  static constexpr int kBlockN = 64;
  static constexpr int kStages = 3;
};

template <int kD>
struct Shape : Config<kD> {
  static constexpr int kThreads = Config<kD>::kWarps * 32;
  static constexpr int kRowsPerWarp = 16 * Config<kD>::kMTiles;
  static constexpr int kBlockM = kRowsPerWarp * Config<kD>::kWarps;
  // Q tile plus kStages buffers each of K and V.
  static constexpr int kSmemElems = (kBlockM + 2 * Config<kD>::kStages * Config<kD>::kBlockN) * kD;
};

// Element offset of 16-byte chunk `chunk` of row `row` in a [rows][kD] swizzled tile.
template <int kD>
__device__ __forceinline__ int swizzled(int row, int chunk) {
  return row * kD + ((chunk ^ (row & 7)) << 3);
}

// Copies rows [row0, row0 + kRows) of a [seq][kD] matrix into a swizzled tile; rows at or
// past seq are zero-filled so tails need no special case in the MMA loops.
template <int kRows, int kD, int kThreads, typename T>
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

// 128 threads x at most 255 registers: two CTAs fit an SM's register file (and its shared
// memory: 64 KB at D = 128, 48 KB at D = 64).
template <typename T, int kD, bool kCausal>
__global__ void __launch_bounds__(Shape<kD>::kThreads, 1)
    fa2_fwd_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                   T* __restrict__ out, int heads, int seq_q, int seq_k, float scale_log2) {
  using Mma = kg::Mma<T>;
  using S = Shape<kD>;
  constexpr int kThreads = S::kThreads;
  constexpr int kMTiles = S::kMTiles;
  constexpr int kRowsPerWarp = S::kRowsPerWarp;
  constexpr int kBlockM = S::kBlockM;
  constexpr int kBlockN = S::kBlockN;
  constexpr int kStages = S::kStages;
  constexpr int kKSteps = kD / 16;       // MMA k-steps over the head dimension (S = Q K^T)
  constexpr int kNTiles = kBlockN / 8;   // n8 tiles of S
  constexpr int kPSteps = kBlockN / 16;  // MMA k-steps over keys (O += P V)
  constexpr int kDTiles = kD / 8;        // n8 tiles of O

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* s_q = reinterpret_cast<T*>(smem_raw);
  T* s_k = s_q + kBlockM * kD;             // kStages buffers
  T* s_v = s_k + kStages * kBlockN * kD;   // kStages buffers

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
  const int warp_row0 = warp * kRowsPerWarp;  // first row of this warp inside the CTA tile

  const int keys_needed = kCausal ? min(seq_k, m0 + kBlockM) : seq_k;
  const int n_tiles = (keys_needed + kBlockN - 1) / kBlockN;

  // Q with key tile 0, then tiles 1 .. kStages - 2: one cp.async group each.
  load_tile<kBlockM, kD, kThreads>(s_q, q_bh, m0, seq_q);
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < n_tiles) {
      load_tile<kBlockN, kD, kThreads>(s_k + t * kBlockN * kD, k_bh, t * kBlockN, seq_k);
      load_tile<kBlockN, kD, kThreads>(s_v + t * kBlockN * kD, v_bh, t * kBlockN, seq_k);
    }
    kg::cp_async_commit();
  }

  // A fragments of Q for m16 tile `mt`, k-step `ks`, read from the resident Q tile.
  auto load_q = [&](uint32_t* frag, int mt, int ks) {
    const int row = warp_row0 + mt * 16 + (ld_matrix & 1) * 8 + ld_row;
    const int chunk = ks * 2 + (ld_matrix >> 1);
    kg::ldmatrix_x4(frag[0], frag[1], frag[2], frag[3], kg::smem_u32(s_q + swizzled<kD>(row, chunk)));
  };
  float o_acc[kMTiles][kDTiles][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int t = 0; t < kDTiles; ++t) o_acc[mt][t][0] = o_acc[mt][t][1] = o_acc[mt][t][2] = o_acc[mt][t][3] = 0.f;
  // Running max (in log2 units, scale folded in) and this thread's partial row sums for its
  // rows group and group + 8 of each m16 tile. Sums are reduced across the quad at the end.
  float row_max[kMTiles][2];
  float row_sum[kMTiles][2];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
  }

  // Buffer of tile j, and of tile j + kStages - 1 (the one freed by tile j - 1).
  int read_stage = 0;
  int write_stage = kStages - 1;
  for (int j = 0; j < n_tiles; ++j) {
    const int n0 = j * kBlockN;
    // One barrier per key tile: K[j] and V[j] have landed for every thread, and every warp
    // is done with tile j - 1, whose buffers are refilled with tile j + kStages - 1 at once.
    kg::cp_async_wait<kStages - 2>();
    __syncthreads();
    const int ahead = j + kStages - 1;
    if (ahead < n_tiles) {
      load_tile<kBlockN, kD, kThreads>(s_k + write_stage * kBlockN * kD, k_bh, ahead * kBlockN, seq_k);
      load_tile<kBlockN, kD, kThreads>(s_v + write_stage * kBlockN * kD, v_bh, ahead * kBlockN, seq_k);
    }
    kg::cp_async_commit();
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;

    // -- S = Q K^T --
    const T* k_tile = s_k + read_stage * kBlockN * kD;
    float s_acc[kMTiles][kNTiles][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int t = 0; t < kNTiles; ++t) s_acc[mt][t][0] = s_acc[mt][t][1] = s_acc[mt][t][2] = s_acc[mt][t][3] = 0.f;
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      // Q is re-read from shared memory at every k-step: the registers go to O.
      uint32_t q_step[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) load_q(q_step[mt], mt, ks);
#pragma unroll
      for (int tp = 0; tp < kNTiles / 2; ++tp) {
        const int row = tp * 16 + (ld_matrix >> 1) * 8 + ld_row;
        const int chunk = ks * 2 + (ld_matrix & 1);
        uint32_t b[4];
        kg::ldmatrix_x4(b[0], b[1], b[2], b[3], kg::smem_u32(k_tile + swizzled<kD>(row, chunk)));
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          Mma::run(s_acc[mt][2 * tp], q_step[mt], b);
          Mma::run(s_acc[mt][2 * tp + 1], q_step[mt], b + 2);
        }
      }
    }

    // -- mask: key tail, and keys after the query row when causal --
    const bool needs_mask = (n0 + kBlockN > seq_k) || (kCausal && n0 + kBlockN - 1 > m0);
    if (needs_mask) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int t = 0; t < kNTiles; ++t) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + t * 8 + quad * 2 + (e & 1);
            const int row = m0 + warp_row0 + mt * 16 + group + (e >> 1) * 8;
            if (col >= seq_k || (kCausal && col > row)) s_acc[mt][t][e] = -INFINITY;
          }
        }
      }
    }

    // -- online softmax --
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int t = 0; t < kNTiles; ++t) tile_max = fmaxf(tile_max, fmaxf(s_acc[mt][t][2 * h], s_acc[mt][t][2 * h + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        const float new_max = fmaxf(row_max[mt][h], tile_max * scale_log2);
        // A row whose keys are all masked so far keeps max -inf; subtracting 0 keeps exp2 at 0.
        const float base = new_max == -INFINITY ? 0.f : new_max;
        const float rescale = kg::fast_exp2(row_max[mt][h] - base);
        row_max[mt][h] = new_max;
        float sum = 0.f;
#pragma unroll
        for (int t = 0; t < kNTiles; ++t) {
          s_acc[mt][t][2 * h] = kg::fast_exp2(fmaf(s_acc[mt][t][2 * h], scale_log2, -base));
          s_acc[mt][t][2 * h + 1] = kg::fast_exp2(fmaf(s_acc[mt][t][2 * h + 1], scale_log2, -base));
          sum += s_acc[mt][t][2 * h] + s_acc[mt][t][2 * h + 1];
        }
        row_sum[mt][h] = row_sum[mt][h] * rescale + sum;
#pragma unroll
        for (int t = 0; t < kDTiles; ++t) {
          o_acc[mt][t][2 * h] *= rescale;
          o_acc[mt][t][2 * h + 1] *= rescale;
        }
      }
    }

    // -- O += P V --
    const T* v_tile = s_v + read_stage * kBlockN * kD;
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
#pragma unroll
    for (int ps = 0; ps < kPSteps; ++ps) {
      uint32_t p_frag[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        p_frag[mt][0] = Mma::pack(s_acc[mt][2 * ps][0], s_acc[mt][2 * ps][1]);
        p_frag[mt][1] = Mma::pack(s_acc[mt][2 * ps][2], s_acc[mt][2 * ps][3]);
        p_frag[mt][2] = Mma::pack(s_acc[mt][2 * ps + 1][0], s_acc[mt][2 * ps + 1][1]);
        p_frag[mt][3] = Mma::pack(s_acc[mt][2 * ps + 1][2], s_acc[mt][2 * ps + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < kDTiles / 2; ++dp) {
        const int row = ps * 16 + (ld_matrix & 1) * 8 + ld_row;
        const int chunk = dp * 2 + (ld_matrix >> 1);
        uint32_t b[4];
        kg::ldmatrix_x4_trans(b[0], b[1], b[2], b[3], kg::smem_u32(v_tile + swizzled<kD>(row, chunk)));
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          Mma::run(o_acc[mt][2 * dp], p_frag[mt], b);
          Mma::run(o_acc[mt][2 * dp + 1], p_frag[mt], b + 2);
        }
      }
    }
  }

  // -- epilogue: normalise and store this thread's rows --
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = row_sum[mt][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = 1.f / sum;
      const int row = m0 + warp_row0 + mt * 16 + group + h * 8;
      if (row < seq_q) {
        T* out_row = out + (bh * seq_q + row) * kD;
#pragma unroll
        for (int t = 0; t < kDTiles; ++t) {
          *reinterpret_cast<uint32_t*>(out_row + t * 8 + quad * 2) =
              Mma::pack(o_acc[mt][t][2 * h] * inv, o_acc[mt][t][2 * h + 1] * inv);
        }
      }
    }
  }
}

template <typename T, int kD, bool kCausal>
cudaError_t launch(const void* q, const void* k, const void* v, void* out, int batch, int heads,
                   int seq_q, int seq_k, float scale, cudaStream_t stream) {
  constexpr int kSmemBytes = Shape<kD>::kSmemElems * static_cast<int>(sizeof(T));
  auto kernel = fa2_fwd_kernel<T, kD, kCausal>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (err != cudaSuccess) return err;
  constexpr int kBlockM = Shape<kD>::kBlockM;
  const dim3 grid((seq_q + kBlockM - 1) / kBlockM, heads, batch);
  const float scale_log2 = scale * 1.4426950408889634f;
  kernel<<<grid, Shape<kD>::kThreads, kSmemBytes, stream>>>(static_cast<const T*>(q), static_cast<const T*>(k),
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
