"""The worker process: runs one kernel's cases (set-up, verification, timing) and sends each case's
records back over a pipe. It is the only process that touches the GPU, so a hung or crashed kernel
takes down this process, which the parent kills and restarts, and never the harness itself."""

import importlib
import math
import os
import sys
import time

from . import NotBuilt, Unsupported, faults
from .caching import CacheProbe
from .compiled import compiled_record
from .correctness import Correctness
from .device import CURRENT, error_record
from .graphs import GraphCapture
from .integrity import Guard, tampering_error
from .l2 import persistence_error
from .processes import become_subreaper
from .sampling import Sampler
from .stream_checks import StreamChecks
from .timed_output import TimedOutputCheck
from .timing import Timer, fail_untimed
from .verify import Verifier


class Ctx:
    """What a variant's factory may ask of the harness (docs/kernel-modules.md)."""

    def __init__(self, kernel, device, builds, builds_file):
        self.kernel = kernel
        self.device = device
        self.interpret = os.environ.get("TRITON_INTERPRET") == "1"
        self._builds = builds
        self._builds_file = builds_file

    def library(self, variant):
        """Path of the shared library the build stage made for this kernel's variant."""
        if self._builds_file is None:
            raise NotBuilt(f"no library for {self.kernel}/{variant}: the harness was given no --builds file")
        for rec in self._builds:
            if rec.get("kernel") == self.kernel and rec.get("variant") == variant:
                if rec.get("status") != "ok":
                    raise NotBuilt(f"build of {self.kernel}/{variant} {rec.get('status')} (see the build report)")
                if not rec.get("library"):
                    raise NotBuilt(f"build record of {self.kernel}/{variant} in {self._builds_file} names no library")
                return rec["library"]
        raise NotBuilt(f"no library for {self.kernel}/{variant}: {self._builds_file} has no build record for it")


