"""Several GPUs in one runner (python/kernelgate_harness/lanes.py, `--gpus`): the split, the choice of GPUs,
and end to end on the CPU with two fake devices (KERNELGATE_FAKE_GPUS=2: each lane's workers run on
the CPU with CUDA_VISIBLE_DEVICES set to the lane's number)."""

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import fixed_split
import pytest

from conftest import FIXTURE_KERNELS, REPO, harness_env, without_seconds
from kernelgate_harness import cli, lanes

N64, N100 = "dtype=fp32,n=64", "dtype=fp32,n=100"
PAIRED_FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "paired_repo")


# -- choosing the GPUs -------------------------------------------------------------------------


def test_all_n_and_positions():
    visible = ["0", "1", "2", "3"]
    assert lanes.choose("all", visible) == visible
    assert lanes.choose(None, visible) == visible
    assert lanes.choose("2", visible) == ["0", "1"]
    assert lanes.choose("1,3", visible) == ["1", "3"]
    assert lanes.choose("2,", visible) == ["2"]
    assert lanes.choose("all", ["GPU-a", "GPU-b"]) == ["GPU-a", "GPU-b"]


def test_the_cpu_is_one_lane():
    assert lanes.choose("all", []) == []
    assert lanes.choose("1", []) == []
    with pytest.raises(lanes.GpuSpecError) as e:
        lanes.choose("2", [])
    assert str(e.value) == "--gpus 2: no CUDA device is visible (the harness runs on the CPU); use --gpus all or 1"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("3", "--gpus 3: 2 CUDA device(s) are visible (0,1); give 1 to 2, all, or positions such as 0,1"),
        ("0", "--gpus 0: 2 CUDA device(s) are visible (0,1); give 1 to 2, all, or positions such as 0,1"),
        ("0,2", "--gpus 0,2: position 2 is not visible: 2 CUDA device(s) are (0,1)"),
        ("1,1", "--gpus 1,1: a device is named twice"),
        ("gpu0", "--gpus gpu0: expected all, a count such as 2, or positions such as 0,1"),
    ],
)
def test_bad_specs_name_the_value(spec, message):
    with pytest.raises(lanes.GpuSpecError) as e:
        lanes.choose(spec, ["0", "1"])
    assert str(e.value) == message


def test_the_index_is_the_hosts_number():
    assert lanes.device_index("3", 0) == 3
    assert lanes.device_index("GPU-8f2c", 1) == 1


# -- the split: the twin of src/shard/plan.ts --------------------------------------------------


def test_the_estimate_is_variants_at_the_time_cap():
    # Each variant at the run's cap plus 0.44 s of overhead; the case's size plays no part.
    assert lanes.estimated_s(3, 3.0) == pytest.approx(3 * 3.44)
    assert lanes.estimated_s(2, 2.0) == pytest.approx(2 * 2.44)


def test_longest_first_onto_the_least_loaded_lane():
    units = [("k/a", {}, 1), ("k/b", {}, 5), ("k/c", {}, 3), ("k/d", {}, 2), ("k/e", {}, 1)]
    owner, load, counted = fixed_split.plan(units, 2, cap_s=0.56)  # 1 s a variant
    # b (5 s) to lane 0; c (3 s) to 1; d (2 s) to 1 (3 < 5); a (1 s, first of the equal two) to
    # 0 (5 = 5: the tie goes to the lower lane); e to 1 (5 < 6).
    assert owner == [0, 0, 1, 1, 1]
    assert load == pytest.approx([6.0, 6.0])
    assert counted == [0, 0]
    assert fixed_split.plan(units, 2, cap_s=0.56) == (owner, load, counted)  # deterministic


def test_measured_seconds_from_a_results_document():
    paired = {
        "kernel": "k", "case": "a", "timing": {"samples_ms": [500, 500], "median_ms": 500, "warmup_ms": 30000},
        "paired": {"base_timing": {"samples_ms": [1000]}, "seconds": 2.5},
    }
    # 2.5 s of pairs, 0.13 s, 28 calls of 0.5 s; warmup_ms is not counted; the variant the record
    # lacks is estimated (3 s cap + 0.44 s).
    assert lanes.record_s(paired, True) == pytest.approx(2.5 + 0.13 + 14.0)
    assert lanes.measured_s([paired], 2, 3.0) == pytest.approx(2.5 + 0.13 + 14.0 + 3.44)
    # Without paired.seconds: both arms' samples; an unpaired record in a paired run: its samples twice.
    alone = {"kernel": "k", "case": "a", "timing": {"samples_ms": [250, 250], "median_ms": 0}}
    assert lanes.record_s(alone, True) == pytest.approx(1.0 + 0.13)
    assert lanes.record_s(alone, False) == pytest.approx(0.5 + 0.13)
    assert lanes.measured_s([{"kernel": "k", "case": "a", "status": "error"}], 1, 3.0) is None
    owner, _, counted = fixed_split.plan([("k/a", {}, 2), ("k/b", {}, 2), ("k/c", {}, 2)], 2, balance={"k/a": [paired]})
    assert owner == [0, 1, 1]
    assert counted == [1, 0]


