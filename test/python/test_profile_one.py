"""python/kernelgate_harness/profile_one.py (one launch of a variant between the CUDA profiler's start and
stop, for ncu in kernelgate deep) and the planted out-of-bounds write of the planted-fault module,
on the CPU."""

import subprocess
import sys

from conftest import FIXTURE_KERNELS, HAS_GPU, REPO, harness_env

OOB_SKIP = "oob_store plants an out-of-bounds write for compute-sanitizer: GPU only (under the interpreter it would write into the host's memory)"


def profile(*args):
    cmd = [sys.executable, "-m", "kernelgate_harness.profile_one", "--kernels", FIXTURE_KERNELS, "--kernel", "faulty", *args]
    return subprocess.run(cmd, cwd=REPO, env=harness_env(), capture_output=True, text=True, timeout=300)


def test_runs_one_variant_on_one_case():
    r = profile("--variant", "good", "--case-params", "dtype=fp32,n=100", "--device", "cpu")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[kernelgate profile] faulty/good dtype=fp32,n=100: ran once between the profiler's start and stop"


def test_a_variant_that_cannot_run_the_case_is_said_and_exits_3():
    r = profile("--variant", "oob_store", "--case-params", "dtype=fp32,n=100", "--device", "cpu")
    assert r.returncode == 3
    assert r.stdout.strip() == f"[kernelgate profile] faulty/oob_store dtype=fp32,n=100: skipped: {OOB_SKIP}"


def test_an_unknown_variant_or_case_is_named():
    r = profile("--variant", "nope", "--case-params", "n=64", "--device", "cpu")
    assert r.returncode == 2
    assert r.stderr.strip().endswith("faulty/kernel.yml: no variant nope")
    r = profile("--variant", "good", "--case-params", "n=65", "--device", "cpu")
    assert r.returncode == 2
    assert r.stderr.strip().endswith("faulty/kernel.yml: no case has n=65")
    r = profile("--variant", "oob_store", "--case-params", "n=64", "--device", "cpu")
    assert r.returncode == 2
    assert r.stderr.strip().endswith("faulty/kernel.yml: variant oob_store does not run case dtype=fp32,n=64 (its only: {'n': 100})")


def test_the_planted_out_of_bounds_write_is_gpu_only_and_right_valued(run_harness):
    r = run_harness("--variants", "good,oob_store", "--no-timing", "--seeds", "1", kernels=FIXTURE_KERNELS)
    c = r.case("oob_store", "dtype=fp32,n=100")
    if HAS_GPU:
        # Its values are right: only compute-sanitizer sees the stray write (kernelgate deep).
        assert c["status"] == "ok" and c["correctness"]["status"] == "PASS"
    else:
        assert c["status"] == "skipped" and c["reason"] == OOB_SKIP
    assert [x["case"] for x in r.doc["cases"] if x["variant"] == "oob_store"] == ["dtype=fp32,n=100"]
