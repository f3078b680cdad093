"""Builds the results document (kernelgate/results@1): throughput from each kernel's work formula,
the measured ceilings, diagnostics for what the samples show (throttling, a wandering clock),
and atomic writes (the schema's check before each is validation.py's). Datasheet peaks, and whether a rate is above them, are the
TypeScript judge's (src/judge/throughput.ts findMeasurementErrors, from data/gpus.json): Python never judges."""

import hashlib
import json
import os

SCHEMA_ID = "kernelgate/results@1"
# Kept samples whose SM clocks spread wider than this (relative to their median) are flagged.
CLOCK_SPREAD_FLAG = 0.10


def run_selection(args, cases):
    """run.selection: what the run was asked to measure (--only, --ci, --variants, --case-params,
    and `cases`, the ids of --cases), so the judge can tell a run cut short from a chosen subset
    (src/judge/coverage.ts). Written before the first case: a harness killed later leaves it."""
    only, variants = ([x for x in (value or "").split(",") if x] for value in (args.only, args.variants))
    selection = {"ci": bool(args.ci)}
    if only:
        selection["kernels"] = only
    if variants:
        selection["variants"] = variants
    if args.case_params:
        selection["case_params"] = args.case_params
    if cases is not None:
        selection["cases"] = sorted(cases)
    return selection


def throughput(case):
    """tflops and gbps of one timed case (copy-ceiling % is added by add_ceiling_percentages once
    the ceilings are known)."""
    timing, work = case.get("timing"), case.get("work")
    if not timing or not work or timing["median_ms"] <= 0:
        return None
    s = timing["median_ms"] * 1e-3
    return {"tflops": work["flops"] / s / 1e12, "gbps": work["bytes"] / s / 1e9}


def case_diagnostics(case):
    """Diagnostics one timed case raises: throttled samples, a wandering clock."""
    diags = []
    t = case.get("timing")
    who = f"{case['kernel']}/{case['variant']} {case['case']}"
    base = {"source": f"kernel:{case['kernel']}", "kernel": case["kernel"], "variant": case["variant"]}
    if t and t.get("n_discarded_throttled"):
        message = f"{who}: {t['n_discarded_throttled']} samples discarded, taken at an SM clock under 75 % of the usual one"
        diags.append({**base, "level": "warning", "code": "gpu-throttled", "message": message})
    clocks = (t or {}).get("sm_clock_mhz") or []
    if len(clocks) >= 3:
        med = sorted(clocks)[len(clocks) // 2]
        spread = (max(clocks) - min(clocks)) / med if med else 0
        if spread > CLOCK_SPREAD_FLAG:
            message = (
                f"{who}: SM clock moved {min(clocks):.0f}–{max(clocks):.0f} MHz ({100 * spread:.0f} % of its median) during the samples: "
                "compare clock-normalised or re-run"
            )
            diags.append({**base, "level": "warning", "code": "clock-unstable", "message": message})
    return diags


def ceilings_from(cases):
    """Measured ceilings from the gemm calibration's cases."""
    ceil = {}
    gemm = {}
    for c in cases:
        if c["kernel"] != "gemm" or c["status"] != "ok" or not c.get("throughput"):
            continue
        if c["params"].get("op") == "copy":
            ceil["copy_gbps"] = c["throughput"]["gbps"]
        elif c["params"].get("op") == "matmul":
            gemm[c["params"]["dtype"]] = c["throughput"]["tflops"]
    if gemm:
        ceil["gemm_tflops"] = gemm
    return ceil


def add_ceiling_percentages(cases, ceilings):
    copy = ceilings.get("copy_gbps")
    if not copy:
        return
    for c in cases:
        if c.get("throughput"):
            c["throughput"]["pct_copy_ceiling"] = 100 * c["throughput"]["gbps"] / copy


def kernel_info(manifest, cases):
    """The schema's KernelInfo: each variant's overall status over this run's cases."""
    variants = []
    for v in manifest.variants:
        entry = {k: v[k] for k in ("name", "role", "backend", "description") if k in v}
        mine = [c for c in cases if c["kernel"] == manifest.name and c["variant"] == v["name"]]
        if mine:
            statuses = {c["status"] for c in mine}
            if statuses & {"error", "timeout"}:
                entry["status"] = "error"
                bad = next(c for c in mine if c["status"] in ("error", "timeout"))
                entry["reason"] = f"{bad['case']}: {bad.get('reason') or bad.get('error', {}).get('message', bad['status'])}"
            elif statuses == {"skipped"}:
                entry["status"] = "skipped"
                entry["reason"] = mine[0].get("reason", "")
            else:
                entry["status"] = "ok"
        variants.append(entry)
    info = {"name": manifest.name, "variants": variants}
    for k in ("description", "flops_formula", "bytes_formula"):
        if getattr(manifest, k):
            info[k] = getattr(manifest, k)
    return info


def write_atomic(path, doc):
    """Writes doc as JSON through a temporary file and returns the sha256 of the bytes written,
    computed from the bytes in memory (never re-read: the file could have changed by then)."""
    data = (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode("utf-8")
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return hashlib.sha256(data).hexdigest()
