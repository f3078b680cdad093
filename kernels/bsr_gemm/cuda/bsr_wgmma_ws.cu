// Block-sparse (BSR) x dense GEMM for sm_90a: persistent, warp-specialized, TMA loads, wgmma.
//
// Same tiles as bsr_mma.cu / bsr_wgmma.cu: one 128-row block row x 256 columns of C, walking
// only that row's non-zero blocks in K steps of 64. What changes is who moves the data: one
// producer thread issues the bulk tensor copies (TMA) of each step's A tile (one 64 x 128
// box of the stored block) and B tile (four 64 x 64 boxes of the rows the block's column
// index picks) into a kStages-deep ring, completing on the stage's "full" mbarrier; two
// consumer warpgroups wait on that barrier, issue wgmma.m64n256k16 straight from shared
// memory, and release the stage on its "empty" mbarrier once the wgmmas that read it have
// retired. No CTA-wide barrier sits in the K loop, the consumers never compute a load
// address, and one wgmma group stays in flight while the next stage is waited for. The grid
// is persistent (one CTA per SM, tiles strided by the grid): the producer fills the next
// tile's stages while the consumers store the last one, through shared memory and TMA stores
// that they do not wait for (KG_BSR_TMA_STORE). By default pairs of CTAs (a cluster) take
// neighbouring strips of one block row and multicast its A tiles (KG_BSR_CLUSTER_N). TMA writes
// the 128-byte swizzle the wgmma descriptors describe; column tails of B come back zero-filled
// from the copy engine, and the output's are left out by the stores.
#include <cuda_runtime.h>
#include <stdint.h>

#include "../../common/cuda/ptx.cuh"
#include "../../common/cuda/tma.cuh"
#include "../../common/cuda/wgmma.cuh"
#include "../../common/cuda/wgmma_ops.cuh"
#include "bsr_entry.cuh"

// Tile order (issue 28's experiment, scripts/bsr-experiment.py; runs 97 and 109 on H100s: no gain
// against a control build): 0 (the default) takes the tiles block rows fastest over all of them, so the CTAs running at once share
// one or two 256-column strips of B and each reads its own block row's A blocks, which every strip
// reads again (A's blocks: 32 MB at 8192³ with 16 of 64 blocks, read once per strip pair). R > 0
// groups R block rows: the tiles run R block rows fastest, then the strips, group by group, so the
// CTAs running at once share R rows' A blocks over several strips, at the cost of reading B once
// per group instead of once. With clusters (KG_BSR_CLUSTER_N, below) the same, over their groups
// of strips (the nineteenth session: until then the grouped order was only taken without them).
// Measured with the clusters (run 167, H200, fp16 8192^3): R = 32 reads 15 % fewer DRAM bytes and
// runs as fast as 0 (within 0.4 %, at the same 1.47 GHz), R = 16 2.2-2.8 % slower: 0 stays.
#ifndef KG_BSR_GROUP_ROWS
#define KG_BSR_GROUP_ROWS 0
#endif
static_assert(KG_BSR_GROUP_ROWS >= 0, "KG_BSR_GROUP_ROWS: 0 (all block rows) or a positive number of block rows");
// C > 1 (2 or 4): clusters of C CTAs take C neighbouring 256-column strips of one block row, which
// read the same A tiles: each CTA's producer loads 128 / C rows of every A tile and multicasts them
// to the cluster, so A is read from L2 once per cluster instead of once per CTA (B, whose rows the
// block's column index picks, stays each CTA's own). A stage is refilled once the consumers of
// every CTA of the cluster have released it (they arrive on each CTA's empty barrier), and each
// producer waits for the last releases before it exits. The grid is as many clusters as fit at
// once (cudaOccupancyMaxActiveClusters). 1: no clusters. Measured on H100s (issue 28): with the
// st.global epilogue (runs 111-112) 2 CTAs as fast as none, 4 CTAs 11-12 % slower (an earlier form
// on the non-persistent kernel was slower on an H200: docs/notes/cuda-kernels.md, 2026-11-21
// 12:31); with the TMA-store epilogue (run 131) 2 CTAs 1.5 % (fp16) and 2.0 % (bf16) faster than
// none, where two builds of the same code differed by 0.3 %: 2, the default.
#ifndef KG_BSR_CLUSTER_N
#define KG_BSR_CLUSTER_N 2
#endif
static_assert(KG_BSR_CLUSTER_N == 1 || KG_BSR_CLUSTER_N == 2 || KG_BSR_CLUSTER_N == 4, "KG_BSR_CLUSTER_N: 1, 2 or 4");