def test_the_queue_is_longest_first_and_one_lane_keeps_the_harness_order():
    cost = [1.0, 5.0, 3.0, 5.0, 1.0]
    assert lanes.queue_order(cost, 2) == [1, 3, 2, 0, 4]  # ties in the harness's order
    assert lanes.queue_order(cost, 1) == [0, 1, 2, 3, 4]


def test_the_queue_line_says_its_order_and_where_its_seconds_come_from():
    assert lanes.queue_line(["0", "1"], [150.4, 700.0, 12.0], [True, True, False], "/tmp/base.json", True, 3.0) == (
        "3 cases over 2 GPUs (0, 1) from one queue, longest first by the timings in --balance /tmp/base.json, else the estimate "
        "(variants × 3 s --paired-time-cap-s + 0.44 s): ~14.4 min in all (2 measured, 1 estimated); each GPU takes the next case when it finishes one"
    )
    assert lanes.queue_line(["0", "1"], [7.0, 7.0], [False, False], None, False, 2.0) == (
        "2 cases over 2 GPUs (0, 1) from one queue, longest first by the estimate (variants × 2 s --time-cap-s + 0.44 s): "
        "~14 s in all (estimated); each GPU takes the next case when it finishes one"
    )
    assert lanes.queue_line(["1"], [7.0, 7.0], [False, False], None, False, 2.0) == "2 cases on GPU 1, in the harness's order"


def test_the_lanes_line_and_record_give_each_lanes_share():
    a, b = lanes.Lane(0, "0", True), lanes.Lane(1, "GPU-8f2c", True)
    a.taken, a.busy_s, b.taken, b.busy_s = 14, 131.2, 18, 128.2
    assert lanes.lanes_line([a, b]) == "lanes: gpu 0: 14 cases, 131 s busy; gpu GPU-8f2c: 18 cases, 128 s busy (2.3 % apart)"
    b.failed, b.taken, b.busy_s = "RuntimeError: boom", 1, 4.25
    assert lanes.lanes_line([a, b]) == "lanes: gpu 0: 14 cases, 131 s busy; gpu GPU-8f2c: 1 case, 4.2 s busy, then failed (96.8 % apart)"
    assert lanes.lanes_record([a, b], [True, False], "/tmp/base.json") == {
        "order": "longest first",
        "source": "balance",
        "balance": "/tmp/base.json",
        "measured_cases": 1,
        "lanes": [
            {"gpu": "0", "index": 0, "cases": 14, "busy_s": 131.2},
            {"gpu": "GPU-8f2c", "index": 1, "cases": 1, "busy_s": 4.25, "failed": "RuntimeError: boom"},
        ],
        "apart_pct": 96.8,
    }


def test_a_bad_balance_file_is_named(tmp_path):
    bad = tmp_path / "baseline.json"
    bad.write_text("{}")
    with pytest.raises(lanes.GpuSpecError) as e:
        lanes.read_balance(str(bad))
    assert str(e.value) == f"--balance {bad}: cannot read a results document's cases: 'cases'"


# -- the queue, with a stand-in harness ---------------------------------------------------------


class StubCase:
    def __init__(self, cid):
        self.id, self.params = cid, {"n": 1}


class StubManifest:
    def __init__(self, name):
        self.name = name


class StubHandle:
    def __init__(self, lane, kernel):
        self.lane, self.kernel, self.stops = lane, kernel, 0

    def stop(self):
        self.stops += 1


# An unpaired run at a 2 s time cap with no --balance file, the first lane's device unknown.
PLAN = lanes.LanePlan(paired=False, cap_s=2.0, balance={}, balance_path=None, first_device=None)


