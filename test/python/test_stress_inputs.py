"""Stress inputs (docs/kernel-modules.md `stress_inputs`): values at the edges of their range that
random seeds do not reach are verified like a seed, named in the failure, and kept apart from the
case's error norms."""

import math
import os

import pytest

from conftest import STRESS_KERNELS, harness_env

N64 = "dtype=fp32,n=64"


def test_a_fault_that_only_stress_inputs_reach_fails_and_is_named(run_harness):
    r = run_harness("--no-timing", "--device", "cpu", "--seeds", "3", kernels=STRESS_KERNELS)
    good, bad = r.case("good", N64), r.case("saturating", N64)
    assert good["status"] == "ok"
    assert [s["name"] for s in good["correctness"]["stress"]] == ["large", "zeros"]
    assert bad["status"] == "fail"
    msg = bad["correctness"]["message"]
    assert msg.startswith("stress input large: rel_l2 ")
    assert msg.endswith(" > tolerance 1.0e-05")
    # Right on every seed: the fault is not in the seeds' error norm, which drift is judged on.
    assert bad["correctness"]["rel_l2"] < 1e-6
    large = next(s for s in bad["correctness"]["stress"] if s["name"] == "large")
    assert large["rel_l2"] > 0.1


def test_the_attention_module_stresses_small_cases_only():
    pytest.importorskip("torch")
    from kernels.attention import bench

    small = {"dtype": "fp16", "B": 1, "H": 2, "S": 64, "D": 64, "causal": True}
    sets = bench.stress_inputs(small, "cpu")
    assert sorted(sets) == ["large logits", "uniform"]
    q, k = sets["large logits"]["q"].float(), sets["large logits"]["k"].float()
    logits = (q @ k.transpose(-1, -2)) / math.sqrt(64)
    # Row maxima beyond exp()'s fp32 range (88.7) unless the running maximum is subtracted.
    assert logits.abs().max().item() > 89
    assert sets["uniform"]["q"].abs().max().item() == 0
    large = {"dtype": "fp16", "B": 16, "H": 96, "S": 4096, "D": 128, "causal": False}
    assert bench.stress_inputs(large, "cpu") == {}


@pytest.mark.parametrize("scale, verdict", [(1e3, "fail"), (1e6, "ok")])
def test_a_module_may_check_a_stress_input_against_a_multiple_of_its_tolerance(run_harness, tmp_path, scale, verdict):
    # The same module with STRESS_TOLERANCE_SCALE = {"large": scale}: the saturating variant's error
    # on `large` (rel_l2 > 0.1) fails 1e-5 x 1e3 and passes 1e-5 x 1e6; the seeds keep 1e-5.
    kernels = tmp_path / "kernels"
    os.makedirs(kernels / "scaled")
    with open(os.path.join(STRESS_KERNELS, "stressed", "kernel.yml")) as f:
        manifest = f.read().replace("name: stressed", "name: scaled").replace("module: stressed_bench", "module: scaled_bench")
    (kernels / "scaled" / "kernel.yml").write_text(manifest)
    (tmp_path / "scaled_bench.py").write_text(f"from stressed_bench import *  # noqa: F401,F403\n\nSTRESS_TOLERANCE_SCALE = {{'large': {scale!r}}}\n")
    path = os.pathsep.join([str(tmp_path), harness_env()["PYTHONPATH"]])
    r = run_harness("--no-timing", "--device", "cpu", "--seeds", "2", kernels=str(kernels), env={"PYTHONPATH": path})
    bad = r.case("saturating", N64)
    assert bad["status"] == verdict
    assert bad["correctness"]["tol_rel_l2"] == 1e-5
    if verdict == "fail":
        assert bad["correctness"]["message"].startswith("stress input large: rel_l2 ")
        assert bad["correctness"]["message"].endswith(" > tolerance 1.0e-02")
    assert r.case("good", N64)["status"] == "ok"
