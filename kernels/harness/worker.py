"""The worker process: runs one kernel's cases (set-up, verification, timing) and sends each case's
records back over a pipe. It is the only process that touches the GPU, so a hung or crashed kernel
takes down this process, which the parent kills and restarts, and never the harness itself."""

import importlib
import math
import os
import sys
import time
import traceback

from . import NotBuilt, Unsupported, faults
from .stats import StopRule, drop_throttled, summarize

DTYPE_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
# A case whose roofline floor (its work at round chip rates) is below this is timed as a CUDA graph
# of many launches, since one launch per event pair would measure the host's launch overhead (a
# Triton launch costs ~20-40 µs of Python) rather than the kernel. The choice comes from the case's
# work, never from a timing: decided on a measured duration near a threshold, it flipped between
# two runs of the same code (H200, 2026-11-21: tail cases read 7 µs as graphs in one run and 90 µs
# as single launches in the next), and a comparison across methods is meaningless.
GRAPH_BELOW_FLOOR_MS = 0.1
FLOOR_FLOPS_PER_MS = 1e12  # 1,000 TFLOPS: about a Hopper's dense fp16 peak
FLOOR_BYTES_PER_MS = 3e9  # 3 TB/s: about an H100's memory bandwidth
GRAPH_TARGET_MS = 1.0


def times_as_graph(work):
    """Whether a case is timed as a CUDA graph of many launches: from its work alone, so that
    every run of the same case on any GPU uses the same method."""
    floor_ms = max(work["flops"] / FLOOR_FLOPS_PER_MS, work["bytes"] / FLOOR_BYTES_PER_MS)
    return floor_ms < GRAPH_BELOW_FLOOR_MS
# Working sets below this multiple of L2 are timed cold: L2 flushed before each sample and inputs
# rotated among several sets.
L2_FLUSH_BELOW = 4
INPUT_SET_BUDGET_BYTES = 1 << 30
MAX_INPUT_SETS = 4
# A variant whose device work outlives its own stream's end event by this much (and by this
# fraction of its timed duration) launched work on another stream than the one timed.
DRAIN_FLAG_MS = 0.2
DRAIN_FLAG_FRACTION = 0.1


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


def _error(kind, exc):
    tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-2000:]
    return {"kind": kind, "message": f"{type(exc).__name__}: {exc}"[:2000], "log_tail": tail}


def _sync(torch, device):
    if device == "cuda":
        torch.cuda.current_stream().synchronize()


