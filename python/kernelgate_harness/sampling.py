"""Sampling, the rounds of one case's timing (timing.py's fourth step): the warm-up, the lead-in
before a round's first sample, one sample of a variant (an event pair, or the wall clock on the
CPU) and the rounds until each variant's stop rule says so. Driven by timing.Timer.bench for one
revision, or by the parent's paired case (pwarm, psample) for two."""

import random
import time
from collections import Counter

from .device import SPIN_CYCLES_PER_MS
from .integrity import prims_of
from .stats import StopRule, drop_throttled

# The spin queued before a round's first sample: at least LEAD_IN_SPIN_MS, twice the variant's
# host launch time, at most LEAD_IN_MAX_MS (device.SPIN_CYCLES_PER_MS converts it to cycles).
LEAD_IN_SPIN_MS = 0.1
LEAD_IN_MAX_MS = 10.0
HOST_MS_SETTLE = 4


def cycle_length(n):
    """Rounds in one cycle of the Williams design over n variants: n, or 2n for an odd n (the
    square, then its mirror)."""
    return n if n % 2 == 0 else 2 * n


def williams_row(n, row):
    """Row `row` of a Williams design over n symbols (0..n-1): a Latin square in which every symbol
    follows every other one once in n rows for an even n; for an odd n, rows n..2n-1 are the
    square's rows reversed (its mirror), and each ordered pair comes twice in the 2n."""
    if n == 0:
        return []
    first, lo, hi = [0], 1, n - 1
    for i in range(1, n):
        if i % 2:
            first.append(lo)
            lo += 1
        else:
            first.append(hi)
            hi -= 1
    row %= cycle_length(n)
    seq = [(x + row % n) % n for x in first]
    if row >= n:
        seq.reverse()
    return seq


