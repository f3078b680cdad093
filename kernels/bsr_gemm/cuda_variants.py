"""CUDA variants of the bsr_gemm kernel, loaded with ctypes from the library the build stage built.

Each entry is a factory with the interface of docs/kernel-modules.md; the kernel's
bench module merges this dict into its VARIANTS. Sources and designs: kernels/bsr_gemm/cuda/
and docs/cuda-kernels.md.
"""

import torch

from kernelgate_harness import Unsupported
from kernels.common.cuda_library import DTYPE_CODES, INT, PTR, bind, refuse_unless_cuda_half, stream_handle

_BLOCK_M = 128
_BLOCK_K_MULTIPLE = 64
# (a_values, a_cols, b, c, m, n, k, bm, bk, topk, dtype, stream)
ARGTYPES = (PTR,) * 4 + (INT,) * 7 + (PTR,)


def check_bsr(a_values, a_cols, b, out=None):
    """Validates the shared BSR layout; returns (M, N, K, bm, bk, topk)."""
    if a_values.dim() != 4:
        raise ValueError(f"a_values must be (M/bm, topk, bm, bk), got shape {tuple(a_values.shape)}")
    if a_cols.dim() != 2 or a_cols.dtype != torch.int32:
        raise ValueError(f"a_cols must be a 2-D int32 tensor (M/bm, topk), got {a_cols.dtype} {tuple(a_cols.shape)}")
    if b.dim() != 2:
        raise ValueError(f"b must be 2-D (K, N), got shape {tuple(b.shape)}")
    if b.dtype != a_values.dtype or (out is not None and out.dtype != a_values.dtype):
        raise ValueError("a_values, b and out must share one dtype")
    tensors = (("a_values", a_values), ("a_cols", a_cols), ("b", b)) + ((("out", out),) if out is not None else ())
    for name, t in tensors:
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
        if t.device != a_values.device:
            raise ValueError(f"{name} is on {t.device}, a_values on {a_values.device}")
    n_block_rows, topk, bm, bk = a_values.shape
    if tuple(a_cols.shape) != (n_block_rows, topk):
        raise ValueError(f"a_cols has shape {tuple(a_cols.shape)}, expected {(n_block_rows, topk)}")
    k, n = b.shape
    m = n_block_rows * bm
    if bk == 0 or k % bk != 0:
        raise ValueError(f"K = {k} is not a multiple of bk = {bk}")
    if topk > k // bk:
        raise ValueError(f"topk = {topk} exceeds the {k // bk} column blocks")
    if out is not None and tuple(out.shape) != (m, n):
        raise ValueError(f"out has shape {tuple(out.shape)}, expected {(m, n)}")
    if a_values.dtype not in DTYPE_CODES:
        raise Unsupported(f"dtype {a_values.dtype} (fp16 and bf16 only)")
    if a_values.device.type != "cuda":
        raise Unsupported(f"tensors on {a_values.device} (CUDA only)")
    if bm != _BLOCK_M or bk % _BLOCK_K_MULTIPLE != 0:
        raise Unsupported(f"blocks {bm}x{bk} (bm = {_BLOCK_M}, bk a multiple of {_BLOCK_K_MULTIPLE} only)")
    if n % 8 != 0:
        raise Unsupported(f"N = {n} (a multiple of 8 only: rows of b are copied in 16-byte pieces)")
    if m == 0 or n == 0 or topk == 0:
        raise Unsupported("empty problem")
    return m, n, k, bm, bk, topk


def check_case(params, ctx):
    """Refuses, before any library is loaded, the cases the CUDA variants cannot run, so the
    harness records them as skipped with the reason."""
    refuse_unless_cuda_half(params, ctx)
    block = params.get("block")
    if block is not None and int(block) != _BLOCK_M:
        raise Unsupported(f"blocks {block}x{block} (square blocks of {_BLOCK_M} only)")
    n = params.get("N")
    if n is not None and int(n) % 8 != 0:
        raise Unsupported(f"N = {n} (a multiple of 8 only: rows of b are copied in 16-byte pieces)")


def _factory(variant, entry):
    def factory(params, ctx):
        check_case(params, ctx)
        call = bind(ctx.library(variant), entry, ARGTYPES)

        def run(inputs, out):
            a_values, a_cols, b = inputs["a_values"], inputs["a_cols"], inputs["b"]
            m, n, k, bm, bk, topk = check_bsr(a_values, a_cols, b, out)
            call(
                a_values.data_ptr(), a_cols.data_ptr(), b.data_ptr(), out.data_ptr(),
                m, n, k, bm, bk, topk, DTYPE_CODES[b.dtype], stream_handle(b),
            )
            return out

        return run

    factory.__name__ = variant
    return factory


VARIANTS: dict = {
    "cuda_bsr_mma": _factory("cuda_bsr_mma", "kg_bsr_gemm_mma"),
    "cuda_bsr_wgmma": _factory("cuda_bsr_wgmma", "kg_bsr_gemm_wgmma"),
    "cuda_bsr_wgmma_ws": _factory("cuda_bsr_wgmma_ws", "kg_bsr_gemm_wgmma_ws"),
}
