"""An interleaved group samples its variants in the same rounds: a variant its stop rule has stopped
keeps being sampled while another of the group samples on (python/kernelgate_harness/sampling.py).
On an H100 (run 83, 2026-11-27) sdpa_default converged at its 10th sample while the SM clock was
still falling from 1920 MHz, the other variants sampled on into the throttled rounds, and its median
read 10 % under the paired runs' of the same code."""

import random
import types

from kernelgate_harness.sampling import Sampler


class Group:
    """What sample_until_stopped reads of a bench group: its samples and its failed variants."""

    def __init__(self, names):
        self.samples = {v: {"ms": [], "clk": [], "pw": []} for v in names}
        self.bad = {}


def sampler(times, max_samples=300):
    """A Sampler whose rounds return times[v](round) per variant, at a clock that falls each round."""
    s = Sampler.__new__(Sampler)
    s.opt = {"min_samples": 10, "max_samples": max_samples, "ci_rel": 0.005, "time_cap_s": 1e9}
    rounds = []

    def sample_round(b, order, r):
        rounds.append(list(order))
        got = {}
        for v in order:
            ms = times[v](r)
            clk = 1920 - 10 * r
            b.samples[v]["ms"].append(ms)
            b.samples[v]["clk"].append(clk)
            b.samples[v]["pw"].append(690.0)
            got[v] = (ms, clk, 690.0)
        return got

    s.sample_round = types.MethodType(lambda self, b, order, r: sample_round(b, order, r), s)
    return s, rounds


def test_a_variant_that_converged_keeps_sampling_while_another_samples_on():
    rng = random.Random(7)
    steady = lambda r: 20.0  # noqa: E731  converges at the 10-sample minimum
    noisy = lambda r: 25.0 * (1 + rng.uniform(-0.015, 0.015))  # noqa: E731  needs many more
    s, rounds = sampler({"sdpa_default": steady, "cuda_fa_wgmma": noisy})
    b = Group(["sdpa_default", "cuda_fa_wgmma"])
    stop = s.sample_until_stopped(b, ["sdpa_default", "cuda_fa_wgmma"])
    assert stop == {"sdpa_default": "converged", "cuda_fa_wgmma": "converged"}
    n = len(b.samples["cuda_fa_wgmma"]["ms"])
    assert n > 30
    # the same rounds for both: every round sampled both variants
    assert len(b.samples["sdpa_default"]["ms"]) == n == len(rounds)
    assert all(sorted(r) == ["cuda_fa_wgmma", "sdpa_default"] for r in rounds)


def test_a_stopped_variant_is_not_sampled_past_max_samples():
    rng = random.Random(3)
    s, rounds = sampler(
        {"a": lambda r: 1.0, "b": lambda r: 1.0 * (1 + rng.uniform(-0.5, 0.5))}, max_samples=40
    )
    b = Group(["a", "b"])
    stop = s.sample_until_stopped(b, ["a", "b"])
    assert stop["a"] == "converged" and stop["b"] == "max_samples"
    assert len(b.samples["a"]["ms"]) == len(b.samples["b"]["ms"]) == 40


def test_a_failed_variant_ends_and_the_others_go_on():
    s, rounds = sampler({"a": lambda r: 1.0, "b": lambda r: 1.0})
    b = Group(["a", "b"])
    b.bad["b"] = "it crashed"
    stop = s.sample_until_stopped(b, ["a", "b"])
    assert stop == {"a": "converged", "b": "ended"}
    assert b.samples["b"]["ms"] == [] and len(b.samples["a"]["ms"]) == 10