// The K step of a stage: 64 (the default; an A row of 128 bytes, the 128-byte swizzle) or 32 (64
// bytes, the 64-byte swizzle: stages of half the size, so twice as many in the same memory, and
// the two wgmma groups a consumer holds at once keep half as many bytes from the producer).
// Measured (run 134, H100): 32 with eight stages 0.73-0.74x the default, with six 0.64-0.65x:
// two wgmmas a group and twice the barrier waits cost more than the deeper prefetch gives.
#ifndef KG_BSR_TILE_K
#define KG_BSR_TILE_K 64
#endif
static_assert(KG_BSR_TILE_K == 64 || KG_BSR_TILE_K == 32, "KG_BSR_TILE_K: 64 or 32");
// The output tile's width: 256 columns (the default: two consumer warpgroups of 64 x 256, 128
// accumulators a thread), 320 or 384 (160 or 192 accumulators: one m64n256 wgmma and one m64n64 or
// m64n128 on the next boxes of B; issue 28, the seventeenth session). The kernel is bound by the
// L2's bandwidth (ncu, run 135: 79 % busy); B's bytes per FLOP are fixed by the tile's 128 rows
// (a block row), and A's (multicast across the cluster) fall as the tile widens: 40 KB a K step
// per 4.2 MFLOP at 256, 56 KB per 6.3 MFLOP at 384 (-9 % bytes per FLOP), 48 KB per 5.2 MFLOP at
// 320 (-6 %). A width past 256 costs its ring a stage (three of 64 or 56 KB) and pads n's last
// strip (8192 columns: 22 strips of 384, 3 % past n; 26 of 320, 1.6 %). Measured (run 156, H100,
// beside two builds of the default): 384 2.3-3.0 % slower at 8192^3, 320 5 % slower; so 256.
#ifndef KG_BSR_TILE_N
#define KG_BSR_TILE_N 256
#endif
static_assert(KG_BSR_TILE_N == 256 || KG_BSR_TILE_N == 320 || KG_BSR_TILE_N == 384, "KG_BSR_TILE_N: 256, 320 or 384");
// The ring's depth: stages of one K step (48 KB each at 64, 24 KB at 32; 56 and 64 KB at tile
// widths 320 and 384). The default fills the shared memory beside the staging (4 at 64, 8 at 32,
// 3 at the wider tiles); 3 at 64 leaves room for a whole output tile's staging (KG_BSR_TMA_STORE
// 4), and was 6-8 % slower than 4 (run 130): the loads' latency wants every stage.
#ifndef KG_BSR_STAGES
#define KG_BSR_STAGES (KG_BSR_TILE_N == 256 ? 256 / KG_BSR_TILE_K : 3 * 64 / KG_BSR_TILE_K)
#endif
static_assert(KG_BSR_STAGES >= 2 && KG_BSR_STAGES <= 8, "KG_BSR_STAGES: 2 to 8");
// The epilogue. 0 (the default): each consumer thread stores its accumulators to C with 4-byte
// st.global, 128 of them, while the tensor cores wait for the next tile. B (1, 2 or 4): each
// consumer warpgroup writes B of its four 64 x 64 output boxes at a time, packed, into its own
// staging buffer in shared memory (the map's 128-byte swizzle), one thread stores them with TMA
// (which leaves out the columns past n), and the warpgroup goes on without waiting for the copies
// to land; the buffer is written again once they have read it (B < 4: within the tile, B = 4: at
// the next tile's epilogue). Measured on H100s (issue 28, runs 130-131, scripts/bsr-experiment.py):
// B = 2 1.18-1.22x as fast as 0 at 8192^3 (fp16 and bf16), B = 1 within 1 % of 2, B = 4 (with
// three stages) 1.13x. The default: 2.
#ifndef KG_BSR_TMA_STORE
#define KG_BSR_TMA_STORE (KG_BSR_TILE_N == 320 ? 1 : 2)  // 320 columns: five boxes
#endif
static_assert(KG_BSR_TMA_STORE == 0 || KG_BSR_TMA_STORE == 1 || KG_BSR_TMA_STORE == 2 || KG_BSR_TMA_STORE == 4,
              "KG_BSR_TMA_STORE: 0, 1, 2 or 4");

