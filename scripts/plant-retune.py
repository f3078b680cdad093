#!/usr/bin/env python3
"""Plants a re-tune for scripts/gpu-e2e.sh nightly-retune: every case of VARIANT whose tuner timed
candidates in RESULTS (cases[].tuning.candidates_ms, a run that tuned) gets, in the tune cache
(kernels/common/tuning.py's folder), the tuner's runner-up instead of its choice, as if tonight's
machine had tuned afresh and picked another tiling. The tuner's source is unchanged, so both arms
of tonight's pairs launch the planted tiling.

Usage: plant-retune.py RESULTS TUNE_CACHE KERNEL/VARIANT MODULE   (prints what it changed)"""

import json
import os
import sys


def main(results_path, cache, which, module):
    kernel, variant = which.split("/")
    with open(results_path) as f:
        doc = json.load(f)
    runner_up = {}
    for c in doc["cases"]:
        table = (c.get("tuning") or {}).get("candidates_ms") or []
        if c["kernel"] == kernel and c["variant"] == variant and len(table) >= 2:
            runner_up[json.dumps(c["params"], sort_keys=True)] = (table[0], table[1])
    planted = 0
    for name in sorted(os.listdir(cache)):
        path = os.path.join(cache, name)
        try:
            with open(path) as f:
                entry = json.load(f)
            key = json.loads(entry["key"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if key.get("module") != module:
            continue
        pick = runner_up.get(json.dumps(key["case"], sort_keys=True))
        if pick is None or list(entry["config"]) != list(pick[0]["config"]):
            continue
        entry["config"] = list(pick[1]["config"])
        with open(path, "w") as f:
            json.dump(entry, f)
        planted += 1
        print(f"planted re-tune {which} {key['case']}: {pick[0]['config']} ({pick[0]['ms']:.3f} ms) -> {pick[1]['config']} ({pick[1]['ms']:.3f} ms)")
    print(f"planted {planted} re-tune(s) of {len(runner_up)} tuned case(s) in {cache}")
    return 0 if planted else 1


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
