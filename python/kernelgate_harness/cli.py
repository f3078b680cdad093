"""`python -m kernelgate_harness`: runs every selected kernel's cases in a worker process per kernel,
prints one progress line per case, and writes the results document after every case and at the end.

The parent never touches the GPU: a hung case is killed at its timeout and a crashed worker is
restarted, so one bad kernel fails its own cases and the others still run and are written.

Its parts: the command line (arguments.py), the options every worker is told (options.py), the
document (document.py), case planning (planning.py), the progress lines (progress.py), the culprit
search (culprit.py), the environment probe (env_probe.py), the lanes (lanes.py), the tails
(tails.py) and the ceilings (calibration.py); `Harness` composes them."""

import os
import shutil
import sys
import tempfile
import time

from . import HARNESS_VERSION, calibration, env_probe, faults, interpreter, lanes, tails
from .ahead import Ahead
from .arguments import parse_args, variant_names
from .culprit import CaseRunner
from .document import Document, run_info
from .manifest import ManifestError, discover
from .options import Options, read_builds
from .paired import ORDER
from .paired_run import PairedRunner
from .planning import CasePlan, split_list
from .progress import PREFIX, say
from .results import add_ceiling_percentages, ceilings_from, kernel_info, run_selection
from .workers import WorkerHandle, settle_exits