// L2 cache hints on the producer's loads (issue 28; ncu, run 135: the L2 79 % and DRAM 60 % busy,
// hit rate 67 %). 0 (the default): none. 1: A's blocks evict_last (every strip reads them again,
// one wave later) and B's rows evict_first (read by the block rows of one wave, then not again).
// 2: only A's evict_last. Measured (run 136, H100): 1 0.76-0.78x (B's rows are read again by the
// other block rows of their wave), 2 1.016x fp16 and 0.997x bf16 (two builds of the default 0.2-0.5 %
// apart): off.
#ifndef KG_BSR_L2_HINT
#define KG_BSR_L2_HINT 0
#endif
static_assert(KG_BSR_L2_HINT >= 0 && KG_BSR_L2_HINT <= 2, "KG_BSR_L2_HINT: 0, 1 or 2");

namespace {

constexpr int kTileM = 128;  // = bm
constexpr int kTileN = KG_BSR_TILE_N;
constexpr int kTileK = KG_BSR_TILE_K;  // one 128-byte (64-byte) swizzle row of fp16
constexpr int kARowBytes = kTileK * 2;
// A's descriptors: K-major, 8-row groups kARowBytes * 8 apart, the swizzle of its rows
constexpr uint32_t kASwizzleMode = kTileK == 64 ? 1 : 2;
constexpr int kStages = KG_BSR_STAGES;
constexpr int kThreads = 384;  // warpgroup 0: producer; 1 and 2: consumers
constexpr int kConsumerWarps = 8;
constexpr int kBoxN = 64;
constexpr int kABytes = kTileM * kARowBytes;
constexpr int kBBoxBytes = kTileK * kBoxN * 2;
constexpr int kBBytes = kBBoxBytes * (kTileN / kBoxN);
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kRingBytes = kStages * kStageBytes;
constexpr int kCBoxBytes = 64 * kBoxN * 2;                 // one 64 x 64 output box
constexpr int kStagingBytes = KG_BSR_TMA_STORE * kCBoxBytes;  // per consumer warpgroup
constexpr int kSmemBytes = 1024 + kRingBytes + 2 * kStagingBytes + 2 * kStages * 8;  // slack, ring, staging, barriers
static_assert(kSmemBytes <= 232448, "the ring and the staging buffers exceed the 227 KB of shared memory a CTA may have");
static_assert((kTileN / kBoxN) % (KG_BSR_TMA_STORE ? KG_BSR_TMA_STORE : 1) == 0,
              "KG_BSR_TMA_STORE: the tile's 64-column output boxes must come in whole groups of it");
constexpr int kCluster = KG_BSR_CLUSTER_N;
// Past 256 columns a consumer thread holds 160 or 192 accumulators, more than the 168 registers
// of 384 threads: the producer warpgroup gives its registers back (setmaxnreg, as
// FlashAttention-3's producer does) and the consumers take 240 (128 x 24 + 256 x 240 = 64512 of
// the SM's 65536). ptxas then allocates the consumers' code within 240 (216 used at 384, no spills).
constexpr bool kWideTile = kTileN > 256;
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;
static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= 65536, "setmaxnreg: over the register file");
constexpr int kARows = kTileM / kCluster;  // rows of each A tile one CTA of a cluster loads

