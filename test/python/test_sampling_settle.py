"""--settle-ms (sampling.Sampler.plan_settle): untimed calls of the same variant before each timed
sample, so that a sample runs at its variant's own steady power, not in the transient its
predecessor left. On an H200 at its 700 W cap (2026-11-29, run 198,
test/fixtures/recorded/fa-experiment-h200-run198) fp16 attention at B16 H96 S4096 D128 read 18.95
ms as the first call after an idle GPU, 23.2 ms after cuBLAS at the cap and 22.0 ms from its fourth
call on after either. Here a model of the GPU runs each kernel at a speed set by the kernel that ran
before it, as the power cap's clock does over tens of milliseconds."""

import math
import types

import pytest

from kernelgate_harness.arguments import parse_args
from kernelgate_harness.sampling import Sampler
from kernelgate_harness.timing import Bench as RealBench
from kernelgate_harness.timing import Timer

MS = {"a": 2.0, "b": 3.0, "c": 5.0}  # each kernel's time at full clock
# The clock a kernel leaves behind it: "c" draws little power (the next kernel runs fast), "b"
# keeps the GPU at its cap (the next one runs slow). A kernel behind itself runs at its own
# steady clock.
AFTER = {"a": 1.10, "b": 1.30, "c": 1.00, None: 1.00}


class Gpu:
    """A stream of queued work, run only as far as the host waits for it; each kernel takes
    MS[v] × AFTER[the kernel before it]."""

    def __init__(self):
        self.queue, self.done, self.prev, self.took = [], 0, None, {}

    def run_to(self, item):
        while self.done < len(self.queue):
            op = self.queue[self.done]
            self.done += 1
            if op[0] == "kernel":
                self.took[id(op)] = MS[op[1]] * AFTER[self.prev]
                self.prev = op[1]
            if op is item:
                return

    def run_all(self):
        self.run_to(None)


class Event:
    def __init__(self, gpu):
        self.gpu, self.op = gpu, None

    def record(self):
        self.op = ("event", self)
        self.gpu.queue.append(self.op)

    def synchronize(self):
        self.gpu.run_to(self.op)

    def elapsed_time(self, end):
        assert self.gpu.done >= self.gpu.queue.index(end.op) + 1, "read before the GPU ran it"
        i, j = self.gpu.queue.index(self.op), self.gpu.queue.index(end.op)
        return sum(self.gpu.took[id(op)] for op in self.gpu.queue[i:j] if op[0] == "kernel")


class Bench:
    def __init__(self, gpu, names):
        self.gpu = gpu
        self.cold, self.flush, self.graphs, self.batched, self.n_sets = False, None, {}, {}, 1
        self.spin_ms, self.host_ms, self.bad, self.warmup_ms, self.settle = {}, {}, {}, {}, {}
        self.samples = {v: {"ms": [], "clk": [], "pw": []} for v in names}
        self.calls = []

    def next_round(self, torch, r):
        pass

    def call(self, v, k):
        self.calls.append(v)
        self.gpu.queue.append(("kernel", v))


def sampler(gpu, settle_ms):
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=lambda enable_timing: Event(gpu), synchronize=gpu.run_all))
    s = Sampler.__new__(Sampler)
    s.torch, s.device, s.nvml, s.guard = torch, "cuda", None, None
    s.opt = {"lead_in": "none", "settle_ms": settle_ms}
    s.mark = lambda v, phase: None
    s.tampered = lambda where: None
    s.l2_left_set = lambda v: None
    return s


ORDERS = [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "c", "b"]]


def rounds(settle_ms):
    gpu = Gpu()
    s, b = sampler(gpu, settle_ms), Bench(gpu, list(MS))
    s.warm(b, list(MS), 0.0, min_rounds=2)
    for r, order in enumerate(ORDERS):
        s.sample_round(b, order, r)
    return b


def test_without_settling_a_sample_reads_its_predecessor():
    b = rounds(0.0)
    assert b.settle == {}
    # "a" behind "c" (three rounds) and behind "b" (the last round opens behind the one before)
    assert sorted(set(b.samples["a"]["ms"])) == [2.0, 2.6]
    assert b.calls.count("a") == 2 + len(ORDERS)  # the warm-up's two rounds and one call per round


def test_settled_samples_read_the_variant_at_its_own_steady_state():
    b = rounds(10.0)
    # from the warm-up's last round (a behind c: 2.0 ms; b behind a: 3.3 ms; c behind b: 6.5 ms)
    assert b.settle == {"a": math.ceil(10 / 2.0), "b": math.ceil(10 / 3.3), "c": math.ceil(10 / 6.5)}
    for v, steady in (("a", 2.0 * 1.10), ("b", 3.0 * 1.30), ("c", 5.0)):
        assert b.samples[v]["ms"] == pytest.approx([steady] * len(ORDERS)), v
    assert b.calls.count("a") == 2 + len(ORDERS) * (1 + b.settle["a"])


def test_a_graph_timed_variant_is_not_settled():
    gpu = Gpu()
    s, b = sampler(gpu, 10.0), Bench(gpu, ["a", "b"])
    b.graphs["b"] = (types.SimpleNamespace(replay=lambda: gpu.queue.append(("kernel", "b"))), 1)
    s.warm(b, ["a", "b"], 0.0, min_rounds=1)
    assert list(b.settle) == ["a"]


def test_the_time_cap_counts_a_settled_variants_timed_calls_only():
    s = Sampler.__new__(Sampler)
    s.opt = {"min_samples": 10, "max_samples": 300, "ci_rel": 0.0, "time_cap_s": 0.05}
    b = types.SimpleNamespace(samples={"a": {"ms": [], "clk": [], "pw": []}}, bad={}, settle={"a": 40}, graphs={}, batched={})

    def sample_round(b, order, r):
        b.samples["a"]["ms"].append(5.0 + 0.01 * (r % 3))
        return {"a": (5.0 + 0.01 * (r % 3), None, None)}

    s.sample_round = sample_round
    assert s.sample_until_stopped(b, ["a"]) == {"a": "time_cap"}
    assert len(b.samples["a"]["ms"]) == 10  # 0.05 s of 5 ms samples, the settling's 40 calls each not counted


def test_the_method_names_the_settling():
    t = Timer.__new__(Timer)
    t.device, t.opt = "cuda", {"settle_ms": 150.0, "interleave": True}
    b = RealBench(n_sets=1)
    b.cold, b.settle = False, {"a": 7}
    assert t.method(b, "a") == "events, settled 150 ms, interleaved"
    assert t.method(b, "b") == "events, interleaved"


@pytest.mark.parametrize("value", ["-1", "2001"])
def test_settle_ms_out_of_range_is_refused(value, capsys):
    with pytest.raises(SystemExit):
        parse_args(["--out", "r.json", "--settle-ms", value])
    assert f"--settle-ms must be from 0 to 2000, got {float(value):g}" in capsys.readouterr().err
