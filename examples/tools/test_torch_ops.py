"""pytest-benchmark suite of issue 31's recordings (examples/tools/README.md): four torch GPU ops.

pytest-benchmark times the host: every timed call ends with torch.cuda.synchronize(), so a call's
time is the GPU's work plus one launch and one synchronisation. Each test warms up once before
timing (module load, allocator). Work per call goes into extra_info (flops, bytes), where kernelgate
reads it.

- test_copy: dst.copy_(src), 128 Mi float32
- test_saxpy: z = y + 2 x, 128 Mi float32
- test_sum: x.sum(), 128 Mi float32
- test_mul_chain: LAUNCHES out-of-place multiplies of a 16 Mi float32 tensor in a row; the slowed
  test of the head runs: KG_SLOW_PCT=2.5 gives 205 launches instead of 200, the same kernel a
  fraction more times. The slowdown the GPU shows is measured, not assumed.

Run only on a CUDA GPU: every test is skipped, with the reason, elsewhere.
"""

import os

import pytest
import torch

N = 128 << 20
CHAIN_N = 16 << 20
BASE_LAUNCHES = 200

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


def chain_launches() -> int:
    """BASE_LAUNCHES raised by KG_SLOW_PCT percent (rounded); unset or empty is the base."""
    raw = os.environ.get("KG_SLOW_PCT", "")
    if raw == "":
        return BASE_LAUNCHES
    try:
        pct = float(raw)
    except ValueError:
        pct = float("nan")
    if not 0.0 <= pct <= 100.0:
        raise ValueError(f'KG_SLOW_PCT must be a number of percent in [0, 100] (got "{raw}")')
    return round(BASE_LAUNCHES * (1.0 + pct / 100.0))


def timed(benchmark, fn):
    """Warm up once, then time fn followed by a synchronisation."""

    def call():
        fn()
        torch.cuda.synchronize()

    call()
    return benchmark(call)


def test_copy(benchmark):
    src = torch.ones(N, device="cuda")
    dst = torch.empty_like(src)
    benchmark.extra_info["bytes"] = 2 * 4 * N
    timed(benchmark, lambda: dst.copy_(src))
    assert torch.equal(dst, src)


def test_saxpy(benchmark):
    x = torch.ones(N, device="cuda")
    y = torch.zeros(N, device="cuda")
    z = torch.empty_like(x)
    benchmark.extra_info["bytes"] = 3 * 4 * N
    benchmark.extra_info["flops"] = 2 * N
    timed(benchmark, lambda: torch.add(y, x, alpha=2.0, out=z))
    assert torch.equal(z, torch.full_like(z, 2.0))


def test_sum(benchmark):
    x = torch.ones(N, device="cuda")
    benchmark.extra_info["bytes"] = 4 * N
    benchmark.extra_info["flops"] = N
    out = torch.empty((), device="cuda")
    timed(benchmark, lambda: torch.sum(x, 0, out=out))
    assert abs(float(out) - N) <= 1e-6 * N


def test_mul_chain(benchmark):
    launches = chain_launches()
    x = torch.ones(CHAIN_N, device="cuda")
    y = torch.empty_like(x)
    benchmark.extra_info["launches"] = launches
    benchmark.extra_info["bytes"] = launches * 2 * 4 * CHAIN_N
    benchmark.extra_info["flops"] = launches * CHAIN_N

    def chain():
        for _ in range(launches):
            torch.mul(x, 0.999, out=y)

    timed(benchmark, chain)
    assert torch.allclose(y, torch.full_like(y, 0.999))
