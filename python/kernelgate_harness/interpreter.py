"""The Triton interpreter's known incompatibilities, refused before any kernel runs.

numpy 2.4 turned `int()` of a one-element array into an error; Triton 3.6's interpreter makes loop
bounds that way, so any kernel with a loop dies under TRITON_INTERPRET=1 with "InterpreterError:
TypeError('only 0-dimensional arrays can be converted to Python scalars')", a message that names
neither numpy nor the fix. The harness's install pins numpy below 2.4 (python/pyproject.toml,
requirements-ci.txt); this names the version and the fix when a runner has a newer one."""

import os
import re


class InterpreterSetupError(Exception):
    """The interpreter cannot run the kernels in this environment; the message says the fix."""


def numpy_version():
    """numpy's version string, or None when numpy is not installed."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy.__version__


def major_minor(version):
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def check(environ=None, version=None):
    """Raises InterpreterSetupError when TRITON_INTERPRET=1 and numpy is 2.4 or newer."""
    environ = os.environ if environ is None else environ
    if environ.get("TRITON_INTERPRET") != "1":
        return
    version = numpy_version() if version is None else version
    mm = major_minor(version)
    if mm is not None and mm >= (2, 4):
        raise InterpreterSetupError(
            f"numpy {version} breaks the Triton interpreter (TRITON_INTERPRET=1) for every kernel with a loop "
            "(\"InterpreterError: TypeError('only 0-dimensional arrays can be converted to Python scalars')\"): "
            "install numpy below 2.4: pip install \"numpy<2.4\""
        )