template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    bsr_wgmma_ws_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                        const int* __restrict__ a_cols, T* __restrict__ c, int n, int topk, int bk,
                        int n_block_rows, int n_tiles, const __grid_constant__ CUtensorMap c_map) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t ring = (kg::smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t staging = ring + kRingBytes;            // the consumers' staging buffers, 1024-byte aligned
  const uint32_t full_bar = staging + 2 * kStagingBytes;  // kStages barriers: stage loaded
  const uint32_t empty_bar = full_bar + kStages * 8;  // kStages barriers: stage released

  const int warpgroup = threadIdx.x >> 7;
  const uint32_t rank = kCluster > 1 ? kg::cluster_rank() : 0;
  // Tile t's block row and first column (KG_BSR_GROUP_ROWS above). With clusters t numbers the
  // clusters' groups of kCluster strips (n_tiles of them), and this CTA takes strip `rank` of its
  // group (past n when the strips do not fill the last group: B reads as zeros, nothing stored).
  // A "unit" is one strip without clusters, one group of kCluster strips with them.
  auto tile_at = [&](int tile, int& block_row, int& n0) {
#if KG_BSR_GROUP_ROWS
    const int n_units = n_tiles / n_block_rows;
    const int rows = KG_BSR_GROUP_ROWS < n_block_rows ? KG_BSR_GROUP_ROWS : n_block_rows;
    const int group = tile / (rows * n_units);
    const int idx = tile % (rows * n_units);
    const int rows_in = min(rows, n_block_rows - group * rows);  // the last group may be short
    block_row = group * rows + idx % rows_in;
    const int unit = idx / rows_in;
#else
    block_row = tile % n_block_rows;
    const int unit = tile / n_block_rows;
#endif
    n0 = (unit * kCluster + static_cast<int>(rank)) * kTileN;
  };
  const int steps_per_block = bk / kTileK;
  const int n_steps = topk * steps_per_block;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      kg::mbar_init(full_bar + s * 8, 1);
      kg::mbar_init(empty_bar + s * 8, kConsumerWarps * kCluster);
    }
    kg::mbar_init_fence();
  }
  // the barriers initialised in every CTA of the cluster (whose copies and arrivals reach them)
  if constexpr (kCluster > 1) {
    kg::cluster_sync();
  } else {
    __syncthreads();
  }
  // With clusters each cluster is one worker: tiles (groups of strips) strided by the clusters.
  auto worker = [] { return blockIdx.x / kCluster; };
  auto workers = [] { return gridDim.x / kCluster; };

  // Persistent: CTA i takes tiles i, i + gridDim.x, ... in the order block rows fastest.
  // `it` counts K steps across tiles, so the ring's stages and phases run on across tile
  // boundaries and the producer fills the next tile's stages during the consumers' epilogue.
  if (warpgroup == 0) {
    if constexpr (kWideTile) kg::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x != 0) return;
    [[maybe_unused]] uint64_t keep_a = 0, drop_b = 0;
    if constexpr (KG_BSR_L2_HINT != 0) {
      keep_a = kg::l2_policy_evict_last();
      drop_b = kg::l2_policy_evict_first();
    }
    int it = 0;
    for (int tile = worker(); tile < n_tiles; tile += workers()) {
      int block_row, n0;
      tile_at(tile, block_row, n0);
      const int* cols_row = a_cols + static_cast<int64_t>(block_row) * topk;
      const int a_row0 = block_row * topk * kTileM;
      for (int step = 0; step < n_steps; ++step, ++it) {
        const int t = step / steps_per_block;
        const int k_in_block = (step % steps_per_block) * kTileK;
        const int col_block = __ldg(cols_row + t);  // issued before the wait, which hides it
        const int stage = it % kStages;
        if (it >= kStages) kg::mbar_wait(empty_bar + stage * 8, ((it / kStages) - 1) & 1);
        const uint32_t bar = full_bar + stage * 8;
        const uint32_t dst = ring + stage * kStageBytes;
        kg::mbar_arrive_expect_tx(bar, kStageBytes);
        // this CTA's rows of the A tile (all of them without clusters), where they land
        const uint32_t a_dst = dst + rank * kARows * kARowBytes;
        const int a_row = a_row0 + t * kTileM + static_cast<int>(rank) * kARows;
        constexpr uint16_t kAll = (1u << kCluster) - 1;
        if constexpr (kCluster > 1 && KG_BSR_L2_HINT != 0) {
          kg::tma_load_2d_multicast_hint(a_dst, &a_map, k_in_block, a_row, bar, kAll, keep_a);
        } else if constexpr (kCluster > 1) {
          kg::tma_load_2d_multicast(a_dst, &a_map, k_in_block, a_row, bar, kAll);
        } else if constexpr (KG_BSR_L2_HINT != 0) {
          kg::tma_load_2d_hint(a_dst, &a_map, k_in_block, a_row, bar, keep_a);
        } else {
          kg::tma_load_2d(a_dst, &a_map, k_in_block, a_row, bar);
        }
        const int k_row = col_block * bk + k_in_block;
#pragma unroll
        for (int box = 0; box < kTileN / kBoxN; ++box) {
          if constexpr (KG_BSR_L2_HINT == 1) {
            kg::tma_load_2d_hint(dst + kABytes + box * kBBoxBytes, &b_map, n0 + box * kBoxN, k_row, bar, drop_b);
          } else {
            kg::tma_load_2d(dst + kABytes + box * kBBoxBytes, &b_map, n0 + box * kBoxN, k_row, bar);
          }
        }
      }
    }
    if constexpr (kCluster > 1) {
      // The last release of every stage (its use `it`, parity (it / kStages) & 1): after them no
      // CTA of the cluster arrives on this one's barriers, so it may exit.
      for (int last = it > kStages ? it - kStages : 0; last < it; ++last) {
        kg::mbar_wait(empty_bar + (last % kStages) * 8, (last / kStages) & 1);
      }
    }
    return;
  }

  if constexpr (kWideTile) kg::setmaxnreg_inc<kConsumerRegs>();
  const int consumer = warpgroup - 1;
  const int lane = threadIdx.x & 31;
  const int warp_in_group = (threadIdx.x >> 5) & 3;
  // A stage released: on this CTA's empty barrier, or on every CTA's of the cluster (each refill
  // of it lands in all of them).
  auto release = [](uint32_t bar) { kg::mbar_release<kCluster>(bar); };
  int it = 0;
  for (int tile = worker(); tile < n_tiles; tile += workers()) {
    int block_row, n0;
    tile_at(tile, block_row, n0);
    float acc[kTileN / 2];
#pragma unroll
    for (int i = 0; i < kTileN / 2; ++i) acc[i] = 0.f;

    for (int step = 0; step < n_steps; ++step, ++it) {
      const int stage = it % kStages;
      kg::mbar_wait(full_bar + stage * 8, (it / kStages) & 1);
      const uint32_t a_tile = ring + stage * kStageBytes + consumer * 64 * kARowBytes;
      const uint32_t b_tile = ring + stage * kStageBytes + kABytes;
      kg::wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < kTileK / 16; ++k16) {
        const uint64_t desc_a = kg::make_desc(a_tile + k16 * 32, 16, 8 * kARowBytes, kASwizzleMode);
        const uint64_t desc_b = kg::make_desc(b_tile + k16 * 16 * 128, kBBoxBytes, 1024);
        kg::Wgmma<T, 256>::run(acc, desc_a, desc_b);
        if constexpr (kTileN > 256) {
          // the columns past 256: B's boxes 4 on, the accumulators past 128
          kg::WgmmaSSt<T, kTileN - 256>::run(acc + 128, desc_a, kg::desc_advance(desc_b, 4 * kBBoxBytes));
        }
      }
      kg::wgmma_commit();
      // The group committed one step ago has retired: its stage goes back to the producer.
      kg::wgmma_wait<1>();
      if (step > 0 && lane == 0) release(empty_bar + ((it - 1) % kStages) * 8);
    }
    kg::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kTileN / 2; ++i) kg::pin(acc[i]);
    // The tile's last stage is free too: the producer is already filling the next tile's.
    if (lane == 0) release(empty_bar + ((it - 1) % kStages) * 8);

    // Accumulator layout of m64nNk16: warp w of the warpgroup holds rows 16w + lane / 4 and
    // + 8; registers 4j + {0,1} are columns 8j + 2 (lane % 4) + {0,1} of the first row,
    // 4j + {2,3} the same columns of the second.
