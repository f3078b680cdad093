"""`python -m kernelgate_harness`: runs every selected kernel's cases in a worker process per kernel,
prints one progress line per case, and writes the results document after every case and at the end.

The parent never touches the GPU: a hung case is killed at its timeout and a crashed worker is
restarted, so one bad kernel fails its own cases and the others still run and are written."""

import argparse
import datetime
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import HARNESS_VERSION, faults, interpreter, lanes, tails
from .manifest import ManifestError, discover, format_value, load_manifest, matches
from .paired import IDENTICAL_REASON, ORDER, PairedCase, attempt, confirm_movers, interval_text, untimed
from .results import (
    SCHEMA_ID,
    add_ceiling_percentages,
    case_diagnostics,
    ceilings_from,
    kernel_info,
    run_selection,
    schema_errors,
    throughput,
    write_atomic,
)
from .workers import EXIT_CONTEXT_LOST, WORKER_START_TIMEOUT_S, WorkerDied, WorkerHandle, WorkerTimeout, exit_description

PREFIX = "[kernelgate]"
# The per-case timeout covers set-up, verification and timing of one variant; a case runs all its
# variants in one worker job, so its deadline is this per-variant allowance times their number.


def say(line):
    print(f"{PREFIX} {lanes.prefix()}{line}", flush=True)


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


