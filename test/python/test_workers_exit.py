"""A kernel's workers exit while the next kernel sets up and verifies (WorkerHandle.stop_later), and
nothing is timed before they are gone (workers.settle_exits, called before each case's samples).
test/python/fixtures/exit_repo: the workers of kernel `first` do not finish exiting until the
variant of kernel `second` has been called once, and `second`'s variant logs at each call whether
both of them (head and base) had exited by then."""

import json
import os
import shutil
import subprocess
import sys

from conftest import REPO, harness_env
from kernelgate_harness import workers

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "exit_repo")


def test_the_last_kernels_workers_exit_during_the_next_ones_verification_and_before_its_timing(tmp_path):
    head, base = tmp_path / "head", tmp_path / "base"
    shutil.copytree(FIXTURE, head)
    shutil.copytree(FIXTURE, base)
    calls = tmp_path / "calls.log"
    env = harness_env({"KG_EXIT_CALLED": str(tmp_path / "called"), "KG_EXIT_DONE": str(tmp_path / "done"), "KG_EXIT_LOG": str(calls)})
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "python"), str(head)])
    out = tmp_path / "results.json"
    # a paired run: `first` identical in base and head (verified, not timed), `second` timed
    cmd = [
        sys.executable, "-m", "kernelgate_harness", "--kernels", "kernels", "--out", str(out), "--device", "cpu", "--seeds", "1",
        "--first-warmup-s", "0.05", "--warmup-s", "0.05", "--paired-time-cap-s", "0.3", "--no-tails",
        "--base-root", str(base), "--base-sha", "b" * 40, "--identical", "first.plain",
    ]
    proc = subprocess.run(cmd, cwd=head, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    doc = json.loads(out.read_text())
    assert [(c["kernel"], c["correctness"]["status"]) for c in doc["cases"]] == [("first", "PASS"), ("second", "PASS")]
    pids = (tmp_path / "done").read_text().split()
    assert len(pids) == 2  # both of first's workers (head and base) finished exiting, not killed
    seen = calls.read_text().split()
    # second's first call (its head's verification) came while first's workers were still
    # exiting: the harness had not waited for them
    assert seen[0] == "running"
    # ... and every call from the first "exited" on saw them gone, the timed ones among them
    first_exited = seen.index("exited")
    assert set(seen[first_exited:]) == {"exited"}
    second = next(c for c in doc["cases"] if c["kernel"] == "second")
    timed = second["paired"]["n_pairs"]
    assert timed >= 1 and len(seen) - first_exited >= timed


def test_settle_waits_for_a_worker_let_go_and_kills_one_that_does_not_exit(monkeypatch):
    import multiprocessing
    import time

    mp = multiprocessing.get_context("spawn")
    quick = mp.Process(target=time.sleep, args=(0.2,), daemon=True)
    stuck = mp.Process(target=time.sleep, args=(600,), daemon=True)
    quick.start()
    stuck.start()
    # the quick one is waited for: it exits on its own (status 0)
    monkeypatch.setattr(workers, "EXIT_WAIT_S", 30)
    monkeypatch.setattr(workers, "EXITING", [quick])
    workers.settle_exits()
    assert quick.exitcode == 0 and workers.EXITING == []
    # ... the stuck one is killed once EXIT_WAIT_S has passed
    monkeypatch.setattr(workers, "EXIT_WAIT_S", 0.1)
    monkeypatch.setattr(workers, "EXITING", [stuck])
    workers.settle_exits()
    assert stuck.exitcode is not None and stuck.exitcode < 0 and workers.EXITING == []


def test_the_worker_started_early_is_the_first_kernels_on_one_gpu_and_let_go_otherwise():
    """env_probe.first_worker: the worker start_early started before the device was known runs the
    first kernel when the run has one lane; with several lanes (each pins its workers to its GPU)
    or another first kernel it is let go (stop_later)."""
    import types

    from kernelgate_harness import env_probe

    class Early:
        def __init__(self, name):
            self.manifest = {"name": name}
            self.let_go = False

        def stop_later(self):
            self.let_go = True

    gemm = types.SimpleNamespace(name="gemm")
    early = Early("gemm")
    assert env_probe.first_worker(early, gemm, several=False) is early and not early.let_go
    for early, several in ((Early("gemm"), True), (Early("attention"), False)):
        assert env_probe.first_worker(early, gemm, several) is None and early.let_go
    assert env_probe.first_worker(None, gemm, several=False) is None
