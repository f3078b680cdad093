"""Several GPUs in one runner (python/kernelgate_harness/lanes.py, `--gpus`): the split, the choice of GPUs,
and end to end on the CPU with two fake devices (KERNELGATE_FAKE_GPUS=2: each lane's workers run on
the CPU with CUDA_VISIBLE_DEVICES set to the lane's number)."""

import json
import os
import shutil
import subprocess
import sys
import threading

import pytest

from conftest import FIXTURE_KERNELS, REPO, harness_env
from kernelgate_harness import lanes

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
    owner, load, counted = lanes.plan(units, 2, cap_s=0.56)  # 1 s a variant
    # b (5 s) to lane 0; c (3 s) to 1; d (2 s) to 1 (3 < 5); a (1 s, first of the equal two) to
    # 0 (5 = 5: the tie goes to the lower lane); e to 1 (5 < 6).
    assert owner == [0, 0, 1, 1, 1]
    assert load == pytest.approx([6.0, 6.0])
    assert counted == [0, 0]
    assert lanes.plan(units, 2, cap_s=0.56) == (owner, load, counted)  # deterministic


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
    owner, _, counted = lanes.plan([("k/a", {}, 2), ("k/b", {}, 2), ("k/c", {}, 2)], 2, balance={"k/a": [paired]})
    assert owner == [0, 1, 1]
    assert counted == [1, 0]


def test_the_split_line_says_where_each_lanes_seconds_come_from():
    owner, load, counted = [0, 1, 1], [150.4, 12.0 + 700.0], [1, 1]
    assert lanes.split_line(["0", "1"], owner, load, counted, "/tmp/base.json", True, 3.0) == (
        "3 cases over 2 GPUs (0, 1), longest first by the timings in --balance /tmp/base.json, else the estimate "
        "(variants × 3 s --paired-time-cap-s + 0.44 s): gpu 0: 1 case, ~150 s (measured); gpu 1: 2 cases, ~11.9 min (1 measured, 1 estimated)"
    )
    assert lanes.split_line(["0", "1"], [0, 1], [7.0, 7.0], [0, 0], None, False, 2.0) == (
        "2 cases over 2 GPUs (0, 1), longest first by the estimate (variants × 2 s --time-cap-s + 0.44 s): "
        "gpu 0: 1 case, ~7 s (estimated); gpu 1: 1 case, ~7 s (estimated)"
    )


def test_a_bad_balance_file_is_named(tmp_path):
    bad = tmp_path / "baseline.json"
    bad.write_text("{}")
    with pytest.raises(lanes.GpuSpecError) as e:
        lanes.read_balance(str(bad))
    assert str(e.value) == f"--balance {bad}: cannot read a results document's cases: 'cases'"


# -- a lane that fails outside its workers' containment ------------------------------------------


class StubCase:
    def __init__(self, cid):
        self.id, self.params = cid, {"n": 1}


class StubManifest:
    name = "k"


class StubHarness:
    """Runs lane 1's kernel but raises in lane 0's: lane 1's cases are kept, lane 0's are errors."""

    balance = {}
    first_device = None
    base_manifests = None

    class args:
        balance = None
        time_cap_s = 2.0
        paired_time_cap_s = 3.0

    def __init__(self):
        self.lock = threading.Lock()
        self.records, self.lines = [], []

    def say_lanes(self, line):
        self.lines.append(line)

    def worker_handle(self, m, lane):
        return None

    def ask_device(self, handle, lane):
        return {"name": "cpu", "index": lane.position}

    def run_kernel(self, m, variant_filter, handle, cases, lane, mi, on_done):
        for ci, case in cases:
            if lane.position == 0 and ci > 0:
                raise RuntimeError("boom")
            with self.lock:
                self.records.append((case.id, "ok", lane.position))
            on_done((mi, ci))

    def lane_failed(self, m, case, mi, ci, lane, message):
        with self.lock:
            self.records.append((case.id, message, lane.position))


