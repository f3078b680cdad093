"""Verification of one case: every variant against the module's higher-precision oracle on fresh
random inputs for every seed and on the module's stress inputs, each run twice (over a
NaN-poisoned and a sentinel-filled output: unwritten elements, races), the inputs fingerprinted
before and after (a variant that writes into them), work left on another stream (the drain probe
and the late-work check, stream_checks.py), and the correctness record judged against the manifest's
tolerances (correctness.py)."""

import gc
import math
import threading
import time

from .device import error_record, is_out_of_memory, sync_stream
from .outputs import bits_differ, output_problem, settle
from .processes import descendants

# A variant whose device work outlives its own stream's end event by this much (and by this
# fraction of its timed duration) launched work on another stream than the one timed.
DRAIN_FLAG_MS = 0.2
DRAIN_FLAG_FRACTION = 0.1
DRAIN_CONFIRM_REPEATS = 3
# The late-work check (right_only_after_device_sync): a spin queued on the timed stream before the
# variant runs, long enough for the host to queue the variant and the harness's copy of its output
# behind it (3x the variant's host time, 1-100 ms). When it ends, the copy runs at once, whatever
# the host's latency: work the variant left on another stream is then still running, however
# short it is (late_short: 50 us on an H100 read as finished when the copy waited on the host).
LATE_GATE_MIN_MS = 1.0
LATE_GATE_MAX_MS = 100.0
LATE_GATE_HOST_FACTOR = 3
# The repeat check's slice (repeat_max_diff): 64M elements, 256 MB in fp32.
REPEAT_SLICE = 1 << 26


def drain_flagged(drain_ms, event_ms):
    return drain_ms > max(DRAIN_FLAG_MS, DRAIN_FLAG_FRACTION * event_ms)


def late_gate_ms(host_ms):
    """The spin ahead of the late-work check's run: LATE_GATE_HOST_FACTOR times the host's time to
    queue the variant, within [LATE_GATE_MIN_MS, LATE_GATE_MAX_MS]."""
    return min(LATE_GATE_MAX_MS, max(LATE_GATE_MIN_MS, LATE_GATE_HOST_FACTOR * (host_ms or 0.0)))


def fingerprint(inputs):
    """{name: (bit sum, position-weighted bit sum)} of every tensor in an inputs dict: cheap on the
    GPU (no copy), and any write that changes a value changes it (a swap of two values changes the
    weighted sum unless they sit 251·k elements apart)."""
    import torch

    out = {}
    for name, x in inputs.items():
        if not isinstance(x, torch.Tensor):
            continue
        if x.layout != torch.strided:
            # Sparse layouts (a BSR matrix): their values and index tensors, each on its own.
            parts = {}
            for part in ("values", "crow_indices", "col_indices", "ccol_indices", "row_indices", "indices"):
                try:
                    parts[f"{name}.{part}"] = getattr(x, part)()
                except (AttributeError, RuntimeError, NotImplementedError):
                    continue
            out.update(fingerprint(parts))
            continue
        flat = x.detach().reshape(-1)
        size = flat.element_size()
        bits = flat.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]) if flat.dtype != torch.bool else flat.view(torch.uint8)
        total = int(bits.sum(dtype=torch.int64))
        n = bits.numel() - bits.numel() % 251
        weighted = 0
        if n:
            cols = bits[:n].view(-1, 251).sum(0, dtype=torch.int64)
            weighted = int((cols * torch.arange(1, 252, device=cols.device, dtype=torch.int64)).sum())
        out[name] = (total, weighted, int(bits[n:].sum(dtype=torch.int64)) if n < bits.numel() else 0)
    return out


def out_fingerprint(t):
    """The bits' fingerprint of one output (fingerprint's), to name an answer returned again."""
    return fingerprint({"out": t}).get("out")


def refused_check(seed, problem, numel):
    """The check of a call whose result is refused before it is looked at (outputs.output_problem)."""
    return {
        "refused": problem, "late_work": False, "after_return": 0, "third_moved": 0, "out_bits": None, "seed": seed,
        "rel_l2": None, "max_abs": None, "nan": 0, "inf": 0, "unwritten": 0, "numel": numel, "repeat": None,
        "moved_nonfinite": 0, "drain_ms": None, "event_ms": None,
    }



# A case's verification split by variant is printed when its variants' checks took this long in all.
SPLIT_LEAST_S = 1.0


