"""Timing of one case's verified variants: the method (CUDA events, a CUDA graph of many launches
for short cases, calls back to back for a variant that cannot be captured; the wall clock on the
CPU), cold L2 and rotated input sets, warm-up, the lead-in before each round, and samples round by
round until each variant's stop rule says so. One case's timing is four steps, driven either here
(bench: one revision, its variants round by round) or by the parent (paired A/B: two workers, one
per revision, round by round in ABBA order): prepare (inputs, outputs, L2 flush buffer, graphs),
warm, sample rounds (sampling.py), finish (timed_output: re-check the timed runs' output)."""

import sys

from .device import error_record
from .graphs import CaptureFailed, unjoined_error
from .l2 import l2_statement
from .outputs import bits
from .stats import balanced, drop_throttled, summarize, unthrottled

# A case whose roofline floor (its work at round chip rates) is below this is timed as a CUDA graph
# of many launches, since one launch per event pair would measure the host's launch overhead (a
# Triton launch costs ~20-40 µs of Python) rather than the kernel. The choice comes from the case's
# work, never from a timing: decided on a measured duration near a threshold, it flipped between
# two runs of the same code (H200, 2026-11-21: tail cases read 7 µs as graphs in one run and 90 µs
# as single launches in the next), and a comparison across methods is meaningless.
GRAPH_BELOW_FLOOR_MS = 0.1
FLOOR_FLOPS_PER_MS = 1e12  # 1,000 TFLOPS: about a Hopper's dense fp16 peak
FLOOR_BYTES_PER_MS = 3e9  # 3 TB/s: about an H100's memory bandwidth
GRAPH_TARGET_MS = 1.0
# The launch count of a graph comes from the work too, never from a timing: taken from a noisy
# single-launch warm-up it differed between two runs of the same code for 123 of 141 graph-timed
# cases, and half their run-to-run noise followed 1/n (figures from issue 9's recorded runs).
# A small kernel runs far below the roofline, so the estimate of one launch is floored at 5 µs and
# taken at 4x the roofline floor; the count is capped so a sample stays a few milliseconds.
GRAPH_EST_FACTOR = 4
GRAPH_EST_MIN_MS = 0.005
GRAPH_MAX_LAUNCHES = 200


# A graph's launches write different output buffers in turn (a launch that skips its work leaves
# its buffer unwritten, checked after timing), as many as its launches, within a share of L2 so
# that the graph's replays stay warm as before (at least two).
GRAPH_BUFFERS_L2_SHARE = 0.25


