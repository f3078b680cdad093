"""A tuning result remembered across processes of one run: KERNELGATE_TUNE_CACHE names a folder
where a host-side tuner's choice is kept under a key of the tuner's own source and the case.

A paired A/B run times the pull request's head and its base in two processes. Each tuned its
kernels on its own, and two tunings of identical code can pick different tilings when two of them
time within noise of each other: on the H100 `triton_fa2` then read 3-5 % faster in one arm than
in the other on identical code (docs/notes/paired-ab.md). With the cache, the arm that tunes second
takes the first arm's choice when, and only when, the tuner's code and the case are the same; a
pull request that changes the tuned kernel's code is tuned afresh. The code is the module's syntax
tree without comments, docstrings or line numbers: a comment in triton_fa2.py re-tuned the head arm
on the H100 (run 50) and its arms launched different tilings on four cases (-4 ... +4 %) of a pull
request that changed nothing that runs. Unset (the default outside paired runs), every process
tunes for itself."""

import ast
import hashlib
import json
import os
import sys

ENV = "KERNELGATE_TUNE_CACHE"


def code_digest(module):
    """sha256 of a module's code: its syntax tree without docstrings (ast.dump leaves out comments
    and line numbers), so the tuning key changes when what runs does, not when a comment does. A
    file that does not parse is keyed by its bytes."""
    with open(module.__file__, "rb") as f:
        source = f.read()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return hashlib.sha256(source).hexdigest()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def remembered(module, case, device, tune):
    """tune() -> (config, {config: ms}), or the config an earlier process stored for the same
    module code (code_digest), case and GPU model (`device`: "cuda" or "cpu"). A config is a tuple; the
    returned table is empty on a hit. The choice is logged in paired runs and under
    KERNELGATE_VERBOSE=1 (the tuner's table of timings with it)."""
    folder = os.environ.get(ENV)
    if not folder:
        config, times = tune()
        if os.environ.get("KERNELGATE_VERBOSE"):
            log_choice(module, case, config, times)
        return config, times
    key = json.dumps({"module": module.__name__, "source": code_digest(module), "case": case, "device": device_name(device)}, sort_keys=True, default=str)
    path = os.path.join(folder, hashlib.sha256(key.encode()).hexdigest() + ".json")
    try:
        with open(path) as f:
            stored = json.load(f)
        if stored.get("key") == key:
            config = tuple(stored["config"])
            print(
                f"[kernelgate tuning] {module.__name__} {case} -> {config} "
                "(remembered: tuned by an earlier process, of this run or an earlier one, in KERNELGATE_TUNE_CACHE)",
                file=sys.stderr,
                flush=True,
            )
            return config, {}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    config, times = tune()
    log_choice(module, case, config, times)
    try:
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump({"key": key, "config": list(config)}, f)
        os.replace(tmp, path)
    except OSError as e:
        print(f"[kernelgate tuning] could not remember the tuning in {folder}: {e}", file=sys.stderr, flush=True)
    return config, times


def log_choice(module, case, config, times):
    table = ", ".join(f"{c}: {t:.3f} ms" for c, t in sorted(times.items(), key=lambda kv: kv[1])) or "not tuned"
    print(f"[kernelgate tuning] {module.__name__} {case} -> {config}; {table}", file=sys.stderr, flush=True)


def device_name(device):
    """The GPU's name on CUDA (a tiling tuned on one GPU model says nothing of another), else the device."""
    if device == "cuda":
        import torch

        return torch.cuda.get_device_name()
    return str(device)
