// FlashAttention forward for sm_90a on Hopper's warpgroup MMA (wgmma), fed by TMA.
//
// One CTA owns kBlockM = 128 query rows of one (batch, head) (192 at D = 64: below) and has
// three warpgroups (four at D = 64)
// (FlashAttention-3's warp-specialised form, the default since 2026-11-27): warpgroup 0 is the
// producer (setmaxnreg.dec to 24 registers; its thread 0 issues the bulk tensor copies (TMA) of
// Q once and of K and V tiles of kBlockN keys into KG_FA_STAGES-deep rings (default two),
// each copy completing on its buffer's "full" mbarrier and each refill waiting on its buffer's
// "empty" mbarrier, then the warpgroup exits); warpgroups 1 and 2 are the consumers
// (setmaxnreg.inc to 240), 64 query rows each (wgmma's M), and release a buffer on its "empty"
// mbarrier once the wgmmas that read it have retired. No consumer warp waits on an empty barrier,
// and there is no CTA-wide barrier in the key loop. On an H100 (2026-11-27, run 88,
// scripts/fa-experiment.py) this form ran the headline cases 1.17-1.28× as fast as the earlier one.
//
// The causal D = 64 instances run a persistent grid instead of a CTA per query block, with two Q
// buffers (KG_FA_PERSISTENT_CAUSAL_D64, below: 2.2-2.8 % faster there on an H100, 2026-11-28),
// every SM's CTA taking its items in a snake (KG_FA_PERSISTENT_ORDER). The causal D = 128 ones
// (since the twenty-first session, measured on H200s only) run the persistent grid of
// KG_FA_PERSISTENT_CAUSAL_D128 3 on 160-key tiles, the items claimed in the non-persistent grid's
// order (KG_FA_PERSISTENT_ORDER_D128 2); a call of at most one item per SM takes a CTA per item on
// 192-key tiles (KG_FA_CAUSAL_CTA_BLOCK_N_D128), a sequence of at most 128 keys on 128-key ones, and
// a shorter sequence the persistent grid on 128-key tiles where they compute fewer keys
// (KG_FA_CAUSAL_SHORT_KEYS_D128).
//
// -DKG_FA_PRODUCER_WG=0 builds the earlier form: 256 threads, thread 0 of the first consumer
// warpgroup also the producer, so that warp stalls inside the key loop until the other warpgroup
// has released K(j).
//
// kBlockN, the keys per tile, is a template parameter that launch() picks per instance with
// block_n(): 176 for the non-causal D = 128 instances (FlashAttention-3's tile there: S is
// m64n176k16, P V 11 k-steps of 16 keys), 160 for the causal D = 128 ones
// (KG_FA_CAUSAL_BLOCK_N_D128, below; 192 or 128 in the calls above), 128 for D = 64. -DKG_FA_BLOCK_N=128 gives the non-causal
// D = 128 instances 128 keys. The default since 2026-11-27 (run 90, scripts/fa-experiment.py on an
// H100: 1.3 % (fp16) and 2.1 % (bf16) faster than 128 keys at B16 H96 S4096 D128).
// -DKG_FA_D64_BLOCK_N=192 gives the non-causal D = 64 instances 192 keys (FlashAttention-3's
// kBlockN at head dim 64 without the causal mask: S m64n192k16, P V 12 k-steps); an experiment's
// option (with P through shared memory 12 % slower on an H100, run 119). With three consumer
// warpgroups it spills: S(j + 1), P(j) and O
// in flight together are 96 + 48 + 32 registers of the 160 (FA3 keeps this tile's P in shared
// memory), and ptxas serialises those instances' wgmmas (C7512). -DKG_FA_D64_P_SMEM=1 (with it)
// does what FlashAttention-3 does there: P goes through shared memory (below), 0 stack or spills.
//
// At D = 64 the CTA has three consumer warpgroups (192 query rows, 512 threads, setmaxnreg 32/160,
// the ping-pong a round of three on named barriers 1-3): FlashAttention-3's tile at head dim 64,
// the default since 2026-11-27 (run 90: 12.4-12.6 % faster than two warpgroups non-causal,
// 2.2-2.6 % causal). -DKG_FA_D64_WG3=0 gives D = 64 two, as D = 128; it follows
// KG_FA_PRODUCER_WG when not given (three consumers need the producer warpgroup).
//
// Per warpgroup and key tile j:
//   S(j+1) = Q K(j+1)^T   wgmma, A (Q) and B (K) from shared memory, both K-major;
//   O += P(j) V(j)        wgmma, A (P) from registers, B (V) from shared memory, MN-major;
// both issued back to back, so the tensor cores run S(j+1) and P(j)V(j) while the
// warpgroup waits only for S(j+1), then computes its online softmax while P(j)V(j) is still
// in flight, and only then waits for O. (So the source orders it; ptxas 13.0 moves the wait for
// O ahead of the softmax in every instance, and keeping the source's order was slower wherever
// it fits: KG_FA_FORCE_OVERLAP below. The other warpgroups' GEMMs cover a warpgroup's softmax.)
// P never touches shared memory: the accumulator
// layout of m64nNk16 is, per warp, the A-register layout of the next wgmma, so P is repacked
// in registers (except under KG_FA_D64_P_SMEM: there the non-causal D = 64 instances store P,
// after O's wait, into a shared-memory buffer per warpgroup, and P V takes A from there, an SS
// wgmma with V MN-major as before). TMA writes the 128-byte swizzle the descriptors describe;
// rows past the end of a sequence read as zeros (3-D tensor maps: head dim, sequence, batch x
// head), and masked scores are -inf before the row max, so tails need no other special case.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <string>
#include <type_traits>
#include <vector>

#include "../../common/cuda/ptx.cuh"
#include "../../common/cuda/tma.cuh"
#include "../../common/cuda/wgmma.cuh"
#include "../../common/cuda/wgmma_ops.cuh"

// Ping-pong between the two warpgroups (FlashAttention-3's schedule): a warpgroup issues its
// wgmmas only after the other has issued its own, so one warpgroup's softmax runs while the
// other's matrix products occupy the tensor cores. 0 lets them run unordered.
#ifndef KG_FA_PINGPONG
#define KG_FA_PINGPONG 1
#endif
// 1 (the default): a producer warpgroup of its own (384 threads); 0: thread 0 of warpgroup 0
// produces too (256 threads).
#ifndef KG_FA_PRODUCER_WG
#define KG_FA_PRODUCER_WG 1
#endif
// Depth of the K and V rings (tiles of each in flight).
#ifndef KG_FA_STAGES
#define KG_FA_STAGES 2
#endif
// The key loop unrolled by two tiles (issue 28): the ring's two stages and the phases become
// constants of each half, 4.5-5.5 % fewer instructions per tile in the SASS (nvcc 13.0, the key
// loop counted from the ping-pong's BAR.SYNC to its back edge: 814 -> 777 at D128, 606 -> 574 at
// D64). Measured (run 137, H100, scripts/fa-experiment.py, shuffled rounds, two copies of the
// default 0.0-1.5 % apart): D64 without the mask 2.2 % (fp16) and 0.7 % (bf16) faster, D64 causal
// 1.6-2.0 % slower, D128 8-11 % slower (twice the loop's code). KG_FA_UNROLL_KEYS_D64 is D64
// without the mask, KG_FA_UNROLL_KEYS every other instance: 2 and 1, the defaults.
#ifndef KG_FA_UNROLL_KEYS
#define KG_FA_UNROLL_KEYS 1
#endif
#ifndef KG_FA_UNROLL_KEYS_D64
#define KG_FA_UNROLL_KEYS_D64 2
#endif
static_assert((KG_FA_UNROLL_KEYS == 1 || KG_FA_UNROLL_KEYS == 2) && (KG_FA_UNROLL_KEYS_D64 == 1 || KG_FA_UNROLL_KEYS_D64 == 2),
              "KG_FA_UNROLL_KEYS, KG_FA_UNROLL_KEYS_D64: 1 or 2");
// Keys per tile of the non-causal D = 128 instances (176, the default, 128, 96, 160 or 192: 2 stages
// of K and V at 48 KB each, 225 KB of shared memory with Q); every other
// instance uses 128.
#ifndef KG_FA_BLOCK_N
#define KG_FA_BLOCK_N 176
#endif
// Keys per tile of the non-causal D = 64 instances (128, the default, or 192); causal D = 64
// keeps 128, as FlashAttention-3 does. 64 or 96 give every D = 64 instance, causal too, that many
// keys (whole tiles per 192-row query tile's diagonal), small enough for KG_FA_FORCE_OVERLAP's
// registers at three consumer warpgroups (64 is; 96 is not).
#ifndef KG_FA_D64_BLOCK_N
#define KG_FA_D64_BLOCK_N 128
#endif
// Bit 1 (D = 64) and bit 2 (D = 128): those instances compute the softmax of S(j + 1) while
// P(j) V(j) is in flight, as the source always meant: ptxas 13.0 otherwise places the wait for
// P(j) V(j) (WARPGROUP.DEPBAR.LE gsb0, 0x0) before every exponential of the tile (found
// 2026-11-27, twelfth session, in the SASS of every instance), so the intra-warpgroup overlap
// never happened. A branch on the softmax's row sums (never taken: they are not negative; it
// traps) between the softmax and the wait keeps the softmax first. ptxas keeps it only where the
// registers of S(j + 1), P(j) and O fit the launch's budget (65536 / threads, not setmaxnreg's);
// elsewhere it serialises the wgmmas (C7512), so the branch goes only into instances where they
// leave 32 registers (overlap_fits()): D = 64 with two consumer warpgroups (-DKG_FA_D64_WG3=0:
// 64 + 32 + 32 of 168) or with three and 64 keys (-DKG_FA_D64_BLOCK_N=64: 32 + 16 + 32 of 128),
// D = 128 with 96 keys (-DKG_FA_BLOCK_N=96, non-causal: 48 + 24 + 64 of 168); not 96 keys at three
// warpgroups (48 + 24 + 32 of 128: C7512) nor 128 at D = 128 (64 + 32 + 64 of 168). 0 (the
// default): no branch. Measured on H100s (issue 28, runs 115, 116, 119): 1-16 % slower wherever
// it applies (docs/notes/kernel-gaps.md, the twelfth session).
#ifndef KG_FA_FORCE_OVERLAP
#define KG_FA_FORCE_OVERLAP 0
#endif
// 1: the non-causal D = 64 instances (192 keys, three consumer warpgroups) pass P to P V through
// shared memory (FlashAttention-3's form of that tile): after the softmax each consumer warpgroup
// stores its 64 x kBlockN P tile into a buffer of its own, in the 128-byte swizzle of a K-major
// wgmma A operand, and P V is an SS wgmma, so P's 48 registers are not live across S(j + 1).
// With -DKG_FA_D64_BLOCK_N=128 every D = 64 instance, causal too, takes P from shared memory: the
// form in which KG_FA_FORCE_OVERLAP's softmax fits under P V at three consumer warpgroups (S 64 +
// O 32 + 32 of 128 registers). 0 (the default): P stays in registers. Needs KG_FA_D64_BLOCK_N 192
// or 128 and the three consumers, not KG_FA_PERSISTENT. Measured: docs/notes/kernel-gaps.md,
// the twelfth session.
#ifndef KG_FA_D64_P_SMEM
#define KG_FA_D64_P_SMEM 0
#endif
// 1: the D = 128 instances whose key tile is 128 (the causal ones; every one with
// -DKG_FA_BLOCK_N=128) pass P through shared memory as KG_FA_D64_P_SMEM does (16 KB per consumer
// warpgroup): P(j) V(j) in flight then holds only O's registers, so with KG_FA_FORCE_OVERLAP's
// bit 2 the softmax of S(j + 1) fits under it in ptxas's budget (64 + 64 + 32 of 168). 0 (the
// default): P in registers. Measured on an H100 (run 119): 7.5-9.5 % slower at D = 128, 14-16 %
// with the overlap.
#ifndef KG_FA_D128_P_SMEM
#define KG_FA_D128_P_SMEM 0
#endif
// 1 (the default with the producer warpgroup): the D = 64 instances have three consumer
// warpgroups (192 query rows per CTA, 512 threads, setmaxnreg 32/160: FlashAttention-3's tile at
// head dim 64); 0: two, as D = 128. Needs the producer warpgroup.
#ifndef KG_FA_D64_WG3
#define KG_FA_D64_WG3 KG_FA_PRODUCER_WG
#endif
// 1: a persistent grid, one CTA per SM, each walking the work items (query block, batch x head)
// with the grid's stride: the producer loads the next item's Q and first key tiles while the
// consumers finish the last one (its final P V and its stores), so an item's prologue and
// epilogue overlap its neighbours' loops instead of a CTA's launch. 0 (the default): a CTA per
// item. Needs the producer warpgroup. Measured on H100s (runs 96 and 120): no gain, 1.6-5.8 %
// slower with shuffled rounds.
#ifndef KG_FA_PERSISTENT
#define KG_FA_PERSISTENT 0
#endif
// 1: the causal instances take the persistent grid above (per head dim: KG_FA_PERSISTENT_CAUSAL_D64,
// KG_FA_PERSISTENT_CAUSAL_D128; KG_FA_PERSISTENT_CAUSAL, when given, sets both, as in runs 140 and
// 148) and keep the TMA-store epilogue:
// each consumer warpgroup stages its output in an O buffer of its own (Q's size, after the
// rings) instead of Q's rows, so the producer may load the next item's Q while the output of
// the last one is still being written, and the thread that stores a warpgroup's rows waits for
// the copies to have read them only before the warpgroup's next item writes there. A causal
// grid has as many CTAs as a non-causal one for half the key tiles, so the fixed cost of each
// (the launch, Q and the first K loaded with nothing to compute, the last P V and the stores)
// weighs twice as much there (issue 28's hypothesis, the fourteenth session). 2: the same with two
// Q buffers, the next item's Q loaded into the other while the consumers finish the last item
// (with one, the next Q waits for the item's last S: its load's latency lies between the items).
// 0: a CTA per item. Needs KG_FA_TMA_STORE, the producer warpgroup and not KG_FA_PERSISTENT.
// Measured on H100s (fifteenth session, scripts/fa-experiment.py, shuffled rounds beside two builds
// of the default): 1 no gain (run 140: 0.4-1.0 % slower on the four causal cases); 2 (runs 148,
// 149) 2.2-2.8 % faster at D64 causal (fp16 and bf16, the copies within 1.1 %), at D128 causal
// 0.7 % slower (fp16) and 1.0 % faster (bf16). So the defaults: 2 at D64, 0 at D128 (why the
// head dims differ was not measured); both 0 where the TMA store, the producer warpgroup or the
// non-persistent grid are turned off. Again at D128 causal with 128-key tiles (sixteenth session,
// runs 150 and 151, two more H100s): 0.6 % and 0.4 % slower; with KG_FA_PERSISTENT_ORDER's snake
// 0.4 % faster (fp16) and 1.5 % slower (bf16). D128 causal now takes 192-key tiles
// (KG_FA_CAUSAL_BLOCK_N_D128), beside which the persistent grid's buffers do not fit.
// 3 (issue 28, the twentieth session): two Q buffers as 2, but no O buffer: each warpgroup stages
// its output in its own rows of the item's Q buffer (as the non-persistent grid does), and the
// thread that stores them releases that Q buffer (Q empty, one arrival per consumer warpgroup)
// once the copies have read it, which it checks during the next item's first S. So the persistent
// grid needs 64 KB beside the rings, and 160-key tiles fit (KG_FA_CAUSAL_BLOCK_N_D128=160).
// Measured on five H200s (runs 176-182, scripts/fa-experiment.py, the harness's regime, beside two
// builds of the default 0.03 % apart): with 160 keys, KG_FA_DESC_STAGE and KG_FA_PERSISTENT_ORDER 2
// (KG_FA_UNIFORM_ITEM) 2.1-2.6 % faster than the default at D128 causal (B16 H96 S4096, fp16 and
// bf16), 0.5-0.9 % at B4 H96 S8192, 26-27 % at B2 H3 S4112; an item costs its SM 5,170 cycles
// against the default's 7,580 (cuDNN's 4,950), its key tiles 1.3 % more (160 keys against 192). In
// the snake's order 1.0-1.9 % faster and 0.4-1.1 % slower. Calls of at most one item per SM ran
// 1-11 % slower (7-18 us: the grid has nothing to overlap there), so those take a CTA per item on
// KG_FA_CAUSAL_CTA_BLOCK_N_D128's tiles (dispatch()). The default at D128 causal since the
// twenty-first session (2026-11-28), with 160-key tiles, KG_FA_DESC_STAGE and order 2 in that
// instance: on H200s only; no H100 has run it. 0 where the key tile is not 160 (an experiment's
// -DKG_FA_CAUSAL_BLOCK_N_D128), or the TMA store, the producer warpgroup or the non-persistent
// grid are turned off.
#ifndef KG_FA_PERSISTENT_CAUSAL_D64
#ifdef KG_FA_PERSISTENT_CAUSAL
#define KG_FA_PERSISTENT_CAUSAL_D64 KG_FA_PERSISTENT_CAUSAL
#else
#define KG_FA_PERSISTENT_CAUSAL_D64 (KG_FA_TMA_STORE && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT ? 2 : 0)
#endif
#endif
#ifndef KG_FA_PERSISTENT_CAUSAL_D128
#ifdef KG_FA_PERSISTENT_CAUSAL
#define KG_FA_PERSISTENT_CAUSAL_D128 KG_FA_PERSISTENT_CAUSAL
#else
#define KG_FA_PERSISTENT_CAUSAL_D128 \
  (KG_FA_TMA_STORE && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT && KG_FA_CAUSAL_BLOCK_N_D128 == 160 ? 3 : 0)
