"""FlashAttention-2-style attention forward in Triton: O = softmax(Q·Kᵀ·scale [+ causal]) · V.

One program owns BLOCK_M query rows of one (batch, head) and streams the keys and values past
them in BLOCK_N blocks with an online softmax, so the Sq×Sk score matrix never reaches memory.
Layout (B, H, S, D), head dim contiguous. Causal masking is top-left aligned (query i sees keys
j ≤ i), as torch's SDPA does. Tails (Sq or Sk not a multiple of the tile) are masked.
"""

import math
import os

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634

# Candidate tilings for the host-side tuner, per head dim: (BLOCK_M, BLOCK_N, num_warps, num_stages).
# BLOCK_M 128 fills a Hopper warpgroup MMA; BLOCK_N and the pipeline depth trade shared memory
# (K and V tiles per stage) against latency hiding.
CONFIGS = {
    64: [(128, 64, 4, 3), (128, 128, 8, 3), (128, 64, 8, 4), (128, 128, 4, 2)],
    128: [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 4, 2), (128, 128, 8, 3)],
}
# Under TRITON_INTERPRET=1 (CPU) small tiles keep the interpreter fast; they still exercise the
# full-block and masked phases on tiny shapes.
INTERPRET_CONFIG = (16, 16, 4, 1)
# Below this many scores (B·H·Sq·Sk) a case runs for microseconds and tuning it would time noise
# and spend seconds compiling: it takes the tiling that won the S=4096 cases on the H200
# (docs/notes/triton-kernels.md, run 1).
TUNE_MIN_SCORES = 1 << 24
DEFAULT_CONFIG = {64: (128, 64, 8, 4), 128: (128, 128, 8, 3)}
# The interpreter keeps bf16 as raw uint16 bits and its tl.dot multiplies those bits (Triton 3.6):
# there, bf16 operands are widened to fp32 first (exact: bf16 values are fp32 values).
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _attend_block(acc, l_i, m_i, q, k_ptrs, v_ptrs, start_n, offs_m, offs_n, SK, qk_scale,
                  MASK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr, DOT_FP32: tl.constexpr):
    # -- load K, V for this key block (masked only on the tail block) --
    if MASK_N:
        key_ok = (start_n + offs_n) < SK
        k = tl.load(k_ptrs, mask=key_ok[:, None], other=0.0)
        v = tl.load(v_ptrs, mask=key_ok[:, None], other=0.0)
    else:
        k = tl.load(k_ptrs)
        v = tl.load(v_ptrs)
    # -- compute qk (fp32 accumulate), scaled to base 2 --
    if DOT_FP32:
        qk = tl.dot(q.to(tl.float32), tl.trans(k.to(tl.float32))) * qk_scale
    else:
        qk = tl.dot(q, tl.trans(k)) * qk_scale
    if MASK_N:
        qk = tl.where(key_ok[None, :], qk, float("-inf"))
    if CAUSAL_MASK:
        qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
    # -- online softmax: new running max, rescale what was accumulated --
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    p = tl.math.exp2(qk - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    # -- accumulate P·V (P rounded to the input dtype for the tensor cores) --
    acc = acc * alpha[:, None]
    if DOT_FP32:
        acc = tl.dot(p.to(v.dtype).to(tl.float32), v.to(tl.float32), acc)
    else:
        acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l_i, m_new


@triton.jit
def _attn_fwd(Q, K, V, O, qk_scale,
              stride_qb, stride_qh, stride_qm,
              stride_kb, stride_kh, stride_kn,
              stride_vb, stride_vh, stride_vn,
              stride_ob, stride_oh, stride_om,
              H, SQ, SK,
              D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              CAUSAL: tl.constexpr, EVEN_M: tl.constexpr, EVEN_N: tl.constexpr, DOT_FP32: tl.constexpr):
    # Causal programs run heaviest first (the last query blocks see the most keys).
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = (pid_bh // H).to(tl.int64)
    h = (pid_bh % H).to(tl.int64)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :]
    k_ptrs = K + b * stride_kb + h * stride_kh + offs_n[:, None] * stride_kn + offs_d[None, :]
    v_ptrs = V + b * stride_vb + h * stride_vh + offs_n[:, None] * stride_vn + offs_d[None, :]

    # -- load the Q tile once; it stays in registers for the whole key loop --
    if EVEN_M:
        q = tl.load(q_ptrs)
    else:
        q = tl.load(q_ptrs, mask=(offs_m < SQ)[:, None], other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)

    # -- phase 1: key blocks every row of this tile sees in full: no masks --
    full_end = (SK // BLOCK_N) * BLOCK_N
    if CAUSAL:
        full_end = tl.minimum(full_end, pid_m * BLOCK_M)
    for start_n in range(0, full_end, BLOCK_N):
        acc, l_i, m_i = _attend_block(acc, l_i, m_i, q, k_ptrs + start_n * stride_kn, v_ptrs + start_n * stride_vn,
                                      start_n, offs_m, offs_n, SK, qk_scale, MASK_N=False, CAUSAL_MASK=False,
                                      DOT_FP32=DOT_FP32)

    # -- phase 2: the causal diagonal and the key tail, masked --
    if CAUSAL:
        end = tl.minimum((pid_m + 1) * BLOCK_M, SK)
    else:
        end = SK
    if CAUSAL or not EVEN_N:
        for start_n in range(full_end, end, BLOCK_N):
            acc, l_i, m_i = _attend_block(acc, l_i, m_i, q, k_ptrs + start_n * stride_kn, v_ptrs + start_n * stride_vn,
                                          start_n, offs_m, offs_n, SK, qk_scale, MASK_N=not EVEN_N, CAUSAL_MASK=CAUSAL,
                                          DOT_FP32=DOT_FP32)

    # -- epilogue: normalise and store (rows past Sq are not written) --
    out = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :]
    if EVEN_M:
        tl.store(o_ptrs, out.to(O.dtype.element_ty))
    else:
        tl.store(o_ptrs, out.to(O.dtype.element_ty), mask=(offs_m < SQ)[:, None])


def launch(q, k, v, out, causal, config, compiled=None):
    """Runs the kernel with one (BLOCK_M, BLOCK_N, num_warps, num_stages) tiling.
    `compiled`: a dict that, when given, receives the Triton CompiledKernel launched under "kernel"
    (None under TRITON_INTERPRET=1); the harness records its registers, spills and shared memory
    (kernelgate_harness/compiled.py)."""
    block_m, block_n, warps, stages = config
    B, H, SQ, D = q.shape
    SK = k.shape[2]
    grid = (triton.cdiv(SQ, block_m), B * H)
    kernel = _attn_fwd[grid](
        q, k, v, out, (1.0 / math.sqrt(D)) * LOG2E,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        H, SQ, SK,
        D=D, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal,
        EVEN_M=SQ % block_m == 0, EVEN_N=SK % block_n == 0,
        DOT_FP32=INTERPRET and q.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    if compiled is not None:
        compiled["kernel"] = kernel
    return out


def check_shapes(q, k, v, causal):
    """None if the kernel handles these inputs, else the reason it does not."""
    if q.dim() != 4 or k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        return f"shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} are not (B, H, S, D) with matching B, H, D"
    if q.shape[3] not in CONFIGS:
        return f"head dim {q.shape[3]} not supported (have {sorted(CONFIGS)})"
    if any(t.stride(-1) != 1 for t in (q, k, v)):
        return "the head dim must be contiguous"
    if q.dtype not in (torch.float16, torch.bfloat16):
        return f"dtype {q.dtype} not supported (fp16, bf16)"
    return None


def tune(q, k, v, causal, interpret):
    """The fastest tiling for these shapes (timed with triton.testing.do_bench, outside any
    measurement); the default tiling for tiny cases; the small interpreter tiling on the CPU.
    Returns (config, {config: ms}), the table empty when nothing was timed."""
    if interpret:
        return INTERPRET_CONFIG, {}
    B, H, SQ, D = q.shape
    if B * H * SQ * k.shape[2] < TUNE_MIN_SCORES:
        return DEFAULT_CONFIG[D], {}
    out = torch.empty_like(q)
    times = {}
    for cfg in CONFIGS[q.shape[3]]:
        try:
            times[cfg] = triton.testing.do_bench(lambda cfg=cfg: launch(q, k, v, out, causal, cfg), warmup=10, rep=40)
        except triton.runtime.errors.OutOfResources:
            continue  # too much shared memory for this tiling on this GPU
    if not times:
        raise RuntimeError(f"no tiling of {CONFIGS[q.shape[3]]} fits this GPU")
    return min(times, key=times.get), times
