"""Work left on another stream, the checks verify.Verifier runs on a case's first seed: a third
run beside a load on another stream (a race two quiet runs agreed on), the late-work check (a
wrong output when the timed stream is done, right after a device-wide synchronize) and the drain
probe (device work that outlives the timed stream's end event)."""

import math

from .device import SPIN_CYCLES_PER_MS
from .integrity import prims_of
from .outputs import bits_differ, output_problem
from .verify import late_gate_ms

# The third run of the first seed on the GPU runs beside this load on another stream (256 MiB
# added to, LOAD_PASSES times): the variant's blocks then meet other SMs' work and other orders.
LOAD_ELEMENTS = 64 << 20
LOAD_PASSES = 4



class StreamChecks:
    """The stream checks of worker.Worker (a mixin: it uses `torch`, `device`, `module` and the
    verification's `tolerance` and `error_vs` (verify.Verifier))."""

    def third_run_moved(self, run, inputs, params, res1):
        """Elements of a third run's output (over a NaN-filled buffer; on CUDA beside a load on
        another stream) whose bits differ from the first run's."""
        torch = self.torch
        out = self.module.output_like(inputs, params)
        out.fill_(math.nan)
        if self.device == "cuda":
            load = torch.zeros(LOAD_ELEMENTS, device="cuda")
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(LOAD_PASSES):
                    load.add_(1.0)
            res = run(inputs, out)
            torch.cuda.synchronize()
            del load
        else:
            res = run(inputs, out)
        if output_problem(torch, res, inputs, out) is not None:
            return res1.numel()
        return bits_differ(torch, res, res1)

    def right_only_after_device_sync(self, run, inputs, params, ref, idx, host_ms=0.0):
        """A wrong output when the timed stream is done that is right once the whole device is
        synchronised: the variant left work on another stream (named as such however short it is;
        the drain probe's floor only sees long work). The variant runs behind a spin on the timed
        stream (LATE_GATE_*) and its output is copied on that stream right behind it, so the copy
        starts the moment the variant's own work on the timed stream is done, whatever the host's
        latency. A variant whose work all waits on the timed stream cannot fail this."""
        torch = self.torch
        tol = self.tolerance(params)["rel_l2"]
        out = self.module.output_like(inputs, params)
        out.fill_(math.nan)
        gate_ms = late_gate_ms(host_ms)
        torch.cuda.synchronize()
        torch.cuda._sleep(int(gate_ms * SPIN_CYCLES_PER_MS))
        res = run(inputs, out)
        early = res.clone()
        torch.cuda.synchronize()
        rel_early, _ = self.error_vs(early, ref, idx)
        rel_late, _ = self.error_vs(res, ref, idx)
        return (rel_early is None or rel_early > tol) and rel_late is not None and rel_late <= tol

    def drain_probe(self, fn):
        """(result, ms the device stayed busy after the timed stream's end event, ms between the
        events, ms the host took to queue fn)."""
        p = prims_of(self)  # the timer as it was before any kernel module was imported
        p.synchronize()
        start, end = p.event(), p.event()
        p.record(start)
        h0 = p.perf_counter()
        res = fn()
        host_ms = (p.perf_counter() - h0) * 1e3
        p.record(end)
        p.event_synchronize(end)
        t0 = p.perf_counter()
        p.synchronize()
        return res, (p.perf_counter() - t0) * 1e3, p.elapsed_time(start, end), host_ms
