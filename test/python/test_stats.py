"""Sample statistics and the adaptive stop rule (python/kernelgate_harness/stats.py)."""

import random

import pytest

from kernelgate_harness.stats import StopRule, drop_throttled, median_ci_rel, quantile, summarize


def test_quantiles_interpolate_like_numpy():
    xs = [1.0, 2.0, 3.0, 4.0]
    assert quantile(xs, 0.5) == 2.5
    assert quantile(xs, 0.25) == 1.75
    assert quantile(xs, 0.75) == 3.25


def test_summary_fields():
    s = summarize([3.0, 1.0, 2.0, 4.0, 5.0])
    assert s["median_ms"] == 3.0 and s["q1_ms"] == 2.0 and s["q3_ms"] == 4.0
    assert s["min_ms"] == 1.0 and s["mean_ms"] == 3.0 and s["n_samples"] == 5
    assert s["rel_std"] == pytest.approx((2.5 ** 0.5) / 3.0)


def test_never_stops_before_min_samples_even_if_identical():
    rule = StopRule(min_samples=10, time_cap_s=100)
    assert rule.check([1.0] * 9, spent_s=0.1) is None
    assert rule.check([1.0] * 10, spent_s=0.1) == "converged"


def test_noisy_samples_run_to_the_time_cap_or_max_samples():
    rng = random.Random(0)
    noisy = [1.0 + rng.gauss(0, 0.2) for _ in range(40)]
    assert median_ci_rel(noisy) > 0.005
    assert StopRule(time_cap_s=1.0).check(noisy, spent_s=0.5) is None
    assert StopRule(time_cap_s=1.0).check(noisy, spent_s=1.0) == "time_cap"
    assert StopRule(max_samples=40, time_cap_s=100).check(noisy, spent_s=0.5) == "max_samples"


def test_quiet_samples_converge():
    rng = random.Random(1)
    quiet = [1.0 + rng.gauss(0, 0.002) for _ in range(30)]
    assert StopRule(time_cap_s=100).check(quiet, spent_s=0.1) == "converged"


def test_a_slow_kernel_stops_at_twice_the_cap_with_few_samples():
    assert StopRule(time_cap_s=1.0).check([500.0, 520.0, 510.0], spent_s=2.0) == "time_cap"


def test_throttled_samples_are_dropped_and_counted():
    ms = [1.0, 1.0, 2.0, 1.0]
    clk = [1500.0, 1490.0, 900.0, 1510.0]  # 900 < 0.75 × 1495
    pw = [600.0, 610.0, 300.0, 605.0]
    kept, kept_clk, kept_pw, dropped = drop_throttled(ms, clk, pw)
    assert kept == [1.0, 1.0, 1.0] and kept_clk == [1500.0, 1490.0, 1510.0] and kept_pw == [600.0, 610.0, 605.0]
    assert dropped == 1


def test_no_clock_readings_drop_nothing():
    assert drop_throttled([1.0, 2.0], [], [], 0.75) == ([1.0, 2.0], [], [], 0)


def test_balanced_weighs_each_predecessor_once_with_the_median_behind_it():
    from kernelgate_harness.stats import balanced

    # behind "cool" three fast samples, behind "hot" one slow one, behind the lead-in one: the
    # median of all five reads the fast mode, the balanced estimate each context once
    ms = [19.0, 19.1, 18.9, 22.0, 20.0]
    after = ["cool", "cool", "cool", "hot", ""]
    assert balanced(ms, after) == (pytest.approx((19.0 + 22.0 + 20.0) / 3), 3)
    # a wild sample behind "cool" moves its group's median by a rank, not the estimate by its size
    assert balanced([19.0, 19.1, 90.0, 22.0, 20.0], after) == (pytest.approx((19.1 + 22.0 + 20.0) / 3), 3)
    # the kept indices only (drop_throttled's): without the lead-in's sample
    assert balanced(ms, after, keep=[0, 1, 2, 3]) == (pytest.approx((19.0 + 22.0) / 2), 2)
    # a variant timed alone follows one context: no estimate
    assert balanced([1.0, 2.0], ["", ""]) is None
    assert balanced([], []) is None


def test_unthrottled_keeps_what_drop_throttled_keeps():
    from kernelgate_harness.stats import drop_throttled, unthrottled

    ms, clk, pw = [1.0, 2.0, 3.0, 4.0], [1800, 1000, 1790, 1810], [600, 600, 600, 600]
    assert unthrottled(4, clk) == [0, 2, 3]
    assert drop_throttled(ms, clk, pw)[0] == [ms[i] for i in unthrottled(4, clk)]
    assert unthrottled(3, []) == [0, 1, 2]
