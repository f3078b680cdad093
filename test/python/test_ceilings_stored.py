"""--ceilings FILE (issue 27): a pull request whose calibration kernel (gemm) is identical in base and
head takes the ceilings a stored run of the same GPU model measured, rather than spend the
calibration's seconds (8.5 s of run 87's 131 s on the H100). The results say where they came from
(environment.ceilings.source) and the timed cases get their copy-ceiling share as measured ones do.
The sleepy fixture repository on the CPU, which has no gemm kernel and measures no ceilings."""

import json

import pytest
from test_paired_identical import harness, make_repo

CEILINGS = {
    "copy_gbps": 2900.5,
    "gemm_tflops": {"fp16": 640.0, "bf16": 655.25},
    "source": "the stored run baselines/main/H100-SXM.json (main, H100-SXM), 2026-11-27T01:23:00Z",
}


def run_with(tmp_path, ceilings):
    head = make_repo(tmp_path / "head")
    path = tmp_path / "ceilings.json"
    path.write_text(ceilings if isinstance(ceilings, str) else json.dumps(ceilings))
    out = tmp_path / "results.json"
    return harness(head, out, "--ceilings", str(path)), out, path


def test_the_stored_ceilings_stand_in_for_the_calibration(tmp_path):
    proc, out, _ = run_with(tmp_path, CEILINGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    doc = json.loads(out.read_text())
    assert doc["environment"]["ceilings"] == CEILINGS
    assert "calibration" not in doc["run"]["stage_seconds"]
    timed = [c for c in doc["cases"] if c.get("throughput")]
    assert timed and all(c["throughput"]["pct_copy_ceiling"] == pytest.approx(100 * c["throughput"]["gbps"] / 2900.5) for c in timed)
    assert f"[kernelgate] ceilings from {CEILINGS['source']}: the calibration kernel is identical, not measured again" in proc.stdout


def test_without_them_a_cpu_run_has_no_ceilings(tmp_path):
    head = make_repo(tmp_path / "head")
    out = tmp_path / "results.json"
    proc = harness(head, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "ceilings" not in json.loads(out.read_text())["environment"]


@pytest.mark.parametrize(
    ("ceilings", "message"),
    [
        ({**CEILINGS, "copy_gbps": 0}, "copy_gbps must be a number above 0, got 0"),
        ({**CEILINGS, "copy_gbps": "fast"}, "copy_gbps must be a number above 0, got 'fast'"),
        ({**CEILINGS, "gemm_tflops": {"fp16": -1}}, "gemm_tflops.fp16 must be a number above 0, got -1"),
        ({**CEILINGS, "gemm_tflops": {}}, "gemm_tflops must be an object of rates by dtype, got {}"),
        ({**CEILINGS, "source": ""}, "source must name the run that measured them, got ''"),
        ([1, 2], "expected an object, got list"),
    ],
)
def test_a_bad_file_names_the_field_and_the_value(tmp_path, ceilings, message):
    proc, _, path = run_with(tmp_path, ceilings)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == f"[kernelgate] error: --ceilings {path}: {message}"


def test_a_file_that_is_not_json_is_refused(tmp_path):
    proc, _, path = run_with(tmp_path, "{not json")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(f"[kernelgate] error: --ceilings {path}: cannot read a JSON document: ")
