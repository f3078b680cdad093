"""A case head against base (paired.py's PairedCase), as the parent runs it: the base's own
variants of the case, the --identical ones left untimed, the fall-back to the head alone when an
arm fails, and the confirmation of the movers."""

from .manifest import matches
from .paired import IDENTICAL_REASON, PairedCase, attempt, confirm_movers, untimed
from .progress import say


class PairedRunner:
    def __init__(self, args, identical, opts, runner):
        self.args = args
        self.identical = identical  # (kernel, variant) pairs the same in base and head (--identical)
        self.opts = opts
        self.runner = runner

    def run(self, head, base, m, bm, case, variants, timeout_s, first):
        """One case head against base (paired.py). A crash, hang or error of either arm costs both
        workers a restart and the case is timed on the head alone, the base's failure named."""
        base_cases = {c.id for c in (bm.ci_cases if self.args.ci else bm.cases)}
        if case.id not in base_cases:
            records = self.runner.run_case(head, m, case, variants, timeout_s)
            for rec in records.values():
                rec["paired"] = untimed("missing", f"the base revision's {bm.path} has no case {case.id}")
            return records
        base_variants = [v["name"] for v in bm.variants if v["name"] in variants and matches(case.params, v.get("only"))]

        # The kernel's first case warms up to steady power; the later ones have no case-wide
        # warm-up, since every variant's burst of pairs starts with its own (paired.BURST_WARM_S):
        # the case-wide 0.5 s took about 20 s of a 350 s A/A run, and its two rounds per arm of
        # every variant still about 10 s of run 21's 324 s.
        warm_s = self.args.first_warmup_s if first else 0.0
        same = self.identical_variants(m, variants, base_variants)
        if same:
            say(f"{m.name} {case.id}: {', '.join(same)}: {IDENTICAL_REASON} in base and head: verified, not timed")
        pc = PairedCase(head, base, case, variants, base_variants, timeout_s, self.opts.as_dict(), warm_s, say, identical=same)
        records, why = attempt(pc)
        if why:
            say(f"{m.name} {case.id}: paired timing stopped ({why}); the case is timed on the head alone")
            records = self.runner.run_case(head, m, case, variants, timeout_s)
            for rec in records.values():
                rec["paired"] = untimed("error", f"paired timing stopped: {why}")
            return records
        self.runner.document.add_stage_seconds(pc.phase_s)
        say(f"{m.name} {case.id}: {pc.time_line()}")
        if self.args.paired_confirm or self.args.paired_detect_pct > 0:
            # Each variant whose interval cleared the threshold (or, with --paired-detect-pct alone,
            # only its detection threshold), again in fresh worker processes.
            band_only = not self.args.paired_confirm
            spent = confirm_movers(head, base, m.name, case, records, self.opts.as_dict(), timeout_s, say, band_only)
            if spent is not None:
                self.runner.document.add_stage_seconds({"confirm": spent})
        return records

    def identical_variants(self, m, variants, base_variants):
        """The variants of a paired case named by --identical that the base has for this case too.
        A reference variant is the A/A control of the case's timed candidates: it stays timed while
        one of them is timed, and is left untimed only when none is (nothing to control)."""
        roles = {v["name"]: v.get("role") for v in m.variants}
        named = [v for v in variants if (m.name, v) in self.identical and v in base_variants]
        candidate_timed = any(roles.get(v) != "reference" and v not in named for v in variants)
        return [v for v in named if roles.get(v) != "reference" or not candidate_timed]
