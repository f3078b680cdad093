"""scripts/plant-retune.py (gpu-e2e.sh nightly-retune): the tune cache's entry of each case the push
tuned is swapped for the tuner's runner-up; other modules and untuned cases are left alone."""

import json
import os
import subprocess
import sys

from conftest import REPO

SCRIPT = os.path.join(REPO, "scripts", "plant-retune.py")
PARAMS = {"B": 16, "D": 128, "H": 96, "S": 4096, "causal": False, "dtype": "fp16"}


def entry(cache, name, module, case, config):
    key = json.dumps({"module": module, "source": "s" * 64, "case": case, "device": "NVIDIA H100 80GB HBM3"}, sort_keys=True)
    with open(cache / name, "w") as f:
        json.dump({"key": key, "config": config}, f)


def test_the_runner_up_replaces_the_choice_of_each_tuned_case(tmp_path):
    cache = tmp_path / "tune"
    cache.mkdir()
    entry(cache, "a.json", "kernels.attention.triton_fa2", PARAMS, [128, 64, 8, 3])
    entry(cache, "b.json", "kernels.attention.triton_fa3", PARAMS, [128, 64, 8, 3])
    entry(cache, "c.json", "kernels.attention.triton_fa2", {**PARAMS, "S": 128}, [128, 128, 8, 3])
    table = [{"config": [128, 64, 8, 3], "ms": 2.101}, {"config": [128, 128, 8, 2], "ms": 2.175}]
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"cases": [
        {"kernel": "attention", "variant": "triton_fa2", "params": PARAMS, "tuning": {"config": [128, 64, 8, 3], "candidates_ms": table}},
        {"kernel": "attention", "variant": "triton_fa2", "params": {**PARAMS, "S": 128}, "tuning": {"config": [128, 128, 8, 3]}},
    ]}))
    proc = subprocess.run(
        [sys.executable, SCRIPT, str(results), str(cache), "attention/triton_fa2", "kernels.attention.triton_fa2"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((cache / "a.json").read_text())["config"] == [128, 128, 8, 2]
    assert json.loads((cache / "b.json").read_text())["config"] == [128, 64, 8, 3]
    assert json.loads((cache / "c.json").read_text())["config"] == [128, 128, 8, 3]
    assert proc.stdout.splitlines()[-1] == f"planted 1 re-tune(s) of 1 tuned case(s) in {cache}"


def test_nothing_to_plant_exits_1(tmp_path):
    (tmp_path / "tune").mkdir()
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"cases": []}))
    cmd = [sys.executable, SCRIPT, str(results), str(tmp_path / "tune"), "attention/triton_fa2", "m"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "planted 0 re-tune(s) of 0 tuned case(s)" in proc.stdout