#endif
#endif
// 3 (issue 28, the twentieth session): the non-causal D = 128 instances run KG_FA_PERSISTENT_CAUSAL
// 3's grid (two Q buffers, each warpgroup's output staged in its rows of the item's Q buffer), one
// CTA per SM taking the items with the grid's stride (every item the same work), so that an item's
// start and end overlap its neighbours' key tiles instead of a CTA's launch. Fits beside rings of
// 160-key tiles (-DKG_FA_BLOCK_N=160) or 128. 0 (the default): a CTA per item.
#ifndef KG_FA_PERSISTENT_NONCAUSAL_D128
#define KG_FA_PERSISTENT_NONCAUSAL_D128 0
#endif
// 1: the D = 128 instances whose key tile is wider than 128 (non-causal: 176 keys) compute a
// sequence's last key tile 64 keys wide when it has no more: its S an m64n64 wgmma (into 32
// registers of its own, copied into S's once retired: the same wgmma on S's first registers
// made ptxas serialise every wgmma, C7511), its softmax and P those columns, its P V 4 k-steps
// instead of 11. At S = 4096 the last of 24 tiles holds 48 keys, so the full-width tile computes
// 128 keys that the mask then zeroes (3 % of the work). launch() picks the instance from seq_k
// (a sequence of one tile stays full-width). 128 keys wide spilled (156 bytes). The default since
// 2026-11-28 (fifteenth session, scripts/fa-experiment.py on three H100s, runs 141, 142, 144,
// shuffled rounds beside two builds of the old default, 0.2-1.0 % apart): 1.2-2.6 % faster at
// fp16 and 2.2-2.7 % at bf16 (B16 H96 S4096 D128), every probe of the boundary (--seq
// 177,193,240,241,4112) passing with the old build's error. 0: every tile full-width.
#ifndef KG_FA_NARROW_LAST
#define KG_FA_NARROW_LAST 1
#endif
// 1: in the causal instances whose key tile is the CTA's 128 rows (D = 128), the first consumer
// warpgroup computes the diagonal tile (the last) only 64 keys wide: its rows m0..m0 + 63 see
// none of the tile's keys m0 + 64.. (the tile's S an m64n64 wgmma, its P V 4 k-steps; the
// second warpgroup's stays 128 wide). Only where the last tile starts at m0 (not where seq_k
// ends before the CTA's rows). 0 (the default): every warpgroup's tiles full-width. Measured
// (run 143, H100, beside two builds of the default): 1.0 % slower at fp16, 0.3 % faster at bf16,
// so it stays off: a quarter of one tile of ~16 per CTA is under the run's noise.
#ifndef KG_FA_NARROW_DIAG
#define KG_FA_NARROW_DIAG 0
#endif
// Keys per tile of the causal D = 128 instances: 128 (a tile per 128-row query block, the
// diagonal the last tile), 176 or 192 (the default; the non-causal instances' tile widths: fewer
// tiles per item, each with the same fixed cost of waits, turns and releases). Tiles of 176 or 192
// keys do not align with the query blocks: the diagonal may cross two tiles (each masked), a
// warpgroup stops at the last tile its own 64 rows see (KG_FA_WG_SKIP), and under
// KG_FA_NARROW_CAUSAL that tile is computed 64 keys wide when it holds no more for the warpgroup's
// rows (decided per warpgroup at run time, a branch between two key steps outside the loop). At
// 192 keys the warpgroups' last tiles hold 64, 128 or 192 keys in turn (the query blocks step by
// 128), at 176 any multiple of 16. The default since 2026-11-28 (sixteenth session,
// scripts/fa-experiment.py with shuffled rounds beside two builds of the old default on three
// H100s, runs 150-152, B16 H96 S4096): 192 keys 1.0-1.7 % faster at fp16, 0.7-1.8 % at bf16; 176
// keys 0.5-1.6 % and 0.5-0.9 %; 176 without the narrow last tile no faster (0.2 % and 0.8 %
// slower). A sequence of at most 128 keys takes the 128-key instance (dispatch()). The persistent
// grid (KG_FA_PERSISTENT_CAUSAL_D128) fits beside rings of 128 or (mode 3) 160 keys, not wider.
// 160 (the default since the twenty-first session, on H200s only: the persistent grid's, above)
// with KG_FA_PERSISTENT_CAUSAL_D128 3; calls of at most one item per SM take a CTA per item on
// 192-key tiles (KG_FA_CAUSAL_CTA_BLOCK_N_D128). 192 where the persistent grid cannot run (without
// the TMA store or the producer warpgroup, or under KG_FA_PERSISTENT), as before.
#ifndef KG_FA_CAUSAL_BLOCK_N_D128
#define KG_FA_CAUSAL_BLOCK_N_D128 (KG_FA_TMA_STORE && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT ? 160 : 192)
#endif
// K > 0: beside the persistent grid's 160-key tiles, causal D = 128 calls of at most K queries and
// keys (more than 128 keys, more than one item per SM) take the same grid on 128-key tiles (an
// instance of its own, kShort, named "persistent" by scripts/fa-experiment.py) where those compute
// at most 94 % of the keys the 160-key tiles would (short_tiles_pay()): a 160-key tile computes
// more keys past the diagonal where the items hold few tiles. Measured on H200s (runs 186-188; the
// 128-key tiles' time over the 160-key ones', and their keys' ratio): S = 129 1.08 (1.2), S = 256
// to 512 0.91-0.94 (0.8), 1000 and 1024 0.97 (0.9), 1536 0.99 (0.931), 2048 1.005 (0.946), 3072
// 1.015 (0.96), 4096 1.022 (0.971). 2048 by default where the 160-key persistent grid is, else 0.
#ifndef KG_FA_CAUSAL_SHORT_KEYS_D128
#define KG_FA_CAUSAL_SHORT_KEYS_D128 (KG_FA_PERSISTENT_CAUSAL_D128 == 3 && KG_FA_CAUSAL_BLOCK_N_D128 == 160 ? 2048 : 0)
#endif
// Keys per tile of the causal D = 128 instance that calls of at most one item (128 query rows of a
// head) per SM take, a CTA per item, when the instance of KG_FA_CAUSAL_BLOCK_N_D128 keys runs the
// persistent grid: 128, 160, 176 or 192 (the default with the persistent grid's 160-key tiles: the
// default before the twenty-first session). Else the same as KG_FA_CAUSAL_BLOCK_N_D128 (as with
// the earlier runs' persistent 128-key tiles), and when given so every call takes that one instance.
#ifndef KG_FA_CAUSAL_CTA_BLOCK_N_D128
#define KG_FA_CAUSAL_CTA_BLOCK_N_D128 \
  (KG_FA_PERSISTENT_CAUSAL_D128 && KG_FA_CAUSAL_BLOCK_N_D128 == 160 ? 192 : KG_FA_CAUSAL_BLOCK_N_D128)
#endif
// The order in which a persistent causal grid's CTAs take their items. 0: CTA c takes items c,
// c + C, c + 2C, ... of the C CTAs, and launch() lowers C until it is coprime with the query
// blocks per head, so that every CTA walks every block (132 SMs at 32 blocks per head would give
// a quarter of the CTAs blocks of 15 key tiles on average, another quarter 18); an SM or more
// stays idle. 1 (the default): every SM takes a CTA, and the rounds snake: in round k the CTAs
// take items kC .. kC + C - 1, CTA c item kC + c in even rounds and kC + C - 1 - c in odd ones, so
// each CTA's blocks of two consecutive rounds sum to the same number of key tiles as any other's.
// The default since 2026-11-28 (sixteenth session, scripts/fa-experiment.py with shuffled rounds
// beside two builds of the old order: D64 causal 1.4-2.1 % (fp16) and 1.7-2.5 % (bf16) faster in
// run 151, two builds with the same D64 code; 1.4 % and 1.7 % in run 152 on another H100). The
// harness's pull request (run 154) also read D64 causal at S = 1000 23 % faster: its 36 items had
// 35 CTAs (coprime with the 6 query blocks), one of which ran two.
//
// 2 (an experiment's option, issue 28, the eighteenth session): the CTAs claim their items at run
// time, in the non-persistent grid's order (heads one after another, each head's query blocks
// heaviest first), from a counter in global memory (an atomic add by the producer once it has
// issued the copies of its item, which passes each item to the consumers in shared memory after
// the barriers): the hardware's own dispatch of a CTA per item, which keeps the items running at
// once on a few heads (their K and V in the L2) and the SMs evenly loaded, without a CTA's start and
// end between items. The counter is the call's own (launch(): stream-ordered memory, zeroed on the
// call's stream, freed after it), so calls on several streams and in CUDA graphs never share one;
// only grids of more than four items per CTA take one. Smaller grids take their items in the
// snake's order (no counter), the items ordered heaviest first across all the heads (the grid's
// tail its lightest items). (In the twentieth session's runs 176-179 the counters were the
// process's, reset by each launch's last CTA, and every grid claimed: claimed one item ahead (run
// 176, run 177's p160e), B2 H3 S4112, 198 items on 132 CTAs, ran 28-29 % slower than a CTA per
// item, the items falling to the CTAs in their order of arrival; claimed late 1.4-1.9 % slower;
// heaviest first across the heads 26 % faster, which in 32 MB sections of heads cost the headline
// 1.4-1.6 %. Run 182, as the code is now: 27 % faster.) Measured on H200s
// (runs 163-164, the harness's regime, beside the same 128-key tiles without persistence): the snake
// 0.7 % (S = 4096) and 4.0 % (S = 8192, B = 4) slower, order 0 2.2 % and 10.6 %, with more DRAM
// traffic (ncu: 14.8 % and 17.4 % busy against 12.5 %); this order 0.5 % faster at 4096 (so within
// 0.3 % of the 192-key default) and 1.0 % slower at 8192: at D128 no order makes persistence pay. At
// D64 causal (persistent by default) it is 2.1-2.8 % faster than the snake at S = 8192 and 0.3-1.3 %
// slower at S = 4096, where 132 SMs take the 22 query blocks of a head in whole rounds.
//
// Per head dim: KG_FA_PERSISTENT_ORDER_D64 (2 by default since the twenty-second session, with
// KG_FA_D64_SNAKE_BLOCKS and KG_FA_D64_CTA_PER_ITEM below; 1, the snake, before) and
// KG_FA_PERSISTENT_ORDER_D128 (2 by default since the twenty-first session: the persistent causal
// D128 grid's, runs 176-182); KG_FA_PERSISTENT_ORDER, when given, sets both (as in the runs before).
#ifdef KG_FA_PERSISTENT_ORDER
static_assert(KG_FA_PERSISTENT_ORDER >= 0 && KG_FA_PERSISTENT_ORDER <= 2, "KG_FA_PERSISTENT_ORDER: 0, 1 or 2");
#endif
#ifndef KG_FA_PERSISTENT_ORDER_D64
#ifdef KG_FA_PERSISTENT_ORDER
#define KG_FA_PERSISTENT_ORDER_D64 KG_FA_PERSISTENT_ORDER
#else
#define KG_FA_PERSISTENT_ORDER_D64 2
#endif
#endif
#ifndef KG_FA_PERSISTENT_ORDER_D128
#ifdef KG_FA_PERSISTENT_ORDER
#define KG_FA_PERSISTENT_ORDER_D128 KG_FA_PERSISTENT_ORDER
#else
#define KG_FA_PERSISTENT_ORDER_D128 2
#endif
#endif
static_assert(KG_FA_PERSISTENT_ORDER_D64 >= 0 && KG_FA_PERSISTENT_ORDER_D64 <= 2 && KG_FA_PERSISTENT_ORDER_D128 >= 0 &&
                  KG_FA_PERSISTENT_ORDER_D128 <= 2,
              "KG_FA_PERSISTENT_ORDER_D64, KG_FA_PERSISTENT_ORDER_D128: 0, 1 or 2");
// KG_FA_PERSISTENT_ORDER 2: a grid of more than KG_FA_CLAIM_ITEMS_PER_CTA items per CTA claims
// them from a counter (default 4); smaller grids take them without one, heaviest first across the
// heads (the query blocks of every head with the most key tiles, then the next, ...).
// KG_FA_CLAIM_ACROSS_D64 / _D128: the order of the counter's items. 0: head after head, heaviest
// first in each (each head's K and V read from DRAM about once). 1: heaviest first across the heads
// (the most even finish, every item reading its own K and V where the heads outnumber the CTAs).
// 2: across where the call's K and V fit 64 MiB (the L2's 50 MB and some) or its heads are at most
// half the CTAs (the CTAs running at once then share each head's K and V), else head after head
// (claims_across()). Measured on H200s (runs 191-193, causal, the harness's regime; the time of
// the head-by-head order over across's): at D64 B4 H32 S2048 (64 MiB) 1.03-1.04, B2 H32 S4096
// 1.06-1.07, B1 H32 S8192 (32 heads) 1.06-1.07, B1 H16 S16384 1.05-1.06 (run 193); across took 1.07x
// the snake's time at the headline (1.5 GiB), where head after head is level with it (runs 191-192);
// at D128 across was never faster (1.00-1.30x the time, 1.30x at the headline; run 192).
// Defaults: 2 at D64, 0 at D128; KG_FA_CLAIM_ACROSS, when given, sets both.
#ifndef KG_FA_CLAIM_ITEMS_PER_CTA
#define KG_FA_CLAIM_ITEMS_PER_CTA 4
#endif
#ifdef KG_FA_CLAIM_ACROSS
#define KG_FA_CLAIM_ACROSS_D64 KG_FA_CLAIM_ACROSS
#define KG_FA_CLAIM_ACROSS_D128 KG_FA_CLAIM_ACROSS
#endif
#ifndef KG_FA_CLAIM_ACROSS_D64
#define KG_FA_CLAIM_ACROSS_D64 2
#endif
#ifndef KG_FA_CLAIM_ACROSS_D128
#define KG_FA_CLAIM_ACROSS_D128 0
#endif
static_assert(KG_FA_CLAIM_ITEMS_PER_CTA >= 0, "KG_FA_CLAIM_ITEMS_PER_CTA: 0 or more");
// Causal D = 64 beside order 2. The snake's rounds leave some CTAs far more key tiles than others
// where the blocks per head and the SMs fall badly (B1 H16 S16384: 86 blocks a head on 132 CTAs,
// the busiest 1.69x the mean), order 2's do not; but where the snake's rounds come out even, order
// 2 is slower (its items handed over through shared memory, the counter's atomics), the more so
// the shorter the items. Measured on H200s (runs 191-194, fp16 and bf16, the harness's regime;
// the snake's time over order 2's, KG_FA_CLAIM_ACROSS_D64 2; in brackets the snake's busiest CTA
// over the mean, snake_imbalance()): B1 H16 S16384 1.62-1.65 (1.69), B1 H8 S32768 1.25-1.27
// (1.29), B1 H32 S8192 1.24-1.25 (1.29), B2 H32 S8192 1.12-1.14 (1.20), B2 H32 S4096 1.06 (1.11),
// B4 H32 S8192 1.05-1.06 (1.075), B4 H96 S8192 1.03-1.04 (1.04), B4 H32 S2048 and B8 H16 S2048
// 1.01-1.02 (1.11), the headline B16 H96 S4096 0.99-1.00 (1.003), B2 H48 S4096 0.94 (1.003); at
// 7 and 8 blocks a head 0.95 (B16 H16 S1280, B8 H32 S1536: 1.03), at 2 to 6 0.96-1.00 (B8 H16 S1024,
// B8 H32 S1024, B64 H16 S384, B16 H32 S256). At most four items per CTA order 2 takes them
// heaviest first across the heads without a counter: B2 H16 S1024 and S2048 1.15-1.19, B4 H16
// S1280 1.38. At most one item per SM a CTA per item is 1-7 % faster than either (runs 186, 191,
// 193).
// KG_FA_D64_SNAKE_BLOCKS K > 0: causal D = 64 calls of more than KG_FA_CLAIM_ITEMS_PER_CTA items
// per SM whose heads have at most K query blocks (192 rows each), or whose snake's busiest CTA
// would take at most KG_FA_D64_SNAKE_EVEN % more key tiles than the mean, take the persistent grid
// in the snake's order (an instance of its own, kSnake, named "snake" by scripts/fa-experiment.py).
// 8 and 4 by default with order 2: at 2.7-3.4 % over the mean (the last round's share, at 10-43
// rounds) order 2 was 0.4-4.7 % slower (run 194: B8 H32 S4096, B4 H32 S3072, B16 H16 S3584, B4 H32
// S6144, B8 H32 S2304, B8 H32 S1792, B8 H16 S4096), at 4.1 % (B4 H96 S8192) 3.5 % faster.
// KG_FA_D64_CTA_PER_ITEM 1: causal D = 64 calls of at most one item per SM take a CTA per item (an
// instance of its own, kPerItem, "per item"). 1 by default with the persistent causal D64 grid.
#ifndef KG_FA_D64_SNAKE_BLOCKS
#define KG_FA_D64_SNAKE_BLOCKS (KG_FA_PERSISTENT_CAUSAL_D64 != 0 && KG_FA_PERSISTENT_ORDER_D64 == 2 ? 8 : 0)
#endif
#ifndef KG_FA_D64_SNAKE_EVEN
#define KG_FA_D64_SNAKE_EVEN 4
#endif
#ifndef KG_FA_D64_CTA_PER_ITEM
#define KG_FA_D64_CTA_PER_ITEM (KG_FA_PERSISTENT_CAUSAL_D64 != 0 ? 1 : 0)
#endif
// Causal D = 128 beside order 2 (the persistent grid's 160-key tiles, and the short sequences'
// 128-key ones): its counter hands the items out head after head, which leaves the last CTAs
// uneven where each has few items (the model: 1.13x the mean at B8 H16 S1024); the snake's rounds
// are even there. Measured on H200s (runs 196-197, the harness's regime; order 2's time over the
// snake's, both tiles): at 7.8 items per CTA 1.10-1.13 (B8 H16 S1024, B16 H32 S256, B4 H16 S2048,
// B2 H16 S4096, B32 H16 S256), at 15.5 1.02-1.05 (B8 H32 S1024, B4 H32 S2048, B2 H32 S4096, B1 H32
// S8192), at 23 1.04-1.05 (B64 H16 S384), at 31 1.00-1.03 (B8 H32 S2048, B4 H32 S4096, B2 H32
// S8192, B8 H16 S4096, B16 H32 S1024, B32 H32 S512), at 46.5 1.01 (B12 H32 S2048), at 62 level
// (B8 H32 S4096), at 186 and 372 0.99 (B4 H96 S8192, the headline); where the snake's busiest CTA
// is 1.54x the mean (B1 H16 S16384, 15.5 items per CTA) 0.70.
// KG_FA_D128_SNAKE_ITEMS K > 0: causal D = 128 calls of more than KG_FA_CLAIM_ITEMS_PER_CTA and at
// most K items per CTA whose snake puts the busiest CTA within KG_FA_D128_SNAKE_EVEN % of the mean
// (snake_imbalance(): 1.031-1.040 on the shapes above) take the persistent grid in the snake's
// order (instances of their own, kSnake: "N160 snake" and "persistent snake" in
// scripts/fa-experiment.py's labels). 32 and 5 by default beside the 160-key persistent grid.
#ifndef KG_FA_D128_SNAKE_ITEMS
#define KG_FA_D128_SNAKE_ITEMS \
  (KG_FA_PERSISTENT_CAUSAL_D128 != 0 && KG_FA_PERSISTENT_ORDER_D128 == 2 && KG_FA_CAUSAL_BLOCK_N_D128 == 160 ? 32 : 0)
#endif
#ifndef KG_FA_D128_SNAKE_EVEN
#define KG_FA_D128_SNAKE_EVEN 5
#endif
static_assert(KG_FA_CLAIM_ACROSS_D64 >= 0 && KG_FA_CLAIM_ACROSS_D64 <= 2 && KG_FA_CLAIM_ACROSS_D128 >= 0 &&
                  KG_FA_CLAIM_ACROSS_D128 <= 2,
              "KG_FA_CLAIM_ACROSS (_D64, _D128): 0, 1 or 2");
