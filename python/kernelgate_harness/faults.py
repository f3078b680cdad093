"""Deliberate faults for proving the pipeline end to end: KERNELGATE_FAULT=<kernel>.<variant>:<mode>
(or --fault) makes one variant wrong or slow by a known amount. Off unless asked for.

Modes:
  wrong  the output is scaled by 1 + WRONG_SCALE after every run: rel_l2 rises by 2e-2
  slow   every call runs the variant twice: the median roughly doubles (extra work, same result)
  slow:P every call is followed by a spin of P % of the variant's own time (0 < P <= 100), on the
         GPU (torch.cuda._sleep, calibrated once against the variant's warm time) or the CPU:
         a small slowdown of known size, for the paired A/B gate's proof runs
  nan    one output element is set to NaN after every run
"""

import math
import sys
import time

WRONG_SCALE = 2e-2
# slow:P calibration: untimed calls first, then this many timed ones (medians), a probe spin of
# PROBE_CYCLES to convert milliseconds into GPU cycles, each timing behind a LEAD_CYCLES spin.
CALIBRATION_WARM_CALLS = 5
CALIBRATION_REPEATS = 9
PROBE_CYCLES = 2_000_000
LEAD_CYCLES = 200_000
MODES = ("wrong", "slow", "nan")


class FaultSpecError(ValueError):
    pass


def parse(spec):
    """'attention.triton_fa2:wrong' -> ('attention', 'triton_fa2', 'wrong'); '' or None -> None."""
    if not spec:
        return None
    target, sep, mode = spec.partition(":")
    kernel, dot, variant = target.partition(".")
    if not sep or not dot or not kernel or not variant:
        raise FaultSpecError(f"KERNELGATE_FAULT: expected <kernel>.<variant>:<mode>, got {spec!r}")
    name, colon, amount = mode.partition(":")
    if name not in MODES or (colon and name != "slow"):
        raise FaultSpecError(f"KERNELGATE_FAULT: mode {mode!r} is not one of {', '.join(MODES)}, slow:<percent> (in {spec!r})")
    if colon:
        try:
            pct = float(amount)
        except ValueError:
            pct = math.nan
        if not 0 < pct <= 100:
            raise FaultSpecError(f"KERNELGATE_FAULT: slow:<percent> needs a percentage in (0, 100], got {amount!r} (in {spec!r})")
    return kernel, variant, mode


def slow_by(run, pct, device):
    """run, then a spin of pct % of run's own time (calibrated once, outside any graph capture)."""
    frac = pct / 100.0
    if device != "cuda":

        def slowed_cpu(inputs, out):
            t0 = time.perf_counter()
            res = run(inputs, out)
            spin_until = time.perf_counter() + frac * (time.perf_counter() - t0)
            while time.perf_counter() < spin_until:
                pass
            return res

        return slowed_cpu
    import torch

    state = {}

    def calibrate(inputs, out):
        """Cycles of spin worth frac of run's warm time: a few untimed calls first, then run and a
        probe spin timed alternately (so both see the same clock), each behind a short spin so
        that its start event does not wait on the host's launch; medians of CALIBRATION_REPEATS."""
        for _ in range(CALIBRATION_WARM_CALLS):
            run(inputs, out)
        run_ms, probe_ms = [], []
        for _ in range(CALIBRATION_REPEATS):
            for fn, times in ((lambda: run(inputs, out), run_ms), (lambda: torch.cuda._sleep(PROBE_CYCLES), probe_ms)):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda._sleep(LEAD_CYCLES)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
        med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        cycles_per_ms = PROBE_CYCLES / med(probe_ms)
        state["cycles"] = max(1, int(frac * med(run_ms) * cycles_per_ms))
        spin = f"a spin of {state['cycles']} cycles ({state['cycles'] / cycles_per_ms:.4f} ms)"
        print(f"[kernelgate fault] slow:{pct:g}: the variant's warm median {med(run_ms):.4f} ms, {spin} after every call", file=sys.stderr, flush=True)

    def slowed(inputs, out):
        if "cycles" not in state and not torch.cuda.is_current_stream_capturing():
            calibrate(inputs, out)
        res = run(inputs, out)
        torch.cuda._sleep(state.get("cycles", 1))
        return res

    return slowed


def wrap(run, mode, device="cpu"):
    """The variant's run function with the fault planted. It still names the kernel the variant
    launched (`compiled_kernel`, compiled.py): without it a planted slowdown's Why-it-moved read
    "the head recorded no compiled-kernel metadata (an older harness or kernel module)" (run 84,
    two H100s, 2026-11-27)."""
    planted = _planted(run, mode, device)
    get = getattr(run, "compiled_kernel", None)
    if get is not None:
        planted.compiled_kernel = get
    return planted


def _planted(run, mode, device):
    if mode.startswith("slow:"):
        return slow_by(run, float(mode.partition(":")[2]), device)
    if mode == "wrong":

        def wrong(inputs, out):
            res = run(inputs, out)
            return res.mul_(1 + WRONG_SCALE)

        return wrong
    if mode == "slow":

        def slow(inputs, out):
            run(inputs, out)
            return run(inputs, out)

        return slow
    if mode == "nan":

        def nan(inputs, out):
            res = run(inputs, out)
            res.view(-1)[0] = math.nan
            return res

        return nan
    raise FaultSpecError(f"unknown fault mode {mode!r}")
