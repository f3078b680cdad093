"""The check of what was timed, after the timing: the latest output of every timed input set
against its own oracle (a race under repetition, a stale answer for later inputs), and each CUDA
graph replayed over a poisoned output and again on new input values (work skipped while captured,
an answer computed at capture). A variant that fails it fails its case."""

import math

from .verify import fingerprint

# The input values a graph's replay is checked on after timing: not those it was captured with.
FRESH_SEED = 2_000_003


def fail_with(rec, problem):
    """A verified variant's record turned into a failure with `problem` (the first one found)."""
    if rec.get("status") == "fail":
        return
    rec["status"] = "fail"
    rec["correctness"]["status"] = "FAIL"
    rec["correctness"]["message"] = problem


class TimedOutputCheck:
    """The checks after the timing of worker.Worker (a mixin: it uses `torch`, `device`, `module`,
    `mark`, and the verification's `tolerance` and `error_vs`)."""

    def finish(self, b):
        """Checks what was timed against the oracle, then frees the case: the latest output of every
        timed input set (each against its own oracle: a variant that returns what it computed for
        the first inputs passes set 0 only), and a fresh replay of each CUDA graph (what a graph
        replays was captured once and never verified: a variant can do less while captured)."""
        if self.device == "cuda":
            self.torch.cuda.synchronize()
        tol = self.tolerance(b.params)
        refs = {0: b.ref0}
        for v in b.names:
            rec = b.records[v]
            if rec.get("status") != "ok":
                continue
            self.mark(v, "check of the timed output")
            problem = None
            if v in b.graphs:
                out = b.graph_out[v]
                out.fill_(math.nan)
                b.graphs[v][0].replay()
                if self.device == "cuda":
                    self.torch.cuda.synchronize()
                rel, _ = self.error_vs(out, b.ref0, b.idx)
                rec["correctness"]["graph_replay_rel_l2"] = rel
                if rel is None or rel > tol["rel_l2"]:
                    shown = "NaN/Inf" if rel is None else f"rel_l2 {rel:.3e}"
                    problem = (
                        f"the CUDA graph's replay gives a wrong output ({shown} > tolerance {tol['rel_l2']:.1e}) although the same calls "
                        "run directly passed: the work captured in the graph is not the work verified (does the variant skip work while "
                        "being captured?)"
                    )
            worst = None
            for k in range(b.n_sets):
                if (v, k) not in b.last_res:
                    continue
                if k not in refs:
                    refs[k] = self.module.oracle(b.sets[k], b.params)
                rel, _ = self.error_vs(b.last_res[(v, k)], refs[k], b.idx)
                if k == 0:
                    rec["correctness"]["timed_output_rel_l2"] = rel
                bad = rel is None or rel > tol["rel_l2"]
                if bad and (worst is None or k == 0):
                    worst = (k, rel)
            if worst is not None and problem is None:
                k, rel = worst
                shown = "NaN/Inf" if rel is None else f"rel_l2 {rel:.3e}"
                if k == 0:
                    problem = (
                        f"the output of the timed runs is wrong ({shown} > tolerance {tol['rel_l2']:.1e}) although the verification runs "
                        "passed: a race under repetition?"
                    )
                else:
                    problem = (
                        f"the output of the timed runs on input set {k} is wrong ({shown} > tolerance {tol['rel_l2']:.1e}) while set 0 is "
                        "right: a stale result (an answer computed for other inputs returned again?)"
                    )
            if problem:
                fail_with(rec, problem)
        self.check_replays_on_fresh_values(b, tol)
        b.release()

    def check_replays_on_fresh_values(self, b, tol):
        """Each graph that passed is replayed once more after new values (FRESH_SEED's inputs)
        were copied into the input tensors it was captured with, and checked against their
        oracle: a graph that replays an answer computed at capture (a copy of a cached result, a
        branch taken on the values seen then) is right on the captured values only. On the H100
        `stale` passed (2026-11-23): its graph replayed a copy of its first answer, and a
        graph-timed case has one input set. Skipped when the case's inputs cannot be rewritten in
        place (other shapes or non-tensor values for the new seed, or sparse tensors whose parts
        do not follow their strided parts)."""
        names = [v for v in b.names if v in b.graphs and b.records[v].get("status") == "ok"]
        if not names:
            return
        self.mark(",".join(names), "graph replay on new input values")
        ref = self.refill_inputs(b.sets[0], b.params)
        if ref is None:
            return
        for v in names:
            self.mark(v, "graph replay on new input values")
            out = b.graph_out[v]
            out.fill_(math.nan)
            b.graphs[v][0].replay()
            if self.device == "cuda":
                self.torch.cuda.synchronize()
            rel, _ = self.error_vs(out, ref, b.idx)
            corr = b.records[v]["correctness"]
            before = corr.get("graph_replay_rel_l2")
            # graph_replay_rel_l2: the worse of the two replays.
            corr["graph_replay_rel_l2"] = None if rel is None or before is None else max(rel, before)
            if rel is None or rel > tol["rel_l2"]:
                shown = "NaN/Inf" if rel is None else f"rel_l2 {rel:.3e}"
                fail_with(
                    b.records[v],
                    f"the CUDA graph's replay is wrong ({shown} > tolerance {tol['rel_l2']:.1e}) once new values are written into the input tensors "
                    "it was captured with, and right on the values it saw at capture: a stale result (the graph replays an answer computed for other "
                    "inputs, or a choice made on the values seen while captured)",
                )

    def refill_inputs(self, inputs, params):
        """Writes FRESH_SEED's input values into `inputs` in place and returns their oracle; None
        (the check is skipped) when the new values cannot be written exactly."""
        torch = self.torch
        new = self.module.make_inputs(dict(params), FRESH_SEED, self.device)
        if set(new) != set(inputs):
            return None
        strided = []
        for k, x in new.items():
            y = inputs[k]
            if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
                return None
            if not isinstance(x, torch.Tensor):
                try:
                    if bool(x != y):
                        return None
                except Exception:
                    return None
                continue
            if x.layout != y.layout or x.dtype != y.dtype or x.device != y.device or x.shape != y.shape:
                return None
            if x.layout == torch.strided:
                strided.append((y, x))
        if not strided:
            return None
        for y, x in strided:
            y.copy_(x)
        if fingerprint(inputs) != fingerprint(new):
            # A sparse tensor whose parts are not views of the strided inputs kept its old values.
            return None
        return self.module.oracle(new, params)
