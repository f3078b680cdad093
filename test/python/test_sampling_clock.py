"""Each sample's SM clock and power are the ones its variant ran at (sampling.Sampler.sample_round).
Until 2026-11-28 the harness read them as it queued each sample, before the GPU had run any of the
round, so every variant of a round got the same reading: in the H100 push of run 153 the eight
variants of each headline case had identical clock series
(test/fixtures/recorded/push-h100-run153). Here a model of the GPU runs the queued work only when
the host waits for it, and its clock and power follow the kernel it ran last."""

import types

from kernelgate_harness.sampling import EventSample, Sampler

CLOCK = {"a": 1800.0, "b": 1500.0, "c": 1650.0}
POWER = {"a": 600.0, "b": 700.0, "c": 650.0}
MS = {"a": 1.0, "b": 2.0, "c": 4.0}


class Gpu:
    """A stream: work queued in order, run only as far as the host waits for."""

    def __init__(self):
        self.queue, self.done, self.last = [], 0, None

    def run_to(self, item):
        while self.done < len(self.queue):
            op = self.queue[self.done]
            self.done += 1
            if op[0] == "kernel":
                self.last = op[1]
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
        return sum(MS[op[1]] for op in self.gpu.queue[i:j] if op[0] == "kernel")


class Nvml:
    """NVML as the GPU model shows it: the clock and power of the kernel run last (idle: 1980 MHz)."""

    ok = True

    def __init__(self, gpu):
        self.gpu, self.reads = gpu, []

    def sm_clock_mhz(self):
        self.reads.append(self.gpu.done)
        return CLOCK.get(self.gpu.last, 1980.0)

    def power_w(self):
        return POWER.get(self.gpu.last, 100.0)


class Bench:
    def __init__(self, gpu, names):
        self.gpu = gpu
        self.cold, self.flush, self.graphs, self.batched, self.n_sets = False, None, {}, {}, 1
        self.spin_ms, self.host_ms, self.bad = dict.fromkeys(names, 0.1), {}, {}
        self.samples = {v: {"ms": [], "clk": [], "pw": [], "after": []} for v in names}

    def next_round(self, torch, r):
        pass

    def call(self, v, k):
        self.gpu.queue.append(("kernel", v))


def sampler(gpu, nvml):
    torch = types.SimpleNamespace(
        cuda=types.SimpleNamespace(Event=lambda enable_timing: Event(gpu), synchronize=gpu.run_all)
    )
    s = Sampler.__new__(Sampler)
    s.torch, s.device, s.opt, s.nvml, s.guard = torch, "cuda", {"lead_in": "none"}, nvml, None
    s.mark = lambda v, phase: None
    s.tampered = lambda where: None
    s.l2_left_set = lambda v: None
    return s


def test_each_variant_gets_the_clock_and_power_it_ran_at():
    gpu = Gpu()
    nvml = Nvml(gpu)
    s, b = sampler(gpu, nvml), Bench(gpu, ["a", "b", "c"])
    out = s.sample_round(b, ["b", "a", "c"], 0)
    assert out == {"b": (2.0, 1500.0, 700.0), "a": (1.0, 1800.0, 600.0), "c": (4.0, 1650.0, 650.0)}
    assert {v: (x["ms"], x["clk"], x["pw"]) for v, x in b.samples.items()} == {
        "a": ([1.0], [1800.0], [600.0]),
        "b": ([2.0], [1500.0], [700.0]),
        "c": ([4.0], [1650.0], [650.0]),
    }
    # each reading after its variant's end event (queue: start, kernel, end per variant), none of
    # them before the round had been queued
    assert nvml.reads == [3, 6, 9]
    out = s.sample_round(b, ["c", "b", "a"], 1)
    assert {v: x[1] for v, x in out.items()} == {"c": 1650.0, "b": 1500.0, "a": 1800.0}
    # what each sample ran behind ("" for the round's first, behind the lead-in): stats.balanced
    assert {v: x["after"] for v, x in b.samples.items()} == {"a": ["b", "b"], "b": ["", "c"], "c": ["a", ""]}


def test_without_nvml_the_host_does_not_wait_for_the_samples(monkeypatch):
    gpu = Gpu()
    s, b = sampler(gpu, None), Bench(gpu, ["a", "b"])
    waited = []
    monkeypatch.setattr(EventSample, "wait_end", lambda self: waited.append(self))
    out = s.sample_round(b, ["a", "b"], 0)
    assert out == {"a": (1.0, None, None), "b": (2.0, None, None)}
    assert waited == [] and b.samples["a"]["clk"] == []
