"""`kernelgate check`'s probe: imports each kernel module named on the command line from the
checkout (the current directory) and prints, as one JSON object on stdout, its VARIANTS' names and
which of the names the harness uses it lacks, or why it could not be imported. Nothing is run.

    python kernelgate_launch.py kernelgate_harness.probe_modules NAME=MODULE [NAME=MODULE ...]
"""

import importlib
import importlib.util
import json
import os
import sys
import traceback

REQUIRED = ("make_inputs", "output_like", "oracle", "work", "VARIANTS")


def probe(module_name):
    try:
        module = importlib.import_module(module_name)
    except BaseException as e:
        missing = getattr(e, "name", None) if isinstance(e, ModuleNotFoundError) else None
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        return {"error": last, "missing_module": missing}
    variants = getattr(module, "VARIANTS", None)
    return {
        "variants": sorted(variants) if isinstance(variants, dict) else None,
        "lacks": [n for n in REQUIRED if not hasattr(module, n)],
    }


def main(argv):
    # The checkout first on sys.path, as the kernel workers put it (worker.checkout_on_path, not
    # imported here: the worker's modules need torch, and this probe says when torch is missing).
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    out = {"torch": importlib.util.find_spec("torch") is not None, "modules": {}}
    stdout = sys.stdout
    sys.stdout = sys.stderr  # what a module prints at import must not spoil the answer
    try:
        for arg in argv:
            name, _, module_name = arg.partition("=")
            out["modules"][name] = probe(module_name)
    finally:
        sys.stdout = stdout
    print("KERNELGATE_PROBE " + json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
