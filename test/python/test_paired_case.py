"""One paired case driven against two scripted workers (python/kernelgate_harness/paired.py): what
each arm is asked, and in which order. The workers answer from a script, so these tests see the
protocol (which start waits on which, which warm-ups run) that an end-to-end run on the CPU only
shows in its total time."""

import time

import pytest

from kernelgate_harness.paired import PairedCase, PairedFatal, change_of, confirm_record, ready_together
from kernelgate_harness.sampling import Sampler
from kernelgate_harness.verify import Verifier

OPT = {
    "seeds": [0, 1, 2],
    "paired_base_seeds": [0],
    "timing": True,
    "paired_threshold_pct": 1.0,
    "paired_min_change_ms": 0.0008,
    "paired_min_pairs": 6,
    "paired_time_cap_s": 3.0,
    "paired_max_time_cap_s": 10.0,
    "min_samples": 5,
    "max_samples": 50,
    "ci_rel": 0.01,
    "time_cap_s": 1.0,
}


class ScriptedWorker:
    """A worker handle (cli.WorkerHandle's interface) whose answers are scripted; every send and
    wait lands in the shared `log` as (arm, what)."""

    def __init__(self, arm, log, variants, init_reply=None):
        self.arm, self.log, self.variants = arm, log, variants
        self.ready = False
        self.init_reply = init_reply or {"op": "ready"}
        self.pending = None
        self.sent = []

    def is_alive(self):
        return self.ready

    def send(self, msg):
        self.log.append((self.arm, f"send {msg['op']}", tuple(msg.get("names") or msg.get("order") or ())))
        self.sent.append(msg)
        self.pending = msg

    def wait(self, timeout_s, stall_s=None):
        msg, self.pending = self.pending, None
        self.log.append((self.arm, f"wait {msg['op']}", ()))
        return self.answer(msg)

    def request(self, msg, timeout_s, stall_s=None):
        self.send(msg)
        return self.wait(timeout_s, stall_s)

    def answer(self, msg):
        op = msg["op"]
        if op == "init":
            return self.init_reply
        if op == "pverify":
            records = {v: {"status": "ok", "correctness": {"status": "PASS", "rel_l2": 1e-4}} for v in msg["variants"]}
            return {"op": "pverified", "records": records, "phase_s": {"verify": 0.0}, "timed": list(msg["variants"])}
        if op == "pwarm":
            return {"op": "pwarmed"}
        if op == "psample":
            return {"op": "psampled", "samples": dict.fromkeys(msg["order"], (1.0, 1980, 500.0))}
        if op == "pfinish":
            info = {v: {"method": "events", "warmup_ms": 0.0, "l2_flush": True, "input_sets": 1} for v in self.variants}
            records = {v: {"status": "ok", "correctness": {"status": "PASS", "rel_l2": 1e-4}} for v in self.variants}
            return {"op": "pfinished", "records": records, "info": info}
        raise AssertionError(f"unexpected op {op}")


class Case:
    id = "n=1"
    params = {"n": 1}


def paired_case(warm_s, variants=("a", "b", "c"), light=False):
    log = []
    head, base = ScriptedWorker("head", log, list(variants)), ScriptedWorker("base", log, list(variants))
    pc = PairedCase(head, base, Case(), list(variants), list(variants), 10.0, OPT, warm_s, lambda line: None, light=light)
    return pc, log


def test_both_arms_workers_start_before_either_start_is_awaited():
    log = []
    head, base = ScriptedWorker("head", log, []), ScriptedWorker("base", log, [])
    ready_together(((head, "head"), (base, "base")), 300)
    assert [(arm, what) for arm, what, _ in log] == [("head", "send init"), ("base", "send init"), ("head", "wait init"), ("base", "wait init")]
    assert head.ready and base.ready
    # Ready workers are not started again.
    log.clear()
    ready_together(((head, "head"), (base, "base")), 300)
    assert log == []


def test_a_worker_that_fails_to_start_is_named_by_its_arm():
    log = []
    error = {"kind": "worker", "message": "ModuleNotFoundError: No module named 'kernels.attention'"}
    head, base = ScriptedWorker("head", log, []), ScriptedWorker("base", log, [], init_reply={"op": "fatal", "error": error})
    with pytest.raises(PairedFatal) as e:
        ready_together(((head, "head"), (base, "base")), 300)
    assert str(e.value) == "base: ModuleNotFoundError: No module named 'kernels.attention'"
    assert head.ready and not base.ready


