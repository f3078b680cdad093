"""Attention forward in Triton for Hopper: O = softmax(Q·Kᵀ·scale [+ causal]) · V, with TMA
tensor descriptors and, as a tuning candidate, warp specialisation (FlashAttention-3's layout).

Same contract as triton_fa2 (layout (B, H, S, D), head dim contiguous; causal top-left aligned,
query i sees keys j ≤ i, as torch's SDPA does; any Sq, Sk). What differs:

- Q, K and V are read through host-side tensor descriptors (`TensorDescriptor`, 4-D over
  (B, H, S, D), boxes of (1, 1, rows, D)): on sm_90 the loads are TMA copies into shared memory
  that feed wgmma, with no address arithmetic in the loop. A box that runs past S reads zeros,
  per (b, h), so the Sq and Sk tails need no masked loads; only the scores of keys past Sk are
  masked. A flat tiling uses 2-D descriptors over the (B·H·S, D) matrix instead (contiguous
  inputs; a box past Sk reads the next head's keys, masked all the same). O is written by a
  plain store (rows past Sq masked).
- The softmax scale is folded into the exponent (s·scale·log2e − m in one FMA, then exp2), the
  row maximum taken on the unscaled scores.
- Two loop shapes, chosen per tiling: without specialisation, the key blocks every row sees in
  full run unmasked and the causal diagonal / key tail (one or two blocks) run masked after them;
  with `tl.range(..., warp_specialize=True)`, one loop (the only form Triton 3.6's Hopper pass
  accepts) with the mask in every block of causal or tailed cases: one compare and one select a
  score. The pass makes a TMA producer warpgroup and two consumer warpgroups of 64 rows each
  with register reallocation (see WARP_SPEC_CONFIGS). Those tilings are tuning candidates only
  with KERNELGATE_FA3_WARP_SPEC=1.
- The host-side tuner first runs each candidate tiling in a child process on one (b, h) of the
  case's shape, with a time limit (a kernel that never finishes costs that child, not the
  harness's worker); it then times the ones that finished right, drops any that fails to compile
  or launch here or is off an fp32 reference on two (b, h) slices, and keeps the fastest; the
  choice is remembered like triton_fa2's (kernels/common/tuning.py, --tune-cache).

Status: NOT YET MEASURED ON THE H100; whether it beats triton_fa2 anywhere is the open question.
Its first H100 run (push run of 936b6f2, warp-specialised tilings among the candidates, no probe)
did not finish its tuning in 7 minutes, cause unseen: since then the specialised tilings are
opt-in and every candidate is probed in a child process with a time limit.
What is verified, without a GPU (2026-11-24): its results under TRITON_INTERPRET=1, where the CPU
interpreter runs this same code, tensor descriptors and tl.range included, and ignores warps,
stages and warp_specialize (so the specialised loop shape is checked for its numerics only):
the harness over the manifest's ci_cases (17) and its S=77 cases (8), stress inputs included;
every tail case of the manifest (S 1000 and 77, Sq 300 x Sk 1000; 18) with the tile sizes of each
candidate of its head dim, rel L2 at most 0.57 of the tolerance; and, by compiling for sm_90,
that every candidate tiling builds with wgmma, TMA loads and its partitions
(test/python/test_triton_fa3.py, docs/notes/triton-kernels.md).
"""

import math
import os
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

from kernelgate_harness.jsonl_child import ALIVE, DONE, JsonLinesChild

LOG2E = 1.4426950408889634