// P > 0: the producer of a CTA of the non-persistent grid, once it has issued its own loads,
// brings into the L2 the Q rows of the CTA P x (the SMs) places after it in the grid's order (the
// one likely to start on some SM about P CTA lifetimes later), so that CTA's first wait, for Q,
// which no other CTA reads and so comes from DRAM, is an L2 hit. 0 (the default): no prefetch.
// Measured (run 152, H100, beside two builds of the default): D128 causal 1.2-1.3 % faster at
// fp16, 0.0-0.2 % slower at bf16, the non-causal cases 0.2-1.6 % slower; so off.
// KG_FA_PERSISTENT_ORDER 2's item, read from shared memory (the consumers) or claimed with an
// atomic (the producer), is the same in every lane, but ptxas cannot tell: every value made from it
// (the item's rows and tiles, the rings' running index, the descriptors) lives in vector registers,
// and each wgmma's descriptors are moved to uniform ones first (60 R2UR in the consumers' key
// loop; Nsight Compute, run 171: 3.0 % more instructions than the same tiles without the
// persistent grid). 1: the item passed through redux.sync, whose result is a uniform register
// (5 R2UR). Measured (run 172, H200): at D128 causal no change (within 0.04 % of order 2 without
// it); at D64 causal, with order 2, 3.0-3.7 % faster than the snake at S = 8192, level at 4096.
// On (1) by default since the twenty-first session, with order 2 at D128 causal (the counter is the
// call's own since the twentieth); it changes only order 2's instances. 0: the item as loaded.
#ifndef KG_FA_UNIFORM_ITEM
#define KG_FA_UNIFORM_ITEM 1
#endif
static_assert(KG_FA_UNIFORM_ITEM == 0 || KG_FA_UNIFORM_ITEM == 1, "KG_FA_UNIFORM_ITEM: 0 or 1");
#ifndef KG_FA_PREFETCH_Q
#define KG_FA_PREFETCH_Q 0
#endif
// 1 (the default): the causal instances whose key tile is wider than 128 (KG_FA_CAUSAL_BLOCK_N_D128)
// compute a warpgroup's last tile 64 keys wide where its rows see at most 64 of its keys (as
// KG_FA_NARROW_LAST does for a sequence's last tile). 2: also 128 keys wide where they see 65 to
// 128 (at 192 keys a third of the warpgroups' last tiles: S an m64n128 wgmma into 64 registers of
// its own, no spills, no serialised wgmma with nvcc 13.0; into S's last 64 registers ptxas
// serialised every wgmma, C7511). Measured (run 156, H100, beside two builds of the default, which
// were 0.3-0.6 % apart on the headline cases): D128 causal 0.3 % faster at fp16, 1.1 % at bf16, for
// 56 more HGMMA and 132 more MUFU in the library; so off. 0: full width.
#ifndef KG_FA_NARROW_CAUSAL
#define KG_FA_NARROW_CAUSAL 1
#endif
static_assert(KG_FA_NARROW_CAUSAL >= 0 && KG_FA_NARROW_CAUSAL <= 2, "KG_FA_NARROW_CAUSAL: 0, 1 or 2");
// 1: the causal D = 64 instances (192 query rows, 128-key tiles) compute a warpgroup's last tile
// 64 keys wide where its rows see at most 64 of its keys: with KG_FA_WG_SKIP every other
// warpgroup-item (its rows end 64 keys into a tile), half a tile of S and P V of the
// warpgroup-item's average 16.5 at S = 4096. Measured on an H200 (runs 216-217, beside two builds
// without it): 0.2-0.4 % faster at the headline, 5-7 % at B2 H3 S = 129-320, but 2.3-3.6 % slower at
// B32 H32 S512 and 1-3 % on the shortest calls (the instances' code 53 % longer). 0 (the default):
// full width.
#ifndef KG_FA_NARROW_CAUSAL_D64
#define KG_FA_NARROW_CAUSAL_D64 0
#endif
// Bit 1: in the causal D = 64 instances (bit 4: the causal D = 128 ones; both with KG_FA_WG_SKIP,
// until the twenty-eighth session one bit), a consumer warpgroup none of whose 64 rows is a
// query (rows m0 + 64 w.. past seq_q: the last query block's when seq_q is not a multiple of the
// block's rows) computes one key tile and takes its remaining turns as a skipping warpgroup does,
// instead of every tile up to seq_k on rows nobody stores. At D = 64 (192 rows a block) S = 4096
// ends 64 rows into its 22nd block: two warpgroups of each head's heaviest item, 64 of the
// head's about 1,100 warpgroup-tiles. Bit 2: the same in the non-causal instances of three
// consumer warpgroups (D = 64), through the same skipping turns (2 of a head's 66 warpgroups at
// S = 4096). Measured on H200s (runs 219-220, scripts/fa-experiment.py beside two builds without
// it, 0.0-0.4 % apart at the headline): bit 2 1.2-1.6 % faster at D = 64 non-causal B16 H96 S4096
// (twice, two machines), 1.2 % slower at its B2 H3 S1000 (17 us calls); bit 1 level to 0.4 % slower
// at the causal headline (a warpgroup's own chain of tiles, not the three's work, sets an item's
// time there), 3-7 % faster at causal D = 64 S = 320 and 4112 and D = 128 S = 1040. So 2 became
// the default in the twenty-seventh session. With KG_FA_RING_ACROSS (whose round no longer waits at
// an item's end for the last warpgroup's chain of tiles) bit 1 pays at the headline too (run 221,
// H200, beside ring-across alone): causal D = 64 B16 H96 S4096 0.7 % (fp16) and 0.4 % (bf16)
// faster, S = 8192 0.4-0.5 %, B2 H3 S320 6-7 %, S4112 2.6 %; on another H200 (run 222) 0.5 % and
// 0.0 % at the headline. At causal D = 128 (bit 4, run 223, beside ring-across alone) 0.2 % slower
// at the headline (whose 4096 rows leave no warpgroup empty), 0.5 % at B4 H32 S4112, 5.5-6 %
// faster at B2 H3 S1040. 3 (the default since the twenty-eighth session, 2026-11-29): causal D = 64
// and the non-causal instances. 0: every warpgroup computes its tiles.
#ifndef KG_FA_EMPTY_WG
#define KG_FA_EMPTY_WG 3
#endif
static_assert(KG_FA_EMPTY_WG >= 0 && KG_FA_EMPTY_WG <= 7,
              "KG_FA_EMPTY_WG: 0 to 7 (bit 1: causal D = 64, bit 2: non-causal, bit 4: causal D = 128)");
// The ping-pong's round across a persistent CTA's items (issue 28, the twenty-eighth session). The
// last consumer warpgroup opens the first round of the CTA's first item; with this it passes the
// turn after every turn of every item, its last included, so the first warpgroup issues the next
// item's S(0) (its Q in the other buffer, its K tile already in the ring) as soon as the last one
// has issued its final P V, under that P V and the last warpgroup's epilogue. 0: the last
// warpgroup passes no turn after an item's last and opens each item's first round when it starts
// that item, after its final P V has retired and its epilogue has run, so the tensor cores have
// nothing queued from its last issue until the first warpgroup's next S(0). Bit 1: the persistent
// D = 64 instances; bit 2: the persistent D = 128 ones (the causal grids). The first warpgroup
// takes the one turn passed after the CTA's last item before it exits. Measured on an H200 (run
// 221, scripts/fa-experiment.py in the harness's regime beside two builds without it, 0.00-0.01 %
// apart at the headline): causal B16 H96 S4096 1.5 % (fp16) and 1.7 % (bf16) faster at D = 64,
// 1.3 % and 1.4 % at D = 128; B4 H96 S8192 0.7-1.1 %; the CTA-per-item instances of short grids
// unchanged. 3 (the default since the twenty-eighth session, 2026-11-29): both head dims.
#ifndef KG_FA_RING_ACROSS
#define KG_FA_RING_ACROSS 3
#endif
static_assert(KG_FA_RING_ACROSS >= 0 && KG_FA_RING_ACROSS <= 3, "KG_FA_RING_ACROSS: 0 to 3 (bit 1: D = 64, bit 2: D = 128)");
// 1 (the default, except with KG_FA_PERSISTENT): FlashAttention-3's epilogue: each consumer
// warpgroup writes its 64 x kD output rows into its own rows of the Q buffer (no S reads Q after
// the item's last one has retired), in the TMA's 128-byte swizzle, and one of its threads stores
// them with TMA, instead of every thread's 4-byte stores to global memory. On an H100 (2026-11-27,
// run 105, scripts/fa-experiment.py beside two builds of the same code, which differed by 0.0-1.4 %)
// 2.3-4.4 % faster at D = 128 (causal or not), 0.0-1.1 % at D = 64. 0: the threads' stores.
// Not with KG_FA_PERSISTENT, whose producer refills the Q buffer for the next item.
#ifndef KG_FA_TMA_STORE
#define KG_FA_TMA_STORE (!KG_FA_PERSISTENT)
#endif
// (KG_FA_CAUSAL_BLOCK_N_D128's and KG_FA_PERSISTENT_CAUSAL_D128's defaults read KG_FA_TMA_STORE)
static_assert(KG_FA_CAUSAL_BLOCK_N_D128 == 128 || KG_FA_CAUSAL_BLOCK_N_D128 == 160 || KG_FA_CAUSAL_BLOCK_N_D128 == 176 ||
                  KG_FA_CAUSAL_BLOCK_N_D128 == 192,
              "KG_FA_CAUSAL_BLOCK_N_D128 must be 128, 160, 176 or 192");
static_assert(KG_FA_CAUSAL_SHORT_KEYS_D128 >= 0 &&
                  (KG_FA_CAUSAL_SHORT_KEYS_D128 == 0 ||
                   (KG_FA_PERSISTENT_CAUSAL_D128 == 3 && KG_FA_CAUSAL_BLOCK_N_D128 == 160)),
              "KG_FA_CAUSAL_SHORT_KEYS_D128 needs the persistent grid of KG_FA_PERSISTENT_CAUSAL_D128=3 on 160-key tiles "
              "(-DKG_FA_CAUSAL_SHORT_KEYS_D128=0 turns it off)");
static_assert(KG_FA_CAUSAL_BLOCK_N_D128 == 128 || KG_FA_PERSISTENT_CAUSAL_D128 == 0 ||
                  (KG_FA_CAUSAL_BLOCK_N_D128 == 160 && KG_FA_PERSISTENT_CAUSAL_D128 == 3),
              "KG_FA_PERSISTENT_CAUSAL_D128 needs -DKG_FA_CAUSAL_BLOCK_N_D128=128, or 160 with "
              "KG_FA_PERSISTENT_CAUSAL_D128=3 (the persistent grid's Q and O buffers do not fit beside wider rings)");
static_assert(KG_FA_CAUSAL_CTA_BLOCK_N_D128 == 128 || KG_FA_CAUSAL_CTA_BLOCK_N_D128 == 160 ||
                  KG_FA_CAUSAL_CTA_BLOCK_N_D128 == 176 || KG_FA_CAUSAL_CTA_BLOCK_N_D128 == 192,
              "KG_FA_CAUSAL_CTA_BLOCK_N_D128 must be 128, 160, 176 or 192");
// 2: the non-causal instances launch in clusters of two CTAs, neighbouring query blocks of one
// head, which need the same K and V tiles: each CTA's producer loads half of every K and V tile's
// rows and multicasts them to both (FlashAttention-3's cluster at head dim 128), so each tile is
// read from L2 once per cluster instead of once per CTA. A buffer is refilled once the consumers
// of both CTAs have released it (they arrive on both CTAs' empty barriers), and each producer
// waits for the last releases before it exits, so no CTA leaves while its neighbour may still
// arrive on its barriers. A grid with an odd number of query blocks gets one more CTA, whose
// rows are past the sequence (zeros in, nothing stored). 1 (the default): no clusters. Causal
// instances stay at 1 (their query blocks need different key tiles). Measured on H100s (runs
// 112, 116): 1.9-4.1 % slower without the mask, so it stays 1.
#ifndef KG_FA_CLUSTER_M
#define KG_FA_CLUSTER_M 1
#endif
// K > 0 (at most 16): K of every 16 eight-column groups of S take their exponentials from
// kg::poly_exp2 (the FMA pipe) instead of ex2.approx (the multi-function unit, MUFU), spread
// evenly (group c when (c * K) % 16 + K >= 16), so the softmax at head dim 64, where the MUFU
// is as busy as the tensor cores (64 x 128 exponentials per 64 x 128 x 64 x 2 MMAs), shares the
// work with the FMA pipe (FlashAttention-4's exp2 emulation). KG_FA_POLY_EXP applies to the D = 64
// instances, KG_FA_POLY_EXP_D128 to the D = 128 ones. 0 (the default): every exponential on the
// MUFU. Measured on H100s (runs 113, 116): 5-17 % slower at D = 64 (the softmax there is bound by
// the instructions it issues, not by the MUFU), 4.5-7 % at D = 128 with 3 of 16.
#ifndef KG_FA_POLY_EXP
#define KG_FA_POLY_EXP 0
#endif
#ifndef KG_FA_POLY_EXP_D128
#define KG_FA_POLY_EXP_D128 0
#endif
static_assert(KG_FA_POLY_EXP >= 0 && KG_FA_POLY_EXP <= 16 && KG_FA_POLY_EXP_D128 >= 0 && KG_FA_POLY_EXP_D128 <= 16,
              "KG_FA_POLY_EXP, KG_FA_POLY_EXP_D128: 0 to 16 groups of every 16");
// T > 0: a row's running max (log2 units) moves only when a tile's max exceeds it by more than T,
// and a warp rescales its O and sums only when one of its rows' max moved (one vote per tile),
// FlashAttention-4's conditional rescaling: with the max kept, P's values are at most 2^T (16
// for T = 4: exact in fp16 and bf16, P's sums in fp32), and the result is the same softmax, since
// the sums carry the same max as P. For the headline inputs a row's max after its first tile
// seldom grows by 4 (the scores' spread is a few units), so the 32 O multiplications per thread
// and tile (D = 64) mostly go. KG_FA_LAZY_RESCALE applies to the D = 64 instances, where the
// softmax's instructions bound the rate, KG_FA_LAZY_RESCALE_D128 to the D = 128 ones. Defaults 4
// and 0, since 2026-11-27 (twelfth session, H100, scripts/fa-experiment.py with shuffled rounds
// beside three builds of the old default, which agreed within 0.4 % at D64): at D64 1.7 % (fp16)
// and 1.9 % (bf16) faster, 1.0-1.2 % causal; at D128 2-4 % slower (the vote and branch cost more
// than the 64 multiplications they save there).
#ifndef KG_FA_LAZY_RESCALE
#define KG_FA_LAZY_RESCALE 4
#endif
#ifndef KG_FA_LAZY_RESCALE_D128
#define KG_FA_LAZY_RESCALE_D128 0
#endif
static_assert(KG_FA_LAZY_RESCALE >= 0 && KG_FA_LAZY_RESCALE <= 16 && KG_FA_LAZY_RESCALE_D128 >= 0 &&
                  KG_FA_LAZY_RESCALE_D128 <= 16,
              "KG_FA_LAZY_RESCALE, KG_FA_LAZY_RESCALE_D128: 0 (off) to 16 (P at most 2^16, under fp16's 65504 only "
              "with no larger term)");

// How the key loop gets its wgmma descriptors. Bit 1: the consumer warpgroup's index is read
// through __shfl_sync from lane 0 (CUTLASS's canonical_warp_group_idx), so ptxas knows it is
// the same in every lane and keeps what is derived from it (Q's descriptors) in uniform
// registers. Bit 2: each key tile's descriptors are its stage's base descriptor advanced by
// constants (kg::desc_advance) instead of each k-step's built again from its address (mask,
// shift, or: five uniform instructions per wgmma). KG_FA_DESC_ITER applies to the D = 64
// instances, KG_FA_DESC_ITER_D128 to the D = 128 ones. Defaults 1 and 3 since 2026-11-27
// (thirteenth session, H100s, scripts/fa-experiment.py with shuffled rounds, against the mean of
// two builds of the old default, runs 122-123): both bits 1.3-2.4 % faster at D = 128 (causal or
// not), 0.6-1.1 % slower at D = 64 without the mask; bit 1 alone 1.5-3.6 % faster at D = 64
// (causal or not) and 0.9-1.8 % slower at D = 128; bit 2 alone between. The gate's own paired
// verdict on an H100 (run 125, gpu-e2e.sh patch-pr): FASTER on all eight headline cases, 1.6-3.4 %.
// 0: the descriptors built per k-step, the index per thread.
#ifndef KG_FA_DESC_ITER
#define KG_FA_DESC_ITER 1
#endif
#ifndef KG_FA_DESC_ITER_D128
#define KG_FA_DESC_ITER_D128 3
#endif
// Which descriptors bit 2 advances: 1 S's (Q and K), 2 P V's (V), 3 (the default) both. At D = 64
// with bit 1 (run 126, H100): neither alone beats bit 1 without them (S's 0.6-1.1 % slower, V's
// from 0.1 % faster to 3.4 % slower).
#ifndef KG_FA_DESC_ADV_PARTS
#define KG_FA_DESC_ADV_PARTS 3
#endif
// 1: with bit 2, a K or V tile's descriptor advanced to its stage once per tile, then by each
// k-step's constant (the same descriptors: both offsets are multiples of 16 bytes). In the
// persistent causal D128 grid ptxas rebuilt each k-step's K descriptor from the stage's address
// (ULEA.HI, UIADD3), where a CTA per item folds them (the nineteenth session: its key loop 718
// instructions, with this 705, a CTA per item's 700). Measured (run 174, H200, the harness's
// regime, beside two builds of the default 0.0-0.4 % apart): on the default's instances 0.4-0.6 %
// faster at D128 causal (fp16, bf16; S = 4096, 8192), 0.1-0.9 % without the mask; the persistent
// causal D128 grid with it level with the default at S = 4096, 2.9 % behind at 8192; again on
// another H200 (run 175): 0.43-0.57 % at D128 causal. 0: the stage's and the k-step's offsets added
// together per k-step. Unset (the default): 1 in the persistent causal D = 128 instance (the
// twentieth session's measured grid, runs 176-182), 0 in every other (until an H100 says so).
#ifdef KG_FA_DESC_STAGE
static_assert(KG_FA_DESC_STAGE == 0 || KG_FA_DESC_STAGE == 1, "KG_FA_DESC_STAGE: 0 or 1");
#endif
static_assert(KG_FA_DESC_ITER >= 0 && KG_FA_DESC_ITER <= 3 && KG_FA_DESC_ITER_D128 >= 0 && KG_FA_DESC_ITER_D128 <= 3,
              "KG_FA_DESC_ITER, KG_FA_DESC_ITER_D128: 0 to 3 (bit 1: uniform warpgroup index; bit 2: descriptors "
              "advanced by constants)");
// The softmax's row sums from the tensor cores instead of the threads' adds: P V multiplies P by
// eight more columns whose values are all ones, so each of them accumulates the sum of the
// row's P (as rounded to 16 bits, the same values the output sums), rescaled with O. That takes
// kBlockN / 2 fp32 adds per thread and tile and the quad's final shuffles out of the softmax,
// which bounds D = 64 by the instructions it issues (twelfth session), for 8 / kD more work for
// the tensor cores in P V. 1 (head dim 64 only): P V is m64n72k16, its B operand V's 64 columns
// then a 64-column box of ones (each V buffer is followed by one, so the descriptors' leading
// byte offset reaches it); 2: a wgmma of its own per k-step, m64n8k16 with B a 16 x 8 tile of
// ones. KG_FA_MMA_ROWSUM applies to the D = 64 instances, KG_FA_MMA_ROWSUM_D128 (0 or 2) to the
// D = 128 ones. 0 (the default): the threads add. Measured on an H100 (run 122, beside the same
// descriptors without it): 1 no faster at D = 64 (0.0-0.1 %) and 0.8-2.1 % slower causal; 2
// 2.2-4.6 % slower at D = 64 and 8-10 % at D = 128: the tensor cores' extra work costs more than
// the adds it saves.
#ifndef KG_FA_MMA_ROWSUM
#define KG_FA_MMA_ROWSUM 0
#endif
#ifndef KG_FA_MMA_ROWSUM_D128
#define KG_FA_MMA_ROWSUM_D128 0
#endif
static_assert(KG_FA_MMA_ROWSUM >= 0 && KG_FA_MMA_ROWSUM <= 2 &&
                  (KG_FA_MMA_ROWSUM_D128 == 0 || KG_FA_MMA_ROWSUM_D128 == 2),
              "KG_FA_MMA_ROWSUM: 0, 1 or 2; KG_FA_MMA_ROWSUM_D128: 0 or 2");
