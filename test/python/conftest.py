"""Shared helpers for the harness's tests: run `python -m kernelgate_harness` as the CI does, in a
subprocess, and read back the results document it wrote."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPO_KERNELS = os.path.join(REPO, "kernels")
FIXTURE_KERNELS = os.path.join(os.path.dirname(__file__), "fixtures", "kernels")
# A kernel with stress inputs (test_stress_inputs.py), apart so that runs over FIXTURE_KERNELS keep
# their one kernel.
STRESS_KERNELS = os.path.join(os.path.dirname(__file__), "fixtures", "stress_kernels")

# Some CPUs advertise AMX that the VM does not enable; oneDNN then dies of SIGILL in bf16 matmuls.
# Capping its instruction set keeps bf16 on AVX-512 (same results, no AMX).
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")

HAS_GPU = False
try:
    import torch

    HAS_GPU = torch.cuda.is_available()
except ImportError:
    pass


def harness_env(extra=None, interpret=True):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(REPO, "python"), REPO, os.path.join(FIXTURE_KERNELS, "faulty"), os.path.join(STRESS_KERNELS, "stressed"), env.get("PYTHONPATH", "")],
    )
    env["PYTHONUNBUFFERED"] = "1"
    if interpret and not HAS_GPU:
        env["TRITON_INTERPRET"] = "1"
    env.pop("KERNELGATE_FAULT", None)
    env.update(extra or {})
    return env


class HarnessRun:
    def __init__(self, proc, out_path):
        self.proc = proc
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.returncode = proc.returncode
        self.doc = None
        if os.path.exists(out_path):
            with open(out_path) as f:
                self.doc = json.load(f)

    def case(self, variant, case_id=None, kernel=None):
        hits = [
            c
            for c in self.doc["cases"]
            if c["variant"] == variant and (case_id is None or c["case"] == case_id) and (kernel is None or c["kernel"] == kernel)
        ]
        assert len(hits) == 1, f"expected one case for {variant} {case_id}, found {len(hits)}"
        return hits[0]

    def lines(self):
        return [line for line in self.stdout.splitlines() if line.startswith("[kernelgate]")]


@pytest.fixture
def run_harness(tmp_path):
    """run_harness(*args, kernels=..., env=...) -> HarnessRun; fails the test on a non-zero exit."""

    def run(*args, kernels=REPO_KERNELS, env=None, check=True, timeout=600):
        out = tmp_path / "results.json"
        cmd = [sys.executable, "-m", "kernelgate_harness", "--kernels", kernels, "--out", str(out), *args]
        proc = subprocess.run(cmd, cwd=REPO, env=harness_env(env), capture_output=True, text=True, timeout=timeout)
        if check:
            assert proc.returncode == 0, f"harness exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
        return HarnessRun(proc, out)

    return run


def without_seconds(records):
    """Case or tail records without correctness.seconds, the wall time each variant's checks took:
    what two runs of the same work may differ in."""
    return [{k: ({n: x for n, x in v.items() if n != "seconds"} if k == "correctness" else v) for k, v in r.items()} for r in records]
