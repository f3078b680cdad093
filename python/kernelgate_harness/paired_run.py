"""A case head against base (paired.py's PairedCase), as the parent runs it: the base's own
variants of the case, the --identical ones left untimed, the fall-back to the head alone when an
arm fails, and the confirmation of the movers."""

import time

from .arguments import variant_names
from .manifest import headline_case, matches
from .paired import HARNESS_ONLY_REASON, IDENTICAL_REASON, PairedCase, attempt, base_reason, change_of, confirm_record, interval_text, no_pairs, untimed
from .progress import say
from .verify import verification_split


class PairedRunner:
    def __init__(self, args, identical, opts, runner, cases_of):
        self.args = args
        self.identical = identical  # (kernel, variant) pairs the same in base and head (--identical)
        # --controls: identical A/A controls timed on the headline case and beside confirmations only
        self.controls = variant_names(args.controls)
        # --harness-only: identical but for the harness (references), their reason saying so
        self.harness_only = variant_names(args.harness_only)
        self.opts = opts
        self.runner = runner
        self.cases_of = cases_of  # the run's cases of a manifest (planning.py CasePlan.cases_of)

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
        references = reference_names(m)
        same = self.identical_variants(m, case, variants, base_variants, references)
        deferred = self.deferred_controls(m, case, variants, same, references)
        only = [v for v in same if (m.name, v) in self.harness_only]
        if len(only) < len(same):
            same_code = [v for v in same if v not in only]
            say(f"{m.name} {case.id}: {', '.join(same_code)}: {IDENTICAL_REASON} in base and head: verified, not timed")
        if only:
            say(f"{m.name} {case.id}: {', '.join(only)}: {HARNESS_ONLY_REASON}: verified, not timed")
        if deferred:
            say(f"{m.name} {case.id}: {', '.join(deferred)}: the A/A control, timed on the headline case and here only beside a confirmation")
        pc = PairedCase(head, base, case, variants, base_variants, timeout_s, self.opts.as_dict(), warm_s, say, identical=same, references=references)
        records, why = attempt(pc)
        if why:
            say(f"{m.name} {case.id}: paired timing stopped ({why}); the case is timed on the head alone")
            records = self.runner.run_case(head, m, case, variants, timeout_s)
            for rec in records.values():
                rec["paired"] = untimed("error", f"paired timing stopped: {why}")
            return records
        self.runner.document.add_stage_seconds(pc.phase_s)
        # what identical_record does not know: a deferred control, a reason other than identity
        for v in same:
            mark = records.get(v, {}).get("identical")
            if mark is not None and v in deferred:
                mark["control"] = True
            if mark is not None and v in only:
                mark["reason"] = HARNESS_ONLY_REASON
        say(f"{m.name} {case.id}: {pc.time_line()}")
        split = verification_split(records)
        if split:
            say(f"{m.name} {case.id}: {split}")
        if self.args.paired_confirm or self.args.paired_detect_pct > 0:
            # Each variant whose interval cleared the threshold (or, with --paired-detect-pct alone,
            # only its detection threshold), again in fresh worker processes.
            band_only = not self.args.paired_confirm
            spent = confirm_movers(head, base, m.name, case, records, self.opts.as_dict(), timeout_s, say, band_only, deferred)
            if spent is not None:
                self.runner.document.add_stage_seconds({"confirm": spent})
        return records

    def identical_variants(self, m, case, variants, base_variants, references):
        """The variants of a paired case named by --identical that the base has for this case too,
        left untimed. The caller chooses the A/A control: the action names every identical
        reference but the kernel's control (src/measure/identity.ts, controlReferences), and a
        reference it names is not timed. A case whose candidate is timed keeps a control all the
        same: when the list names every reference the case has, they stay timed (nothing else
        would tell a machine that was not quiet), and are left untimed only when no candidate is
        timed (nothing to control)."""
        named = [v for v in variants if (m.name, v) in self.identical and v in base_variants]
        candidate_timed = any(v not in references and v not in named for v in variants)
        if not candidate_timed:
            return named
        controls = [v for v in named if (m.name, v) in self.controls]
        if controls:
            # --controls: the control is timed on the kernel's headline case (on every case when
            # the run has none); elsewhere beside a confirmation only (deferred_controls)
            headline = headline_case(m, self.cases_of(m))
            return named if headline is not None and case.id != headline else [v for v in named if v not in controls]
        control_kept = any(v in base_variants and v not in named for v in references if v in variants)
        if control_kept:
            return named
        return [v for v in named if v not in references]

    def deferred_controls(self, m, case, variants, same, references):
        """The --controls of this case left untimed by identical_variants while a candidate is
        timed: confirm_movers times them beside the confirmation of a variant that cleared the
        threshold, the only reading whose verdict a control can demote."""
        if not any(v not in references and v not in same for v in variants):
            return []
        return [v for v in same if (m.name, v) in self.controls]


