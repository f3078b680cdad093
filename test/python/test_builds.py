"""--builds: the build stage's records reach the results, and ctx.library answers from them."""

import json

from conftest import FIXTURE_KERNELS

N64 = "dtype=fp32,n=64"
ARGS = ("--variants", "library", "--case-params", "n=64", "--no-timing", "--seeds", "1")


def write_builds(tmp_path, records):
    path = tmp_path / "builds.json"
    path.write_text(json.dumps(records))
    return str(path)


def test_without_builds_a_cuda_variant_is_skipped(run_harness):
    c = run_harness(*ARGS, kernels=FIXTURE_KERNELS).case("library", N64)
    assert c["status"] == "skipped"
    assert c["reason"] == "no library for faulty/library: the harness was given no --builds file"


def test_a_failed_build_skips_with_its_status(run_harness, tmp_path):
    builds = write_builds(tmp_path, [{"kernel": "faulty", "variant": "library", "status": "failed"}])
    r = run_harness(*ARGS, "--builds", builds, kernels=FIXTURE_KERNELS)
    assert r.case("library", N64)["reason"] == "build of faulty/library failed (see the build report)"
    assert r.doc["builds"] == [{"kernel": "faulty", "variant": "library", "status": "failed"}]


def test_a_missing_record_names_the_builds_file(run_harness, tmp_path):
    builds = write_builds(tmp_path, {"builds": [{"kernel": "attention", "variant": "cuda_fa2", "status": "ok", "library": "/x.so"}]})
    c = run_harness(*ARGS, "--builds", builds, kernels=FIXTURE_KERNELS).case("library", N64)
    assert c["reason"] == f"no library for faulty/library: {builds} has no build record for it"


def test_a_built_library_is_handed_to_the_factory(run_harness, tmp_path):
    lib = tmp_path / "libfaulty.so"
    lib.write_bytes(b"")
    builds = write_builds(tmp_path, [{"kernel": "faulty", "variant": "library", "status": "ok", "library": str(lib), "archs": {"sass": ["sm_90a"]}}])
    r = run_harness(*ARGS, "--builds", builds, kernels=FIXTURE_KERNELS)
    assert r.case("library", N64)["status"] == "ok"
    assert r.doc["builds"][0]["library"] == str(lib)


def test_a_malformed_builds_file_is_refused(run_harness, tmp_path):
    builds = write_builds(tmp_path, [{"kernel": "faulty", "status": "ok"}])
    r = run_harness(*ARGS, "--builds", builds, kernels=FIXTURE_KERNELS, check=False)
    assert r.returncode == 2
    assert r.stderr.strip() == f"[kernelgate] error: --builds {builds}: record [0] lacks variant"