static_assert(!KG_FA_MMA_ROWSUM || (!KG_FA_D64_P_SMEM && !KG_FA_FORCE_OVERLAP),
              "KG_FA_MMA_ROWSUM: not with KG_FA_D64_P_SMEM or KG_FA_FORCE_OVERLAP");
static_assert(!KG_FA_MMA_ROWSUM_D128 || (!KG_FA_D128_P_SMEM && !KG_FA_FORCE_OVERLAP),
              "KG_FA_MMA_ROWSUM_D128: not with KG_FA_D128_P_SMEM or KG_FA_FORCE_OVERLAP");
// The softmax's row sums from the packed P: each thread adds its row's exponentials as the 16-bit
// pairs P V reads (one HADD2 per pair, in two chains per row), then the two halves in fp32 into
// the row's running sum, instead of two fp32 adds per pair. kBlockN / 4 adds per thread and tile
// fewer where D = 64 is bound by the instructions its softmax issues (twelfth session; ex2's
// packed form does not help there: ptxas for sm_90a splits ex2.approx.f16x2 into two
// MUFU.EX2.F16 and a PRMT). The sum is of the values P V multiplies (rounded to 16 bits), each
// half of a chain adding at most kBlockN / 16 of them in fp16 or bf16 before fp32 takes over.
// Bit 1: the fp16 instances, bit 2: the bf16 ones; KG_FA_PACKED_SUM for D = 64,
// KG_FA_PACKED_SUM_D128 for D = 128. Measured on an H200 (run 215, beside two builds without it):
// 0.3-2.9 % slower on every headline case (bf16 D64 the most). 0 (the default): fp32 adds.
#ifndef KG_FA_PACKED_SUM
#define KG_FA_PACKED_SUM 0
#endif
#ifndef KG_FA_PACKED_SUM_D128
#define KG_FA_PACKED_SUM_D128 0
#endif
static_assert(KG_FA_PACKED_SUM >= 0 && KG_FA_PACKED_SUM <= 3 && KG_FA_PACKED_SUM_D128 >= 0 && KG_FA_PACKED_SUM_D128 <= 3,
              "KG_FA_PACKED_SUM, KG_FA_PACKED_SUM_D128: 0 to 3 (bit 1: fp16, bit 2: bf16)");
static_assert(!(KG_FA_PACKED_SUM && (KG_FA_MMA_ROWSUM || KG_FA_D64_P_SMEM || KG_FA_FORCE_OVERLAP)) &&
                  !(KG_FA_PACKED_SUM_D128 && (KG_FA_MMA_ROWSUM_D128 || KG_FA_D128_P_SMEM || KG_FA_FORCE_OVERLAP)),
              "KG_FA_PACKED_SUM(_D128): not with KG_FA_MMA_ROWSUM, P in shared memory or KG_FA_FORCE_OVERLAP");
// The causal mask's cost. Bit 1: whether a tile needs the mask is decided per warp (its 16 rows)
// instead of per CTA (its kBlockM), so a warp whose rows see every key of a tile skips the
// compares. Bit 2: the compares against one bound per row (keys before min(seq_k, row + 1)),
// each with a constant, instead of each element's column and row computed and compared.
// (Skipping the softmax of a warp none of whose rows sees a key of the tile spilled registers at
// D = 64 causal.) 0 (the default): the mask decided per CTA, each element's column and row.
// Measured on H100s (runs 122-123, issue 28: the causal D = 64 case issues 13 % more
// instructions than cuDNN's): no gain, from 1.1 % faster to 2.3 % slower on the causal cases.
#ifndef KG_FA_MASK
#define KG_FA_MASK 0
#endif
// 1: in causal instances, a consumer warpgroup stops at the last key tile its own 64 rows see
// instead of the CTA's last: at D = 64 a CTA's 192 query rows span one and a half 128-key tiles,
// so its first warpgroup computed up to one tile (the second up to half of one) that its mask
// then zeroed entirely (S, the softmax and P V: about 3 % of the causal work at S = 4096). The
// warpgroup still takes its turns in the ping-pong for the tiles it skips, and releases their K
// and V buffers in each turn as the others do, so the round and the producer's refills are
// unchanged. No effect where the tiles align with the warpgroups (D = 128 on 128-key tiles).
// Needs the producer warpgroup (without it thread 0 of the first warpgroup refills the rings
// from inside its key loop). The default since 2026-11-27 (thirteenth session, run 126 on an
// H100, scripts/fa-experiment.py with shuffled rounds beside two builds without it: 1.7-2.0 %
// faster at D = 64 causal; the gate's paired verdict, run 127: FASTER there, 1.9-2.2 %); the
// instances whose key tiles are multiples of the CTA's rows (D = 128 causal on 128-key tiles) keep
// the code they had (on 192-key tiles, KG_FA_CAUSAL_BLOCK_N_D128, they take it). 0: every
// warpgroup walks the CTA's tiles.
#ifndef KG_FA_WG_SKIP
#define KG_FA_WG_SKIP KG_FA_PRODUCER_WG
#endif
static_assert(!KG_FA_WG_SKIP || KG_FA_PRODUCER_WG, "KG_FA_WG_SKIP needs the producer warpgroup (KG_FA_PRODUCER_WG=1)");