def round_order(names, r, relabel=True):
    """Round r's order of the group's variants: a Williams design (williams_row), rows of a Latin
    square in which every variant follows every other one equally often (each ordered neighbour
    pair once in a cycle of n rounds for an even n, twice in 2n for an odd n) and takes every place
    equally often (the first, behind the lead-in, too). A kernel that leaves the GPU cool, or under
    its power cap, hands the next one a higher clock: rotated rounds, the order until 2026-11-27
    (the fourteenth session), kept every variant behind the same predecessor, and on three H100
    pushes (runs 117, 124, 128) sdpa_cudnn and sdpa_default, the same cuDNN kernel, read up to
    6.7 % apart; the first push in this order (run 132) read seven of the eight headline cases
    within 1.4 % (test/python/test_sampling_group.py).

    Each cycle assigns the square's symbols to the variants afresh (relabel, the default since
    2026-11-29, the twenty-fifth session; cycle_labels), the same for every run. The
    square's rows are shifts of one row, so within one labelling what ran two places ahead of a
    sample is fixed by its predecessor: on the recorded H200 pushes our attention kernel's samples
    behind the three hot attention variants always had cublas_attn (70 ms of GEMMs at the power
    cap) two places ahead, SDPA's default's behind the same three cuda_fa2 (cool), and its samples
    behind the cool variants ran 5-6 % faster than SDPA's where those behind the hot ones read alike.
    Relabelled, the first-order balance of every cycle holds and what ran two places ahead varies
    from cycle to cycle. relabel=False gives the single labelling (the order of the runs recorded
    before)."""
    n = len(names)
    if n == 0:
        return []
    label = cycle_labels(n, r // cycle_length(n)) if relabel else range(n)
    return [names[label[i]] for i in williams_row(n, r)]


LABEL_CANDIDATES = 64  # labellings a cycle chooses its own from
_LABELS: dict[int, tuple[list[list[int]], Counter]] = {}  # n: ([labelling of cycle 0, 1, ...], Counter of the (two ahead, predecessor, variant) triples so far)


def cycle_labels(n, c):
    """The labelling of cycle c over n variants ([symbol's variant index]): of LABEL_CANDIDATES
    seeded shuffles, the one whose rows repeat the fewest (two ahead, predecessor, variant) triples
    of the cycles before it (the lead-in as a variant -1), so what runs two places ahead of each
    ordered pair changes from cycle to cycle (over the six cycles of a time-capped push of eight
    variants, no pair has the same one ahead more than twice). Deterministic: the same for every
    run, computed once per n and kept."""
    labels, seen = _LABELS.setdefault(n, ([], Counter()))
    while len(labels) <= c:
        rng = random.Random(f"kernelgate round_order {n} {len(labels)}")
        best = min(
            (rng.sample(range(n), n) for _ in range(LABEL_CANDIDATES)),
            key=lambda lab: sum(2 * seen[t] + 1 for t in cycle_triples(n, lab)),
        )
        labels.append(best)
        seen.update(cycle_triples(n, best))
    return labels[c]


def cycle_triples(n, label):
    """The (two ahead, predecessor, variant) index triples of one cycle's rows under `label` (-1: the
    lead-in, ahead of a round's first two)."""
    out = []
    for row in range(cycle_length(n)):
        seq = [-1, -1] + [label[i] for i in williams_row(n, row)]
        out += [(seq[i - 2], seq[i - 1], seq[i]) for i in range(3, len(seq))]
    return out


class Sampler:
    """The sampling steps of worker.Worker (a mixin: it uses `torch`, `device`, `opt` (the run's
    options), `nvml`, `mark`, the timing state timing.Timer prepared (timing.Bench), the check for
    tampering (integrity) and the persisting-L2 limit (l2))."""

    def warm(self, b, names, seconds, min_rounds=3, short_seconds=None, short_call_s=0.0):
        """Every variant in turn, for `seconds` (clocks settle as power reaches its cap), at least
        `min_rounds` rounds; for `short_seconds` instead when given and those first rounds took
        under `short_call_s` per call of the variants (a graph's replay counts its launches): a
        variant of microseconds, whose verdict is judged against an absolute floor far above what
        the clock does to it."""
        cuda = self.device == "cuda"
        t_start = time.perf_counter()
        rounds = 0
        while rounds < min_rounds or time.perf_counter() - t_start < seconds:
            for v in names:
                self.mark(v, "warm-up")
                self.sample_one(b, v, rounds)
            if cuda:
                self.torch.cuda.synchronize()
            rounds += 1
            if not cuda and rounds >= min_rounds:
                break
            if rounds == min_rounds and short_seconds is not None:
                calls = sum(self.calls_per_sample(b, v) for v in names)
                if time.perf_counter() - t_start < short_call_s * calls * rounds:
                    seconds = short_seconds
        spent_ms = (time.perf_counter() - t_start) * 1e3
        for v in names:
            b.warmup_ms[v] = b.warmup_ms.get(v, 0.0) + spent_ms

    @staticmethod
    def calls_per_sample(b, v):
        """How many calls of variant v one sample times: a graph's launches, a batch's calls, or 1."""
        if v in b.graphs:
            return b.graphs[v][1]
        return b.batched.get(v, 1)

    def sample_one(self, b, v, r):
        """One sample of variant v in round r (a callable on CUDA, read after the round's sync)."""
        flush = b.flush
        if v in b.graphs:
            g, n = b.graphs[v]
            return self.time_one(g.replay, flush, per=n)
        k = r % b.n_sets
        t0 = time.perf_counter()
        if v in b.batched:
            t = self.time_one(lambda: [b.call(v, k) for _ in range(b.batched[v])], flush, per=b.batched[v])
        else:
            t = self.time_one(lambda: b.call(v, k), flush)
        # The host's time to queue the sample (the lead-in's spin must outlast it).
        if v not in b.spin_ms:
            b.host_ms.setdefault(v, []).append((time.perf_counter() - t0) * 1e3)
        # Python ran: what the harness relies on must be as it was (a graph's replay runs none).
        bad = self.tampered(f"while {v} was timed") or self.l2_left_set(v)
        if bad and v not in b.bad:
            b.bad[v] = bad
        return t

    def lead_in(self, b, v, r):
        """Work queued ahead of a round's first start event. Started on an idle GPU, that event is
        stamped at once and the sample then includes the host's launch of the variant: tens of
        microseconds for one kernel, milliseconds for a variant with much Python around its
        launches (torch's BSR matmul read 3.1 ms falling to 1.25 ms within a burst on the H100,
        docs/notes/paired-ab.md, run 5). `spin` queues a GPU spin that outlasts the host's launch
        of this variant (twice the median of its first host launch times, at least
        LEAD_IN_SPIN_MS, at most LEAD_IN_MAX_MS), so the events time the device; `sample` runs
        the variant once untimed instead (warming caches and TLBs as well, at its cost).

        The spin's length is fixed per variant once its first HOST_MS_SETTLE samples (the
        warm-up's) are in: a spin that followed each sample's own host time varied from sample to
        sample, and so did the clock the kernel met after it (run 6: the pairs of microsecond
        cases spread up to 14 % instead of 0.01 %)."""
        mode = self.opt.get("lead_in", "spin")
        if self.device != "cuda" or mode == "none":
            return
        if mode == "spin":
            self.torch.cuda._sleep(int(self.spin_ms(b, v) * SPIN_CYCLES_PER_MS))
        elif v in b.graphs:
            b.graphs[v][0].replay()
        else:
            b.call(v, r % b.n_sets)

    def spin_ms(self, b, v):
        if v not in b.spin_ms:
            host = b.host_ms.get(v, [])
            if len(host) < HOST_MS_SETTLE:
                return LEAD_IN_SPIN_MS
            b.spin_ms[v] = min(LEAD_IN_MAX_MS, max(LEAD_IN_SPIN_MS, 2 * sorted(host)[len(host) // 2]))
        return b.spin_ms[v]

    def sample_round(self, b, order, r):
        """One sample of each variant in `order`: {variant: (ms, sm clock MHz, power W)}.

        The whole round is queued first; then, for each variant in turn, the host waits until the
        GPU has run its sample and reads the SM clock and the power: what the variant ran at (both
        move over milliseconds, so a reading taken as its successor begins is still its own).
        Until 2026-11-28 they were read as each sample was queued, before the GPU had run any of
        the round, so every variant of a round got the same reading, the clock of the lead-in
        (push run 153: the eight variants of each headline case had the same series)."""
        pending = []
        b.next_round(self.torch, r)
        l2 = getattr(self, "l2", None)
        if b.cold and l2 is not None:
            l2.reset_lines()  # persisting lines back to normal, so the flushes evict them
        if order:
            self.lead_in(b, order[0], r)
        for i, v in enumerate(order):
            self.mark(v, "bench")
            pending.append((v, self.sample_one(b, v, r)))
            # the variant the sample ran behind ("" for the round's first, behind the lead-in): at
            # the power cap a sample reads it (stats.balanced)
            b.samples[v]["after"].append(order[i - 1] if i else "")
        nvml = self.nvml if self.nvml and self.nvml.ok else None
        read = []
        for v, t in pending:
            clk = pw = None
            if nvml is not None:
                if isinstance(t, EventSample):
                    t.wait_end()
                clk, pw = nvml.sm_clock_mhz(), nvml.power_w()
            read.append((v, t, clk, pw))
        if self.device == "cuda":
            self.torch.cuda.synchronize()
        out = {}
        for v, t, clk, pw in read:
            ms = t() if callable(t) else t
            out[v] = (ms, clk, pw)
            s = b.samples[v]
            s["ms"].append(ms)
            if clk is not None:
                s["clk"].append(clk)
                s["pw"].append(pw)
        return out

    def sample_until_stopped(self, b, names):
        """Samples round by round over the group, in round_order's balanced orders; {variant: stop reason}.
        A variant its own rule has stopped keeps being sampled, up to max_samples, while another
        variant of the group samples on: the interleaving puts the variants in the same thermal
        state only while all of them sample. On an H100 (run 83, 2026-11-27) sdpa_default converged
        at its 10th sample while the SM clock still fell from 1920 MHz, the others sampled on into
        the throttled rounds, and its median read 10 % under the paired runs' of the same code."""
        rule = StopRule(min_samples=self.opt["min_samples"], max_samples=self.opt["max_samples"], ci_rel=self.opt["ci_rel"], time_cap_s=self.opt["time_cap_s"])
        stop = dict.fromkeys(names)
        spent = dict.fromkeys(names, 0.0)
        r = 0
        while True:
            for v in names:
                if v in b.bad and stop[v] is None:
                    stop[v] = "ended"  # its error is recorded instead of a timing (bench)
            if all(stop[v] is not None for v in names):
                return stop
            sampling = [v for v in names if v not in b.bad and (stop[v] is None or len(b.samples[v]["ms"]) < rule.max_samples)]
            order = round_order(sampling, r)
            t0 = time.perf_counter()
            got = self.sample_round(b, order, r)
            round_s = time.perf_counter() - t0
            total = sum(ms for ms, _, _ in got.values()) or 1.0
            for v, (ms, _, _) in got.items():
                spent[v] += round_s * ms / total
                if stop[v] is None:
                    s = b.samples[v]
                    kept, _, _, _ = drop_throttled(s["ms"], s["clk"], s["pw"])
                    stop[v] = rule.check(kept, spent[v])
            r += 1

    def time_one(self, fn, flush, per=1):
        """One sample: on CUDA an event pair on the current stream (returns a callable read after the
        round's synchronisation); on CPU the wall clock."""
        if self.device != "cuda":
            perf_counter = prims_of(self).perf_counter
            t0 = perf_counter()
            fn()
            return (perf_counter() - t0) * 1e3 / per
        p = prims_of(self)  # the timer as it was before any kernel module was imported
        if flush is not None:
            flush.zero_()
        start, end = p.event(), p.event()
        p.record(start)
        fn()
        p.record(end)
        return EventSample(p, start, end, per)


class EventSample:
    """One CUDA sample: its event pair, read (called) after the round's synchronisation; wait_end
    blocks the host until the GPU has run it (sample_round's clock reading)."""

    __slots__ = ("p", "start", "end", "per")

    def __init__(self, p, start, end, per):
        self.p, self.start, self.end, self.per = p, start, end, per

    def __call__(self):
        return self.p.elapsed_time(self.start, self.end) / self.per

    def wait_end(self):
        self.p.event_synchronize(self.end)
