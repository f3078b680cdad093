"""Several GPUs in one runner (`--gpus all|N|i,j`): one lane per GPU, each a thread of the parent
that drives its own worker processes (one per kernel, and for a paired run the base revision's
worker beside it) pinned to its GPU by CUDA_VISIBLE_DEVICES. The parent still never touches a GPU.

The unit is a case of a kernel with all its variants, as for shards over runners
(src/shard/plan.ts): a case's variants run interleaved in one worker, and both arms of a paired
case run on the lane's GPU, so a unit is never cut. The lanes share one queue of the units: each
lane takes the next when it has finished one, so they finish within about one unit of each other
whatever the units turn out to cost. The queue is ordered longest first (ties: the harness's
order) by the shards' cost rule: what a unit took in a results document given with `--balance FILE`
(the stored run of this GPU model, which the action passes when it runs on several GPUs:
`measured_s`), else the estimate: its variants × the time cap the run uses plus the overhead per
variant (`estimated_s`; docs/scaling.md). A fixed split by the same rule (`plan`, the twin of the
shards') was 1.9-12.1 % apart on the recorded nights at best: eight cases are 80 % of a night and
each moves 10-30 % between nights. Which GPU measures a case may change from run to run.

A lane keeps a kernel's workers while the queue holds cases of that kernel, so a worker starts
once per kernel and lane; the kernel's first case on a lane gets the first-case warm-up. Every
case records the GPU that measured it (`cases[].device`); the document lists cases (and the
diagnostics raised while running them) in case order, whatever the number of lanes and the order
they finished in, so one GPU and two give the same document apart from the devices and the times.
`run.lanes` records what each lane took and how long it was busy."""

import collections
import json
import os
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Protocol

# The twins of src/shard/plan.ts VARIANT_OVERHEAD_S, VARIANT_CALLS and ESTIMATE_OVERHEAD_S
# (docs/scaling.md), calibrated on the case lines ("time: set-up and verification … warm-ups …
# pairs … finish …") of test/fixtures/recorded/nightly-h100-run32 (H100 80GB HBM3, 2026-11-26): a
# unit's time outside its pairs, fitted by least squares over its variants (the kernels' first cases
# left out: their case-wide warm-up is each lane's, not the unit's), is 0.131 s per variant plus
# 27.8 calls of each variant's median time (verification over the seeds, the repeat and
# timed-output checks, the burst warm-ups of both arms); warm runs 32-39 gave 0.11-0.13 s and
# 28-32 calls. Spread evenly over the 217 variants the same time is 0.44 s a variant (run 32;
# warm paired runs 24-39: 0.42-0.56 s), the estimate's overhead.
VARIANT_OVERHEAD_S = 0.13
VARIANT_CALLS = 28
ESTIMATE_OVERHEAD_S = 0.44
# The harness's defaults (cli.py --paired-time-cap-s, --time-cap-s): a variant's seconds of samples
# before it stops undecided, both arms together for a paired one.
PAIRED_TIME_CAP_S = 3.0
TIME_CAP_S = 2.0
# A test hook: on the CPU, pretend this many devices are visible (each lane's workers still run on
# the CPU, with CUDA_VISIBLE_DEVICES set to the lane's number), so CI can run the lanes.
FAKE_ENV = "KERNELGATE_FAKE_GPUS"

_local = threading.local()


class GpuSpecError(ValueError):
    """A bad --gpus value; the message names the flag, the value and what is visible."""


def prefix():
    """The progress lines' lane label ('gpu 1: ') in a lane's thread, else ''."""
    return getattr(_local, "prefix", "")


def visible_devices(device):
    """The devices this harness may use, as CUDA_VISIBLE_DEVICES names them ('0', '1', or UUIDs).
    On the CPU none, unless the test hook fakes some."""
    if device != "cuda":
        fake = os.environ.get(FAKE_ENV, "").strip()
        if not fake:
            return []
        if not fake.isdigit() or int(fake) < 1:
            raise GpuSpecError(f"{FAKE_ENV} must be a positive number of fake devices, got {fake!r}")
        return [str(i) for i in range(int(fake))]
    import torch

    count = torch.cuda.device_count()
    named = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if named:
        return [x.strip() for x in named.split(",") if x.strip()][:count]
    return [str(i) for i in range(count)]


