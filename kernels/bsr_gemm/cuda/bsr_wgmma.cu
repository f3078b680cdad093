// Block-sparse (BSR) x dense GEMM on Hopper's warpgroup tensor-core path (wgmma, sm_90a).
//
// Same decomposition as bsr_mma.cu: a CTA owns one 128-row block row and kTileN = 256
// columns of C and walks only that row's non-zero blocks in K steps of 64. Two warpgroups
// each own 64 rows x 256 columns and issue wgmma.m64n256k16 with both operands read by the
// tensor cores straight from shared memory: A as a K-major tile, B as four N-major
// 64 x 64 sub-tiles, both in the 128-byte swizzled layout the wgmma descriptors describe.
// The copies are cp.async (16 bytes per thread, written to the swizzled address) into a
// kStages-deep ring; a proxy fence makes those generic-proxy writes visible to the tensor
// cores' async proxy before the barrier that publishes a stage.
#include <cuda_runtime.h>
#include <stdint.h>

#include "ptx.cuh"

namespace {

constexpr int kTileM = 128;  // = bm
constexpr int kTileN = 256;
constexpr int kTileK = 64;   // 64 fp16 = one 128-byte swizzle row
constexpr int kStages = 4;
constexpr int kThreads = 256;  // 2 warpgroups
constexpr int kSubTileN = 64;  // N extent of one swizzle atom column of B
constexpr int kABytes = kTileM * kTileK * 2;
constexpr int kBBytes = kTileK * kTileN * 2;
constexpr int kBSubBytes = kTileK * kSubTileN * 2;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kSmemBytes = kStages * kStageBytes + 1024;  // + slack to align the ring to 1024

// wgmma shared-memory matrix descriptor, 128-byte swizzle. For the K-major A, sbo is the
// distance between 8-row groups; for the N-major B, lbo is the distance between 64-column
// swizzle atoms and sbo the distance between 8-row (k) groups.
__device__ __forceinline__ uint64_t make_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  uint64_t desc = (smem_addr & 0x3FFFF) >> 4;
  desc |= static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16;
  desc |= static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32;
  desc |= static_cast<uint64_t>(1) << 62;
  return desc;
}

// Byte offset of 16-byte chunk `chunk` of 128-byte row `row` in a 128B-swizzled tile, the
// layout wgmma's SWIZZLE_128B mode expects (chunk index XOR row index mod 8).
__device__ __forceinline__ uint32_t swizzle128(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

template <typename T>
struct Wgmma;

template <>
struct Wgmma<__half> {
  // d (64x256 fp32, this thread's 128) += A (64x16, K-major smem) * B (16x256, N-major smem)
  __device__ __forceinline__ static void run(float* d, uint64_t desc_a, uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, accumulate, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(1));
  }
};

template <>
struct Wgmma<__nv_bfloat16> {
  // d (64x256 fp32, this thread's 128) += A (64x16, K-major smem) * B (16x256, N-major smem)
  __device__ __forceinline__ static void run(float* d, uint64_t desc_a, uint64_t desc_b) {
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, accumulate, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(1));
  }
};

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Keeps the compiler from moving accumulator reads or writes across the wgmma waits.
__device__ __forceinline__ void pin(float& x) { asm volatile("" : "+f"(x)::"memory"); }

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
      kg::cp_async_16(a_dst + swizzle128(row, chunk), a_src + static_cast<int64_t>(row) * bk + chunk * 8, 16);
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
      kg::cp_async_16(b_dst + (chunk_n / 8) * kBSubBytes + swizzle128(row, chunk_n % 8), src, in_range ? 16 : 0);
    }
  };

  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_steps) load_step(s, s);
    kg::cp_async_commit();
  }

  for (int step = 0; step < n_steps; ++step) {
    kg::cp_async_wait<kStages - 2>();
    fence_proxy_async();
    __syncthreads();
    // The stage refilled here was read by the previous step's wgmmas, which every thread
    // waited for before the barrier above.
    const int next = step + kStages - 1;
    if (next < n_steps) load_step(next, next % kStages);
    kg::cp_async_commit();

    const uint32_t a_tile = ring + (step % kStages) * kStageBytes + warpgroup * 64 * 128;
    const uint32_t b_tile = ring + (step % kStages) * kStageBytes + kABytes;
    wgmma_fence();
#pragma unroll
    for (int k16 = 0; k16 < kTileK / 16; ++k16) {
      const uint64_t desc_a = make_desc(a_tile + k16 * 32, 16, 1024);
      const uint64_t desc_b = make_desc(b_tile + k16 * 16 * 128, kBSubBytes, 1024);
      Wgmma<T>::run(acc, desc_a, desc_b);
    }
    wgmma_commit();
    wgmma_wait_all();
#pragma unroll
    for (int i = 0; i < 128; ++i) pin(acc[i]);
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

template <typename T>
cudaError_t launch(const void* a_values, const int* a_cols, const void* b, void* c, int m, int n,
                   int topk, int bk, cudaStream_t stream) {
  auto kernel = bsr_wgmma_kernel<T>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (err != cudaSuccess) return err;
  const dim3 grid(m / kTileM, (n + kTileN - 1) / kTileN);
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(static_cast<const T*>(a_values), a_cols,
                                                 static_cast<const T*>(b), static_cast<T*>(c), n, topk, bk);
  return cudaGetLastError();
}

}  // namespace

// Same contract as kg_bsr_gemm_mma: a_values (m / bm, topk, bm, bk) contiguous; a_cols
// (m / bm, topk) int32, each < k / bk; b (k, n) row-major; c (m, n) row-major; dtype 0 = fp16,
// 1 = bf16; bm = 128, bk % 64 == 0, n % 8 == 0; column tails masked.
extern "C" int kg_bsr_gemm_wgmma(const void* a_values, const int* a_cols, const void* b, void* c, int m,
                                 int n, int k, int bm, int bk, int topk, int dtype, void* stream) {
  if (bm != kTileM || bk <= 0 || bk % kTileK != 0 || m <= 0 || m % bm != 0 || n <= 0 || n % 8 != 0 ||
      k <= 0 || k % bk != 0 || topk <= 0 || topk > k / bk || (n + kTileN - 1) / kTileN > 65535) {
    return cudaErrorInvalidValue;
  }
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (dtype == 0) return launch<__half>(a_values, a_cols, b, c, m, n, topk, bk, s);
  if (dtype == 1) return launch<__nv_bfloat16>(a_values, a_cols, b, c, m, n, topk, bk, s);
  return cudaErrorInvalidValue;
}

// Name of a cudaError_t returned by the entry above, for the Python wrapper's messages.
extern "C" const char* kg_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
