"""`python -m kernelgate_harness.profile_one`: one variant on one case, launched once between the CUDA
profiler's start and stop, for `ncu --profile-from-start off` (kernelgate deep, src/deep). The
inputs, the output and a first call (Triton's compilation and autotuning, a library's set-up) come
before the start, so ncu profiles the variant's own launches and nothing of the harness's oracle.

It verifies nothing and times nothing: the harness does that. Exit 0 when the variant ran, 2 when
the kernel, variant or case does not exist, 3 when the variant cannot run the case (skipped)."""

import argparse
import importlib
import os
import sys

from . import NotBuilt, Unsupported
from .manifest import ManifestError, format_value, load_manifest, matches
from .worker import Ctx, checkout_on_path

PREFIX = "[kernelgate profile]"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m kernelgate_harness.profile_one", description=__doc__.splitlines()[0])
    p.add_argument("--kernels", default="kernels", help="folder of kernel folders (default: kernels)")
    p.add_argument("--kernel", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--case-params", required=True, help="the case, e.g. dtype=fp16,B=16,H=96,S=4096,D=128,causal=false")
    p.add_argument("--builds", help="build records of the CUDA variants (as the harness's --builds)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: run without a profiler (tests)")
    return p.parse_args(argv)


def find_case(manifest, spec):
    want = dict(kv.partition("=")[::2] for kv in spec.split(",") if kv)
    for case in manifest.cases + manifest.ci_cases:
        if all(k in case.params and format_value(case.params[k]) == v for k, v in want.items()):
            return case
    raise ManifestError(f"{manifest.path}: no case has {spec}")


def main(argv=None):
    args = parse_args(argv)
    try:
        manifest = load_manifest(os.path.join(args.kernels, args.kernel, "kernel.yml"))
        variant = next((v for v in manifest.variants if v["name"] == args.variant), None)
        if variant is None:
            raise ManifestError(f"{manifest.path}: no variant {args.variant}")
        case = find_case(manifest, args.case_params)
        if not matches(case.params, variant.get("only")):
            raise ManifestError(f"{manifest.path}: variant {args.variant} does not run case {case.id} (its only: {variant.get('only')})")
    except (ManifestError, OSError) as e:
        print(f"{PREFIX} error: {e}", file=sys.stderr, flush=True)
        return 2
    builds = []
    if args.builds:
        import json

        with open(args.builds) as f:
            data = json.load(f)
        builds = data.get("builds", []) if isinstance(data, dict) else data
    import torch

    checkout_on_path()  # the kernels' modules from the checkout (kernelgate_launch.py leaves it off)
    module = importlib.import_module(manifest.module)
    params = dict(case.params)
    try:
        run = module.VARIANTS[args.variant](params, Ctx(manifest.name, args.device, builds, args.builds))
    except (Unsupported, NotBuilt) as e:
        print(f"{PREFIX} {manifest.name}/{args.variant} {case.id}: skipped: {e}", flush=True)
        return 3
    inputs = module.make_inputs(params, 0, args.device)
    out = module.output_like(inputs, params)
    run(inputs, out)  # compile, autotune, set up: not profiled
    profiling = args.device == "cuda"
    if profiling:
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
    run(inputs, out)
    if profiling:
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    print(f"{PREFIX} {manifest.name}/{args.variant} {case.id}: ran once between the profiler's start and stop", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
