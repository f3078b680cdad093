"""What a variant's call returns, checked as a result of its own (docs/harness.md, "What a faulty
kernel cannot hide"): a plain torch.Tensor (no subclass, no lazy wrapper that does its work when
first used, outside the timed interval), in no memory of its inputs or of an earlier call's result
other than the output buffer it was handed, finished when the call returns (not changed afterwards
by a thread, a process or a stream the call left running), and not an answer served again for other inputs (a
cached result, named by its bits being those of another input set's output)."""

import threading
import time

from .processes import descendants, holds_open

# How long the check after a call waits for threads the call started (a thread that finishes the
# output after the call returned is work the timing does not see).
SETTLE_THREADS_S = 1.0
# ... and for processes it started (a child process that writes the output through shared or
# CUDA IPC memory); longer, as a new Python process takes seconds to start.
SETTLE_PROCESSES_S = 5.0


def storage_span(torch, t):
    """(device, first byte, end byte) of the memory a strided tensor's storage holds; None for a
    tensor without one (sparse: its parts are checked)."""
    if t.layout != torch.strided:
        return None
    try:
        s = t.untyped_storage()
    except (RuntimeError, NotImplementedError):
        return None
    start = s.data_ptr()
    return (str(t.device), start, start + s.nbytes())


def tensor_parts(torch, name, x):
    """[(name, strided tensor)] of a value: itself, or the parts of a sparse tensor."""
    if not isinstance(x, torch.Tensor):
        return []
    if x.layout == torch.strided:
        return [(name, x)]
    parts = []
    for part in ("values", "crow_indices", "col_indices", "ccol_indices", "row_indices", "indices"):
        try:
            parts.append((name, getattr(x, part)()))
        except (AttributeError, RuntimeError, NotImplementedError):
            continue
    return parts


def shares_memory(torch, a, b):
    sa, sb = storage_span(torch, a), storage_span(torch, b)
    if sa is None or sb is None or sa[0] != sb[0] or sa[1] == sa[2] or sb[1] == sb[2]:
        return False
    return sa[1] < sb[2] and sb[1] < sa[2]


def not_plain(torch, res):
    """Why `res` is not a plain, materialised torch.Tensor, or None."""
    if not isinstance(res, torch.Tensor):
        return (
            f"returned a {type(res).__module__}.{type(res).__qualname__}, not a torch.Tensor: outputs must be plain tensors, "
            "materialised when the call returns (a lazy output does its work when first used, outside the timed interval)"
        )
    if type(res) is not torch.Tensor:
        return (
            f"returned a {type(res).__module__}.{type(res).__qualname__}, a subclass of torch.Tensor: outputs must be plain "
            "torch.Tensor, materialised when the call returns (a subclass can defer its work to its first use, outside the "
            "timed interval: a lazy output)"
        )
    return None


def aliased_input(torch, res, inputs, out):
    """The name of an input whose memory `res` shares (and the output buffer `out` does not), or None."""
    if out is not None and shares_memory(torch, res, out):
        return None
    for name, x in inputs.items():
        for part_name, part in tensor_parts(torch, name, x):
            if shares_memory(torch, res, part):
                return part_name
    return None


def output_problem(torch, res, inputs, out, earlier=None):
    """Why a call's result is refused (not plain, an input's memory, an earlier call's memory), or None."""
    problem = not_plain(torch, res)
    if problem:
        return problem
    name = aliased_input(torch, res, inputs, out)
    if name is not None:
        return (
            f"its output shares memory with its input {name} (an aliased output: outputs must be tensors of their own, the "
            "output buffer handed to the call or new memory)"
        )
    if earlier is not None and not shares_memory(torch, res, out) and shares_memory(torch, res, earlier):
        return (
            "its output shares memory with the output of its previous call (an aliased output: the same memory returned "
            "again, so one call's result is overwritten by the next; outputs must be the buffer handed to the call or new memory)"
        )
    return None


def bits(torch, t):
    """`t`'s elements as integers of the same width (NaN compares equal to itself)."""
    flat = t.detach().reshape(-1)
    if flat.dtype == torch.bool:
        return flat.view(torch.uint8)
    return flat.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[flat.element_size()])


def bits_differ(torch, a, b):
    """How many elements of a and b differ in their bits (shapes must match; else all)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return max(a.numel(), b.numel())
    return int((bits(torch, a) != bits(torch, b)).sum())


def new_threads(before):
    return [t for t in threading.enumerate() if t not in before and t.is_alive()]


def settle(torch, device, before, processes_before=None):
    """Waits for the threads a call started (up to SETTLE_THREADS_S), for the processes it started
    when `processes_before` (descendants() before the call) is given (up to SETTLE_PROCESSES_S; those
    they start meanwhile, and a double fork's grandchild, re-parented to the worker, count too), and
    on CUDA for the whole device: afterwards nothing the call left running can still write its
    output. Returns ({pid: name} of the processes the call started, the pids among them seen with
    the GPU open): judged by what they did (the output checked afterwards), so a pool that outlives
    the call and writes nothing is no fault."""
    deadline = time.monotonic() + SETTLE_THREADS_S
    for t in new_threads(before):
        t.join(max(0.0, deadline - time.monotonic()))
    started, on_gpu = {}, set()
    if processes_before is not None:
        started = {p: n for p, n in descendants().items() if p not in processes_before}
        running = dict(started)
        until = time.monotonic() + SETTLE_PROCESSES_S
        while running:
            on_gpu.update(p for p in running if p not in on_gpu and holds_open(p))
            if time.monotonic() >= until:
                break
            time.sleep(0.02)
            alive = descendants()
            new = {p: n for p, n in alive.items() if p not in processes_before and p not in started}
            started.update(new)
            running = {p: n for p, n in {**running, **new}.items() if p in alive}
    if device == "cuda":
        torch.cuda.synchronize()
    return started, on_gpu


def changed_after_return_message(where, n, numel, processes=(), on_gpu=False):
    """`processes`: the names of the processes the call started ("python3 (pid 4242)"); `on_gpu`:
    whether one of them had the GPU open (which names CUDA IPC as the way it wrote)."""
    if processes:
        how = (
            "in another process that had the GPU open (a process with a CUDA context of its own writes the output's memory "
            "through CUDA IPC)" if on_gpu else "in another process"
        )
        return (
            f"{where}: the output changed after the call returned ({n} of {numel} elements differ once the processes it started "
            f"({', '.join(processes)}) had ended and the device was synchronised): work continued after the call returned, {how}, "
            "which the timing does not see"
        )
    return (
        f"{where}: the output changed after the call returned ({n} of {numel} elements differ once the threads it started had "
        "ended and the device was synchronised): work continued after the call returned, on another thread or stream, which "
        "the timing does not see"
    )


def cached_result_message(where, other):
    return (
        f"{where}: cached result: the output is wrong and bit for bit the output it returned for {other} (a result served "
        "from a cache keyed on the inputs' identity or memory, not computed for these values)"
    )