# Candidate tilings per head dim: (BLOCK_M, BLOCK_N, num_warps, num_stages, warp_specialize).
# Without specialisation, BLOCK_M 128 is one warpgroup MMA per 64 rows (8 warps: two warpgroups);
# BLOCK_N and the stage count trade shared memory (K and V boxes per stage) against latency hiding.
# These are the two tilings that led triton_fa2's tuning on the H100 (push run 15: D128
# (128, 128, 8, 3) then (128, 64, 8, 3); D64 (128, 64, 4, 3) and (128, 64, 8, 4) within 2 %), and
# the first of them again with a sixth element, flat: 2-D descriptors over the (B·H·S, D) matrix,
# as Triton's own fused-attention tutorial has them, rather than 4-D ones with rank-reducing boxes
# (both compile to TMA loads; which one the H100 runs faster, or at all, was not seen). Three per
# head dim: each is a compile (1-2 s) per case on a cold cache. The first entry is the one tiny
# (untuned) cases run.
CONFIGS = {
    64: [(128, 64, 8, 4, False), (128, 64, 4, 3, False), (128, 64, 8, 4, False, True)],
    128: [(128, 128, 8, 3, False), (128, 64, 8, 3, False), (128, 128, 8, 3, False, True)],
}
# Warp-specialised candidates, tuned as well only with KERNELGATE_FA3_WARP_SPEC=1: the variant's
# first H100 run, with them among the candidates, did not finish its tuning (see PROBE_TIMEOUT_S).
# num_warps must be 4: Triton 3.6's Hopper pass then adds a producer warpgroup (TMA, 40 registers)
# and splits the rows between two consumer warpgroups (232 registers each, setmaxnreg): 12 warps,
# FlashAttention-3's layout. With 8 warps the pass gives up silently (compiled for sm_90 and read
# back: no partitions). At D64, (256, 64) gives each consumer 128 rows (FlashAttention-3 takes 192,
# not a power of two, which tl.arange needs); at D128 it spills 60-70 times. (128, 128, 4, 3) at
# D128 would need 246 KB of shared memory, more than an H100 has.
WARP_SPEC_ENV = "KERNELGATE_FA3_WARP_SPEC"
WARP_SPEC_CONFIGS = {
    64: [(128, 128, 4, 2, True), (256, 64, 4, 2, True)],
    128: [(128, 128, 4, 2, True), (128, 64, 4, 3, True)],
}
# Every tiling above compiles for sm_90 (test/python/test_triton_fa3.py compiles them without a
# GPU), without local memory but for a few spill loads and stores in specialised ones (8-16 bytes
# of stack: (128, 128, 4, 2) at D128 causal, (256, 64, 4, 2) at D64).


def warp_spec_enabled():
    """Whether the warp-specialised tilings are tuning candidates (KERNELGATE_FA3_WARP_SPEC=1)."""
    return os.environ.get(WARP_SPEC_ENV) == "1"


def candidates(D):
    """The tilings the tuner tries for head dim D."""
    return CONFIGS[D] + (WARP_SPEC_CONFIGS[D] if warp_spec_enabled() else [])


