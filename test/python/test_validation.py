"""The results document is checked against schema/results.schema.json before every write
(python/kernelgate_harness/validation.py, document.py): the messages name the file, the JSON path,
the case and the bad value; without a validator the harness says so once and claims no check."""

import json
import sys

import pytest

from kernelgate_harness import validation
from kernelgate_harness.document import Document

GOOD_CASE = {"kernel": "softmax", "variant": "triton", "case": "n=1024", "params": {"n": 1024}, "status": "skipped", "reason": "r"}


def document(tmp_path):
    out = str(tmp_path / "results.json")
    return Document(out, {"started_at": "2026-11-27T10:00:00Z", "harness": "kernelgate-harness test"}, True, 0.0), out


def test_a_valid_document_is_written_and_said_to_be_validated(tmp_path):
    d, out = document(tmp_path)
    d.doc["cases"].append(dict(GOOD_CASE))
    d.write(final=True)
    with open(out) as f:
        assert json.load(f)["cases"] == [GOOD_CASE]
    assert not (tmp_path / "results.json.invalid.json").exists()
    assert d.validated_by == f"validated by fastjsonschema {validation.fastjsonschema_version()} against schema/results.schema.json"


def test_a_bad_case_fails_the_write_naming_file_path_case_and_value(tmp_path):
    d, out = document(tmp_path)
    d.doc["cases"].append(dict(GOOD_CASE))
    d.write()  # a valid checkpoint
    d.doc["cases"].append({**GOOD_CASE, "case": "n=2048", "params": {"n": 2048}, "status": "passed"})
    with pytest.raises(SystemExit) as e:
        d.write(final=True)
    assert str(e.value) == (
        f"[kernelgate] results do not match schema/results.schema.json, written to {out}.invalid.json instead: "
        f"{out}: cases[1].status (softmax/triton n=2048): must be one of ['ok', 'fail', 'error', 'timeout', 'skipped'] (got \"passed\")"
    )
    with open(out) as f:
        assert [c["case"] for c in json.load(f)["cases"]] == ["n=1024"]  # the last valid document stays
    with open(f"{out}.invalid.json") as f:
        assert json.load(f)["cases"][1]["status"] == "passed"


def test_every_write_is_checked_not_only_the_last(tmp_path):
    d, out = document(tmp_path)
    d.doc["cases"].append({**GOOD_CASE, "timing": {"median_ms": "fast"}})
    with pytest.raises(SystemExit, match=r"results\.json: cases\[0\]\.timing \(softmax/triton n=1024\): must contain \["):
        d.write()
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda doc: doc.__setitem__("schema", "kernelgate/results@2"),
            'schema: must be same as const definition: kernelgate/results@1 (got "kernelgate/results@2")',
        ),
        (lambda doc: doc["run"].__setitem__("harness", 3), "run.harness: must be string (got 3)"),
        (lambda doc: doc["cases"].append({**GOOD_CASE, "extra": 1}), "cases[0] (softmax/triton n=1024): must not contain {'extra'} properties (got "),
    ],
)
def test_paths_outside_and_inside_the_cases(tmp_path, change, message):
    d, out = document(tmp_path)
    change(d.doc)
    check, _ = validation.validator()
    assert check is not None
    assert validation.problem(out, d.doc, check).startswith(f"{out}: {message}")


def test_a_long_bad_value_is_cut_at_80_characters():
    assert validation.show_value("x" * 100) == json.dumps("x" * 77)[:77] + "..."
    assert len(validation.show_value("x" * 100)) == 80


def test_without_a_validator_it_says_so_once_and_claims_no_check(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "fastjsonschema", None)  # import fastjsonschema raises ImportError
    d, out = document(tmp_path)
    d.doc["cases"].append({**GOOD_CASE, "status": "passed"})  # not caught here: ajv refuses it on read
    d.write()
    d.write(final=True)
    said = capsys.readouterr().out
    assert said == (
        "[kernelgate] no JSON-schema validator: fastjsonschema does not import (pip install fastjsonschema, a dependency "
        "of the harness package): results are written unvalidated here; kernelgate validates them when it reads them\n"
    )
    assert d.validated_by == "not validated: no JSON-schema validator"
    with open(out) as f:
        assert json.load(f)["cases"][0]["status"] == "passed"
