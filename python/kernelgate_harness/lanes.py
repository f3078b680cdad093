"""Several GPUs in one runner (`--gpus all|N|i,j`): one lane per GPU, each a thread of the parent
that drives its own worker processes (one per kernel, and for a paired run the base revision's
worker beside it) pinned to its GPU by CUDA_VISIBLE_DEVICES. The parent still never touches a GPU.

The unit of the split is a case of a kernel with all its variants, as for shards over runners
(src/shard/plan.ts): a case's variants run interleaved in one worker, and both arms of a paired
case run on the lane's GPU, so a unit is never cut. The rule is the shards' rule, twinned here:
longest unit first onto the least loaded lane (ties: the lower lane), each lane then keeping the
harness's order. A unit's cost is its seconds in a results document given with `--balance FILE`
(the stored baseline, say), else the estimate: 1 s per variant plus 1e-9 s times the product of the
case's positive numeric axes per variant (docs/scaling.md). The same units give the same split
on every run.

Every case records the GPU that measured it (`cases[].device`); the document lists cases (and the
diagnostics raised while running them) in case order, whatever the number of lanes, so one GPU
and two give the same document apart from the devices and the times."""

import json
import os
import threading
import traceback

# The twin of src/shard/plan.ts VARIANT_OVERHEAD_S and ESTIMATE_S_PER_ELEMENT.
VARIANT_OVERHEAD_S = 1.0
ESTIMATE_S_PER_ELEMENT = 1e-9
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


def estimated_s(params, n_variants):
    """src/shard/plan.ts estimatedSeconds: the overhead per variant plus the case's size."""
    size = 1.0
    for v in params.values():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            continue
        size *= v
    return n_variants * (VARIANT_OVERHEAD_S + size * ESTIMATE_S_PER_ELEMENT)


def measured_s(records, n_variants):
    """src/shard/plan.ts measuredSeconds: a unit's samples, warm-up (both arms of a paired record)
    and the overhead per variant in an earlier results document; None when it timed none."""
    seconds, timed = 0.0, 0
    for r in records:
        t = r.get("timing")
        if not t:
            continue
        base = (r.get("paired") or {}).get("base_timing")
        ms = sum(t.get("samples_ms") or []) + (t.get("warmup_ms") or 0)
        if base:
            ms += sum(base.get("samples_ms") or []) + (base.get("warmup_ms") or 0)
        seconds += ms / 1000 + VARIANT_OVERHEAD_S
        timed += 1
    if timed == 0:
        return None
    return seconds + max(0, n_variants - timed) * VARIANT_OVERHEAD_S


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


def plan(units, n_lanes, balance=None):
    """units: [(id, params, n_variants)] in the harness's order. Returns (lane of each unit, each
    lane's expected seconds): longest first onto the least loaded lane, ties to the lower lane."""
    balance = balance or {}
    cost = []
    for uid, params, n_variants in units:
        got = measured_s(balance.get(uid, []), n_variants)
        cost.append(estimated_s(params, n_variants) if got is None else got)
    load = [0.0] * n_lanes
    owner = [0] * len(units)
    for i in sorted(range(len(units)), key=lambda i: (-cost[i], i)):
        best = min(range(n_lanes), key=lambda k: (load[k], k))
        load[best] += cost[i]
        owner[i] = best
    return owner, load


# -- running -----------------------------------------------------------------------------------


class Lane:
    def __init__(self, position, name, fake):
        self.position = position
        self.name = name  # as CUDA_VISIBLE_DEVICES names it
        self.fake = fake
        self.device = None  # cases[].device, asked of the lane's first worker


def set_case(key):
    """The case a thread is running: what it adds to the document is ordered by it."""
    _local.case = key


def current_case():
    return getattr(_local, "case", None)


def run(harness, manifests, variant_filter, first, names, fake, units_by_kernel):
    """Runs the units over one lane per device name, a thread each, and waits for all. A lane
    that fails outside its workers' containment records its remaining cases as errors; the
    other lanes go on."""
    lanes = [Lane(i, n, fake) for i, n in enumerate(names)]
    flat = [(mi, ci, m, case, nv) for mi, m in enumerate(manifests) for ci, case, nv in units_by_kernel[mi]]
    owner, load = plan([(f"{m.name}/{case.id}", case.params, nv) for _, _, m, case, nv in flat], len(lanes), harness.balance)
    source = "the --balance results where they timed a case, else the size estimate" if harness.balance else "the size estimate"
    gpus = ", ".join(lane.name for lane in lanes)
    shares = "; ".join(f"gpu {lane.name}: {_cases(sum(1 for o in owner if o == lane.position))}, ~{load[lane.position]:.0f} s" for lane in lanes)
    harness.say_lanes(f"{len(flat)} cases over {len(lanes)} GPUs ({gpus}), longest first by {source}: {shares}")
    work = {lane.position: [] for lane in lanes}
    for (mi, ci, m, case, _), lane in zip(flat, owner, strict=True):
        work[lane].append((mi, ci, m, case))
    threads = [
        threading.Thread(
            target=_lane_main,
            args=(harness, lane, work[lane.position], variant_filter, first if lane.position == 0 else None),
            name=f"lane-{lane.name}",
            daemon=True,
        )
        for lane in lanes
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lanes


def _cases(n):
    return f"{n} case" if n == 1 else f"{n} cases"


def _lane_main(harness, lane, units, variant_filter, first):
    _local.prefix = f"gpu {lane.name}: "
    done = set()
    try:
        by_kernel = []
        for mi, ci, m, case in units:
            if by_kernel and by_kernel[-1][0] == mi:
                by_kernel[-1][2].append((ci, case))
            else:
                by_kernel.append((mi, m, [(ci, case)]))
        for mi, m, cases in by_kernel:
            handle = first if (first is not None and mi == 0) else harness.worker_handle(m, lane)
            if lane.device is None:
                lane.device = harness.first_device if (lane.position == 0 and harness.first_device) else harness.ask_device(handle, lane)
            harness.run_kernel(m, variant_filter, handle, cases=cases, lane=lane, mi=mi, on_done=done.add)
        if first is not None and not any(mi == 0 for mi, _, _ in by_kernel):
            first.stop()
    except BaseException as e:  # a bug of the lane itself: its other cases are errors, the rest go on
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        harness.say_lanes(f"the lane of gpu {lane.name} failed: {detail}; its remaining cases are recorded as errors")
        for mi, ci, m, case in units:
            if (mi, ci) not in done:
                harness.lane_failed(m, case, mi, ci, lane, f"the harness's lane for GPU {lane.name} failed before this case: {detail}")