def reference_names(m):
    """The kernel's variants whose role is reference (the A/A controls)."""
    return {v["name"] for v in m.variants if v.get("role") == "reference"}


def confirm_movers(head, base, kernel, case, records, opt, timeout_s, say, band_only=False, controls=()):
    """--paired-confirm: each variant of `records` whose interval cleared the threshold is measured
    again in a fresh pair of worker processes (both stopped and started anew, the case set up and
    verified on the first seed without stress inputs and stream checks, each burst warmed, the same
    stop rule), its result in paired.confirm; the judge lets SLOWER or FASTER stand only when the
    second interval says the same. Identical code can read an offset on one
    variant in one case that more pairs in the same burst do not remove (docs/notes/paired-ab.md).
    `band_only` (--paired-detect-pct without --paired-confirm): only the variants that cleared their
    detection threshold and not the threshold itself, whose verdict the judge lets stand only when
    confirmed. `controls` (--controls, untimed in this case's first reading): timed beside the
    movers in the same pair of processes, their reading the case's paired record (timed_in
    "confirmation"), so that the judge's A/A control speaks for the second reading. Returns the
    seconds it took, or None when no variant had cleared the threshold."""
    label = f"{kernel} {case.id}"
    pct, floor = opt["paired_threshold_pct"], opt["paired_min_change_ms"]
    firsts = {v: change_of(rec.get("paired"), pct, floor) for v, rec in records.items()}
    if band_only:
        firsts = {v: first for v, first in firsts.items() if first and not change_of({**records[v]["paired"], "detect_pct": None}, pct, floor)}
    movers = [v for v, first in firsts.items() if first]
    if not movers:
        return None
    cleared = "their detection threshold" if band_only else f"±{pct:g} %"
    say(f"{label}: {', '.join(movers)} cleared {cleared}: measured again in a fresh pair of worker processes")
    t0 = time.perf_counter()
    head.stop()
    base.stop()
    seed = opt["seeds"][:1]
    controls = [v for v in controls if v not in movers]
    timed = movers + controls
    if controls:
        say(f"{label}: {', '.join(controls)} timed beside it as the A/A control")
    pc = PairedCase(head, base, case, timed, timed, timeout_s, {**opt, "seeds": seed, "paired_base_seeds": seed}, 0.0, say, light=True, references=controls)
    again, why = attempt(pc)
    for v in controls:
        control_beside(kernel, case, v, records[v], None if why else again[v], why, say)
    for v in movers:
        p = records[v]["paired"]
        c = p["confirm"] = no_pairs(why) if why else confirm_record(again[v])
        if c["status"] != "ok":
            say(f"{kernel}/{v} {case.id}: not confirmed: {c['reason']}")
            continue
        measured = c.get("ci_lo") is not None
        second = change_of(p, pct, floor, (c["ci_lo"], c["ci_hi"])) if measured else None
        said = f"{firsts[v]} again" if second == firsts[v] else "the first reading did not repeat"
        interval = interval_text(c["median_ratio"], c["ci_lo"], c["ci_hi"]) if measured else "no interval"
        say(f"{kernel}/{v} {case.id} confirm: {interval} {c['n_pairs']} pairs {len(c['log_ratios'])} blocks {c['stop_reason']}: {said}")
    spent = time.perf_counter() - t0
    say(f"{label}: confirmation {spent:.1f} s")
    return spent


def control_beside(kernel, case, v, rec, again, why, say):
    """A --controls variant timed beside a confirmation (confirm_movers): its paired reading and
    head timing become the case's, `timed_in` saying where; `identical` stays (how it was verified).
    When it gave no pairs it stays untimed (SAME by identity) and the log says why."""
    p = (again or {}).get("paired") or {}
    reason = None
    if why:
        reason = why
    elif again.get("status") != "ok":
        reason = f"it ended {again.get('status')}: {base_reason(again)}"
    elif p.get("base_status") != "ok" or not p.get("log_ratios"):
        reason = p.get("base_reason") or f"base revision: {p.get('base_status', 'no record')}"
    if reason is not None:
        say(f"{kernel}/{v} {case.id}: the A/A control gave no reading beside the confirmation ({reason})")
        return
    rec["paired"] = {**p, "timed_in": "confirmation"}
    rec["timing"] = again["timing"]
    say(f"{kernel}/{v} {case.id} control beside the confirmation: {interval_text(p['median_ratio'], p['ci_lo'], p['ci_hi'])} {p['n_pairs']} pairs")