def verification_split(records, least_s=SPLIT_LEAST_S):
    """'verification by variant: triton_fa2 2.1 s, cublas_attn 0.9 s, …' from the case's records
    (correctness.seconds), the most first; '' when they took less than least_s in all."""
    spent = sorted(
        ((rec["correctness"]["seconds"], v) for v, rec in records.items() if rec.get("correctness", {}).get("seconds") is not None),
        key=lambda sv: (-sv[0], sv[1]),
    )
    if not spent or sum(s for s, _ in spent) < least_s:
        return ""
    return "verification by variant: " + ", ".join(f"{v} {s:.1f} s" for s, v in spent)


def repeat_max_diff(torch, a, b, both):
    """max |a - b| over the elements finite in both runs (`both`), 0.0 where there are none, in fp32,
    in slices of REPEAT_SLICE elements. A boolean index of the whole output (`diff[both]`) asked for
    its int64 indices (32 bytes an element of a 4-D output) and three fp32 copies at once: 35 GB
    for the 805M elements of B16 H96 S4096 D128, beside the case's inputs and the other arm's worker."""
    fa, fb, fm = a.reshape(-1), b.reshape(-1), both.reshape(-1)
    worst = None
    for s in range(0, fa.numel(), REPEAT_SLICE):
        d = (fa[s:s + REPEAT_SLICE].float() - fb[s:s + REPEAT_SLICE].float()).abs()
        top = torch.where(fm[s:s + REPEAT_SLICE], d, torch.zeros((), dtype=d.dtype, device=d.device)).max()
        worst = top if worst is None else torch.maximum(worst, top)
    return 0.0 if worst is None else float(worst)


def changed_inputs(before, after):
    return sorted({k.split(".")[0] for k in before if after.get(k) != before[k]})


