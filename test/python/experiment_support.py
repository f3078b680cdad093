"""What the experiment scripts' CPU tests share (test_fa_experiment.py, test_bsr_experiment.py):
run_case without a GPU, and their recorded runs' JSON."""

import gzip
import json
import time
import types
from pathlib import Path

RECORDED = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "recorded"


def recorded_experiment(kind, run, stem=None):
    """The JSON a recorded H100 run of scripts/<kind>-experiment.py wrote:
    test/fixtures/recorded/<kind>-experiment-h100-run<run>/<stem>.json.gz (stem: kind unless given,
    e.g. fa-burst0 for a run of several invocations)."""
    with gzip.open(RECORDED / f"{kind}-experiment-h100-run{run}" / f"{stem or kind}.json.gz") as f:
        return json.load(f)


class Event:
    """torch.cuda.Event on the CPU: done at once, timed by the wall clock."""

    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def query(self):
        return True

    def elapsed_time(self, other):
        return 1000 * (other.t - self.t)


def on_the_cpu(monkeypatch, bench):
    """The kernel's bench.make_inputs made on the CPU, and a torch whose CUDA events are Event: what
    a script's run_case takes for its `torch`."""
    import torch

    make_inputs = bench.make_inputs
    monkeypatch.setattr(bench, "make_inputs", lambda params, seed, device: make_inputs(params, seed, "cpu"))
    return types.SimpleNamespace(cuda=types.SimpleNamespace(Event=Event, empty_cache=lambda: None), empty_like=torch.empty_like)
