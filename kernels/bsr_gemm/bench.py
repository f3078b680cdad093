"""The bsr_gemm kernel's module for the harness (docs/kernel-modules.md): the shared BSR layout,
the fp32 oracle on the dense masked matrix, the useful-FLOP formula, and the variants (Triton,
dense cuBLAS on the masked matrix, torch's bsr_dense_mm, CUDA ones)."""


import torch

from kernelgate_harness import Unsupported
from kernels.bsr_gemm import cuda_variants, triton_bsr
from kernels.common import tuning

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
ORACLE = "fp32 torch matmul (TF32 off) of the dense masked A"


def _dims(params):
    bs = params["block"]
    M, N, K, topk = params["M"], params["N"], params["K"], params["topk"]
    if M % bs or K % bs:
        raise ValueError(f"M={M} and K={K} must be multiples of block={bs}")
    if topk > K // bs:
        raise ValueError(f"topk={topk} exceeds the {K // bs} blocks in a block row")
    return M, N, K, bs, topk


def make_inputs(params, seed, device):
    """The layout every variant shares:
    a_values (M/bs, topk, bs, bs) contiguous; a_cols (M/bs, topk) int32, sorted, distinct;
    b (K, N) row-major; plus a_dense (M, K) with zeros outside the blocks (for cuBLAS) and a_bsr,
    a torch sparse BSR tensor over the same values (for torch's bsr_dense_mm)."""
    M, N, K, bs, topk = _dims(params)
    dtype = DTYPES[params["dtype"]]
    g = torch.Generator(device=device).manual_seed(seed)
    mb, kb = M // bs, K // bs
    a_cols = torch.rand(mb, kb, generator=g, device=device).argsort(dim=1)[:, :topk].sort(dim=1).values.to(torch.int32)
    a_values = torch.randn(mb, topk, bs, bs, generator=g, device=device, dtype=dtype)
    b = torch.randn(K, N, generator=g, device=device, dtype=dtype)
    blocks = torch.zeros(mb, kb, bs, bs, device=device, dtype=dtype)
    blocks[torch.arange(mb, device=device)[:, None], a_cols.long()] = a_values
    a_dense = blocks.permute(0, 2, 1, 3).reshape(M, K)
    del blocks
    crow = torch.arange(0, mb + 1, device=device, dtype=torch.int32) * topk
    a_bsr = torch.sparse_bsr_tensor(crow, a_cols.reshape(-1), a_values.reshape(mb * topk, bs, bs), size=(M, K), check_invariants=False)
    return {"a_values": a_values, "a_cols": a_cols, "b": b, "a_dense": a_dense, "a_bsr": a_bsr}


# The `large` stress input scales A's blocks and B alike so the output's spread is about this
# (fp16 holds 65504): partial sums, an epilogue or a conversion that overflows or saturates
# before the end shows, which N(0, 1) inputs (output spread √(topk·bs), 23-45) never reach.
STRESS_OUTPUT_SD = 4096.0


def stress_inputs(params, device):
    """`large`: the seed-0 layout with A's blocks and B scaled by √(4096 / √(topk·bs))."""
    _, _, _, bs, topk = _dims(params)
    scale = (STRESS_OUTPUT_SD / (topk * bs) ** 0.5) ** 0.5
    x = make_inputs(params, 1_000_777, device)
    # a_bsr's values are a view of a_values: scaled with it.
    for name in ("a_values", "a_dense", "b"):
        x[name].mul_(scale)
    return {"large": x}


def output_like(inputs, params):
    return torch.empty(params["M"], params["N"], device=inputs["b"].device, dtype=inputs["b"].dtype)


def oracle(inputs, params):
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return inputs["a_dense"].float() @ inputs["b"].float()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


def work(params):
    M, N, K, bs, topk = _dims(params)
    size = torch.finfo(DTYPES[params["dtype"]]).bits // 8
    mb = M // bs
    a_bytes = mb * topk * bs * bs * size + mb * topk * 4
    return {
        "flops": 2.0 * mb * topk * bs * bs * N,
        "bytes": float(a_bytes + K * N * size + M * N * size),
        "note": "useful FLOPs: 2·(M/bs)·topk·bs²·N, the non-zero blocks only",
    }


# -- variants ------------------------------------------------------------------------------------


def _triton_bsr(params, ctx):
    if ctx.device != "cuda" and not ctx.interpret:
        raise Unsupported("Triton needs a GPU, or TRITON_INTERPRET=1 on the CPU")
    probe = make_inputs(params, 12345, ctx.device)
    why = triton_bsr.check_layout(probe["a_values"], probe["a_cols"], probe["b"])
    if why:
        raise Unsupported(why)
    config, times_ms = tuning.remembered(
        triton_bsr, params, ctx.device, lambda probe=probe: triton_bsr.tune(probe["a_values"], probe["a_cols"], probe["b"], ctx.interpret)
    )
    del probe
    compiled = {}

    def run(inputs, out):
        return triton_bsr.launch(inputs["a_values"], inputs["a_cols"], inputs["b"], out, config, compiled)

    run.config = config
    run.config_times_ms = times_ms
    run.compiled_kernel = lambda: compiled.get("kernel")
    return run


def _cublas_dense(params, ctx):
    def run(inputs, out):
        return torch.matmul(inputs["a_dense"], inputs["b"], out=out)

    return run


def _torch_bsr_dense_mm(params, ctx):
    if ctx.device != "cuda":
        raise Unsupported("torch's bsr_dense_mm runs Triton kernels on CUDA only")
    if params["N"] % 16:
        raise Unsupported(f"torch's bsr_dense_mm needs N divisible by 16, got N={params['N']}")
    from torch.sparse._triton_ops import bsr_dense_mm

    def run(inputs, out):
        return bsr_dense_mm(inputs["a_bsr"], inputs["b"], out=out)

    return run


VARIANTS = {
    "triton_bsr": _triton_bsr,
    "cublas_dense": _cublas_dense,
    "torch_bsr_dense_mm": _torch_bsr_dense_mm,
}
VARIANTS.update(cuda_variants.VARIANTS)
