"""Tails on the device (python/kernelgate_harness/tails.py): after the timed cases the harness
verifies each manifest's ci_cases, untimed, into the document's `tails`; not with --ci (the cases
are the tails) nor --no-tails; a tail that is also a timed case is verified once. The gate's side,
over the real harness with the planted tail bug, is test/tails-gate.test.ts."""

import json
import os
import subprocess
import sys

from conftest import REPO, harness_env
from kernelgate_harness import tails

TAIL_REPO = os.path.join(REPO, "test", "fixtures", "tail-repo")


def run(tmp_path, *args):
    out = tmp_path / "results.json"
    cmd = [sys.executable, "-m", "kernelgate_harness", "--kernels", "kernels", "--out", str(out), "--device", "cpu", "--seeds", "1", "--no-timing", *args]
    env = harness_env()
    env["PYTHONPATH"] = os.path.join(REPO, "python")
    proc = subprocess.run(cmd, cwd=TAIL_REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(out) as f:
        return json.load(f), proc.stdout


def test_tails_are_verified_after_the_timed_cases_and_kept_apart(tmp_path):
    doc, log = run(tmp_path, "--variants", "torch_softmax")
    assert [c["case"] for c in doc["cases"]] == ["dtype=fp32,R=4,W=64", "dtype=fp32,R=4,W=256"]
    # ci_cases' W=64 (R=4) is a timed case too: verified there, not again.
    assert [(t["variant"], t["case"], t["status"], t["correctness"]["status"]) for t in doc["tails"]] == [
        ("torch_softmax", "dtype=fp32,R=3,W=7", "ok", "PASS"),
        ("torch_softmax", "dtype=fp32,R=3,W=100", "ok", "PASS"),
        ("torch_softmax", "dtype=fp32,R=3,W=257", "ok", "PASS"),
    ]
    assert all("timing" not in t for t in doc["tails"])
    assert "[kernelgate] softmax: 3 tail cases (ci_cases) verified on cpu, untimed\n" in log
    assert "[kernelgate] tail softmax/torch_softmax dtype=fp32,R=3,W=7 PASS rel_l2=" in log
    assert "; tails: 3 verified; results in " in log
    assert doc["run"]["stage_seconds"]["tails"] >= 0


def test_no_tails_verifies_none_nor_does_ci():
    class Args:
        ci, no_tails = False, False

    assert tails.wanted(Args)
    Args.no_tails = True
    assert not tails.wanted(Args)
    Args.no_tails, Args.ci = False, True  # --ci: the cases are the tails
    assert not tails.wanted(Args)


def test_no_tails_run_has_no_tails(tmp_path):
    doc, log = run(tmp_path, "--variants", "torch_softmax", "--no-tails")
    assert "tails" not in doc and "tail cases" not in log


def test_a_shard_verifies_the_tails_of_its_own_kernels_only(tmp_path):
    cases = tmp_path / "cases.txt"
    cases.write_text("other/dtype=fp32,n=1\n")
    doc, _ = run(tmp_path, "--variants", "torch_softmax", "--cases", str(cases))
    assert doc["cases"] == [] and doc.get("tails") == []