class StubHarness:
    """lanes.run's side of the harness, lanes.LaneHost and nothing more: run_unit sleeps for the
    case's seconds (time.sleep, not CPU work) and records what it ran where; a lane raises at its
    `fail_at`-th case."""

    def __init__(self, seconds=None, fail_at=None, late=None):
        self._lock = threading.RLock()
        self.seconds = seconds or {}
        self.fail_at = fail_at or {}  # lane -> raise at its n-th case (1-based)
        self.late = late or {}  # lane -> seconds its first worker takes to say its device
        self.ran, self.failed, self.lines, self.handles = [], [], [], []
        self.count = {}

    def say_lanes(self, line):
        self.lines.append(line)

    def worker_handle(self, m, lane):
        h = StubHandle(lane.position, m.name)
        with self._lock:
            self.handles.append(h)
        return h

    def base_worker(self, m, lane):
        return None

    def ask_device(self, handle, lane):
        time.sleep(self.late.get(lane.position, 0))
        return {"name": "cpu", "index": lane.position}

    def run_unit(self, m, variant_filter, case, handle, base, device, first):
        lane = device["index"]
        with self._lock:
            self.count[lane] = self.count.get(lane, 0) + 1
            if self.count[lane] == self.fail_at.get(lane):
                raise RuntimeError("boom")
        t0 = time.time()
        time.sleep(self.seconds.get(f"{m.name}/{case.id}", 0))
        with self._lock:
            self.ran.append({"unit": f"{m.name}/{case.id}", "lane": lane, "first": first, "handle": handle, "s": time.time() - t0})
        return True

    def write(self):
        pass

    def lane_failed(self, m, case, mi, ci, lane, message):
        with self._lock:
            self.failed.append((f"{m.name}/{case.id}", message, lane.position if lane else None))


def units_of(*kernels):
    """[(manifest, [(index, case, variants)])] as cli.run hands them to lanes.run."""
    return [StubManifest(k) for k, _ in kernels], [[(i, StubCase(c), nv) for i, (c, nv) in enumerate(cases)] for _, cases in kernels]


def test_the_lanes_ask_the_harness_for_lane_host_and_nothing_more():
    # The stub is exactly a LaneHost (its own state private), so the runs below show lanes.run needs
    # no more; cli.Harness has each of LaneHost's methods with its parameters first.
    asked = {n for n in vars(lanes.LaneHost) if not n.startswith("_")}
    assert asked == {"worker_handle", "base_worker", "ask_device", "run_unit", "write", "lane_failed", "say_lanes"}
    assert {n for n in vars(StubHarness) if not n.startswith("_")} == asked
    for name in sorted(asked):
        want = list(inspect.signature(getattr(lanes.LaneHost, name)).parameters)
        assert list(inspect.signature(getattr(cli.Harness, name)).parameters)[: len(want)] == want, name


def test_uneven_units_the_lanes_finish_within_about_one_unit():
    # Eleven cases of one size to the estimate, one of them 2 s and ten 0.1 s: the lane that takes
    # the long one takes fewer, and neither waits on the other for more than one case.
    cases = [(c, 2) for c in "abcdefghijk"]
    manifests, units = units_of(("k", cases))
    h = StubHarness(seconds={"k/a": 2.0, **{f"k/{c}": 0.1 for c in "bcdefghijk"}})
    got, record = lanes.run(h, PLAN, manifests, None, None, ["0", "1"], True, units)
    assert sorted(r["unit"] for r in h.ran) == [f"k/{c}" for c in "abcdefghijk"]  # each case once
    taken = {k: sum(1 for r in h.ran if r["lane"] == k) for k in (0, 1)}
    slow = next(r["lane"] for r in h.ran if r["unit"] == "k/a")
    assert taken[slow] < taken[1 - slow]
    assert [lane.taken for lane in got] == [taken[0], taken[1]]
    longest = max(r["s"] for r in h.ran)
    assert abs(got[0].busy_s - got[1].busy_s) <= longest + 0.5  # within one case (and the threads' jitter)
    assert record["order"] == "longest first" and record["source"] == "estimate" and record["measured_cases"] == 0
    assert [(x["gpu"], x["cases"]) for x in record["lanes"]] == [("0", taken[0]), ("1", taken[1])]
    assert h.lines[0] == (
        "11 cases over 2 GPUs (0, 1) from one queue, longest first by the estimate (variants × 2 s --time-cap-s + 0.44 s): "
        "~54 s in all (estimated); each GPU takes the next case when it finishes one"
    )
    shares = [f"gpu {k}: {lanes._cases(taken[k])}, [\\d.]+ s busy" for k in (0, 1)]
    assert re.fullmatch(rf"lanes: {shares[0]}; {shares[1]} \([\d.]+ % apart\)", h.lines[-1])


