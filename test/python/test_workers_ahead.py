"""The next kernel's workers start while the harness times nothing (cli.Harness.run, start_ahead):
before the current kernel's tails, or as the kernel starts when none of its variants is timed (a
paired run where all are identical and none is the A/A control), never while a variant is timed.
test/python/fixtures/ahead_repo: kernel `first` waits for a marker that importing kernel `second`'s
module writes, so its output is right only where `second`'s worker was started ahead."""

import json
import os
import shutil
import subprocess
import sys

from conftest import REPO, harness_env

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "ahead_repo")


def run(tmp_path, wait_n, wait_s=45, extra=()):
    head = tmp_path / "head"
    shutil.copytree(FIXTURE, head)
    mark = tmp_path / "second-imported"
    env = harness_env({"KG_AHEAD_MARK": str(mark), "KG_AHEAD_WAIT_N": wait_n, "KG_AHEAD_WAIT_S": str(wait_s)})
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "python"), str(head)])
    out = tmp_path / "results.json"
    cmd = [
        sys.executable, "-m", "kernelgate_harness", "--kernels", "kernels", "--out", str(out), "--device", "cpu", "--seeds", "1",
        "--first-warmup-s", "0.05", "--warmup-s", "0.05", "--time-cap-s", "0.2", *extra,
    ]
    proc = subprocess.run(cmd, cwd=head, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr[-4000:]
    with open(out) as f:
        return json.load(f), proc.stdout


def verdict(record):
    """PASS or FAIL; a case that ran out of time waiting has no correctness: its status."""
    return record.get("correctness", {}).get("status", record["status"])


def status(doc, kernel):
    return [(c["case"], verdict(c)) for c in doc["cases"] if c["kernel"] == kernel]


def tail_status(doc, kernel):
    return [(t["case"], verdict(t)) for t in doc["tails"] if t["kernel"] == kernel]


def test_the_next_kernels_worker_starts_before_the_tails(tmp_path):
    # `first` is timed (an unpaired run): `second`'s worker starts once its cases are done, so
    # its tail (n=32) sees the marker
    doc, _ = run(tmp_path, wait_n="32")
    assert status(doc, "first") == [("dtype=fp32,n=64", "PASS")]
    assert tail_status(doc, "first") == [("dtype=fp32,n=32", "PASS")]
    assert status(doc, "second") == [("dtype=fp32,n=16", "PASS")]


def test_not_while_a_variant_of_the_kernel_before_is_timed(tmp_path):
    # the main case (n=64) is timed: nothing started ahead yet, no marker within its 0.3 s
    doc, _ = run(tmp_path, wait_n="64", wait_s=0.3)
    assert status(doc, "first") == [("dtype=fp32,n=64", "FAIL")]
    assert tail_status(doc, "first") == [("dtype=fp32,n=32", "PASS")]


def test_at_once_when_the_kernel_before_times_nothing(tmp_path):
    # a paired run whose `first` is identical in base and head, and not a control: verified only,
    # so `second`'s workers (head and base) start as `first` does, before its main case
    base = tmp_path / "base"
    shutil.copytree(FIXTURE, base)
    doc, log = run(tmp_path, wait_n="64,32", extra=["--base-root", str(base), "--base-sha", "b" * 40, "--identical", "first.waits"])
    assert status(doc, "first") == [("dtype=fp32,n=64", "PASS")]
    assert tail_status(doc, "first") == [("dtype=fp32,n=32", "PASS")]
    assert "identical" in next(c for c in doc["cases"] if c["kernel"] == "first")
    assert status(doc, "second") == [("dtype=fp32,n=16", "PASS")]
    assert "second dtype=fp32,n=16: time: set-up and verification" in log
