"""The harness reads YAML as the action does (python/kernelgate_harness/yaml12.py): the shared
vectors of test/fixtures/yaml12/vectors.json, also read by test/yaml12-twin.test.ts."""

import json
import math
import os

import pytest
import yaml

from kernelgate_harness import yaml12

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
with open(os.path.join(REPO, "test", "fixtures", "yaml12", "vectors.json")) as f:
    VECTORS = json.load(f)["vectors"]


def plain(value):
    """JSON's view of a value, strict on types: a bool is no number, an int and a float are one
    number (as in JavaScript), non-finite numbers are the strings the vectors write."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return ("number", float(value))
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return ("other", repr(value))  # a date or a set: PyYAML's, never the loader's


@pytest.mark.parametrize("vector", [v for v in VECTORS if "expected" in v], ids=lambda v: v["yaml"])
def test_reads_each_vector_as_the_action_does(vector):
    assert plain(yaml12.load(vector["yaml"])) == plain(vector["expected"])


@pytest.mark.parametrize("vector", [v for v in VECTORS if "error" in v], ids=lambda v: v["yaml"])
def test_refuses_what_the_action_refuses(vector):
    with pytest.raises(yaml.YAMLError) as e:
        yaml12.load(vector["yaml"])
    assert vector["error"] in str(e.value)


def test_the_vectors_cover_what_pyyaml_reads_differently():
    """The loader is needed: on these PyYAML (YAML 1.1) disagrees with the action."""

    def pyyaml(text):
        try:
            return plain(yaml.safe_load(text))
        except yaml.YAMLError as e:  # `x: =`: PyYAML has no constructor for its own `value` tag
            return ("error", str(e))

    differ = [v["yaml"] for v in VECTORS if "expected" in v and pyyaml(v["yaml"]) != plain(v["expected"])]
    for snippet in ("rel_l2: 1e-3", "x: 017", "x: 1_000", "[yes, no, on, off, y, n, tRUE]", "x: 2026-11-26", "x: ="):
        assert snippet in differ
