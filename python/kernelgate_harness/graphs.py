"""CUDA graphs for the timing of short cases: a capture of n calls of a variant, cleaned up and the
process brought back when it fails (else the worker ends and the parent names the variant), and
the fallback for a variant that cannot be captured: its calls back to back between one event pair."""

import math
import time

from .device import exit_unusable

# A variant that cannot be captured in a CUDA graph is timed as calls back to back, as many as its
# graph would have launched, but no more than fit in this many ms of one call's measured time (a
# 50 ms call, 200 times a sample, outlasted the case's timeout: zeros_fast, H100 2026-11-23).
BATCH_SAMPLE_MAX_MS = 50.0


class CaptureFailed(Exception):
    """A CUDA graph capture that made no graph, already cleaned up. `error` is the first error
    (the variant's own when it raised while captured); `unjoined` says that ending the capture
    found work on another stream the capturing stream never waited for."""

    def __init__(self, errors):
        self.error = short_error(errors[0])
        self.unjoined = any(is_unjoined(e) for e in errors)
        super().__init__(self.error)


UNJOINED_MARKS = ("cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work")


def is_unjoined(exc):
    return any(mark in str(exc) for mark in UNJOINED_MARKS)


def short_error(exc):
    """'Type: first line of the message' (CUDA errors append four lines of advice)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def reset_rng_after_capture(torch):
    """True when the CUDA RNG had to be taken out of capture mode. PyTorch registers the default
    generator with a graph at capture_begin and releases it only when capture_end succeeds; after
    a failed one, the next random draw outside a capture raises "Offset increment outside graph
    capture encountered unexpectedly". The generator then gets a copy of its own state (same seed
    and offset, no capture)."""
    try:
        torch.empty(1, device="cuda").uniform_()
        return False
    except RuntimeError as e:
        if "outside graph capture" not in str(e):
            raise
    for gen in torch.cuda.default_generators:
        gen.graphsafe_set_state(gen.clone_state())
    torch.empty(1, device="cuda").uniform_()
    return True


def batch_count(n, call_ms):
    """n, or as many calls of call_ms as fit in BATCH_SAMPLE_MAX_MS (at least one)."""
    if n * call_ms <= BATCH_SAMPLE_MAX_MS:
        return n
    return max(1, int(BATCH_SAMPLE_MAX_MS // call_ms))


def unjoined_error(detail):
    """The other-stream error of a variant whose capture found unjoined work."""
    return {
        "kind": "other-stream",
        "message": (
            f"capturing its calls in a CUDA graph found work on another stream that the timed stream never waits for ({detail}): "
            "the variant launches work on another stream than the one timed, so events would not measure it and its output can be read before it is written"
        ),
    }


class GraphCapture:
    """The worker's capture of a variant's calls (a mixin of worker.Worker: it uses `torch` and
    keeps `capture_stream`, the one stream every capture of the process runs on)."""

    def batch_calls(self, call, n):
        """Calls per sample for a variant timed back to back: the n its graph would have launched,
        fewer when n of its calls would outlast BATCH_SAMPLE_MAX_MS (the fastest of two calls)."""
        best = math.inf
        for _ in range(2):
            self.torch.cuda.synchronize()
            t0 = time.perf_counter()
            call()
            self.torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) * 1e3)
        return batch_count(n, best)

    def capture(self, fn, n):
        """(graph of n calls, the output of the last). A capture that fails is ended and cleaned up
        before anything else runs in this process (recover_from_capture), then raises
        CaptureFailed with the variant's own error (not the "operation failed due to a previous
        error during capture" that ending the capture adds). torch.cuda.graph() did not: when
        its capture_end raised, the capture's stream stayed the current stream and the CUDA RNG
        stayed in capture mode, so every later random draw in the worker raised "Offset
        increment outside graph capture encountered unexpectedly" (other_stream, H100
        2026-11-23)."""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        if self.capture_stream is None:
            self.capture_stream = torch.cuda.Stream()
        stream = self.capture_stream
        g = torch.cuda.CUDAGraph()
        errors, res = [], None
        with torch.cuda.stream(stream):  # left however the capture ends
            g.capture_begin(capture_error_mode="global")
            try:
                for _ in range(n):
                    res = fn()
            except Exception as e:
                errors.append(e)
            try:
                g.capture_end()
            except Exception as e:
                errors.append(e)
        if not errors:
            torch.cuda.synchronize()
            return g, res
        del g, res
        failed = CaptureFailed(errors)
        problem = self.recover_from_capture(stream)
        if problem:
            exit_unusable(f"{failed.error}; after it {problem}", why="a failed CUDA graph capture left the process unusable")
        raise failed

    def recover_from_capture(self, stream):
        """Brings the process back after a failed capture: None once it works again, else what is
        still wrong (the worker then ends and is restarted; the variant is named by the parent)."""
        torch = self.torch
        with torch.cuda.stream(stream):
            still = torch.cuda.is_current_stream_capturing()
        if still:
            self.capture_stream = None
            return "its stream is still capturing"
        try:
            reset_rng_after_capture(torch)
            torch.cuda.synchronize()
            torch.empty(64, device="cuda").uniform_().add_(1)  # a random draw and a kernel
            torch.cuda.synchronize()
        except Exception as e:
            return f"the device does not work ({short_error(e)})"
        return None