def test_the_first_case_warm_up_once_per_kernel_and_lane_and_one_worker_each():
    # Two kernels whose cases alternate in the queue (variants 6, 5, 4, 3, 2, 1). k1/a takes 0.7 s,
    # k1/c 1.5 s, the others 0.1 s: lane 0 takes k1/a, lane 1 k2/a, k1/b, k2/b and k1/c meanwhile,
    # lane 0 then k2/c. Each lane runs cases of both kernels, and its first of each kernel is the
    # one that warms up.
    manifests, units = units_of(("k1", [("a", 6), ("b", 4), ("c", 2)]), ("k2", [("a", 5), ("b", 3), ("c", 1)]))
    h = StubHarness(seconds={"k1/a": 0.7, "k1/c": 1.5, **dict.fromkeys(("k1/b", "k2/a", "k2/b", "k2/c"), 0.1)})
    probe = StubHandle(0, "k1")
    lanes.run(h, PLAN, manifests, None, probe, ["0", "1"], True, units)
    assert sorted(r["unit"] for r in h.ran) == ["k1/a", "k1/b", "k1/c", "k2/a", "k2/b", "k2/c"]
    for lane in (0, 1):
        for kernel in ("k1", "k2"):
            mine = [r for r in h.ran if r["lane"] == lane and r["unit"].startswith(kernel + "/")]
            assert mine, (lane, kernel)
            assert [r["first"] for r in mine] == [True] + [False] * (len(mine) - 1), (lane, kernel)
            # One worker for all of them: the probe's for lane 0's first kernel, else one started once.
            assert len({id(r["handle"]) for r in mine}) == 1
            if (lane, kernel) == (0, "k1"):
                assert mine[0]["handle"] is probe
    started = [(x.lane, x.kernel) for x in h.handles]
    assert len(started) == len(set(started)) and (0, "k1") not in started
    assert all(x.stops >= 1 for x in [*h.handles, probe])  # every worker stopped, the probe's too


def test_a_failed_lane_records_its_case_and_the_other_lane_takes_the_rest():
    # Lane 1's first worker is slow to answer, so lane 0 takes two cases and fails at its second;
    # lane 1 then takes every case left, the failed case is the one error.
    manifests, units = units_of(("k", [(c, 1) for c in "abcd"]))
    h = StubHarness(fail_at={0: 2}, late={1: 0.5})
    got, record = lanes.run(h, PLAN, manifests, None, None, ["0", "1"], True, units)
    assert len(h.failed) == 1
    failed, message, lane = h.failed[0]
    assert lane == 0 and message == "the harness's lane for GPU 0 failed while running this case: RuntimeError: boom"
    ok = [r["unit"] for r in h.ran]
    assert sorted([*ok, failed]) == ["k/a", "k/b", "k/c", "k/d"]  # every case once
    assert [r["lane"] for r in h.ran].count(0) == 1 and [r["lane"] for r in h.ran].count(1) == 2
    assert (got[0].taken, got[1].taken) == (2, 2) and got[0].failed == "RuntimeError: boom" and got[1].failed is None
    assert (
        f"the lane of gpu 0 failed: RuntimeError: boom; its case {failed} is recorded as an error, it takes no more cases, the other lanes take the rest"
    ) in h.lines
    assert record["lanes"][0]["failed"] == "RuntimeError: boom"
    assert re.fullmatch(r"lanes: gpu 0: 2 cases, [\d.]+ s busy, then failed; gpu 1: 2 cases, [\d.]+ s busy \([\d.]+ % apart\)", h.lines[-1])


def test_when_every_lane_failed_the_cases_left_are_errors():
    manifests, units = units_of(("k", [(c, 1) for c in "abcd"]))
    h = StubHarness(fail_at={0: 1, 1: 1})
    lanes.run(h, PLAN, manifests, None, None, ["0", "1"], True, units)
    assert h.ran == []
    by_lane = sorted((lane if lane is not None else -1, msg) for _, msg, lane in h.failed)
    assert by_lane == [
        (-1, "every lane of the harness failed before this case (the harness's log says why)"),
        (-1, "every lane of the harness failed before this case (the harness's log says why)"),
        (0, "the harness's lane for GPU 0 failed while running this case: RuntimeError: boom"),
        (1, "the harness's lane for GPU 1 failed while running this case: RuntimeError: boom"),
    ]
    assert sorted(u for u, _, _ in h.failed) == ["k/a", "k/b", "k/c", "k/d"]
    assert "every lane failed: 2 cases no lane took are recorded as errors" in h.lines


