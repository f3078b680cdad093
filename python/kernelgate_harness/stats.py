"""Sample statistics for the timing loop: quartiles, a distribution-free confidence interval of the
median, and the adaptive stop rule (at least `min_samples`, then stop once the median is pinned)."""

import math
from dataclasses import dataclass

# 95 % two-sided normal quantile, used for the order-statistic interval of the median.
Z95 = 1.959964


def quantile(sorted_xs, q):
    """Linear-interpolated quantile of already sorted values (numpy's default method)."""
    if not sorted_xs:
        raise ValueError("quantile of no samples")
    pos = (len(sorted_xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def median_ci(sorted_xs):
    """95 % interval of the median from order statistics (no normality assumed):
    ranks n/2 ± z·√n/2, clamped to the sample. Returns (low, high)."""
    n = len(sorted_xs)
    half_rank = Z95 * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half_rank) - 1)
    hi = min(n - 1, math.ceil(n / 2 + half_rank) - 1)
    return sorted_xs[lo], sorted_xs[hi]


def median_ci_rel(xs):
    """Half-width of the median's 95 % interval, relative to the median."""
    s = sorted(xs)
    med = quantile(s, 0.5)
    lo, hi = median_ci(s)
    return (hi - lo) / 2 / med if med > 0 else math.inf


@dataclass
class StopRule:
    """When to stop sampling one variant: never before `min_samples`; then when the median's
    CI half-width is at most `ci_rel` (converged), or at `max_samples`, or past `time_cap_s`."""

    min_samples: int = 10
    max_samples: int = 300
    ci_rel: float = 0.005
    time_cap_s: float = 2.0

    def check(self, samples_ms, spent_s):
        """None while sampling should go on, else the schema's stop_reason."""
        n = len(samples_ms)
        if n >= self.min_samples and median_ci_rel(samples_ms) <= self.ci_rel:
            return "converged"
        if n >= self.max_samples:
            return "max_samples"
        if spent_s >= self.time_cap_s and n >= self.min_samples:
            return "time_cap"
        # A kernel so slow that even the minimum does not fit twice the cap stops with what it has.
        if spent_s >= 2 * self.time_cap_s and n >= 3:
            return "time_cap"
        return None


def summarize(samples_ms):
    """The schema's summary fields of one variant's kept samples."""
    s = sorted(samples_ms)
    n = len(s)
    mean = sum(s) / n
    var = sum((x - mean) ** 2 for x in s) / (n - 1) if n > 1 else 0.0
    return {
        "median_ms": quantile(s, 0.5),
        "q1_ms": quantile(s, 0.25),
        "q3_ms": quantile(s, 0.75),
        "min_ms": s[0],
        "mean_ms": mean,
        "rel_std": math.sqrt(var) / mean if mean > 0 else 0.0,
        "median_ci_rel": median_ci_rel(s) if n >= 2 else 0.0,
        "n_samples": n,
    }


# A sample taken at an SM clock under this share of the usual (median) clock was throttled.
THROTTLED_BELOW = 0.75


def unthrottled(n_samples, clocks_mhz, threshold=THROTTLED_BELOW):
    """The indices of the samples drop_throttled keeps: those taken at an SM clock of at least
    `threshold` of the usual (median) clock; every one without a clock per sample."""
    if not clocks_mhz or len(clocks_mhz) != n_samples:
        return list(range(n_samples))
    usual = quantile(sorted(clocks_mhz), 0.5)
    return [i for i, c in enumerate(clocks_mhz) if c >= threshold * usual]


def drop_throttled(samples_ms, clocks_mhz, power_w, threshold=THROTTLED_BELOW):
    """Discard samples taken at an SM clock under `threshold` of the usual (median) clock, as
    nvbench does. Returns (samples, clocks, power, n_discarded); no clocks means nothing dropped."""
    if not clocks_mhz or len(clocks_mhz) != len(samples_ms):
        return samples_ms, clocks_mhz, power_w, 0
    keep = unthrottled(len(samples_ms), clocks_mhz, threshold)
    pick = lambda xs: [xs[i] for i in keep] if xs else xs  # noqa: E731
    return pick(samples_ms), pick(clocks_mhz), pick(power_w), len(samples_ms) - len(keep)