# Under TRITON_INTERPRET=1 (CPU) small tiles keep the interpreter fast; they still exercise the
# full-block and masked phases and the descriptors' zero-filled boxes past S on tiny shapes.
INTERPRET_CONFIG = (16, 16, 4, 1, False)
# Below this many scores (B·H·Sq·Sk) a case runs for microseconds: it takes the first candidate
# untuned (tuning it would time noise and spend seconds compiling).
TUNE_MIN_SCORES = 1 << 24
# The tuner's check of each candidate: relative L2 against an fp32 reference on two (b, h) slices,
# at most this (the manifest allows 2e-3 for fp16 and 1e-2 for bf16: a candidate the compiler got
# wrong is far above both).
TUNE_CHECK_REL_L2 = 2e-2
# The interpreter keeps bf16 as raw uint16 bits and its tl.dot multiplies those bits (Triton 3.6):
# there, bf16 operands are widened to fp32 first (exact: bf16 values are fp32 values).
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def _key_blocks(acc, l_i, m_i, q, desc_k, desc_v, b, h, row_k, lo, hi, offs_m, SK, qk_scale,
                D: tl.constexpr, BLOCK_N: tl.constexpr, MASK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr,
                WARP_SPEC: tl.constexpr, FLAT: tl.constexpr, DOT_FP32: tl.constexpr):
    """Streams the key blocks [lo, hi) past the query tile with an online softmax (base 2)."""
    offs_n = tl.arange(0, BLOCK_N)
    key_last = tl.minimum(offs_m, SK - 1)  # the last key each query row sees (causal)
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPEC):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        if FLAT:  # rows of the (B·H·S, D) matrix: a box past Sk reads the next head's keys, masked below
            k = desc_k.load([row_k + start_n, 0])
            v = desc_v.load([row_k + start_n, 0])
        else:
            k = desc_k.load([b, h, start_n, 0]).reshape(BLOCK_N, D)
            v = desc_v.load([b, h, start_n, 0]).reshape(BLOCK_N, D)
        # -- scores, unscaled, fp32 accumulate --
        if DOT_FP32:
            s = tl.dot(q.to(tl.float32), tl.trans(k.to(tl.float32)))
        else:
            s = tl.dot(q, tl.trans(k))
        # -- masks: keys past Sk read zeros (not -inf); query i sees keys j <= i when causal --
        if CAUSAL_MASK:
            s = tl.where((start_n + offs_n)[None, :] <= key_last[:, None], s, float("-inf"))
        elif MASK_N:
            s = tl.where((start_n + offs_n)[None, :] < SK, s, float("-inf"))
        # -- online softmax: the scale folded into the exponent's FMA --
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        p = tl.math.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        acc = acc * alpha[:, None]
        # -- O += P·V (P rounded to the input dtype for the tensor cores) --
        if DOT_FP32:
            acc = tl.dot(p.to(v.dtype).to(tl.float32), v.to(tl.float32), acc)
        else:
            acc = tl.dot(p.to(v.dtype), v, acc)
        # the row sums last: fewer values live across the MMAs
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _attn_fwd_tma(desc_q, desc_k, desc_v, O, qk_scale, stride_ob, stride_oh, stride_om, H, SQ, SK,
                  D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                  EVEN_M: tl.constexpr, EVEN_N: tl.constexpr, WARP_SPEC: tl.constexpr, FLAT: tl.constexpr,
                  DOT_FP32: tl.constexpr):
    # Causal programs run heaviest first (the last query blocks see the most keys).
    if CAUSAL:
        pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)

    row_k = pid_bh * SK  # the head's first row in the (B·H·Sk, D) view (FLAT)
    # -- the Q tile, once (rows past Sq read zeros, or the next head's rows when FLAT: their
    # outputs are not stored) --
    if FLAT:
        q = desc_q.load([pid_bh * SQ + start_m, 0])
    else:
        q = desc_q.load([b, h, start_m, 0]).reshape(BLOCK_M, D)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)

    if CAUSAL:
        end = tl.minimum(start_m + BLOCK_M, SK)
    else:
        end = SK
    if WARP_SPEC:
        # One key loop, masked in every block where a mask is needed at all: Triton 3.6's Hopper
        # warp-specialisation pass takes a kernel with one loop (a second loop after it, or a
        # branch inside it, makes it fail or give up: checked by compiling for sm_90).
        acc, l_i, m_i = _key_blocks(acc, l_i, m_i, q, desc_k, desc_v, b, h, row_k, 0, end, offs_m, SK, qk_scale,
                                    D=D, BLOCK_N=BLOCK_N, MASK_N=not EVEN_N, CAUSAL_MASK=CAUSAL, WARP_SPEC=True, FLAT=FLAT,
                                    DOT_FP32=DOT_FP32)
    else:
        # -- phase 1: key blocks every row of this tile sees in full: no masks --
        full_end = (SK // BLOCK_N) * BLOCK_N
        if CAUSAL:
            full_end = tl.minimum(full_end, start_m)
        acc, l_i, m_i = _key_blocks(acc, l_i, m_i, q, desc_k, desc_v, b, h, row_k, 0, full_end, offs_m, SK, qk_scale,
                                    D=D, BLOCK_N=BLOCK_N, MASK_N=False, CAUSAL_MASK=False, WARP_SPEC=False, FLAT=FLAT,
                                    DOT_FP32=DOT_FP32)
        # -- phase 2: the causal diagonal and the key tail, masked (one or two blocks) --
        if CAUSAL or not EVEN_N:
            acc, l_i, m_i = _key_blocks(acc, l_i, m_i, q, desc_k, desc_v, b, h, row_k, full_end, end, offs_m, SK, qk_scale,
                                        D=D, BLOCK_N=BLOCK_N, MASK_N=not EVEN_N, CAUSAL_MASK=CAUSAL, WARP_SPEC=False, FLAT=FLAT,
                                        DOT_FP32=DOT_FP32)

    # -- epilogue: normalise and store, rows past Sq left alone. A plain store: a descriptor store
    # here makes the warp-specialisation pass fail (its consumers each own half the rows) --
    out = (acc / l_i[:, None]).to(O.dtype.element_ty)
    o_ptrs = O + b.to(tl.int64) * stride_ob + h.to(tl.int64) * stride_oh + offs_m[:, None] * stride_om + tl.arange(0, D)[None, :]
    if EVEN_M:
        tl.store(o_ptrs, out)
    else:
        tl.store(o_ptrs, out, mask=(offs_m < SQ)[:, None])


def _descriptor(t, rows, d, flat):
    if flat:  # the (B·H·S, D) matrix, boxes of (rows, D)
        return TensorDescriptor(t, [t.shape[0] * t.shape[1] * t.shape[2], d], [d, 1], [rows, d])
    return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, 1, rows, d])