class Worker(Verifier, StreamChecks, Correctness, CacheProbe, GraphCapture, Timer, Sampler, TimedOutputCheck):
    """One kernel's worker: its module, the run's options and the device. Set-up and the protocol
    of one case are here; verification (verify.Verifier), its checks of work left on another stream
    (stream_checks.StreamChecks) and its judging (correctness.Correctness), the cache probe (caching.CacheProbe),
    graph capture (graphs.GraphCapture), timing (timing.Timer), its rounds of samples
    (sampling.Sampler) and the check after it (timed_output.TimedOutputCheck) are its mixins."""

    def __init__(self, current, manifest, options):
        self.current = current
        self.manifest = manifest
        self.opt = options
        import torch

        self.torch = torch
        self.device = options["device"]
        if self.device == "cuda":
            from . import environment  # noqa: F401  (imported before the snapshot: it is the harness's)
        # The snapshot of what the timing, the statistics and the checks rely on, and the timer's
        # own references, taken before the kernel module's code runs (integrity.py).
        self.guard = Guard(torch)
        # The persisting-L2 limit as found, before the module's code runs (l2.py).
        self.l2 = None
        if self.device == "cuda":
            from .l2 import PersistingL2

            self.l2 = PersistingL2()
        self.module = importlib.import_module(manifest["module"])
        found = self.guard.check()
        # A module that patches at import time fails every variant of every case (setup()).
        self.import_tampering = tampering_error(found, f"after importing {manifest['module']}") if found else None
        self.ctx = Ctx(manifest["name"], self.device, options.get("builds") or [], options.get("builds_file"))
        self.fault = faults.parse(options.get("fault"))
        self.nvml = None
        self.warmed_up = False
        self.capture_stream = None  # made on the first capture, kept for the worker's life
        if self.device == "cuda":
            from .environment import Nvml

            self.nvml = Nvml(0)
            self.l2_bytes = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20))

    def tampered(self, when):
        """The tampering error when anything the harness relies on was replaced since the snapshot
        (each restored; `when` says during what), else None."""
        guard = getattr(self, "guard", None)
        if guard is None:  # a stub of the worker in the tests
            return None
        names = guard.check() + guard.check_instance(self, "the worker")
        return tampering_error(names, when) if names else None

    def l2_left_set(self, v):
        """The l2-persistence error when variant v changed the L2 set aside for persisting accesses
        (the limit is set back to the worker's starting value), else None; None where the runtime
        cannot be asked."""
        l2 = getattr(self, "l2", None)
        limit = l2.changed() if l2 is not None else None
        if limit is None:
            return None
        l2.clear_limit()
        return persistence_error(v, limit)

    def mark(self, variant, phase):
        """Tell the parent (through shared memory, no message) what is running, for a timeout's reason."""
        self.current.value = f"{variant}\t{phase}".encode()[:250]

    # -- set-up ------------------------------------------------------------------------------

    def setup(self, params, variants):
        records, runners = {}, {}
        for v in variants:
            self.mark(v, "setup")
            rec = records[v] = {}
            if self.import_tampering:
                rec.update(status="error", error=dict(self.import_tampering))
                continue
            factory = getattr(self.module, "VARIANTS", {}).get(v)
            if factory is None:
                message = f"module {self.manifest['module']} has no variant {v!r} in VARIANTS (the manifest lists it)"
                rec.update(status="error", error={"kind": "missing-variant", "message": message})
                continue
            try:
                run = factory(dict(params), self.ctx)
            except (Unsupported, NotBuilt) as e:
                rec.update(status="skipped", reason=str(e))
                continue
            except Exception as e:
                rec.update(status="error", error=error_record("setup", e))
                continue
            tampering = self.tampered(f"during the set-up of {v}")
            if tampering:
                rec.update(status="error", error=tampering)
                continue
            tuned = tuning_record(run)
            if tuned is not None:
                rec["tuning"] = tuned
            if self.fault and self.fault[0] == self.manifest["name"] and self.fault[1] == v:
                run = faults.wrap(run, self.fault[2], self.device)
            runners[v] = run
        return records, runners

    # -- one case ------------------------------------------------------------------------------

    def verify_case(self, job):
        """Set-up and verification of one case: (records, runners, ref0, idx, phase seconds)."""
        params, variants = job["params"], job["variants"]
        phase_s = {}
        t0 = time.perf_counter()
        records, runners = self.setup(params, variants)
        work = self.module.work(params)
        for rec in records.values():
            rec["work"] = work
        phase_s["setup"] = time.perf_counter() - t0
        ref0 = idx = None
        if runners:
            t0 = time.perf_counter()
            ref0, idx = self.verify(params, job["seeds"], records, runners)
            phase_s["verify"] = time.perf_counter() - t0
            record_compiled(records, runners)
        return records, runners, ref0, idx, phase_s

    def run_case(self, job):
        """Records by variant, and the seconds each phase took (set-up includes tuning and compiling).
        A job with "timing": false is verified only (the tails, tails.py), whatever the options say."""
        # A tail of a variant identical in base and head (tails.py): the first seed only.
        self.first_seed_only = frozenset(job.get("first_seed_only", ()))
        try:
            records, runners, ref0, idx, phase_s = self.verify_case(job)
        finally:
            self.first_seed_only = frozenset()
        if runners and job.get("timing", self.opt["timing"]):
            t0 = time.perf_counter()
            try:
                self.bench(job["params"], records, runners, ref0, idx)
            except Exception as e:
                fail_untimed(records, error_record("bench", e))
            phase_s["bench"] = time.perf_counter() - t0
        del ref0
        if self.device == "cuda":
            self.torch.cuda.empty_cache()
        return records, phase_s

    # -- one arm of a paired case, driven by the parent ----------------------------------------

    def paired(self, msg):
        """The ops of a paired case (cli.PairedCase drives two workers, one per revision)."""
        op = msg["op"]
        if op == "pverify":
            saved = self.opt
            if msg.get("light"):
                # A confirmation's set-up in a fresh process: the case was verified in full already.
                self.opt = {**saved, "stress": False, "stream_checks": False}
            # Variants identical in base and head (--identical) are verified, never timed; with
            # --verify-identical first_seed, on the first seed only (verify.Verifier).
            self.untimed = frozenset(msg.get("untimed", ()))
            self.first_seed_only = frozenset(msg.get("first_seed_only", ()))
            try:
                records, runners, ref0, idx, phase_s = self.verify_case(msg)
            finally:
                self.opt = saved
                self.untimed = self.first_seed_only = frozenset()
            self.pcase = {"records": records, "bench": None}
            runners = {v: r for v, r in runners.items() if v not in msg.get("untimed", ())}
            if runners:
                t0 = time.perf_counter()
                self.pcase["bench"] = self.prepare(msg["params"], records, runners, ref0, idx)
                phase_s["prepare"] = time.perf_counter() - t0
            b = self.pcase["bench"]
            if self.device == "cuda":
                # The verification's oracle memory goes back to the driver: the other arm's
                # process needs it (the caching allocator would otherwise keep it reserved).
                self.torch.cuda.empty_cache()
            return {"op": "pverified", "records": records, "phase_s": phase_s, "timed": b.names if b else []}
        b = self.pcase["bench"]
        if op == "pwarm":
            short = {"short_seconds": msg.get("short_seconds"), "short_call_s": msg.get("short_call_s", 0.0)}
            self.warm(b, msg["names"], msg.get("seconds", 0.0), min_rounds=msg.get("rounds", 1), **short)
            return {"op": "pwarmed"}
        if op == "psample":
            return {"op": "psampled", "samples": self.sample_round(b, msg["order"], msg["r"])}
        if op == "pfinish":
            records = self.pcase["records"]
            info = {}
            if b is not None:
                info = self.arm_info(b)
                self.finish(b)
            self.pcase = None
            if self.device == "cuda":
                self.torch.cuda.empty_cache()
            return {"op": "pfinished", "records": records, "info": info}
        raise ValueError(f"unknown paired op {op!r}")