#if KG_BSR_TMA_STORE
    {
      constexpr int kBoxes = kTileN / kBoxN;
      constexpr int kAtOnce = KG_BSR_TMA_STORE;
      const uint32_t s_c = staging + consumer * kStagingBytes;
      const bool leader = warp_in_group == 0 && lane == 0;
      // The box's rows are 128 bytes, 1024-byte aligned, so a row's 16-byte chunks are swizzled by
      // the row's index mod 8: lane / 4 for both of the thread's rows.
      const int r = warp_in_group * 16 + (lane >> 2);
      const uint32_t thread_off = r * 128 + (lane & 3) * 4;
      const int swz = lane >> 2;
      const int c_row = block_row * kTileM + consumer * 64;
      (void)c;  // written through c_map
#pragma unroll
      for (int b0 = 0; b0 < kBoxes; b0 += kAtOnce) {
        // The buffer free: the copies issued from it before (this tile's or the last one's) have
        // read it; then the warpgroup's 128 threads meet on named barrier 1 + consumer.
        if (leader) kg::bulk_wait_read();
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
#pragma unroll
        for (int bb = 0; bb < kAtOnce; ++bb) {
#pragma unroll
          for (int chunk = 0; chunk < 8; ++chunk) {
            const int j = (b0 + bb) * 8 + chunk;
            const uint32_t addr = s_c + bb * kCBoxBytes + thread_off + ((chunk ^ swz) * 16);
            kg::st_shared_u32(addr, kg::Mma<T>::pack(acc[4 * j], acc[4 * j + 1]));
            kg::st_shared_u32(addr + 8 * 128, kg::Mma<T>::pack(acc[4 * j + 2], acc[4 * j + 3]));
          }
        }
        // the writes visible to the copy engine before one thread stores the boxes
        kg::fence_proxy_async();
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
        if (leader) {
#pragma unroll
          for (int bb = 0; bb < kAtOnce; ++bb) {
            kg::tma_store_2d(&c_map, s_c + bb * kCBoxBytes, n0 + (b0 + bb) * kBoxN, c_row);
          }
          kg::bulk_commit();
        }
      }
    }
