"""The harness's progress output: one `[kernelgate] ` line per event on stdout (the action streams
them into its log, src/measure/harness.ts), the lane's label first in a lane's thread."""

import datetime
from typing import Any

from . import lanes
from .paired import interval_text

PREFIX = "[kernelgate]"


def say(line: str) -> None:
    print(f"{PREFIX} {lanes.prefix()}{line}", flush=True)


def now_iso() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def progress_line(c: dict[str, Any]) -> str:
    head = f"{c['kernel']}/{c['variant']} {c['case']}"
    st = c["status"]
    if st == "skipped":
        return f"{head} SKIP {c.get('reason', '')}"
    if st == "timeout":
        return f"{head} TIMEOUT {c.get('reason', '')}"
    if st == "error":
        e = c.get("error", {})
        return f"{head} ERROR {e.get('kind', '')}: {e.get('message', '')}"
    corr = c.get("correctness", {})
    rel = corr.get("rel_l2")
    verdict = f"{corr.get('status', '?')} rel_l2={'n/a' if rel is None else f'{rel:.1e}'}"
    if st == "fail":
        return f"{head} {verdict} {corr.get('message', '')}"
    t = c.get("timing")
    if not t:
        same = c.get("identical")
        if not same:
            return f"{head} {verdict}"
        how = ", verified on the first seed only" if same.get("verified") == "first_seed" else ""
        return f"{head} {verdict} | not timed: {same['reason']}{how}"
    tp = c.get("throughput") or {}
    rate = f" {tp['tflops']:.4g} TFLOPS" if tp.get("tflops") else (f" {tp['gbps']:.0f} GB/s" if tp.get("gbps") else "")
    line = f"{head} {verdict} | {t['median_ms']:.3f} ms{rate} n={t['n_samples']} {t['stop_reason']}"
    p = c.get("paired")
    if p and p.get("median_ratio") is not None:
        interval = interval_text(p["median_ratio"], p["ci_lo"], p["ci_hi"])
        line += f" | vs base {interval} {p['n_pairs']} pairs {len(p['log_ratios'])} blocks {p['stop_reason']}"
        again = p.get("confirm")
        if again and again.get("ci_lo") is not None:
            line += f" | again {interval_text(again['median_ratio'], again['ci_lo'], again['ci_hi'])}"
        elif again:
            line += " | again: not measured"
    elif p:
        line += f" | base {p['base_status']}: not paired"
    return line
