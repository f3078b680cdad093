"""The check of what was timed, after the timing: the latest output of every timed input set
against its own oracle (a race under repetition, a stale answer for later inputs), and each CUDA
graph replayed over a poisoned output and again on new input values (work skipped while captured,
an answer computed at capture). A variant that fails it fails its case."""

import math

from .outputs import bits_differ, output_problem
from .verify import fingerprint, out_fingerprint

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
        timed input set, value generation and output buffer (each against its own oracle: a
        variant that returns what it computed for other inputs passes the first only), its bits
        against the verification's on the same inputs (a race), and a fresh replay of each CUDA
        graph (what a graph replays was captured once and never verified: a variant can do less
        while captured)."""
        if self.device == "cuda":
            self.torch.cuda.synchronize()
        tol = self.tolerance(b.params)
        refs = {(0, 0): b.ref0}
        for v, error in b.bad.items():
            if b.records[v].get("status") == "ok":
                b.records[v].update(status="error", error=error)
        for v in b.names:
            rec = b.records[v]
            if rec.get("status") != "ok":
                continue
            self.mark(v, "check of the timed output")
            if v in b.graphs:
                problem = self.check_graph_buffers(b, v, tol, refs)
            else:
                problem = self.check_timed_outputs(b, v, tol, refs)
            if problem:
                fail_with(rec, problem)
        self.check_replays_on_fresh_values(b, tol)
        b.release()

    def timed_outputs(self, b, v):
        """[(set, generation, buffer, output)] of variant v, the verification's values first."""
        got = [(k, g, j, res) for (w, k, j), (res, g) in b.last_res.items() if w == v]
        return sorted(got, key=lambda x: (x[1], x[0], x[2]))

    def check_timed_outputs(self, b, v, tol, refs):
        """The problem of variant v's timed outputs, or None (timed_output_rel_l2 recorded)."""
        torch = self.torch
        corr = b.records[v]["correctness"]
        answers, wrong = {}, []
        if b.verified.get(v) is not None:
            answers[b.verified[v]] = (0, 0)  # the verification's answer for set 0's first values
        for k, g, j, res in self.timed_outputs(b, v):
            refused = output_problem(torch, res, b.values(k, g), b.outs[v][k][j])
            if refused:
                return f"the timed runs: {refused}"
            if (k, g) not in refs:
                refs[(k, g)] = self.module.oracle(b.values(k, g), b.params)
            rel, _ = self.error_vs(res, refs[(k, g)], b.idx)
            if k == 0:  # set 0's timed outputs, whichever values they were computed on
                before = corr.get("timed_output_rel_l2", -1.0)
                corr["timed_output_rel_l2"] = None if rel is None or before is None else max(rel, before)
            bits_of = out_fingerprint(res)
            if rel is None or rel > tol["rel_l2"]:
                wrong.append((k, g, rel, bits_of))
            else:
                answers.setdefault(bits_of, (k, g))
                verified = b.verified.get(v)
                if (k, g) == (0, 0) and verified is not None and bits_of != verified:
                    moved = (
                        "the output of the timed runs differs in its bits from the verification's on the same inputs although both "
                        "are within tolerance: a race that shows under the timing's repetition and launch order"
                    )
                    answers.setdefault("moved", moved)
        if wrong:
            return self.timed_wrong_message(wrong, answers, tol)
        return answers.get("moved")

    def timed_wrong_message(self, wrong, answers, tol):
        k, g, rel, bits_of = wrong[0]
        shown = "NaN/Inf" if rel is None else f"rel_l2 {rel:.3e}"
        if (k, g) == (0, 0):
            return (
                f"the output of the timed runs is wrong ({shown} > tolerance {tol['rel_l2']:.1e}) although the verification runs "
                "passed: a race under repetition?"
            )
        if g == 0:
            return (
                f"the output of the timed runs on input set {k} is wrong ({shown} > tolerance {tol['rel_l2']:.1e}) while set 0 is "
                "right: a stale result (an answer computed for other inputs returned again?)"
            )
        where = f"the output of the timed runs on input set {k} after new values were written into its input tensors is wrong"
        same = answers.get(bits_of)
        if same is None:
            return f"{where} ({shown} > tolerance {tol['rel_l2']:.1e}), though its first values' output was right: a stale result?"
        return (
            f"cached result: {where} ({shown} > tolerance {tol['rel_l2']:.1e}), bit for bit the answer for input set {same[0]}'s "
            f"{'first' if same[1] == 0 else 'second'} values (an answer cached for the tensors' identity or left in an untouched output "
            "buffer, returned again)"
        )

    def check_graph_buffers(self, b, v, tol, refs):
        """A graph's replay over its poisoned output buffers (one per launch in turn, buffer j on
        input set j % n_sets): each right, and those of set 0 alike in their bits and the
        verification's, or the problem."""
        torch = self.torch
        outs = b.graph_out[v]
        for out in outs:
            out.fill_(math.nan)
        b.graphs[v][0].replay()
        if self.device == "cuda":
            torch.cuda.synchronize()
        for k in range(min(b.n_sets, len(outs))):
            if (k, 0) not in refs:
                refs[(k, 0)] = self.module.oracle(b.sets[k], b.params)
        rels = [self.error_vs(out, refs[(j % b.n_sets, 0)], b.idx)[0] for j, out in enumerate(outs)]
        bad = [r for r in rels if r is None or r > tol["rel_l2"]]
        worst = None if any(r is None for r in rels) else max(rels)
        b.records[v]["correctness"]["graph_replay_rel_l2"] = worst
        if bad:
            shown = "NaN/Inf" if None in bad else f"rel_l2 {max(bad):.3e}"
            if len(bad) == len(outs):
                return (
                    f"the CUDA graph's replay gives a wrong output ({shown} > tolerance {tol['rel_l2']:.1e}) although the same calls "
                    "run directly passed: the work captured in the graph is not the work verified (does the variant skip work while "
                    "being captured?)"
                )
            return (
                f"the CUDA graph's replay leaves {len(bad)} of the {len(outs)} output buffers its launches write in turn wrong ({shown} > "
                f"tolerance {tol['rel_l2']:.1e}) although the same calls run directly passed: launches that skip their work or return a "
                "stale answer (the graph is timed as all its launches)"
            )
        same_set = outs[:: b.n_sets]
        moved = sum(1 for out in same_set[1:] if bits_differ(torch, out, outs[0]))
        verified = b.verified.get(v)
        if not moved and verified is not None and out_fingerprint(outs[0]) != verified:
            moved = len(outs)
        if moved:
            return (
                f"the CUDA graph's launches on the same inputs give outputs that differ in their bits ({moved} of {len(outs)} output "
                "buffers differ from the first, or from the verification's) although all are within tolerance: a race that shows under "
                "back-to-back launches"
            )
        return None

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
            outs = b.graph_out[v][:: b.n_sets]  # the buffers of set 0, whose tensors got the new values
            for out in outs:
                out.fill_(math.nan)
            b.graphs[v][0].replay()
            if self.device == "cuda":
                self.torch.cuda.synchronize()
            rels = [self.error_vs(out, ref, b.idx)[0] for out in outs]
            rel = None if any(r is None for r in rels) else max(rels)
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
