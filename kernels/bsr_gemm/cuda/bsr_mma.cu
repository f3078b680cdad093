// Block-sparse (BSR) x dense GEMM on the warp-level tensor-core path (mma.sync m16n8k16),
// for sm_80 and later; built here for sm_90a.
//
// C (M x N) = A (M x K, BSR with bm = 128 row blocks, `topk` non-zero bk-wide blocks per
// block row) * B (K x N, dense row-major). A CTA owns one block row and kTileN = 256 columns
// of C, and walks only that row's non-zero blocks: its K loop has topk * bk / 64 steps of 64.
// Each step's A tile (128 x 64, contiguous rows inside the stored block) and B tile (64 rows
// picked by the block's column index, 256 columns) arrive by cp.async into a kStages-deep
// ring, so the loads of step s + kStages - 1 overlap the MMAs of step s. 8 warps in a 2 x 4
// grid own 64 x 64 of C each. Tiles are XOR-swizzled in 16-byte chunks for conflict-free
// ldmatrix; B is read with ldmatrix.trans because it is stored K-major.
//
// The grid runs block rows fastest: the CTAs resident at once share a narrow column slab of
// B, and all of A (32 MB at the headline size) stays in L2 across slabs.
#include <cuda_runtime.h>

#include "../../common/cuda/ptx.cuh"
#include "bsr_entry.cuh"

