"""The lanes' balance on the recorded paired H100 nights (issue 27): the fixed split (`fixed_split.plan`,
the shards' rule, which the lanes used before their shared queue) and the shared queue
(`lanes.queue_order`, replayed), each by the timings of the run the store held before each night
(what the action passes as --balance on several GPUs) or by the estimate alone, then scored by
what each case really took that night: the seconds its case line gives ("time: set-up and verification … (base …), warm-ups
…, pairs …, finish …", harness.log.gz). No CPU timing: every figure is read from the fixtures.

The nights (test/fixtures/recorded/README.md): runs 32-35 on one H100 80GB HBM3 (machine 10),
36-37 on a second (machine 11), 2026-11-26, 32 cases, 217 variant records each. A night's
--balance is the store's newest run before it on its machine: 33 <- 32, 34 <- 33, 35 <- 34,
37 <- 36 (run 36's, a push of machine 11, was not kept). docs/scaling.md quotes the figures."""

import gzip
import json
import re
from pathlib import Path

import fixed_split
import pytest

from kernelgate_harness import lanes

RECORDED = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "recorded"
NIGHTS = [
    ("nightly-slow2-h100-run33", "nightly-h100-run32"),
    ("nightly-h100-run34", "nightly-slow2-h100-run33"),
    ("nightly-h100-run35", "nightly-h100-run34"),
    ("nightly-h100-run37", "nightly-h100-run36"),
]
CASE_LINE = re.compile(
    r"^\[kernelgate\] (\S+) (\S+): time: set-up and verification ([\d.]+) s \(base ([\d.]+) s\), "
    r"warm-ups ([\d.]+) s, pairs ([\d.]+) s, finish ([\d.]+) s$"
)


def results(run):
    with gzip.open(RECORDED / run / "results.json.gz", "rt") as f:
        return json.load(f)


def case_seconds(run):
    """kernel/case -> the seconds its case line says it took."""
    out = {}
    with gzip.open(RECORDED / run / "harness.log.gz", "rt") as f:
        for line in f:
            m = CASE_LINE.match(line.rstrip("\n"))
            if m:
                out[f"{m[1]}/{m[2]}"] = sum(float(x) for x in m.groups()[2:])
    return out


def units_of(doc):
    """[(kernel/case, params, variants)] in the document's (the harness's) order."""
    units = {}
    for c in doc["cases"]:
        uid = f"{c['kernel']}/{c['case']}"
        if uid in units:
            units[uid][2] += 1
        else:
            units[uid] = [uid, c["params"], 1]
    return [tuple(u) for u in units.values()]


def by_unit(doc):
    got = {}
    for c in doc["cases"]:
        got.setdefault(f"{c['kernel']}/{c['case']}", []).append(c)
    return got


def old_plan(units, n):
    """The rule before issue 27: 1 s a variant plus 1e-9 s x the product of the numeric axes."""
    load, owner = [0.0] * n, [0] * len(units)
    cost = []
    for _, params, nv in units:
        size = 1.0
        for v in params.values():
            if not isinstance(v, bool) and isinstance(v, (int, float)) and v > 0:
                size *= v
        cost.append(nv * (1 + size * 1e-9))
    for i in sorted(range(len(units)), key=lambda i: (-cost[i], i)):
        k = min(range(n), key=lambda k: (load[k], k))
        load[k] += cost[i]
        owner[i] = k
    return owner


def actual(units, owner, seconds, n):
    """Each lane's recorded seconds, and how far apart: (longest - shortest) / longest, in %."""
    lanes_s = [0.0] * n
    for (uid, _, _), k in zip(units, owner, strict=True):
        lanes_s[k] += seconds[uid]
    return [round(s, 1) for s in lanes_s], round(100 * (max(lanes_s) - min(lanes_s)) / max(lanes_s), 1)


def test_every_case_has_its_recorded_seconds():
    for night, before in NIGHTS:
        for run in (night, before):
            units, seconds = units_of(results(run)), case_seconds(run)
            assert len(units) == 32 and set(seconds) == {u[0] for u in units}, run


def split(night, before, n):
    doc = results(night)
    units, seconds = units_of(doc), case_seconds(night)
    balance = by_unit(results(before)) if before else {}
    owner, load, counted = fixed_split.plan(units, n, balance, paired=True, cap_s=3.0)
    return units, owner, load, counted, actual(units, owner, seconds, n)


