"""Case expansion, case ids and manifest errors (python/kernelgate_harness/manifest.py)."""

import json
import os

import pytest

from kernelgate_harness import yaml12
from kernelgate_harness.manifest import ManifestError, case_id, discover, expand_cases, load_manifest, matches

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_cross_product_in_key_order_first_key_slowest():
    cases = expand_cases([{"dtype": ["fp16", "bf16"], "B": 16, "causal": [False, True]}], "k.yml: cases")
    assert [c.id for c in cases] == [
        "dtype=fp16,B=16,causal=false",
        "dtype=fp16,B=16,causal=true",
        "dtype=bf16,B=16,causal=false",
        "dtype=bf16,B=16,causal=true",
    ]
    assert cases[1].params == {"dtype": "fp16", "B": 16, "causal": True}


def test_case_id_matches_the_documented_example():
    params = {"dtype": "fp16", "B": 16, "H": 96, "S": 4096, "D": 128, "causal": False}
    assert case_id(params) == "dtype=fp16,B=16,H=96,S=4096,D=128,causal=false"


def test_duplicate_case_is_an_error_naming_the_group():
    with pytest.raises(ManifestError) as e:
        expand_cases([{"n": [1, 2]}, {"n": 2}], "kernels/x/kernel.yml: cases")
    assert str(e.value) == "kernels/x/kernel.yml: cases[1]: case n=2 appears twice"


def test_empty_axis_is_an_error_naming_the_field():
    with pytest.raises(ManifestError) as e:
        expand_cases([{"n": []}], "kernels/x/kernel.yml: cases")
    assert str(e.value) == "kernels/x/kernel.yml: cases[0].n: an axis needs at least one value, got []"


def test_only_matches_scalars_and_lists():
    assert matches({"dtype": "fp16", "n": 3}, {"dtype": "fp16"})
    assert matches({"dtype": "fp16", "n": 3}, {"n": [1, 3]})
    assert not matches({"dtype": "bf16"}, {"dtype": "fp16"})
    assert matches({"dtype": "bf16"}, None)


def test_shipped_manifests_match_the_manifest_schema():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (as on the GPU machine)")
    with open(os.path.join(REPO, "schema", "kernel.schema.json")) as f:
        schema = json.load(f)
    for name in ("attention", "bsr_gemm", "gemm"):
        with open(os.path.join(REPO, "kernels", name, "kernel.yml")) as f:
            jsonschema.validate(yaml12.load(f), schema)


def test_discover_puts_the_calibration_first_and_rejects_unknown_names():
    names = [m.name for m in discover(os.path.join(REPO, "kernels"))]
    assert names[0] == "gemm" and {"attention", "bsr_gemm"} <= set(names)
    with pytest.raises(ManifestError) as e:
        discover(os.path.join(REPO, "kernels"), ["attention", "nope"])
    assert str(e.value).startswith(f"--only: no kernel named nope in {os.path.join(REPO, 'kernels')} (have: ")


def test_headline_cases_are_the_seed_workload():
    m = load_manifest(os.path.join(REPO, "kernels", "attention", "kernel.yml"))
    ids = {c.id for c in m.cases}
    for dtype in ("fp16", "bf16"):
        for d in (128, 64):
            for causal in ("false", "true"):
                assert f"dtype={dtype},B=16,H=96,S=4096,D={d},causal={causal}" in ids


def test_bad_manifest_names_file_and_field(tmp_path):
    pytest.importorskip("jsonschema", reason="the schema check needs jsonschema (absent on the GPU machine)")
    folder = tmp_path / "broken"
    folder.mkdir()
    path = folder / "kernel.yml"
    path.write_text("name: broken\nmodule: m\nvariants: [{name: a, role: candidate}]\ncases: [{n: 1}]\ntolerance: {fp32: {rel_l2: 0}}\n")
    with pytest.raises(ManifestError) as e:
        load_manifest(str(path))
    assert str(e.value).startswith(f"{path}: tolerance.fp32.rel_l2: 0 is less than or equal to the minimum of 0")


def test_name_must_equal_folder(tmp_path):
    folder = tmp_path / "here"
    folder.mkdir()
    path = folder / "kernel.yml"
    path.write_text("name: there\nmodule: m\nvariants: [{name: a, role: candidate}]\ncases: [{n: 1}]\ntolerance: {fp32: {rel_l2: 1.0e-5}}\n")
    with pytest.raises(ManifestError) as e:
        load_manifest(str(path))
    assert str(e.value) == f"{path}: name: 'there' must equal the folder name 'here'"


def _manifest(tmp_path, tolerance):
    folder = tmp_path / "softmax"
    folder.mkdir()
    path = folder / "kernel.yml"
    path.write_text(f"name: softmax\nmodule: m\nvariants: [{{name: a, role: candidate}}]\ncases: [{{W: [7, 100]}}]\ntolerance: {tolerance}\n")
    return path


def test_exponent_tolerances_are_numbers_as_the_action_reads_them(tmp_path):
    """`rel_l2: 1e-3` is 0.001 (YAML 1.2, as the action reads it), not PyYAML's string '1e-3'."""
    m = load_manifest(str(_manifest(tmp_path, "{fp16: {rel_l2: 1e-3, max_abs: 2e-3}, fp32: {rel_l2: .5}}")))
    assert m.tolerance == {"fp16": {"rel_l2": 0.001, "max_abs": 0.002}, "fp32": {"rel_l2": 0.5}}


@pytest.mark.parametrize("jsonschema_installed", [True, False])
def test_a_quoted_tolerance_is_refused_with_or_without_jsonschema(tmp_path, monkeypatch, jsonschema_installed):
    if not jsonschema_installed:
        monkeypatch.setitem(__import__("sys").modules, "jsonschema", None)  # import jsonschema raises ImportError
    path = _manifest(tmp_path, "{fp16: {rel_l2: '1e-3'}}")
    with pytest.raises(ManifestError) as e:
        load_manifest(str(path))
    assert str(e.value) == f"{path}: tolerance.fp16.rel_l2: '1e-3' is not of type 'number'"


def test_without_jsonschema_the_essential_types_are_still_checked(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "jsonschema", None)
    for tolerance, message in (
        ("{fp16: {rel_l2: 0}}", "tolerance.fp16.rel_l2: 0 is less than or equal to the minimum of 0"),
        ("{fp16: {max_abs: 1e-2}}", "tolerance.fp16: 'rel_l2' is a required property"),
        ("{fp16: {rel_l2: 1e-3, max_abs: [1]}}", "tolerance.fp16.max_abs: [1] is not of type 'number'"),
        ("[fp16]", "tolerance: ['fp16'] is not of type 'object'"),
    ):
        sub = tmp_path / str(abs(hash(tolerance)))
        sub.mkdir()
        path = _manifest(sub, tolerance)
        with pytest.raises(ManifestError) as e:
            load_manifest(str(path))
        assert str(e.value) == f"{path}: {message}"
    folder = tmp_path / "roles" / "softmax"
    folder.mkdir(parents=True)
    path = folder / "kernel.yml"
    path.write_text("name: softmax\nmodule: m\nvariants: [{name: a, role: candiate}]\ncases: [{W: 7}]\ntolerance: {fp32: {rel_l2: 1e-5}}\n")
    with pytest.raises(ManifestError) as e:
        load_manifest(str(path))
    assert str(e.value) == f"{path}: variants.0.role: 'candiate' is not one of ['candidate', 'reference']"
