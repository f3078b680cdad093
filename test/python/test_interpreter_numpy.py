"""numpy 2.4 breaks the Triton interpreter: the harness refuses to start under TRITON_INTERPRET=1
with the version and the fix (python/kernelgate_harness/interpreter.py), and every install of the
harness pins numpy below 2.4."""

import os
import re
import subprocess
import sys

import pytest

from kernelgate_harness import interpreter

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MESSAGE = (
    "numpy {v} breaks the Triton interpreter (TRITON_INTERPRET=1) for every kernel with a loop "
    "(\"InterpreterError: TypeError('only 0-dimensional arrays can be converted to Python scalars')\"): "
    "install numpy below 2.4: pip install \"numpy<2.4\""
)


@pytest.mark.parametrize("version", ["2.4.0", "2.4.1", "2.10.0rc1", "3.0.0"])
def test_numpy_2_4_and_later_are_refused_under_the_interpreter(version):
    with pytest.raises(interpreter.InterpreterSetupError) as e:
        interpreter.check({"TRITON_INTERPRET": "1"}, version)
    assert str(e.value) == MESSAGE.format(v=version)


@pytest.mark.parametrize("version", ["2.3.5", "1.26.4", "2.0.0"])
def test_earlier_numpy_runs(version):
    interpreter.check({"TRITON_INTERPRET": "1"}, version)


def test_on_the_gpu_numpy_2_4_is_fine():
    interpreter.check({}, "2.4.0")
    interpreter.check({"TRITON_INTERPRET": "0"}, "2.4.0")


def test_the_harness_exits_2_with_the_message(tmp_path):
    """A stand-in numpy 2.4.1 first on the path: the real harness stops before reading anything."""
    fake = tmp_path / "numpy"
    fake.mkdir()
    (fake / "__init__.py").write_text('__version__ = "2.4.1"\n')
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join([str(tmp_path), os.path.join(REPO, "python")])}
    out = tmp_path / "r.json"
    p = subprocess.run(
        [sys.executable, "-m", "kernelgate_harness", "--kernels", os.path.join(REPO, "kernels"), "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    assert p.returncode == 2
    assert p.stderr.strip() == "[kernelgate] error: " + MESSAGE.format(v="2.4.1")
    assert not out.exists()


def test_every_install_pins_numpy_below_2_4():
    with open(os.path.join(REPO, "requirements-ci.txt")) as f:
        pinned = re.search(r"^numpy==(\S+)$", f.read(), re.M)
    assert pinned and interpreter.major_minor(pinned.group(1)) < (2, 4)
    with open(os.path.join(REPO, "python", "pyproject.toml")) as f:
        assert '"numpy<2.4"' in f.read()