def choose(spec, visible):
    """--gpus: `all` (every visible device), `N` (the first N), or `i,j,...` (positions in the
    visible list, at least two, or one with a trailing comma). Returns the chosen device names;
    [] means one lane with no device of its own (the CPU)."""
    spec = (spec or "all").strip()
    if not visible:
        if spec in ("all", "1"):
            return []
        raise GpuSpecError(f"--gpus {spec}: no CUDA device is visible (the harness runs on the CPU); use --gpus all or 1")
    shown = ",".join(visible)
    if spec == "all":
        return list(visible)
    if spec.isdigit():
        n = int(spec)
        if not 1 <= n <= len(visible):
            raise GpuSpecError(f"--gpus {spec}: {len(visible)} CUDA device(s) are visible ({shown}); give 1 to {len(visible)}, all, or positions such as 0,1")
        return list(visible[:n])
    parts = [p.strip() for p in spec.split(",")]
    if parts and parts[-1] == "":
        parts = parts[:-1]
    if "," not in spec or not parts or not all(p.isdigit() for p in parts):
        raise GpuSpecError(f"--gpus {spec}: expected all, a count such as 2, or positions such as 0,1")
    positions = [int(p) for p in parts]
    bad = [p for p in positions if p >= len(visible)]
    if bad:
        raise GpuSpecError(f"--gpus {spec}: position {bad[0]} is not visible: {len(visible)} CUDA device(s) are ({shown})")
    if len(set(positions)) != len(positions):
        raise GpuSpecError(f"--gpus {spec}: a device is named twice")
    return [visible[p] for p in positions]


def device_index(name, position):
    """cases[].device.index: the device's number as CUDA_VISIBLE_DEVICES names it, else (a UUID)
    its position in the visible list."""
    return int(name) if name.isdigit() else position


# -- the split ---------------------------------------------------------------------------------


def estimated_s(n_variants, cap_s):
    """src/shard/plan.ts estimatedSeconds: each variant at the time cap the run uses (paired:
    --paired-time-cap-s, both arms; unpaired: --time-cap-s) plus the overhead per variant. Not the
    case's size: 10⁻⁹ s per element of its axes put 6.8 million seconds on 30 of 32 cases
    (issue 27)."""
    return n_variants * (cap_s + ESTIMATE_OVERHEAD_S)


def record_s(r, paired):
    """What one variant's record took, as its run will take it again: the seconds of its pairs
    (`paired.seconds`, both arms' samples and the round trips between them), else its samples
    (both arms' where it has a base arm; twice the head's when the run is paired and the record
    was not), plus the overhead per variant and VARIANT_CALLS calls of its median time. Not
    `warmup_ms`: a kernel's first case books its case-wide warm-up to every variant (27.6 s over the
    first attention case of nightly-h100-run32, whose case line says 5.2 s), and that warm-up is
    each lane's."""
    t = r.get("timing")
    if not t:
        return VARIANT_OVERHEAD_S
    p = r.get("paired") or {}
    pairs = p.get("seconds")
    if pairs is None:
        base = p.get("base_timing")
        pairs = sum(t.get("samples_ms") or []) / 1000
        if base:
            pairs += sum(base.get("samples_ms") or []) / 1000
        elif paired:
            pairs *= 2
    return pairs + VARIANT_OVERHEAD_S + VARIANT_CALLS * (t.get("median_ms") or 0) / 1000


def measured_s(records, n_variants, cap_s, paired=True):
    """src/shard/plan.ts measuredSeconds: what a unit's records in an earlier results document
    took (record_s), each variant they lack estimated; None when they timed none."""
    if not any(r.get("timing") for r in records):
        return None
    return sum(record_s(r, paired) for r in records) + max(0, n_variants - len(records)) * (cap_s + ESTIMATE_OVERHEAD_S)


