"""Tails on the device: each manifest's `ci_cases` (the small and tail shapes: widths that are no
multiple of a block, one row, one element) verified on the run's own device after the timed cases,
untimed. The timed `cases` are usually powers of two, where a kernel that pads its last block
wrongly is right; without this step such a kernel passed every GPU run (issue 30). The records go
to the document's `tails`, apart from `cases`: the timed set, its coverage and its baselines are
unchanged, and the gate fails on a tail that is not verified (src/judge/tails.ts)."""

import collections
import threading
import time

from . import lanes
from .paired import HARNESS_ONLY_REASON, IDENTICAL_REASON, identical_record

# The record's fields copied from the worker's (no timing: verified only).
KEPT = ("reason", "correctness", "error")


def wanted(args):
    """Whether this run verifies the tails: not with --ci (its cases are the tails already) nor
    --no-tails."""
    return not (args.ci or args.no_tails)


def record(m, case, variant, rec):
    out = {"kernel": m.name, "variant": variant, "case": case.id, "params": case.params, "status": rec["status"]}
    for k in KEPT:
        if k in rec:
            out[k] = rec[k]
    return out


def line(t):
    """The log's line for one tail: `tail softmax/triton W=7,dtype=fp32 FAIL rel_l2=4.1e-01`."""
    head = f"tail {t['kernel']}/{t['variant']} {t['case']}"
    if t["status"] in ("ok", "fail"):
        rel = t.get("correctness", {}).get("rel_l2")
        return f"{head} {t.get('correctness', {}).get('status', '?')} rel_l2={'n/a' if rel is None else f'{rel:.1e}'}"
    if t["status"] == "error":
        e = t.get("error", {})
        return f"{head} ERROR {e.get('kind', '')}: {e.get('message', '')}"
    return f"{head} {t['status'].upper()} {t.get('reason', '')}"


def summary(records):
    """`; tails: 9 verified, 3 not verified` for the harness's last line ('' without tails)."""
    if not records:
        return ""
    bad = sum(1 for t in records if t["status"] not in ("ok", "skipped"))
    return f"; tails: {len(records) - bad} verified, {bad} not verified" if bad else f"; tails: {len(records)} verified"


def units_of(harness, m, variant_filter):
    """[(case, variant names)] of kernel m's tails to verify: its ci_cases but those this run
    verified among its cases already. With --cases (a shard's list) only when the shard has a case
    of the kernel: the merge keeps one record of each tail."""
    if not wanted(harness.args):
        return []
    if harness.selected is not None and not any(k.split("/", 1)[0] == m.name for k in harness.selected):
        return []
    verified = {c.id for c in harness.cases_of(m)}
    return [
        (c, names)
        for c in m.ci_cases
        if c.id not in verified and (names := [v["name"] for v in harness.variants_of(m, c, variant_filter)])
    ]


def verify_kernel(harness, m, variant_filter, handle, say):
    """Verifies kernel m's tails in this worker (the one that ran its timed cases: no new start-up),
    timing off; appends their records to doc['tails'] (present, maybe empty, once tails are wanted)."""
    if not wanted(harness.args):
        return
    with harness.lock:
        harness.doc.setdefault("tails", [])
    todo = units_of(harness, m, variant_filter)
    if not todo:
        return
    t0 = time.time()
    say(f"{m.name}: {len(todo)} tail cases (ci_cases) verified on {harness.device}, untimed")
    for case, names in todo:
        verify_unit(harness, m, case, names, handle, say)
    harness.add_stage_seconds({"tails": time.time() - t0})


def first_seed_only(harness, m, case, names):
    """The variants of a tail case verified on the first seed only (--verify-identical first_seed,
    the default): those --identical names, when the base revision's manifest has this tail case
    too (its push verified them on it with every seed). A tail case the pull request added, and
    every tail under --verify-identical all, is verified on every seed."""
    if harness.args.verify_identical != "first_seed" or not harness.identical:
        return []
    bm = (harness.base_manifests or {}).get(m.name)
    if bm is None or case.id not in {c.id for c in bm.ci_cases}:
        return []
    return [v for v in names if (m.name, v) in harness.identical]


def verify_unit(harness, m, case, names, handle, say, where=""):
    """One tail case's variants verified in `handle`; their records appended to doc['tails'], an
    identical variant's verified on the first seed only with `identical` saying so."""
    timeout = harness.args.timeout_per_case or m.timeout_s
    one = first_seed_only(harness, m, case, names)
    records = harness.run_case(handle, m, case, names, timeout, timing=False, first_seed_only=tuple(one))
    for v in names:
        t = record(m, case, v, records[v])
        if v in one and t["status"] in ("ok", "fail"):
            only = (m.name, v) in harness.pairing.harness_only
            t["identical"] = identical_record("first_seed", HARNESS_ONLY_REASON if only else IDENTICAL_REASON)
        with harness.lock:
            harness.doc["tails"].append(t)
        say(f"{where}{line(t)}")


def verify_each(harness, manifests, variant_filter, gpus, say):
    """Every kernel's tails after the lanes (whose workers are stopped), spread over the run's GPUs:
    one queue of tail cases in the harness's order, each GPU's thread taking the next and keeping
    a worker per kernel it met. On two H100s the tails took 34 s on one GPU while the other waited
    (run 76, 2026-11-26). The records are put back in the harness's order at the end, so the
    document is the same whatever the GPU count."""
    if not wanted(harness.args):
        return
    with harness.lock:
        harness.doc.setdefault("tails", [])
    queue = collections.deque((m, case, names) for m in manifests for case, names in units_of(harness, m, variant_filter))
    if not queue:
        return
    t0 = time.time()
    kernels = ", ".join(f"{m.name} {sum(1 for q in queue if q[0] is m)}" for m in manifests if any(q[0] is m for q in queue))
    say(f"tails: {len(queue)} tail cases (ci_cases: {kernels}) verified on {harness.device} over {len(gpus)} GPU(s) ({', '.join(gpus)}), untimed")
    order = {(m.name, case.id): i for i, (m, case, _) in enumerate(queue)}
    lock = threading.Lock()
    fake = harness.device != "cuda"
    threads = [threading.Thread(target=_gpu_tails, args=(harness, queue, lock, lanes.Lane(i, gpu, fake), say), daemon=True) for i, gpu in enumerate(gpus)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with harness.lock:
        harness.doc["tails"].sort(key=lambda t: order.get((t["kernel"], t["case"]), -1))
    harness.add_stage_seconds({"tails": time.time() - t0})


def _gpu_tails(harness, queue, lock, lane, say):
    """One GPU's thread of verify_each: the next tail case from the queue until none is left."""
    handles = {}
    try:
        while True:
            with lock:
                if not queue:
                    return
                m, case, names = queue.popleft()
            try:
                if m.name not in handles:
                    handles[m.name] = harness.worker_handle(m, lane)
                verify_unit(harness, m, case, names, handles[m.name], say, where=f"gpu {lane.name}: ")
            except Exception as e:  # a tail this thread could not verify is an error, not lost
                message = f"the tails' thread of gpu {lane.name} failed: {type(e).__name__}: {e}"
                for v in names:
                    t = record(m, case, v, {"status": "error", "error": {"kind": "other", "message": message}})
                    with harness.lock:
                        harness.doc["tails"].append(t)
                    say(f"gpu {lane.name}: {line(t)}")
    finally:
        for h in handles.values():
            h.stop()
