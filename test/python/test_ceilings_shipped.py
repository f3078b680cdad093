"""The ceilings ship with kernelgate (issue 30): a repository without kernels/gemm measures them
with kernelgate's own calibration kernel, imported from kernelgate's checkout."""

import os

from kernelgate_harness.calibration import calibration_manifest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_a_repository_without_gemm_uses_the_shipped_calibration(tmp_path):
    (tmp_path / "kernels" / "softmax").mkdir(parents=True)
    path, root = calibration_manifest(str(tmp_path / "kernels"))
    assert path == os.path.join(REPO, "kernels", "gemm", "kernel.yml")
    assert root == REPO


def test_a_repository_with_its_own_gemm_keeps_it(tmp_path):
    (tmp_path / "kernels" / "gemm").mkdir(parents=True)
    (tmp_path / "kernels" / "gemm" / "kernel.yml").write_text("name: gemm\n")
    path, root = calibration_manifest(str(tmp_path / "kernels"))
    assert path == str(tmp_path / "kernels" / "gemm" / "kernel.yml")
    assert root is None
