"""What the parent tells every worker (worker.py, paired.py): one frozen record, built once from the
command line, handed over the worker's pipe as the dict the worker reads (`as_dict`)."""

import json
import os
from argparse import Namespace
from dataclasses import dataclass, fields
from typing import Any

from .manifest import ManifestError


@dataclass(frozen=True)
class Options:
    device: str
    seeds: list[int]
    timing: bool
    warmup_s: float
    first_warmup_s: float
    min_samples: int
    max_samples: int
    ci_rel: float
    time_cap_s: float
    interleave: bool
    lead_in: str
    fault: str | None
    builds: list[dict[str, Any]]
    builds_file: str | None
    paired_threshold_pct: float
    paired_detect_pct: float
    paired_detect_min_ms: float
    paired_min_change_ms: float
    paired_min_pairs: int
    paired_time_cap_s: float
    paired_max_time_cap_s: float
    paired_same_ci_share: float
    paired_straddle_extra: float
    paired_change_min_blocks: int
    paired_base_seeds: list[int]
    verify_identical: str

    @classmethod
    def from_args(cls, a: Namespace, device: str, fault: str | None, builds: list[dict[str, Any]]) -> "Options":
        return cls(
            device=device,
            seeds=list(range(a.seeds)),
            timing=not a.no_timing,
            warmup_s=a.warmup_s,
            first_warmup_s=a.first_warmup_s,
            min_samples=a.min_samples,
            max_samples=a.max_samples,
            ci_rel=a.ci_rel,
            time_cap_s=a.time_cap_s,
            interleave=not a.no_interleave,
            lead_in=a.lead_in,
            fault=fault,
            builds=builds,
            builds_file=a.builds,
            paired_threshold_pct=a.paired_threshold_pct,
            paired_detect_pct=a.paired_detect_pct,
            paired_detect_min_ms=a.paired_detect_min_ms,
            paired_min_change_ms=a.paired_min_change_ms,
            paired_min_pairs=a.paired_min_pairs,
            paired_time_cap_s=a.paired_time_cap_s,
            paired_max_time_cap_s=a.paired_max_time_cap_s,
            paired_same_ci_share=a.paired_same_ci_share,
            paired_straddle_extra=a.paired_straddle_extra,
            paired_change_min_blocks=a.paired_change_min_blocks,
            paired_base_seeds=list(range(min(a.paired_base_seeds, a.seeds))),
            verify_identical=a.verify_identical,
        )

    def as_dict(self) -> dict[str, Any]:
        """The worker's options: a new dict each call (callers add their own keys to it)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def base(self, base_builds: list[dict[str, Any]], base_builds_file: str | None, base_root: str) -> dict[str, Any]:
        """The base arm's worker: its own kernels checkout and builds, never a planted fault."""
        base = {
            "fault": None,
            "builds": base_builds,
            "builds_file": base_builds_file,
            "import_root": os.path.abspath(base_root),
            "stress": False,
            "stream_checks": False,
        }
        return {**self.as_dict(), **base}


def read_builds(path: str | None) -> list[dict[str, Any]]:
    """--builds FILE: the build stage's records (a list, or an object with 'builds'); [] without."""
    if not path:
        return []
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ManifestError(f"--builds {path}: cannot read build records: {e}") from e
    records = data.get("builds") if isinstance(data, dict) else data
    if not isinstance(records, list):
        raise ManifestError(f"--builds {path}: expected a list of build records (or an object with 'builds'), got {type(data).__name__}")
    for i, r in enumerate(records):
        missing = [k for k in ("kernel", "variant", "status") if not isinstance(r, dict) or k not in r]
        if missing:
            raise ManifestError(f"--builds {path}: record [{i}] lacks {', '.join(missing)}")
    return records