#else
    const int64_t row0 = static_cast<int64_t>(block_row) * kTileM + consumer * 64 + warp_in_group * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < kTileN / 8; ++j) {
      const int col = n0 + j * 8 + (lane & 3) * 2;
      if (col < n) {
        *reinterpret_cast<uint32_t*>(c + row0 * n + col) = kg::Mma<T>::pack(acc[4 * j], acc[4 * j + 1]);
        *reinterpret_cast<uint32_t*>(c + (row0 + 8) * n + col) = kg::Mma<T>::pack(acc[4 * j + 2], acc[4 * j + 3]);
      }
    }
#endif
  }
#if KG_BSR_TMA_STORE
  // the CTA's shared memory goes when its last thread exits: the last copies must have read it
  if (threadIdx.x % 128 == 0) kg::bulk_wait_read();
#endif
}

// 2-D row-major [rows][cols] map with 128-byte swizzle (or `swizzle`) and a box of box_rows x box_cols.
bool encode_2d(CUtensorMap* map, CUtensorMapDataType type, const void* base, uint64_t rows, uint64_t cols,
               uint32_t box_rows, uint32_t box_cols, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  const uint64_t dims[2] = {cols, rows};
  const uint32_t box[2] = {box_cols, box_rows};
  return kg::encode_tiled(map, type, base, 2, dims, box, swizzle);
}