# What the test computes, asserted (print with pytest -s): per night, the two lanes' recorded
# seconds and their spread in %.
MEASURED_2 = {
    "nightly-slow2-h100-run33": ([117.0, 114.8], 1.9),
    "nightly-h100-run34": ([120.2, 106.2], 11.6),
    "nightly-h100-run35": ([127.6, 112.2], 12.1),
    "nightly-h100-run37": ([125.3, 132.5], 5.4),
}


@pytest.mark.parametrize(("night", "before"), NIGHTS)
def test_two_lanes_balanced_by_the_night_before_are_within_15_percent(night, before):
    units, owner, load, counted, (lanes_s, spread) = split(night, before, 2)
    old_s, old_spread = actual(units, old_plan(units, 2), case_seconds(night), 2)
    print(f"{night} by {before}: expected {[round(x, 1) for x in load]} s, recorded {lanes_s} s, {spread} % apart; the old rule {old_s} s, {old_spread} %")
    assert counted == [sum(1 for o in owner if o == k) for k in range(2)]  # every case measured
    assert (lanes_s, spread) == MEASURED_2[night]
    assert spread <= 15
    # The size estimate put nearly everything on one lane.
    assert old_spread > 90


def test_the_estimate_alone_is_far_better_than_the_size_estimate_and_short_of_15_percent():
    """Without timings every attention case costs its variants × the cap: the estimate cannot tell
    the eight B16 H96 S4096 cases (80 % of a night) from the sixteen small ones, so which lane gets
    which is the harness's order, and two lanes end 32-43 % apart. Recorded, not hoped: the goal of
    15 % holds only where timings of this GPU model exist."""
    got = {}
    for night, _ in NIGHTS:
        units, owner, load, counted, (lanes_s, spread) = split(night, None, 2)
        old = actual(units, old_plan(units, 2), case_seconds(night), 2)
        got[night] = (spread, old[1])
        assert counted == [0, 0]
        assert load == pytest.approx([sum(u[2] for u, o in zip(units, owner, strict=True) if o == k) * 3.44 for k in range(2)])
        print(f"{night} by the estimate: recorded {lanes_s} s, {spread} % apart; the old rule {old[0]} s, {old[1]} %")
    assert got == {
        "nightly-slow2-h100-run33": (38.1, 95.7),
        "nightly-h100-run34": (42.6, 95.3),
        "nightly-h100-run35": (31.7, 96.1),
        "nightly-h100-run37": (35.9, 95.9),
    }


def test_the_estimates_seconds_against_the_recorded_nights():
    """The estimate is each variant at its cap: a ceiling for most variants, which decide sooner.
    Over a night it reads 2.9-3.3 times the recorded seconds; the measured rule, by the night
    before, 0.89-1.03."""
    for night, before in NIGHTS:
        units = units_of(results(night))
        recorded = sum(case_seconds(night).values())
        estimated = sum(lanes.estimated_s(nv, 3.0) for _, _, nv in units)
        balance = by_unit(results(before))
        measured = sum(lanes.measured_s(balance[uid], nv, 3.0) for uid, _, nv in units)
        print(f"{night}: recorded {recorded:.1f} s, estimated {estimated:.1f} s, measured by {before} {measured:.1f} s")
        assert 2.85 < estimated / recorded < 3.35
        assert 0.88 < measured / recorded < 1.04


def test_the_overhead_is_the_fixtures():
    """VARIANT_OVERHEAD_S and VARIANT_CALLS: the least-squares fit of run 32's time outside the
    pairs (its kernels' first cases left out); ESTIMATE_OVERHEAD_S: the same time spread over its
    217 variants."""
    doc, seconds = results("nightly-h100-run32"), case_seconds("nightly-h100-run32")
    groups = by_unit(doc)
    firsts = {next(uid for uid in groups if uid.startswith(k + "/")) for k in ("gemm", "attention", "bsr_gemm")}
    sxx = sxy = syy = sx = sy = 0.0  # fit y = a·nv + b·Σmedian_s, no intercept
    for uid, recs in groups.items():
        if uid in firsts:
            continue
        nv = len(recs)
        med = sum(r["timing"]["median_ms"] for r in recs if r.get("timing")) / 1000
        rest = seconds[uid] - sum(r["paired"]["seconds"] for r in recs if (r.get("paired") or {}).get("seconds") is not None)
        sxx += nv * nv
        sxy += nv * med
        syy += med * med
        sx += nv * rest
        sy += med * rest
    det = sxx * syy - sxy * sxy
    a, b = (sx * syy - sy * sxy) / det, (sxx * sy - sxy * sx) / det
    print(f"run 32: {a:.3f} s a variant + {b:.1f} calls of its median")
    assert round(a, 2) == lanes.VARIANT_OVERHEAD_S
    assert round(b) == lanes.VARIANT_CALLS
    pairs = sum((r.get("paired") or {}).get("seconds") or 0 for r in doc["cases"])
    spread = (sum(seconds.values()) - pairs) / len(doc["cases"])
    assert round(spread, 2) == lanes.ESTIMATE_OVERHEAD_S