class Harness:
    # The lanes' threads (lanes.py) add to the document under this lock; one harness a process.
    lock = threading.RLock()
    order = None
    seq = 0
    phase = 0  # 0 before the cases, 1 while they run, 2 after

    def __init__(self, args):
        self.args = args
        self.order = {}  # id() of each case and diagnostic -> its place (lanes.py: case order)
        self.fault = args.fault if args.fault is not None else os.environ.get("KERNELGATE_FAULT")
        faults.parse(self.fault)
        self.device = args.device if args.device != "auto" else self._detect_device()
        self.builds = self._read_builds(args.builds)
        self.started = time.time()
        self.doc = {
            "schema": SCHEMA_ID,
            "run": self._run_info(),
            "environment": {"gpu": {"name": "unknown"}},
            "diagnostics": [],
            "kernels": [],
            "cases": [],
        }
        if args.builds:
            self.doc["builds"] = self.builds
        self.stage_s = {}
        self.base_manifests = self._base_manifests()
        self.selected = self._read_cases(args.cases)
        self.doc["run"]["selection"] = run_selection(args, self.selected)
        self.selected_seen = set()
        self.base_builds = self._read_builds(args.base_builds) if args.base_root else []
        # --identical: (kernel, variant) pairs the same in base and head, verified but not timed.
        self.identical = {tuple(n.split(".", 1)) for n in (args.identical or "").split(",") if n}
        # --gpus: one lane per chosen GPU (lanes.py); [] is one lane without a device (the CPU).
        self.visible = lanes.visible_devices(self.device)
        self.gpus = lanes.choose(args.gpus, self.visible)
        self.balance = lanes.read_balance(args.balance)
        self.first_device = None  # cases[].device of the first lane's GPU, from the environment probe

    def _base_manifests(self):
        """The base revision's manifests by name (paired runs), or None when not paired."""
        a = self.args
        if not a.base_root:
            return None
        kernels = a.base_kernels or os.path.join(a.base_root, os.path.relpath(os.path.abspath(a.kernels), os.getcwd()))
        if not os.path.isdir(kernels):
            raise ManifestError(f"--base-root {a.base_root}: the base revision has no kernels folder {kernels}")
        try:
            return {m.name: m for m in discover(kernels)}
        except ManifestError as e:
            # The base revision's manifests are not this run's to fix: time the head alone.
            why = f"the base revision's kernels cannot be read ({e}): every case is timed on the head alone and judged against the stored baseline"
            self.diag("warning", "paired.base_unreadable", why)
            say(f"paired A/B off: the base revision's kernels cannot be read: {e}")
            return {}

    @staticmethod
    def _read_cases(path):
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

    @staticmethod
    def _detect_device():
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    @staticmethod
    def _read_builds(path):
        if not path:
            return []
        import json

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

    def _run_info(self):
        command = " ".join(["python -m kernelgate_harness", *(shlex.quote(a) for a in sys.argv[1:])])
        run = {"started_at": now_iso(), "harness": HARNESS_VERSION, "command": command, "host": platform.node()}
        run_id = self.args.run_id or os.environ.get("GITHUB_RUN_ID")
        if run_id:
            run["id"] = run_id
        sha = self._git("rev-parse", "HEAD")
        if sha:
            run["git_sha"] = sha
        ref = os.environ.get("GITHUB_REF") or self._git("rev-parse", "--abbrev-ref", "HEAD")
        if ref:
            run["git_ref"] = ref
        return run

    @staticmethod
    def _git(*argv):
        try:
            out = subprocess.run(["git", *argv], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None

    def options(self):
        a = self.args
        return {
            "device": self.device,
            "seeds": list(range(a.seeds)),
            "timing": not a.no_timing,
            "warmup_s": a.warmup_s,
            "first_warmup_s": a.first_warmup_s,
            "min_samples": a.min_samples,
            "max_samples": a.max_samples,
            "ci_rel": a.ci_rel,
            "time_cap_s": a.time_cap_s,
            "interleave": not a.no_interleave,
            "lead_in": a.lead_in,
            "fault": self.fault,
            "builds": self.builds,
            "builds_file": a.builds,
            "paired_threshold_pct": a.paired_threshold_pct,
            "paired_detect_pct": a.paired_detect_pct,
            "paired_detect_min_ms": a.paired_detect_min_ms,
            "paired_min_change_ms": a.paired_min_change_ms,
            "paired_min_pairs": a.paired_min_pairs,
            "paired_time_cap_s": a.paired_time_cap_s,
            "paired_max_time_cap_s": a.paired_max_time_cap_s,
            "paired_same_ci_share": a.paired_same_ci_share,
            "paired_straddle_extra": a.paired_straddle_extra,
            "paired_change_min_blocks": a.paired_change_min_blocks,
            "paired_base_seeds": list(range(min(a.paired_base_seeds, a.seeds))),
        }

    def base_options(self):
        """The base arm's worker: its own kernels checkout and builds, never a planted fault."""
        base = {
            "fault": None,
            "builds": self.base_builds,
            "builds_file": self.args.base_builds,
            "import_root": os.path.abspath(self.args.base_root),
            "stress": False,
            "stream_checks": False,
        }
        return {**self.options(), **base}

    def place(self, item):
        """Where a case or diagnostic goes in the document: before the cases, with the case the
        thread is running (in case order), or after them; in the order added within each."""
        if self.order is None:
            return
        self.seq += 1
        case = lanes.current_case() if self.phase == 1 else None
        self.order[id(item)] = (self.phase, case or (0, 0), self.seq)

    def write(self, final=False):
        with self.lock:
            self._write(final)

    def _write(self, final):
        doc = self.doc
        if len(self.gpus) > 1:
            for key in ("cases", "diagnostics"):
                doc[key].sort(key=lambda x: self.order.get(id(x), (0, (0, 0), 0)))
        doc["run"]["stage_seconds"] = {k: round(v, 3) for k, v in self.stage_s.items()}
        if final:
            doc["run"]["finished_at"] = now_iso()
            doc["run"]["duration_s"] = round(time.time() - self.started, 3)
            errors = schema_errors(doc)
            if errors:
                bad = f"{self.args.out}.invalid.json"
                write_atomic(bad, doc)
                raise SystemExit(f"{PREFIX} results do not match schema/results.schema.json, written to {bad} instead:\n  " + "\n  ".join(errors[:20]))
            if errors is None:
                say("jsonschema not installed: results written unvalidated (the TypeScript side validates them)")
        write_atomic(self.args.out, doc)

    # -- running --------------------------------------------------------------------------------

    def run(self):
        manifests = discover(self.args.kernels, self._list(self.args.only))
        variant_filter = self._list(self.args.variants)
        say(f"harness {HARNESS_VERSION}: {len(manifests)} kernels on {self.device}" + (f", fault planted: {self.fault}" if self.fault else ""))
        if self.base_manifests is not None:
            a = self.args
            base = {"root": os.path.abspath(a.base_root), "threshold_pct": a.paired_threshold_pct, "order": ORDER}
            if a.base_sha:
                base["git_sha"] = a.base_sha
            if a.base_ref:
                base["git_ref"] = a.base_ref
            self.doc["run"]["paired_base"] = base
            sha = f" ({a.base_sha[:12]})" if a.base_sha else ""
            say(f"paired A/B against the base revision in {a.base_root}{sha}: {ORDER} rounds, threshold ±{a.paired_threshold_pct:g} %")
        t0 = time.time()
        # Lanes for several GPUs, or for one that is not the first visible (--gpus 1,).
        several = len(self.gpus) > 1 or (bool(self.gpus) and self.gpus[0] != self.visible[0])
        first_lane = lanes.Lane(0, self.gpus[0], self.device != "cuda") if several else None
        # The environment probe's worker goes on to run the first kernel: one start-up fewer.
        first = self.worker_handle(manifests[0], first_lane)
        self.environment(first)
        self.stage_s["environment"] = time.time() - t0
        self.write()
        self.phase = 1
        if several:
            t0 = time.time()
            units = [[(ci, c, n) for ci, c in enumerate(self.cases_of(m)) if (n := len(self.variants_of(m, c, variant_filter)))] for m in manifests]
            lanes.run(self, manifests, variant_filter, first, self.gpus, self.device != "cuda", units)
            self.stage_s["lanes"] = time.time() - t0
        for i, m in enumerate(manifests if not several else []):
            t0 = time.time()
            self.run_kernel(m, variant_filter, first if i == 0 else WorkerHandle(m, self.options()), mi=i)
            self.stage_s[m.name] = time.time() - t0
        if several:
            # The lanes stopped their workers: each kernel's tails in a worker of their own.
            tails.verify_each(self, manifests, variant_filter, WorkerHandle, say)
        self.phase = 2
        if self.selected is not None:
            unknown = sorted(self.selected - self.selected_seen)
            if unknown:
                more = f" and {len(unknown) - 6} more" if len(unknown) > 6 else ""
                self.diag(
                    "warning",
                    "cases.unknown",
                    f"--cases {self.args.cases} names {len(unknown)} case(s) no selected manifest has: " + ", ".join(unknown[:6]) + more,
                    fix=(
                        "the case list and the manifests disagree: a shard's split was made from other manifests, or a case id is spelt differently "
                        "(python/kernelgate_harness/manifest.py case_id)"
                    ),
                )
        self.finish(manifests)
        self.write(final=True)
        counts = {}
        for c in self.doc["cases"]:
            counts[c["status"]] = counts.get(c["status"], 0) + 1
        done = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        say(f"done in {time.time() - self.started:.1f} s: {done}{tails.summary(self.doc.get('tails'))}; results in {self.args.out}")

    @staticmethod
    def _list(value):
        return [x for x in (value or "").split(",") if x] or None

    def environment(self, handle):
        try:
            reply = handle.request({"op": "env"}, WORKER_START_TIMEOUT_S)
            if reply.get("op") == "env":
                env = reply["env"]
                device = env.pop("device", None)
                if self.visible:
                    # cases[].device of the first lane (or of the one GPU) from the same probe.
                    self.first_device = self.case_device(device, self.gpus[0] if self.gpus else self.visible[0], 0)
                    if self.device == "cuda" and len(self.gpus) > 1 and "gpu" in env:
                        env["gpu"]["count"] = len(self.visible)  # the probe's worker sees its GPU alone
                nvml_error = env.pop("nvml_error", None)
                if nvml_error:
                    why = f"NVML could not be read ({nvml_error}): no SM clock or power per sample, no throttled-sample filter"
                    self.diag("warning", "no-nvml", why, fix="install nvidia-ml-py (pynvml) next to torch")
                self.doc["environment"] = env
            else:
                self.diag("warning", "environment-unknown", f"could not read the environment: {reply['error']['message']}")
        except (WorkerTimeout, WorkerDied) as e:
            self.diag("warning", "environment-unknown", f"the environment probe did not answer ({type(e).__name__})")
        env = self.doc["environment"]
        gpu, torch_version = env["gpu"], env.get("libraries", {}).get("torch", "?")
        say(f"GPU: {gpu.get('name')} ({gpu.get('sku', 'unknown')}), driver {env.get('driver_version', '?')}, torch {torch_version}")
        if self.device == "cpu":
            self.diag("info", "cpu-only", "no GPU: timings are CPU wall clock (Triton kernels under TRITON_INTERPRET=1) and say nothing about GPU speed")

    def diag(self, level, code, message, **extra):
        d = {"level": level, "code": code, "message": message, "source": "harness", **extra}
        with self.lock:
            self.place(d)
            self.doc["diagnostics"].append(d)

    # -- lanes (several GPUs, lanes.py) ---------------------------------------------------------

    def worker_handle(self, m, lane, base=False):
        """A worker for kernel m (or its base revision's) on the lane's GPU."""
        options = self.base_options() if base else self.options()
        if lane is not None:
            options = {**options, "visible_device": lane.name}
        return WorkerHandle(m, options)

    def ask_device(self, handle, lane):
        """cases[].device of the GPU a lane's worker sees (its index as the host numbers it)."""
        name = lane.name if lane is not None else (self.visible[0] if self.visible else None)
        if name is None:
            return None
        try:
            # The environment probe says which GPU the worker sees (environment.py device_facts).
            reply = handle.request({"op": "env"}, WORKER_START_TIMEOUT_S)
        except (WorkerTimeout, WorkerDied) as e:
            say(f"the worker did not say which GPU it sees ({type(e).__name__}): its cases record the device by number only")
            reply = {"op": "fatal"}
        device = reply["env"].get("device") if reply.get("op") == "env" else None
        return self.case_device(device, name, lane.position if lane is not None else 0)

    @staticmethod
    def case_device(device, name, position):
        return {**(device or {"name": "unknown"}), "index": lanes.device_index(name, position)}

    def say_lanes(self, line):
        say(line)

    def add_stage_seconds(self, phase_s):
        """Adds a case's phase seconds to run.stage_seconds (summed over the lanes, under the lock:
        two lanes' read-add-write could lose one's share)."""
        with self.lock:
            for phase, seconds in phase_s.items():
                self.stage_s[phase] = self.stage_s.get(phase, 0.0) + seconds

    def variants_of(self, m, case, variant_filter):
        return [v for v in m.variants if (not variant_filter or v["name"] in variant_filter) and matches(case.params, v.get("only"))]

    def lane_failed(self, m, case, mi, ci, lane, message):
        lanes.set_case((mi, ci))
        device = lane.device if lane is not None else None  # None: no lane took the case
        for v in self.variants_of(m, case, self._list(self.args.variants)):
            self.add_case(m, case, v["name"], {"status": "error", "error": {"kind": "harness", "message": message}}, device=device)

    def cases_of(self, m):
        cases = m.ci_cases if self.args.ci else m.cases
        if self.selected is not None:
            # --cases: a shard's list (kernelgate run --shard i/n); ids are kernel/case.
            cases = [c for c in cases if f"{m.name}/{c.id}" in self.selected]
            self.selected_seen.update(f"{m.name}/{c.id}" for c in cases)
        if not self.args.case_params:
            return cases
        want = dict(kv.partition("=")[::2] for kv in self.args.case_params.split(","))
        return [c for c in cases if all(k in c.params and format_value(c.params[k]) == v for k, v in want.items())]

    def run_kernel(self, m, variant_filter, handle, mi=0):
        """A kernel's cases in one worker (and the base revision's beside it), in the harness's
        order: one GPU without lanes (several GPUs: lanes.py takes them case by case, run_unit)."""
        cases = list(enumerate(self.cases_of(m)))
        names = [v["name"] for v in m.variants if not variant_filter or v["name"] in variant_filter]
        say(f"== {m.name} ({len(names)} variants, {len(cases)} cases) ==")
        if not cases:
            say(f"{m.name}: no {'ci_cases' if self.args.ci else 'cases'} in {m.path}")
        base = self.base_worker(m, None)
        try:
            first = True
            for ci, case in cases:
                lanes.set_case((mi, ci))
                if self.run_unit(m, variant_filter, case, handle, base, self.first_device, first):
                    first = False
                    self.write()
            # The kernel's tails in the same worker, verified only (tails.py).
            tails.verify_kernel(self, m, variant_filter, handle, say)
        finally:
            handle.stop()
            if base is not None:
                base.stop()

    def base_worker(self, m, lane):
        """The base revision's worker for kernel m on the lane's GPU (a paired run), else None."""
        bm = (self.base_manifests or {}).get(m.name)
        if self.base_manifests is not None and bm is None:
            say(f"{m.name}: the base revision has no such kernel: its cases are timed on the head alone")
        return self.worker_handle(bm, lane, base=True) if bm else None

    def run_unit(self, m, variant_filter, case, handle, base, device, first):
        """One case of kernel m with all its variants in these workers, which go on running; its
        records added to the document, naming the device. False when no variant runs on it.
        first: the kernel's first case on this GPU, which gets --first-warmup-s (paired; an
        unpaired worker warms up longer on its own first case, timing.py)."""
        variants = [v["name"] for v in self.variants_of(m, case, variant_filter)]
        if not variants:
            return False
        timeout = self.args.timeout_per_case or m.timeout_s
        if base is not None:
            records = self.run_paired_case(handle, base, m, self.base_manifests[m.name], case, variants, timeout, first)
        else:
            records = self.run_case(handle, m, case, variants, timeout)
        for v in variants:
            self.add_case(m, case, v, records[v], device=device)
        return True

    def run_paired_case(self, head, base, m, bm, case, variants, timeout_s, first):
        """One case head against base (paired.py). A crash, hang or error of either arm costs both
        workers a restart and the case is timed on the head alone, the base's failure named."""
        base_cases = {c.id for c in (bm.ci_cases if self.args.ci else bm.cases)}
        if case.id not in base_cases:
            records = self.run_case(head, m, case, variants, timeout_s)
            for rec in records.values():
                rec["paired"] = untimed("missing", f"the base revision's {bm.path} has no case {case.id}")
            return records
        base_variants = [v["name"] for v in bm.variants if v["name"] in variants and matches(case.params, v.get("only"))]

        # The kernel's first case warms up to steady power; the later ones have no case-wide
        # warm-up, since every variant's burst of pairs starts with its own (paired.BURST_WARM_S):
        # the case-wide 0.5 s took about 20 s of a 350 s A/A run, and its two rounds per arm of
        # every variant still about 10 s of run 21's 324 s.
        warm_s = self.args.first_warmup_s if first else 0.0
        same = self.identical_variants(m, variants, base_variants)
        if same:
            say(f"{m.name} {case.id}: {', '.join(same)}: {IDENTICAL_REASON} in base and head: verified, not timed")
        pc = PairedCase(head, base, case, variants, base_variants, timeout_s, self.options(), warm_s, say, identical=same)
        records, why = attempt(pc)
        if why:
            say(f"{m.name} {case.id}: paired timing stopped ({why}); the case is timed on the head alone")
            records = self.run_case(head, m, case, variants, timeout_s)
            for rec in records.values():
                rec["paired"] = untimed("error", f"paired timing stopped: {why}")
            return records
        self.add_stage_seconds(pc.phase_s)
        say(f"{m.name} {case.id}: {pc.time_line()}")
        if self.args.paired_confirm or self.args.paired_detect_pct > 0:
            # Each variant whose interval cleared the threshold (or, with --paired-detect-pct alone,
            # only its detection threshold), again in fresh worker processes.
            band_only = not self.args.paired_confirm
            spent = confirm_movers(head, base, m.name, case, records, self.options(), timeout_s, say, band_only)
            if spent is not None:
                self.add_stage_seconds({"confirm": spent})
        return records

    def identical_variants(self, m, variants, base_variants):
        """The variants of a paired case named by --identical that the base has for this case too.
        A reference variant is the A/A control of the case's timed candidates: it stays timed while
        one of them is timed, and is left untimed only when none is (nothing to control)."""
        roles = {v["name"]: v.get("role") for v in m.variants}
        named = [v for v in variants if (m.name, v) in self.identical and v in base_variants]
        candidate_timed = any(roles.get(v) != "reference" and v not in named for v in variants)
        return [v for v in named if roles.get(v) != "reference" or not candidate_timed]

    def run_case(self, handle, m, case, variants, timeout_s, timing=True):
        """Records by variant. The variants run together in one worker; when it dies, hangs or
        loses its CUDA context, the variant it was running is not taken for the culprit (GPU
        errors surface late, in whatever ran next): each variant not yet done then runs alone, in
        a fresh worker, the suspects first (suspect_order). The culprit is the first to fail alone the way the
        group failed (died, or hung): the others keep what they did alone, and once it is found
        the rest run together again. A variant that fails alone in another way (a timeout of its
        own while the group had died) keeps that verdict, and the search goes on."""
        records = {}
        pending = list(variants)
        alone = None  # after a group failed: how, and the reason's suffix, while looking for the culprit
        while pending:
            group = pending[:1] if alone else pending
            deadline_s = self.case_deadline_s(timeout_s, len(group))
            try:
                if not (handle.is_alive() and handle.ready):
                    reply = handle.request({"op": "init"}, WORKER_START_TIMEOUT_S)
                    if reply["op"] == "fatal":
                        for v in pending:
                            records[v] = {"status": "error", "error": reply["error"]}
                        return records
                    handle.ready = True
                job = {"op": "case", "params": case.params, "variants": group, "seeds": list(range(self.args.seeds))}
                if not timing:
                    job["timing"] = False  # verified only (the tails, tails.py)
                reply = handle.request(
                    job,
                    deadline_s,
                    stall_s=self.case_deadline_s(timeout_s, 1),
                )
            except (WorkerTimeout, WorkerDied) as e:
                culprit, phase = e.current[0], e.current[1] or "start-up"
                hung = isinstance(e, WorkerTimeout)
                verb = "hung" if hung else f"died ({exit_description(e.exitcode, e.current)})"
                if len(group) > 1:
                    say(f"{m.name} {case.id}: the worker {verb} during {phase} of {culprit or 'the case'}; each variant now runs alone to find the culprit")
                    pending = suspect_order(group, pending, culprit)
                    alone = {"hung": hung, "what": f"the worker had {verb} during {phase} of {culprit or 'the case'}"}
                    continue
                v = group[0]
                where = f"during {phase} of {v}" + (f", run alone (with the case's other variants {alone['what']})" if alone else "")
                if hung:
                    records[v] = {"status": "timeout", "reason": f"no answer within {deadline_s:.0f} s {where}; the worker was killed and restarted"}
                else:
                    kind = "cuda_context" if e.exitcode == EXIT_CONTEXT_LOST else "crash"
                    message = f"the worker process {verb} {where}; it was restarted for the other variants"
                    records[v] = {"status": "error", "error": {"kind": kind, "message": message}}
                pending = pending[1:]
                if alone and alone["hung"] == hung:
                    # Found: the others run together again, in their own order.
                    pending = [x for x in variants if x in pending]
                    if pending:
                        found = f"{v} is the culprit (run alone, the worker {verb} during {phase} of it)"
                        say(f"{m.name} {case.id}: {found}; the other variants run together again")
                    alone = None
                continue
            if reply["op"] == "fatal":
                for v in group:
                    records[v] = {"status": "error", "error": reply["error"]}
            else:
                records.update(reply["records"])
                self.add_stage_seconds(reply["phase_s"])
            pending = [v for v in pending if v not in group]
            if alone:
                # Alone means in a worker of its own: what one suspect leaves behind (a patched
                # module, a stream, the RNG) must not fail the next one and be blamed on it.
                handle.kill()
        if alone:
            message = (
                f"{m.name} {case.id}: {alone['what']} with the case's variants together, and no variant did so run alone: "
                "a fault that shows only next to another variant; each kept what it did alone"
            )
            say(message)
            self.diag("warning", "culprit.not-found", message)
        return records

    def case_deadline_s(self, timeout_s, n_variants):
        """The seconds a worker has to answer a case of n variants: the per-variant timeout for
        each, plus the first warm-up when timing (the harness's own time, not the variants':
        a 3 s warm-up left a 4 s variant 1 s for everything else)."""
        return timeout_s * n_variants + (0.0 if self.args.no_timing else self.args.first_warmup_s)

    def add_case(self, m, case, variant, rec, device=None):
        with self.lock:
            self._add_case(m, case, variant, rec, device)

    def _add_case(self, m, case, variant, rec, device):
        result = {"kernel": m.name, "variant": variant, "case": case.id, "params": case.params, "status": rec["status"]}
        for k in ("reason", "correctness", "timing", "paired", "identical", "tuning", "work", "error"):
            if k in rec:
                result[k] = rec[k]
        if result["status"] == "ok" and "timing" not in result and "identical" not in result and not self.args.no_timing:
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

    def finish(self, manifests):
        self.doc["kernels"] = [kernel_info(m, self.doc["cases"]) for m in manifests]
        env = self.doc["environment"]
        ceilings = ceilings_from(self.doc["cases"])
        if self.device == "cuda" and "copy_gbps" not in ceilings and not self.args.no_timing:
            t0 = time.time()
            ceilings = self.calibrate() or ceilings
            self.stage_s["calibration"] = time.time() - t0
        if ceilings:
            env["ceilings"] = ceilings
            add_ceiling_percentages(self.doc["cases"], ceilings)

    def calibrate(self):
        """The gemm kernel's cases, run quietly, when this run did not select it: every run
        reports its ceilings."""
        path, root = calibration_manifest(self.args.kernels)
        if path is None:
            self.diag("warning", "no-ceilings", f"no {root}: copy and GEMM ceilings not measured")
            return None
        m = load_manifest(path)
        # The action's own gemm kernel is imported from the action's checkout (import_root), not
        # from the repository measured, which has no kernels/gemm of its own.
        shipped = {"import_root": root} if root is not None else {}
        handle = WorkerHandle(m, {**self.options(), "seeds": [0], "fault": None, **shipped})
        cases = []
        try:
            for case in m.cases:
                variants = [v["name"] for v in m.variants if matches(case.params, v.get("only"))]
                records = self.run_case(handle, m, case, variants, m.timeout_s)
                for v, rec in records.items():
                    c = {"kernel": m.name, "variant": v, "case": case.id, "params": case.params, **rec}
                    c["throughput"] = throughput(c)
                    cases.append(c)
        finally:
            handle.stop()
        say("ceilings measured (gemm calibration, not reported as cases)")
        return ceilings_from(cases)


def calibration_manifest(kernels_dir):
    """The calibration kernel's manifest: the repository's own kernels/gemm when it has one, else
    the one kernelgate ships beside this harness (<kernelgate>/kernels/gemm, found as the harness
    is: python/kernelgate_harness/ → <kernelgate>/), so any repository's run measures its ceilings.
    Returns (path, import_root): import_root is kernelgate's root for the shipped one, else None;
    (None, what was looked for) when neither is there."""
    own = os.path.join(kernels_dir, "gemm", "kernel.yml")
    if os.path.exists(own):
        return own, None
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shipped = os.path.join(root, "kernels", "gemm", "kernel.yml")
    if os.path.exists(shipped):
        return shipped, root
    return None, f"{own} nor {shipped}"


def suspect_order(group, pending, culprit):
    """The pending variants of a failed group in the order they run alone: the one it was running
    (or those it was setting up together) first, then those that ran before it, nearest first (a
    GPU fault surfaces in whatever runs after its cause: `poison` broke the process at seed 0 and
    `writes_input`, after it, died), going round the group since the seeds repeat its order."""
    named = [v for v in (culprit or "").split(",") if v in pending]
    order = list(named)
    if named and named[0] in group:
        i = group.index(named[0])
        order += [group[(i - k) % len(group)] for k in range(1, len(group))]
    order += pending
    seen = set()
    return [v for v in order if v in pending and not (v in seen or seen.add(v))]


def progress_line(c):
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
        return f"{head} {verdict} | not timed: {same['reason']}" if same else f"{head} {verdict}"
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


def parse_args(argv):
    description = "Verify and time every kernel under --kernels; write kernelgate/results@1 JSON."
    p = argparse.ArgumentParser(prog="python -m kernelgate_harness", description=description)
    p.add_argument("--kernels", default="kernels", help="folder of kernel folders, each with a kernel.yml (default: kernels)")
    p.add_argument("--out", required=True, help="results file to write (rewritten after every case, validated at the end)")
    p.add_argument("--only", help="comma-separated kernel names to run (default: all)")
    p.add_argument("--variants", help="comma-separated variant names to run (default: all)")
    p.add_argument("--ci", action="store_true", help="run each manifest's ci_cases (tiny shapes) instead of its cases")
    p.add_argument(
        "--no-tails",
        action="store_true",
        help="do not verify each manifest's ci_cases (the tail shapes) on the device after the timed cases (tails.py)",
    )
    p.add_argument("--builds", help="JSON file of BuildRecords from the build stage (library paths of CUDA variants)")
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    p.add_argument("--timeout-per-case", type=float, help="seconds per case and variant, set-up + verification + timing (default: the manifest's timeout_s)")
    p.add_argument("--time-cap-s", type=float, default=2.0, help="most seconds of samples per case and variant (default 2)")
    p.add_argument("--seeds", type=int, default=3, help="random input seeds verified per case (default 3)")
    p.add_argument("--warmup-s", type=float, default=0.5, help="warm-up seconds per case (default 0.5)")
    p.add_argument("--first-warmup-s", type=float, default=3.0, help="warm-up seconds of a kernel's first case, to reach steady power (default 3)")
    p.add_argument("--min-samples", type=int, default=10)
    p.add_argument("--max-samples", type=int, default=300)
    p.add_argument("--ci-rel", type=float, default=0.005, help="stop once the median's 95 %% CI half-width is at most this (default 0.005)")
    p.add_argument("--no-timing", action="store_true", help="verify only")
    p.add_argument("--no-interleave", action="store_true", help=(
        "time each variant on its own (warm-up, then samples) instead of round by round with the case's other "
        "variants"
    ))
    p.add_argument("--lead-in", choices=["spin", "sample", "none"], default="spin", help=(
        "what runs on the GPU just before each round's first timed sample, so that its start event does not wait on the host's launch: a short GPU "
        "spin (default), an untimed sample of the same variant, or nothing"
    ))
    p.add_argument("--tune-cache", help=(
        "folder where the kernels' host-side tuners keep their choices between runs (keyed on the tuner's source, the case and the GPU; "
        "kernels/common/tuning.py); the action passes one inside its build cache. Default: KERNELGATE_TUNE_CACHE, else a temporary folder shared by a "
        "paired run's two arms, else none"
    ))
    p.add_argument("--gpus", default="all", help=(
        "the GPUs to measure on at once, one worker lane each, every case on one GPU (both arms of a paired case too): all visible CUDA devices "
        "(default), a count N (the first N), or positions in the visible list such as 0,1; the CPU is one lane (python/kernelgate_harness/lanes.py)"
    ))
    p.add_argument("--balance", help=(
        "an earlier results document (the stored baseline): with several GPUs, the lanes take the cases from one queue, longest first by their "
        "seconds in it, the ones it did not time by the estimate (variants × the time cap + 0.44 s)"
    ))
    p.add_argument("--cases", help="a file of kernel/case ids, one a line: run only those cases (a shard's list, written by kernelgate run --shard i/n)")
    p.add_argument("--case-params", help="run only cases whose params include these, e.g. dtype=fp16,D=128,causal=false")
    p.add_argument("--fault", help="plant a fault, <kernel>.<variant>:<wrong|slow|nan> (same as KERNELGATE_FAULT)")
    p.add_argument("--run-id", help="label of this run (default: GITHUB_RUN_ID)")
    g = p.add_argument_group("paired A/B", "time every case against a base revision in the same run, pair by pair")
    g.add_argument("--base-root", help="checkout of the base revision: its kernels are timed alternately with these (ABBA)")
    g.add_argument("--base-kernels", help="the base revision's kernels folder (default: the --kernels path inside --base-root)")
    g.add_argument("--base-builds", help="build records of the base revision's CUDA variants (like --builds)")
    g.add_argument("--base-sha", help="the base revision's commit, recorded in the results")
    g.add_argument("--base-ref", help="the base revision's branch, recorded in the results")
    g.add_argument("--paired-threshold-pct", type=float, default=1.0, help=(
        "the change a pair of revisions is judged against; a variant stops sampling once its interval is "
        "clear of ±this (default 1)"
    ))
    g.add_argument("--paired-detect-pct", type=float, default=0.0, help=(
        "detection threshold under --paired-threshold-pct for cases of --paired-detect-min-ms or more: an interval wholly beyond ±this "
        "decides SLOWER or FASTER, and one that clears it but not the threshold is measured again in a fresh pair of worker processes "
        "(default 0: off; the action passes compare.paired.detect_pct)"
    ))
    g.add_argument("--paired-detect-min-ms", type=float, default=1.0, help=(
        "cases whose base median is at least this have the detection threshold (default 1 ms)"
    ))
    g.add_argument("--paired-min-change-ms", type=float, default=0.0008, help=(
        "absolute floor under the threshold, for microsecond cases (default 0.0008 ms: two processes running identical code read up to 0.48 µs apart "
        "on L2-resident cases on the H100)"
    ))
    g.add_argument("--paired-min-pairs", type=int, default=6, help="ABBA blocks (two pairs each) before a variant may stop (default 6)")
    g.add_argument("--paired-time-cap-s", type=float, default=3.0, help=(
        "seconds of pairs per variant before it stops undecided; longer for slow cases (30 blocks' worth, 60 pairs) up "
        "to --paired-max-time-cap-s (default 3)"
    ))
    g.add_argument("--paired-max-time-cap-s", type=float, default=10.0, help="most seconds of pairs per variant (default 10)")
    g.add_argument("--paired-same-ci-share", type=float, default=0.5, help=(
        "a variant inside ±threshold stops (SAME) once its interval's half-width is at most this share of the threshold (default 0.5: ±0.5 %% at a 1 "
        "%% threshold)"
    ))
    g.add_argument("--paired-straddle-extra", type=float, default=2.0, help=(
        "a variant whose interval still straddles ±threshold at its cap goes on for up to this many caps more "
        "(default 2; 0 turns it off)"
    ))
    g.add_argument("--paired-base-seeds", type=int, default=1, help=(
        "input seeds verified on the base revision (default 1: it is the target branch's code, verified with --seeds on its own push; its timed "
        "outputs are still checked)"
    ))
    g.add_argument("--paired-confirm", action="store_true", help=(
        "measure each variant whose interval clears the threshold again, in a fresh pair of worker processes; SLOWER or FASTER "
        "stands only when both say so (off by default: not yet measured on the H100, docs/notes/paired-ab.md)"
    ))
    g.add_argument("--identical", help=(
        "comma-separated kernel.variant names whose build, sources, manifest entry, harness and libraries are identical in base and head "
        "(the action computes this): their cases are verified on the head as always but not timed, and each record says so "
        "(identical.reason); a reference variant stays timed as the A/A control while a candidate of its case is timed"
    ))
    g.add_argument("--paired-change-min-blocks", type=int, default=12, help=(
        "ABBA blocks before a variant may stop SLOWER or FASTER (default 12, twice --paired-min-pairs: a disturbance of a second or so "
        "does not decide alone)"
    ))
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.base_builds and not args.base_root:
        p.error("--base-builds needs --base-root (the base revision's checkout)")
    if args.identical and not args.base_root:
        p.error("--identical needs --base-root (identical means identical in base and head)")
    for name in (args.identical or "").split(","):
        if name and not re.fullmatch(r"[^.,\s]+\.[^.,\s]+", name):
            p.error(f"--identical takes kernel.variant names, got {name!r}")
    if args.paired_detect_pct < 0 or args.paired_detect_min_ms < 0:
        p.error(f"--paired-detect-pct and --paired-detect-min-ms must be 0 or more, got {args.paired_detect_pct:g} and {args.paired_detect_min_ms:g}")
    if args.paired_confirm and not args.base_root:
        p.error("--paired-confirm needs --base-root (it measures again what a paired run measured)")
    if not 0 < args.paired_same_ci_share <= 1:
        p.error(f"--paired-same-ci-share must be in (0, 1], got {args.paired_same_ci_share:g}")
    if args.paired_straddle_extra < 0:
        p.error(f"--paired-straddle-extra must be at least 0, got {args.paired_straddle_extra:g}")
    if args.paired_change_min_blocks < args.paired_min_pairs:
        p.error(f"--paired-change-min-blocks must be at least --paired-min-pairs ({args.paired_min_pairs}), got {args.paired_change_min_blocks}")
    if args.paired_base_seeds < 1:
        p.error(f"--paired-base-seeds must be at least 1, got {args.paired_base_seeds}")
    if args.paired_min_pairs < 5:
        p.error(f"--paired-min-pairs must be at least 5 blocks, got {args.paired_min_pairs}")
    return args


def main(argv=None):
    args = parse_args(argv)
    # The workers inherit this: PyTorch's allocator then grows segments instead of caching
    # fixed-size blocks, which left 29 GiB reserved but unallocated when a 24 GiB check of a large
    # attention case ran out of memory beside the other arm's worker (H100, 2026-11-23).
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    tune_dir = None
    if args.base_root:
        # Both arms run the same tilings when their code is the same: tuned separately, two
        # processes can pick different ones (on the H100 triton_bsr read 0.75x and 1.11x and
        # triton_fa2 3-5 % apart on identical code, docs/notes/paired-ab.md). Triton's own
        # autotuner caches its choice, keyed on the kernel's source; the kernels' host-side
        # tuners remember theirs in KERNELGATE_TUNE_CACHE (kernels/common/tuning.py).
        os.environ.setdefault("TRITON_CACHE_AUTOTUNING", "1")
    if args.tune_cache:
        os.environ.setdefault("TRITON_CACHE_AUTOTUNING", "1")
        os.environ["KERNELGATE_TUNE_CACHE"] = os.path.abspath(args.tune_cache)
    elif args.base_root:
        if not os.environ.get("KERNELGATE_TUNE_CACHE"):
            tune_dir = tempfile.mkdtemp(prefix="kernelgate-tune-")
            os.environ["KERNELGATE_TUNE_CACHE"] = tune_dir
    try:
        interpreter.check()
        Harness(args).run()
    except (ManifestError, faults.FaultSpecError, lanes.GpuSpecError, interpreter.InterpreterSetupError) as e:
        print(f"{PREFIX} error: {e}", file=sys.stderr, flush=True)
        return 2
    finally:
        if tune_dir:
            shutil.rmtree(tune_dir, ignore_errors=True)
    return 0