template <typename T>
cudaError_t launch(CUtensorMapDataType type, const void* a_values, const int* a_cols, const void* b, void* c, int m,
                   int n, int k, int bk, int topk, cudaStream_t stream) {
  CUtensorMap a_map;
  CUtensorMap b_map;
  const uint64_t a_rows = static_cast<uint64_t>(m) * topk;  // (m / bm) * topk blocks of bm rows
  if (!encode_2d(&a_map, type, a_values, a_rows, bk, kARows, kTileK,
                 kTileK == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B) ||
      !encode_2d(&b_map, type, b, k, n, kTileK, kBoxN)) {
    return cudaErrorInvalidValue;
  }
  CUtensorMap c_map{};  // the output in 64 x 64 boxes, for the TMA-store epilogue
  if (KG_BSR_TMA_STORE && !encode_2d(&c_map, type, c, m, n, 64, kBoxN)) {
    return cudaErrorInvalidValue;
  }
  auto kernel = bsr_wgmma_ws_kernel<T>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (err != cudaSuccess) return err;
  int device = 0;
  int sm_count = 0;
  err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  const int n_block_rows = m / kTileM;
  if constexpr (kCluster > 1) {
    // n_tiles counts groups of kCluster strips; the grid is as many clusters as fit at once
    const int n_groups = n_block_rows * ((n + kTileN * kCluster - 1) / (kTileN * kCluster));
    kg::ClusterLaunch launch(kCluster, dim3(kThreads), kSmemBytes, stream);
    launch.config.gridDim = dim3(sm_count / kCluster * kCluster);
    int clusters = 0;
    err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config);
    if (err != cudaSuccess) return err;
    if (clusters < 1) return cudaErrorInvalidConfiguration;
    if (clusters > n_groups) clusters = n_groups;
    launch.config.gridDim = dim3(clusters * kCluster);
    err = cudaLaunchKernelEx(&launch.config, kernel, a_map, b_map, a_cols, static_cast<T*>(c), n, topk, bk, n_block_rows,
                             n_groups, c_map);
    if (err != cudaSuccess) return err;
  } else {
    const int n_tiles = n_block_rows * ((n + kTileN - 1) / kTileN);
    const int grid = n_tiles < sm_count ? n_tiles : sm_count;
    kernel<<<grid, kThreads, kSmemBytes, stream>>>(a_map, b_map, a_cols, static_cast<T*>(c), n, topk, bk, n_block_rows,
                                                   n_tiles, c_map);
  }
  return cudaGetLastError();
}

}  // namespace

// Same contract as kg_bsr_gemm_mma: a_values (m / bm, topk, bm, bk) contiguous; a_cols
// (m / bm, topk) int32, each < k / bk; b (k, n) row-major; c (m, n) row-major; dtype 0 = fp16,
// 1 = bf16; bm = 128, bk % 64 == 0, n % 8 == 0 (TMA needs 16-byte row strides); column
// tails masked. a_values, b and (with the TMA-store epilogue) c must be 16-byte aligned (TMA).
extern "C" int kg_bsr_gemm_wgmma_ws(const void* a_values, const int* a_cols, const void* b, void* c, int m, int n,
                                    int k, int bm, int bk, int topk, int dtype, void* stream) {
  if (!kg::bsr_args_ok(m, n, k, bm, bk, topk, kTileM, kTileK) ||
      static_cast<int64_t>(m / kTileM) * ((n + kTileN - 1) / kTileN) > INT32_MAX ||
      reinterpret_cast<uintptr_t>(a_values) % 16 != 0 || reinterpret_cast<uintptr_t>(b) % 16 != 0 ||
      (KG_BSR_TMA_STORE && reinterpret_cast<uintptr_t>(c) % 16 != 0) ||
      static_cast<int64_t>(m) * topk > (int64_t{1} << 31) || k > (1 << 30)) {
    return cudaErrorInvalidValue;
  }
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return kg::dispatch_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    const CUtensorMapDataType type =
        dtype == 0 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    return static_cast<int>(launch<T>(type, a_values, a_cols, b, c, m, n, k, bk, topk, s));
  });
}

// Name of a cudaError_t returned by the entry above, for the Python wrapper's messages.
extern "C" const char* kg_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
