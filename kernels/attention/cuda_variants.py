"""CUDA variants of the attention kernel, loaded with ctypes from the library the build stage built.

Each entry is a factory with the interface of docs/kernel-modules.md; the kernel's
bench module merges this dict into its VARIANTS. Sources and designs: kernels/attention/cuda/
and docs/cuda-kernels.md.
"""

import math

import torch

from kernelgate_harness import Unsupported
from kernels.common.cuda_library import DTYPE_CODES, FLOAT, INT, PTR, bind, refuse_unless_cuda_half, stream_handle

_HEAD_DIMS = (64, 128)
# Scores buffer of the unfused reference: heads are processed in chunks so that the
# (chunk, S_q, S_k) scores stay under this size (B16 H96 S4096 at once would be 51 GB).
SCORES_BUDGET_BYTES = 2 << 30
# (q, k, v, out, batch, heads, seq_q, seq_k, head_dim, dtype, causal, scale, stream)
FUSED_ARGTYPES = (PTR,) * 4 + (INT,) * 7 + (FLOAT, PTR)
# (scores, n_matrices, seq_q, seq_k, dtype, causal, scale, stream)
SOFTMAX_ARGTYPES = (PTR,) + (INT,) * 5 + (FLOAT, PTR)


def check_qkv(q, k, v, out=None):
    """Validates (B, H, S, D) contiguous CUDA tensors of one supported dtype; returns B, H, Sq, Sk, D."""
    for name, t in (("q", q), ("k", k), ("v", v)) + ((("out", out),) if out is not None else ()):
        if t.dim() != 4:
            raise ValueError(f"{name} must be 4-D (B, H, S, D), got shape {tuple(t.shape)}")
        if t.dtype != q.dtype:
            raise ValueError(f"{name} has dtype {t.dtype}, q has {q.dtype}")
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (B, H, S, D)")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")
    batch, heads, seq_q, head_dim = q.shape
    seq_k = k.shape[2]
    if tuple(k.shape) != (batch, heads, seq_k, head_dim) or tuple(v.shape) != tuple(k.shape):
        raise ValueError(f"k {tuple(k.shape)} and v {tuple(v.shape)} must be (B, H, S_k, D) with q's B, H, D {tuple(q.shape)}")
    if out is not None and tuple(out.shape) != tuple(q.shape):
        raise ValueError(f"out has shape {tuple(out.shape)}, q has {tuple(q.shape)}")
    if q.dtype not in DTYPE_CODES:
        raise Unsupported(f"dtype {q.dtype} (fp16 and bf16 only)")
    if q.device.type != "cuda":
        raise Unsupported(f"tensors on {q.device} (CUDA only)")
    if seq_q == 0 or seq_k == 0:
        raise Unsupported("empty sequence")
    return batch, heads, seq_q, seq_k, head_dim


def check_case(params, ctx):
    """Refuses, before any library is loaded, the cases the CUDA variants cannot run, so the
    harness records them as skipped with the reason."""
    refuse_unless_cuda_half(params, ctx)
    head_dim = params.get("D")
    if head_dim is not None and int(head_dim) not in _HEAD_DIMS:
        raise Unsupported(f"head dim {head_dim} (64 and 128 only)")


def _scale(params, head_dim):
    scale = params.get("scale")
    return float(scale) if scale is not None else 1.0 / math.sqrt(head_dim)


def causal_flag(params):
    """The case's causal flag; manifests give YAML booleans, case ids the strings true/false."""
    value = params.get("causal", False)
    if isinstance(value, str):
        return value.lower() == "true"
    return bool(value)


def _fused(variant):
    """Factory of a fused attention variant: one launch of FUSED_ENTRIES[variant] per call."""
    entry = FUSED_ENTRIES[variant]

    def factory(params, ctx):
        check_case(params, ctx)
        call = bind(ctx.library(variant), entry, FUSED_ARGTYPES)
        causal = causal_flag(params)

        def run(inputs, out):
            q, k, v = inputs["q"], inputs["k"], inputs["v"]
            batch, heads, seq_q, seq_k, head_dim = check_qkv(q, k, v, out)
            if head_dim not in _HEAD_DIMS:
                raise Unsupported(f"head dim {head_dim} (64 and 128 only)")
            if batch > 65535 or heads > 65535:
                raise Unsupported("batch and heads must each be at most 65535 (grid limits)")
            for name, t in (("q", q), ("k", k), ("v", v)):
                if t.data_ptr() % 16:
                    raise ValueError(f"{name} must start at a 16-byte aligned address (TMA and 16-byte loads)")
            call(
                q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                batch, heads, seq_q, seq_k, head_dim, DTYPE_CODES[q.dtype], int(causal),
                _scale(params, head_dim), stream_handle(q),
            )
            return out

        return run

    factory.__name__ = variant
    return factory


# Fused variants and their library entries (same contract): FlashAttention-2 on mma.sync +
# ldmatrix + cp.async (cuda/fa2.cu), and on wgmma + TMA (cuda/fa_wgmma.cu).
FUSED_ENTRIES = {"cuda_fa2": "kg_attention_fa2", "cuda_fa_wgmma": "kg_attention_fa_wgmma"}
cuda_fa2 = _fused("cuda_fa2")
cuda_fa_wgmma = _fused("cuda_fa_wgmma")


def heads_per_chunk(seq_q, seq_k, element_bytes, budget_bytes=SCORES_BUDGET_BYTES):
    """How many (batch, head) score matrices fit the scores budget at once (at least one)."""
    return max(1, budget_bytes // (seq_q * seq_k * element_bytes))


def cublas_attn(params, ctx):
    """Unfused reference: S = Q K^T (cuBLAS through torch.bmm), P = softmax (CUDA kernel), O = P V (cuBLAS)."""
    check_case({k: v for k, v in params.items() if k != "D"}, ctx)
    softmax = bind(ctx.library("cublas_attn"), "kg_attention_softmax", SOFTMAX_ARGTYPES)
    causal = causal_flag(params)
    scores_cache = {}

    def run(inputs, out):
        q, k, v = inputs["q"], inputs["k"], inputs["v"]
        batch, heads, seq_q, seq_k, head_dim = check_qkv(q, k, v, out)
        n_mats = batch * heads
        chunk = min(n_mats, heads_per_chunk(seq_q, seq_k, q.element_size()))
        key = (chunk, seq_q, seq_k, q.dtype, q.device)
        if key not in scores_cache:
            scores_cache.clear()
            scores_cache[key] = torch.empty((chunk, seq_q, seq_k), dtype=q.dtype, device=q.device)
        scores = scores_cache[key]
        q3 = q.view(n_mats, seq_q, head_dim)
        k3 = k.view(n_mats, seq_k, head_dim)
        v3 = v.view(n_mats, seq_k, head_dim)
        o3 = out.view(n_mats, seq_q, head_dim)
        scale = _scale(params, head_dim)
        stream = stream_handle(q)
        for start in range(0, n_mats, chunk):
            stop = min(start + chunk, n_mats)
            s = scores[: stop - start]
            torch.bmm(q3[start:stop], k3[start:stop].transpose(1, 2), out=s)
            softmax(s.data_ptr(), stop - start, seq_q, seq_k, DTYPE_CODES[q.dtype], int(causal), scale, stream)
            torch.bmm(s, v3[start:stop], out=o3[start:stop])
        return out

    return run


VARIANTS: dict = {"cuda_fa2": cuda_fa2, "cuda_fa_wgmma": cuda_fa_wgmma, "cublas_attn": cublas_attn}
