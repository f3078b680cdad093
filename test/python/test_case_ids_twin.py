"""Case ids, the Python half: every vector of test/fixtures/twins/case-ids.json expands to its ids
(test/case-ids-twin.test.ts checks the same vectors against src/config/cases.ts)."""

import json
import os

import pytest

from conftest import REPO
from kernelgate_harness import yaml12
from kernelgate_harness.manifest import expand_group, js_number

VECTORS = json.load(open(os.path.join(REPO, "test", "fixtures", "twins", "case-ids.json")))["vectors"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["yaml"] for v in VECTORS])
def test_a_case_group_expands_to_the_shared_ids(vector):
    group = yaml12.load(vector["yaml"])
    assert [c.id for c in expand_group(group, "vector")] == vector["ids"]


def test_numbers_are_written_as_javascript_writes_them():
    assert [js_number(x) for x in (0.1, 100.0, 1e21, 1e-7, -2.5e-8, 5e-324, 1.7976931348623157e308)] == [
        "0.1", "100", "1e+21", "1e-7", "-2.5e-8", "5e-324", "1.7976931348623157e+308",
    ]
