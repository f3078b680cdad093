"""The correctness record of one variant of one case, judged from its checks (verify.Verifier):
each seed's and stress input's output against the manifest's tolerances, never-written, NaN and
Inf elements, inputs written, a cached result, work left on another stream, a result that moved
between runs; and the drain probe's verdict."""

from .outputs import cached_result_message, changed_after_return_message
from .verify import DRAIN_CONFIRM_REPEATS, drain_flagged


def output_problems(c, where, cached, tol_rel, tol_abs, device):
    """The problems of one check `c` of one input set (`where`) with its output, against the
    tolerances of that input set; `cached`: the input set whose answer its output bits are, if
    another one's."""
    problems = []
    if c["unwritten"]:
        problems.append(f"{where}: {c['unwritten']} of {c['numel']} output elements never written (still NaN after the run)")
    if c["nan"]:
        problems.append(f"{where}: {c['nan']} NaN in the output")
    if c["inf"]:
        problems.append(f"{where}: {c['inf']} Inf in the output")
    wrong = c["rel_l2"] is None or c["rel_l2"] > tol_rel
    if wrong and cached is not None and cached != where:
        problems.append(cached_result_message(where, f"{cached}'s inputs"))
    elif c["rel_l2"] is not None and c["rel_l2"] > tol_rel:
        problems.append(f"{where}: rel_l2 {c['rel_l2']:.3e} > tolerance {tol_rel:.1e}")
    if tol_abs is not None and c["max_abs"] is not None and c["max_abs"] > tol_abs:
        problems.append(f"{where}: max_abs {c['max_abs']:.3e} > tolerance {tol_abs:.1e}")
    if c.get("inputs_written"):
        problems.append(
            f"{where}: wrote into its input{'s' if len(c['inputs_written']) > 1 else ''} {', '.join(c['inputs_written'])} (inputs "
            "are read-only: the variants after it, and its own next run, would see other data)"
        )
    elif c.get("late_work"):
        problems.append(
            f"{where}: the output is wrong when the timed stream is done and right only after a device-wide synchronize: work was "
            "left on another stream, which the timing does not see"
        )
    elif c.get("after_return"):
        problems.append(changed_after_return_message(
            where, c["after_return"], c["numel"], c.get("after_return_processes", ()), c.get("after_return_on_gpu", False)
        ))
    elif c["moved_nonfinite"]:
        problems.append(
            f"{where}: {c['moved_nonfinite']} elements finite in one run and not in the other on the same inputs (a race, or a read "
            "of memory nothing wrote)"
        )
    elif c["repeat"] and not c.get("inputs_written"):
        problems.append(
            f"{where}: result moved between two runs on the same inputs, max diff {c['repeat']:.3e} (a race, or a read of memory "
            "nothing wrote)"
        )
    elif c.get("third_moved"):
        load = " beside a load on another stream" if device == "cuda" else ""
        problems.append(
            f"{where}: result moved between runs on the same inputs: a third run{load} differs from the first in "
            f"{c['third_moved']} of {c['numel']} elements (a race that two runs happened to agree on)"
        )
    return problems


class Correctness:
    """The judging step of worker.Worker (a mixin: it uses `module` and `device`)."""

    def judge(self, rec, checks, tol, seeds, subset, stress=()):
        problems = []
        scales = getattr(self.module, "STRESS_TOLERANCE_SCALE", {})
        answers = {}  # output bits -> the input set that got them first (a cached result)
        for c in [*checks, *stress]:
            s = c["seed"]
            where = f"seed {s}" if isinstance(s, int) else s
            if c.get("refused"):
                problems.append(f"{where}: {c['refused']}")
                continue
            cached = answers.get(c.get("out_bits")) if c.get("out_bits") is not None else None
            if c.get("out_bits") is not None:
                answers.setdefault(c["out_bits"], where)
            if c.get("cache"):
                problems.append(f"{where}: {c['cache']}")
            # A stress input may be checked against a multiple of the tolerance: its values are
            # far from those the tolerance was set for (the module's STRESS_TOLERANCE_SCALE).
            scale = 1.0 if isinstance(s, int) else scales.get(s.removeprefix("stress input "), 1.0)
            tol_rel, tol_abs = tol["rel_l2"] * scale, None if tol.get("max_abs") is None else tol["max_abs"] * scale
            problems += output_problems(c, where, cached, tol_rel, tol_abs, self.device)
        worst = lambda key: None if any(c[key] is None for c in checks) else max(c[key] for c in checks)  # noqa: E731
        repeats = [c["repeat"] for c in checks]
        corr = {
            "status": "FAIL" if problems else "PASS",
            "rel_l2": worst("rel_l2"),
            "max_abs": worst("max_abs"),
            "nan_count": sum(c["nan"] for c in checks),
            "inf_count": sum(c["inf"] for c in checks),
            "unwritten_count": sum(c["unwritten"] for c in checks),
            "seeds": list(seeds),
            "tol_rel_l2": tol["rel_l2"],
            "oracle": self.oracle_desc(subset),
            "repeat_max_diff": None if any(r is None for r in repeats) else max(repeats),
        }
        if tol.get("max_abs") is not None:
            corr["tol_max_abs"] = tol["max_abs"]
        spent = [c["seconds"] for c in [*checks, *stress] if c.get("seconds") is not None]
        if spent:
            corr["seconds"] = round(sum(spent), 3)
        if stress:
            corr["stress"] = [{"name": c["seed"].removeprefix("stress input "), "rel_l2": c["rel_l2"], "max_abs": c["max_abs"]} for c in stress]
        if problems:
            corr["message"] = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more" if len(problems) > 6 else "")
        rec["correctness"] = corr
        rec["status"] = "fail" if problems else "ok"
        first = checks[0] if checks else None
        if first and first["drain_ms"] is not None and drain_flagged(first["drain_ms"], first["event_ms"]):
            rec["status"] = "error"
            rec["error"] = {
                "kind": "other-stream",
                "message": (
                    f"device work went on {first['drain_ms']:.3f} ms after the timed stream's end event, in each of {DRAIN_CONFIRM_REPEATS + 1} runs "
                    f"({first['event_ms']:.3f} ms between its events): the variant launches work on another "
                    "stream than the one timed, so events would not measure it"
                ),
            }

    def oracle_desc(self, subset):
        where = "GPU" if self.device == "cuda" else "CPU"
        desc = getattr(self.module, "ORACLE", "higher-precision torch reference")
        return f"{desc} on {where}" + (", on a subset of the output (oracle_index); NaN/unwritten checks cover all of it" if subset else "")
