"""What the experiment scripts' CPU tests share (test_fa_experiment.py, test_bsr_experiment.py):
run_case without a GPU, and their recorded runs' JSON."""

import gzip
import json
import time
import types
from pathlib import Path

RECORDED = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "recorded"


def recorded_experiment(kind, run, stem=None, gpu="h100"):
    """The JSON a recorded run of scripts/<kind>-experiment.py wrote on an H100 (or `gpu`):
    test/fixtures/recorded/<kind>-experiment-<gpu>-run<run>/<stem>.json.gz (stem: kind unless given,
    e.g. fa-burst0 for a run of several invocations)."""
    with gzip.open(RECORDED / f"{kind}-experiment-{gpu}-run{run}" / f"{stem or kind}.json.gz") as f:
        return json.load(f)


def recorded_ncu(fixture):
    """A recorded Nsight Compute report (`ncu -i … --page details --csv`, test/fixtures/recorded/
    <fixture>/prof.csv.gz): one dict per profiled kernel, in the report's order, of its metrics by
    name (the values as printed, thousands separators dropped) and "Kernel Name"."""
    import csv

    kernels = {}
    with gzip.open(RECORDED / fixture / "prof.csv.gz", "rt") as f:
        for row in csv.DictReader(f):
            k = kernels.setdefault(int(row["ID"]), {"Kernel Name": row["Kernel Name"]})
            k[row["Metric Name"]] = row["Metric Value"].replace(",", "")
    return [kernels[i] for i in sorted(kernels)]


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
    # (an H100's or H200's 132 SMs: scripts/fa-experiment.py asks each build which instance a case takes)
    device = types.SimpleNamespace(multi_processor_count=132)
    cuda = types.SimpleNamespace(Event=Event, empty_cache=lambda: None, get_device_properties=lambda index: device)
    return types.SimpleNamespace(cuda=cuda, empty_like=torch.empty_like)
