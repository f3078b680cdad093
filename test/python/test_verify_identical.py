"""--verify-identical (kernelgate.yml run.verify_identical, issue 27): a variant --identical names
is verified on the first seed only under `first_seed` (the default), its tails too, and on every
seed under `all`; a variant not named is verified on every seed under both. The proof is a variant
wrong on seed 1's inputs only (`late_seed`): named identical under first_seed it is never run on
seed 1, so it passes with seeds [0]; under `all`, or not named, seed 1 fails it. Head and base are
two copies of the sleepy fixture repository, on the CPU; nothing here depends on the CPU's speed."""

import json

import pytest
from test_paired_identical import CASE, case, harness, make_repo

TAIL = "dtype=fp32,n=7"

# Right on every input but seed 1's (computed for the size it is given): only a second seed finds it.
LATE_SEED = '''

def late_seed(params, ctx):
    def run(inputs, out):
        spin(2.0)
        seed1 = make_inputs({"n": inputs["x"].numel()}, 1, inputs["x"].device)["x"]
        torch.mul(inputs["x"], 3 if torch.equal(inputs["x"], seed1) else 2, out=out)
        return out

    return run


VARIANTS["late_seed"] = late_seed
'''


def late_seed_repo(path):
    make_repo(path)
    with open(path / "sleepy_bench.py", "a") as f:
        f.write(LATE_SEED)
    yml = path / "kernels" / "sleepy" / "kernel.yml"
    text = yml.read_text().replace("variants:\n", "ci_cases:\n  - dtype: fp32\n    n: [7]\nvariants:\n")
    yml.write_text(text + "  - name: late_seed\n    role: candidate\n    description: wrong on seed 1's inputs only\n")
    return path


@pytest.fixture(scope="module")
def repos(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("verify_identical")
    return late_seed_repo(tmp / "head"), late_seed_repo(tmp / "base"), tmp


def paired(repos, name, identical, *extra):
    head, base, tmp = repos
    out = tmp / f"{name}.json"
    proc = harness(head, out, "--base-root", str(base), "--base-sha", "b" * 40, "--identical", identical, *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    return json.loads(out.read_text()), proc.stdout


def tail(doc, variant):
    return next(t for t in doc["tails"] if t["variant"] == variant and t["case"] == TAIL)


@pytest.mark.parametrize("extra", [(), ("--verify-identical", "first_seed")], ids=["default", "first_seed"])
def test_first_seed_verifies_an_identical_variant_on_the_first_seed_only(repos, extra):
    doc, out = paired(repos, f"first{len(extra)}", "sleepy.late_seed,sleepy.planted", *extra)
    c = case(doc, "late_seed")
    assert c["status"] == "ok" and "timing" not in c
    assert c["identical"] == {"reason": "identical build and sources", "verified": "first_seed"}
    assert c["correctness"]["status"] == "PASS" and c["correctness"]["seeds"] == [0]
    # the stress inputs are output checks: they stay
    assert [s["name"] for s in c["correctness"]["stress"]] == ["large"]
    assert f"sleepy/late_seed {CASE} PASS rel_l2=0.0e+00 | not timed: identical build and sources, verified on the first seed only" in out
    t = tail(doc, "late_seed")
    assert t["status"] == "ok" and t["correctness"]["seeds"] == [0]
    assert t["identical"] == {"reason": "identical build and sources", "verified": "first_seed"}
    # a variant not named: every seed, its tails too
    changed = case(doc, "changed")
    assert changed["correctness"]["seeds"] == [0, 1] and changed["paired"]["n_pairs"] > 0 and "identical" not in changed
    assert tail(doc, "changed")["correctness"]["seeds"] == [0, 1] and "identical" not in tail(doc, "changed")


def test_all_verifies_an_identical_variant_on_every_seed(repos):
    doc, _ = paired(repos, "all", "sleepy.late_seed,sleepy.planted", "--verify-identical", "all")
    c = case(doc, "late_seed")
    assert c["status"] == "fail" and "identical" not in c
    assert c["correctness"]["seeds"] == [0, 1]
    assert c["correctness"]["message"].startswith("seed 1: rel_l2 5.000e-01 > tolerance 1.0e-06")
    t = tail(doc, "late_seed")
    assert t["status"] == "fail" and t["correctness"]["seeds"] == [0, 1] and "identical" not in t
    planted = case(doc, "planted")
    assert planted["identical"] == {"reason": "identical build and sources", "verified": "all"}
    assert planted["correctness"]["seeds"] == [0, 1]
    assert case(doc, "changed")["correctness"]["seeds"] == [0, 1]


def test_first_seed_verifies_a_variant_not_named_on_every_seed(repos):
    doc, _ = paired(repos, "changed", "sleepy.planted", "--verify-identical", "first_seed")
    c = case(doc, "late_seed")
    assert c["status"] == "fail" and "identical" not in c
    assert c["correctness"]["seeds"] == [0, 1]
    assert c["correctness"]["message"].startswith("seed 1: rel_l2 5.000e-01 > tolerance 1.0e-06")
    assert tail(doc, "late_seed")["status"] == "fail"
    assert case(doc, "planted")["correctness"]["seeds"] == [0]


def test_a_bad_value_is_refused(repos):
    head, _, tmp = repos
    proc = harness(head, tmp / "bad.json", "--verify-identical", "some")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "python -m kernelgate_harness: error: argument --verify-identical: invalid choice: 'some' (choose from 'first_seed', 'all')"
    )
