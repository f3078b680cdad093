"""An interleaved group samples its variants in the same rounds: a variant its stop rule has stopped
keeps being sampled while another of the group samples on (python/kernelgate_harness/sampling.py).
On an H100 (run 83, 2026-11-27) sdpa_default converged at its 10th sample while the SM clock was
still falling from 1920 MHz, the other variants sampled on into the throttled rounds, and its median
read 10 % under the paired runs' of the same code."""

import gzip
import json
import os
import random
import types
from collections import Counter

import pytest

from conftest import REPO
from kernelgate_harness.sampling import Sampler, round_order


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


@pytest.mark.parametrize("relabel", [True, False])
@pytest.mark.parametrize("n", range(1, 10))
def test_the_rounds_orders_are_balanced_every_variant_behind_every_other_equally_often(n, relabel):
    names = [f"v{i}" for i in range(n)]
    cycle = n if n % 2 == 0 else 2 * n  # an odd square is followed by its mirror
    for c in range(4):  # every cycle, whatever labels it gives the square
        rows = [round_order(names, c * cycle + r, relabel=relabel) for r in range(cycle)]
        assert all(sorted(row) == names for row in rows)
        places = Counter((v, i) for row in rows for i, v in enumerate(row))
        assert set(places.values()) == {cycle // n}  # every place, the first (behind the lead-in) too
        behind = Counter((row[i], row[i + 1]) for row in rows for i in range(n - 1))
        assert len(behind) == n * (n - 1) and set(behind.values()) <= {cycle // n}
    again = [round_order(names, cycle + r, relabel=relabel) for r in range(cycle)]
    assert (again == [round_order(names, r, relabel=relabel) for r in range(cycle)]) == (not relabel or n < 3)
    assert again == [round_order(list(names), cycle + r, relabel=relabel) for r in range(cycle)]  # the same in every run


def two_ahead(names, cycles, relabel):
    """{(predecessor, variant): Counter of what ran two places ahead of the variant} over `cycles`
    cycles of round_order's rounds (None: the round's lead-in)."""
    n = len(names)
    cycle = n if n % 2 == 0 else 2 * n
    out = {}
    for r in range(cycles * cycle):
        row = round_order(names, r, relabel=relabel)
        for i in range(1, n):
            out.setdefault((row[i - 1], row[i]), Counter())[row[i - 2] if i > 1 else None] += 1
    return out


def test_relabelled_cycles_vary_what_ran_two_places_ahead_of_a_sample():
    """The twenty-fifth session: the square's rows are shifts of one row, so with one labelling the
    variant two places ahead of a sample is fixed by its predecessor. Run 202's push (an H200, the
    attention headline, eight variants in the results' order): cuda_fa_wgmma's samples behind
    triton_fa2, sdpa_cudnn and sdpa_default (the hot attention kernels) all had cublas_attn (70 ms
    of GEMMs at the power cap) two places ahead; sdpa_default's behind the same three (its own
    kernel's twin, ours and triton_fa2) all had cuda_fa2, a cool one. Relabelled every cycle, over
    the six cycles of a time-capped push (49 samples), no pair's samples have the same variant two
    places ahead more than twice, and over 40 cycles every variant comes there."""
    names = ["triton_fa2", "sdpa_flash", "sdpa_cudnn", "sdpa_efficient", "sdpa_default", "cuda_fa2", "cuda_fa_wgmma", "cublas_attn"]
    fixed = two_ahead(names, 6, relabel=False)
    hot = ("triton_fa2", "sdpa_cudnn", "sdpa_default")
    assert all(fixed[(p, "cuda_fa_wgmma")] == Counter({"cublas_attn": 6}) for p in hot)
    assert all(fixed[(p, "sdpa_default")] == Counter({"cuda_fa2": 6}) for p in ("triton_fa2", "sdpa_cudnn", "cuda_fa_wgmma"))
    assert all(len(c) == 1 for c in fixed.values())
    mixed = two_ahead(names, 6, relabel=True)
    assert len(mixed) == 8 * 7 and all(sum(c.values()) == 6 for c in mixed.values())
    assert max(k for c in mixed.values() for k in c.values()) == 2
    for n in (3, 4, 5, 8, 9):
        names = [f"v{i}" for i in range(n)]
        long = two_ahead(names, 40, relabel=True)
        # every other variant (and the lead-in, for pairs that open a round) comes two ahead
        assert all(set(c) - {None} == set(names) - set(pair) for pair, c in long.items()), n


def test_sampling_puts_each_variant_behind_each_other_not_always_behind_the_same():
    """Until 2026-11-27 (the fourteenth session) the order rotated: with four variants d was behind c in every round it did not open."""
    s, rounds = sampler({v: (lambda r: 1.0) for v in "abcd"})
    b = Group(list("abcd"))
    s.sample_until_stopped(b, list("abcd"))
    assert len(rounds) == 10
    ahead_of_d = {r[r.index("d") - 1] for r in rounds if r[0] != "d"}
    assert ahead_of_d == {"a", "b", "c"}
    assert rounds[:4] == [round_order(list("abcd"), r) for r in range(4)]
    assert [round_order(list("abcd"), r, relabel=False) for r in range(4)] == [list("abdc"), list("bcad"), list("cdba"), list("dacb")]


def test_the_recorded_pushes_with_rotated_rounds_read_one_cudnn_kernel_up_to_7_percent_apart():
    """The A/A the rotated order left in the recorded pushes (H100s, 2026-11-27; runs 117, 124,
    128): sdpa_cudnn and sdpa_default call the same cuDNN kernel (SDPA's default picks cuDNN on the
    H100: the ncu profile of run 111), but sdpa_cudnn was always sampled behind sdpa_flash and
    sdpa_default behind sdpa_efficient. On the eight headline cases their medians differed by
    -6.7 to +3.3 %, the sign per case repeating from push to push, as large as the gaps issue 28
    grades. The first push with balanced rounds (run 132, test/recorded-nov27-fourteenth.test.ts)
    read bf16 D128 0.2 % apart (3.5-6.7 % here) and seven of the eight cases within 1.4 %; fp16 D64
    stayed 4.1 % apart, which the order does not explain."""
    ratios = {}
    for run in (117, 124, 128):
        path = os.path.join(REPO, "test", "fixtures", "recorded", f"push-h100-run{run}", "results.json.gz")
        with gzip.open(path) as f:
            doc = json.load(f)
        med = {(c["case"], c["variant"]): c["timing"]["median_ms"] for c in doc["cases"] if c["kernel"] == "attention" and c["params"]["S"] == 4096}
        cases = sorted({case for case, _ in med})
        assert len(cases) == 8
        ratios[run] = {case: med[(case, "sdpa_cudnn")] / med[(case, "sdpa_default")] for case in cases}
    every = [x for r in ratios.values() for x in r.values()]
    assert 0.932 < min(every) < 0.934 and 1.033 < max(every) < 1.034
    bf16_d128 = "dtype=bf16,B=16,H=96,S=4096,D=128,causal=false"
    fp16_d64 = "dtype=fp16,B=16,H=96,S=4096,D=64,causal=false"
    assert all(r[bf16_d128] < 0.97 and r[fp16_d64] > 1.007 for r in ratios.values())


def test_a_case_timed_beside_others_records_what_each_kept_sample_ran_behind(run_harness):
    """timing.after: one predecessor per kept sample ("" behind the round's lead-in), the groups
    balanced_ms weighs, so a reader need not rebuild the rounds' orders (their labelling changed
    in the twenty-fifth session)."""
    from conftest import FIXTURE_KERNELS
    from kernelgate_harness.stats import balanced

    names = ["good", "tail"]
    args = ["--variants", ",".join(names), "--case-params", "n=64", "--seeds", "1", "--time-cap-s", "0.3", "--min-samples", "12"]
    r = run_harness(*args, kernels=FIXTURE_KERNELS)
    timed = [c for c in r.doc["cases"] if c.get("timing")]
    assert sorted(c["variant"] for c in timed) == names
    for c in timed:
        t = c["timing"]
        assert len(t["after"]) == len(t["samples_ms"]) and set(t["after"]) <= {"", *names} - {c["variant"]}
        assert (t["balanced_ms"], t["balanced_groups"]) == balanced(t["samples_ms"], t["after"])
        assert t["balanced_groups"] == 2  # the other and the lead-in


def carryover_aa(names, heat, cycles, relabel, first=0.10, second=0.05):
    """An A/A pair's balanced ratio (twin_a over twin_b: one kernel under two names) when a sample
    takes 20 ms × (1 + first × the predecessor's heat + second × the heat of the variant two places
    ahead): the power cap's carryover, which the H200 pushes showed at both distances."""
    from kernelgate_harness.stats import balanced

    ms, after = {v: [] for v in names}, {v: [] for v in names}
    for r in range(cycles * len(names)):
        row = round_order(names, r, relabel=relabel)
        for i, v in enumerate(row):
            h1 = heat[row[i - 1]] if i >= 1 else 0
            h2 = heat[row[i - 2]] if i >= 2 else 0
            ms[v].append(20.0 * (1 + first * h1 + second * h2))
            after[v].append(row[i - 1] if i else "")
    return balanced(ms["twin_a"], after["twin_a"])[0] / balanced(ms["twin_b"], after["twin_b"])[0]


def test_in_a_carryover_model_one_labelling_biases_an_aa_pair_and_relabelling_shrinks_it():
    """Two names for one hot kernel among three hot and three cool variants, in 60 orders of the
    variant list; a sample's time carries over 10 % of its predecessor's heat and 5 % of the one
    two places ahead's. One labelling: the error is fixed by the list's order and does not shrink
    with the cycles (up to 3.6 %, 1.1 % on average). Relabelled: up to 1.8 % and 0.7 % on average at
    six cycles, 1.5 % and 0.35 % at twelve. Not zero: the cycles' labellings do not cover every
    (two ahead, predecessor, variant) triple equally (docs/harness.md)."""
    heat = {"twin_a": 1, "twin_b": 1, "hot1": 1, "hot2": 1, "cool1": 0, "cool2": 0, "cool3": 0, "cool4": 0}
    rng = random.Random(1)
    orders = [rng.sample(list(heat), len(heat)) for _ in range(60)]
    err = {
        (relabel, cycles): [abs(carryover_aa(names, heat, cycles, relabel) - 1) for names in orders]
        for relabel in (False, True)
        for cycles in (6, 12)
    }
    mean = {k: sum(v) / len(v) for k, v in err.items()}
    assert err[(False, 6)] == err[(False, 12)]  # one labelling: the same error however long it runs
    assert round(max(err[(False, 6)]), 3) == 0.036 and round(mean[(False, 6)], 3) == 0.011
    assert round(max(err[(True, 6)]), 3) == 0.018 and round(mean[(True, 6)], 3) == 0.007
    assert round(max(err[(True, 12)]), 3) == 0.015 and round(mean[(True, 12)], 4) == 0.0035
