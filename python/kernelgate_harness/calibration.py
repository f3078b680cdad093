"""The ceilings every run reports (copy bandwidth, GEMM rate): from the run's own gemm cases, or
the gemm kernel's cases run quietly when this run did not select it."""

import json
import math
import os
from collections.abc import Callable
from typing import Any

from .manifest import load_manifest, matches
from .progress import say
from .results import ceilings_from, throughput
from .workers import WorkerHandle


def calibration_manifest(kernels_dir: str) -> tuple[str | None, str | None]:
    """The calibration kernel's manifest: the repository's own kernels/gemm when it has one, else
    the one kernelgate ships beside this harness (<kernelgate>/kernels/gemm, found as the harness
    is: python/kernelgate_harness/ → <kernelgate>/), so any repository's run measures its ceilings.
    Returns (path, import_root): import_root is kernelgate's root for the shipped one, else None;
    (None, what was looked for) when neither is there."""
    own = os.path.join(kernels_dir, "gemm", "kernel.yml")
    if os.path.exists(own):
        return own, None
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shipped = os.path.join(root, "kernels", "gemm", "kernel.yml")
    if os.path.exists(shipped):
        return shipped, root
    return None, f"{own} nor {shipped}"


def calibrate(kernels_dir: str, options: dict[str, Any], run_case: Callable[..., dict[str, dict[str, Any]]],
              diag: Callable[..., None]) -> dict[str, Any] | None:
    """The gemm kernel's cases, run quietly, when this run did not select it: every run
    reports its ceilings."""
    path, root = calibration_manifest(kernels_dir)
    if path is None:
        diag("warning", "no-ceilings", f"no {root}: copy and GEMM ceilings not measured")
        return None
    m = load_manifest(path)
    # The action's own gemm kernel is imported from the action's checkout (import_root), not
    # from the repository measured, which has no kernels/gemm of its own.
    shipped = {"import_root": root} if root is not None else {}
    handle = WorkerHandle(m, {**options, "seeds": [0], "fault": None, **shipped})
    cases = []
    try:
        for case in m.cases:
            variants = [v["name"] for v in m.variants if matches(case.params, v.get("only"))]
            records = run_case(handle, m, case, variants, m.timeout_s)
            for v, rec in records.items():
                c = {"kernel": m.name, "variant": v, "case": case.id, "params": case.params, **rec}
                c["throughput"] = throughput(c)
                cases.append(c)
    finally:
        handle.stop()
    say("ceilings measured (gemm calibration, not reported as cases)")
    return ceilings_from(cases)


class CeilingsError(Exception):
    """--ceilings FILE that cannot be used; the message names the file, the field and the value."""


def read_ceilings(path: str) -> dict[str, Any]:
    """--ceilings FILE: the ceilings a stored run of this GPU model measured, written by the action
    when this run's calibration kernel is identical in build and sources to the one that measured
    them (src/measure/ceilings.ts): {"copy_gbps": number, "gemm_tflops": {dtype: number}, "source":
    text}, each number finite and above 0."""
    try:
        with open(path) as f:
            raw = json.load(f)
    except (OSError, ValueError) as e:
        raise CeilingsError(f"--ceilings {path}: cannot read a JSON document: {e}") from e
    if not isinstance(raw, dict):
        raise CeilingsError(f"--ceilings {path}: expected an object, got {type(raw).__name__}")

    def rate(value: Any, field: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise CeilingsError(f"--ceilings {path}: {field} must be a number above 0, got {value!r}")
        return float(value)

    gemm = raw.get("gemm_tflops")
    if not isinstance(gemm, dict) or not gemm:
        raise CeilingsError(f"--ceilings {path}: gemm_tflops must be an object of rates by dtype, got {gemm!r}")
    source = raw.get("source")
    if not isinstance(source, str) or not source.strip():
        raise CeilingsError(f"--ceilings {path}: source must name the run that measured them, got {source!r}")
    return {
        "copy_gbps": rate(raw.get("copy_gbps"), "copy_gbps"),
        "gemm_tflops": {str(k): rate(v, f"gemm_tflops.{k}") for k, v in gemm.items()},
        "source": source,
    }
