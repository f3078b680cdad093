"""The paired rule, the harness's half: every vector of test/fixtures/twins/paired-rule.json gives
its case threshold, and the stop rule's SLOWER or FASTER exactly where the judge's verdict is one
(test/paired-rule-twin.test.ts holds the judge to the same vectors)."""

import json
import os

import pytest

from conftest import REPO
from kernelgate_harness.paired import case_threshold_pct, change_of

VECTORS = json.load(open(os.path.join(REPO, "test", "fixtures", "twins", "paired-rule.json")))["vectors"]


@pytest.mark.parametrize("v", VECTORS, ids=[f"[{v['lo']}, {v['hi']}] {v['verdict']}" for v in VECTORS])
def test_the_stop_rule_decides_as_the_judge(v):
    assert case_threshold_pct(v["threshold_pct"], v["min_change_ms"], v["base_median_ms"]) == pytest.approx(v["case_threshold_pct"])
    record = {"base_status": "ok", "ci_lo": v["lo"], "ci_hi": v["hi"], "base_timing": {"median_ms": v["base_median_ms"]}}
    if v["detect_pct"] is not None:
        record["detect_pct"] = v["detect_pct"]
    expected = v["verdict"] if v["verdict"] in ("SLOWER", "FASTER") else None
    assert change_of(record, v["threshold_pct"], v["min_change_ms"]) == expected