def warms(log):
    """The variants of each warm-up request, in order, per arm."""
    return [(arm, names) for arm, what, names in log if what == "send pwarm"]


def test_a_kernels_first_case_warms_every_variant_before_the_bursts():
    pc, log = paired_case(warm_s=0.01)
    records = pc.run(lambda *arms: ready_together(arms, 300))
    w = warms(log)
    # The case-wide warm-up comes first, over all variants: at least 4 rounds, the arms
    # alternating, for warm_s; then only the bursts' warm-ups of one variant each.
    k = next(i for i, (_, names) in enumerate(w) if len(names) == 1)
    assert k >= 4 and w[:k] == [("head" if i % 2 == 0 else "base", ("a", "b", "c")) for i in range(k)]
    assert all(len(names) == 1 for _, names in w[k:])
    assert {names[0] for _, names in w[k:]} == {"a", "b", "c"}
    assert all(r["paired"]["base_status"] == "ok" and r["paired"]["median_ratio"] == 1.0 for r in records.values())


def test_later_cases_start_on_each_variants_own_burst_warm_up():
    pc, log = paired_case(warm_s=0.0)
    records = pc.run(lambda *arms: ready_together(arms, 300))
    w = warms(log)
    assert w and all(len(names) == 1 for _, names in w)
    # Each variant's burst warm-up: half in the head's worker, then half in the base's, one
    # request each (the worker loops over its rounds), before the variant's first sample.
    for v in ("a", "b", "c"):
        sent = [(arm, what) for arm, what, names in log if names == (v,)]
        assert sent[:3] == [("head", "send pwarm"), ("base", "send pwarm"), ("head", "send psample")]
    burst = {"op": "pwarm", "names": ["a"], "seconds": 0.1, "rounds": 2, "short_seconds": 0.01, "short_call_s": 0.00005}
    assert [m for m in pc.head.sent if m.get("names") == ["a"]] == [burst]
    assert [m for m in pc.base.sent if m.get("names") == ["a"]] == [burst]
    assert pc.phase_s["bench warm-up"] > 0
    assert all(r["paired"]["stop_reason"] == "decided" for r in records.values())


class StubVerifier(Verifier):
    """Verifier.verify with the per-variant checks recorded instead of run."""

    def __init__(self, opt):
        self.opt = opt
        self.firsts = []

        class Module:
            @staticmethod
            def make_inputs(params, seed, device):
                return {"x": seed}

            @staticmethod
            def oracle(inputs, params):
                return inputs["x"]

        self.module = Module
        self.device = "cuda"

    def check_variants(self, runners, records, inputs, remake, ref, params, idx, seed, into, first):
        self.firsts.append((seed, first))

    def tolerance(self, params):
        return {"rel_l2": 1e-3}

    def judge(self, *args, **kwargs):
        pass


def test_the_stream_checks_run_with_the_first_seed_and_not_in_the_base_arm():
    head = StubVerifier({"stress": False})
    head.verify({}, [0, 1, 2], {"v": {}}, {"v": None})
    assert head.firsts == [(0, True), (1, False), (2, False)]
    base = StubVerifier({"stress": False, "stream_checks": False})
    base.verify({}, [0], {"v": {}}, {"v": None})
    assert base.firsts == [(0, False)]


class StubTimer(Sampler):
    """Sampler.warm over a variant whose sample takes `sample_s` of the host's time, a graph of
    `launches` launches when given."""

    def __init__(self, sample_s, launches=None):
        import types

        self.device = "cuda"
        self.torch = types.SimpleNamespace(cuda=types.SimpleNamespace(synchronize=lambda: None))
        self.sample_s = sample_s
        self.bench = types.SimpleNamespace(warmup_ms={}, graphs={"v": (None, launches)} if launches else {}, batched={})
        self.rounds = 0

    def mark(self, variant, phase):
        pass

    def sample_one(self, b, v, r):
        time.sleep(self.sample_s)
        self.rounds += 1

    def took(self, seconds, **kw):
        t0 = time.perf_counter()
        self.warm(self.bench, ["v"], seconds, min_rounds=2, **kw)
        return time.perf_counter() - t0


