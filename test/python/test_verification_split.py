"""verify.verification_split: a case's verification time by variant (correctness.seconds), the most
first, as the paired run prints it after the case's time line; nothing below SPLIT_LEAST_S in all."""

from kernelgate_harness.verify import SPLIT_LEAST_S, verification_split


def rec(seconds):
    return {"correctness": {"status": "PASS", "seconds": seconds}}


def test_the_split_names_each_variant_the_most_first():
    records = {"sdpa_flash": rec(0.21), "triton_fa2": rec(2.14), "cublas_attn": rec(0.94), "errored": {"status": "error"}}
    assert verification_split(records) == "verification by variant: triton_fa2 2.1 s, cublas_attn 0.9 s, sdpa_flash 0.2 s"


def test_equal_times_keep_the_names_order():
    assert verification_split({"b": rec(0.6), "a": rec(0.6)}) == "verification by variant: a 0.6 s, b 0.6 s"


def test_a_quick_case_prints_nothing():
    assert SPLIT_LEAST_S == 1.0
    assert verification_split({"a": rec(0.5), "b": rec(0.49)}) == ""
    assert verification_split({"a": {"correctness": {"status": "PASS"}}}) == ""
    assert verification_split({}) == ""
