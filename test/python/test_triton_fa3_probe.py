"""kernels/attention/triton_fa3.py's probe: each candidate tiling runs first in a child process, so
that a kernel which never finishes costs a killed child and that tiling, not the harness's worker.
The child is the real one under TRITON_INTERPRET=1, or a stand-in that hangs or dies on cue."""

import os

import pytest

from conftest import HAS_GPU

torch = pytest.importorskip("torch")

from kernels.attention import triton_fa3  # noqa: E402

DEVICE = "cuda" if HAS_GPU else "cpu"
A, B, C = (16, 16, 4, 1, False), (32, 16, 4, 1, True), (16, 32, 4, 1, False)
# A stand-in child: the real one's protocol (a JSON spec a line on stdin; a JSON line before and
# after each tiling, then the end), hanging or exiting on tiling B; it counts its requests.
STAND_IN = r"""
import json, sys, time
served = 0
for request in sys.stdin:
    served += 1
    for cfg in json.loads(request)["tilings"]:
        print("a library's own line", flush=True)
        print(json.dumps({"start": cfg}), flush=True)
        if cfg == [32, 16, 4, 1, True]:
            if %(hang)s:
                time.sleep(600)
            sys.stderr.write("compiling...\nRuntimeError: boom\n")
            sys.exit(3)
        print(json.dumps({"done": cfg, "why": None if served == 1 else f"request {served} of this child"}), flush=True)
    print(json.dumps({"end": True}), flush=True)
"""


@pytest.fixture(autouse=True)
def no_child_left(monkeypatch):
    monkeypatch.setattr(triton_fa3, "_hung", {})
    triton_fa3._stop_child()
    yield
    triton_fa3._stop_child()


def qk(SQ=37, SK=37, D=64):
    return torch.randn(1, 2, SQ, D, dtype=torch.float16, device=DEVICE), torch.randn(1, 2, SK, D, dtype=torch.float16, device=DEVICE)


@pytest.mark.skipif(not HAS_GPU and os.environ.get("TRITON_INTERPRET") != "1", reason="the real child runs the kernel on a GPU or under TRITON_INTERPRET=1")
def test_the_real_child_runs_each_tiling_and_finds_them_right():
    q, k = qk(37, 45)
    tilings = [triton_fa3.CONFIGS[64][0], triton_fa3.WARP_SPEC_CONFIGS[64][0]] if HAS_GPU else [A, B]
    assert triton_fa3._probe(q, k, True, tilings) == dict.fromkeys(tilings)
    child = triton_fa3._child.proc
    assert triton_fa3._probe(q, k, False, tilings[:1]) == dict.fromkeys(tilings[:1])
    assert triton_fa3._child.proc is child  # one child a process, case after case


def test_the_child_serves_case_after_case(monkeypatch):
    monkeypatch.setattr(triton_fa3, "PROBE_CHILD", STAND_IN % {"hang": "False"})
    assert triton_fa3._probe(*qk(), False, [A]) == {A: None}
    assert triton_fa3._probe(*qk(), False, [C]) == {C: "request 2 of this child"}


def test_a_tiling_that_hangs_is_killed_and_the_rest_tried_in_a_new_child(monkeypatch):
    monkeypatch.setattr(triton_fa3, "PROBE_CHILD", STAND_IN % {"hang": "True"})
    monkeypatch.setattr(triton_fa3, "PROBE_TIMEOUT_S", 2)
    assert triton_fa3._probe(*qk(), False, [A, B, C]) == {
        A: None,
        B: "no result within 2 s of its start on one (b, h) in a child process (killed)",
        C: None,  # a new child's first request
    }
    # later cases do not wait on it again
    assert triton_fa3._probe(*qk(SQ=64), True, [B, C]) == {
        B: "not tried: it gave no result on float16 Sq 37 Sk 37 D 64 earlier in this process",
        C: "request 2 of this child",
    }


def test_a_child_that_dies_during_a_tiling_refuses_that_one_with_its_last_words(monkeypatch):
    monkeypatch.setattr(triton_fa3, "PROBE_CHILD", STAND_IN % {"hang": "False"})
    assert triton_fa3._probe(*qk(), False, [B, A]) == {
        B: "the probe process ended (exit code 3): RuntimeError: boom",
        A: None,
    }


def test_a_child_that_cannot_start_refuses_every_tiling_with_its_error(monkeypatch):
    monkeypatch.setattr(triton_fa3, "PROBE_CHILD", "import kernels.attention.no_such_module\n")
    why = "the probe process ended (exit code 1): ModuleNotFoundError: No module named 'kernels.attention.no_such_module' before trying it"
    assert triton_fa3._probe(*qk(), False, [A, C]) == {A: why, C: why}


def test_a_child_silent_past_the_time_refuses_what_is_left(monkeypatch):
    monkeypatch.setattr(triton_fa3, "PROBE_CHILD", "import time\ntime.sleep(600)\n")
    monkeypatch.setattr(triton_fa3, "PROBE_TIMEOUT_S", 1)
    why = "no result within 1 s of the probe process's last sign of life (killed) before trying it"
    assert triton_fa3._probe(*qk(), False, [A, C]) == {A: why, C: why}
