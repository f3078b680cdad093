#!/usr/bin/env python3
"""A developer's experiment on kernels/bsr_gemm/cuda/bsr_wgmma_ws.cu (issue 28; docs/notes/kernel-gaps.md):
builds the file once per set of -D flags, checks every build against the harness's oracle (the
masked dense A times B in fp32) and times the builds and dense cuBLAS on the same masked matrix
(`cublas_dense`, what a user calls instead), interleaved round by round, on kernel.yml's cases and
ci_cases.

    python3 scripts/bsr-experiment.py --build base= --build g32=-DKG_BSR_GROUP_ROWS=32 --out bsr.json
    python3 scripts/bsr-experiment.py --dry-run --build base= --build g32=-DKG_BSR_GROUP_ROWS=32

Each build's figures beside cuBLAS's: per useful FLOP (the non-zero blocks' FLOPs over our time,
against all of 2·M·N·K over cuBLAS's: what the tier ladder grades) and in wall clock. --dry-run
builds only (no GPU needed). The building, the checks' hang guard, the interleaved timing and the
JSON are scripts/fa-experiment.py's; the exit status is 1 when a build or a check failed. The builds
are not registered variants: the action never runs this.
"""

import argparse
import importlib.util
import math
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "python"), str(REPO)]

from kernelgate_harness.manifest import case_id, load_manifest  # noqa: E402

_spec = importlib.util.spec_from_file_location("fa_experiment", REPO / "scripts" / "fa-experiment.py")
fx = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fx)

MANIFEST = REPO / "kernels" / "bsr_gemm" / "kernel.yml"
VARIANT = "cuda_bsr_wgmma_ws"  # whose build section (sources, flags) and entry the builds reuse
REFERENCE = "cublas_dense"
SEED = 0
BLOCK = 128  # the kernel's block (kTileM)
INSTANCE = re.compile(r"bsr_wgmma_ws_kernelI(6__half|13__nv_bfloat16)E")
DTYPE_OF = fx.DTYPE_OF  # the mangled dtype template argument: fp16, bf16


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bsr-experiment.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--build", action="append", default=[], metavar="NAME=FLAGS", help="a build of bsr_wgmma_ws.cu: NAME=-DA=1,-DB=2 (repeatable)")
    p.add_argument("--dtype", help="only the cases of this dtype: fp16 or bf16")
    p.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="M=..,N=..,K=..,topk=..",
        help="a case to check and time after kernel.yml's (repeatable; block 128, in each dtype --dtype keeps), e.g. "
        "M=8192,N=8192,K=8192,topk=64: every block present, a dense product through the same kernel",
    )
    fx.add_run_arguments(p, "cuBLAS")
    args = p.parse_args(argv)
    if args.dtype not in (None, "fp16", "bf16"):
        p.error(f"--dtype {args.dtype}: must be fp16 or bf16")
    fx.read_builds(p, args)
    try:
        args.extra = tuple(parse_case(text) for text in args.case)
    except ValueError as e:
        p.error(str(e))
    return args


CASE_KEYS = ("M", "N", "K", "topk")


def parse_case(text):
    """--case M=..,N=..,K=..,topk=..: each once, positive whole numbers; M and K multiples of the
    128-row block, topk at most K's blocks."""
    case = fx.parse_numbers("--case", text, CASE_KEYS)
    for key in ("M", "K"):
        if case[key] % BLOCK:
            raise ValueError(f"--case {text}: {key}={case[key]} is not a multiple of the block, {BLOCK}")
    if case["topk"] > case["K"] // BLOCK:
        raise ValueError(f"--case {text}: topk={case['topk']} is more than the {case['K'] // BLOCK} blocks of a block row")
    return case


def select_cases(manifest, dtype=None, extra=()):
    """kernel.yml's cases, then its ci_cases, then `extra` (--case) in each dtype, those of `dtype`
    when given: [{"id", "params"}]."""
    kept = [{"id": c.id, "params": c.params} for c in (*manifest.cases, *manifest.ci_cases) if dtype in (None, c.params["dtype"])]
    for dt in ("fp16", "bf16"):
        if dtype in (None, dt):
            for case in extra:
                params = {"dtype": dt, "M": case["M"], "N": case["N"], "K": case["K"], "block": BLOCK, "topk": case["topk"]}
                kept.append({"id": case_id(params), "params": params})
    return kept


