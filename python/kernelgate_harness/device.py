"""The worker process's hold on its device: whether its CUDA context still works, the error record
of a kernel's exception, and the exit of a worker that can no longer run CUDA work correctly (the
parent restarts it and names the culprit). Shared by the verification and the timing."""

import os
import sys
import traceback

# GPU spins (torch.cuda._sleep) are sized in cycles: cycles per ms at Hopper's 1.98 GHz top clock
# (a lower clock only makes a spin longer).
SPIN_CYCLES_PER_MS = 1_980_000

# Exit status of a worker whose CUDA context was lost (an illegal memory access, a device-side
# assert, a launch failure): every later CUDA call in the process would fail, innocent or not, so
# the worker ends and the parent restarts it and finds the culprit (cli.Harness.run_case).
EXIT_CONTEXT_LOST = 86
# The shared `current` text: variant, phase and, after a lost context, the error (tab-separated).
CURRENT = {"array": None}


def context_lost():
    """True when the process's CUDA context no longer works (a sticky error): a new allocation and
    a device-wide synchronize fail. False on the CPU and after ordinary Python errors."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return False
    try:
        torch.empty(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        return False
    except Exception:
        return True


def is_out_of_memory(torch, exc):
    oom = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "CUDA out of memory" in str(exc)


def exit_unusable(error, why="the CUDA context was lost"):
    """Ends a worker whose process can no longer run CUDA work correctly, the error written to the
    shared `current` text for the parent (which names the variant it was running)."""
    arr = CURRENT["array"]
    if arr is not None:
        variant, _, phase = bytes(arr.value).decode(errors="replace").partition("\t")
        arr.value = f"{variant}\t{phase.partition(chr(9))[0]}\t{error}".encode()[:250]
    print(f"[kernelgate worker] {why} ({error}); exiting", file=sys.stderr, flush=True)
    os._exit(EXIT_CONTEXT_LOST)


def error_record(kind, exc):
    """The error record of an exception; a lost CUDA context ends the worker instead."""
    if context_lost():
        exit_unusable(f"{type(exc).__name__}: {exc}")
    tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-2000:]
    return {"kind": kind, "message": f"{type(exc).__name__}: {exc}"[:2000], "log_tail": tail}


def sync_stream(torch, device):
    """Waits for the current stream (the timed one) on CUDA; nothing on the CPU."""
    if device == "cuda":
        torch.cuda.current_stream().synchronize()
