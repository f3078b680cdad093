"""The results document the harness writes (kernelgate/results@1): what goes in it, in which
order, and its writing after every case, each write checked against the schema first
(validation.py). The lanes' threads (lanes.py)
add to it under its lock."""

import os
import platform
import shlex
import subprocess
import sys
import threading
import time
from typing import Any

from . import HARNESS_VERSION, lanes, validation
from .progress import PREFIX, now_iso, progress_line, say
from .results import SCHEMA_ID, case_diagnostics, throughput, write_atomic


class Document:
    def __init__(self, out: str, run: dict[str, Any], timing: bool, started: float) -> None:
        self.lock = threading.RLock()
        self.out = out
        self.timing = timing
        self.several = False  # several lanes: the records are put back in case order (place)
        self.order: dict[int, tuple[int, tuple[int, int], int]] = {}  # id() of each case and diagnostic -> its place
        self.seq = 0
        self.phase = 0  # 0 before the cases, 1 while they run, 2 after
        self.stage_s: dict[str, float] = {}
        self.started = started
        self.sha256: str | None = None  # of the bytes of the last write to out (digest_line)
        # The schema's check, compiled once; without fastjsonschema, said once here, and the last
        # line says the results were written unvalidated (validated_by).
        self.check, why = validation.validator()
        self.validated_by = f"validated by {why} against {validation.SCHEMA_NAME}" if self.check else "not validated: no JSON-schema validator"
        if self.check is None:
            say(why)
        self.doc: dict[str, Any] = {
            "schema": SCHEMA_ID,
            "run": run,
            "environment": {"gpu": {"name": "unknown"}},
            "diagnostics": [],
            "kernels": [],
            "cases": [],
        }

    def place(self, item: dict[str, Any]) -> None:
        """Where a case or diagnostic goes in the document: before the cases, with the case the
        thread is running (in case order), or after them; in the order added within each."""
        self.seq += 1
        case = lanes.current_case() if self.phase == 1 else None
        self.order[id(item)] = (self.phase, case or (0, 0), self.seq)

    def write(self, final: bool = False) -> None:
        with self.lock:
            self._write(final)

    def _write(self, final: bool) -> None:
        doc = self.doc
        if self.several:
            for key in ("cases", "diagnostics"):
                doc[key].sort(key=lambda x: self.order.get(id(x), (0, (0, 0), 0)))
        doc["run"]["stage_seconds"] = {k: round(v, 3) for k, v in self.stage_s.items()}
        if final:
            doc["run"]["finished_at"] = now_iso()
            doc["run"]["duration_s"] = round(time.time() - self.started, 3)
        bad = validation.problem(self.out, doc, self.check) if self.check else None
        if bad:
            # The last valid document stays at out; this one is kept for the bug report.
            invalid = f"{self.out}.invalid.json"
            write_atomic(invalid, doc)
            raise SystemExit(f"{PREFIX} results do not match {validation.SCHEMA_NAME}, written to {invalid} instead: {bad}")
        self.sha256 = write_atomic(self.out, doc)

    def digest_line(self) -> str:
        """The harness's last stdout line: the sha256 of the bytes its last write put at out. The
        action checks the file against it before judging (src/measure/harness.ts): a process the
        kernels started, running as the same user, could rewrite the file after this write."""
        return f"{PREFIX} results sha256 {self.sha256} {self.out}"

    def diag(self, level: str, code: str, message: str, **extra: Any) -> None:
        d = {"level": level, "code": code, "message": message, "source": "harness", **extra}
        with self.lock:
            self.place(d)
            self.doc["diagnostics"].append(d)

    def add_stage_seconds(self, phase_s: dict[str, float]) -> None:
        """Adds a case's phase seconds to run.stage_seconds (summed over the lanes, under the lock:
        two lanes' read-add-write could lose one's share)."""
        with self.lock:
            for phase, seconds in phase_s.items():
                self.stage_s[phase] = self.stage_s.get(phase, 0.0) + seconds

    def add_case(self, m: Any, case: Any, variant: str, rec: dict[str, Any], device: dict[str, Any] | None = None) -> None:
        with self.lock:
            self._add_case(m, case, variant, rec, device)

    def _add_case(self, m: Any, case: Any, variant: str, rec: dict[str, Any], device: dict[str, Any] | None) -> None:
        result = {"kernel": m.name, "variant": variant, "case": case.id, "params": case.params, "status": rec["status"]}
        for k in ("reason", "correctness", "timing", "paired", "identical", "tuning", "work", "error"):
            if k in rec:
                result[k] = rec[k]
        if result["status"] == "ok" and "timing" not in result and "identical" not in result and self.timing:
            result["status"] = "error"
            result["error"] = {"kind": "no-timing", "message": "verified but not timed"}
        if device:
            result["device"] = dict(device)
        tp = throughput(result)
        if tp:
            result["throughput"] = tp
        for d in case_diagnostics(result):
            self.place(d)
            self.doc["diagnostics"].append(d)
        self.place(result)
        self.doc["cases"].append(result)
        say(progress_line(result))


def run_info(run_id: str | None) -> dict[str, Any]:
    """The document's `run` as it starts: when, which harness, the command, the host, the commit."""
    command = " ".join(["python -m kernelgate_harness", *(shlex.quote(a) for a in sys.argv[1:])])
    run = {"started_at": now_iso(), "harness": HARNESS_VERSION, "command": command, "host": platform.node()}
    run_id = run_id or os.environ.get("GITHUB_RUN_ID")
    if run_id:
        run["id"] = run_id
    sha = _git("rev-parse", "HEAD")
    if sha:
        run["git_sha"] = sha
    ref = os.environ.get("GITHUB_REF") or _git("rev-parse", "--abbrev-ref", "HEAD")
    if ref:
        run["git_ref"] = ref
    return run


def _git(*argv: str) -> str | None:
    try:
        out = subprocess.run(["git", *argv], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None