def graph_buffers(out, n, l2_bytes):
    """How many output buffers a graph of n launches writes in turn."""
    size = max(1, out.numel() * out.element_size())
    return max(1, min(n, max(2, int(GRAPH_BUFFERS_L2_SHARE * l2_bytes // size))))


def floor_ms(work):
    """The case's roofline floor at round Hopper rates, in ms."""
    return max(work["flops"] / FLOOR_FLOPS_PER_MS, work["bytes"] / FLOOR_BYTES_PER_MS)


def times_as_graph(work):
    """Whether a case is timed as a CUDA graph of many launches: from its work alone, so that
    every run of the same case on any GPU uses the same method."""
    return floor_ms(work) < GRAPH_BELOW_FLOOR_MS


def graph_launches(work):
    """Launches per graph replay, from the work alone: the same n in every run and in both arms."""
    est_ms = max(GRAPH_EST_FACTOR * floor_ms(work), GRAPH_EST_MIN_MS)
    return max(1, min(GRAPH_MAX_LAUNCHES, int(round(GRAPH_TARGET_MS / est_ms))))


# Working sets below this multiple of L2 are timed cold: L2 flushed before each sample and inputs
# rotated among several sets.
L2_FLUSH_BELOW = 4
INPUT_SET_BUDGET_BYTES = 1 << 30
MAX_INPUT_SETS = 4


# Each timed input set's contents alternate between two values in the same tensors (swapped in
# place between rounds), and each variant's output buffer between two, out of step with them, so a
# buffer is never handed to a call on the values it last held the answer for: a result cached by
# the inputs' identity, or left in an untouched buffer, is wrong and checked (finish). Only where
# the second values and buffers fit in INPUT_SET_BUDGET_BYTES, and every input is a contiguous
# strided tensor (else one value and one buffer, as before).
GENERATIONS = 2
ALT_SEED = 4_000_003


def swap_in_place(torch, a, b):
    """a and b (contiguous, same shape and dtype) exchange their contents without a third buffer."""
    x, y = bits(torch, a), bits(torch, b)
    x.bitwise_xor_(y)
    y.bitwise_xor_(x)
    x.bitwise_xor_(y)


class Bench:
    """One case's timing state in one worker: inputs, outputs, graphs and the samples taken."""

    def __init__(self, **kw):
        self.verified = {}  # variant -> the bits' fingerprint of its verified output on set 0
        self.__dict__.update(kw)
        self.outs, self.flush, self.samples = {}, None, {}
        self.graphs, self.batched, self.warmup_ms, self.last_res, self.host_ms, self.spin_ms = {}, {}, {}, {}, {}, {}
        self.graph_out = {}
        self.graph_res = {}  # variant -> {buffer j: what the captured launch j returned}
        self.bad = {}  # variant -> the error that ended its timing (tampering, L2 persistence)
        self.alt = None  # per set: the other values, swapped with the live ones between rounds
        self.gen = [0] * self.n_sets  # per set: which values the set's tensors hold now
        self.use = [0] * self.n_sets  # per set: its rounds so far
        self.graph_calls = 0

    def buffer(self, k):
        """Which of a variant's two output buffers of set k the current round hands out."""
        return self.use[k] % 2 if self.alt is not None else 0

    def call(self, v, k):
        j = self.buffer(k)
        res = self.runners[v](self.sets[k], self.outs[v][k][j])
        # The latest output of every input set and buffer, and the values it was computed on:
        # finish() checks each against their own oracle.
        self.last_res[(v, k, j)] = (res, self.gen[k])
        return res

    def call_graph(self, v, n_buffers):
        """One call while a graph is captured: its launches write n_buffers different buffers in
        turn, buffer j on input set j % n_sets."""
        j = self.graph_calls % n_buffers
        self.graph_calls += 1
        res = self.runners[v](self.sets[j % self.n_sets], self.outs[v][0][j])
        # What launch j returned: the buffer it was handed, or a tensor of the graph's own pool
        # (torch's SDPA returns a new tensor and writes no buffer: checking the handed buffers read
        # NaN for every launch, 64 false failures on an H100 A/A run, 2026-11-26).
        self.graph_res.setdefault(v, {})[j] = res
        return res

    def next_round(self, torch, r):
        """Before round r: the set it uses gets its other values when its turn says so."""
        k = r % self.n_sets
        self.use[k] = r // self.n_sets
        if self.alt is None:
            return
        want = (self.use[k] // 2) % GENERATIONS
        if want != self.gen[k]:
            for name, x in self.sets[k].items():
                if isinstance(x, torch.Tensor):
                    swap_in_place(torch, x, self.alt[k][name])
            self.gen[k] = want

    def values(self, k, g):
        """The inputs of set k as they are in generation g (live or swapped out)."""
        if g == self.gen[k] or self.alt is None:
            return self.sets[k]
        return {name: self.alt[k].get(name, x) for name, x in self.sets[k].items()}

    def release(self):
        self.sets = self.outs = self.flush = self.graphs = self.last_res = self.ref0 = self.graph_out = self.graph_res = self.alt = None


# The times one call can take, ms (schema/results.schema.json, Timing): a nanosecond to an hour.
# The judge refuses a document with a time outside them (src/results/results.ts).
MIN_CALL_MS = 1e-6
MAX_CALL_MS = 3_600_000


def refuse_zero_time(rec):
    """A median of 0 ms is no measurement: no throughput follows from it, and the above-peak check
    could not run. Nor is any time outside MIN_CALL_MS … MAX_CALL_MS. The case is an error that
    says why, and its timing goes (the contract refuses such times: the document would be)."""
    t = rec.get("timing")
    if not t or rec.get("status") != "ok":
        return
    if not t.get("median_ms", 0) > 0:
        message = (
            f"timed at {t.get('median_ms', 0):g} ms (median of {t.get('n_samples', 0)} samples): the events around the call saw no work on "
            "the timed stream (the work ran elsewhere, or none was done); no throughput follows and the above-peak check cannot run"
        )
        rec.update(status="error", error={"kind": "zero_time", "message": message})
    elif (bad := impossible_time(t)) is not None:
        field, value = bad
        message = f"timed at {field} = {value:g} ms, not a time one call can take ({MIN_CALL_MS:g} to {MAX_CALL_MS:g} ms): no measurement"
        rec.update(status="error", error={"kind": "impossible_time", "message": message})
    else:
        return
    del rec["timing"]


def impossible_time(t):
    """The first of a timing's times outside MIN_CALL_MS … MAX_CALL_MS, as (field, value), or None."""
    for field in ("median_ms", "q1_ms", "q3_ms", "min_ms", "mean_ms"):
        value = t.get(field)
        if value is not None and not MIN_CALL_MS <= value <= MAX_CALL_MS:
            return field, value
    for i, value in enumerate(t.get("samples_ms") or []):
        if not MIN_CALL_MS <= value <= MAX_CALL_MS:
            return f"samples_ms[{i}]", value
    return None


def fail_untimed(records, error):
    for rec in records.values():
        if rec.get("status") == "ok" and "timing" not in rec:
            rec.update(status="error", error=error)


class Timer:
    """The timing steps of worker.Worker (a mixin: it uses `torch`, `device`, `module`, `opt` (the
    run's options), `nvml`, `l2_bytes`, `ctx`, `warmed_up`, `mark`, the graph capture
    (graphs.GraphCapture), the rounds of samples (sampling.Sampler) and the check after timing
    (timed_output.TimedOutputCheck))."""

    def prepare(self, params, records, runners, ref0, idx):
        """The case's timing state for its verified variants, or None when none passed."""
        names = [v for v, r in runners.items() if records[v].get("status") == "ok"]
        if not names:
            return None
        self.mark(",".join(names), "bench set-up")
        torch = self.torch
        work = self.module.work(params)
        cuda = self.device == "cuda"
        use_graph = cuda and times_as_graph(work)
        # Graph replays run n launches back to back on warm caches: one L2 flush per replay would
        # leave n-1 of them warm anyway, so those cases are called warm and not flushed at all.
        cold = cuda and not use_graph and work["bytes"] < L2_FLUSH_BELOW * self.l2_bytes
        # Several input sets, rotated sample by sample, for cold cases (and on the CPU, where it
        # costs nothing): finish() checks the timed output of every one of them.
        n_sets = min(MAX_INPUT_SETS, max(1, int(INPUT_SET_BUDGET_BYTES // max(work["bytes"], 1)))) if cold or not cuda else 1
        if use_graph and 2 * work["bytes"] <= INPUT_SET_BUDGET_BYTES:
            # A graph's launches alternate between two input sets, so a launch that copies another
            # launch's answer instead of computing its own is wrong (check_graph_buffers).
            n_sets = 2
        seeds = self.opt["seeds"]
        sets = [self.module.make_inputs(dict(params), seeds[0] if i == 0 else 1_000_003 + i, self.device) for i in range(n_sets)]
        b = Bench(
            params=params, names=names, runners=runners, records=records, ref0=ref0, idx=idx,
            work=work, cold=cold, use_graph=use_graph, n_sets=n_sets, sets=sets,
            verified={v: bits for v, (seed, bits) in getattr(self, "verified_bits", {}).items() if seed == seeds[0] and bits is not None},
        )
        b.alt = self.alternate_values(params, sets, names, work) if not use_graph else None
        n_out = 2 if b.alt is not None else 1
        if use_graph:
            n_out = graph_buffers(self.module.output_like(sets[0], params), graph_launches(work), self.l2_bytes)
            if n_sets > 1 and n_out > 1:
                n_out -= n_out % n_sets
        b.outs = {v: [[self.module.output_like(x, params) for _ in range(n_out)] for x in sets] for v in names}
        b.flush = torch.empty(2 * self.l2_bytes, dtype=torch.uint8, device="cuda") if cold else None
        b.samples = {v: {"ms": [], "clk": [], "pw": [], "after": []} for v in names}
        if use_graph:
            n = graph_launches(work)
            for v in names:
                self.mark(v, "graph capture")
                try:
                    try:
                        b.graph_calls = 0
                        graph, _ = self.capture(lambda v=v: b.call_graph(v, n_out), n)
                        b.graph_out[v] = [b.graph_res.get(v, {}).get(j, buf) for j, buf in enumerate(b.outs[v][0])]
                        b.graphs[v] = (graph, n)
                        tampering = self.tampered(f"while {v} was captured in a CUDA graph")
                        if tampering:
                            records[v].update(status="error", error=tampering)
                        continue
                    except CaptureFailed as e:
                        failed = e
                    if failed.unjoined:
                        records[v].update(status="error", error=unjoined_error(failed.error))
                        continue
                    # Not capturable (e.g. a host sync inside): calls back to back between one
                    # event pair. That includes the host's launch cost, but amortised over the
                    # calls it no longer swings with one launch's latency.
                    b.batched[v] = self.batch_calls(lambda v=v: b.call(v, 0), n)
                    why = f"not capturable in a CUDA graph ({failed.error}); timing {b.batched[v]} calls back to back"
                    print(f"[kernelgate worker] {v}: {why}", file=sys.stderr, flush=True)
                except Exception as e:
                    # Raised when called outside any capture (the capture's warm-up, or the
                    # calls that size the fallback): this variant's error, not the case's.
                    records[v].update(status="error", error=error_record("bench", e))
            b.names = [v for v in names if records[v].get("status") == "ok"]
            if not b.names:
                b.release()
                return None
        return b

    def alternate_values(self, params, sets, names, work):
        """Per input set, its second values ({name: tensor}), or None where they cannot be swapped
        in place (a sparse, non-contiguous or non-tensor input that differs) or do not fit."""
        torch = self.torch
        extra = len(sets) * work["bytes"] * (1 + len(names))
        if extra > INPUT_SET_BUDGET_BYTES:
            return None
        alt = []
        for i, live in enumerate(sets):
            other = self.module.make_inputs(dict(params), ALT_SEED + i, self.device)
            if set(other) != set(live):
                return None
            for name, x in other.items():
                y = live[name]
                if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
                    return None
                if not isinstance(x, torch.Tensor):
                    if x is not y and x != y:
                        return None
                    continue
                if x.layout != torch.strided or y.layout != torch.strided or not (x.is_contiguous() and y.is_contiguous()):
                    return None
                if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
                    return None
            alt.append({name: x for name, x in other.items() if isinstance(x, torch.Tensor)})
        return alt

    def method(self, b, v):
        if self.device != "cuda":
            return "wall clock (CPU" + (", Triton interpreter)" if self.ctx.interpret else ")")
        if v in b.graphs:
            base = f"events, graph({b.graphs[v][1]} launches, warm L2)"
        elif v in b.batched:
            base = f"events, {b.batched[v]} calls back to back, warm L2"
        else:
            base = "events"
        return base + ("+l2flush" if b.cold else "") + (", interleaved" if self.opt.get("interleave", True) else ", sequential")

    def l2_state(self, b, v):
        l2 = getattr(self, "l2", None)
        reset_ok = l2 is not None and l2.ok
        return l2_statement(b.cold, b.use_graph, v in b.batched, reset_ok, b.work["bytes"], getattr(self, "l2_bytes", 0), self.device == "cuda")

    def arm_info(self, b):
        """What the parent needs to write each variant's timing record."""
        return {
            v: {
                "method": self.method(b, v), "warmup_ms": b.warmup_ms.get(v, 0.0), "l2_flush": bool(b.cold), "input_sets": b.n_sets,
                "l2_state": self.l2_state(b, v),
            }
            for v in b.names
        }

    def bench(self, params, records, runners, ref0, idx):
        """Times one revision's variants here, round by round, each until its stop rule says so."""
        b = self.prepare(params, records, runners, ref0, idx)
        if b is None:
            return
        # Interleaved: one group, every variant sampled round by round in the same thermal state.
        # Sequential (--no-interleave): each variant warmed up and sampled on its own.
        groups = [b.names] if self.opt.get("interleave", True) else [[v] for v in b.names]
        stops = {}
        for group in groups:
            self.warm(b, group, self.warmup_seconds())
            stops.update(self.sample_until_stopped(b, group))
        info = self.arm_info(b)
        for v in b.names:
            if v in b.bad:
                records[v].update(status="error", error=b.bad[v])
                continue
            s = b.samples[v]
            kept, clk, pw, n_drop = drop_throttled(s["ms"], s["clk"], s["pw"])
            timing = {
                "method": info[v]["method"],
                "samples_ms": kept,
                **summarize(kept),
                "n_discarded_throttled": n_drop,
                "stop_reason": stops[v],
                "warmup_ms": info[v]["warmup_ms"],
                "l2_flush": info[v]["l2_flush"],
                "l2_state": info[v]["l2_state"],
                "input_sets": b.n_sets,
            }
            if clk:
                timing["sm_clock_mhz"] = clk
                timing["power_w"] = pw
            keep = unthrottled(len(s["ms"]), s["clk"])
            bal = balanced(s["ms"], s["after"], keep)
            if bal is not None:
                timing["balanced_ms"], timing["balanced_groups"] = bal
                # each kept sample's predecessor: what the estimate grouped (the design's
                # labelling need not be rebuilt to read a run, docs/harness.md)
                timing["after"] = [s["after"][i] for i in keep]
            records[v]["timing"] = timing
            refuse_zero_time(records[v])
        self.finish(b)

    def warmup_seconds(self):
        """The first case of a worker warms up longer, to reach steady power."""
        seconds = self.opt["warmup_s"] if self.warmed_up else self.opt["first_warmup_s"]
        self.warmed_up = True
        return seconds
