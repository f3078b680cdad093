"""No result served from a cache (docs/harness.md, "cached result"). Once per case and variant, on
the first seed and only when timing: the variant is called on new values written into the same
input tensors, and again on values it has just seen, each call timed on its own (MLPerf's TEST04
asks the same of a system under test).

- A variant that memoises by the inputs' identity (the tensor, its address) returns the answer of
  the old values for the new ones: the output of the last call on new values is checked against
  their oracle, and one bit for bit the answer of the values before is named a cached result.
- A variant that memoises by the inputs' contents is right every time, and fast only on values it
  has seen: calls on repeated values taking under CACHE_RATIO of those on new values, by more than
  the floor (each of them, against each call on new values), in each of CACHE_CONFIRM probes, name it. The timed runs repeat their input sets, so
  such a cache would be what was timed."""

import math

from .integrity import prims_of
from .outputs import bits_differ

# The probe's own input values (not a seed the verification or the timing draws) and the factor
# its floating inputs are scaled by before each call on new values (every normal value changes).
PROBE_SEED = 5_000_011
PROBE_SCALE = 1.0 - 2.0**-6
PROBE_ROUNDS = 3
CACHE_RATIO = 0.5
CACHE_FLOOR_MS = {"cuda": 0.02, "cpu": 1.0}
CACHE_CONFIRM = 3


def floating_parts(torch, inputs):
    """The strided floating tensors of an inputs dict (sparse tensors: their values)."""
    out = []
    for x in inputs.values():
        if not isinstance(x, torch.Tensor):
            continue
        if x.layout != torch.strided:
            try:
                x = x.values()
            except (AttributeError, RuntimeError, NotImplementedError):
                continue
        if x.is_floating_point():
            out.append(x)
    return out


def median(xs):
    s = sorted(xs)
    return s[len(s) // 2]


def served_from_cache(fresh_ms, repeat_ms, device):
    """Whether every call on repeated values was faster than every call on new values by the
    probe's margin (a ratio and a floor: noise on a loaded machine moves single calls, not all)."""
    f, r = min(fresh_ms), max(repeat_ms)
    return r < CACHE_RATIO * f and f - r > CACHE_FLOOR_MS.get(device, CACHE_FLOOR_MS["cpu"])


class CacheProbe:
    """The cache probe of worker.Worker (a mixin: it uses `torch`, `device`, `module`, `guard`
    (the timer's primitives), and the verification's `tolerance` and `error_vs`)."""

    def timed_call(self, run, inputs, out):
        """(result, ms) of one call: between events on the timed stream on CUDA, synchronised; the
        wall clock on the CPU."""
        p = prims_of(self)
        if self.device != "cuda":
            t0 = p.perf_counter()
            res = run(inputs, out)
            return res, (p.perf_counter() - t0) * 1e3
        p.synchronize()
        start, end = p.event(), p.event()
        p.record(start)
        res = run(inputs, out)
        p.record(end)
        p.event_synchronize(end)
        return res, p.elapsed_time(start, end)

    def probe_once(self, run, params, attempt):
        """(fresh ms, repeat ms, the last call on new values: its output, and its values' previous
        output) on the probe's inputs (other values in each attempt)."""
        inputs = self.module.make_inputs(dict(params), PROBE_SEED + attempt, self.device)
        floats = floating_parts(self.torch, inputs)
        if not floats:
            return None
        out = self.module.output_like(inputs, params)
        before, _ = self.timed_call(run, inputs, out)
        before = before.clone()
        fresh, repeat, last = [], [], None
        for _ in range(PROBE_ROUNDS):
            for t in floats:
                t.mul_(PROBE_SCALE)
            res, ms = self.timed_call(run, inputs, out)
            fresh.append(ms)
            last, previous = res.clone(), before
            before = last
            _, ms = self.timed_call(run, inputs, out)
            repeat.append(ms)
        return fresh, repeat, last, previous, inputs

    def cache_probe(self, run, params, idx):
        """The problem this variant's calls show (a cached result), or None."""
        tol = self.tolerance(params)["rel_l2"]
        for attempt in range(CACHE_CONFIRM):
            got = self.probe_once(run, params, attempt)
            if got is None:
                return None
            fresh, repeat, last, previous, inputs = got
            if attempt == 0:
                ref = self.module.oracle(inputs, params)
                rel, _ = self.error_vs(last, ref, idx)
                del ref
                # Named only when it is the old answer: a variant wrong for other reasons is named by
                # the checks of the seeds.
                if (rel is None or rel > tol) and bits_differ(self.torch, last, previous) == 0:
                    shown = "NaN/Inf" if rel is None else f"rel_l2 {rel:.3e}"
                    return (
                        f"cached result: after new values were written into the same input tensors the output is wrong ({shown} > "
                        f"tolerance {tol:.1e}), bit for bit the answer for the values before them (a result served from a cache keyed "
                        "on the inputs' identity or memory)"
                    )
            if not served_from_cache(fresh, repeat, self.device):
                return None
        f, r = median(fresh), median(repeat)
        return (
            f"cached result: calls on input values it had just seen took {r:.3g} ms, calls on new values in the same tensors "
            f"{f:.3g} ms ({f / r if r > 0 else math.inf:.1f}x), in each of {CACHE_CONFIRM} probes: a result served from a cache "
            "keyed on the inputs' contents (the timed runs repeat their input sets, so the cache would be what is timed)"
        )