# -- the shared queue (what the lanes do now), replayed on the recorded nights -------------------


def replay(units, order, seconds, n):
    """The lanes taking the units from one queue in `order`, each unit taking what its case line
    says that night: the lane free first takes the next (ties: the lower lane). Each lane's
    seconds, how far apart in %, and how many units each took. Not in it: what each lane pays once
    (a worker's start-up per kernel, a kernel's first-case warm-up), which the one-GPU night paid
    once in all."""
    free, took = [0.0] * n, [0] * n
    for i in order:
        k = min(range(n), key=lambda k: (free[k], k))
        free[k] += seconds[units[i][0]]
        took[k] += 1
    return [round(s, 1) for s in free], round(100 * (max(free) - min(free)) / max(free), 1), took


# Per night and lane count: the queue ordered by the night before's timings, and by the estimate
# alone: (each lane's recorded seconds, % apart).
QUEUE = {
    ("nightly-slow2-h100-run33", 2): (([117.4, 114.4], 2.6), ([116.0, 115.8], 0.2)),
    ("nightly-slow2-h100-run33", 3): (([79.1, 76.4, 76.3], 3.5), ([78.0, 78.6, 75.2], 4.3)),
    ("nightly-h100-run34", 2): (([115.0, 111.4], 3.1), ([113.2, 113.2], 0.0)),
    ("nightly-h100-run34", 3): (([77.5, 73.9, 75.0], 4.6), ([74.1, 78.4, 73.9], 5.7)),
    ("nightly-h100-run35", 2): (([121.3, 118.5], 2.3), ([120.1, 119.7], 0.3)),
    ("nightly-h100-run35", 3): (([79.4, 78.8, 81.6], 3.4), ([78.6, 78.3, 82.9], 5.5)),
    ("nightly-h100-run37", 2): (([130.2, 127.6], 2.0), ([129.1, 128.7], 0.3)),
    ("nightly-h100-run37", 3): (([87.7, 86.9, 83.2], 5.1), ([83.1, 83.7, 91.0], 8.7)),
}


@pytest.mark.parametrize(("night", "before"), NIGHTS)
@pytest.mark.parametrize("n", [2, 3])
def test_a_shared_queue_keeps_the_lanes_within_a_few_percent_by_either_cost(night, before, n):
    """Longest first from one queue: the lanes end within the last units they took, which are the
    small ones; whether the order came from the night before or from the estimate (which cannot
    tell the eight large attention cases from the small ones) matters little, since no lane is
    committed to a case before it is free. The fixed split by the night before: 1.9-12.1 % (two
    lanes), 12.4-25.4 % (three shards, test/shard-balance.test.ts)."""
    doc = results(night)
    units, seconds = units_of(doc), case_seconds(night)
    got = []
    for balance in (by_unit(results(before)), {}):
        cost, _ = lanes.costs(units, balance, paired=True, cap_s=3.0)
        lanes_s, spread, took = replay(units, lanes.queue_order(cost, n), seconds, n)
        assert sum(took) == len(units) == 32
        # Within the longest unit of the night, by construction of the queue.
        assert max(lanes_s) - min(lanes_s) <= max(seconds.values())
        print(f"{night}, {n} lanes, queue by {'the night before' if balance else 'the estimate'}: {lanes_s} s ({took} cases), {spread} % apart")
        got.append((lanes_s, spread))
    assert tuple(got) == QUEUE[(night, n)]
    assert max(got[0][1], got[1][1]) < 10