namespace {

// Named barriers 1 to kWGs (0 is __syncthreads): "consumer warpgroup w may issue". The owner
// waits (128 threads), the warpgroup before it in the round (w - 1, or the last for 0) arrives
// (128 more). The producer warpgroup of the KG_FA_PRODUCER_WG build uses no named barrier,
// and no thread uses barrier 0 after the roles split (the producer warpgroup exits early,
// which would hang it).
__device__ __forceinline__ void turn_wait(int warpgroup) {
  if (KG_FA_PINGPONG) asm volatile("bar.sync %0, 256;\n" ::"r"(1 + warpgroup) : "memory");
}
template <int kWGs>
__device__ __forceinline__ void turn_pass(int warpgroup) {
  // the next warpgroup's barrier: 1 + (warpgroup + 1) % kWGs, written as the two-warpgroup
  // build always did (2 - warpgroup) so that its code is unchanged
  const int next = kWGs == 2 ? 2 - warpgroup : (warpgroup + 1 == kWGs ? 1 : warpgroup + 2);
  if (KG_FA_PINGPONG) asm volatile("bar.arrive %0, 256;\n" ::"r"(next) : "memory");
}

// A key tile's width as a type (the key loop's lambdas take it to compute a narrower last tile:
// KG_FA_NARROW_LAST).
template <int N>
struct Cols {
  enum { value = N };
};

// Consumer warpgroups of 64 query rows each (wgmma's M): 2, or 3 for D = 64 under KG_FA_D64_WG3.
template <int kD>
constexpr int consumer_wgs() {
  return kD == 64 && KG_FA_D64_WG3 ? 3 : 2;
}
static_assert(!KG_FA_D64_WG3 || KG_FA_PRODUCER_WG, "KG_FA_D64_WG3 needs the producer warpgroup (KG_FA_PRODUCER_WG=1)");
static_assert(!KG_FA_PERSISTENT || KG_FA_PRODUCER_WG, "KG_FA_PERSISTENT needs the producer warpgroup (KG_FA_PRODUCER_WG=1)");
static_assert(KG_FA_CLUSTER_M == 1 || (KG_FA_CLUSTER_M == 2 && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT),
              "KG_FA_CLUSTER_M must be 1 or 2, and 2 needs the producer warpgroup and not KG_FA_PERSISTENT");
// CTAs per cluster of an instance (KG_FA_CLUSTER_M): causal instances take none.
template <bool kCausal>
__host__ __device__ constexpr int cluster_m() {
  return kCausal ? 1 : KG_FA_CLUSTER_M;
}
static_assert(KG_FA_PERSISTENT_NONCAUSAL_D128 == 0 ||
                  (KG_FA_PERSISTENT_NONCAUSAL_D128 == 3 && KG_FA_TMA_STORE && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT &&
                   KG_FA_CLUSTER_M == 1 && (KG_FA_BLOCK_N == 128 || KG_FA_BLOCK_N == 160)),
              "KG_FA_PERSISTENT_NONCAUSAL_D128: 0, or 3 with KG_FA_TMA_STORE, the producer warpgroup, neither "
              "KG_FA_PERSISTENT nor KG_FA_CLUSTER_M, and -DKG_FA_BLOCK_N=160 or 128");
static_assert(!(KG_FA_TMA_STORE && KG_FA_PERSISTENT),
              "KG_FA_TMA_STORE writes the output through the Q buffer, which KG_FA_PERSISTENT refills");
static_assert((!KG_FA_PERSISTENT_CAUSAL_D64 && !KG_FA_PERSISTENT_CAUSAL_D128) ||
                  (KG_FA_TMA_STORE && !KG_FA_PERSISTENT && KG_FA_PRODUCER_WG),
              "KG_FA_PERSISTENT_CAUSAL needs KG_FA_TMA_STORE, the producer warpgroup, and not KG_FA_PERSISTENT "
              "(KG_FA_PERSISTENT_CAUSAL_D64 and _D128 too)");
static_assert(KG_FA_PERSISTENT_CAUSAL_D64 >= 0 && KG_FA_PERSISTENT_CAUSAL_D64 <= 3 && KG_FA_PERSISTENT_CAUSAL_D128 >= 0 &&
                  KG_FA_PERSISTENT_CAUSAL_D128 <= 3,
              "KG_FA_PERSISTENT_CAUSAL(_D64, _D128): 0, 1, 2 or 3");
static_assert(KG_FA_D64_SNAKE_BLOCKS >= 0 &&
                  (KG_FA_D64_SNAKE_BLOCKS == 0 || (KG_FA_PERSISTENT_CAUSAL_D64 != 0 && KG_FA_PERSISTENT_ORDER_D64 == 2)),
              "KG_FA_D64_SNAKE_BLOCKS needs the persistent causal D64 grid in order 2 (KG_FA_PERSISTENT_ORDER_D64=2)");
static_assert(KG_FA_D64_SNAKE_EVEN >= 0, "KG_FA_D64_SNAKE_EVEN: a percentage, 0 or more");
static_assert(KG_FA_D128_SNAKE_EVEN >= 0, "KG_FA_D128_SNAKE_EVEN: a percentage, 0 or more");
static_assert(KG_FA_D128_SNAKE_ITEMS >= 0 && (KG_FA_D128_SNAKE_ITEMS == 0 || (KG_FA_PERSISTENT_CAUSAL_D128 != 0 &&
                                                                              KG_FA_PERSISTENT_ORDER_D128 == 2)),
              "KG_FA_D128_SNAKE_ITEMS needs the persistent causal D128 grid in order 2 (KG_FA_PERSISTENT_ORDER_D128=2)");
static_assert(KG_FA_D64_CTA_PER_ITEM == 0 || (KG_FA_D64_CTA_PER_ITEM == 1 && KG_FA_PERSISTENT_CAUSAL_D64 != 0),
              "KG_FA_D64_CTA_PER_ITEM: 0, or 1 with the persistent causal D64 grid (KG_FA_PERSISTENT_CAUSAL_D64)");
// An instance's variant (the kernel's and launch()'s kVariant, bits), beside its head dim and key
// tile: kMain (none); kShort, the shorter sequences' 128-key tiles on the persistent grid (causal
// D = 128: KG_FA_CAUSAL_SHORT_KEYS_D128); kPerItem, a CTA per item (causal D = 64:
// KG_FA_D64_CTA_PER_ITEM); kSnake, the persistent grid in the snake's order where the head dim's
// order is 2 (causal D = 64: KG_FA_D64_SNAKE_BLOCKS; causal D = 128: KG_FA_D128_SNAKE_ITEMS, with
// or without kShort).
enum Variant : int { kMain = 0, kShort = 1, kPerItem = 2, kSnake = 4 };
// KG_FA_PERSISTENT_CAUSAL's value for the causal instances of head dim kD and kBlockN keys per
// tile: at D = 128 only the instance of KG_FA_CAUSAL_BLOCK_N_D128 keys and the kShort one
// (KG_FA_CAUSAL_SHORT_KEYS_D128's 128-key tiles) run the persistent grid (the 128-key one of the
// sequences of at most 128 keys and KG_FA_CAUSAL_CTA_BLOCK_N_D128's take a CTA per item)
template <int kD, int kBlockN, int kVariant = kMain>
__host__ __device__ constexpr int persistent_causal() {
  return kD == 64 ? ((kVariant & kPerItem) != 0 ? 0 : KG_FA_PERSISTENT_CAUSAL_D64)
         : kBlockN == KG_FA_CAUSAL_BLOCK_N_D128 || (kVariant & kShort) != 0 ? KG_FA_PERSISTENT_CAUSAL_D128
                                                                       : 0;
}
// KG_FA_PERSISTENT_ORDER's value for the instances of head dim kD (the kSnake ones: the snake)
template <int kD, int kVariant = kMain>
__host__ __device__ constexpr int persistent_order() {
  return (kVariant & kSnake) != 0 ? 1 : kD == 64 ? KG_FA_PERSISTENT_ORDER_D64 : KG_FA_PERSISTENT_ORDER_D128;
}
// KG_FA_CLAIM_ACROSS's choice for a grid of `ctas` CTAs over `heads` (batch x heads) of seq_k keys
// that claims its items from a counter: whether they come heaviest first across the heads
template <int kD>
__host__ __device__ constexpr bool claims_across(int heads, int seq_k, int ctas) {
  constexpr int kMode = kD == 64 ? KG_FA_CLAIM_ACROSS_D64 : KG_FA_CLAIM_ACROSS_D128;
  return kMode == 1 ||
         (kMode == 2 && (static_cast<int64_t>(heads) * seq_k * kD * 4 <= (int64_t{64} << 20) || 2 * heads <= ctas));
}
// KG_FA_DESC_STAGE's value in an instance (kPersist: whether it runs the persistent grid)
template <int kD, bool kCausal, bool kPersist>
__host__ __device__ constexpr bool desc_stage() {
#ifdef KG_FA_DESC_STAGE
  return KG_FA_DESC_STAGE != 0;
#else
  return kD == 128 && kCausal && kPersist;
#endif
}
// Whether an instance runs a persistent grid (KG_FA_PERSISTENT, or KG_FA_PERSISTENT_CAUSAL for
// the causal ones), and whether it stages its output in a buffer of its own (the latter with the
// TMA store).
// KG_FA_PERSISTENT_CAUSAL 3, KG_FA_PERSISTENT_NONCAUSAL_D128 3: a persistent instance staging its
// output in the item's Q buffer
template <int kD, bool kCausal, int kBlockN, int kVariant = kMain>
__host__ __device__ constexpr bool o_in_q() {
  return (kCausal ? persistent_causal<kD, kBlockN, kVariant>() == 3 : kD == 128 && KG_FA_PERSISTENT_NONCAUSAL_D128 == 3) &&
         !KG_FA_PERSISTENT;
}
template <int kD, bool kCausal, int kBlockN, int kVariant = kMain>
__host__ __device__ constexpr bool persistent() {
  return KG_FA_PERSISTENT || (kCausal && persistent_causal<kD, kBlockN, kVariant>() != 0) ||
         o_in_q<kD, kCausal, kBlockN, kVariant>();
}
template <int kD, bool kCausal, int kBlockN, int kVariant = kMain>
__host__ __device__ constexpr bool own_o_buffer() {
  return persistent<kD, kCausal, kBlockN, kVariant>() && KG_FA_TMA_STORE && !o_in_q<kD, kCausal, kBlockN, kVariant>();
}
// Q buffers of an instance: 2 in the causal ones under KG_FA_PERSISTENT_CAUSAL=2 or 3 (and the
// non-causal D = 128 ones under KG_FA_PERSISTENT_NONCAUSAL_D128), else 1.
template <int kD, bool kCausal, int kBlockN, int kVariant = kMain>
__host__ __device__ constexpr int q_buffers() {
  return (kCausal && persistent_causal<kD, kBlockN, kVariant>() >= 2) || o_in_q<kD, kCausal, kBlockN, kVariant>() ? 2 : 1;
}
// Whether an instance's persistent grid takes its items in KG_FA_PERSISTENT_ORDER 2 (passed from the
// producer through shared memory, claimed from a counter on the larger grids)
template <int kD, bool kCausal, int kBlockN, int kVariant = kMain>
__host__ __device__ constexpr bool dynamic_items() {
  return kCausal && persistent<kD, kCausal, kBlockN, kVariant>() && persistent_order<kD, kVariant>() == 2;
}
// Keys per tile, the kernel's kBlockN: 128, or KG_FA_BLOCK_N / KG_FA_D64_BLOCK_N for the
// non-causal D = 128 / D = 64 instances.
template <int kD, bool kCausal>
__host__ __device__ constexpr int block_n() {
  return kD == 64 && KG_FA_D64_BLOCK_N < 128 ? KG_FA_D64_BLOCK_N
         : kCausal                          ? (kD == 128 ? KG_FA_CAUSAL_BLOCK_N_D128 : 128)
         : kD == 128                        ? KG_FA_BLOCK_N
                                            : KG_FA_D64_BLOCK_N;
}
static_assert(KG_FA_BLOCK_N == 96 || KG_FA_BLOCK_N == 128 || KG_FA_BLOCK_N == 160 || KG_FA_BLOCK_N == 176 ||
                  KG_FA_BLOCK_N == 192,
              "KG_FA_BLOCK_N must be 96, 128, 160, 176 or 192 (wgmma_ops.cuh's WgmmaSS<T, N>)");
static_assert(KG_FA_D64_BLOCK_N == 64 || KG_FA_D64_BLOCK_N == 96 || KG_FA_D64_BLOCK_N == 128 ||
                  KG_FA_D64_BLOCK_N == 192,
              "KG_FA_D64_BLOCK_N must be 64, 96, 128 or 192 (wgmma_ops.cuh's WgmmaSS<T, N>)");
static_assert(!KG_FA_D64_P_SMEM || ((KG_FA_D64_BLOCK_N == 192 || KG_FA_D64_BLOCK_N == 128) && KG_FA_D64_WG3 &&
                                      KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT),
              "KG_FA_D64_P_SMEM needs KG_FA_D64_BLOCK_N=192 or 128 and three consumer warpgroups at D = 64 "
              "(KG_FA_D64_WG3=1, KG_FA_PRODUCER_WG=1), and not KG_FA_PERSISTENT");
static_assert(!KG_FA_D128_P_SMEM || (KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT),
              "KG_FA_D128_P_SMEM needs the producer warpgroup and not KG_FA_PERSISTENT");
// Whether an instance passes P through shared memory: the non-causal D = 64 ones
// (KG_FA_D64_P_SMEM), the D = 128 ones with 128 keys (KG_FA_D128_P_SMEM).
template <int kD, bool kCausal>
__host__ __device__ constexpr bool p_in_smem() {
  return (KG_FA_D64_P_SMEM && kD == 64 && (block_n<kD, kCausal>() == 192 || KG_FA_D64_BLOCK_N == 128)) ||
         (KG_FA_D128_P_SMEM && kD == 128 && block_n<kD, kCausal>() == 128);
}
constexpr bool kProducerWG = KG_FA_PRODUCER_WG != 0;
// KG_FA_FORCE_OVERLAP: whether an instance takes the branch that keeps its softmax under P V,
// where S(j + 1), P(j) (unless it is in shared memory) and O leave 32 of the launch's registers
// per thread (ptxas's budget).
template <int kD, int kBlockN, int kThreads, bool kPSmem>
__host__ __device__ constexpr bool overlap_fits() {
  return (KG_FA_FORCE_OVERLAP & (kD == 64 ? 1 : 2)) != 0 &&
         kBlockN / 2 + (kPSmem ? 0 : kBlockN / 4) + kD / 2 + 32 <= (65536 / kThreads) / 8 * 8;
}
// KG_FA_MMA_ROWSUM's form at head dim kD: 0 (the threads add), 1 (columns of P V) or 2 (a wgmma
// of its own).
template <int kD>
__host__ __device__ constexpr int row_sum_mode() {
  return kD == 64 ? KG_FA_MMA_ROWSUM : KG_FA_MMA_ROWSUM_D128;
}
// KG_FA_PACKED_SUM's choice for an instance: whether its threads add the packed P
template <int kD, typename T>
__host__ __device__ constexpr bool packed_sum() {
  return ((kD == 64 ? KG_FA_PACKED_SUM : KG_FA_PACKED_SUM_D128) & (std::is_same<T, __half>::value ? 1 : 2)) != 0;
}
// Threads of a CTA with kWGs consumer warpgroups, the producer warpgroup's 128 included.
template <int kWGs>
__host__ __device__ constexpr int threads_of() {
  return kWGs * 128 + (kProducerWG ? 128 : 0);
}
constexpr int kBoxCols = 64;  // head-dim columns per TMA box: one 128-byte swizzle row
constexpr int kStages = KG_FA_STAGES;
static_assert(kStages >= 2, "KG_FA_STAGES must be at least 2 (the key loop refills V(j + 1) while V(j) is read)");
// setmaxnreg budget of the KG_FA_PRODUCER_WG build (FlashAttention-3's): two consumers
// 128 x 24 + 256 x 240 = 64512 of the SM's 65536 registers (a producer at 40 would leave the
// consumers 232 at most); three 128 x 32 + 384 x 160 = 65536.
template <int kWGs>
__host__ __device__ constexpr int producer_regs() {
  return kWGs == 2 ? 24 : 32;
}
template <int kWGs>
__host__ __device__ constexpr int consumer_regs() {
  return kWGs == 2 ? 240 : 160;
}
static_assert(128 * producer_regs<2>() + 256 * consumer_regs<2>() <= 65536, "setmaxnreg: over the register file");
static_assert(128 * producer_regs<3>() + 384 * consumer_regs<3>() <= 65536, "setmaxnreg: over the register file");
constexpr int kSmemLimit = 227 * 1024;  // the most dynamic shared memory a CTA may have on sm_90

// Ring slot and mbarrier phase of key tile j: its buffer and the parity of its use of it.
__device__ __forceinline__ uint32_t stage_of(int j) { return static_cast<uint32_t>(j) % kStages; }
__device__ __forceinline__ uint32_t phase_of(int j) { return (static_cast<uint32_t>(j) / kStages) & 1; }

// kPersist, kOwnO, kQBufs, kDynamic: the instance's persistent(), own_o_buffer(), q_buffers() and
// dynamic_items()
template <int kD, int kBlockN, int kWGs, bool kPSmem, int kRowSum, bool kPersist, bool kOwnO, int kQBufs,
          bool kDynamic>
struct Layout {
  static_assert(kBlockN % 16 == 0 && kBlockN <= 256, "kBlockN: whole 16-key k-steps of P V, at most 256 TMA box rows");
  static constexpr int kBlockM = 64 * kWGs;  // query rows per CTA
  static constexpr int kBoxes = kD / kBoxCols;
  static constexpr int kQBoxBytes = kBlockM * 128;
  static constexpr int kKVBoxBytes = kBlockN * 128;
  static constexpr int kQBytes = kQBoxBytes * kBoxes;
  static constexpr int kKVBytes = kKVBoxBytes * kBoxes;  // one K or one V tile
  // Offsets from the 1024-byte aligned base (the 128-byte swizzle repeats every 1024 bytes).
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kQBufs * kQBytes;     // kStages K buffers (after kQBufs Q buffers)
  // KG_FA_MMA_ROWSUM 1: each V buffer followed by a box of ones, so V's stride is two boxes
  static constexpr int kVStride = kKVBytes * (kRowSum == 1 ? 2 : 1);
  static constexpr int kV = kK + kStages * kKVBytes;   // kStages V buffers
  // KG_FA_D64_P_SMEM: one P buffer per consumer warpgroup, [kBlockN / 64 boxes][64 rows][128
  // bytes] (the K-major 128-byte swizzle, as Q's), 8 KB per box, so 1024-byte aligned.
  static constexpr int kPBoxBytes = 64 * 128;
  static constexpr int kPBytes = kPSmem ? kPBoxBytes * (kBlockN / 64) : 0;  // one warpgroup's
  static_assert(!kPSmem || kBlockN % 64 == 0, "KG_FA_D64_P_SMEM: P in whole 64-key boxes");
  static constexpr int kP = kV + kStages * kVStride;   // kWGs P buffers (none without kPSmem)
  // KG_FA_MMA_ROWSUM 2: a 16 x 64 tile of ones, B of the row sums' m64n8k16 (only its first
  // 16 bytes per row are read, wherever the swizzle puts them: all are ones)
  static constexpr int kOnes = kP + kWGs * kPBytes;
  static constexpr int kOnesBytes = kRowSum == 2 ? 16 * 128 : 0;
  static_assert(kRowSum != 1 || kBoxes == 1, "KG_FA_MMA_ROWSUM 1: head dim 64 only");
  // KG_FA_PERSISTENT_CAUSAL: the output's staging buffer, laid out as Q's
  static constexpr int kO = kOnes + kOnesBytes;
  static constexpr int kOBytes = kOwnO ? kQBytes : 0;
  static constexpr int kBars = kO + kOBytes;
  // alignment slack, buffers, barriers (Q full, the rings' 4 x kStages, Q empty when persistent;
  // a second Q empty and Q full with two Q buffers)
  static constexpr int kBarCount = 1 + 4 * kStages + (kPersist ? 1 : 0) + 2 * (kQBufs - 1);
  // KG_FA_PERSISTENT_ORDER 2 (kDynamic): after the barriers, the item of each Q buffer (two ints)
  static constexpr int kSmemBytes = 1024 + kBars + kBarCount * 8 + (kDynamic ? 8 : 0);
  // D = 128: 1 KB + Q 32 KB + 2 x kStages x 32 KB, so 2 or 3 stages (kBlockN 176: 44 KB tiles,
  // 2 stages, 209 KB); D = 64: up to 6 (kBlockN 192: 24 KB tiles, up to 4; 121 KB with 2; with
  // KG_FA_D64_P_SMEM 72 KB of P more: 2 stages, 193 KB).
  static_assert(kSmemBytes <= kSmemLimit,
                "KG_FA_STAGES: Q and the K and V rings need more than the 227 KB of shared memory a CTA may have "
                "at the head dim kD and key tile kBlockN of the instantiation named below (D = 128 takes at most 3 "
                "stages, 2 with KG_FA_BLOCK_N=176; D = 64 at most 6, 4 with KG_FA_D64_BLOCK_N=192, 2 with "
                "KG_FA_D64_P_SMEM=1)");
};

// Barriers after the buffers: Q full, then K full, V full, K empty, V empty (kStages each), then
// Q empty (KG_FA_PERSISTENT: every consumer warp is done with the item's Q), then the second Q
// buffer's empty and full (KG_FA_PERSISTENT_CAUSAL=2).
struct Bars {
  uint32_t base;
  __device__ uint32_t q_full(uint32_t b = 0) const { return base + b * 8 * (4 * kStages + 3); }
  __device__ uint32_t k_full(uint32_t s) const { return base + 8 + 8 * s; }
  __device__ uint32_t v_full(uint32_t s) const { return base + 8 + 8 * (kStages + s); }
  __device__ uint32_t k_empty(uint32_t s) const { return base + 8 + 8 * (2 * kStages + s); }
  __device__ uint32_t v_empty(uint32_t s) const { return base + 8 + 8 * (3 * kStages + s); }
  __device__ uint32_t q_empty(uint32_t b = 0) const { return base + 8 + 8 * (4 * kStages + b); }
};

// Copies rows [row0, row0 + rows) of head `bh` (all kD columns, in 64-column boxes) to dst.
template <int kD>
__device__ __forceinline__ void load_rows(uint32_t dst, const CUtensorMap* map, int box_bytes, int row0, int bh,
                                          uint32_t bar) {
#pragma unroll
  for (int box = 0; box < kD / kBoxCols; ++box) kg::tma_load_3d(dst + box * box_bytes, map, box * kBoxCols, row0, bh, bar);
}

// kVariant: the instance's Variant bits (kShort, kPerItem, kSnake: see there)
template <typename T, int kD, bool kCausal, int kBlockN, int kWGs, int kLastN = kBlockN, int kVariant = kMain>
__global__ void __launch_bounds__(threads_of<kWGs>(), 1)
    fa_wgmma_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                    const __grid_constant__ CUtensorMap v_map,
#if KG_FA_TMA_STORE
                    const __grid_constant__ CUtensorMap o_map,
#endif
                    T* __restrict__ out, int heads, int seq_q, int seq_k, float scale_log2,
                    unsigned int* __restrict__ claims) {
  constexpr bool kPSmem = p_in_smem<kD, kCausal>();
  constexpr int kRowSum = row_sum_mode<kD>();
  constexpr bool kPackedSum = packed_sum<kD, T>();
  constexpr bool kPersistent = persistent<kD, kCausal, kBlockN, kVariant>();
  constexpr bool kOwnO = own_o_buffer<kD, kCausal, kBlockN, kVariant>();
  constexpr int kQBufs = q_buffers<kD, kCausal, kBlockN, kVariant>();
  constexpr bool kOInQ = o_in_q<kD, kCausal, kBlockN, kVariant>();
  constexpr bool kDescStage = desc_stage<kD, kCausal, kPersistent>();
  // KG_FA_RING_ACROSS: the round runs on from item to item (persistent instances)
  constexpr bool kRingAcross = kPersistent && (KG_FA_RING_ACROSS & (kD == 64 ? 1 : 2)) != 0;
  constexpr int kOrder = kCausal ? persistent_order<kD, kVariant>() : 0;  // KG_FA_PERSISTENT_ORDER's (causal grids only)
  constexpr bool kDynamic = dynamic_items<kD, kCausal, kBlockN, kVariant>();
  using L = Layout<kD, kBlockN, kWGs, kPSmem, kRowSum, kPersistent, kOwnO, kQBufs, kDynamic>;
  constexpr int kBlockM = L::kBlockM;
  constexpr int kConsumerWarps = 4 * kWGs;  // one arrival each on an empty barrier
  constexpr int kSRegs = kBlockN / 2;  // S accumulator floats per thread (64 x kBlockN per warpgroup)
  constexpr int kORegs = kD / 2;
  // O's registers, and (KG_FA_MMA_ROWSUM) the row sums' four after them: columns 2 (lane % 4)
  // + {0, 1} of the 8 ones columns, rows lane / 4 and + 8 of the warp's 16, each a whole row's sum
  constexpr int kOAll = kORegs + (kRowSum ? 4 : 0);
  constexpr int kPRegs = kBlockN / 4;  // P as packed pairs
  constexpr int kLazy = kD == 64 ? KG_FA_LAZY_RESCALE : KG_FA_LAZY_RESCALE_D128;  // its threshold T, or 0
  constexpr int kDescIter = kD == 64 ? KG_FA_DESC_ITER : KG_FA_DESC_ITER_D128;
  constexpr int kCluster = cluster_m<kCausal>();
  static_assert(kBlockN % (8 * kCluster) == 0, "KG_FA_CLUSTER_M: each CTA loads whole 8-row swizzle groups of a tile");
  constexpr int kRowsPerRank = kBlockN / kCluster;  // K and V rows each CTA of a cluster loads

  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (kg::smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t s_q = base + L::kQ;
  const uint32_t s_k = base + L::kK;
  const uint32_t s_v = base + L::kV;
  const Bars bars{base + L::kBars};
  // KG_FA_PERSISTENT_ORDER 2: the item of each Q buffer, after the barriers (two ints)
  [[maybe_unused]] const uint32_t s_items = bars.base + L::kBarCount * 8;

  // The work item: query rows m0.. of head bh, and its key tiles. Causal items with the most key
  // tiles start first, so the short ones fill the tail. g0: key tiles of this CTA's earlier items,
  // the rings' running index (their buffers and barrier phases carry on from item to item); it:
  // the item's number in this CTA (Q's phase).
  // Persistent (KG_FA_PERSISTENT, KG_FA_PERSISTENT_CAUSAL): here `heads` is batch x heads. Query
  // blocks of one head are consecutive items, so the CTAs running at once share few heads' K and
  // V in L2, as a non-persistent grid's x does.
  int m0 = 0, bh = 0, n_tiles = 0, g0 = 0, it = 0;
  const int n_m = (seq_q + kBlockM - 1) / kBlockM;
  const int n_items = n_m * heads;  // persistent
  auto take_item = [&](int item) {
    if constexpr (kDynamic) {
      // KG_FA_PERSISTENT_ORDER 2: without a counter (a grid of at most four items per CTA), the
      // query blocks heaviest first across all the heads; with one, head after head or across as
      // KG_FA_CLAIM_ACROSS picks
      const bool across = claims == nullptr || claims_across<kD>(heads, seq_k, static_cast<int>(gridDim.x));
      const int block = across ? item / heads : item % n_m;
      m0 = (n_m - 1 - block) * kBlockM;
      bh = across ? item % heads : item / n_m;
    } else if constexpr (kPersistent) {
      m0 = (kCausal ? n_m - 1 - item % n_m : item % n_m) * kBlockM;
      bh = item / n_m;
    } else {
      const int m_block = kCausal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
      m0 = m_block * kBlockM;
      bh = blockIdx.z * heads + blockIdx.y;
    }
    const int keys_needed = kCausal ? min(seq_k, m0 + kBlockM) : seq_k;
    n_tiles = (keys_needed + kBlockN - 1) / kBlockN;
  };
  // A non-persistent CTA's one item
  if constexpr (!kPersistent) take_item(0);
  // Persistent: the CTA's item after `item`, its it-th (KG_FA_PERSISTENT_ORDER)
  auto next_item = [&](int item, int it_next) {
    if constexpr (kOrder != 0) {
      return it_next * static_cast<int>(gridDim.x) +
             static_cast<int>((it_next & 1) ? gridDim.x - 1 - blockIdx.x : blockIdx.x);
    } else {
      return item + static_cast<int>(gridDim.x);
    }
  };

  const bool producer = threadIdx.x == 0;  // the one thread that issues copies, in both builds
  if (producer) {
    for (int b = 0; b < kQBufs; ++b) {
      kg::mbar_init(bars.q_full(b), 1);
      // KG_FA_PERSISTENT_CAUSAL 3: released by each consumer warpgroup's storing thread
      if (kPersistent) kg::mbar_init(bars.q_empty(b), kOInQ ? kWGs : kConsumerWarps);
    }
    for (int s = 0; s < kStages; ++s) {
      kg::mbar_init(bars.k_full(s), 1);
      kg::mbar_init(bars.v_full(s), 1);
      kg::mbar_init(bars.k_empty(s), kConsumerWarps * kCluster);
      kg::mbar_init(bars.v_empty(s), kConsumerWarps * kCluster);
    }
    kg::mbar_init_fence();
  }
  if constexpr (kRowSum != 0) {
    // KG_FA_MMA_ROWSUM: the boxes of ones (1.0 in T, in every 16-bit element), visible to the
    // tensor cores (the async proxy) once the barrier below has passed
    const uint32_t ones2 = kg::Mma<T>::pack(1.f, 1.f);
    if constexpr (kRowSum == 1) {
      for (int i = threadIdx.x; i < kStages * L::kKVBytes / 4; i += threads_of<kWGs>()) {
        const int stage = i / (L::kKVBytes / 4);
        kg::st_shared_u32(s_v + stage * L::kVStride + L::kKVBytes + 4 * (i % (L::kKVBytes / 4)), ones2);
      }
    } else {
      for (int i = threadIdx.x; i < L::kOnesBytes / 4; i += threads_of<kWGs>()) {
        kg::st_shared_u32(base + L::kOnes + 4 * i, ones2);
      }
    }
    kg::fence_proxy_async();
  }
  // the last CTA-wide barrier: the barriers are initialised (in every CTA of the cluster, whose
  // copies and arrivals reach them), the roles split
  if constexpr (kCluster > 1) {
    kg::cluster_sync();
  } else {
    __syncthreads();
  }
  const uint32_t rank = kCluster > 1 ? kg::cluster_rank() : 0;

  // The item's Q buffer and its barriers' index (KG_FA_PERSISTENT_CAUSAL=2: the item's parity)
  auto q_buf = [&]() { return kQBufs > 1 ? static_cast<uint32_t>(it) & 1 : 0u; };
  auto load_q = [&]() {
    kg::mbar_arrive_expect_tx(bars.q_full(q_buf()), L::kQBytes);
    load_rows<kD>(s_q + q_buf() * L::kQBytes, &q_map, L::kQBoxBytes, m0, bh, bars.q_full(q_buf()));
  };
  // A K or V tile: the whole of it, or (KG_FA_CLUSTER_M) this CTA's share of its rows, multicast
  // to the cluster; either way the whole tile's bytes complete on each CTA's barrier.
  auto load_kv = [&](uint32_t dst, const CUtensorMap* map, int j, uint32_t bar) {
    if constexpr (kCluster > 1) {
#pragma unroll
      for (int box = 0; box < kD / kBoxCols; ++box) {
        kg::tma_load_3d_multicast(dst + box * L::kKVBoxBytes + rank * kRowsPerRank * 128, map, box * kBoxCols,
                                  j * kBlockN + rank * kRowsPerRank, bh, bar, (1u << kCluster) - 1);
      }
    } else {
      load_rows<kD>(dst, map, L::kKVBoxBytes, j * kBlockN, bh, bar);
    }
  };
  auto load_k = [&](int j) {
    const uint32_t s = stage_of(g0 + j);
    kg::mbar_arrive_expect_tx(bars.k_full(s), L::kKVBytes);
    load_kv(s_k + s * L::kKVBytes, &k_map, j, bars.k_full(s));
  };
  auto load_v = [&](int j) {
    const uint32_t s = stage_of(g0 + j);
    kg::mbar_arrive_expect_tx(bars.v_full(s), L::kKVBytes);
    load_kv(s_v + s * L::kVStride, &v_map, j, bars.v_full(s));
  };
  // Tile j's buffer held tile j - kStages: wait until every consumer warp has released it
  // (that use's phase of the empty barrier, the one before tile j's).
  auto refill_k = [&](int j) {
    if (g0 + j >= kStages) kg::mbar_wait(bars.k_empty(stage_of(g0 + j)), phase_of(g0 + j) ^ 1);
    load_k(j);
  };
  auto refill_v = [&](int j) {
    if (g0 + j >= kStages) kg::mbar_wait(bars.v_empty(stage_of(g0 + j)), phase_of(g0 + j) ^ 1);
    load_v(j);
  };

#if KG_FA_PRODUCER_WG
  if (threadIdx.x < 128) {
    // The producer warpgroup: registers back to the pool, then thread 0 issues every copy in
    // the order the consumers read them (Q, K(0), then K(j + 1) before V(j)), each as soon as
    // its buffer is free, and the warpgroup exits. The consumers' full-barrier waits keep the
    // CTA alive until the last copy has landed.
    kg::setmaxnreg_dec<producer_regs<kWGs>()>();
    if (producer) {
      auto produce_item_kv = [&]() {
        refill_k(0);
        for (int j = 1; j < n_tiles; ++j) {
          refill_k(j);
          refill_v(j - 1);
        }
        refill_v(n_tiles - 1);
      };
      if constexpr (kDynamic) {
        // KG_FA_PERSISTENT_ORDER 2: the grid's first items by blockIdx, then claimed from the
        // call's counter once the item's copies are issued (about two key tiles before the
        // consumers finish it: time for the atomic), or without one in the snake's order
        // (next_item's: order 2 is not 0)
        auto claim = [&](int item, int it_next) {
          const int got = claims != nullptr ? static_cast<int>(atomicAdd(claims, 1u) + gridDim.x) : next_item(item, it_next);
#if KG_FA_UNIFORM_ITEM
          return __reduce_min_sync(1u, got);  // this thread alone: the claim into a uniform register
#else
          return got;
#endif
        };
        int item = blockIdx.x;
        for (;; g0 += n_tiles, ++it) {
          if (it >= kQBufs) kg::mbar_wait(bars.q_empty(q_buf()), (it / kQBufs - 1) & 1);
          asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(s_items + 4 * q_buf()), "r"(item) : "memory");
          if (item >= n_items) {
            kg::mbar_arrive(bars.q_full(q_buf()));  // no copies: the consumers read the end
            break;
          }
          take_item(item);
          load_q();
          produce_item_kv();
          item = claim(item, it + 1);
        }
      } else if constexpr (kPersistent) {
        for (int item = blockIdx.x; item < n_items; g0 += n_tiles, ++it, item = next_item(item, it)) {
          take_item(item);
          // the Q buffer's last item's is free once every consumer warp's last S of it has retired
          if (it >= kQBufs) kg::mbar_wait(bars.q_empty(q_buf()), (it / kQBufs - 1) & 1);
          load_q();
          produce_item_kv();
        }
      } else {
        load_q();
        if constexpr (KG_FA_PREFETCH_Q > 0) {
          // the CTA P x nsmid places later in the grid's order (x fastest, then y, then z)
          uint32_t sms;
          asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
          const int64_t later = blockIdx.x + static_cast<int64_t>(gridDim.x) * (blockIdx.y + static_cast<int64_t>(gridDim.y) * blockIdx.z) +
                                static_cast<int64_t>(KG_FA_PREFETCH_Q) * sms;
          const int64_t later_bh = later / gridDim.x;
          if (later_bh < static_cast<int64_t>(gridDim.y) * gridDim.z) {
            const int x = static_cast<int>(later % gridDim.x);
            const int later_m0 = (kCausal ? gridDim.x - 1 - x : x) * kBlockM;
#pragma unroll
            for (int box = 0; box < kD / kBoxCols; ++box) {
              kg::tma_prefetch_3d(&q_map, box * kBoxCols, later_m0, static_cast<int>(later_bh));
            }
          }
        }
        produce_item_kv();
      }
      if constexpr (kCluster > 1) {
        // The last releases of every buffer (its use by tile j, parity phase_of(j)): after them no
        // CTA of the cluster arrives on this one's barriers, so it may exit.
        for (int j = n_tiles > kStages ? n_tiles - kStages : 0; j < n_tiles; ++j) {
          kg::mbar_wait(bars.k_empty(stage_of(j)), phase_of(j));
          kg::mbar_wait(bars.v_empty(stage_of(j)), phase_of(j));
        }
      }
    }
    return;
  }
  kg::setmaxnreg_inc<consumer_regs<kWGs>()>();
  // consumer warpgroup 0 to kWGs - 1 (KG_FA_DESC_ITER bit 1: known to ptxas as warp-uniform)
  const int warpgroup =
      (kDescIter & 1) ? __shfl_sync(0xffffffffu, (threadIdx.x >> 7) - 1, 0) : (threadIdx.x >> 7) - 1;
#else
  if (producer) {
    load_q();
    load_k(0);
    load_v(0);
    for (int j = 1; j < kStages && j < n_tiles; ++j) load_k(j);
  }
  const int warpgroup = threadIdx.x >> 7;
#endif
  const int warp_in_group = (threadIdx.x >> 5) & 3;
  const int lane = threadIdx.x & 31;
  const bool arriver = lane == 0;  // one arrival per warp on the empty barriers
  // A K or V buffer released: on this CTA's empty barrier, or on every CTA's of the cluster
  // (KG_FA_CLUSTER_M: each refill of it lands in all of them).
  auto release = [](uint32_t bar) { kg::mbar_release<kCluster>(bar); };
  // The items: a persistent CTA's, with the grid's stride, or the one of a CTA per item (the
  // body once, then the break at its end: no loop).
  for (int item = blockIdx.x;; g0 += n_tiles, ++it, item = next_item(item, it)) {
    if constexpr (kDynamic) {
      // KG_FA_PERSISTENT_ORDER 2: the item the producer put beside this Q buffer
      kg::mbar_wait(bars.q_full(q_buf()), (it / kQBufs) & 1);
      asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(item) : "r"(s_items + 4 * q_buf()) : "memory");
#if KG_FA_UNIFORM_ITEM
      // every lane read the same word: redux.sync's result lives in a uniform register, so the
      // item's rows, tiles and ring index (and every descriptor made from them) stay uniform
      item = __reduce_min_sync(0xffffffffu, item);
#endif
    }
    if constexpr (kPersistent) {
      if (item >= n_items) break;
      take_item(item);
    }
    // Accumulator layout of m64nNk16: warp w of the warpgroup holds rows 16w + lane / 4 and
    // + 8; registers 4c + {0,1} are columns 8c + 2 (lane % 4) + {0,1} of the first row,
    // 4c + {2,3} the same columns of the second.
    const int row0 = m0 + warpgroup * 64 + warp_in_group * 16 + (lane >> 2);
    const int col_in_8 = (lane & 3) * 2;
    // KG_FA_D64_P_SMEM: this warpgroup's P buffer
    const uint32_t s_p = base + L::kP + warpgroup * L::kPBytes;

    float s_acc[kSRegs];
    // KG_FA_NARROW_DIAG: the first warpgroup's 64 keys of the diagonal tile
    constexpr bool kDiag = KG_FA_NARROW_DIAG && kCausal && kBlockN == kBlockM && kWGs == 2;
    // KG_FA_NARROW_DIAG, KG_FA_NARROW_CAUSAL: a warpgroup's last tile 64 keys wide or full, picked
    // at run time
    constexpr bool kRtNarrow = kDiag || (KG_FA_NARROW_CAUSAL && kCausal && kBlockN > 128 && !kPSmem) ||
                               (KG_FA_NARROW_CAUSAL_D64 && kCausal && kD == 64 && kBlockN == 128 && !kPSmem);
    // KG_FA_NARROW_LAST, kRtNarrow: the narrower last tile's S
    float s_last[kLastN < kBlockN ? kLastN / 2 : kRtNarrow ? (KG_FA_NARROW_CAUSAL == 2 && !kDiag ? 64 : 32) : 1];
    float o_acc[kOAll];
    uint32_t p[kPRegs];
    float row_max[2] = {-INFINITY, -INFINITY};  // log2 units, scale folded in
    float row_sum[2] = {0.f, 0.f};  // this thread's partial sums, quad-reduced at the end (or o_acc's last 4)
    float rescale[2];
#pragma unroll
    for (int i = 0; i < kOAll; ++i) o_acc[i] = 0.f;

    // KG_FA_DESC_ITER(_D128) bit 2: the descriptors of this warpgroup's Q rows and of the first K and V
    // buffers, advanced per stage and k-step
    const uint32_t s_qi = s_q + q_buf() * L::kQBytes;  // this item's Q buffer
    const uint64_t desc_q = kg::make_desc(s_qi + warpgroup * 64 * 128, 16, 1024);
    const uint64_t desc_k = kg::make_desc(s_k, 16, 1024);
    const uint64_t desc_v = kg::make_desc(s_v, L::kKVBoxBytes, 1024);
    const uint64_t desc_ones = kg::make_desc(base + L::kOnes, 1024, 1024);  // KG_FA_MMA_ROWSUM 2
    // cols: the tile's width, kBlockN (or kLastN for the last tile)
    auto issue_s = [&](int j, auto cols) {
      constexpr int kN = decltype(cols)::value;
      // a narrower tile's S in registers of its own (written into s_acc once it has retired: a
      // narrower wgmma on s_acc's first registers makes ptxas serialise every wgmma, C7511)
      float* const acc = kN < kBlockN ? s_last : s_acc;
      const uint32_t s = stage_of(g0 + j);
      kg::mbar_wait(bars.k_full(s), phase_of(g0 + j));
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) kg::pin(acc[i]);
      kg::wgmma_fence();
      [[maybe_unused]] const uint64_t desc_ks = kg::desc_advance(desc_k, s * L::kKVBytes);  // kDescStage: this stage's K tile
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        // k-step kk covers head-dim columns 16kk..16kk+15: box kk / 4, 32-byte step kk % 4.
        if constexpr ((kDescIter & 2) != 0 && (KG_FA_DESC_ADV_PARTS & 1) != 0) {
          kg::WgmmaSS<T, kN>::run(
              acc, kg::desc_advance(desc_q, (kk >> 2) * L::kQBoxBytes + (kk & 3) * 32),
              kDescStage ? kg::desc_advance(desc_ks, (kk >> 2) * L::kKVBoxBytes + (kk & 3) * 32)
                         : kg::desc_advance(desc_k, s * L::kKVBytes + (kk >> 2) * L::kKVBoxBytes + (kk & 3) * 32),
              kk);
        } else {
          const uint32_t q_addr = s_qi + (kk >> 2) * L::kQBoxBytes + warpgroup * 64 * 128 + (kk & 3) * 32;
          const uint32_t k_addr = s_k + s * L::kKVBytes + (kk >> 2) * L::kKVBoxBytes + (kk & 3) * 32;
          kg::WgmmaSS<T, kN>::run(acc, kg::make_desc(q_addr, 16, 1024), kg::make_desc(k_addr, 16, 1024), kk);
        }
      }
      kg::wgmma_commit();
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) kg::pin(acc[i]);
    };
    auto issue_pv = [&](int j, auto cols) {
      const uint32_t s = stage_of(g0 + j);
      kg::mbar_wait(bars.v_full(s), phase_of(g0 + j));
#pragma unroll
      for (int i = 0; i < kOAll; ++i) kg::pin(o_acc[i]);
      kg::wgmma_fence();
      [[maybe_unused]] const uint64_t desc_vs = kg::desc_advance(desc_v, s * L::kVStride);  // kDescStage: this stage's V tile
#pragma unroll
      for (int kk = 0; kk < decltype(cols)::value / 16; ++kk) {
        // Keys 16kk..16kk+15 are rows of V: 16 rows of 128 bytes (kBlockN rows per box, so 176
        // keys are 11 steps, 192 12); lbo steps between the 64-column boxes, sbo between 8-row groups.
        const uint32_t v_addr = s_v + s * L::kVStride + kk * 16 * 128;
        if constexpr (kPSmem) {
          // P from this warpgroup's buffer, K-major as Q in issue_s: keys 16kk.. are box kk / 4,
          // 32-byte step kk % 4 of its 128-byte rows; sbo 1024 between 8-row groups.
          const uint32_t p_addr = s_p + (kk >> 2) * L::kPBoxBytes + (kk & 3) * 32;
          kg::WgmmaSSt<T, kD>::run(o_acc, kg::make_desc(p_addr, 16, 1024), kg::make_desc(v_addr, L::kKVBoxBytes, 1024));
        } else {
          // KG_FA_MMA_ROWSUM 1: 8 more columns, from the box of ones after the V buffer
          constexpr int kN = kRowSum == 1 ? kD + 8 : kD;
          const uint64_t desc = (kDescIter & 2) == 0 || (KG_FA_DESC_ADV_PARTS & 2) == 0
                                    ? kg::make_desc(v_addr, L::kKVBoxBytes, 1024)
                                : kDescStage ? kg::desc_advance(desc_vs, kk * 16 * 128)
                                             : kg::desc_advance(desc_v, s * L::kVStride + kk * 16 * 128);
          kg::WgmmaRS<T, kN>::run(o_acc, p + 4 * kk, desc);
          // KG_FA_MMA_ROWSUM 2: P times a tile of ones, the same for every k-step
          if constexpr (kRowSum == 2) kg::WgmmaRS<T, 8>::run(o_acc + kORegs, p + 4 * kk, desc_ones);
        }
      }
      kg::wgmma_commit();
#pragma unroll
      for (int i = 0; i < kOAll; ++i) kg::pin(o_acc[i]);
    };
    // Masks tile j of S, updates the running max and sums, leaves exp2 values in s_acc and
    // the factor the old O and sums are scaled by in rescale[].
    auto softmax = [&](int j, auto cols) {
      constexpr int kN = decltype(cols)::value;
      const int n0 = j * kBlockN;
      // KG_FA_MASK: the first of this warp's 16 rows
      const int warp_row0 = m0 + warpgroup * 64 + warp_in_group * 16;
      const bool needs_mask =
          (n0 + kN > seq_k) || (kCausal && n0 + kBlockN - 1 > ((KG_FA_MASK & 1) != 0 ? warp_row0 : m0));
      if (needs_mask && (KG_FA_MASK & 2) != 0) {
        // this thread's columns n0 + col_in_8 + 8c + (e & 1) are seen by row h = e >> 1 while
        // 8c + (e & 1) < limit[h]
        int limit[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int keys = kCausal ? min(seq_k, row0 + h * 8 + 1) : seq_k;
          limit[h] = keys - n0 - col_in_8;
        }
#pragma unroll
        for (int c = 0; c < kN / 8; ++c) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            if (c * 8 + (e & 1) >= limit[e >> 1]) s_acc[4 * c + e] = -INFINITY;
          }
        }
      } else if (needs_mask) {
#pragma unroll
        for (int c = 0; c < kN / 8; ++c) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + c * 8 + col_in_8 + (e & 1);
            const int row = row0 + (e >> 1) * 8;
            if (col >= seq_k || (kCausal && col > row)) s_acc[4 * c + e] = -INFINITY;
          }
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float tile_max = -INFINITY;
#pragma unroll
        for (int c = 0; c < kN / 8; ++c) tile_max = fmaxf(tile_max, fmaxf(s_acc[4 * c + 2 * h], s_acc[4 * c + 2 * h + 1]));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
        tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
        float new_max = fmaxf(row_max[h], tile_max * scale_log2);
        // KG_FA_LAZY_RESCALE: the old max kept unless the new one is more than T above it (a row
        // with no key yet, max -inf, takes the first finite one: -inf + T is -inf)
        if (kLazy > 0 && !(new_max > row_max[h] + static_cast<float>(kLazy))) {
          new_max = row_max[h];
        }
        // A row whose keys are all masked so far keeps max -inf; subtracting 0 keeps exp2 at 0.
        const float shift = new_max == -INFINITY ? 0.f : new_max;
        rescale[h] = kg::fast_exp2(row_max[h] - shift);
        row_max[h] = new_max;
        float sum = 0.f;