def test_a_microsecond_variant_warms_for_the_short_time_in_its_own_worker():
    # Scaled up 40x from SHORT_CALL_S (50 us) so the host's sleep granularity does not decide.
    short = {"short_seconds": 0.01, "short_call_s": 0.002}
    # One call of 0.2 ms: short.
    assert StubTimer(0.0002).took(0.1, **short) < 0.05
    # A graph of 100 launches replayed in 20 ms: 0.2 ms a launch, short too.
    assert StubTimer(0.02, launches=100).took(0.1, **short) < 0.09
    # A graph of 2 launches in 20 ms (10 ms a launch), or one call of 5 ms: the whole `seconds`.
    assert StubTimer(0.02, launches=2).took(0.1, **short) >= 0.1
    assert StubTimer(0.005).took(0.1, **short) >= 0.1
    # Without short_seconds every variant warms for `seconds`.
    assert StubTimer(0.0002).took(0.05) >= 0.05


def test_a_confirmations_case_verifies_lightly_in_both_arms():
    pc, _ = paired_case(warm_s=0.0)
    pc.run(lambda *arms: ready_together(arms, 300))
    assert [m for m in pc.head.sent + pc.base.sent if m["op"] == "pverify" and "light" in m] == []
    pc, _ = paired_case(warm_s=0.0, light=True)
    pc.run(lambda *arms: ready_together(arms, 300))
    assert [m.get("light") for m in pc.head.sent + pc.base.sent if m["op"] == "pverify"] == [True, True]


def paired_record(lo, hi, base_ms=10.0):
    return {"base_status": "ok", "ci_lo": lo, "ci_hi": hi, "base_timing": {"median_ms": base_ms}}


def test_a_change_is_an_interval_clear_of_the_threshold_or_the_floor():
    assert change_of(paired_record(1.011, 1.03), 1.0, 0.0008) == "SLOWER"
    assert change_of(paired_record(0.95, 0.989), 1.0, 0.0008) == "FASTER"
    assert change_of(paired_record(1.009, 1.03), 1.0, 0.0008) is None
    assert change_of(paired_record(0.99, 1.01), 1.0, 0.0008) is None
    # A 40 us case: the 0.8 us floor is 2 %, above the 1 % threshold.
    assert change_of(paired_record(1.015, 1.03, base_ms=0.04), 1.0, 0.0008) is None
    assert change_of(paired_record(1.021, 1.03, base_ms=0.04), 1.0, 0.0008) == "SLOWER"
    # Another interval judged against the record's threshold (the confirmation's).
    assert change_of(paired_record(1.02, 1.03), 1.0, 0.0008, (0.995, 1.004)) is None
    # Nothing to judge without the base's timing or an interval.
    assert change_of({"base_status": "fail"}, 1.0, 0.0008) is None
    assert change_of(None, 1.0, 0.0008) is None


def test_a_confirmation_that_could_not_be_measured_says_why():
    failed = {"status": "fail", "correctness": {"status": "FAIL", "message": "seed 0: rel_l2 3.1e-01 over 1.0e-03"}}
    assert confirm_record(failed) == {
        "status": "error",
        "reason": "the head revision's variant ended fail in the second pair of processes: seed 0: rel_l2 3.1e-01 over 1.0e-03",
    }
    died = {"status": "ok", "paired": {"base_status": "error", "base_reason": "the base revision's worker died (SIGSEGV) during timing of v"}}
    assert confirm_record(died) == {
        "status": "error",
        "reason": "no pairs in the second pair of processes (the base revision's worker died (SIGSEGV) during timing of v)",
    }
    kept = {"n_pairs": 24, "log_ratios": [0.01] * 12, "median_ratio": 1.01, "ci_lo": 1.0, "ci_hi": 1.02, "stop_reason": "decided", "seconds": 1.5}
    # The second measurement's own base timing and correctness are not kept: the first's stand.
    ok = {"status": "ok", "paired": {"base_status": "ok", **kept, "base_timing": {}, "base_correctness": {}}}
    assert confirm_record(ok) == {"status": "ok", **kept}