def test_a_failed_lane_loses_none_of_the_other_lanes_cases():
    h = StubHarness()
    cases = [StubCase(c) for c in "abcd"]
    units = [[(i, c, 1) for i, c in enumerate(cases)]]
    lanes.run(h, [StubManifest()], None, None, ["0", "1"], True, units)
    got = sorted(h.records)
    assert [r[0] for r in got] == ["a", "b", "c", "d"]  # every case once
    by_lane = {r[0]: r[2] for r in got}
    assert {by_lane["a"], by_lane["b"]} == {0, 1}  # split over both
    failed = [r for r in got if r[1] != "ok"]
    assert failed and all(r[2] == 0 for r in failed)
    assert failed[0][1] == "the harness's lane for GPU 0 failed before this case: RuntimeError: boom"
    assert all(r[1] == "ok" for r in got if r[2] == 1)
    assert "the lane of gpu 0 failed: RuntimeError: boom; its remaining cases are recorded as errors" in h.lines


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
    # A case's variants stay on one device; the two cases went to the two devices.
    assert by_case == {N64: {0}, N100: {1}}
    assert all(c["device"]["name"] == "cpu" for c in two["cases"])
    # n=64 runs 4 of the variants (crash only there), n=100 3: 4 and 3 × the unpaired cap and
    # overhead, the longer first, to gpu 0.
    assert (
        "[kernelgate] 2 cases over 2 GPUs (0, 1), longest first by the estimate (variants × 2 s --time-cap-s + 0.44 s): "
        "gpu 0: 1 case, ~10 s (estimated); gpu 1: 1 case, ~7 s (estimated)"
    ) in stdout
    assert "[kernelgate] gpu 0: == faulty (4 variants, 1 cases) ==" in stdout
    assert "[kernelgate] gpu 1: == faulty (4 variants, 1 cases) ==" in stdout


def test_the_document_is_the_same_whatever_the_gpu_count(faulty_runs):
    one, two, _ = faulty_runs

    def strip(doc):
        return [{k: v for k, v in c.items() if k != "device"} for c in doc["cases"]]

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

_make = make


def make(name):
    inner = _make(name)

    def factory(params, ctx):
        run = inner(params, ctx)
        with open(_os.environ["LANE_LOG"], "a") as f:
            f.write(f"{REVISION} {params['n']} {_os.environ.get('CUDA_VISIBLE_DEVICES')} {_os.getpid()}\\n")
        return run

    return factory


VARIANTS = {name: make(name) for name in DELAY_MS}
'''


def make_repo(path, revision):
    shutil.copytree(PAIRED_FIXTURE, path)
    yml = path / "kernels" / "sleepy" / "kernel.yml"
    yml.write_text(yml.read_text().replace("n: [256]", "n: [256, 512, 1024, 2048]"))
    src = path / "sleepy_bench.py"
    src.write_text(src.read_text() + f"\nREVISION = {revision!r}\n" + LOG_HOOK)
    return path


def test_paired_arms_run_on_the_same_device(tmp_path):
    head, base = make_repo(tmp_path / "head", "head"), make_repo(tmp_path / "base", "base")
    log = tmp_path / "lanes.log"
    env = {"PYTHONPATH": os.pathsep.join([os.path.join(REPO, "python"), str(head)]), "LANE_LOG": str(log)}
    args = (
        "--seeds", "1", "--variants", "steady", "--base-root", str(base), "--first-warmup-s", "0.05", "--warmup-s", "0.05", "--paired-time-cap-s", "0.3",
        "--paired-max-time-cap-s", "0.3", "--time-cap-s", "0.2",
    )
    doc, _ = harness(tmp_path, *args, gpus=2, kernels="kernels", cwd=head, env=env)
    seen = {}
    for line in log.read_text().splitlines():
        revision, n, visible, pid = line.split()
        seen.setdefault(int(n), {}).setdefault(revision, set()).add((visible, pid))
    assert sorted(seen) == [256, 512, 1024, 2048]
    for n, arms in seen.items():
        assert set(arms) == {"head", "base"}, n
        devices = {v for arm in arms.values() for v, _ in arm}
        assert len(devices) == 1, f"n={n}: the arms ran on {devices}"
        # Two worker processes, one per revision.
        assert len({p for arm in arms.values() for _, p in arm}) == 2
    assert {next(iter({v for arm in arms.values() for v, _ in arm})) for arms in seen.values()} == {"0", "1"}
    cases = [c for c in doc["cases"] if c["variant"] == "steady"]
    assert [c["case"] for c in cases] == [f"dtype=fp32,n={n}" for n in (256, 512, 1024, 2048)]  # case order
    for c in cases:
        assert c["paired"]["base_status"] == "ok", c["paired"]
        assert str(c["device"]["index"]) == next(iter({v for arm in seen[c["params"]["n"]].values() for v, _ in arm}))


def test_a_devices_facts_as_nvidia_smi_writes_them():
    from types import SimpleNamespace

    from kernelgate_harness.environment import device_facts

    props = SimpleNamespace(name="NVIDIA H100 80GB HBM3", uuid="8f2c1d3e-0000-1111-2222-333344445555", pci_domain_id=0, pci_bus_id=0x19, pci_device_id=0)
    assert device_facts(props, "233010de") == {
        "name": "NVIDIA H100 80GB HBM3", "sku": "H100-SXM", "uuid": "GPU-8f2c1d3e-0000-1111-2222-333344445555", "pci_bus_id": "00000000:19:00.0",
    }
    # A torch without PCI ids or a UUID: the name and the model only.
    assert device_facts(SimpleNamespace(name="NVIDIA H100 80GB HBM3")) == {"name": "NVIDIA H100 80GB HBM3", "sku": "H100-SXM"}
