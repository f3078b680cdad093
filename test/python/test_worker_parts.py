"""The worker's parts (docs/harness.md, "Modules"): Worker is its set-up and protocol plus one mixin
per step, each in its own module. No step is defined in two parts (one would silently shadow the
other through the method order), and the parts import neither the worker nor the parent process."""

import ast
import os

from kernelgate_harness import worker

HARNESS = os.path.dirname(worker.__file__)
PARTS = ["device", "verify", "stream_checks", "correctness", "caching", "graphs", "timing", "sampling", "timed_output", "integrity", "l2"]
# Modules the parts use that the worker does not import itself.
HELPERS = ["outputs"]
# The parent's modules and the worker itself: a part that imported one would tie the steps to the
# process that drives them.
ABOVE = {"worker", "workers", "cli", "lanes", "paired", "__main__"}


def test_each_step_is_defined_in_one_part_of_the_worker():
    seen, twice = {}, []
    for cls in worker.Worker.__mro__[:-1]:
        for name, value in vars(cls).items():
            if callable(value) and not name.startswith("__"):
                if name in seen:
                    twice.append(f"{name}: {seen[name]} and {cls.__name__}")
                seen[name] = cls.__name__
    assert twice == []
    assert [(c.__name__, c.__module__) for c in worker.Worker.__bases__] == [
        ("Verifier", "kernelgate_harness.verify"),
        ("StreamChecks", "kernelgate_harness.stream_checks"),
        ("Correctness", "kernelgate_harness.correctness"),
        ("CacheProbe", "kernelgate_harness.caching"),
        ("GraphCapture", "kernelgate_harness.graphs"),
        ("Timer", "kernelgate_harness.timing"),
        ("Sampler", "kernelgate_harness.sampling"),
        ("TimedOutputCheck", "kernelgate_harness.timed_output"),
    ]


def imported(module):
    """The harness modules `module` (a name in the package, or a file) imports: relative imports
    and kernelgate_harness.*."""
    path = module if module.endswith(".py") else os.path.join(HARNESS, f"{module}.py")
    with open(path) as f:
        tree = ast.parse(f.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                out.add(node.module.split(".")[0])
            elif node.level == 1:
                out.update(a.name for a in node.names)
            elif (node.module or "").startswith("kernelgate_harness."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("kernelgate_harness."))
    return out


def test_the_parts_import_neither_the_worker_nor_the_parent():
    breaches = {part: sorted(imported(part) & ABOVE) for part in PARTS + HELPERS}
    assert breaches == {part: [] for part in PARTS + HELPERS}


def test_the_import_check_sees_every_form_of_import(tmp_path):
    planted = tmp_path / "part.py"
    planted.write_text(
        "import torch\nfrom . import worker\nfrom .cli import main\nimport kernelgate_harness.lanes\nfrom kernelgate_harness.stats import StopRule\n"
    )
    assert imported(str(planted)) == {"worker", "cli", "lanes", "stats"}
    assert set(PARTS) <= imported("worker")
