"""The planted faults of issue 34 (and the earlier ones) through the harness on an H100
(test/fixtures/recorded/faults-h100-run54: machine 18, NVIDIA H100 80GB HBM3, driver 580.159.04,
2026-11-26 10:01 UTC, harness d0959f8, `bash scripts/gpu-faults.sh OUTDIR`): each fault is named
for what it is, on the GPU path (graphs, persisting L2, the saved timer), and `good` beside them is
unharmed. The same module again on another H100 (faults-h100-run62: serial 1654123012150, 2026-11-26
15:43 UTC, the harness after issue 29's split of the worker and issue 33's compiled-kernel records,
69d9e41): every case's status as in run 54."""

import gzip
import json
import os

import pytest

from conftest import REPO

RECORDED = os.path.join(REPO, "test", "fixtures", "recorded")


@pytest.fixture(scope="module", params=["faults-h100-run54", "faults-h100-run62"])
def cases(request):
    with gzip.open(os.path.join(RECORDED, request.param, "results.json.gz"), "rt") as f:
        doc = json.load(f)
    return {(c["variant"], c["params"]["n"]): c for c in doc["cases"]}


def message(c):
    return (c.get("error") or {}).get("message") or (c.get("correctness") or {}).get("message") or c.get("reason") or ""


@pytest.mark.parametrize(
    "variant,status,kind,start",
    [
        ("timer_patch", "error", "tampering", "tampering: time.perf_counter, torch.cuda.Event.elapsed_time were replaced "
         "while timer_patch was verified (seed 0)"),
        ("stats_patch", "error", "tampering", "tampering: kernelgate_harness.stats.summarize, kernelgate_harness.timing.summarize "
         "were replaced during the set-up of stats_patch"),
        ("lazy_output", "fail", None, "seed 0: returned a faulty_bench._Lazy, a subclass of torch.Tensor"),
        ("aliased_output", "fail", None, "seed 0: its output shares memory with the output of its previous call"),
        ("memo_identity", "fail", None, "seed 0: cached result: after new values were written into the same input tensors the output is wrong"),
        ("memo_content", "fail", None, "seed 0: cached result: calls on input values it had just seen took"),
        ("graph_stale", "fail", None, "the CUDA graph's replay leaves 100 of the 200 output buffers its launches write in turn wrong"),
        ("race_rare", "fail", None, "seed 0: result moved between runs on the same inputs: a third run beside a load on another stream "
         "differs from the first in 1 of 2560 elements"),
        ("l2_persist", "error", "l2-persistence", "l2_persist set aside 6.25 MiB of L2 for persisting accesses (cudaLimitPersistingL2CacheSize)"),
        ("stale", "fail", None, "seed 0: cached result: after new values were written into the same input tensors the output is wrong"),
    ],
)
def test_each_fault_is_named_on_the_gpu(cases, variant, status, kind, start):
    c = cases[(variant, 64)]
    assert c["status"] == status, message(c)
    assert (c.get("error") or {}).get("kind") == kind
    assert message(c).startswith(start), message(c)


def test_work_after_return_is_caught(cases):
    assert "the output changed after the call returned (1040 of 2560" in message(cases[("thread_after_return", 64)])


def test_good_beside_them_is_unharmed_and_states_its_l2(cases):
    for n in (64, 100):
        good = cases[("good", n)]
        assert good["status"] == "ok" and good["correctness"]["status"] == "PASS"
        assert good["timing"]["l2_state"].startswith("warm: a CUDA graph's launches back to back")
