#!/usr/bin/env python3
"""Summary of a paired run's pairs (results.json of kernelgate/results@1): per timed variant, the
median ln(head/base) of head-first and of base-first pairs (the position effect), the spread of a
single pair and of an ABBA block, and the paired verdict's ratio and interval.
Usage: scripts/paired-stats.py RESULTS.json..."""

import json
import math
import statistics
import sys


def sd(xs):
    return statistics.stdev(xs) if len(xs) > 1 else float("nan")


def main(paths):
    print(f"{'case':<78} {'pairs':>5} {'head1st':>8} {'base1st':>8} {'sd pair':>8} {'sd blk':>7} {'ratio':>7} {'ci half':>7} stop")
    for path in paths:
        with open(path) as f:
            res = json.load(f)
        print(f"# {path}")
        for c in res["cases"]:
            p = c.get("paired") or {}
            t = c.get("timing") or {}
            bt = p.get("base_timing") or {}
            h, b = t.get("samples_ms") or [], bt.get("samples_ms") or []
            if not h or len(h) != len(b):
                continue
            logs = [math.log(x / y) for x, y in zip(h, b, strict=True)]
            first = [v for i, v in enumerate(logs) if i % 2 == 0]
            second = [v for i, v in enumerate(logs) if i % 2 == 1]
            blocks = p.get("log_ratios") or []
            params = ",".join(f"{k}={v}" for k, v in c["params"].items())
            label = f"{c['kernel']}/{c['variant']} {params}"[:78]
            half = 100 * (p["ci_hi"] - p["ci_lo"]) / 2 if "ci_hi" in p else float("nan")
            position = f"{100 * statistics.median(first):>+7.2f}% {100 * statistics.median(second) if second else float('nan'):>+7.2f}%"
            spread = f"{100 * sd(logs):>7.2f}% {100 * sd(blocks):>6.2f}%"
            print(f"{label:<78} {len(logs):>5} {position} {spread} {p.get('median_ratio', float('nan')):>7.4f} {half:>6.2f}% {p.get('stop_reason')}")


if __name__ == "__main__":
    main(sys.argv[1:])