def bsr_label(mangled):
    """A bsr_wgmma_ws_kernel instance's dtype ('fp16', 'bf16'), or the mangled name of another function."""
    m = INSTANCE.search(mangled)
    return DTYPE_OF[m.group(1)] if m else mangled


def build(name, flags, manifest, workdir, nvcc, cuobjdump):
    """One build of bsr_wgmma_ws.cu with `flags` added (fa-experiment.py's build_variant)."""
    return fx.build_variant(MANIFEST, VARIANT, bsr_label, name, flags, manifest, workdir, nvcc, cuobjdump)


def check(torch, fn, inputs, params, out, tolerance, what):
    """rel L2 and max |error| of one call's output against the harness's oracle (fp32)."""
    from kernels.bsr_gemm import bench

    out.fill_(float("nan"))
    result = fn(inputs, out)
    done = torch.cuda.Event()
    done.record()
    fx.wait(torch, done, what)
    ref = bench.oracle(inputs, params)
    err = result.float() - ref
    den = float(ref.square().sum())
    rel = math.sqrt(float(err.square().sum()) / den) if den > 0 else float("inf")
    ok = math.isfinite(rel) and rel <= tolerance
    return {"rel_l2": rel, "max_abs": float(err.abs().max()), "tolerance": tolerance, "ok": ok}


def run_case(torch, case, builds, manifest, args, failures):
    from kernels.bsr_gemm import bench, cuda_variants

    params, cid = case["params"], case["id"]
    tolerance = float(manifest.tolerance[params["dtype"]]["rel_l2"])
    inputs = bench.make_inputs(params, SEED, "cuda")
    out = bench.output_like(inputs, params)
    useful = bench.work(params)["flops"]
    dense = 2.0 * params["M"] * params["N"] * params["K"]
    record = {"id": cid, "params": params, "useful_flops": useful, "dense_flops": dense, "checks": {}, "timing": {}}
    candidates = [(b["name"], cuda_variants.VARIANTS[VARIANT], fx.LibraryCtx(b["library"])) for b in builds if b["ok"]]
    candidates.append((REFERENCE, bench.VARIANTS[REFERENCE], fx.LibraryCtx(None)))
    def check_one(fn, name, inputs=inputs, out=out):
        return check(torch, fn, inputs, params, out, tolerance, f"{cid}: {name}")

    runners = fx.check_candidates(candidates, params, cid, tolerance, check_one, record, failures)
    if args.profile:
        record["profiled"] = fx.profile_runners(torch, runners, inputs, out, cid)
    elif any(name == REFERENCE for name, _ in runners):
        record["timing"] = fx.time_runners(torch, runners, inputs, out, args, cid)
        ref_ms = record["timing"][REFERENCE]["median_ms"]
        ref_rate = dense / (ref_ms * 1e-3)
        for name, t in record["timing"].items():
            flops = dense if name == REFERENCE else useful
            t["tflops"] = flops / (t["median_ms"] * 1e-3) / 1e12
            t["per_useful_flop_vs_cublas"] = (useful / (t["median_ms"] * 1e-3)) / ref_rate if name != REFERENCE else 1.0
            t["wall_vs_cublas"] = ref_ms / t["median_ms"]
            rel = record["checks"][name]["rel_l2"]
            print(f"{cid}: {name:<13} {t['median_ms']:9.4f} ms {t['tflops']:7.1f} TFLOPS "
                  f"{t['per_useful_flop_vs_cublas']:6.3f}x cuBLAS per useful FLOP, {t['wall_vs_cublas']:6.3f}x in wall clock "
                  f"(rel_l2 {rel:.2e})", flush=True)
        if getattr(args, "probe", None) is not None:
            record["clock_probe"] = fx.probe_runners(args.probe, runners, inputs, out, args, record["timing"], cid)
    del inputs, out
    torch.cuda.empty_cache()
    return record


def main(argv):
    args = parse_args(argv)
    manifest = load_manifest(str(MANIFEST))
    return fx.run_experiment("bsr-experiment.py", argv, args, manifest, build, select_cases(manifest, args.dtype, args.extra), run_case)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