class Worker:
    def __init__(self, current, manifest, options):
        self.current = current
        self.manifest = manifest
        self.opt = options
        import torch

        self.torch = torch
        self.device = options["device"]
        self.module = importlib.import_module(manifest["module"])
        self.ctx = Ctx(manifest["name"], self.device, options.get("builds") or [], options.get("builds_file"))
        self.fault = faults.parse(options.get("fault"))
        self.nvml = None
        self.warmed_up = False
        if self.device == "cuda":
            from .environment import Nvml

            self.nvml = Nvml(0)
            self.l2_bytes = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20))

    def mark(self, variant, phase):
        """Tell the parent (through shared memory, no message) what is running, for a timeout's reason."""
        self.current.value = f"{variant}\t{phase}".encode()[:250]

    # -- set-up ------------------------------------------------------------------------------

    def setup(self, params, variants):
        records, runners = {}, {}
        for v in variants:
            self.mark(v, "setup")
            rec = records[v] = {}
            factory = getattr(self.module, "VARIANTS", {}).get(v)
            if factory is None:
                rec.update(status="error", error={"kind": "missing-variant", "message": f"module {self.manifest['module']} has no variant {v!r} in VARIANTS (the manifest lists it)"})
                continue
            try:
                run = factory(dict(params), self.ctx)
            except (Unsupported, NotBuilt) as e:
                rec.update(status="skipped", reason=str(e))
                continue
            except Exception as e:
                rec.update(status="error", error=_error("setup", e))
                continue
            if self.fault and self.fault[0] == self.manifest["name"] and self.fault[1] == v:
                run = faults.wrap(run, self.fault[2])
            runners[v] = run
        return records, runners

    # -- verification ------------------------------------------------------------------------

    def verify(self, params, seeds, records, runners):
        """Runs every variant on fresh inputs for every seed; returns the oracle of the first seed
        (the timed runs' output is re-checked against it)."""
        torch = self.torch
        idx_fn = getattr(self.module, "oracle_index", None)
        idx = idx_fn(params) if idx_fn else None
        checks = {v: [] for v in runners}
        ref0 = None
        for seed in seeds:
            inputs = self.module.make_inputs(dict(params), seed, self.device)
            ref = self.module.oracle(inputs, params)
            if ref0 is None:
                ref0 = ref
            for v, run in list(runners.items()):
                if records[v].get("status") == "error":
                    continue
                self.mark(v, f"verify seed {seed}")
                try:
                    checks[v].append(self.check_once(run, inputs, params, ref, idx, seed, first=seed == seeds[0]))
                except Exception as e:
                    records[v].update(status="error", error=_error("verify", e))
            del inputs
        tol = self.tolerance(params)
        for v in runners:
            if records[v].get("status") == "error":
                continue
            self.judge(records[v], checks[v], tol, seeds, idx is not None)
        return ref0, idx

    def tolerance(self, params):
        dtype = params.get("dtype")
        tol = self.manifest["tolerance"].get(dtype)
        if tol is None:
            raise KeyError(f"{self.manifest['path']}: tolerance: no entry for dtype {dtype!r}")
        return tol

    def check_once(self, run, inputs, params, ref, idx, seed, first):
        torch = self.torch
        out = self.module.output_like(inputs, params)
        out.fill_(math.nan)
        drain_ms = event_ms = None
        if self.device == "cuda" and first:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            res = run(inputs, out)
            end.record()
            end.synchronize()
            t0 = time.perf_counter()
            torch.cuda.synchronize()
            drain_ms = (time.perf_counter() - t0) * 1e3
            event_ms = start.elapsed_time(end)
        else:
            res = run(inputs, out)
            _sync(torch, self.device)
        wrote_out = res.data_ptr() == out.data_ptr()
        res1 = res.clone()
        # Second run on the same inputs over a finite sentinel: an element that stays NaN in the
        # first run and keeps the sentinel in the second was never written.
        out.fill_(30000.0)
        sentinel = out.view(-1)[0].item()
        res2 = run(inputs, out)
        _sync(torch, self.device)
        nan1 = torch.isnan(res1)
        unwritten = (nan1 & (res2 == sentinel)) if wrote_out else torch.zeros_like(nan1)
        n_unwritten = int(unwritten.sum())
        n_nan = int(nan1.sum()) - n_unwritten
        n_inf = int(torch.isinf(res1).sum())
        fin1, fin2 = torch.isfinite(res1), torch.isfinite(res2)
        both = fin1 & fin2
        moved_nonfinite = int(((fin1 != fin2) & ~unwritten).sum())
        diff = (res1.float() - res2.float()).abs()[both]
        repeat = None if moved_nonfinite else (float(diff.max()) if diff.numel() else 0.0)
        rel, mx = self.error_vs(res1, ref, idx)
        return {
            "seed": seed,
            "rel_l2": rel,
            "max_abs": mx,
            "nan": n_nan,
            "inf": n_inf,
            "unwritten": n_unwritten,
            "numel": res1.numel(),
            "repeat": repeat,
            "moved_nonfinite": moved_nonfinite,
            "drain_ms": drain_ms,
            "event_ms": event_ms,
        }

    def error_vs(self, out, ref, idx):
        """(rel_l2, max_abs) of out against the oracle over the part it covers; (None, None) if NaN/Inf."""
        sub = out[idx] if idx is not None else out
        sub = sub.float()
        if not bool(self.torch.isfinite(sub).all()):
            return None, None
        ref = ref.float()
        d = sub - ref
        ref_norm = float(ref.norm())
        rel = float(d.norm()) / ref_norm if ref_norm > 0 else float(d.norm())
        return rel, float(d.abs().max()) if d.numel() else 0.0

    def judge(self, rec, checks, tol, seeds, subset):
        tol_rel = tol["rel_l2"]
        tol_abs = tol.get("max_abs")
        problems = []
        for c in checks:
            s = c["seed"]
            if c["unwritten"]:
                problems.append(f"seed {s}: {c['unwritten']} of {c['numel']} output elements never written (still NaN after the run)")
            if c["nan"]:
                problems.append(f"seed {s}: {c['nan']} NaN in the output")
            if c["inf"]:
                problems.append(f"seed {s}: {c['inf']} Inf in the output")
            if c["rel_l2"] is not None and c["rel_l2"] > tol_rel:
                problems.append(f"seed {s}: rel_l2 {c['rel_l2']:.3e} > tolerance {tol_rel:.1e}")
            if tol_abs is not None and c["max_abs"] is not None and c["max_abs"] > tol_abs:
                problems.append(f"seed {s}: max_abs {c['max_abs']:.3e} > tolerance {tol_abs:.1e}")
            if c["moved_nonfinite"]:
                problems.append(f"seed {s}: {c['moved_nonfinite']} elements finite in one run and not in the other on the same inputs (a race, or a read of memory nothing wrote)")
            elif c["repeat"]:
                problems.append(f"seed {s}: result moved between two runs on the same inputs, max diff {c['repeat']:.3e} (a race, or a read of memory nothing wrote)")
        worst = lambda key: None if any(c[key] is None for c in checks) else max(c[key] for c in checks)  # noqa: E731
        repeats = [c["repeat"] for c in checks]
        corr = {
            "status": "FAIL" if problems else "PASS",
            "rel_l2": worst("rel_l2"),
            "max_abs": worst("max_abs"),
            "nan_count": sum(c["nan"] for c in checks),
            "inf_count": sum(c["inf"] for c in checks),
            "unwritten_count": sum(c["unwritten"] for c in checks),
            "seeds": list(seeds),
            "tol_rel_l2": tol_rel,
            "oracle": self.oracle_desc(subset),
            "repeat_max_diff": None if any(r is None for r in repeats) else max(repeats),
        }
        if tol_abs is not None:
            corr["tol_max_abs"] = tol_abs
        if problems:
            corr["message"] = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more" if len(problems) > 6 else "")
        rec["correctness"] = corr
        rec["status"] = "fail" if problems else "ok"
        first = checks[0] if checks else None
        if first and first["drain_ms"] is not None and first["drain_ms"] > max(DRAIN_FLAG_MS, DRAIN_FLAG_FRACTION * first["event_ms"]):
            rec["status"] = "error"
            rec["error"] = {
                "kind": "other-stream",
                "message": (
                    f"device work went on {first['drain_ms']:.3f} ms after the timed stream's end event "
                    f"({first['event_ms']:.3f} ms between its events): the variant launches work on another "
                    "stream than the one timed, so events would not measure it"
                ),
            }

    def oracle_desc(self, subset):
        where = "GPU" if self.device == "cuda" else "CPU"
        desc = getattr(self.module, "ORACLE", "higher-precision torch reference")
        return f"{desc} on {where}" + (", on a subset of the output (oracle_index); NaN/unwritten checks cover all of it" if subset else "")

    # -- timing ------------------------------------------------------------------------------

    def bench(self, params, records, runners, ref0, idx):
        names = [v for v, r in runners.items() if records[v].get("status") == "ok"]
        if not names:
            return
        self.mark(",".join(names), "bench set-up")
        torch = self.torch
        work = self.module.work(params)
        cuda = self.device == "cuda"
        cold = cuda and work["bytes"] < L2_FLUSH_BELOW * self.l2_bytes
        n_sets = min(MAX_INPUT_SETS, max(1, int(INPUT_SET_BUDGET_BYTES // max(work["bytes"], 1)))) if cold else 1
        seeds = self.opt["seeds"]
        sets = [self.module.make_inputs(dict(params), seeds[0] if i == 0 else 1_000_003 + i, self.device) for i in range(n_sets)]
        outs = {v: [self.module.output_like(s, params) for s in sets] for v in names}
        flush = torch.empty(2 * self.l2_bytes, dtype=torch.uint8, device="cuda") if cold else None
        last_res = {}

        def call(v, k):
            res = runners[v](sets[k], outs[v][k])
            if k == 0:
                last_res[v] = res
            return res

        # Interleaved: one group, every variant sampled round by round in the same thermal state.
        # Sequential (--no-interleave): each variant warmed up and sampled on its own.
        groups = [names] if self.opt.get("interleave", True) else [[v] for v in names]
        use_graph = cuda and times_as_graph(work)
        st, graphs, batched, warmup_ms = {}, {}, {}, {}
        for group in groups:
            self.sample_group(group, call, n_sets, flush, st, graphs, batched, warmup_ms, use_graph)

        # -- the timed runs' output, re-checked against the oracle of the first seed --
        if cuda:
            torch.cuda.synchronize()
        tol = self.tolerance(params)
        for v in names:
            s = st[v]
            kept, clk, pw, n_drop = drop_throttled(s["ms"], s["clk"], s["pw"])
            timing = {"method": self.method(v, graphs, batched, cold), "samples_ms": kept, **summarize(kept), "n_discarded_throttled": n_drop, "stop_reason": s["stop"], "warmup_ms": warmup_ms[v], "l2_flush": bool(cold), "input_sets": n_sets}
            if clk:
                timing["sm_clock_mhz"] = clk
                timing["power_w"] = pw
            rec = records[v]
            rec["timing"] = timing
            res = last_res[v]
            rel, _ = self.error_vs(res, ref0, idx)
            rec["correctness"]["timed_output_rel_l2"] = rel
            if rel is None or rel > tol["rel_l2"]:
                shown = "NaN/Inf" if rel is None else f"rel_l2 {rel:.3e}"
                rec["status"] = "fail"
                rec["correctness"]["status"] = "FAIL"
                rec["correctness"]["message"] = f"the output of the timed runs is wrong ({shown} > tolerance {tol['rel_l2']:.1e}) although the verification runs passed: a race under repetition?"
        del sets, outs, flush, last_res

    def sample_group(self, names, call, n_sets, flush, st, graphs, batched, warmup_ms, use_graph):
        """Warm-up, graph capture where needed, then samples until each variant's stop rule says so."""
        torch = self.torch
        cuda = self.device == "cuda"
        # -- warm-up: every variant in turn, for seconds (clocks settle as power reaches its cap) --
        warm_s = self.opt["warmup_s"] if self.warmed_up else self.opt["first_warmup_s"]
        self.warmed_up = True
        est_ms = {v: [] for v in names}
        t_start = time.perf_counter()
        rounds = 0
        while rounds < 3 or time.perf_counter() - t_start < warm_s:
            for v in names:
                self.mark(v, "warm-up")
                t = self.time_one(lambda: call(v, rounds % n_sets), flush)
                est_ms[v].append(t)
            if cuda:
                torch.cuda.synchronize()
            rounds += 1
            if not cuda and rounds >= 3:
                break
        for v in names:
            warmup_ms[v] = (time.perf_counter() - t_start) * 1e3
        est = {v: sorted(x() if callable(x) else x for x in est_ms[v])[len(est_ms[v]) // 2] for v in names}

        # -- short kernels: a CUDA graph of many launches per sample --
        for v in names:
            if use_graph:
                self.mark(v, "graph capture")
                n = max(1, min(1000, int(GRAPH_TARGET_MS / max(est[v], 1e-4))))
                try:
                    graphs[v] = (self.capture(lambda v=v: call(v, 0), n), n)
                except Exception as e:
                    # Not capturable (e.g. a host sync inside): n calls back to back between one
                    # event pair. That includes the host's launch cost, but amortised over n calls
                    # it no longer swings with one launch's latency.
                    print(f"[kernelgate worker] {v}: CUDA graph capture failed ({type(e).__name__}: {e}); timing {n} calls back to back", file=sys.stderr)
                    torch.cuda.synchronize()
                    batched[v] = n

        # -- samples: round by round over the group, the order rotated every round --
        rule = StopRule(min_samples=self.opt["min_samples"], max_samples=self.opt["max_samples"], ci_rel=self.opt["ci_rel"], time_cap_s=self.opt["time_cap_s"])
        st.update({v: {"ms": [], "clk": [], "pw": [], "spent": 0.0, "stop": None} for v in names})
        r = 0
        while True:
            active = [v for v in names if st[v]["stop"] is None]
            if not active:
                break
            order = active[r % len(active):] + active[: r % len(active)]
            pending = []
            t0 = time.perf_counter()
            for v in order:
                self.mark(v, "bench")
                k = r % n_sets if v not in graphs else 0
                if v in graphs:
                    g, n = graphs[v]
                    t = self.time_one(g.replay, flush, per=n)
                elif v in batched:
                    t = self.time_one(lambda v=v, k=k: [call(v, k) for _ in range(batched[v])], flush, per=batched[v])
                else:
                    t = self.time_one(lambda: call(v, k), flush)
                clk = self.nvml.sm_clock_mhz() if self.nvml and self.nvml.ok else None
                pw = self.nvml.power_w() if self.nvml and self.nvml.ok else None
                pending.append((v, t, clk, pw))
            if cuda:
                torch.cuda.synchronize()
            round_s = time.perf_counter() - t0
            ms = {v: (t() if callable(t) else t) for v, t, _, _ in pending}
            total = sum(ms.values()) or 1.0
            for v, _, clk, pw in pending:
                s = st[v]
                s["ms"].append(ms[v])
                if clk is not None:
                    s["clk"].append(clk)
                    s["pw"].append(pw)
                s["spent"] += round_s * ms[v] / total
                kept, _, _, _ = drop_throttled(s["ms"], s["clk"], s["pw"])
                s["stop"] = rule.check(kept, s["spent"])
            r += 1

    def time_one(self, fn, flush, per=1):
        """One sample: on CUDA an event pair on the current stream (returns a callable read after the
        round's synchronisation); on CPU the wall clock."""
        torch = self.torch
        if self.device != "cuda":
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1e3 / per
        if flush is not None:
            flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        return lambda: start.elapsed_time(end) / per

    def capture(self, fn, n):
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                fn()
        torch.cuda.synchronize()
        return g

    def method(self, v, graphs, batched, cold):
        if self.device != "cuda":
            return "wall clock (CPU" + (", Triton interpreter)" if self.ctx.interpret else ")")
        if v in graphs:
            base = f"events, graph({graphs[v][1]} launches)"
        elif v in batched:
            base = f"events, {batched[v]} calls back to back"
        else:
            base = "events"
        return base + ("+l2flush" if cold else "") + (", interleaved" if self.opt.get("interleave", True) else ", sequential")

    # -- one case ------------------------------------------------------------------------------

    def run_case(self, job):
        """Records by variant, and the seconds each phase took (set-up includes tuning and compiling)."""
        params, variants = job["params"], job["variants"]
        phase_s = {}
        t0 = time.perf_counter()
        records, runners = self.setup(params, variants)
        work = self.module.work(params)
        for rec in records.values():
            rec["work"] = work
        phase_s["setup"] = time.perf_counter() - t0
        if runners:
            t0 = time.perf_counter()
            ref0, idx = self.verify(params, job["seeds"], records, runners)
            phase_s["verify"] = time.perf_counter() - t0
            if self.opt["timing"]:
                t0 = time.perf_counter()
                try:
                    self.bench(params, records, runners, ref0, idx)
                except Exception as e:
                    for v, rec in records.items():
                        if rec.get("status") == "ok" and "timing" not in rec:
                            rec.update(status="error", error=_error("bench", e))
                phase_s["bench"] = time.perf_counter() - t0
            del ref0
        if self.device == "cuda":
            self.torch.cuda.empty_cache()
        return records, phase_s


def main(conn, current, manifest, options):
    # Kernel code may print; keep the parent's stdout for the progress lines.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    worker = None
    while True:
        msg = conn.recv()
        op = msg["op"]
        if op == "quit":
            return
        try:
            if op == "env":
                from .environment import collect

                conn.send({"op": "env", "env": collect(options["device"])})
            elif op == "init":
                worker = Worker(current, manifest, options)
                conn.send({"op": "ready"})
            elif op == "case":
                records, phase_s = worker.run_case(msg)
                conn.send({"op": "case", "records": records, "phase_s": phase_s})
        except Exception as e:
            conn.send({"op": "fatal", "error": _error("worker", e)})