def balanced(samples_ms, after, keep=None):
    """(ms, groups): the mean over the variants a sample followed (`after`, one per sample, "" for
    the round's lead-in) of the median of the samples behind each, over the indices `keep` (all
    when None); None where the samples followed fewer than two. At the power cap a sample reads
    what ran in the 100 ms before it (H200, 2026-11-29: fp16 attention B16 H96 S4096 D128 18.95
    ms after an idle GPU, 23.2 ms after cuBLAS at the cap), so the samples of a case whose
    variants differ in power come in modes, and their median falls between them wherever the
    ranks put it: on five H200 pushes SDPA's default over ours read 0.997-1.027 by the medians and
    1.040-1.043 by this estimate. The round orders' Williams design puts each variant behind each
    other one equally often; weighing every predecessor once keeps that balance where the stop
    rules end a cycle early, and a median per predecessor keeps one bad sample from moving it."""
    idx = range(len(samples_ms)) if keep is None else keep
    groups = {}
    for i in idx:
        if i < len(after):
            groups.setdefault(after[i], []).append(samples_ms[i])
    if len(groups) < 2:
        return None
    return sum(quantile(sorted(g), 0.5) for g in groups.values()) / len(groups), len(groups)


# 99 % two-sided normal quantile: the paired stop rule decides at this confidence.
Z99 = 2.575829


def median_ci_at(sorted_xs, z):
    """Like median_ci, at the two-sided normal quantile z."""
    n = len(sorted_xs)
    half_rank = z * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half_rank) - 1)
    hi = min(n - 1, math.ceil(n / 2 + half_rank) - 1)
    return sorted_xs[lo], sorted_xs[hi]


def paired_summary(log_ratios, z=Z99):
    """(median, low, high) of the log ratios ln(head/base), the interval from order statistics."""
    s = sorted(log_ratios)
    lo, hi = median_ci_at(s, z)
    return quantile(s, 0.5), lo, hi


