"""The harness's last stdout line is the sha256 of the bytes its final write put at --out (issue
34): the action checks the file against it before judging (src/measure/harness.ts), so a process
the kernels started that rewrites the file after the harness's last write is caught."""

import hashlib
import json
import re

from conftest import FIXTURE_KERNELS
from kernelgate_harness.results import write_atomic

DIGEST = re.compile(r"^\[kernelgate\] results sha256 ([0-9a-f]{64}) (.+)$")


def test_the_last_line_is_the_digest_of_the_file_written(run_harness, tmp_path):
    r = run_harness("--variants", "good", "--case-params", "n=64", "--no-timing", "--seeds", "1", kernels=FIXTURE_KERNELS)
    last = r.stdout.rstrip("\n").splitlines()[-1]
    m = DIGEST.match(last)
    assert m, f"the last stdout line is not the digest line: {last!r}"
    out = tmp_path / "results.json"
    assert m.group(2) == str(out)
    assert m.group(1) == hashlib.sha256(out.read_bytes()).hexdigest()
    assert sum(1 for line in r.stdout.splitlines() if DIGEST.match(line)) == 1
    assert r.doc["cases"], "the harness measured no case"


def test_write_atomic_returns_the_digest_of_the_bytes_it_wrote(tmp_path):
    path = tmp_path / "doc.json"
    doc = {"schema": "kernelgate/results@1", "name": "caf\u00e9", "x": [1, 2.5]}
    digest = write_atomic(str(path), doc)
    data = path.read_bytes()
    assert digest == hashlib.sha256(data).hexdigest()
    assert json.loads(data) == doc
    # Another document, another digest: the digest is of what was written, not a constant.
    assert write_atomic(str(path), {**doc, "x": [1]}) != digest