# -- end to end on two fake devices ------------------------------------------------------------


def harness(tmp_path, *args, gpus=None, kernels=FIXTURE_KERNELS, cwd=REPO, env=None, check=True):
    out = tmp_path / f"results-{gpus or 1}.json"
    extra = {"KERNELGATE_FAKE_GPUS": str(gpus)} if gpus else {}
    e = harness_env({**extra, **(env or {})})
    if env and "PYTHONPATH" in env:
        e["PYTHONPATH"] = env["PYTHONPATH"]
    cmd = [sys.executable, "-m", "kernelgate_harness", "--kernels", kernels, "--out", str(out), "--device", "cpu", *args]
    proc = subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    doc = json.load(open(out)) if os.path.exists(out) else None
    return doc, proc


@pytest.fixture(scope="module")
def faulty_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lanes")
    args = ("--variants", "good,nan,crash,tail", "--no-timing", "--seeds", "1")
    one, _ = harness(tmp, *args)
    two, proc = harness(tmp, *args, gpus=2)
    return one, two, proc.stdout


def test_cases_split_over_two_devices_each_case_once(faulty_runs):
    _, two, stdout = faulty_runs
    devices = {(c["case"], c["variant"]): c["device"] for c in two["cases"]}
    assert len(devices) == len(two["cases"]) == 7  # good, nan, tail on both cases, crash on n=64 only
    by_case = {}
    for c in two["cases"]:
        by_case.setdefault(c["case"], set()).add(c["device"]["index"])
    # A case's variants stay on one device; the two cases went to the two devices (each lane took
    # one from the queue, whichever came first).
    assert sorted(by_case) == [N100, N64] and all(len(d) == 1 for d in by_case.values())
    assert {d for ds in by_case.values() for d in ds} == {0, 1}
    assert all(c["device"]["name"] == "cpu" for c in two["cases"])
    # n=64 runs 4 of the variants (crash only there), n=100 3: 4 and 3 × the unpaired cap and
    # overhead.
    assert (
        "[kernelgate] 2 cases over 2 GPUs (0, 1) from one queue, longest first by the estimate (variants × 2 s --time-cap-s + 0.44 s): "
        "~17 s in all (estimated); each GPU takes the next case when it finishes one"
    ) in stdout
    lane64, lane100 = by_case[N64].pop(), by_case[N100].pop()
    assert f"[kernelgate] gpu {lane64}: == faulty {N64} ==" in stdout
    assert f"[kernelgate] gpu {lane100}: == faulty {N100} ==" in stdout
    assert re.search(r"^\[kernelgate\] lanes: gpu 0: 1 case, [\d.]+ s busy; gpu 1: 1 case, [\d.]+ s busy \([\d.]+ % apart\)$", stdout, re.M)
    record = two["run"]["lanes"]
    assert [(x["gpu"], x["index"], x["cases"]) for x in record["lanes"]] == [("0", 0, 1), ("1", 1, 1)]
    assert (record["order"], record["source"], record["measured_cases"]) == ("longest first", "estimate", 0)


def test_the_document_is_the_same_whatever_the_gpu_count(faulty_runs):
    one, two, _ = faulty_runs

    def strip(doc):
        # the device, and the seconds each variant's checks took (correctness.seconds)
        return without_seconds([{k: v for k, v in c.items() if k != "device"} for c in doc["cases"]])

    # Only the devices differ (and no timing is taken here): same cases, same order, same verdicts.
    assert strip(one) == strip(two)
    assert [(d["code"], d["message"]) for d in one["diagnostics"]] == [(d["code"], d["message"]) for d in two["diagnostics"]]
    assert "device" not in one["cases"][0]  # the CPU without the hook has no device to name