#pragma unroll
        for (int c = 0; c < kN / 8; ++c) {
          // KG_FA_POLY_EXP: this group's exponentials on the FMA pipe (c is known once unrolled)
          constexpr int kPoly = kD == 64 ? KG_FA_POLY_EXP : KG_FA_POLY_EXP_D128;
          const bool poly = kPoly > 0 && (c * kPoly) % 16 + kPoly >= 16;
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float x = fmaf(s_acc[4 * c + 2 * h + e], scale_log2, -shift);
            s_acc[4 * c + 2 * h + e] = poly ? kg::poly_exp2(x) : kg::fast_exp2(x);
          }
          if constexpr (kRowSum == 0 && !kPackedSum) sum += s_acc[4 * c + 2 * h] + s_acc[4 * c + 2 * h + 1];
        }
        // (KG_FA_PACKED_SUM: rescale_and_pack adds the packed P)
        if constexpr (kRowSum == 0 && !kPackedSum) row_sum[h] = row_sum[h] * rescale[h] + sum;
      }
    };
    // O *= rescale; P = S as 16-bit pairs (register 2i, 2i + 1 of S -> register i of P).
    auto rescale_and_pack = [&](auto cols) {
      // KG_FA_LAZY_RESCALE: only when a row of the warp moved its max (the factor is 1 otherwise:
      // ex2.approx(0) is exactly 1); the vote is the warp's, so the branch does not diverge
      if (kLazy == 0 || __any_sync(0xffffffffu, rescale[0] != 1.f || rescale[1] != 1.f)) {
#pragma unroll
        for (int c = 0; c < kD / 8; ++c) {
          o_acc[4 * c] *= rescale[0];
          o_acc[4 * c + 1] *= rescale[0];
          o_acc[4 * c + 2] *= rescale[1];
          o_acc[4 * c + 3] *= rescale[1];
        }
        if constexpr (kRowSum != 0) {
#pragma unroll
          for (int e = 0; e < 4; ++e) o_acc[kORegs + e] *= rescale[e >> 1];
        }
      }
      if constexpr (kPSmem) {
        // P into this warpgroup's buffer (the last P V, which read it, has retired: every call
        // follows a wgmma_wait<0>), in the 128-byte swizzle of the TMA-store epilogue: row r's
        // 16-byte chunk c % 8 of box c / 8 at chunk (c % 8) ^ (r & 7), and r & 7 = lane / 4.
        // Then the stores visible to wgmma (the async proxy) and the warpgroup's 128 threads met
        // on named barrier 4 + warpgroup (1 to 3: the ping-pong, 8 to 10: the epilogue) before
        // any of them issues the P V that reads them.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = warp_in_group * 16 + (lane >> 2) + h * 8;
#pragma unroll
          for (int c = 0; c < kBlockN / 8; ++c) {
            const uint32_t addr = s_p + (c / 8) * L::kPBoxBytes + r * 128 + (((c % 8) ^ (r & 7)) * 16) + col_in_8 * 2;
            kg::st_shared_u32(addr, kg::Mma<T>::pack(s_acc[4 * c + 2 * h], s_acc[4 * c + 2 * h + 1]));
          }
        }
        kg::fence_proxy_async();
        asm volatile("bar.sync %0, 128;\n" ::"r"(4 + warpgroup) : "memory");
      } else if constexpr (kPackedSum) {
        // pair i holds row h = i % 2's columns; chains i % 4 (two a row), then fp32
        constexpr int kPairs = decltype(cols)::value / 4;
        static_assert(kPairs >= 4, "KG_FA_PACKED_SUM: at least 16 columns");
        uint32_t chain[4];
#pragma unroll
        for (int i = 0; i < kPairs; ++i) {
          p[i] = kg::Mma<T>::pack(s_acc[2 * i], s_acc[2 * i + 1]);
          chain[i & 3] = i < 4 ? p[i] : kg::Mma<T>::add2(chain[i & 3], p[i]);
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) row_sum[h] = row_sum[h] * rescale[h] + kg::Mma<T>::sum2(kg::Mma<T>::add2(chain[h], chain[h + 2]));
      } else {
#pragma unroll
        for (int i = 0; i < decltype(cols)::value / 4; ++i) p[i] = kg::Mma<T>::pack(s_acc[2 * i], s_acc[2 * i + 1]);
      }
    };

    kg::mbar_wait(bars.q_full(q_buf()), (it / kQBufs) & 1);
    // Warpgroup 0 issues first, then 1, ... in a round. Each warpgroup issues n_tiles + 1 times
    // (S(0), the loop, the last P V); the last warpgroup opens the first round and passes the
    // turn on after all but its last.
    // (KG_FA_RING_ACROSS: the CTA's first item only; later items' first rounds were opened by its
    // pass after the last item's final P V)
    if (warpgroup == kWGs - 1 && (!kRingAcross || it == 0)) turn_pass<kWGs>(kWGs - 1);
    turn_wait(warpgroup);
    constexpr Cols<kBlockN> kFull{};
    issue_s(0, kFull);
    turn_pass<kWGs>(warpgroup);
    if constexpr (kOInQ) {
      // KG_FA_PERSISTENT_CAUSAL 3: the last item's output has been read from its Q buffer (its
      // store long done by now), which may take the item after this one's Q
      if (it > 0 && warp_in_group == 0 && lane == 0) {
        kg::bulk_wait_read();
        kg::mbar_arrive(bars.q_empty(static_cast<uint32_t>(it - 1) & 1));
      }
    }
    kg::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kSRegs; ++i) kg::pin(s_acc[i]);
    if (arriver) release(bars.k_empty(stage_of(g0)));
    softmax(0, kFull);
    rescale_and_pack(kFull);

    // Thread 0's producer part of key tile j (without a producer warpgroup): K(j + kStages)
    // goes where K(j) was (released by every warp before S(j + 1) was issued), V(j + 1) where
    // V(j + 1 - kStages) was (released at the end of that tile). Both waits stall warp 0 until
    // the other warpgroup has released the buffer too: what KG_FA_PRODUCER_WG takes away.
    auto produce = [&](int j) {
      if (j + kStages < n_tiles) refill_k(j + kStages);
      if (j + 1 < n_tiles) refill_v(j + 1);
    };
    // Every tile but the last: the loop body has no branch around a wgmma, which is what lets
    // ptxas keep the wgmmas asynchronous (with one, it serialises them: warning C7514).
    // KG_FA_WG_SKIP: the key tiles this warpgroup's rows see (at least one: the CTA's first tile),
    // only where a key tile can start past a warpgroup's rows: not when kBlockN is a multiple of
    // kBlockM (D = 128 causal: 128 and 128), where the branch below would only cost (run 127: the
    // D = 128 causal cases 0.7 % slower with it).
    constexpr bool kSkip = kCausal && KG_FA_WG_SKIP && kBlockN % kBlockM != 0;
    // KG_FA_EMPTY_WG: a warpgroup none of whose rows is a query (the last query block's, past
    // seq_q) computes one key tile, where it computed all of them (causal instances with
    // KG_FA_WG_SKIP: bit 1 at D = 64, bit 4 at D = 128; the non-causal ones of three consumer
    // warpgroups: bit 2)
    constexpr bool kEmptyCausal = (KG_FA_EMPTY_WG & (kD == 64 ? 1 : 4)) != 0 && kSkip;
    constexpr bool kEmptyNc = (KG_FA_EMPTY_WG & 2) != 0 && !kCausal && kWGs == 3 && KG_FA_WG_SKIP;
    const bool empty_wg = (kEmptyCausal || kEmptyNc) && m0 + warpgroup * 64 >= seq_q;
    // the keys this warpgroup's rows see (the CTA's without KG_FA_WG_SKIP), and its key tiles
    const int keys_mine = empty_wg ? 1
                          : kSkip  ? min(seq_k, m0 + warpgroup * 64 + 64)
                          : kCausal ? min(seq_k, m0 + kBlockM)
                                    : seq_k;
    const int n_mine = kSkip ? min(n_tiles, (keys_mine + kBlockN - 1) / kBlockN) : empty_wg ? 1 : n_tiles;
    const int last = n_mine - 1;
    // KG_FA_UNROLL_KEYS(_D64): two key tiles per iteration where it pays (1 keeps the loop as
    // it was, instruction for instruction); D64's only with the tile it was measured on (128 keys,
    // P in registers: 192 keys spill more unrolled)
    constexpr int kUnrollKeys =
        kD == 64 && !kCausal && kBlockN == 128 && !kPSmem ? KG_FA_UNROLL_KEYS_D64 : KG_FA_UNROLL_KEYS;
    // Key tile j's step: S(j + 1) of width `next` (the last tile's may be narrower:
    // KG_FA_NARROW_LAST), P(j) V(j), the softmax of S(j + 1).
    auto key_step = [&](int j, auto next) {
      constexpr int kNext = decltype(next)::value;
      if (!kProducerWG && producer) produce(j);
      turn_wait(warpgroup);
      issue_s(j + 1, next);
      issue_pv(j, kFull);
      turn_pass<kWGs>(warpgroup);
      // S(j + 1) was committed first, so at most one group in flight means it has retired.
      kg::wgmma_wait<1>();
      if constexpr (kNext < kBlockN) {
#pragma unroll
        for (int i = 0; i < kNext / 2; ++i) s_acc[i] = s_last[i];
      }
#pragma unroll
      for (int i = 0; i < kNext / 2; ++i) kg::pin(s_acc[i]);
      if (arriver) release(bars.k_empty(stage_of(g0 + j + 1)));
      softmax(j + 1, next);
      // KG_FA_FORCE_OVERLAP: a branch on the softmax's results, so that ptxas cannot put the
      // wait below before it (never taken: a sum of exponentials is not negative)
      if (overlap_fits<kD, kBlockN, threads_of<kWGs>(), kPSmem>() && (row_sum[0] < 0.f || row_sum[1] < 0.f)) __trap();
      kg::wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kOAll; ++i) kg::pin(o_acc[i]);
      if (arriver) release(bars.v_empty(stage_of(g0 + j)));
      rescale_and_pack(next);
    };
    // KG_FA_NARROW_LAST: the last tile's S in a step of its own, after the loop (so that no
    // branch picks a wgmma's width); launch() picks such an instance only when n_tiles > 1.
    constexpr bool kNarrow = kLastN < kBlockN;
    // kRtNarrow: whether this warpgroup's last tile is computed 64 keys wide. KG_FA_NARROW_DIAG:
    // the first warpgroup's diagonal tile; KG_FA_NARROW_CAUSAL: the keys this warpgroup's rows see
    // of its last tile are at most 64.
    const int last_keys = keys_mine - last * kBlockN;  // in this warpgroup's last tile
    const bool narrow64 =
        kDiag ? warpgroup == 0 && last > 0 && last * kBlockN == m0 : kRtNarrow && last > 0 && last_keys <= 64;
    // KG_FA_NARROW_CAUSAL 2: 128 keys wide where the last tile holds 65 to 128 of them
    constexpr bool kNarrow128 = !kDiag && kRtNarrow && KG_FA_NARROW_CAUSAL == 2 && kBlockN > 128;
    const bool narrow128 = kNarrow128 && last > 0 && last_keys <= 128;
