"""Block-sparse (BSR) × dense GEMM in Triton: C[M, N] = A_bsr[M, K] · B[K, N].

A is stored as its non-zero square blocks only: a_values (M/bs, topk, bs, bs), with the block
columns of each block row in a_cols (M/bs, topk), sorted. One program computes a (bs × BLOCK_N)
tile of C: it walks the row's topk blocks, and for each one multiplies the A block by the
matching bs rows of B, in BLOCK_K slices. Only non-zero blocks are read or multiplied.
"""

import os

import torch
import triton
import triton.language as tl

# Candidate tilings for the host-side tuner: (BLOCK_N, BLOCK_K, num_warps, num_stages).
# BLOCK_M is the sparsity block itself (one block row per program).
CONFIGS = [(128, 64, 4, 4), (128, 64, 8, 4), (256, 64, 8, 3), (128, 128, 8, 3)]
INTERPRET_CONFIG = (32, 32, 4, 1)
# Below this many useful FLOPs a case runs for microseconds; it takes the tiling that won the
# 8192³ cases on the H200 (docs/notes/triton-kernels.md, run 1) instead of being tuned.
TUNE_MIN_FLOPS = 1e11
DEFAULT_CONFIG = (128, 64, 4, 4)
# Programs are grouped GROUP_M block rows at a time so that neighbours in launch order share
# columns of B in L2.
GROUP_M = 8
# The interpreter keeps bf16 as raw uint16 bits and its tl.dot multiplies those bits (Triton 3.6):
# there, bf16 operands are widened to fp32 first (exact).
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _bsr_dense_mm(A_VALUES, A_COLS, B, C, N, n_row_blocks, topk,
                  stride_bk, stride_cm,
                  BS: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP: tl.constexpr, EVEN_N: tl.constexpr, DOT_FP32: tl.constexpr):
    # -- grouped launch order: GROUP block rows sweep the column tiles together --
    pid = tl.program_id(0)
    n_tiles = tl.cdiv(N, BLOCK_N)
    per_group = GROUP * n_tiles
    first_row = (pid // per_group) * GROUP
    rows_here = tl.minimum(n_row_blocks - first_row, GROUP)
    row = first_row + (pid % per_group) % rows_here
    tile = (pid % per_group) // rows_here

    offs_m = tl.arange(0, BS)
    offs_n = tile * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    n_ok = offs_n < N
    a_row = A_VALUES + row.to(tl.int64) * topk * BS * BS
    acc = tl.zeros([BS, BLOCK_N], dtype=tl.float32)

    # -- main loop: every (non-zero block, K slice) pair of this block row --
    k_steps: tl.constexpr = BS // BLOCK_K
    for i in range(topk * k_steps):
        t = i // k_steps
        kk = (i % k_steps) * BLOCK_K
        col = tl.load(A_COLS + row * topk + t)
        a = tl.load(a_row + t * BS * BS + offs_m[:, None] * BS + (kk + offs_k)[None, :])
        b_rows = (col * BS + kk + offs_k).to(tl.int64)
        b_ptrs = B + b_rows[:, None] * stride_bk + offs_n[None, :]
        if EVEN_N:
            b = tl.load(b_ptrs)
        else:
            b = tl.load(b_ptrs, mask=n_ok[None, :], other=0.0)
        if DOT_FP32:
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)
        else:
            acc = tl.dot(a, b, acc)

    # -- epilogue: store the C tile (columns past N are not written) --
    c_ptrs = C + (row.to(tl.int64) * BS + offs_m)[:, None] * stride_cm + offs_n[None, :]
    if EVEN_N:
        tl.store(c_ptrs, acc.to(C.dtype.element_ty))
    else:
        tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=n_ok[None, :])


def launch(a_values, a_cols, b, out, config, compiled=None):
    """Runs the kernel with one (BLOCK_N, BLOCK_K, num_warps, num_stages) tiling. `compiled`: a dict
    that, when given, receives the Triton CompiledKernel launched under "kernel" (None under
    TRITON_INTERPRET=1); the harness records its registers, spills and shared memory
    (kernelgate_harness/compiled.py)."""
    block_n, block_k, warps, stages = config
    n_row_blocks, topk, bs, _ = a_values.shape
    N = b.shape[1]
    grid = (n_row_blocks * triton.cdiv(N, block_n),)
    kernel = _bsr_dense_mm[grid](
        a_values, a_cols, b, out, N, n_row_blocks, topk,
        b.stride(0), out.stride(0),
        BS=bs, BLOCK_N=block_n, BLOCK_K=min(block_k, bs), GROUP=GROUP_M, EVEN_N=N % block_n == 0,
        DOT_FP32=INTERPRET and b.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    if compiled is not None:
        compiled["kernel"] = kernel
    return out


def check_layout(a_values, a_cols, b):
    """None if the kernel takes these inputs, else the reason it does not."""
    if a_values.dim() != 4 or a_values.shape[2] != a_values.shape[3]:
        return f"a_values {tuple(a_values.shape)} is not (M/bs, topk, bs, bs)"
    if a_cols.shape != a_values.shape[:2] or a_cols.dtype != torch.int32:
        return f"a_cols {tuple(a_cols.shape)} {a_cols.dtype} is not (M/bs, topk) int32"
    if not (a_values.is_contiguous() and b.stride(1) == 1):
        return "a_values must be contiguous and b row-major"
    return None


def tune(a_values, a_cols, b, interpret):
    """The fastest tiling for these shapes (triton.testing.do_bench, outside any measurement); the
    default tiling for tiny cases; the small interpreter tiling on the CPU."""
    if interpret:
        return INTERPRET_CONFIG, {}
    n_row_blocks, topk, bs, _ = a_values.shape
    if 2.0 * n_row_blocks * topk * bs * bs * b.shape[1] < TUNE_MIN_FLOPS:
        return DEFAULT_CONFIG, {}
    out = torch.empty(n_row_blocks * bs, b.shape[1], dtype=b.dtype, device=b.device)
    times = {}
    for cfg in CONFIGS:
        try:
            times[cfg] = triton.testing.do_bench(lambda cfg=cfg: launch(a_values, a_cols, b, out, cfg), warmup=10, rep=40)
        except triton.runtime.errors.OutOfResources:
            continue  # too much shared memory for this tiling on this GPU
    if not times:
        raise RuntimeError(f"no tiling of {CONFIGS} fits this GPU")
    return min(times, key=times.get), times