def launch(q, k, v, out, causal, config, compiled=None):
    """Runs the kernel with one (BLOCK_M, BLOCK_N, num_warps, num_stages, warp_specialize[, flat])
    tiling; flat (2-D descriptors over (B·H·S, D)) needs contiguous q, k and v.
    `compiled`: a dict that, when given, receives the Triton CompiledKernel launched under "kernel"
    (None under TRITON_INTERPRET=1); the harness records its registers, spills and shared memory
    (kernelgate_harness/compiled.py)."""
    block_m, block_n, warps, stages, warp_spec = config[:5]
    flat = len(config) > 5 and bool(config[5])
    B, H, SQ, D = q.shape
    if out.shape != q.shape or out.dtype != q.dtype or out.stride(-1) != 1:
        raise ValueError(f"out must be like q {tuple(q.shape)} {q.dtype} with a contiguous head dim, got {tuple(out.shape)} {out.dtype} strides {out.stride()}")
    if flat and not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        raise ValueError(f"a flat tiling {tuple(config)} needs contiguous q, k, v (strides {q.stride()}, {k.stride()}, {v.stride()})")
    SK = k.shape[2]
    grid = (triton.cdiv(SQ, block_m), B * H)
    kernel = _attn_fwd_tma[grid](
        _descriptor(q, block_m, D, flat), _descriptor(k, block_n, D, flat), _descriptor(v, block_n, D, flat), out,
        (1.0 / math.sqrt(D)) * LOG2E, out.stride(0), out.stride(1), out.stride(2), H, SQ, SK,
        D=D, BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, EVEN_M=SQ % block_m == 0, EVEN_N=SK % block_n == 0,
        WARP_SPEC=warp_spec, FLAT=flat, DOT_FP32=INTERPRET and q.dtype == torch.bfloat16,
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
    if q.dtype not in (torch.float16, torch.bfloat16) or k.dtype != q.dtype or v.dtype != q.dtype:
        return f"dtypes q {q.dtype}, k {k.dtype}, v {v.dtype} not supported (fp16 or bf16, all three alike)"
    if 0 in q.shape or k.shape[2] == 0:
        return f"empty shapes q {tuple(q.shape)}, k {tuple(k.shape)}"
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t.stride(-1) != 1:
            return f"{name}: the head dim must be contiguous (strides {t.stride()})"
        # TMA: a 16-byte aligned base and 16-byte multiples for every stride but the last
        if t.data_ptr() % 16 or any((s * t.element_size()) % 16 for s in t.stride()[:-1]):
            return f"{name}: a tensor descriptor needs a 16-byte aligned base and strides (strides {t.stride()}, {t.element_size()}-byte elements)"
    return None


def _reference_slices(q, k, v, causal, slices):
    """fp32 attention of a few (b, h) slices, for the tuner's check of its candidates."""
    refs = []
    for b, h in slices:
        qs, ks, vs = q[b, h].float(), k[b, h].float(), v[b, h].float()
        s = (qs @ ks.T) / math.sqrt(q.shape[-1])
        if causal:
            rows = torch.arange(qs.shape[0], device=q.device)[:, None]
            s = s.masked_fill(torch.arange(ks.shape[0], device=q.device)[None, :] > rows, float("-inf"))
        refs.append(torch.softmax(s, dim=-1) @ vs)
    return refs


def _first_line(e):
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def _check_candidate(q, k, v, out, causal, cfg, slices, refs):
    """None if the tiling runs and its output matches the fp32 reference slices, else why not."""
    try:
        out.fill_(float("nan"))
        launch(q, k, v, out, causal, cfg)
        if out.is_cuda:
            torch.cuda.synchronize()  # a launch error surfaces here, inside the try
    except Exception as e:  # a tiling the compiler refuses (shared memory, a failing pass) is dropped, not fatal
        return _first_line(e)
    errs = [float(torch.linalg.vector_norm(out[b, h].float() - ref) / torch.linalg.vector_norm(ref)) for (b, h), ref in zip(slices, refs, strict=True)]
    worst = max(errs, key=lambda e: math.inf if math.isnan(e) else e)
    if not worst <= TUNE_CHECK_REL_L2:  # NaN fails too
        return f"output off the fp32 reference on (b, h) {slices}: rel L2 {worst:.2e} > {TUNE_CHECK_REL_L2:.0e}"
    return None


# Each candidate first runs in a child process, on one (b, h) of the case's shape, with this many
# seconds from its start (compilation included: 1-2.5 s a tiling here) to its result: a kernel
# that never finishes (a deadlocked pipeline of the experimental warp specialisation, say) then
# costs a killed child and that tiling, not the harness's worker, whose case has 120 s in all
# (kernel.yml timeout_s). On the H100 (push run of 936b6f2, 2026-11-24) this variant's tuning did
# not finish in 7 minutes; the cause was not seen. The child lives on between cases (its start,
# torch and a CUDA context, is paid once a worker) and dies with its parent; its compilations
# land in Triton's cache, so the tuning after it compiles nothing again.
PROBE_TIMEOUT_S = 20
# What the child runs (killed with its parent: jsonl_child.DIE_WITH_PARENT): one JSON spec a line
# on stdin; a JSON line before and after each tiling, then {"end": true}.
PROBE_CHILD = r"""
import json, sys
import torch
from kernels.attention import triton_fa3
for request in sys.stdin:
    spec = json.loads(request)
    dtype = getattr(torch, spec["dtype"])
    g = torch.Generator(device=spec["device"]).manual_seed(0)
    q = torch.randn(1, 1, spec["SQ"], spec["D"], generator=g, device=spec["device"], dtype=dtype)
    k = torch.randn(1, 1, spec["SK"], spec["D"], generator=g, device=spec["device"], dtype=dtype)
    v = torch.randn(1, 1, spec["SK"], spec["D"], generator=g, device=spec["device"], dtype=dtype)
    refs = triton_fa3._reference_slices(q, k, v, spec["causal"], [(0, 0)])
    out = torch.empty_like(q)
    for cfg in spec["tilings"]:
        cfg = tuple(cfg)
        print(json.dumps({"start": cfg}), flush=True)
        why = triton_fa3._check_candidate(q, k, v, out, spec["causal"], cfg, [(0, 0)], refs)
        print(json.dumps({"done": cfg, "why": why}), flush=True)
    print(json.dumps({"end": True}), flush=True)
"""
_child = None  # the probe child of this process (a harness JsonLinesChild), started on first use
# Tilings that hung in this process: {tiling: the case it hung on}. A hang is the pipeline's, not
# the data's, so such a tiling is not tried again on later cases (each try would cost
# PROBE_TIMEOUT_S): at most one time-out a tiling a worker.
_hung = {}


def _stop_child():
    global _child
    if _child is not None:
        _child.stop()
        _child = None


def _ended_text(e, started):
    """Why the probe child stopped answering, in the words of a tiling's verdict."""
    if e.how == "timeout":
        what = "its start on one (b, h) in a child process" if started else "the probe process's last sign of life"
        text = f"no result within {PROBE_TIMEOUT_S} s of {what} (killed)"
    else:
        text = "the probe process had ended" if e.how == "unwritable" else "the probe process ended"
        text += f" (exit code {e.exit_code})"
    if e.last_words and e.exit_code not in (0, -9):
        text += f": {e.last_words[:300]}"
    return text


def _probe(q, k, causal, tilings):
    """{tiling: None if it ran right on one (b, h) of these shapes in the probe child, else why
    not}. A tiling with no result within PROBE_TIMEOUT_S of its start has the child killed, and
    the tilings after it are tried in a new one; a child that ends, or stays silent that long
    between tilings, leaves the rest refused with what it said. The child is supervised by the
    harness (kernelgate_harness.jsonl_child)."""
    global _child
    verdicts = {t: f"not tried: it gave no result on {_hung[t]} earlier in this process" for t in map(tuple, tilings) if t in _hung}
    pending = [tuple(t) for t in tilings if tuple(t) not in verdicts]
    where = f"{str(q.dtype).removeprefix('torch.')} Sq {q.shape[2]} Sk {k.shape[2]} D {q.shape[3]}{' causal' if causal else ''}"
    while pending:
        if _child is None:
            _child = JsonLinesChild(PROBE_CHILD)
        spec = {"dtype": str(q.dtype).removeprefix("torch."), "device": str(q.device), "SQ": q.shape[2], "SK": k.shape[2], "D": q.shape[3],
                "causal": causal, "tilings": pending}
        on = {"started": None}

        def answer(msg, on=on):
            if "start" in msg:
                on["started"] = tuple(msg["start"])
                return ALIVE
            if "done" in msg:
                verdicts[tuple(msg["done"])], on["started"] = msg["why"], None
                return ALIVE
            return DONE if "end" in msg else None

        stopped = _child.request(spec, PROBE_TIMEOUT_S, answer)
        ended, started = _ended_text(stopped, on["started"]) if stopped else None, on["started"]
        rest = [t for t in pending if t not in verdicts]
        if ended and started is not None:
            verdicts[started] = ended  # the tiling it was on
            if ended.startswith("no result"):
                _hung[started] = where
        elif ended and rest:
            verdicts.update(dict.fromkeys(rest, f"{ended} before trying it"))
        pending = [t for t in rest if t not in verdicts]
    return verdicts


def tune(q, k, v, causal, interpret):
    """The fastest candidate tiling for these shapes (timed with triton.testing.do_bench, outside
    any measurement), among those that finish and are right on one (b, h) in a child process
    (_probe), then compile, launch and agree with an fp32 reference on two (b, h) slices here;
    the first candidate untuned for tiny cases; the small tiling on the CPU interpreter. Returns
    (config, {config: ms}), the table empty when nothing was timed."""
    if interpret:
        return INTERPRET_CONFIG, {}
    B, H, SQ, D = q.shape
    if B * H * SQ * k.shape[2] < TUNE_MIN_SCORES:
        return CONFIGS[D][0], {}
    slices = sorted({(0, 0), (B - 1, H - 1)})
    refs = _reference_slices(q, k, v, causal, slices)
    out = torch.empty_like(q)
    times, dropped = {}, {}
    # a GPU kernel can hang; tensors on the CPU (the tests' stand-in launches) have none to probe
    tilings = candidates(D)
    probed = _probe(q, k, causal, tilings) if q.is_cuda else {}
    for cfg in tilings:
        why = probed.get(cfg) or _check_candidate(q, k, v, out, causal, cfg, slices, refs)
        if why:
            dropped[cfg] = why
            print(f"[kernelgate tuning] triton_fa3 tiling {cfg} dropped: {why}", file=sys.stderr, flush=True)
            continue
        times[cfg] = triton.testing.do_bench(lambda cfg=cfg: launch(q, k, v, out, causal, cfg), warmup=10, rep=40)
    if not times:
        raise RuntimeError("no tiling of triton_fa3 runs correctly here: " + "; ".join(f"{c}: {w}" for c, w in dropped.items()))
    return min(times, key=times.get), times
