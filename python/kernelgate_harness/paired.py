"""Paired A/B timing: one case's variants timed in two workers, one per revision (the pull
request's head and its base), variant by variant in bursts of pairs, the two samples of each pair
back to back and in ABBA order, each variant sampling pairs until its interval decides against the
threshold or its time cap.

Both revisions run in the same job on the same GPU, sample by sample, so the drift of clocks,
power and temperature that ruins a comparison with a number stored earlier falls on both arms
alike. Each revision has its own worker process (two versions of one module never share an
interpreter); both build their inputs from the same seeds and warm up alternately."""

import math
import time

from .stats import THROTTLED_BELOW, PairedStopRule, StopRule, drop_throttled, paired_summary, summarize
from .timing import refuse_zero_time
from .workers import WORKER_START_TIMEOUT_S, WorkerDied, WorkerTimeout, begin_init, exit_description, finish_init, settle_exits

ORDER = "ABBA"
CONFIDENCE = 0.99
# Warm-up alternates one round of each arm; at least this many rounds in all.
MIN_WARM_ROUNDS = 4
# Each variant's burst of pairs starts with this long of the variant alone, half in each arm (the
# head's half, then the base's, each one request: the worker loops; a round trip per round had
# cost microsecond variants 0.18 s where 0.02 s was meant, run 24).
BURST_WARM_S = 0.2
BURST_WARM_ROUNDS = 4
# ... or this long when the variant's calls take under SHORT_CALL_S each in the worker (a graph's
# replay counts its launches): a kernel of a few microseconds draws too little power to move the
# clock the next one meets, and its verdict is judged against the absolute floor
# (--paired-min-change-ms, 0.8 us: 1.6 % of 50 us), above the threshold and that effect. Measured
# per round, graph-timed microsecond variants (a replay of n launches sized to a millisecond or
# more) had read as long and warmed 0.2 s each (runs 27-29: 46 s of warm-ups).
SHORT_BURST_WARM_S = 0.02
SHORT_CALL_S = 0.00005
STOP_AS_TIMING = {"decided": "converged", "max_pairs": "max_samples", "time_cap": "time_cap"}
# The record of a variant that --identical names (cases[].identical.reason): its build, sources,
# manifest entry, harness and libraries are the same in base and head (src/measure/identity.ts).
IDENTICAL_REASON = "identical build and sources"
# The reason of a reference --harness-only names: its build and sources are the base's, only the
# harness that measures it differs, and its kernel's A/A control (timed) measures the harness.
HARNESS_ONLY_REASON = "a reference whose only difference is the harness, which its kernel's A/A control measures"


class PairedFatal(Exception):
    """A worker answered a paired op with an error: (arm, error record)."""

    def __init__(self, arm, error):
        super().__init__(f"{arm}: {error.get('message', '')}")
        self.arm = arm
        self.error = error


def ready_together(arms, timeout_s):
    """Starts the workers of `arms` ((handle, arm name) each) that are not ready, all at once
    (each imports torch and its revision's kernel module, seconds apiece), then awaits each one's
    answer; PairedFatal names the arm whose start failed."""
    starting = [(handle, arm) for handle, arm in arms if not (handle.is_alive() and handle.ready)]
    for handle, _ in starting:
        begin_init(handle)  # nothing when the harness started it ahead (cli.Harness.run)
    for handle, arm in starting:
        reply = finish_init(handle, timeout_s)
        if reply["op"] == "fatal":
            raise PairedFatal(arm, reply["error"])


