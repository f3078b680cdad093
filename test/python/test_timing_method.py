"""The timing method of a case is decided from its work, never from a timing: the recorded H200
A/A pair (docs/gpu-runs.md) showed a decision from a measured duration flipping between runs."""
import importlib

import pytest

from kernelgate_harness.timing import times_as_graph


def work_of(kernel, params):
    return importlib.import_module(f"kernels.{kernel}.bench").work(params)


@pytest.mark.parametrize(
    "kernel, params, graph",
    [
        # the headline cases run for milliseconds: single launches, launch overhead negligible
        ("attention", {"dtype": "fp16", "B": 16, "H": 96, "S": 4096, "D": 128, "causal": False}, False),
        ("attention", {"dtype": "bf16", "B": 16, "H": 96, "S": 4096, "D": 64, "causal": True}, False),
        ("bsr_gemm", {"dtype": "fp16", "M": 8192, "N": 8192, "K": 8192, "block": 128, "topk": 16}, False),
        # the tails that flipped between the recorded runs: always graphs now
        ("attention", {"dtype": "fp16", "B": 2, "H": 3, "S": 77, "D": 128, "causal": True}, True),
        ("attention", {"dtype": "bf16", "B": 2, "H": 3, "S": 1000, "D": 64, "causal": False}, True),
        ("bsr_gemm", {"dtype": "fp16", "M": 1024, "N": 1000, "K": 2048, "block": 128, "topk": 4}, True),
    ],
)
def test_the_method_follows_the_work(kernel, params, graph):
    assert times_as_graph(work_of(kernel, params)) is graph



def test_the_graph_launch_count_follows_the_work():
    from kernelgate_harness.timing import graph_launches

    tiny = work_of("attention", {"dtype": "fp16", "B": 2, "H": 3, "S": 77, "D": 128, "causal": True})
    tail = work_of("attention", {"dtype": "fp16", "B": 2, "H": 3, "S": 1000, "D": 128, "causal": False})
    # a few µs of work: the 5 µs floor of the estimate, so 200 launches (1 ms at 5 µs each)
    assert graph_launches(tiny) == 200
    # 3.1 GFLOP: a 3.1 µs roofline floor, estimated at 4x that: 81 launches
    assert graph_launches(tail) == 81
    # the same work gives the same count, whatever a timing would have said
    assert graph_launches(dict(tail)) == graph_launches(tail)