namespace {

constexpr int kTileM = 128;  // = bm
constexpr int kTileN = 256;
constexpr int kTileK = 64;
constexpr int kStages = 4;
constexpr int kThreads = 256;
constexpr int kWarpTileM = 64;
constexpr int kWarpTileN = 64;
constexpr int kWarpsN = kTileN / kWarpTileN;  // 4
constexpr int kMTiles = kWarpTileM / 16;      // m16 tiles per warp
constexpr int kNTiles = kWarpTileN / 8;       // n8 tiles per warp
constexpr int kATileElems = kTileM * kTileK;
constexpr int kBTileElems = kTileK * kTileN;
constexpr int kSmemBytes = kStages * (kATileElems + kBTileElems) * 2;

template <int kRowElems>
__device__ __forceinline__ int swizzled(int row, int chunk) {
  return row * kRowElems + ((chunk ^ (row & 7)) << 3);
}

template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    bsr_mma_kernel(const T* __restrict__ a_values, const int* __restrict__ a_cols,
                   const T* __restrict__ b, T* __restrict__ c, int n, int topk, int bk) {
  using Mma = kg::Mma<T>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* s_a = reinterpret_cast<T*>(smem_raw);
  T* s_b = s_a + kStages * kATileElems;

  const int block_row = blockIdx.x;
  const int n0 = blockIdx.y * kTileN;
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;
  const int ld_matrix = lane >> 3;
  const int ld_row = lane & 7;

  const int steps_per_block = bk / kTileK;
  const int n_steps = topk * steps_per_block;
  const T* a_row = a_values + static_cast<int64_t>(block_row) * topk * kTileM * bk;
  const int* cols_row = a_cols + static_cast<int64_t>(block_row) * topk;

  auto load_step = [&](int step, int stage) {
    const int t = step / steps_per_block;
    const int k_in_block = (step % steps_per_block) * kTileK;
    const T* a_src = a_row + static_cast<int64_t>(t) * kTileM * bk + k_in_block;
    T* a_dst = s_a + stage * kATileElems;
#pragma unroll
    for (int it = 0; it < kATileElems / 8 / kThreads; ++it) {
      const int idx = it * kThreads + threadIdx.x;
      const int row = idx / (kTileK / 8);
      const int chunk = idx % (kTileK / 8);
      kg::cp_async_16(kg::smem_u32(a_dst + swizzled<kTileK>(row, chunk)),
                      a_src + static_cast<int64_t>(row) * bk + chunk * 8, 16);
    }
    const int64_t k_row0 = static_cast<int64_t>(cols_row[t]) * bk + k_in_block;
    T* b_dst = s_b + stage * kBTileElems;
#pragma unroll
    for (int it = 0; it < kBTileElems / 8 / kThreads; ++it) {
      const int idx = it * kThreads + threadIdx.x;
      const int row = idx / (kTileN / 8);
      const int chunk = idx % (kTileN / 8);
      const int col = n0 + chunk * 8;
      const bool in_range = col < n;  // n % 8 == 0, so a chunk is all in or all out
      const T* src = b + (k_row0 + row) * n + (in_range ? col : 0);
      kg::cp_async_16(kg::smem_u32(b_dst + swizzled<kTileN>(row, chunk)), src, in_range ? 16 : 0);
    }
  };

  float acc[kMTiles][kNTiles][4];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_steps) load_step(s, s);
    kg::cp_async_commit();
  }

  for (int step = 0; step < n_steps; ++step) {
    kg::cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = step + kStages - 1;
    if (next < n_steps) load_step(next, next % kStages);
    kg::cp_async_commit();

    const T* a_tile = s_a + (step % kStages) * kATileElems;
    const T* b_tile = s_b + (step % kStages) * kBTileElems;
#pragma unroll
    for (int k16 = 0; k16 < kTileK / 16; ++k16) {
      uint32_t a_frag[kMTiles][4];
      uint32_t b_frag[kNTiles][2];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        const int row = warp_m * kWarpTileM + mt * 16 + (ld_matrix & 1) * 8 + ld_row;
        const int chunk = k16 * 2 + (ld_matrix >> 1);
        kg::ldmatrix_x4(a_frag[mt][0], a_frag[mt][1], a_frag[mt][2], a_frag[mt][3],
                        kg::smem_u32(a_tile + swizzled<kTileK>(row, chunk)));
      }
#pragma unroll
      for (int np = 0; np < kNTiles / 2; ++np) {
        const int row = k16 * 16 + (ld_matrix & 1) * 8 + ld_row;
        const int chunk = (warp_n * kWarpTileN + np * 16) / 8 + (ld_matrix >> 1);
        kg::ldmatrix_x4_trans(b_frag[2 * np][0], b_frag[2 * np][1], b_frag[2 * np + 1][0],
                              b_frag[2 * np + 1][1], kg::smem_u32(b_tile + swizzled<kTileN>(row, chunk)));
      }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) Mma::run(acc[mt][nt], a_frag[mt], b_frag[nt]);
    }
  }
  kg::cp_async_wait<0>();

  const int group = lane >> 2;
  const int quad = lane & 3;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = static_cast<int64_t>(block_row) * kTileM + warp_m * kWarpTileM + mt * 16 + h * 8 + group;
      T* c_row = c + row * n;
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        const int col = n0 + warp_n * kWarpTileN + nt * 8 + quad * 2;
        if (col < n) {
          *reinterpret_cast<uint32_t*>(c_row + col) = Mma::pack(acc[mt][nt][2 * h], acc[mt][nt][2 * h + 1]);
        }
      }
    }
  }
}

}  // namespace

// a_values: (m / bm, topk, bm, bk) contiguous; a_cols: (m / bm, topk) int32, each < k / bk;
// b: (k, n) row-major; c: (m, n) row-major. dtype 0 = fp16, 1 = bf16. Requires bm = 128,
// bk % 64 == 0, n % 8 == 0, topk >= 1; any n (column tails masked).
extern "C" int kg_bsr_gemm_mma(const void* a_values, const int* a_cols, const void* b, void* c, int m,
                               int n, int k, int bm, int bk, int topk, int dtype, void* stream) {
  if (!kg::bsr_args_ok(m, n, k, bm, bk, topk, kTileM, kTileK)) return cudaErrorInvalidValue;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return kg::dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    return static_cast<int>(kg::launch_block_rows<T>(bsr_mma_kernel<T>, kSmemBytes, kThreads, kTileM, kTileN, a_values, a_cols,
                                                      b, c, m, n, topk, bk, s));
  });
}

// Name of a cudaError_t returned by the entry above, for the Python wrapper's messages.
extern "C" const char* kg_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
