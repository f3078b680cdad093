"""Deliberate faults for proving the pipeline end to end: KERNELGATE_FAULT=<kernel>.<variant>:<mode>
(or --fault) makes one variant wrong or slow by a known amount. Off unless asked for.

Modes:
  wrong  the output is scaled by 1 + WRONG_SCALE after every run: rel_l2 rises by 2e-2
  slow   every call runs the variant twice: the median roughly doubles (extra work, same result)
  nan    one output element is set to NaN after every run
"""

import math

WRONG_SCALE = 2e-2
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
    if mode not in MODES:
        raise FaultSpecError(f"KERNELGATE_FAULT: mode {mode!r} is not one of {', '.join(MODES)} (in {spec!r})")
    return kernel, variant, mode


def wrap(run, mode):
    """The variant's run function with the fault planted."""
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