#pragma unroll kUnrollKeys
    for (int j = 0; j < last - (kNarrow || kRtNarrow ? 1 : 0); ++j) key_step(j, kFull);
    if constexpr (kNarrow) {
      key_step(last - 1, Cols<kLastN>{});
    } else if constexpr (kRtNarrow) {
      if (narrow64) {
        key_step(last - 1, Cols<64>{});
      } else if (narrow128) {
        if constexpr (kNarrow128) key_step(last - 1, Cols<128>{});  // (no 128-key step built otherwise)
      } else if (last > 0) {
        key_step(last - 1, kFull);
      }
    }
    // Every S of the item has retired: its Q buffer may take the next item's (KG_FA_PERSISTENT).
    // (KG_FA_PERSISTENT_CAUSAL 3: it holds the output next, and is released after its store)
    if (kPersistent && !kOInQ && arriver) kg::mbar_arrive(bars.q_empty(q_buf()));
    turn_wait(warpgroup);
    if constexpr (kRtNarrow) {
      if (narrow64) {
        issue_pv(last, Cols<64>{});
      } else if (narrow128) {
        if constexpr (kNarrow128) issue_pv(last, Cols<128>{});
      } else {
        issue_pv(last, kFull);
      }
    } else {
      issue_pv(last, Cols<kLastN>{});
    }
    // The last warpgroup opened the item's first round, so it passes on after every turn but its
    // last: this one, unless (KG_FA_EMPTY_WG: a warpgroup of no rows) it skips tiles after it.
    // (KG_FA_RING_ACROSS: after every turn, this one too: it opens the next item's first round)
    constexpr bool kLastMaySkip = kEmptyCausal || kEmptyNc;
    if (kWGs == 2 ? warpgroup == 0 : warpgroup != kWGs - 1) {
      turn_pass<kWGs>(kWGs == 2 ? 0 : warpgroup);
    } else if (kRingAcross || (kLastMaySkip && n_mine < n_tiles)) {
      turn_pass<kWGs>(kWGs - 1);
    }
    kg::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kOAll; ++i) kg::pin(o_acc[i]);
    // The last V tile's buffer, for the next item's refills (or the producers' last waits; or,
    // KG_FA_WG_SKIP, the refills of the tiles this warpgroup skips).
    if ((kPersistent || kCluster > 1 || n_mine < n_tiles) && arriver) release(bars.v_empty(stage_of(g0 + last)));
    if (n_mine < n_tiles) {
      // KG_FA_WG_SKIP: the tiles none of this warpgroup's rows sees. Each turn releases what the
      // key loop's would have (K(j + 1) once S(j + 1) retired, V(j) once P(j) V(j) did), one
      // turn apart as there, so no release lands in a buffer's earlier phase.
      if (arriver) release(bars.k_empty(stage_of(g0 + n_mine)));
      for (int j = n_mine; j < n_tiles; ++j) {
        turn_wait(warpgroup);
        if (kRingAcross || !kLastMaySkip || warpgroup != kWGs - 1 || j + 1 < n_tiles) turn_pass<kWGs>(warpgroup);
        if (arriver) {
          if (j + 1 < n_tiles) release(bars.k_empty(stage_of(g0 + j + 1)));
          release(bars.v_empty(stage_of(g0 + j)));
        }
      }
    }

    // -- epilogue: normalise and store this thread's two rows --
    // 1 / row h's sum, its quad of threads' partial sums added
    auto inv_sum = [&](int h) {
      if constexpr (kRowSum != 0) return 1.f / o_acc[kORegs + 2 * h];  // the whole row's already
      float sum = row_sum[h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      return 1.f / sum;
    };
#if KG_FA_TMA_STORE
    // This warpgroup's 64 rows of the Q buffer ([box][kBlockM rows][128 bytes]), or of the O
    // buffer laid out as it (KG_FA_PERSISTENT_CAUSAL): 8 KB per box, 1024-byte aligned, so a
    // row's 16-byte chunks are swizzled by the row's index mod 8, which is lane / 4 for both of
    // the thread's rows (the warp's 16 and the 8 between them are multiples of 8).
    const uint32_t s_o = (kOwnO ? base + L::kO : s_qi) + warpgroup * 64 * 128;
    if constexpr (kOwnO) {
      // KG_FA_PERSISTENT_CAUSAL: the last item's copies have read these rows before any thread
      // of the warpgroup writes them again (named barrier 8 + warpgroup, as below; thread 0 of
      // the warpgroup stores them)
      if (it > 0) {
        if (warp_in_group == 0 && lane == 0) kg::bulk_wait_read();
        asm volatile("bar.sync %0, 128;\n" ::"r"(8 + warpgroup) : "memory");
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float inv = inv_sum(h);
      const int r = warp_in_group * 16 + (lane >> 2) + h * 8;
#pragma unroll
      for (int c = 0; c < kD / 8; ++c) {
        const uint32_t addr = s_o + (c / 8) * L::kQBoxBytes + r * 128 + (((c % 8) ^ (r & 7)) * 16) + col_in_8 * 2;
        kg::st_shared_u32(addr, kg::Mma<T>::pack(o_acc[4 * c + 2 * h] * inv, o_acc[4 * c + 2 * h + 1] * inv));
      }
    }
    // The writes visible to the copy engine, then the warpgroup's 128 threads met on named
    // barrier 8 + warpgroup (1 to 3 are the ping-pong's) before one thread stores the boxes; TMA
    // leaves out the rows past seq_q. It waits for the copies to have read the buffer: the CTA's
    // shared memory goes when its last thread exits (KG_FA_PERSISTENT_CAUSAL: before the
    // warpgroup's next item writes it, and after the last item).
    kg::fence_proxy_async();
    asm volatile("bar.sync %0, 128;\n" ::"r"(8 + warpgroup) : "memory");
    if (warp_in_group == 0 && lane == 0) {
#pragma unroll
      for (int box = 0; box < L::kBoxes; ++box) {
        kg::tma_store_3d(&o_map, s_o + box * L::kQBoxBytes, box * kBoxCols, m0 + warpgroup * 64, bh);
      }
      kg::bulk_commit();
      if (!kOwnO && !kOInQ) kg::bulk_wait_read();
    }
    (void)out;
    (void)row0;
#else
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float inv = inv_sum(h);
      const int row = row0 + h * 8;
      if (row < seq_q) {
        T* out_row = out + (static_cast<int64_t>(bh) * seq_q + row) * kD;
#pragma unroll
        for (int c = 0; c < kD / 8; ++c) {
          *reinterpret_cast<uint32_t*>(out_row + c * 8 + col_in_8) =
              kg::Mma<T>::pack(o_acc[4 * c + 2 * h] * inv, o_acc[4 * c + 2 * h + 1] * inv);
        }
      }
    }
#endif
    if constexpr (!kPersistent) break;
  }
  // KG_FA_RING_ACROSS: the turn the last warpgroup passed after the CTA's last item, taken
  if (kRingAcross && warpgroup == 0 && it > 0) turn_wait(0);
  // KG_FA_PERSISTENT_CAUSAL: the last item's copies have read the buffer before the CTA exits
  if ((kOwnO || kOInQ) && warp_in_group == 0 && lane == 0) kg::bulk_wait_read();
}

// (B·H, S, D) as a 3-D map: a box is `rows` rows of one head and 64 head-dim columns, so
// rows past the head's sequence end read as zero instead of as the next head's rows.
bool encode_qkv(CUtensorMap* map, CUtensorMapDataType type, const void* base, int bh, int seq, int head_dim,
                int rows) {
  const uint64_t dims[3] = {static_cast<uint64_t>(head_dim), static_cast<uint64_t>(seq), static_cast<uint64_t>(bh)};
  const uint32_t box[3] = {static_cast<uint32_t>(kBoxCols), static_cast<uint32_t>(rows), 1};
  return kg::encode_tiled(map, type, base, 3, dims, box);
}

// The keys a head's causal items compute on w-key tiles: each query block of block_m rows (m0..)
// takes the tiles that hold its keys 0..min(seq_k, m0 + block_m) - 1, the last one whole (the
// kernel's take_item()).
int64_t causal_tile_keys(int seq_q, int seq_k, int block_m, int w) {
  int64_t keys = 0;
  for (int m0 = 0; m0 < seq_q; m0 += block_m) {
    const int need = seq_k < m0 + block_m ? seq_k : m0 + block_m;
    keys += static_cast<int64_t>((need + w - 1) / w) * w;
  }
  return keys;
}
// KG_FA_CAUSAL_SHORT_KEYS_D128's choice: 128-key tiles where they compute at most 94 % of the keys
// 160-key tiles would (the crossover of runs 186-188: 0.931 paid 1 %, 0.946 cost 0.5 %; a 128-key
// tile's key costs more than a 160-key one's, the rest of the ratio)
bool short_tiles_pay(int seq_q, int seq_k, int block_m) {
  return 100 * causal_tile_keys(seq_q, seq_k, block_m, 128) <= 94 * causal_tile_keys(seq_q, seq_k, block_m, 160);
}

// The snake's busiest CTA over the mean CTA (KG_FA_PERSISTENT_ORDER 1 on a persistent causal grid
// of `ctas` CTAs over `heads` heads of n_m query blocks, block_m rows and block_n-key tiles): items
// in head order, each head's blocks heaviest first, an item costing its key tiles and 0.3 of a
// tile more (its start and end; the model of runs 191-193, which it matched within 4-8 %). CTAs
// alike modulo n_m take the same blocks in every whole round, so the sums run over at most n_m
// classes: min(ctas, n_m) x the rounds additions, a few microseconds at the headline.
double snake_imbalance(int seq_q, int seq_k, int heads, int ctas, int block_m, int block_n) {
  const int n_m = (seq_q + block_m - 1) / block_m;
  const int64_t items = static_cast<int64_t>(n_m) * heads;
  if (ctas <= 0 || items <= 0) return 1.0;
  // cost[p]: the item at position p of its head (p = item % n_m), its query block n_m - 1 - p
  std::vector<double> cost(static_cast<size_t>(n_m));
  for (int p = 0; p < n_m; ++p) {
    const int64_t m0 = static_cast<int64_t>(n_m - 1 - p) * block_m;
    const int64_t keys = seq_k < m0 + block_m ? seq_k : m0 + block_m;
    cost[static_cast<size_t>(p)] = static_cast<double>((keys + block_n - 1) / block_n) + 0.3;
  }
  auto at = [&](int64_t item) { return cost[static_cast<size_t>(item % n_m)]; };
  // Whole rounds in pairs: in pair k CTA c takes items 2k ctas + c and 2k ctas + 2 ctas - 1 - c,
  // whose positions repeat with k every `period` pairs (2 ctas x period a multiple of n_m)
  const int64_t rounds = items / ctas;  // whole rounds; then items % ctas in the last
  const int64_t pairs = rounds / 2;
  int64_t g = n_m, b = (2 * static_cast<int64_t>(ctas)) % n_m;
  while (b != 0) {
    const int64_t t = g % b;
    g = b;
    b = t;
  }
  const int64_t period = n_m / g;
  const int classes = ctas < n_m ? ctas : n_m;
  double total = 0.0, busiest = 0.0;
  std::vector<double> per_class(static_cast<size_t>(classes));
  for (int c = 0; c < classes; ++c) {
    double cycle = 0.0, head = 0.0;  // a whole period's pairs, and the first pairs % period
    for (int64_t k = 0; k < period; ++k) {
      const int64_t first = 2 * k * ctas;
      const double pair = at(first + c) + at(first + 2 * static_cast<int64_t>(ctas) - 1 - c);
      cycle += pair;
      if (k < pairs % period) head += pair;
    }
    double t = static_cast<double>(pairs / period) * cycle + head;
    if (rounds % 2 == 1) t += at(2 * pairs * ctas + c);  // a last whole round of its own
    per_class[static_cast<size_t>(c)] = t;
  }
  for (int c = 0; c < ctas; ++c) {  // CTAs alike modulo n_m, but for the last round's items
    double t = per_class[static_cast<size_t>(c % classes)];
    const int64_t last = rounds * ctas + ((rounds & 1) ? ctas - 1 - c : c);
    if (last < items) t += at(last);
    total += t;
    busiest = t > busiest ? t : busiest;
  }
  return busiest * ctas / total;
}