def test_a_crashing_worker_loses_no_case(faulty_runs):
    _, two, _ = faulty_runs
    by = {(c["variant"], c["case"]): c for c in two["cases"]}
    crash = by[("crash", N64)]
    assert crash["status"] == "error" and crash["error"]["kind"] == "crash"
    # The crash's lane kept its other variants, and the other lane's case is whole.
    assert by[("good", N64)]["status"] == "ok" and by[("good", N100)]["status"] == "ok"
    assert by[("tail", N100)]["status"] == "fail" and by[("nan", N100)]["status"] == "fail"
    assert by[("good", N64)]["device"] == crash["device"]


def test_more_gpus_than_visible_is_refused(tmp_path):
    _, proc = harness(tmp_path, "--gpus", "3", gpus=2, check=False)
    assert proc.returncode == 2
    assert "[kernelgate] error: --gpus 3: 2 CUDA device(s) are visible (0,1); give 1 to 2, all, or positions such as 0,1" in proc.stderr


# -- paired A/B on two fake devices: both arms of a case on one device ---------------------------

LOG_HOOK = '''

import os as _os
import time as _time

_make = make


def make(name):
    inner = _make(name)

    def factory(params, ctx):
        run = inner(params, ctx)
        with open(_os.environ["LANE_LOG"], "a") as f:
            f.write(f"{REVISION} {params['n']} {_os.environ.get('CUDA_VISIBLE_DEVICES')} {_os.getpid()}\\n")
        if REVISION == "head" and params["n"] in SLOW_S:
            _slow_set_up(params["n"])
        return run

    return factory


def _slow_set_up(n):
    # The slow case's set-up, no CPU work: it lasts until the other lane has set up every other
    # case's head (a queue hands them all to that lane; a fixed split would leave two here, and
    # this waits out its cap) and at least SLOW_S[n] seconds. So the test does not depend on how
    # fast this machine runs the other cases.
    start = _time.monotonic()
    while _time.monotonic() - start < WAIT_CAP_S:
        with open(_os.environ["LANE_LOG"]) as f:
            heads = {int(line.split()[1]) for line in f if line.startswith("head ")}
        if set(OTHERS) <= heads:
            break
        _time.sleep(0.05)
    _time.sleep(max(0.0, SLOW_S[n] - (_time.monotonic() - start)))


VARIANTS = {name: make(name) for name in DELAY_MS}
'''
SIZES = (256, 512, 1024, 2048, 4096, 8192)
SLOW_S = {256: 6.0}  # the first case in the harness's order, longer than the five others together
WAIT_CAP_S = 120.0


def make_repo(path, revision):
    shutil.copytree(PAIRED_FIXTURE, path)
    yml = path / "kernels" / "sleepy" / "kernel.yml"
    yml.write_text(yml.read_text().replace("n: [256]", f"n: [{', '.join(map(str, SIZES))}]"))
    src = path / "sleepy_bench.py"
    others = [n for n in SIZES if n not in SLOW_S]
    src.write_text(
        src.read_text() + f"\nREVISION = {revision!r}\nSLOW_S = {SLOW_S!r}\nOTHERS = {others!r}\nWAIT_CAP_S = {WAIT_CAP_S!r}\n" + LOG_HOOK
    )
    return path


FIRST_WARMUP_S = 1.5
WARM_UPS = re.compile(r"^\[kernelgate\] gpu (\d): sleepy (\S+): time: .*, warm-ups ([\d.]+) s, ", re.M)


@pytest.fixture(scope="module")
def paired_lanes(tmp_path_factory):
    """Six paired cases of one kernel on two fake devices, all of one cost to the estimate; the
    first (n=256) takes longer: its head's set-up waits until the other lane has set up the five
    others, and at least 6 s."""
    tmp = tmp_path_factory.mktemp("paired-lanes")
    head, base = make_repo(tmp / "head", "head"), make_repo(tmp / "base", "base")
    log = tmp / "lanes.log"
    env = {"PYTHONPATH": os.pathsep.join([os.path.join(REPO, "python"), str(head)]), "LANE_LOG": str(log)}
    args = (
        "--seeds", "1", "--variants", "steady", "--base-root", str(base), "--first-warmup-s", str(FIRST_WARMUP_S), "--warmup-s", "0.05",
        "--paired-time-cap-s", "0.3", "--paired-max-time-cap-s", "0.3", "--time-cap-s", "0.2",
    )
    doc, proc = harness(tmp, *args, gpus=2, kernels="kernels", cwd=head, env=env)
    seen = {}
    for line in log.read_text().splitlines():
        revision, n, visible, pid = line.split()
        seen.setdefault(int(n), {}).setdefault(revision, set()).add((visible, pid))
    return doc, proc.stdout, seen


