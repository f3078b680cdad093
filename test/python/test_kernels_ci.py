"""Every Triton kernel on its manifest's ci_cases (tiny shapes, tails included), through the harness
as CI runs it: under TRITON_INTERPRET=1 on the CPU, or for real on a GPU."""

import pytest

from conftest import HAS_GPU, REPO_KERNELS
from kernelgate_harness.manifest import discover
from kernelgate_harness.validation import problem, validator

# Every kernel under kernels/ with a Triton candidate (role candidate, backend triton; a Triton
# reference such as torch's BSR kernel runs on CUDA only), and those variants: derived from the
# manifests, so a new Triton kernel is run here without editing this file.
TRITON = {m.name: [v["name"] for v in m.variants if v.get("backend") == "triton" and v.get("role") == "candidate"] for m in discover(REPO_KERNELS)}
TRITON = {k: names for k, names in TRITON.items() if names}
# The reference of each that runs on the CPU as well (the others pin CUDA backends or libraries).
CPU_REFERENCES = ["sdpa_default", "cublas_dense"]


@pytest.fixture(scope="module")
def ci_run(tmp_path_factory):
    import json
    import os
    import subprocess
    import sys

    from conftest import REPO, harness_env

    out = tmp_path_factory.mktemp("ci") / "results.json"
    cmd = [
        sys.executable, "-m", "kernelgate_harness", "--kernels", os.path.join(REPO, "kernels"), "--out", str(out), "--ci", "--only", ",".join(TRITON),
        "--variants", ",".join([*(v for names in TRITON.values() for v in names), *CPU_REFERENCES]), "--seeds", "2", "--no-timing",
    ]
    proc = subprocess.run(cmd, cwd=REPO, env=harness_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    with open(out) as f:
        return json.load(f), proc.stdout


def test_the_triton_kernels_are_found_each_with_a_cpu_reference():
    assert {"attention": ["triton_fa2"], "bsr_gemm": ["triton_bsr"]}.items() <= TRITON.items()
    for m in discover(REPO_KERNELS, list(TRITON)):
        assert [v["name"] for v in m.variants if v["name"] in CPU_REFERENCES], f"{m.name}: no variant of {CPU_REFERENCES}"


@pytest.mark.parametrize("kernel,variant", [(k, v) for k, names in TRITON.items() for v in names])
def test_triton_kernel_passes_every_ci_case(ci_run, kernel, variant):
    doc, _ = ci_run
    mine = [c for c in doc["cases"] if c["kernel"] == kernel and c["variant"] == variant]
    assert mine, f"no {kernel}/{variant} cases ran"
    bad = [(c["case"], c["status"], c.get("correctness", {}).get("message") or c.get("error", {}).get("message")) for c in mine if c["status"] != "ok"]
    assert bad == []
    for c in mine:
        corr = c["correctness"]
        assert corr["status"] == "PASS" and corr["unwritten_count"] == 0 and corr["nan_count"] == 0
        assert corr["repeat_max_diff"] == 0.0
        assert corr["rel_l2"] <= corr["tol_rel_l2"]


def test_ci_cases_include_tails(ci_run):
    doc, _ = ci_run
    attn = {c["case"] for c in doc["cases"] if c["kernel"] == "attention"}
    assert "dtype=fp16,B=1,H=2,S=37,D=64,causal=true" in attn  # 37: no tile divides it
    assert "dtype=fp16,B=1,H=1,S=20,Sk=45,D=64,causal=false" in attn  # Sq != Sk, both tails
    bsr = {c["case"] for c in doc["cases"] if c["kernel"] == "bsr_gemm"}
    assert "dtype=fp16,M=256,N=72,K=512,block=128,topk=2" in bsr  # N tail


def test_references_agree_on_the_cpu(ci_run):
    doc, _ = ci_run
    refs = [c for c in doc["cases"] if c["variant"] in ("sdpa_default", "cublas_dense")]
    assert refs and all(c["status"] == "ok" for c in refs)


def test_results_match_the_schema(ci_run):
    doc, _ = ci_run
    check, _ = validator()
    assert check is not None and problem("results.json", doc, check) is None
    assert doc["schema"] == "kernelgate/results@1"
    if not HAS_GPU:
        assert doc["environment"]["gpu"] == {"name": "none (CPU)", "sku": "none", "count": 0}
        assert any(d["code"] == "cpu-only" for d in doc["diagnostics"])


def test_timing_on_the_cpu_fills_every_timing_field(run_harness):
    r = run_harness("--only", "gemm", "--ci", "--seeds", "1", "--time-cap-s", "0.2")
    assert "(validated by fastjsonschema " in r.proc.stdout  # the harness's own check of every write
    for c in r.doc["cases"]:
        assert c["status"] == "ok", c
        t = c["timing"]
        assert t["n_samples"] >= 10 and len(t["samples_ms"]) == t["n_samples"]
        assert t["stop_reason"] in ("converged", "time_cap", "max_samples")
        assert t["q1_ms"] <= t["median_ms"] <= t["q3_ms"]
        assert c["throughput"]["gbps"] > 0
    assert "copy_gbps" in r.doc["environment"]["ceilings"]


def test_planted_wrong_fault_fails_the_real_kernel_by_the_known_amount(run_harness):
    r = run_harness(
        "--only", "attention", "--ci", "--variants", "triton_fa2", "--case-params", "dtype=fp16,S=37,D=64,causal=false", "--seeds", "1",
        "--no-timing", env={"KERNELGATE_FAULT": "attention.triton_fa2:wrong"},
    )
    c = r.case("triton_fa2")
    assert c["status"] == "fail"
    assert abs(c["correctness"]["rel_l2"] - 2e-2) < 1e-3  # faults.WRONG_SCALE
    assert "[kernelgate] harness kernelgate-harness 0.2.0: 1 kernels on " in r.stdout and "fault planted: attention.triton_fa2:wrong" in r.stdout


def test_bad_fault_spec_is_refused_with_the_expected_form(run_harness):
    r = run_harness("--only", "gemm", "--ci", env={"KERNELGATE_FAULT": "attention:wrong"}, check=False)
    assert r.returncode == 2 and r.doc is None
    assert r.stderr.strip() == "[kernelgate] error: KERNELGATE_FAULT: expected <kernel>.<variant>:<mode>, got 'attention:wrong'"