class Verifier:
    """The verification steps of worker.Worker (a mixin: it uses `torch`, `device`, `module` (the
    kernel module), `manifest` and `mark`, the stream checks (stream_checks.StreamChecks) and the
    judging of the checks (correctness.Correctness))."""

    # The variants of the case being verified that will not be timed (a paired run's --identical
    # ones, set by worker.Worker.paired): verified without the timing's cache probe.
    untimed: frozenset = frozenset()
    # The variants identical in base and head verified on the first seed only (--verify-identical
    # first_seed, set by worker.Worker): their other seeds are skipped, and so are the first seed's
    # probes of what the timing would miss (the drain probe, the late-work check, the cache
    # probe); the output, NaN, Inf, unwritten, repeat, third-run and tolerance checks and the
    # stress inputs stay. Their code is the base's, verified on every seed on its own push.
    first_seed_only: frozenset = frozenset()

    def verify(self, params, seeds, records, runners):
        """Runs every variant on fresh inputs for every seed; returns the oracle of the first seed
        (the timed runs' output is re-checked against it)."""
        idx_fn = getattr(self.module, "oracle_index", None)
        idx = idx_fn(params) if idx_fn else None
        checks = {v: [] for v in runners}
        ref0 = None
        for seed in seeds:
            now = runners if seed == seeds[0] else {v: r for v, r in runners.items() if v not in self.first_seed_only}
            if not now:
                continue
            inputs = self.module.make_inputs(dict(params), seed, self.device)
            ref = self.module.oracle(inputs, params)
            if ref0 is None:
                ref0 = ref
            remake = lambda seed=seed: self.module.make_inputs(dict(params), seed, self.device)  # noqa: E731
            # The stream checks (drain probe, late work) run with the first seed; the base arm of a
            # paired run skips them (stream_checks off, cli.base_options): its code had them on its
            # own push, and here it only has to compute the same thing as the head.
            first = seed == seeds[0] and self.opt.get("stream_checks", True)
            self.check_variants(now, records, inputs, remake, ref, params, idx, seed, checks, first=first)
            del inputs
        # The base arm of a paired run skips the stress inputs, as it verifies fewer seeds: it is
        # the target branch's code, stress-checked on its own push (cli.base_options).
        stress = self.verify_stress(params, idx, records, runners) if self.opt.get("stress", True) else {}
        tol = self.tolerance(params)
        # The first seed's output bits of each variant: its timed runs on the same values must
        # give the same bits (timed_output.py: a race that shows only under repetition).
        self.verified_bits = {v: (seeds[0], checks[v][0].get("out_bits")) for v in runners if checks[v]}
        for v in runners:
            if records[v].get("status") == "error":
                continue
            self.judge(records[v], checks[v], tol, seeds[:1] if v in self.first_seed_only else seeds, idx is not None, stress.get(v, []))
        return ref0, idx

    def verify_stress(self, params, idx, records, runners):
        """The module's stress inputs (`stress_inputs(params, device)`: {name: inputs}, values at the
        edges of their range that random seeds do not reach, e.g. attention logits large enough to
        overflow an exp without the running max), each checked like a seed: {variant: [check]}.
        Checked apart from the seeds: their error norms are not the case's rel_l2, so a kernel
        that gains stress inputs is not called drifted against a baseline that had none."""
        make = getattr(self.module, "stress_inputs", None)
        sets = make(dict(params), self.device) if make else {}
        out = {v: [] for v in runners}
        for name, inputs in (sets or {}).items():
            ref = self.module.oracle(inputs, params)
            remake = lambda name=name: make(dict(params), self.device)[name]  # noqa: E731
            self.check_variants(runners, records, inputs, remake, ref, params, idx, f"stress input {name}", out, first=False)
            del inputs
        return out

    def check_variants(self, runners, records, inputs, remake, ref, params, idx, seed, into, first):
        """Every variant not yet in error checked on one input set (`seed`: the seed, or a stress
        input's label), its check appended to into[variant]; a variant that wrote into the inputs
        is named, and the next one gets them as they were made (remake())."""
        before = fingerprint(inputs)
        where = f"seed {seed}" if isinstance(seed, int) else seed
        for v, run in list(runners.items()):
            if records[v].get("status") == "error":
                continue
            t0 = time.perf_counter()
            self.mark(v, f"verify {where}")
            # An identical variant verified on the first seed only has none of the timing's probes.
            probes = v not in self.first_seed_only
            try:
                check = self.check_once_or_free(run, inputs, params, ref, idx, seed, first=first, probes=probes)
                if check is not None and first and probes and self.opt.get("timing") and v not in self.untimed and not check.get("refused"):
                    # Once per case and variant that is timed: does it serve results from a cache
                    # (caching.py)? Such a cache is what the timed runs would measure. A variant
                    # left untimed (a paired run's --identical ones) skips it: 7 of its 15 calls.
                    check["cache"] = self.cache_probe(run, params, idx)
            except Exception as e:
                records[v].update(status="error", error=error_record("verify", e))
                check = None
            tampering = self.tampered(f"while {v} was verified ({where})") or self.l2_left_set(v)
            if tampering:
                records[v].update(status="error", error=tampering)
            written = changed_inputs(before, fingerprint(inputs))
            if check is not None:
                check["inputs_written"] = written
                # what this variant's checks cost here (correctness.seconds: where a case's
                # verification time goes, docs/scaling.md)
                check["seconds"] = time.perf_counter() - t0
                into[v].append(check)
            if written:
                inputs = remake()

    def tolerance(self, params):
        dtype = params.get("dtype")
        tol = self.manifest["tolerance"].get(dtype)
        if tol is None:
            raise KeyError(f"{self.manifest['path']}: tolerance: no entry for dtype {dtype!r}")
        return tol

    def check_once_or_free(self, run, inputs, params, ref, idx, seed, first, probes=True):
        """check_once, again once after returning the allocator's cached blocks to the GPU when it
        ran out of memory: the checks of a large case (B16 H96 S4096 attention: 24 GiB at once)
        ran out with 29 GiB held by PyTorch's cache unallocated, beside the other arm's worker of
        a paired run (H100, 2026-11-23). A kernel that runs out again is the error it reports."""
        try:
            return self.check_once(run, inputs, params, ref, idx, seed, first, probes)
        except Exception as e:
            if self.device != "cuda" or not is_out_of_memory(self.torch, e):
                raise
        gc.collect()
        self.torch.cuda.empty_cache()
        return self.check_once(run, inputs, params, ref, idx, seed, first, probes)

    def check_once(self, run, inputs, params, ref, idx, seed, first, probes=True):
        """One variant's checks on one input set. `first`: the first seed's extra checks (the third
        run under load; with `probes`, the drain probe and the late-work check, which catch work
        the timing would not see)."""
        torch = self.torch
        out = self.module.output_like(inputs, params)
        out.fill_(math.nan)
        drain_ms = event_ms = None
        threads = set(threading.enumerate())
        processes = descendants()
        if self.device == "cuda" and first and probes:
            res, drain_ms, event_ms, host_ms = self.drain_probe(lambda: run(inputs, out))
            # One host-timed synchronize() is no evidence: the host thread can be descheduled
            # between the two waits (a correct kernel read 0.65 ms on an H100 push run, issue 9). A
            # variant is flagged only when every repeat leaves work behind; the least is kept.
            for _ in range(DRAIN_CONFIRM_REPEATS):
                if not drain_flagged(drain_ms, event_ms):
                    break
                _, again_ms, again_event_ms, _ = self.drain_probe(lambda: run(inputs, self.module.output_like(inputs, params)))
                if again_ms < drain_ms:
                    drain_ms, event_ms = again_ms, again_event_ms
        else:
            t0 = time.perf_counter()
            res = run(inputs, out)
            host_ms = (time.perf_counter() - t0) * 1e3
            sync_stream(torch, self.device)
        refused = output_problem(torch, res, inputs, out)
        if refused:
            return refused_check(seed, refused, out.numel())
        wrote_out = res.data_ptr() == out.data_ptr()
        res1 = res.clone()
        # Finished when the call returned: nothing it left running (a thread, another stream) may
        # change the output afterwards, outside the timed interval.
        started, on_gpu = settle(torch, self.device, threads, processes)
        after_return = bits_differ(torch, res, res1)
        # Second run on the same inputs over a finite sentinel: an element that stays NaN in the
        # first run and keeps the sentinel in the second was never written.
        out.fill_(30000.0)
        sentinel = out.view(-1)[0].item()
        res2 = run(inputs, out)
        sync_stream(torch, self.device)
        refused = output_problem(torch, res2, inputs, out, earlier=res)
        if refused:
            return refused_check(seed, refused, out.numel())
        # The first seed: a third run on the same inputs, on the GPU under load on another stream
        # (other block orders): a race that two quiet runs happen to agree on (split-K atomics on
        # a large output passed two runs on the H100, issue 34) moves here.
        third = self.third_run_moved(run, inputs, params, res1) if first and self.opt.get("stream_checks", True) else 0
        nan1 = torch.isnan(res1)
        unwritten = (nan1 & (res2 == sentinel)) if wrote_out else torch.zeros_like(nan1)
        n_unwritten = int(unwritten.sum())
        n_nan = int(nan1.sum()) - n_unwritten
        n_inf = int(torch.isinf(res1).sum())
        fin1, fin2 = torch.isfinite(res1), torch.isfinite(res2)
        both = fin1 & fin2
        moved_nonfinite = int(((fin1 != fin2) & ~unwritten).sum())
        repeat = None if moved_nonfinite else repeat_max_diff(torch, res1, res2, both)
        rel, mx = self.error_vs(res1, ref, idx)
        numel = res1.numel()
        out_bits = out_fingerprint(res1)
        late = False
        if self.device == "cuda" and ((first and probes) or n_unwritten or n_nan or rel is None or rel > self.tolerance(params)["rel_l2"]):
            # Always on the first seed: short work left on another stream need not make this
            # check's own runs wrong (late_short passed on the H100 with its 50 us, 2026-11-23).
            del res1, res2, both, fin1, fin2, nan1, unwritten
            late = self.right_only_after_device_sync(run, inputs, params, ref, idx, host_ms)
        return {
            "late_work": late,
            "after_return": after_return,
            "after_return_processes": [
                f"{name} (pid {pid}{', the GPU open' if pid in on_gpu else ''})" for pid, name in started.items()
            ] if after_return else [],
            "after_return_on_gpu": bool(after_return and on_gpu),
            "third_moved": third,
            "out_bits": out_bits,
            "seed": seed,
            "rel_l2": rel,
            "max_abs": mx,
            "nan": n_nan,
            "inf": n_inf,
            "unwritten": n_unwritten,
            "numel": numel,
            "repeat": repeat,
            "moved_nonfinite": moved_nonfinite,
            "drain_ms": drain_ms,
            "event_ms": event_ms,
        }

    def error_vs(self, out, ref, idx):
        """(rel_l2, max_abs) of out against the oracle over the part it covers; (None, None) if NaN/Inf."""
        sub = out[idx] if idx is not None else out
        sub = sub.float()
        if not bool(self.torch.isfinite(sub).all()):
            return None, None
        ref = ref.float()
        d = sub - ref
        ref_norm = float(ref.norm())
        rel = float(d.norm()) / ref_norm if ref_norm > 0 else float(d.norm())
        return rel, float(d.abs().max()) if d.numel() else 0.0