def test_paired_arms_run_on_the_same_device(paired_lanes):
    doc, _, seen = paired_lanes
    assert sorted(seen) == list(SIZES)
    for n, arms in seen.items():
        assert set(arms) == {"head", "base"}, n
        devices = {v for arm in arms.values() for v, _ in arm}
        assert len(devices) == 1, f"n={n}: the arms ran on {devices}"
        # Two worker processes, one per revision.
        assert len({p for arm in arms.values() for _, p in arm}) == 2
    assert {next(iter({v for arm in arms.values() for v, _ in arm})) for arms in seen.values()} == {"0", "1"}
    for c in doc["cases"]:
        assert c["paired"]["base_status"] == "ok", c["paired"]
        assert str(c["device"]["index"]) == next(iter({v for arm in seen[c["params"]["n"]].values() for v, _ in arm}))


def test_a_lane_keeps_its_workers_from_case_to_case(paired_lanes):
    _, _, seen = paired_lanes
    # Each lane started one head and one base worker for the kernel, whatever number of cases it took.
    pids = {}
    for arms in seen.values():
        for revision, runs in arms.items():
            for visible, pid in runs:
                pids.setdefault((visible, revision), set()).add(pid)
    assert sorted(pids) == [("0", "base"), ("0", "head"), ("1", "base"), ("1", "head")]
    assert all(len(p) == 1 for p in pids.values()), pids


def test_the_queue_evens_out_a_case_the_estimate_did_not_see(paired_lanes):
    doc, stdout, _ = paired_lanes
    # The document keeps the harness's order, whatever order the lanes finished the cases in.
    assert [c["case"] for c in doc["cases"]] == [f"dtype=fp32,n={n}" for n in SIZES]
    lane_of = {c["params"]["n"]: c["device"]["index"] for c in doc["cases"]}
    taken = {k: sum(1 for v in lane_of.values() if v == k) for k in (0, 1)}
    slow = lane_of[256]
    # The lane that took the long case took fewer: a fixed split by the estimate gives each three.
    assert taken[slow] < taken[1 - slow]
    record = doc["run"]["lanes"]
    assert [(x["gpu"], x["cases"]) for x in record["lanes"]] == [("0", taken[0]), ("1", taken[1])]
    assert record["lanes"][slow]["busy_s"] >= SLOW_S[256]
    line = re.search(r"^\[kernelgate\] lanes: gpu 0: (\d+) cases?, [\d.]+ s busy; gpu 1: (\d+) cases?, [\d.]+ s busy \(([\d.]+) % apart\)$", stdout, re.M)
    assert line and (int(line[1]), int(line[2])) == (taken[0], taken[1])
    assert float(line[3]) == record["apart_pct"]


def test_the_first_case_warm_up_once_per_lane(paired_lanes):
    doc, stdout, _ = paired_lanes
    # A case's warm-ups are its bursts' (0.2 s a variant) plus, on the kernel's first case on
    # each lane, the case-wide --first-warmup-s: one case per lane, the first that lane took.
    lines = WARM_UPS.findall(stdout)
    assert sorted(case for _, case, _ in lines) == sorted(c["case"] for c in doc["cases"])
    for lane in ("0", "1"):
        mine = [(case, float(s)) for k, case, s in lines if k == lane]
        assert mine, lane
        assert mine[0][1] >= FIRST_WARMUP_S, mine
        assert all(s < FIRST_WARMUP_S for _, s in mine[1:]), mine


def test_a_devices_facts_as_nvidia_smi_writes_them():
    from types import SimpleNamespace

    from kernelgate_harness.environment import device_facts

    props = SimpleNamespace(name="NVIDIA H100 80GB HBM3", uuid="8f2c1d3e-0000-1111-2222-333344445555", pci_domain_id=0, pci_bus_id=0x19, pci_device_id=0)
    assert device_facts(props, "233010de") == {
        "name": "NVIDIA H100 80GB HBM3", "sku": "H100-SXM", "uuid": "GPU-8f2c1d3e-0000-1111-2222-333344445555", "pci_bus_id": "00000000:19:00.0",
    }
    # A torch without PCI ids or a UUID: the name and the model only.
    assert device_facts(SimpleNamespace(name="NVIDIA H100 80GB HBM3")) == {"name": "NVIDIA H100 80GB HBM3", "sku": "H100-SXM"}