def detect_device():
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class Harness:
    def __init__(self, args):
        self.args = args
        self.fault = args.fault if args.fault is not None else os.environ.get("KERNELGATE_FAULT")
        faults.parse(self.fault)
        self.builds = read_builds(args.builds)
        self.manifests = discover(args.kernels, split_list(args.only))
        self.early = env_probe.start_early(self.manifests, args, self.fault, self.builds)  # before torch is imported here
        self.device = args.device if args.device != "auto" else detect_device()
        started = time.time()
        self.document = Document(args.out, run_info(args.run_id), not args.no_timing, started)
        # The lanes' threads (lanes.py) and the tails (tails.py) add to the document under its lock.
        self.lock, self.doc = self.document.lock, self.document.doc
        if args.builds:
            self.doc["builds"] = self.builds
        self.base_manifests = self._base_manifests()
        self.plan = CasePlan(args)
        self.selected = self.plan.selected
        self.doc["run"]["selection"] = run_selection(args, self.selected)
        self.base_builds = read_builds(args.base_builds) if args.base_root else []
        # --ceilings: a stored run's ceilings, used instead of the calibration (calibration.py).
        self.stored_ceilings = calibration.read_ceilings(args.ceilings) if args.ceilings else None
        # --identical: (kernel, variant) pairs the same in base and head, verified but not timed.
        self.identical = variant_names(args.identical)
        # --gpus: one lane per chosen GPU (lanes.py); [] is one lane without a device (the CPU).
        self.visible = lanes.visible_devices(self.device)
        self.gpus = lanes.choose(args.gpus, self.visible)
        self.document.several = len(self.gpus) > 1
        self.balance = lanes.read_balance(args.balance)
        self.first_device = None  # cases[].device of the first lane's GPU, from the environment probe
        self.opts = Options.from_args(args, self.device, self.fault, self.builds)
        self.runner = CaseRunner(args.seeds, not args.no_timing, args.first_warmup_s, self.document)
        self.pairing = PairedRunner(args, self.identical, self.opts, self.runner, self.plan.cases_of)

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


    def options(self):
        return self.opts.as_dict()

    def base_options(self):
        """The base arm's worker: its own kernels checkout and builds, never a planted fault."""
        return self.opts.base(self.base_builds, self.args.base_builds, self.args.base_root)

    def write(self, final=False):
        self.document.write(final)

    def diag(self, level, code, message, **extra):
        self.document.diag(level, code, message, **extra)

    def add_stage_seconds(self, phase_s):
        self.document.add_stage_seconds(phase_s)

    def add_case(self, m, case, variant, rec, device=None):
        self.document.add_case(m, case, variant, rec, device)

    # -- running --------------------------------------------------------------------------------

    def run(self):
        manifests = self.manifests
        variant_filter = self.plan.variant_filter
        say(f"harness {HARNESS_VERSION}: {len(manifests)} kernels on {self.device}" + (f", fault planted: {self.fault}" if self.fault else ""))
        if self.base_manifests is not None:
            self._paired_base()
        stage_s = self.document.stage_s
        t0 = time.time()
        # Lanes for several GPUs, or for one that is not the first visible (--gpus 1,).
        several = len(self.gpus) > 1 or (bool(self.gpus) and self.gpus[0] != self.visible[0])
        first_lane = lanes.Lane(0, self.gpus[0], self.device != "cuda") if several else None
        # The environment probe's worker goes on to run the first kernel: one start-up fewer.
        first = env_probe.first_worker(self.early, manifests[0], several) or self.worker_handle(manifests[0], first_lane)
        self.first_device = env_probe.read_environment(first, self.document, self.device, self.visible, self.gpus)
        stage_s["environment"] = time.time() - t0
        self.write()
        self.document.phase = 1
        if several:
            t0 = time.time()
            units = [[(ci, c, n) for ci, c in enumerate(self.cases_of(m)) if (n := len(self.variants_of(m, c, variant_filter)))] for m in manifests]
            _, record = lanes.run(self, self.lane_plan(), manifests, variant_filter, first, self.gpus, self.device != "cuda", units)
            with self.lock:
                self.doc["run"]["lanes"] = record
            stage_s["lanes"] = time.time() - t0
        ahead = Ahead(self, manifests if not several else [])
        for i, m in enumerate(ahead.manifests):
            t0 = time.time()
            handle, base = ahead.take(i, first)
            self.run_kernel(m, variant_filter, handle, i, base, ahead)
            stage_s[m.name] = time.time() - t0
        if several:
            # The lanes stopped their workers: each kernel's tails in a worker of their own.
            tails.verify_each(self, manifests, variant_filter, self.gpus, say)
        self.document.phase = 2
        unknown = self.plan.unknown()
        if unknown:
            self.diag("warning", "cases.unknown", unknown[0], fix=unknown[1])
        self.finish(manifests)
        self.write(final=True)
        counts = {}
        for c in self.doc["cases"]:
            counts[c["status"]] = counts.get(c["status"], 0) + 1
        done = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        tail = tails.summary(self.doc.get("tails"))
        say(f"done in {time.time() - self.document.started:.1f} s: {done}{tail}; results in {self.args.out} ({self.document.validated_by})")
        # The last line: the digest of the bytes the final write put at --out (document.py).
        print(self.document.digest_line(), flush=True)

    def _paired_base(self):
        """run.paired_base, and the line that says the run is paired."""
        a = self.args
        base = {"root": os.path.abspath(a.base_root), "threshold_pct": a.paired_threshold_pct, "order": ORDER}
        if a.base_sha:
            base["git_sha"] = a.base_sha
        if a.base_ref:
            base["git_ref"] = a.base_ref
        self.doc["run"]["paired_base"] = base
        sha = f" ({a.base_sha[:12]})" if a.base_sha else ""
        say(f"paired A/B against the base revision in {a.base_root}{sha}: {ORDER} rounds, threshold ±{a.paired_threshold_pct:g} %")

    # -- lanes (several GPUs, lanes.py) ---------------------------------------------------------

    def lane_plan(self) -> lanes.LanePlan:
        """What the lanes are told of the run; the rest they ask of this Harness (lanes.LaneHost)."""
        paired = self.base_manifests is not None
        cap = self.args.paired_time_cap_s if paired else self.args.time_cap_s
        return lanes.LanePlan(paired, cap, self.balance, self.args.balance if self.balance else None, self.first_device)

    def worker_handle(self, m, lane, base=False):
        """A worker for kernel m (or its base revision's) on the lane's GPU."""
        options = self.base_options() if base else self.options()
        if lane is not None:
            options = {**options, "visible_device": lane.name}
        return WorkerHandle(m, options)

    def ask_device(self, handle, lane):
        return env_probe.ask_device(handle, lane, self.visible)

    def say_lanes(self, line):
        say(line)

    def variants_of(self, m, case, variant_filter):
        return self.plan.variants_of(m, case, variant_filter)

    def cases_of(self, m):
        return self.plan.cases_of(m)

    def lane_failed(self, m, case, mi, ci, lane, message):
        lanes.set_case((mi, ci))
        device = lane.device if lane is not None else None  # None: no lane took the case
        for v in self.variants_of(m, case, self.plan.variant_filter):
            self.add_case(m, case, v["name"], {"status": "error", "error": {"kind": "harness", "message": message}}, device=device)

    def run_kernel(self, m, variant_filter, handle, mi, base, ahead):
        """A kernel's cases in one worker and the base revision's (`base`, None until made here),
        one GPU without lanes (lanes.py: several); `ahead` starts the next kernel's (ahead.py)."""
        cases = list(enumerate(self.cases_of(m)))
        names = [v["name"] for v in m.variants if not variant_filter or v["name"] in variant_filter]
        say(f"== {m.name} ({len(names)} variants, {len(cases)} cases) ==")
        if not cases:
            say(f"{m.name}: no {'ci_cases' if self.args.ci else 'cases'} in {m.path}")
        base = base or self.base_worker(m, None)
        try:
            if ahead.times_nothing(m, names):
                ahead.start_after(mi)
            first = True
            for ci, case in cases:
                lanes.set_case((mi, ci))
                if self.run_unit(m, variant_filter, case, handle, base, self.first_device, first):
                    first = False
                    self.write()
            ahead.start_after(mi)
            # The kernel's tails in the same worker, verified only (tails.py).
            tails.verify_kernel(self, m, variant_filter, handle, say)
        finally:
            # their exit overlaps the next kernel's set-up; waited for before anything is timed
            handle.stop_later()
            if base is not None:
                base.stop_later()

    def base_worker(self, m, lane, quiet=False):
        """The base revision's worker for kernel m on the lane's GPU (paired), else None: said unless `quiet`."""
        bm = (self.base_manifests or {}).get(m.name)
        if self.base_manifests is not None and bm is None and not quiet:
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
            records = self.pairing.run(handle, base, m, self.base_manifests[m.name], case, variants, timeout, first)
        else:
            records = self.run_case(handle, m, case, variants, timeout)
        for v in variants:
            self.add_case(m, case, v, records[v], device=device)
        return True

    def run_case(self, handle, m, case, variants, timeout_s, timing=True, first_seed_only=()):
        """Records by variant, the culprit searched when the worker fails (culprit.py)."""
        return self.runner.run_case(handle, m, case, variants, timeout_s, timing, first_seed_only)

    def finish(self, manifests):
        settle_exits()  # every worker gone before the calibration and the last write
        self.doc["kernels"] = [kernel_info(m, self.doc["cases"]) for m in manifests]
        env = self.doc["environment"]
        ceilings = ceilings_from(self.doc["cases"])
        if "copy_gbps" not in ceilings and self.stored_ceilings is not None and not self.args.no_timing:
            # --ceilings: the calibration kernel is identical to the one a stored run of this GPU
            # model measured them with (a pull request's paired run): its 8.5 s are not spent
            ceilings = self.stored_ceilings
            say(f"ceilings from {ceilings['source']}: the calibration kernel is identical, not measured again")
        elif self.device == "cuda" and "copy_gbps" not in ceilings and not self.args.no_timing:
            t0 = time.time()
            ceilings = calibration.calibrate(self.args.kernels, self.options(), self.run_case, self.diag) or ceilings
            self.document.stage_s["calibration"] = time.time() - t0
        if ceilings:
            env["ceilings"] = ceilings
            add_ceiling_percentages(self.doc["cases"], ceilings)


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
    except (ManifestError, faults.FaultSpecError, lanes.GpuSpecError, interpreter.InterpreterSetupError, calibration.CeilingsError) as e:
        print(f"{PREFIX} error: {e}", file=sys.stderr, flush=True)
        return 2
    finally:
        if tune_dir:
            shutil.rmtree(tune_dir, ignore_errors=True)
    return 0
