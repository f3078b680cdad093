"""The planted-fault module through the harness on an H100 (test/fixtures/recorded/faults-h100,
`bash scripts/gpu-faults.sh OUTDIR`, 2026-11-23 21:59 UTC, the harness of 5cd3761).

Every variant says on the GPU what EXPECTED says. The first recording of the day (the harness of
5c5014a+86c1e29, 21:21 UTC) got five of them wrong, each fixed in 40dced5 and 53d13af; the
folder's README lists them. KNOWN_WRONG is where a future recording's known deviations go, each
with its reason; it is empty."""

import gzip
import json
import os
import re

import pytest

from conftest import REPO

FOLDER = os.path.join(REPO, "test", "fixtures", "recorded", "faults-h100")
N64, N100 = "dtype=fp32,n=64", "dtype=fp32,n=100"


@pytest.fixture(scope="module")
def recording():
    with gzip.open(os.path.join(FOLDER, "results.json.gz"), "rt") as f:
        doc = json.load(f)
    with open(os.path.join(FOLDER, "harness.log")) as f:
        log = f.read()
    return doc, log


def verdict(c):
    """(status, error kind or None) of one case."""
    return c["status"], (c.get("error") or {}).get("kind")


# What each variant must say on the GPU: (status, error kind), both cases unless split by case.
EXPECTED = {
    "good": ("ok", None),
    "unwritten": ("fail", None),
    "nan": ("fail", None),
    "inf": ("fail", None),
    "tail": {N64: ("ok", None), N100: ("fail", None)},  # n=64 is whole 32-row tiles: no tail
    "race": ("fail", None),
    "leftover": ("fail", None),
    "zeros_fast": ("ok", None),  # right on every input; timed on real data (the 50 ms path)
    "unsupported": ("skipped", None),
    "other_stream": ("error", "other-stream"),
    "host_sync": ("ok", None),  # right; not capturable, so timed as calls back to back
    "poison": ("error", "crash"),
    "writes_input": ("fail", None),
    "third_seed": ("fail", None),  # wrong on seed 2
    "stale": ("fail", None),
    "capture_cheat": ("fail", None),
    "late_short": ("fail", None),
    "device_assert": {N100: ("error", "cuda_context")},
}

# Rows of the recording known to be wrong, each (recorded verdict, why). None.
KNOWN_WRONG = {}


def expected_of(variant, case_id):
    e = EXPECTED[variant]
    return e.get(case_id) if isinstance(e, dict) else e


def test_the_recording_is_the_planted_fault_module_on_an_h100(recording):
    doc, log = recording
    assert doc["environment"]["gpu"]["name"] == "NVIDIA H100 80GB HBM3"
    assert doc["environment"]["libraries"]["torch"] == "2.11.0+cu130"
    assert doc["run"]["started_at"].startswith("2026-11-23T")
    with open(os.path.join(REPO, "scripts", "gpu-faults.sh")) as f:
        variants = re.search(r"^variants=(\S+)$", f.read(), re.M).group(1)
    assert f"--variants {variants} --device cuda --seeds 3 --time-cap-s 0.2 --min-samples 5" in doc["run"]["command"]
    cases = {(c["variant"], c["case"]) for c in doc["cases"]}
    want = {(v, cid) for v in EXPECTED for cid in (N64, N100) if expected_of(v, cid)}
    assert cases == want
    assert log.rstrip().endswith("exit 0")


def test_every_row_says_what_was_recorded_and_only_known_rows_are_wrong(recording):
    doc, _ = recording
    for c in doc["cases"]:
        v, cid = c["variant"], c["case"]
        got = verdict(c)
        if v in KNOWN_WRONG:
            assert got == KNOWN_WRONG[v][0], (v, cid, got)
            assert got != expected_of(v, cid), f"{v} {cid} is right now: take it out of KNOWN_WRONG"
        else:
            assert got == expected_of(v, cid), (v, cid, got)


def test_the_right_rows_name_their_class(recording):
    doc, _ = recording

    def case(v, cid=N64):
        return next(c for c in doc["cases"] if c["variant"] == v and c["case"] == cid)

    assert case("unwritten")["correctness"]["message"].startswith("seed 0: 40 of 2560 output elements never written (still NaN after the run)")
    assert "seed 0: 1 NaN in the output" in case("nan")["correctness"]["message"]
    assert "seed 0: 1 Inf in the output" in case("inf")["correctness"]["message"]
    assert "> tolerance 1.0e-05" in case("tail", N100)["correctness"]["message"]
    assert "(a race, or a read of memory nothing wrote)" in case("race")["correctness"]["message"]
    assert case("writes_input")["correctness"]["message"].startswith("seed 0: wrote into its input x (inputs are read-only")
    assert case("capture_cheat")["correctness"]["message"].startswith("the CUDA graph's replay gives a wrong output (rel_l2 1.000e+00 > tolerance 1.0e-05)")
    assert re.match(r"events, \d+ calls back to back", case("host_sync")["timing"]["method"])
    assert case("good")["timing"]["method"].startswith("events, graph(200 launches")
    # The culprit of the exit code 3 is named (the late-work check's extra run on seed 0 is poison's
    # third call, so the worker dies at seed 0).
    assert case("poison")["error"]["message"] == (
        "the worker process died (exit code 3) during verify seed 0 of poison, run alone (with the case's other "
        "variants the worker had died (exit code 3) during verify seed 0 of poison); it was restarted for the other "
        "variants"
    )
    assert case("device_assert", N100)["error"]["message"].startswith(
        "the worker process died (the CUDA context was lost: AcceleratorError: CUDA "
        "error: device-side assert triggered"
    )


def test_the_log_names_each_culprit_and_nothing_timed_out(recording):
    """Each death of the worker is followed by the search naming its culprit; no variant times out
    (zeros_fast, not capturable, is timed as one 50 ms call a sample); no failed capture leaks
    into the next variant."""
    doc, log = recording
    lines = [x for x in log.splitlines() if x.startswith("[kernelgate")]
    culprits = [x for x in lines if " is the culprit (run alone" in x]
    assert [x.split(": ")[1].split(" ")[0] for x in culprits] == ["poison", "poison", "device_assert"]
    assert not [c for c in doc["cases"] if c["status"] == "timeout"]
    assert "Offset increment outside graph capture" not in log
    zf = next(c for c in doc["cases"] if c["variant"] == "zeros_fast" and c["case"] == N64)
    assert zf["timing"]["method"].startswith("events, 1 calls back to back") and zf["timing"]["median_ms"] > 45
    assert re.search(r"\[kernelgate\] done in [\d.]+ s: 5 error, 21 fail, 7 ok, 2 skipped;", log)
