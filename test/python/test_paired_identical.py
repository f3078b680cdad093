"""Identity before timing (issue 27): `--identical kernel.variant,...` names variants whose build and
sources are the same in base and head. A paired run verifies them on the head (on the first seed
only under --verify-identical's default, test_verify_identical.py), does not time them, and writes
`identical` (reason, how verified) into their records. The caller chooses the A/A control by
leaving it out of the list; a case whose candidate is timed keeps its references timed when the list
names them all. Two copies of the sleepy fixture repository as head and base, on the CPU."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, harness_env

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "paired_repo")
CASE = "dtype=fp32,n=256"


# A candidate that serves results from a cache keyed on its inputs' contents: right every time,
# slow (30 ms) only on values it has not seen (the cache probe's second class, caching.py).
MEMO = """

_SEEN = {}


def memo(params, ctx):
    def run(inputs, out):
        key = inputs["x"].numpy().tobytes()
        if key not in _SEEN:
            spin(30.0)
            _SEEN[key] = inputs["x"] * 2
        out.copy_(_SEEN[key])
        return out

    return run


VARIANTS["memo"] = memo
"""


def make_repo(path, broken=(), second_reference=False, memo=False):
    shutil.copytree(FIXTURE, path)
    src = os.path.join(path, "sleepy_bench.py")
    with open(src) as f:
        text = f.read()
    text = text.replace("BROKEN = set()", f"BROKEN = {set(broken)!r}")
    if memo:
        text += MEMO
        yml = os.path.join(path, "kernels", "sleepy", "kernel.yml")
        with open(yml) as f:
            manifest = f.read()
        with open(yml, "w") as f:
            f.write(manifest + "  - name: memo\n    role: candidate\n    description: a result cache keyed on the inputs' contents\n")
    if second_reference:
        text = text.replace('DELAY_MS = {"steady": 2.0,', 'DELAY_MS = {"steady": 2.0, "other_library": 2.0,')
        yml = os.path.join(path, "kernels", "sleepy", "kernel.yml")
        with open(yml) as f:
            manifest = f.read()
        with open(yml, "w") as f:
            f.write(manifest.replace("variants:\n", "variants:\n  - name: other_library\n    role: reference\n    description: a second reference\n"))
    with open(src, "w") as f:
        f.write(text)
    return path


def harness(head, out, *extra):
    env = harness_env()
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(REPO, "python"), str(head)])
    cmd = [sys.executable, "-m", "kernelgate_harness", "--kernels", "kernels", "--out", str(out), "--device", "cpu", "--seeds", "2",
           "--first-warmup-s", "0.1", "--warmup-s", "0.1", *extra]
    return subprocess.run(cmd, cwd=head, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def identical_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("identical")
    # `broken_in_base` is wrong in the head here: named identical, it must still fail its verification.
    head = make_repo(tmp / "head", broken=["broken_in_base"])
    base = make_repo(tmp / "base")
    out = tmp / "results.json"
    proc = harness(head, out, "--base-root", str(base), "--base-sha", "b" * 40,
                   "--identical", "sleepy.planted,sleepy.steady,sleepy.broken_in_base")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    with open(out) as f:
        return json.load(f), proc.stdout


def case(doc, variant):
    return next(c for c in doc["cases"] if c["variant"] == variant and c["case"] == CASE)


def test_an_identical_variant_is_verified_and_not_timed(identical_run):
    doc, out = identical_run
    c = case(doc, "planted")
    assert c["status"] == "ok"
    assert c["identical"] == {"reason": "identical build and sources", "verified": "first_seed"}
    assert c["correctness"]["status"] == "PASS" and c["correctness"]["seeds"] == [0]
    assert "timing" not in c and "paired" not in c
    assert f"sleepy/planted {CASE} PASS" in out
    assert f"sleepy/planted {CASE} PASS rel_l2=0.0e+00 | not timed: identical build and sources, verified on the first seed only" in out
    assert f"sleepy {CASE}: planted, broken_in_base: identical build and sources in base and head: verified, not timed" in out


def test_a_reference_named_identical_stays_timed_against_the_base(identical_run):
    doc, out = identical_run
    c = case(doc, "steady")
    assert "identical" not in c
    assert c["timing"]["n_samples"] > 0
    assert c["paired"]["base_status"] == "ok" and c["paired"]["n_pairs"] > 0


def two_references_run(tmp_path, identical):
    """Head and base with a second reference (other_library) beside steady, run with --identical."""
    head = make_repo(tmp_path / "head", second_reference=True)
    base = make_repo(tmp_path / "base", second_reference=True)
    out = tmp_path / "results.json"
    proc = harness(head, out, "--base-root", str(base), "--base-sha", "b" * 40, "--identical", identical)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    return json.loads(out.read_text()), proc.stdout


def test_a_reference_named_identical_is_not_timed_when_another_reference_controls_the_case(tmp_path):
    # The action names every identical reference but the kernel's control (controlReferences):
    # timing attention's four other references cost about 13 s of each large case (H100, 2026-11-26).
    doc, stdout = two_references_run(tmp_path, "sleepy.other_library,sleepy.planted")
    other = case(doc, "other_library")
    assert other["identical"] == {"reason": "identical build and sources", "verified": "first_seed"} and "timing" not in other
    assert other["correctness"]["status"] == "PASS"
    assert f"sleepy {CASE}: other_library, planted: identical build and sources in base and head: verified, not timed" in stdout
    steady = case(doc, "steady")
    assert "identical" not in steady and steady["paired"]["n_pairs"] > 0


def test_every_reference_named_identical_stays_timed_while_a_candidate_is_timed(tmp_path):
    doc, _ = two_references_run(tmp_path, "sleepy.other_library,sleepy.steady,sleepy.planted")
    for v in ("steady", "other_library"):
        c = case(doc, v)
        assert "identical" not in c and c["paired"]["n_pairs"] > 0, v
    assert "identical" in case(doc, "planted")


def test_a_reference_is_left_untimed_only_when_no_candidate_of_its_case_is_timed(tmp_path):
    head, base = make_repo(tmp_path / "head"), make_repo(tmp_path / "base")
    out = tmp_path / "results.json"
    every = ",".join(f"sleepy.{v}" for v in ("steady", "changed", "planted", "broken_in_base"))
    proc = harness(head, out, "--base-root", str(base), "--base-sha", "b" * 40, "--identical", every)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    doc = json.loads(out.read_text())
    for v in ("steady", "changed", "planted", "broken_in_base"):
        c = case(doc, v)
        assert c["identical"] == {"reason": "identical build and sources", "verified": "first_seed"} and "timing" not in c, v
        assert c["correctness"]["status"] == "PASS", v


def test_a_variant_not_named_is_timed_against_the_base(identical_run):
    doc, _ = identical_run
    c = case(doc, "changed")
    assert "identical" not in c and c["paired"]["base_status"] == "ok" and c["paired"]["n_pairs"] > 0


def test_an_identical_variant_that_is_wrong_still_fails(identical_run):
    doc, _ = identical_run
    c = case(doc, "broken_in_base")
    assert c["status"] == "fail" and "identical" not in c and "timing" not in c


def test_identical_needs_a_base_revision(tmp_path):
    head = make_repo(tmp_path / "head")
    proc = harness(head, tmp_path / "r.json", "--identical", "sleepy.planted")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "python -m kernelgate_harness: error: --identical needs --base-root (identical means identical in base and head)"
    )


def test_identical_takes_kernel_dot_variant_names(tmp_path):
    head = make_repo(tmp_path / "head")
    proc = harness(head, tmp_path / "r.json", "--base-root", str(head), "--identical", "planted")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == "python -m kernelgate_harness: error: --identical takes kernel.variant names, got 'planted'"


def test_the_cache_probe_runs_for_the_variants_that_are_timed_only(tmp_path):
    # The cache probe asks whether the timed runs would measure a cache (7 of a variant's 15 calls
    # on a large case; skipping it for identical variants cut the large attention cases'
    # verification by 10-25 % on the H100, run 68). A variant left untimed skips it; every other
    # check of verification is as always.
    head, base = make_repo(tmp_path / "head", memo=True), make_repo(tmp_path / "base", memo=True)
    timed_out = tmp_path / "timed.json"
    proc = harness(head, timed_out, "--base-root", str(base), "--base-sha", "b" * 40, "--identical", "sleepy.planted")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    timed = case(json.loads(timed_out.read_text()), "memo")
    assert timed["correctness"]["status"] == "FAIL"
    assert timed["correctness"]["message"].startswith("seed 0: cached result: calls on input values it had just seen took")
    untimed_out = tmp_path / "untimed.json"
    proc = harness(head, untimed_out, "--base-root", str(base), "--base-sha", "b" * 40, "--identical", "sleepy.planted,sleepy.memo")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    untimed = case(json.loads(untimed_out.read_text()), "memo")
    assert untimed["identical"] == {"reason": "identical build and sources", "verified": "first_seed"} and "timing" not in untimed
    assert untimed["correctness"]["status"] == "PASS" and untimed["correctness"]["seeds"] == [0]