@dataclass
class PairedStopRule:
    """When to stop sampling pairs of one variant: never before `min_pairs`; then as soon as the
    median log ratio's interval lies on one side of each of ±threshold (decided: SLOWER or FASTER
    beyond it; SAME inside it once the interval is also narrower than `same_ci_share` of the
    threshold), else at `max_pairs`, or past the time cap. The cap follows the case's duration: at
    least `cap_blocks` blocks' worth of time, within [time_cap_s, max_time_cap_s] (`min_pairs`,
    `max_pairs` and the cap all count ABBA blocks, two pairs each: the log ratios checked). A variant whose
    interval still straddles +threshold or -threshold at its cap (it would be AMBIGUOUS) goes on
    for up to `straddle_extra` caps more, until its interval clears the threshold or lies inside
    it; variants that are clear at the cap stop there. A decision beyond the threshold (SLOWER,
    FASTER) also waits for `change_min_blocks` blocks."""

    threshold_pct: float = 1.0
    min_pairs: int = 6
    max_pairs: int = 2000
    time_cap_s: float = 3.0
    max_time_cap_s: float = 10.0
    # 30 blocks (60 pairs): in run 21 on the H100 (docs/notes/paired-ab.md) the 21 variants that
    # stopped at their cap, all B16 H96 S4096 attention of 11-39 ms, spent 86 s of the run's 169 s
    # of pairs at the 40 blocks then the rule; their intervals were inside ±1 % (SAME) and only
    # wider than the SAME share, so 30 blocks cost a wider interval (√(40/30): about 1.15x) on
    # verdicts already decided, not a verdict.
    cap_blocks: int = 30
    # A SAME decision also waits until the interval's half-width is at most this share of the
    # threshold (0.5 of ±1 %: ±0.5 %), so a variant that changed nothing says so to within half
    # the change it is judged against, its minimum detectable change. SLOWER and FASTER stop as
    # soon as the interval clears the threshold. 0.4 (runs 8-26) held the median half-width of
    # the cases >= 1 ms at 0.36-0.39 %; replayed on the recorded blocks of runs 16-26, 0.5 stops
    # 12-28 s of pairs earlier per run at a median of 0.43-0.46 % (docs/notes/paired-ab.md); runs
    # 27-31 on the H100 read 0.46-0.48 %.
    same_ci_share: float = 0.5
    # The A/A runs on the H100 (docs/notes/paired-ab.md, runs 8-11) ended 1-3 % of the cases
    # AMBIGUOUS, nearly all of them large attention cases at their 3 s cap with the interval across
    # ±1 %; more caps for those few cost seconds, where a longer cap for all would cost minutes.
    # Two more (three caps in all): with one, runs 24 and 26 on a noisier H100 still ended 3 of
    # 216 AMBIGUOUS each, all references of 19-39 ms (sdpa_flash, sdpa_efficient): wide intervals
    # of pairs spread 1.5-3.5 %, and one offset between the processes (docs/notes/paired-ab.md).
    # With two (runs 27-31): 0-3 of 216.
    straddle_extra: float = 2.0
    # SLOWER or FASTER, the verdicts that fail or praise a pull request, wait for at least this many
    # blocks: in an A/A run on the H100 (run 21) the six blocks of a reference's first look all
    # read +2.4 … +6.9 % on identical code, about a second of the run, and it stopped SLOWER there.
    # With twice the minimum, a disturbance that short no longer decides alone; a real change
    # still decides, a few blocks later.
    change_min_blocks: int = 12

    def threshold(self):
        return math.log1p(self.threshold_pct / 100)

    def cap_s(self, n_blocks, spent_s):
        block_s = spent_s / n_blocks if n_blocks else 0.0
        return min(self.max_time_cap_s, max(self.time_cap_s, self.cap_blocks * block_s))

    def check(self, log_ratios, spent_s, threshold=None, detect=None, settle_detect=True):
        """None while sampling should go on, else decided / max_pairs / time_cap. `detect` (a log
        ratio under the threshold; the case's detection threshold, --paired-detect-pct) lets an
        interval wholly beyond ±detect decide SLOWER or FASTER: the time follows the case, and a
        change between detect and the threshold is caught once the interval is narrow enough to
        show it (the judge asks a second pair of processes to confirm such a verdict). An interval
        across ±detect is not decided SAME before the cap, unless
        `settle_detect` is off (the references: the A/A control, whose code a pull request does not
        change, needs only the threshold)."""
        n = len(log_ratios)
        straddles = False
        if n >= self.min_pairs:
            t = self.threshold() if threshold is None else threshold
            d = t if detect is None else min(detect, t)
            _, lo, hi = paired_summary(log_ratios)
            if (lo >= d or hi <= -d) and n >= self.change_min_blocks:
                return "decided"
            # With a detection threshold, SAME also waits until the interval is off ±detect: an
            # interval across +0.5 % can neither show a 1 % change nor rule one out (a planted 1 %
            # on an H100, 2026-11-26: +0.8 % [+0.1, +1.0] stopped SAME at half-width 0.49 % after
            # 0.6 s of pairs). It samples on to its cap (not across it, as a straddled threshold
            # does: an interval inside the threshold is SAME at the cap whatever it shows of detect).
            across_detect = settle_detect and d < t and (lo < d < hi or lo < -d < hi)
            if -t <= lo and hi <= t and (hi - lo) / 2 <= self.same_ci_share * t and not across_detect:
                return "decided"
            straddles = lo < t < hi or lo < -t < hi
        if n >= self.max_pairs:
            return "max_pairs"
        if n >= self.min_pairs:
            cap = self.cap_s(n, spent_s)
            if spent_s >= cap and (not straddles or spent_s >= cap * (1 + self.straddle_extra)):
                return "time_cap"
        if n >= 3 and spent_s >= 2 * self.max_time_cap_s:
            return "time_cap"
        return None
