"""cases[].tuning.compiled: what Triton compiled for a variant's tuned configuration, as Triton
reports it, so that "Why it moved" (docs/judging.md) can compare base and head: registers, spills,
shared memory, warps and stages of the kernel the run function launched.

A variant's run function says which kernel it launched through `run.compiled_kernel`, a callable
returning the Triton `CompiledKernel` of its last launch (None under TRITON_INTERPRET=1, where
nothing is compiled); docs/kernel-modules.md. The harness reads it after the case was verified, so
on a GPU the kernel is loaded and Triton's `n_regs` and `n_spills` (the driver's
CU_FUNC_ATTRIBUTE_NUM_REGS, and CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4) are set: `source` is
"driver". A kernel compiled but not loaded (compiled for a named target without a GPU, as the
tests do) takes both from its cubin instead (`cuobjdump --dump-resource-usage` of Triton's wheel:
REG, and STACK / 4, the stack frame being the function's local memory): `source` is "cubin".
"""

import os
import re
import subprocess
import tempfile

_USAGE = re.compile(r"\bREG:(\d+)\s+STACK:(\d+)")


def compiled_record(run):
    """The record of the kernel `run` launched last, or None: no `compiled_kernel`, nothing
    compiled (the interpreter), or a kernel object without Triton's metadata. Never raises: a
    record missing is a fact the report states, not an error of the case."""
    get = getattr(run, "compiled_kernel", None)
    if get is None:
        return None
    try:
        kernel = get()
        return kernel_facts(kernel) if kernel is not None else None
    except Exception:
        return None


def kernel_facts(kernel):
    """{name, n_regs, n_spills, shared_bytes, num_warps, num_stages, source} of a Triton
    CompiledKernel; n_regs and n_spills absent when neither the driver nor the cubin gives them."""
    md = kernel.metadata
    rec = {
        "name": str(md.name),
        "shared_bytes": int(md.shared),
        "num_warps": int(md.num_warps),
        "num_stages": int(md.num_stages),
    }
    regs, spills = getattr(kernel, "n_regs", None), getattr(kernel, "n_spills", None)
    if isinstance(regs, int) and isinstance(spills, int):
        return {**rec, "n_regs": regs, "n_spills": spills, "source": "driver"}
    usage = cubin_usage(getattr(kernel, "asm", {}).get("cubin"), rec["name"])
    if usage is None:
        return rec
    return {**rec, "n_regs": usage[0], "n_spills": usage[1] // 4, "source": "cubin"}


def triton_cuobjdump():
    """The cuobjdump Triton's wheel carries (<triton>/backends/nvidia/bin/), or None."""
    try:
        import triton
    except ImportError:
        return None
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    return tool if os.path.exists(tool) else None


def cubin_usage(cubin, name):
    """(registers, stack bytes) of function `name` in a cubin, from Triton's own cuobjdump; None
    when there is no cubin, no cuobjdump or no such function."""
    if not cubin:
        return None
    tool = triton_cuobjdump()
    if tool is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True, text=True, timeout=60).stdout
    return parse_usage(out, name)


def parse_usage(text, name):
    """(REG, STACK) of ` Function NAME:` in cuobjdump --dump-resource-usage's output, or None."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == f"Function {name}:" and i + 1 < len(lines):
            m = _USAGE.search(lines[i + 1])
            if m:
                return int(m.group(1)), int(m.group(2))
    return None
