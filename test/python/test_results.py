"""Throughput, diagnostics and schema checks of the results document (kernels/harness/results.py)."""

import pytest

from kernels.harness.environment import normalise_sku
from kernels.harness.results import add_ceiling_percentages, case_diagnostics, ceilings_from, schema_errors, throughput

H100 = {"gpu": {"name": "NVIDIA H100 80GB HBM3", "sku": "H100-SXM"}}


def timed_case(median_ms, flops, nbytes=1e9, clocks=None, dtype="fp16", kernel="attention", variant="triton_fa2"):
    timing = {"method": "events", "samples_ms": [median_ms] * 10, "median_ms": median_ms, "n_samples": 10, "stop_reason": "converged", "n_discarded_throttled": 0}
    if clocks:
        timing["sm_clock_mhz"] = clocks
    return {"kernel": kernel, "variant": variant, "case": "dtype=fp16,B=16,H=96,S=4096,D=128,causal=true", "params": {"dtype": dtype}, "status": "ok", "timing": timing, "work": {"flops": flops, "bytes": nbytes}}


def test_throughput_and_percent_of_peak():
    c = timed_case(10.0, 5e12)
    tp = throughput(c, H100)
    assert tp["tflops"] == 500.0
    assert tp["gbps"] == 100.0
    assert round(tp["pct_peak_tflops"], 2) == round(100 * 500 / 989.4, 2)


def test_the_seed_reports_1075_tflops_is_flagged_above_peak():
    # The seed report: SDPA causal B16 H96 S4096 D128 in 12.27 ms, counted with the non-causal FLOPs.
    flops_non_causal = 4 * 16 * 96 * 4096 * 4096 * 128
    c = timed_case(12.27, flops_non_causal)
    c["throughput"] = throughput(c, H100)
    diags = case_diagnostics(c, H100)
    assert [d["code"] for d in diags] == ["throughput-above-peak"]
    assert diags[0]["level"] == "error"
    assert diags[0]["message"] == (
        "attention/triton_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=true: 1075.3 TFLOPS is above the "
        "H100-SXM fp16 dense peak of 989.4 TFLOPS: the FLOP count or the timing is wrong"
    )


def test_halved_causal_count_is_not_flagged():
    c = timed_case(12.27, 4 * 16 * 96 * 4096 * 4096 * 128 / 2)
    c["throughput"] = throughput(c, H100)
    assert case_diagnostics(c, H100) == []


def test_wandering_clock_is_flagged():
    c = timed_case(1.0, 1e11, clocks=[1400.0, 1980.0, 1500.0, 1450.0])
    c["throughput"] = throughput(c, H100)
    diags = case_diagnostics(c, H100)
    assert [d["code"] for d in diags] == ["clock-unstable"]
    assert "SM clock moved 1400–1980 MHz (39 % of its median)" in diags[0]["message"]


def test_ceilings_come_from_the_gemm_calibration():
    copy = timed_case(0.5, 0.0, nbytes=2 * 2**30, dtype="fp32", kernel="gemm", variant="torch_copy")
    copy["params"] = {"op": "copy", "dtype": "fp32"}
    mm = timed_case(1.6, 2 * 8192**3, kernel="gemm", variant="cublas")
    mm["params"] = {"op": "matmul", "dtype": "bf16"}
    for c in (copy, mm):
        c["throughput"] = throughput(c, H100)
    ceil = ceilings_from([copy, mm], H100)
    assert round(ceil["copy_gbps"]) == round(2 * 2**30 / 0.5e-3 / 1e9)
    assert round(ceil["gemm_tflops"]["bf16"], 1) == round(2 * 8192**3 / 1.6e-3 / 1e12, 1)
    assert ceil["peak_tflops"] == {"fp16": 989.4, "bf16": 989.4} and ceil["peak_gbps"] == 3352.0
    add_ceiling_percentages([copy], ceil)
    assert round(copy["throughput"]["pct_copy_ceiling"]) == 100


def test_sku_names():
    assert normalise_sku("NVIDIA H100 80GB HBM3") == "H100-SXM"
    assert normalise_sku("NVIDIA H100 PCIe") == "H100-PCIe"
    assert normalise_sku("NVIDIA H200") == "H200"
    assert normalise_sku("NVIDIA L4") == "L4"


def test_schema_errors_name_the_field():
    pytest.importorskip("jsonschema", reason="jsonschema is not installed (as on the GPU machine)")
    doc = {"schema": "kernelgate/results@1", "run": {"started_at": "x", "harness": "h"}, "environment": {"gpu": {"name": "g"}}, "diagnostics": [], "kernels": [], "cases": [{"kernel": "k", "variant": "v", "case": "c", "params": {}, "status": "passed"}]}
    assert schema_errors(doc) == ["cases/0/status: 'passed' is not one of ['ok', 'fail', 'error', 'timeout', 'skipped']"]
