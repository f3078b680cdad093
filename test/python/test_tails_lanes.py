"""Tails on several GPUs (tails.verify_each): after the lanes, the tail cases (ci_cases) are spread
over the run's GPUs from one queue instead of waiting on the first (on two H100s they took 34 s on
one GPU while the other waited: run 76, 2026-11-26), and the document's tails are the same records
in the same order whatever the GPU count. On the CPU with two fake devices (KERNELGATE_FAKE_GPUS)."""

import json
import os
import re
import shutil
import subprocess
import sys

from conftest import FIXTURE_KERNELS, REPO, harness_env, without_seconds

TAIL_N = [7, 33]


def kernels_with_tails(tmp_path):
    """The faulty kernel alone, its ci_cases made four widths that are not its cases."""
    root = tmp_path / "kernels"
    shutil.copytree(os.path.join(FIXTURE_KERNELS, "faulty"), root / "faulty")
    yml = root / "faulty" / "kernel.yml"
    text = yml.read_text()
    text, n = re.subn(r"ci_cases:\n  - dtype: fp32\n    n: \[64, 100\]", f"ci_cases:\n  - dtype: fp32\n    n: {TAIL_N}", text)
    assert n == 1
    yml.write_text(text)
    return str(root)


def run(tmp_path, kernels, gpus):
    out = tmp_path / f"results-{gpus}.json"
    env = harness_env({"KERNELGATE_FAKE_GPUS": str(gpus)} if gpus > 1 else {})
    cmd = [sys.executable, "-m", "kernelgate_harness", "--kernels", kernels, "--out", str(out), "--device", "cpu",
           "--variants", "good,tail", "--no-timing", "--seeds", "1"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    return json.loads(out.read_text()), proc.stdout


def test_tails_spread_over_two_gpus_and_the_same_records(tmp_path):
    kernels = kernels_with_tails(tmp_path)
    one, _ = run(tmp_path, kernels, 1)
    two, stdout = run(tmp_path, kernels, 2)
    cases = [f"dtype=fp32,n={n}" for n in TAIL_N]
    assert [(t["case"], t["variant"]) for t in one["tails"]] == [(c, v) for c in cases for v in ("good", "tail")]
    assert without_seconds(two["tails"]) == without_seconds(one["tails"])
    by = {(t["case"], t["variant"]): t for t in two["tails"]}
    assert [by[(c, "good")]["status"] for c in cases] == ["ok", "ok"]
    assert [by[(c, "tail")]["status"] for c in cases] == ["fail", "fail"]  # its last tile is wrong
    assert "[kernelgate] tails: 2 tail cases (ci_cases: faulty 2) verified on cpu over 2 GPU(s) (0, 1), untimed" in stdout
    for gpu in ("0", "1"):
        # Each GPU took tail cases: the first unit of each waits on its worker's start.
        assert re.search(rf"^\[kernelgate\] gpu {gpu}: tail faulty/good dtype=fp32,n=\d+ PASS", stdout, re.M), stdout
