"""Calibration kernel: dense cuBLAS GEMM through torch and a device-to-device copy. Their rates are
the run's measured ceilings (environment.ceilings) that other kernels' results are judged against."""

import torch

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
ORACLE = "fp32 torch matmul (TF32 off) / exact copy"


def make_inputs(params, seed, device):
    g = torch.Generator(device=device).manual_seed(seed)
    dtype = DTYPES[params["dtype"]]
    if params["op"] == "copy":
        n = params["MiB"] * (1 << 20) // torch.finfo(dtype).bits * 8
        return {"src": torch.randn(n, generator=g, device=device, dtype=dtype)}
    m, n, k = params["M"], params["N"], params["K"]
    return {
        "a": torch.randn(m, k, generator=g, device=device, dtype=dtype),
        "b": torch.randn(k, n, generator=g, device=device, dtype=dtype),
    }


def output_like(inputs, params):
    if params["op"] == "copy":
        return torch.empty_like(inputs["src"])
    a, b = inputs["a"], inputs["b"]
    return torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=a.dtype)


def oracle(inputs, params):
    if params["op"] == "copy":
        return inputs["src"].float()
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return inputs["a"].float() @ inputs["b"].float()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32


def work(params):
    size = torch.finfo(DTYPES[params["dtype"]]).bits // 8
    if params["op"] == "copy":
        nbytes = params["MiB"] * (1 << 20)
        return {"flops": 0.0, "bytes": 2.0 * nbytes, "note": "bytes read + bytes written"}
    m, n, k = params["M"], params["N"], params["K"]
    return {"flops": 2.0 * m * n * k, "bytes": float((m * k + k * n + m * n) * size), "note": "2·M·N·K"}


def _cublas(params, ctx):
    def run(inputs, out):
        return torch.matmul(inputs["a"], inputs["b"], out=out)

    return run


def _copy(params, ctx):
    def run(inputs, out):
        return out.copy_(inputs["src"])

    return run


VARIANTS = {"cublas": _cublas, "torch_copy": _copy}