// kBlockN: the instance's keys per tile (block_n(), or another for the causal D = 128 calls below);
// Whether an instance has a twin computing its last key tile 64 keys wide (KG_FA_NARROW_LAST)
template <int kD, bool kCausal, int kBlockN, bool kPersistent>
constexpr bool narrow_last_builds() {
  return KG_FA_NARROW_LAST && !kCausal && kD == 128 && kBlockN > 128 && !p_in_smem<kD, kCausal>() && !kPersistent;
}
// Whether a call takes that twin: more than one tile, the last of at most 64 keys (1 to block_n)
bool narrow_last(int seq_k, int block_n) {
  const int last_keys = seq_k - (seq_k - 1) / block_n * block_n;
  return seq_k > block_n && last_keys <= 64;
}

// kVariant: the fa_wgmma_kernel's; sms: the device's SMs (the persistent grid's CTAs)
template <typename T, int kD, bool kCausal, int kBlockN = block_n<kD, kCausal>(), int kVariant = kMain>
cudaError_t launch(CUtensorMapDataType type, const void* q, const void* k, const void* v, void* out, int batch,
                   int heads, int seq_q, int seq_k, float scale, cudaStream_t stream, int sms) {
  CUtensorMap q_map;
  CUtensorMap k_map;
  CUtensorMap v_map;
  constexpr int kWGs = consumer_wgs<kD>();
  constexpr bool kPersistent = persistent<kD, kCausal, kBlockN, kVariant>();
  constexpr bool kDynamic = dynamic_items<kD, kCausal, kBlockN, kVariant>();
  using L = Layout<kD, kBlockN, kWGs, p_in_smem<kD, kCausal>(), row_sum_mode<kD>(), kPersistent,
                   own_o_buffer<kD, kCausal, kBlockN, kVariant>(), q_buffers<kD, kCausal, kBlockN, kVariant>(), kDynamic>;
  constexpr int kBlockM = L::kBlockM;
  constexpr int kCluster = cluster_m<kCausal>();
  const int bh = batch * heads;
  // K and V in boxes of the rows one CTA of a cluster loads (all of a tile's without clusters)
  if (!encode_qkv(&q_map, type, q, bh, seq_q, kD, kBlockM) ||
      !encode_qkv(&k_map, type, k, bh, seq_k, kD, kBlockN / kCluster) ||
      !encode_qkv(&v_map, type, v, bh, seq_k, kD, kBlockN / kCluster)) {
    return cudaErrorInvalidValue;
  }
#if KG_FA_TMA_STORE
  // the output in boxes of one warpgroup's 64 rows
  CUtensorMap o_map;
  if (reinterpret_cast<uintptr_t>(out) % 16 != 0 || !encode_qkv(&o_map, type, out, bh, seq_q, kD, 64)) {
    return cudaErrorInvalidValue;
  }
#define KG_FA_MAPS q_map, k_map, v_map, o_map
#else
#define KG_FA_MAPS q_map, k_map, v_map
#endif
  constexpr int kSmemBytes = L::kSmemBytes;
  auto kernel = fa_wgmma_kernel<T, kD, kCausal, kBlockN, kWGs, kBlockN, kVariant>;
  // (not in the persistent grid, whose narrow instances ptxas serialises: C7511)
  // (not causal: a causal item's last tile depends on its query block, KG_FA_NARROW_CAUSAL)
  if constexpr (narrow_last_builds<kD, kCausal, kBlockN, kPersistent>()) {
    if (narrow_last(seq_k, kBlockN)) kernel = fa_wgmma_kernel<T, kD, kCausal, kBlockN, kWGs, 64>;
  }
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (err != cudaSuccess) return err;
  const float scale_log2 = scale * 1.4426950408889634f;
  const int n_m = (seq_q + kBlockM - 1) / kBlockM;
  if constexpr (kPersistent) {
    // One CTA per SM (at most one fits: __launch_bounds__(threads, 1) and the shared memory), none
    // idle: as many as there are work items when those are fewer. The kernel's `heads` is every
    // (batch, head).
    const int64_t items = static_cast<int64_t>(n_m) * bh;
    if (items > INT32_MAX) return cudaErrorInvalidValue;
    int ctas = items < sms ? static_cast<int>(items) : sms;
    // Causal items differ in work (their query block's key tiles). KG_FA_PERSISTENT_ORDER 1: the
    // kernel snakes through the rounds, which evens it out. 0: CTA c takes items c, c + ctas, ...,
    // whose query blocks step by ctas mod n_m: with ctas coprime to n_m every CTA walks every
    // block in turn, so each averages the same work (132 CTAs at n_m = 32 would give a quarter of
    // them blocks of 15 key tiles on average and another quarter 18).
    auto gcd = [](int a, int b) {
      while (b) {
        const int t = a % b;
        a = b;
        b = t;
      }
      return a;
    };
    if (kCausal && persistent_order<kD, kVariant>() == 0) {
      while (ctas > 1 && gcd(ctas, n_m) != 1) --ctas;
    }
    const dim3 grid(static_cast<unsigned>(ctas));
    // KG_FA_PERSISTENT_ORDER 2: a grid of more than KG_FA_CLAIM_ITEMS_PER_CTA (4) items per CTA
    // claims them from a counter of its own, in stream-ordered memory zeroed on the call's stream
    // and freed after it (so calls on other streams, or replayed from CUDA graphs, never share it)
    unsigned int* claims = nullptr;
    if (kDynamic &&
        items > static_cast<int64_t>(KG_FA_CLAIM_ITEMS_PER_CTA) * ctas) {
      if ((err = cudaMallocAsync(reinterpret_cast<void**>(&claims), sizeof(unsigned int), stream)) != cudaSuccess) return err;
      if ((err = cudaMemsetAsync(claims, 0, sizeof(unsigned int), stream)) != cudaSuccess) {
        cudaFreeAsync(claims, stream);
        return err;
      }
    }
    kernel<<<grid, threads_of<kWGs>(), kSmemBytes, stream>>>(KG_FA_MAPS, static_cast<T*>(out), bh, seq_q, seq_k,
                                                   scale_log2, claims);
    if (claims != nullptr) {
      err = cudaGetLastError();
      const cudaError_t freed = cudaFreeAsync(claims, stream);
      return err != cudaSuccess ? err : freed;
    }
  } else if constexpr (kCluster > 1) {
    // clusters of kCluster neighbouring query blocks: the grid's x rounded up to a whole cluster
    // (the extra CTA's rows are past seq_q: it loads and computes as the others, stores nothing)
    kg::ClusterLaunch launch(kCluster, dim3(threads_of<kWGs>()), kSmemBytes, stream);
    launch.config.gridDim = dim3((n_m + kCluster - 1) / kCluster * kCluster, heads, batch);
    err = cudaLaunchKernelEx(&launch.config, kernel, KG_FA_MAPS, static_cast<T*>(out), heads, seq_q, seq_k, scale_log2,
                             nullptr);
    if (err != cudaSuccess) return err;
  } else {
    const dim3 grid(n_m, heads, batch);
    kernel<<<grid, threads_of<kWGs>(), kSmemBytes, stream>>>(KG_FA_MAPS, static_cast<T*>(out), heads, seq_q, seq_k,
                                                   scale_log2, nullptr);
  }
#undef KG_FA_MAPS
  return cudaGetLastError();
}

// The sizes kg_attention_fa_wgmma takes (the grid's y and z, and batch x heads as an int)
bool sizes_ok(int batch, int heads, int seq_q, int seq_k) {
  return batch > 0 && heads > 0 && seq_q > 0 && seq_k > 0 && batch <= 65535 && heads <= 65535 &&
         static_cast<int64_t>(batch) * heads <= INT32_MAX;
}

// The instance a call takes (dispatch() launches it; kg_fa_wgmma_instance() names it)
enum Pick : int {
  kPickD64,            // D = 64
  kPickD64Causal,      // causal D = 64 (order KG_FA_PERSISTENT_ORDER_D64 where persistent)
  kPickD64Snake,       // causal D = 64, the snake (kSnake: KG_FA_D64_SNAKE_BLOCKS, _EVEN)
  kPickD64PerItem,     // causal D = 64, a CTA per item (kPerItem: KG_FA_D64_CTA_PER_ITEM)
  kPickD128,           // D = 128
  kPickD128Causal,     // causal D = 128 on KG_FA_CAUSAL_BLOCK_N_D128's tiles
  kPickD128Keys128,    // causal D = 128, at most 128 keys: the 128-key instance
  kPickD128Cta,        // causal D = 128, a CTA per item on KG_FA_CAUSAL_CTA_BLOCK_N_D128's tiles
  kPickD128Short,      // causal D = 128, the persistent grid on 128-key tiles (kShort)
  kPickD128Snake,      // causal D = 128, the persistent grid in the snake's order (kSnake: KG_FA_D128_SNAKE_ITEMS)
  kPickD128ShortSnake, // the same on 128-key tiles (kShort | kSnake)
  kPickNone,           // no instance: a head dim other than 64 and 128
};

Pick pick_instance(int batch, int heads, int seq_q, int seq_k, int head_dim, bool causal, int sms) {
  if (head_dim == 64) {
    if (!causal) return kPickD64;
    constexpr int kBlockM = 64 * consumer_wgs<64>();  // query rows of an item
    const int n_m = (seq_q + kBlockM - 1) / kBlockM;
    const int64_t items = static_cast<int64_t>(n_m) * batch * heads;
    // KG_FA_D64_CTA_PER_ITEM: at most one item per SM, a CTA per item
    if (KG_FA_D64_CTA_PER_ITEM != 0 && items <= sms) return kPickD64PerItem;
    // KG_FA_D64_SNAKE_BLOCKS, KG_FA_D64_SNAKE_EVEN: the snake where its rounds come out even, or
    // the items are short, on grids of more than four items per CTA
    if (KG_FA_D64_SNAKE_BLOCKS > 0 && items > static_cast<int64_t>(KG_FA_CLAIM_ITEMS_PER_CTA) * sms &&
        (n_m <= KG_FA_D64_SNAKE_BLOCKS || snake_imbalance(seq_q, seq_k, batch * heads, sms, kBlockM,
                                                          block_n<64, true>()) <= 1.0 + KG_FA_D64_SNAKE_EVEN / 100.0)) {
      return kPickD64Snake;
    }
    return kPickD64Causal;
  }
  if (head_dim != 128) return kPickNone;
  if (!causal) return kPickD128;
  constexpr int kBlockM = 64 * consumer_wgs<128>();  // query rows of an item
  // KG_FA_CAUSAL_BLOCK_N_D128 wider than 128: a causal sequence of at most 128 keys takes the
  // 128-key instance, whose one tile holds them all (a 192-key tile computed up to 64 more keys
  // of zeros: the harness's pull request, run 154, read S = 77 25 % slower, 1.1 us a call)
  if (block_n<128, true>() > 128 && seq_k <= 128) return kPickD128Keys128;
  // The persistent causal grid (KG_FA_PERSISTENT_CAUSAL_D128) overlaps an item's start and end
  // with the CTA's other items: a call of at most one item (query block of a head) per SM has
  // none, and takes a CTA per item on KG_FA_CAUSAL_CTA_BLOCK_N_D128's tiles (the persistent grid
  // ran B2 H3 S200 and S1000, 12 and 48 items, 2-10 % slower on H200s: runs 176-182)
  const int64_t items = static_cast<int64_t>((seq_q + kBlockM - 1) / kBlockM) * batch * heads;
  if (KG_FA_CAUSAL_CTA_BLOCK_N_D128 != block_n<128, true>() && items <= sms) return kPickD128Cta;
  // KG_FA_CAUSAL_SHORT_KEYS_D128: the persistent grid on 128-key tiles for the shorter sequences
  const bool short_tiles = KG_FA_CAUSAL_SHORT_KEYS_D128 > 0 && seq_q <= KG_FA_CAUSAL_SHORT_KEYS_D128 &&
                           seq_k <= KG_FA_CAUSAL_SHORT_KEYS_D128 && short_tiles_pay(seq_q, seq_k, kBlockM);
  // KG_FA_D128_SNAKE_ITEMS, KG_FA_D128_SNAKE_EVEN: the snake on grids of more than four and at
  // most that many items per CTA where its rounds come out even enough
  const bool snake = KG_FA_D128_SNAKE_ITEMS > 0 && items > static_cast<int64_t>(KG_FA_CLAIM_ITEMS_PER_CTA) * sms &&
                     items <= static_cast<int64_t>(KG_FA_D128_SNAKE_ITEMS) * sms &&
                     snake_imbalance(seq_q, seq_k, batch * heads, sms, kBlockM,
                                     short_tiles ? 128 : block_n<128, true>()) <= 1.0 + KG_FA_D128_SNAKE_EVEN / 100.0;
  if (short_tiles) return snake ? kPickD128ShortSnake : kPickD128Short;
  return snake ? kPickD128Snake : kPickD128Causal;
}

template <typename T>
cudaError_t dispatch(CUtensorMapDataType type, const void* q, const void* k, const void* v, void* out, int batch,
                     int heads, int seq_q, int seq_k, int head_dim, bool causal, float scale, cudaStream_t stream) {
  // the SMs, read once a call: the persistent grids' CTAs, and pick_instance()'s choice
  int sms = 0;
  {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;
  }
#define KG_FA_ARGS type, q, k, v, out, batch, heads, seq_q, seq_k, scale, stream, sms
  switch (pick_instance(batch, heads, seq_q, seq_k, head_dim, causal, sms)) {
    case kPickD64:
      return launch<T, 64, false>(KG_FA_ARGS);
    case kPickD64Causal:
      return launch<T, 64, true>(KG_FA_ARGS);
    case kPickD64Snake:
      if constexpr (KG_FA_D64_SNAKE_BLOCKS > 0) return launch<T, 64, true, block_n<64, true>(), kSnake>(KG_FA_ARGS);
      break;
    case kPickD64PerItem:
      if constexpr (KG_FA_D64_CTA_PER_ITEM != 0) return launch<T, 64, true, block_n<64, true>(), kPerItem>(KG_FA_ARGS);
      break;
    case kPickD128:
      return launch<T, 128, false>(KG_FA_ARGS);
    case kPickD128Causal:
      return launch<T, 128, true>(KG_FA_ARGS);
    case kPickD128Keys128:
      if constexpr (block_n<128, true>() > 128) return launch<T, 128, true, 128>(KG_FA_ARGS);
      break;
    case kPickD128Cta:
      if constexpr (KG_FA_CAUSAL_CTA_BLOCK_N_D128 != block_n<128, true>()) {
        return launch<T, 128, true, KG_FA_CAUSAL_CTA_BLOCK_N_D128>(KG_FA_ARGS);
      }
      break;
    case kPickD128Short:
      if constexpr (KG_FA_CAUSAL_SHORT_KEYS_D128 > 0) return launch<T, 128, true, 128, kShort>(KG_FA_ARGS);
      break;
    case kPickD128Snake:
      if constexpr (KG_FA_D128_SNAKE_ITEMS > 0) return launch<T, 128, true, block_n<128, true>(), kSnake>(KG_FA_ARGS);
      break;
    case kPickD128ShortSnake:
      if constexpr (KG_FA_D128_SNAKE_ITEMS > 0 && KG_FA_CAUSAL_SHORT_KEYS_D128 > 0) {
        return launch<T, 128, true, 128, kShort | kSnake>(KG_FA_ARGS);
      }
      break;
    case kPickNone:
      break;
  }
#undef KG_FA_ARGS
  return cudaErrorInvalidValue;
}

// pick_instance()'s choice as scripts/fa-experiment.py labels the instance, without the dtype:
// "D128 causal N160", "D64 causal snake", "D128 N176 last64"
std::string instance_name(Pick pick, int seq_k) {
  auto tile = [](int n) { return n == 128 ? std::string() : " N" + std::to_string(n); };
  switch (pick) {
    case kPickD64:
      return "D64" + tile(block_n<64, false>());
    case kPickD64Causal:
      return "D64 causal" + tile(block_n<64, true>());
    case kPickD64Snake:
      return "D64 causal" + tile(block_n<64, true>()) + " snake";
    case kPickD64PerItem:
      return "D64 causal" + tile(block_n<64, true>()) + " per item";
    case kPickD128: {
      constexpr int kN = block_n<128, false>();
      const bool narrow = narrow_last_builds<128, false, kN, persistent<128, false, kN>()>() && narrow_last(seq_k, kN);
      return "D128" + tile(kN) + (narrow ? " last64" : "");
    }
    case kPickD128Causal:
      return "D128 causal" + tile(block_n<128, true>());
    case kPickD128Keys128:
      return "D128 causal";
    case kPickD128Cta:
      return "D128 causal" + tile(KG_FA_CAUSAL_CTA_BLOCK_N_D128);
    case kPickD128Short:
      return "D128 causal persistent";
    case kPickD128Snake:
      return "D128 causal" + tile(block_n<128, true>()) + " snake";
    case kPickD128ShortSnake:
      return "D128 causal persistent snake";
    case kPickNone:
      break;
  }
  return "";
}

}  // namespace

// Same contract as kg_attention_fa2: q (batch, heads, seq_q, head_dim); k, v (batch, heads,
// seq_k, head_dim); out like q; all contiguous; dtype 0 = fp16, 1 = bf16; head_dim 64 or 128;
// causal masking top-left aligned (key j visible to query i when j <= i). Pointers must be
// 16-byte aligned (TMA).
extern "C" int kg_attention_fa_wgmma(const void* q, const void* k, const void* v, void* out, int batch, int heads,
                                     int seq_q, int seq_k, int head_dim, int dtype, int causal, float scale,
                                     void* stream) {
  if (!sizes_ok(batch, heads, seq_q, seq_k) || reinterpret_cast<uintptr_t>(q) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(k) % 16 != 0 || reinterpret_cast<uintptr_t>(v) % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (dtype == 0) {
    return dispatch<__half>(CU_TENSOR_MAP_DATA_TYPE_FLOAT16, q, k, v, out, batch, heads, seq_q, seq_k, head_dim,
                            causal != 0, scale, s);
  }
  if (dtype == 1) {
    return dispatch<__nv_bfloat16>(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, q, k, v, out, batch, heads, seq_q, seq_k,
                                   head_dim, causal != 0, scale, s);
  }
  return cudaErrorInvalidValue;
}

// Name of a cudaError_t returned by the entry above, for the Python wrapper's messages.
extern "C" const char* kg_cuda_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }

// The instance kg_attention_fa_wgmma would launch for a call of these sizes on a device of `sms`
// SMs, as scripts/fa-experiment.py labels it without the dtype ("D128 causal N160", "D64 causal
// snake"), copied into name (at most name_len bytes, the NUL included). Host code only: needs no
// GPU. Returns 0, or cudaErrorInvalidValue (the sizes kg_attention_fa_wgmma refuses, sms < 1, or a
// name_len too short).
extern "C" int kg_fa_wgmma_instance(int batch, int heads, int seq_q, int seq_k, int head_dim, int causal, int sms,
                                    char* name, int name_len) {
  if (!sizes_ok(batch, heads, seq_q, seq_k) || sms < 1 || name == nullptr) {
    return cudaErrorInvalidValue;
  }
  const Pick pick = pick_instance(batch, heads, seq_q, seq_k, head_dim, causal != 0, sms);
  const std::string label = instance_name(pick, seq_k);
  if (pick == kPickNone || name_len < static_cast<int>(label.size()) + 1) return cudaErrorInvalidValue;
  label.copy(name, label.size());
  name[label.size()] = '\0';
  return cudaSuccess;
}
