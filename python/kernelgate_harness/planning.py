"""Case planning: which kernels, cases and variants this run measures (--only, --variants, --ci,
--cases, --case-params), and the warning for a case list that names cases no manifest has."""

from argparse import Namespace
from typing import Any

from .manifest import ManifestError, format_value, matches


def split_list(value: str | None) -> list[str] | None:
    """A comma-separated option as a list, or None when it names nothing."""
    return [x for x in (value or "").split(",") if x] or None


def read_cases(path: str | None) -> set[str] | None:
    """--cases FILE: the kernel/case ids to run, one a line ('#' starts a comment), or None."""
    if not path:
        return None
    try:
        with open(path) as f:
            lines = [line.split("#", 1)[0].strip() for line in f]
    except OSError as e:
        raise ManifestError(f"--cases {path}: cannot read the case list: {e}") from e
    bad = [x for x in lines if x and "/" not in x]
    if bad:
        raise ManifestError(f"--cases {path}: each line must be kernel/case, got {bad[0]!r}")
    return {x for x in lines if x}


class CasePlan:
    def __init__(self, args: Namespace) -> None:
        self.ci = args.ci
        self.case_params = args.case_params
        self.cases_file = args.cases
        self.variant_filter = split_list(args.variants)
        self.selected = read_cases(args.cases)
        self.selected_seen: set[str] = set()

    def cases_of(self, m: Any) -> list[Any]:
        cases = m.ci_cases if self.ci else m.cases
        if self.selected is not None:
            # --cases: a shard's list (kernelgate run --shard i/n); ids are kernel/case.
            cases = [c for c in cases if f"{m.name}/{c.id}" in self.selected]
            self.selected_seen.update(f"{m.name}/{c.id}" for c in cases)
        if not self.case_params:
            return cases
        want = dict(kv.partition("=")[::2] for kv in self.case_params.split(","))
        return [c for c in cases if all(k in c.params and format_value(c.params[k]) == v for k, v in want.items())]

    @staticmethod
    def variants_of(m: Any, case: Any, variant_filter: list[str] | None) -> list[dict[str, Any]]:
        return [v for v in m.variants if (not variant_filter or v["name"] in variant_filter) and matches(case.params, v.get("only"))]

    def unknown(self) -> tuple[str, str] | None:
        """(message, fix) for the cases --cases names that no selected manifest has, or None."""
        if self.selected is None:
            return None
        unknown = sorted(self.selected - self.selected_seen)
        if not unknown:
            return None
        more = f" and {len(unknown) - 6} more" if len(unknown) > 6 else ""
        message = f"--cases {self.cases_file} names {len(unknown)} case(s) no selected manifest has: " + ", ".join(unknown[:6]) + more
        fix = (
            "the case list and the manifests disagree: a shard's split was made from other manifests, or a case id is spelt differently "
            "(python/kernelgate_harness/manifest.py case_id)"
        )
        return message, fix