def _jsonable(value):
    """A tuned configuration as JSON: tuples become lists; what JSON cannot hold, its str()."""
    if isinstance(value, (list, tuple)):
        return [_jsonable(x) for x in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(x) for k, x in value.items()}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def tuning_record(run):
    """cases[].tuning: the configuration a variant's run function launches with (`run.config`,
    set by the kernel's factory after its host-side tuner chose), and the candidates' times when
    this process tuned (`run.config_times_ms`, {config: ms}); None for a variant without one."""
    config = getattr(run, "config", None)
    if config is None:
        return None
    rec = {"config": _jsonable(config)}
    times = getattr(run, "config_times_ms", None) or {}
    ranked = sorted(((c, ms) for c, ms in times.items() if isinstance(ms, (int, float)) and math.isfinite(ms) and ms >= 0), key=lambda kv: kv[1])
    if ranked:
        rec["candidates_ms"] = [{"config": _jsonable(c), "ms": float(ms)} for c, ms in ranked[:64]]
    return rec


def record_compiled(records, runners):
    """cases[].tuning.compiled (compiled.py): after the verification launched each variant, the
    kernel its tuned configuration compiled to, where the run function names it."""
    for v, run in runners.items():
        tuned = records.get(v, {}).get("tuning")
        if tuned is None:
            continue
        facts = compiled_record(run)
        if facts is not None:
            tuned["compiled"] = facts


def import_root(module, root):
    """Makes `module` import from the checkout `root` (the base revision of a paired run) even when
    its top-level package is already loaded from elsewhere (the harness's own `kernels` package)."""
    top = module.split(".")[0]
    sys.path.insert(0, root)
    pkg = sys.modules.get(top)
    where = os.path.join(root, top)
    if pkg is not None and hasattr(pkg, "__path__") and os.path.isdir(where):
        pkg.__path__.insert(0, where)


def checkout_on_path():
    """Puts the current directory, the checkout being measured, first on sys.path for the kernels'
    imports, as `python -m` did. The harness's own process leaves it off (kernelgate_launch.py):
    there a `kernelgate_harness/` of the checkout would shadow the harness. Here the harness's
    package is imported already, from where the parent found it."""
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)


def main(conn, current, manifest, options):
    # Kernel code may print; keep the parent's stdout for the progress lines.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # Orphans of the kernel's processes (a double fork's grandchild) become the worker's, so the
    # check after a call still finds them among its descendants (outputs.settle).
    become_subreaper()
    checkout_on_path()
    if options.get("import_root"):
        import_root(manifest["module"], options["import_root"])
    CURRENT["array"] = current
    # torch before the first message: most of a worker's start-up, here while the parent may still
    # be finding the device (env_probe.start_early: the environment probe's request brings it)
    import torch  # noqa: F401

    worker = None
    while True:
        msg = conn.recv()
        op = msg["op"]
        if op == "quit":
            return
        try:
            if op == "env":
                from .environment import collect

                options["device"] = msg.get("device") or options["device"]
                conn.send({"op": "env", "env": collect(options["device"])})
            elif op == "init":
                worker = Worker(current, manifest, options)
                conn.send({"op": "ready"})
            elif op == "case":
                records, phase_s = worker.run_case(msg)
                conn.send({"op": "case", "records": records, "phase_s": phase_s})
            else:
                conn.send(worker.paired(msg))
        except Exception as e:
            conn.send({"op": "fatal", "error": error_record("worker", e)})
