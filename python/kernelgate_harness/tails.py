"""Tails on the device: each manifest's `ci_cases` (the small and tail shapes: widths that are no
multiple of a block, one row, one element) verified on the run's own device after the timed cases,
untimed. The timed `cases` are usually powers of two, where a kernel that pads its last block
wrongly is right; without this step such a kernel passed every GPU run (issue 30). The records go
to the document's `tails`, apart from `cases`: the timed set, its coverage and its baselines are
unchanged, and the gate fails on a tail that is not verified (src/judge/tails.ts)."""

import time

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
    timeout = harness.args.timeout_per_case or m.timeout_s
    for case, names in todo:
        records = harness.run_case(handle, m, case, names, timeout, timing=False)
        for v in names:
            t = record(m, case, v, records[v])
            with harness.lock:
                harness.doc["tails"].append(t)
            say(line(t))
    harness.add_stage_seconds({"tails": time.time() - t0})


def verify_each(harness, manifests, variant_filter, worker_handle, say):
    """Each kernel's tails in a worker of its own (after the lanes, whose workers are stopped)."""
    for m in manifests:
        if not units_of(harness, m, variant_filter):
            if wanted(harness.args):
                with harness.lock:
                    harness.doc.setdefault("tails", [])
            continue
        handle = worker_handle(m, harness.options())
        try:
            verify_kernel(harness, m, variant_filter, handle, say)
        finally:
            handle.stop()
