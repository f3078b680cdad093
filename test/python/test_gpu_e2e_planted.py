"""scripts/gpu-e2e.sh nightly-bisect plants a commit that makes attention/triton_fa2 launch its
kernel twice, by appending Python to kernels/attention/triton_fa2.py. The appended code must call
the module's `launch` as it is today: on the H100 (2026-11-26) a wrapper written for an older
signature made every triton_fa2 case an error ("launch() takes 6 positional arguments but 7 were
given") and the night showed a failure instead of a bisected slowdown."""

import inspect
import os
import re

import pytest

from conftest import REPO

pytest.importorskip("torch")
pytest.importorskip("triton")


def planted_code():
    with open(os.path.join(REPO, "scripts", "gpu-e2e.sh")) as f:
        script = f.read()
    body = script[script.index("planted_commits() {"):]
    return re.search(r"<<'PY'\n(.*?)\nPY\n", body, re.S).group(1)


def test_the_planted_commit_wraps_the_launch_of_today(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from kernels.attention import triton_fa2

    calls = []

    def launch(*args, **kwargs):
        inspect.signature(triton_fa2.launch).bind(*args, **kwargs)  # a TypeError as the harness would get
        calls.append(len(args))
        return "out"

    namespace = {"launch": launch}
    exec(planted_code(), namespace)
    params = list(inspect.signature(triton_fa2.launch).parameters)
    args = [object()] * len(params)
    assert namespace["launch"](*args) == "out"
    assert calls == [len(params), len(params)]