def read_balance(path):
    """--balance FILE: an earlier results document's records by kernel/case id."""
    if not path:
        return {}
    try:
        with open(path) as f:
            doc = json.load(f)
        cases = doc["cases"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GpuSpecError(f"--balance {path}: cannot read a results document's cases: {e}") from e
    by_unit = {}
    for c in cases:
        if isinstance(c, dict) and "kernel" in c and "case" in c:
            by_unit.setdefault(f"{c['kernel']}/{c['case']}", []).append(c)
    return by_unit



def costs(units, balance=None, paired=True, cap_s=None):
    """units: [(id, params, n_variants)]. Each unit's expected seconds (measured_s from `balance`,
    else estimated_s) and whether `balance` measured it. cap_s: the run's time cap per variant
    (default: the harness's, paired or not)."""
    balance = balance or {}
    cap = cap_s if cap_s is not None else (PAIRED_TIME_CAP_S if paired else TIME_CAP_S)
    cost, measured = [], []
    for uid, _params, n_variants in units:
        got = measured_s(balance.get(uid, []), n_variants, cap, paired)
        measured.append(got is not None)
        cost.append(estimated_s(n_variants, cap) if got is None else got)
    return cost, measured


def queue_order(cost, n_lanes):
    """The order the lanes take the units in: longest first, ties in the harness's order. One
    lane has nothing to balance and keeps the harness's order."""
    if n_lanes < 2:
        return list(range(len(cost)))
    return sorted(range(len(cost)), key=lambda i: (-cost[i], i))


def queue_line(names, cost, measured, balance_path, paired, cap_s):
    """The harness's first line on several GPUs: the queue's order and where its seconds come
    from (the --balance file's timings, or the estimate)."""
    if len(names) < 2:
        return f"{_cases(len(cost))} on GPU {names[0]}, in the harness's order"
    flag = "--paired-time-cap-s" if paired else "--time-cap-s"
    rule = f"the estimate (variants × {cap_s:g} s {flag} + {ESTIMATE_OVERHEAD_S:g} s)"
    source = f"the timings in --balance {balance_path}, else {rule}" if balance_path else rule
    n = sum(measured)
    how = "estimated" if not balance_path else ("measured" if n == len(cost) else f"{n} measured, {len(cost) - n} estimated")
    return (
        f"{_cases(len(cost))} over {len(names)} GPUs ({', '.join(names)}) from one queue, longest first by {source}: "
        f"~{_seconds(sum(cost))} in all ({how}); each GPU takes the next case when it finishes one"
    )


def lanes_line(lanes):
    """The harness's line once the lanes are done: what each took and how long it was busy, and
    how far apart the busiest and the least busy are (of the busiest)."""
    shares = []
    for lane in lanes:
        failed = ", then failed" if lane.failed else ""
        shares.append(f"gpu {lane.name}: {_cases(lane.taken)}, {_busy(lane.busy_s)} busy{failed}")
    return f"lanes: {'; '.join(shares)} ({apart_pct(lanes):.1f} % apart)"


def apart_pct(lanes):
    most = max(lane.busy_s for lane in lanes)
    return 100 * (most - min(lane.busy_s for lane in lanes)) / most if most > 0 else 0.0


def lanes_record(lanes, measured, balance_path):
    """run.lanes (schema/results.schema.json): the queue's order and source, and each lane's share."""
    record = {
        "order": "longest first" if len(lanes) > 1 else "harness",
        "source": "balance" if balance_path else "estimate",
        "measured_cases": sum(measured),
        "lanes": [],
        "apart_pct": round(apart_pct(lanes), 1),
    }
    if balance_path:
        record["balance"] = balance_path
    for lane in lanes:
        share = {"gpu": lane.name, "index": device_index(lane.name, lane.position), "cases": lane.taken, "busy_s": round(lane.busy_s, 3)}
        if lane.failed:
            share["failed"] = lane.failed
        record["lanes"].append(share)
    return record


def _seconds(s):
    return f"{s:.0f} s" if s < 600 else f"{s / 60:.1f} min"


def _busy(s):
    return f"{s:.1f} s" if s < 10 else _seconds(s)


def _cases(n):
    return f"{n} case" if n == 1 else f"{n} cases"


# -- running -----------------------------------------------------------------------------------


class Lane:
    def __init__(self, position, name, fake):
        self.position = position
        self.name = name  # as CUDA_VISIBLE_DEVICES names it
        self.fake = fake
        self.device = None  # cases[].device, asked of the lane's first worker
        self.taken = 0  # units it took from the queue
        self.busy_s = 0.0  # the seconds it spent on them, its workers' start-ups included
        self.failed = None  # why it stopped taking units, when it failed outside its workers


class Queue:
    """The units in the order the lanes take them, each taken once."""

    def __init__(self, order, kernel_of):
        self.lock = threading.Lock()
        self.pending = collections.deque(order)
        self.left = collections.Counter(kernel_of[i] for i in order)  # units not yet taken, by kernel
        self.kernel_of = kernel_of

    def take(self):
        """The next unit's index, or None when every unit has been taken."""
        with self.lock:
            if not self.pending:
                return None
            i = self.pending.popleft()
            self.left[self.kernel_of[i]] -= 1
            return i

    def holds(self, kernel):
        """Whether a unit of this kernel is still to be taken."""
        with self.lock:
            return self.left[kernel] > 0

    def drain(self):
        """The units no lane took (every lane failed), emptying the queue."""
        with self.lock:
            rest = list(self.pending)
            self.pending.clear()
            return rest


def set_case(key):
    """The case a thread is running: what it adds to the document is ordered by it."""
    _local.case = key


def current_case():
    return getattr(_local, "case", None)


@dataclass(frozen=True)
class LanePlan:
    """What the lanes are told of the run (cli.Harness.lane_plan): paired or not, a variant's time
    cap, --balance's records by unit and its file (None when it gave none), and the first lane's
    device as the environment probe found it (None: its first worker is asked)."""

    paired: bool
    cap_s: float
    balance: dict[str, Any]
    balance_path: str | None
    first_device: dict[str, Any] | None


class LaneHost(Protocol):
    """What a lane asks of the harness (cli.Harness), and nothing else: the workers of a kernel on
    its GPU, the device a worker runs on, one case run and recorded, the document written, a case
    no lane could run recorded as an error, and a line of the log."""

    def worker_handle(self, m: Any, lane: "Lane") -> Any: ...

    def base_worker(self, m: Any, lane: "Lane") -> Any: ...

    def ask_device(self, handle: Any, lane: "Lane") -> dict[str, Any]: ...

    def run_unit(self, m: Any, variant_filter: Any, case: Any, handle: Any, base: Any, device: Any, first: bool) -> bool: ...

    def write(self) -> None: ...

    def lane_failed(self, m: Any, case: Any, mi: int, ci: int, lane: "Lane | None", message: str) -> None: ...

    def say_lanes(self, line: str) -> None: ...


def run(
    host: LaneHost, plan: LanePlan, manifests: list[Any], variant_filter: Any, first: Any, names: list[str], fake: bool, units_by_kernel: list[Any]
) -> tuple[list[Lane], dict[str, Any]]:
    """Runs the units over one lane per device name, a thread each, from one queue, and waits for
    all. A lane that fails outside its workers' containment records the case it was running as an
    error and takes no more; the other lanes take the rest. first: the environment probe's
    worker, lane 0's worker of the first kernel. host: a LaneHost; returns the lanes and their
    record (run.lanes)."""
    lanes = [Lane(i, n, fake) for i, n in enumerate(names)]
    flat = [(mi, ci, m, case) for mi, m in enumerate(manifests) for ci, case, _ in units_by_kernel[mi]]
    paired, cap = plan.paired, plan.cap_s
    units = [(f"{m.name}/{case.id}", case.params, nv) for mi, m in enumerate(manifests) for _, case, nv in units_by_kernel[mi]]
    cost, measured = costs(units, plan.balance, paired, cap)
    balance_path = plan.balance_path
    host.say_lanes(queue_line(names, cost, measured, balance_path, paired, cap))
    queue = Queue(queue_order(cost, len(lanes)), [u[0] for u in flat])
    threads = [
        threading.Thread(
            target=_lane_main,
            args=(host, plan, lane, queue, flat, variant_filter, first if lane.position == 0 else None),
            name=f"lane-{lane.name}",
            daemon=True,
        )
        for lane in lanes
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rest = queue.drain()
    if rest:
        host.say_lanes(f"every lane failed: {_cases(len(rest))} no lane took are recorded as errors")
        for i in rest:
            mi, ci, m, case = flat[i]
            host.lane_failed(m, case, mi, ci, None, "every lane of the harness failed before this case (the harness's log says why)")
    record = lanes_record(lanes, measured, balance_path)
    host.say_lanes(lanes_line(lanes))
    return lanes, record


def _lane_main(host: LaneHost, plan: LanePlan, lane: Lane, queue: Queue, units: list[Any], variant_filter: Any, first: Any) -> None:
    _local.prefix = f"gpu {lane.name}: "
    workers = {}  # kernel index -> (head, base): kept while the queue holds cases of the kernel
    warmed = set()  # kernels whose first case on this lane has run (the first-case warm-up)
    current = None
    try:
        while (i := queue.take()) is not None:
            current, t0 = units[i], time.time()
            mi, ci, m, case = current
            lane.taken += 1
            if mi not in workers:
                head = first if (first is not None and mi == 0) else host.worker_handle(m, lane)
                workers[mi] = (head, host.base_worker(m, lane))
            head, base = workers[mi]
            if lane.device is None:
                lane.device = plan.first_device if (lane.position == 0 and plan.first_device) else host.ask_device(head, lane)
            set_case((mi, ci))
            host.say_lanes(f"== {m.name} {case.id} ==")
            host.run_unit(m, variant_filter, case, head, base, lane.device, mi not in warmed)
            current = None
            warmed.add(mi)
            host.write()
            lane.busy_s += time.time() - t0
            if not queue.holds(mi):
                _stop(workers.pop(mi))
    except BaseException as e:  # a bug of the lane itself: its case is an error, the other lanes go on
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        lane.failed = detail
        if current is None:
            host.say_lanes(f"the lane of gpu {lane.name} failed: {detail}; it takes no more cases, the other lanes take the rest")
        else:
            mi, ci, m, case = current
            lane.busy_s += time.time() - t0
            host.say_lanes(
                f"the lane of gpu {lane.name} failed: {detail}; its case {m.name}/{case.id} is recorded as an error, "
                "it takes no more cases, the other lanes take the rest"
            )
            host.lane_failed(m, case, mi, ci, lane, f"the harness's lane for GPU {lane.name} failed while running this case: {detail}")
    finally:
        for pair in workers.values():
            _stop(pair)
        if first is not None:
            first.stop()  # lane 0 may have taken no case of the first kernel (a stopped worker stops again idly)


def _stop(pair):
    for handle in pair:
        if handle is not None:
            handle.stop()