def unthrottled_pairs(head, base):
    """Indices of the pairs whose two samples both ran at a usual SM clock (a pair with one
    throttled sample is dropped whole, so a throttle never lands on one arm only)."""
    n = len(head["ms"])
    keep = set(range(n))
    for arm in (head, base):
        clk = arm["clk"]
        if len(clk) != n or not clk:
            continue
        usual = sorted(clk)[len(clk) // 2]
        keep -= {i for i, c in enumerate(clk) if c < THROTTLED_BELOW * usual}
    return sorted(keep)


def block_ratios(head, base, keep):
    """ln(head/base) of each ABBA block: the mean of its two pairs' log ratios, the head first in
    one and second in the other. On the H100 the arm that runs first read about 4 % slower
    (gemm A/A: +4.0 % in head-first rounds, -4.1 % in base-first ones; docs/notes/paired-ab.md
    gives the run), so single pairs are bimodal; the block mean cancels which arm ran first.
    A block counts only when both its pairs were kept (no throttled sample)."""
    kept = set(keep)
    out = []
    for i in range(0, len(head["ms"]) - 1, 2):
        if i in kept and i + 1 in kept:
            h0, b0, h1, b1 = head["ms"][i], base["ms"][i], head["ms"][i + 1], base["ms"][i + 1]
            if min(h0, b0, h1, b1) > 0:
                out.append((math.log(h0 / b0) + math.log(h1 / b1)) / 2)
    return out


def arm_timing(arm, keep, info, stop_reason, n_dropped):
    ms = [arm["ms"][i] for i in keep]
    timing = {
        "method": info["method"],
        "samples_ms": ms,
        **summarize(ms),
        "n_discarded_throttled": n_dropped,
        "stop_reason": stop_reason,
        "warmup_ms": info["warmup_ms"],
        "l2_flush": info["l2_flush"],
        "input_sets": info["input_sets"],
    }
    if info.get("l2_state"):
        timing["l2_state"] = info["l2_state"]
    if arm["clk"] and len(arm["clk"]) == len(arm["ms"]):
        timing["sm_clock_mhz"] = [arm["clk"][i] for i in keep]
        timing["power_w"] = [arm["pw"][i] for i in keep]
    return timing


def untimed(status, reason=None, correctness=None):
    p = {"base_status": status, "n_pairs": 0, "log_ratios": [], "stop_reason": "untimed"}
    if reason:
        p["base_reason"] = reason
    if correctness:
        p["base_correctness"] = correctness
    return p


def base_reason(rec):
    if rec.get("status") == "fail":
        return (rec.get("correctness") or {}).get("message", "wrong result")
    if rec.get("error"):
        return f"{rec['error'].get('kind')}: {rec['error'].get('message')}"
    return rec.get("reason", rec.get("status", ""))


def case_threshold_pct(threshold_pct, min_change_ms, base_median_ms):
    """The threshold a paired variant is judged against, in %: the larger of threshold_pct and the
    absolute floor as a share of the base arm's median (the TypeScript judge's rule)."""
    return max(threshold_pct, 100 * min_change_ms / base_median_ms if base_median_ms and base_median_ms > 0 else 0.0)


def case_detect_pct(opt, base_median_ms):
    """The detection threshold of a paired variant, in %, or None: --paired-detect-pct for a case
    whose base median is at least --paired-detect-min-ms (a case of a millisecond or more, whose
    pairs can resolve a change under the threshold), raised to the absolute floor's share, and only
    while it is under the case's threshold."""
    pct = opt.get("paired_detect_pct") or 0.0
    if pct <= 0 or not base_median_ms or base_median_ms < opt.get("paired_detect_min_ms", 1.0):
        return None
    floor = 100 * opt["paired_min_change_ms"] / base_median_ms
    threshold = case_threshold_pct(opt["paired_threshold_pct"], opt["paired_min_change_ms"], base_median_ms)
    detect = max(pct, floor)
    return detect if detect < threshold else None


def interval_text(ratio, lo, hi):
    """×1.0213 [1.0150, 1.0270]: a paired interval as the progress lines print it."""
    return f"×{ratio:.4f} [{lo:.4f}, {hi:.4f}]"


def change_of(p, threshold_pct, min_change_ms, interval=None):
    """SLOWER or FASTER when a paired record's interval (or `interval`, (lo, hi), judged against the
    record's threshold) clears its threshold (case_threshold_pct), or its detection threshold
    (the record's detect_pct) where it has one, else None."""
    if not p or p.get("base_status") != "ok" or p.get("ci_lo") is None or p.get("ci_hi") is None:
        return None
    pct = case_threshold_pct(threshold_pct, min_change_ms, (p.get("base_timing") or {}).get("median_ms"))
    if p.get("detect_pct") is not None:
        pct = min(pct, p["detect_pct"])
    lo, hi = interval or (p["ci_lo"], p["ci_hi"])
    if lo > 1 + pct / 100:
        return "SLOWER"
    if hi < 1 - pct / 100:
        return "FASTER"
    return None


def no_pairs(why):
    """The `confirm` record of a variant whose second pair of processes gave no pairs, and why."""
    return {"status": "error", "reason": f"no pairs in the second pair of processes ({why})"}


def confirm_record(rec):
    """The `confirm` record (paired.confirm in the schema) of a variant measured again, from the
    head's record of that second measurement."""
    if rec.get("status") != "ok":
        return {"status": "error", "reason": f"the head revision's variant ended {rec.get('status')} in the second pair of processes: {base_reason(rec)}"}
    p = rec.get("paired")
    if not p or p.get("base_status") != "ok" or not p.get("log_ratios"):
        return no_pairs((p or {}).get("base_reason") or f"base revision: {(p or {}).get('base_status', 'no record')}")
    keys = ("n_pairs", "log_ratios", "median_ratio", "ci_lo", "ci_hi", "mdc_pct", "stop_reason", "seconds")
    return {"status": "ok", **{k: p[k] for k in keys if k in p}}


def identical_record(verified, reason=IDENTICAL_REASON):
    """cases[].identical (and tails[].identical) of a variant --identical names: why it was not
    timed, and how it was verified (--verify-identical: "first_seed", on the first seed only;
    "all", every seed)."""
    return {"reason": reason, "verified": verified}


class PairedCase:
    """One case of one kernel, head against base. `opt` holds the harness's options. `light`:
    verification without the stress inputs and the stream checks (a confirmation's, confirm_movers).
    `identical`: variants the same in base and head (--identical): verified on the head as always,
    not on the base and not timed; their records say so (`identical`). `references`: the variants
    whose role is reference, sampled to the threshold only (PairedStopRule.check's settle_detect):
    the candidates sample on until their interval is off ±detect, so that a 1 % change is caught."""

    def __init__(self, head, base, case, variants, base_variants, timeout_s, opt, warm_s, say, light=False, identical=(), references=()):
        self.head, self.base = head, base
        self.light = light
        self.identical = list(identical)
        self.references = set(references)
        self.case = case
        self.variants, self.base_variants = variants, base_variants
        self.timeout_s = timeout_s
        self.opt = opt
        self.warm_s = warm_s
        self.say = say
        self.phase_s = {}
        self.warm_spent = 0.0

    def ask(self, arm, msg, timeout_s):
        handle = self.head if arm == "head" else self.base
        reply = handle.request(msg, timeout_s)
        if reply.get("op") == "fatal":
            raise PairedFatal(arm, reply["error"])
        return reply

    def run(self, ensure_ready):
        """Records by head variant, each with its `paired` record."""
        seeds = {"head": self.opt["seeds"], "base": self.opt.get("paired_base_seeds") or self.opt["seeds"]}
        ensure_ready((self.head, "head"), (self.base, "base"))
        # Verification one arm after the other: two processes verifying at once ran out of memory
        # on the 80 GB H100 (the oracle of a B16 H96 S4096 case allocates 24 GiB), and the head
        # goes first so the base finds the head's Triton autotuning results in the shared cache.
        # The base verifies fewer seeds (--paired-base-seeds): it is the target branch's code,
        # verified with every seed on its own push; it must only be shown to compute the same
        # thing here, timed outputs included, so that its times mean what the head's do.
        replies = {}
        base_names = [v for v in self.base_variants if v not in self.identical]
        for arm, handle, names in (("head", self.head, self.variants), ("base", self.base, base_names)):
            msg = {"op": "pverify", "params": self.case.params, "seeds": seeds[arm], "variants": names}
            if self.light:
                msg["light"] = True
            if arm == "head" and self.identical:
                # no timing state is prepared for them (worker.paired); with --verify-identical
                # first_seed (the default) they are verified on the first seed only
                msg["untimed"] = self.identical
                if self.opt.get("verify_identical", "all") == "first_seed":
                    msg["first_seed_only"] = self.identical
            handle.send(msg)
            reply = handle.wait(self.timeout_s * max(len(names), 1), stall_s=self.timeout_s)
            if reply.get("op") == "fatal":
                raise PairedFatal(arm, reply["error"])
            replies[arm] = reply
            for phase, sec in reply["phase_s"].items():
                key = phase if arm == "head" else f"base {phase}"
                self.phase_s[key] = self.phase_s.get(key, 0.0) + sec
        h_timed, b_timed = replies["head"]["timed"], replies["base"]["timed"]
        if self.opt["timing"] and h_timed:
            settle_exits()  # the last kernel's workers gone before anything is timed
        t0 = time.perf_counter()
        samples, stops, spent = self.sample(h_timed, [v for v in b_timed if v in h_timed]) if self.opt["timing"] and h_timed else ({}, {}, {})
        self.phase_s["bench"] = time.perf_counter() - t0
        # Of which warm-ups (the case's and each burst's); the rest is pairs.
        self.phase_s["bench warm-up"] = self.warm_spent
        t0 = time.perf_counter()
        fin = {arm: self.ask(arm, {"op": "pfinish"}, self.timeout_s * max(len(h_timed), 1)) for arm in ("head", "base")}
        self.phase_s["finish"] = time.perf_counter() - t0
        return case_records(self, fin, samples, stops, spent)

    def time_line(self):
        """The case's time by stage, for its progress line: 'time: set-up and verification 1.2 s
        (base 0.4 s), warm-ups …, pairs …, finish …' (the keys of phase_s run() filled)."""
        t = lambda k: self.phase_s.get(k, 0.0)  # noqa: E731
        head = t("setup") + t("verify") + t("prepare")
        base = t("base setup") + t("base verify") + t("base prepare")
        warm = t("bench warm-up")
        return (
            f"time: set-up and verification {head:.1f} s (base {base:.1f} s), warm-ups {warm:.1f} s, pairs {t('bench') - warm:.1f} s, "
            f"finish {t('finish'):.1f} s"
        )

    def warm(self, h_timed, b_paired):
        """The case-wide warm-up of a kernel's first case: untimed rounds of the variants, one arm
        after the other, for warm_s and at least MIN_WARM_ROUNDS rounds in all."""
        t0 = time.perf_counter()
        k = 0
        while k < MIN_WARM_ROUNDS or time.perf_counter() - t0 < self.warm_s:
            arm, names = ("head", h_timed) if k % 2 == 0 else ("base", b_paired)
            if names:
                self.ask(arm, {"op": "pwarm", "names": names, "rounds": 1}, self.timeout_s)
            k += 1
        self.warm_spent += time.perf_counter() - t0

    def burst_warm(self, v):
        """The variant alone before its burst of pairs: half of BURST_WARM_S in the head's worker,
        then half in the base's, each in one request (the worker loops over its rounds)."""
        t0 = time.perf_counter()
        for arm in ("head", "base"):
            msg = {
                "op": "pwarm",
                "names": [v],
                "seconds": BURST_WARM_S / 2,
                "rounds": BURST_WARM_ROUNDS // 2,
                "short_seconds": SHORT_BURST_WARM_S / 2,
                "short_call_s": SHORT_CALL_S,
            }
            self.ask(arm, msg, self.timeout_s)
        self.warm_spent += time.perf_counter() - t0

    def sample(self, h_timed, b_paired):
        """Each variant in turn, in a burst of pairs until its stop rule says so. Pair i is timed
        head first when i is even and base first when it is odd (pairs 2k and 2k+1 make one ABBA
        block), its two samples back to back.

        A burst per variant, not a round of every variant per pair: at the H100's 700 W cap the
        SM clock follows the power drawn by whatever ran just before, so the first sample after
        another variant read up to 13 % apart from the second (attention headline cases, with the
        sign set by the predecessor; docs/notes/paired-ab.md, run 4). Within a burst both samples
        of a pair follow the same kernel. Each burst starts with BURST_WARM_S of the variant in
        both arms, untimed, so the clock has settled to this kernel's draw."""
        if self.warm_s > 0:
            # The kernel's first case only (cli.run_paired_case): later ones start on warm bursts.
            self.warm(h_timed, b_paired)
        o = self.opt
        rule = PairedStopRule(
            threshold_pct=o["paired_threshold_pct"],
            min_pairs=o["paired_min_pairs"],
            time_cap_s=o["paired_time_cap_s"],
            max_time_cap_s=o["paired_max_time_cap_s"],
            same_ci_share=o.get("paired_same_ci_share", PairedStopRule.same_ci_share),
            straddle_extra=o.get("paired_straddle_extra", PairedStopRule.straddle_extra),
            change_min_blocks=o.get("paired_change_min_blocks", PairedStopRule.change_min_blocks),
        )
        single = StopRule(min_samples=o["min_samples"], max_samples=o["max_samples"], ci_rel=o["ci_rel"], time_cap_s=o["time_cap_s"])
        samples = {arm: {v: {"ms": [], "clk": [], "pw": []} for v in h_timed} for arm in ("head", "base")}
        stop = dict.fromkeys(h_timed)
        spent = dict.fromkeys(h_timed, 0.0)
        for v in h_timed:
            paired = v in b_paired
            if paired:
                self.burst_warm(v)
            h = samples["head"][v]
            r = 0
            while stop[v] is None:
                arms = ["head", "base"] if paired else ["head"]
                if r % 2 == 1:
                    arms.reverse()
                t0 = time.perf_counter()
                for arm in arms:
                    for name, (ms, clk, pw) in self.ask(arm, {"op": "psample", "order": [v], "r": r}, self.timeout_s)["samples"].items():
                        s = samples[arm][name]
                        s["ms"].append(ms)
                        if clk is not None:
                            s["clk"].append(clk)
                            s["pw"].append(pw)
                spent[v] += time.perf_counter() - t0
                if paired:
                    b = samples["base"][v]
                    keep = unthrottled_pairs(h, b)
                    stop[v] = rule.check(block_ratios(h, b, keep), spent[v], *self.thresholds(b, keep), settle_detect=v not in self.references)
                else:
                    kept, _, _, _ = drop_throttled(h["ms"], h["clk"], h["pw"])
                    stop[v] = single.check(kept, spent[v])
                r += 1
        return samples, stop, spent

    def thresholds(self, base, keep):
        """ln(1 + the larger of the threshold and the absolute floor, as a share of the base median),
        and ln(1 + the case's detection threshold) or None (case_detect_pct)."""
        ms = sorted(base["ms"][i] for i in keep)
        median = ms[len(ms) // 2] if ms else None
        pct = case_threshold_pct(self.opt["paired_threshold_pct"], self.opt["paired_min_change_ms"], median)
        detect = case_detect_pct(self.opt, median)
        return math.log1p(pct / 100), None if detect is None else math.log1p(detect / 100)


def case_records(pc, fin, samples, stops, spent):
    """The head's records of a paired case (PairedCase.run), each with its `paired` record from
    both arms' samples and finish replies."""
    head_recs, base_recs = fin["head"]["records"], fin["base"]["records"]
    info_h, info_b = fin["head"]["info"], fin["base"]["info"]
    for v in pc.variants:
        rec = head_recs[v]
        if v in pc.identical:
            if rec.get("status") == "ok":
                rec["identical"] = identical_record(pc.opt.get("verify_identical", "all"))
            continue
        brec = base_recs.get(v) if v in pc.base_variants else None
        if brec is None:
            rec["paired"] = untimed("missing", "the base revision has no such variant for this case")
            continue
        bcorr = brec.get("correctness")
        if v not in stops:
            # Head or base did not reach timing (failed, errored, skipped) or timing is off.
            rec["paired"] = untimed(brec.get("status", "error"), None if brec.get("status") == "ok" else base_reason(brec), bcorr)
            continue
        h = samples["head"][v]
        stop = stops[v]
        if brec.get("status") != "ok" or not samples["base"][v]["ms"]:
            # Timed on the head alone (the base failed its verification or its timed output).
            kept, clk, pw, n_drop = drop_throttled(h["ms"], h["clk"], h["pw"])
            rec["timing"] = arm_timing({"ms": kept, "clk": clk, "pw": pw}, range(len(kept)), info_h[v], STOP_AS_TIMING.get(stop, stop), n_drop)
            rec["paired"] = untimed(brec.get("status", "error"), base_reason(brec), bcorr)
            continue
        b = samples["base"][v]
        keep = unthrottled_pairs(h, b)
        n_drop = len(h["ms"]) - len(keep)
        ratios = block_ratios(h, b, keep)
        rec["timing"] = arm_timing(h, keep, info_h[v], STOP_AS_TIMING.get(stop, stop), n_drop)
        base_timing = arm_timing(b, keep, info_b[v], STOP_AS_TIMING.get(stop, stop), n_drop)
        p = {"base_status": "ok", "base_timing": base_timing, "n_pairs": len(keep), "log_ratios": ratios, "stop_reason": stop}
        detect = case_detect_pct(pc.opt, base_timing["median_ms"])
        if detect is not None:
            p["detect_pct"] = detect
        p["seconds"] = round(spent[v], 3)
        if bcorr:
            p["base_correctness"] = bcorr
        if ratios:
            med, lo, hi = paired_summary(ratios)
            mdc_pct = 100 * (math.exp(hi) - math.exp(lo)) / 2
            p.update(median_ratio=math.exp(med), ci_lo=math.exp(lo), ci_hi=math.exp(hi), confidence=CONFIDENCE, mdc_pct=mdc_pct)
        rec["paired"] = p
    for v in pc.variants:
        rec, brec = head_recs[v], (base_recs.get(v) if v in pc.base_variants else None)
        if brec is not None and brec.get("tuning") is not None and isinstance(rec.get("paired"), dict):
            rec["paired"]["base_tuning"] = brec["tuning"]
    for rec in head_recs.values():
        refuse_zero_time(rec)
    return head_recs


def failure(e, head, base):
    """Why a paired case stopped: the arm whose worker failed, hung or died, and where."""
    if isinstance(e, PairedFatal):
        return f"the {e.arm} revision's worker failed: {e.error.get('message', '')}"
    arm = "head" if head.proc is None else "base"
    culprit, phase = e.current[0], e.current[1]
    what = "hung" if isinstance(e, WorkerTimeout) else f"died ({exit_description(e.exitcode, e.current)})"
    return f"the {arm} revision's worker {what} during {phase or 'start-up'} of {culprit or 'its case'}"


def attempt(pc, start_timeout_s=WORKER_START_TIMEOUT_S):
    """pc.run with the arms' workers started together: (records, None), or (None, why) when
    either arm crashed, hung or failed (both workers are then killed)."""
    try:
        return pc.run(lambda *arms: ready_together(arms, start_timeout_s)), None
    except (WorkerTimeout, WorkerDied, PairedFatal) as e:
        why = failure(e, pc.head, pc.base)
        pc.head.kill()
        pc.base.kill()
        return None, why
