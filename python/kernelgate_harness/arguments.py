"""The command line of `python -m kernelgate_harness` (docs/harness.md lists every option)."""

import argparse
import re


def parse_args(argv: list[str] | None) -> argparse.Namespace:
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
    p.add_argument("--ceilings", help=(
        "a JSON file of the ceilings a stored run of this GPU model measured ({copy_gbps, gemm_tflops, source}): used, and the calibration "
        "not run, when this run times no gemm case itself; the action passes it for a pull request whose calibration kernel (gemm) is "
        "identical in base and head. The results' environment.ceilings.source names the run"
    ))
    p.add_argument("--cases", help="a file of kernel/case ids, one a line: run only those cases (a shard's list, written by kernelgate run --shard i/n)")
    p.add_argument("--case-params", help="run only cases whose params include these, e.g. dtype=fp16,D=128,causal=false")
    p.add_argument("--fault", help="plant a fault, <kernel>.<variant>:<wrong|slow|nan> (same as KERNELGATE_FAULT)")
    p.add_argument("--run-id", help="label of this run (default: GITHUB_RUN_ID)")
    _paired_options(p)
    args = p.parse_args(argv)
    _check(p, args)
    return args


def _paired_options(p: argparse.ArgumentParser) -> None:
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
    g.add_argument("--controls", help=(
        "comma-separated kernel.variant names, each also in --identical: the A/A control of its kernel (a reference whose code is "
        "the same in both arms; the action names the kernel's control, src/measure/identity.ts controlReferences). While a "
        "candidate of its kernel is timed, it is timed on the kernel's headline case (tiers.case; on every case when the run has "
        "none) and, in the other cases, beside the confirmation of a variant that cleared the threshold: a control only ever "
        "demotes a moved verdict, and a moved verdict stands only when its confirmation agrees (kernelgate.yml run.time_control: "
        "headline). Needs --paired-confirm"
    ))
    g.add_argument("--harness-only", help=(
        "comma-separated kernel.variant names, each also in --identical: references whose build and sources are the base's and whose "
        "only difference is the harness (the action computes this for a pull request that changes the harness); left untimed as "
        "identical variants are, their records' identical.reason saying so: their kernel's A/A control, timed, measures the harness"
    ))
    g.add_argument("--verify-identical", choices=("first_seed", "all"), default="first_seed", help=(
        "how the --identical variants are verified (kernelgate.yml run.verify_identical): first_seed (default) on every case "
        "with the first seed only, without the probes of what the timing would miss (drain, late work, cache); their tails "
        "too; all: every seed and probe, as a changed variant. Their code is the base's, verified on every seed on its push"
    ))
    g.add_argument("--paired-change-min-blocks", type=int, default=12, help=(
        "ABBA blocks before a variant may stop SLOWER or FASTER (default 12, twice --paired-min-pairs: a disturbance of a second or so "
        "does not decide alone)"
    ))


def names_in(text: str | None) -> list[str]:
    """The names of a comma-separated option (--identical, --controls, --harness-only)."""
    return [n for n in (text or "").split(",") if n]


def variant_names(text: str | None) -> set[tuple[str, ...]]:
    """(kernel, variant) pairs of a comma-separated kernel.variant option."""
    return {tuple(n.split(".", 1)) for n in names_in(text)}


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuses option values and combinations that cannot run (argparse's exit 2, its usage line)."""
    if args.seeds < 1:
        p.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.base_builds and not args.base_root:
        p.error("--base-builds needs --base-root (the base revision's checkout)")
    if args.identical and not args.base_root:
        p.error("--identical needs --base-root (identical means identical in base and head)")
    for name in names_in(args.identical):
        if not re.fullmatch(r"[^.,\s]+\.[^.,\s]+", name):
            p.error(f"--identical takes kernel.variant names, got {name!r}")
    named = set(names_in(args.identical))
    for name in names_in(args.harness_only):
        if name not in named:
            p.error(f"--harness-only names {name!r}, which --identical does not: a reference left untimed must be named there too")
    controls = names_in(args.controls)
    for name in controls:
        if name not in named:
            p.error(f"--controls names {name!r}, which --identical does not: a control left untimed must be identical in base and head")
    if controls and not args.paired_confirm:
        p.error("--controls needs --paired-confirm (outside the headline case a control is timed beside the confirmations only)")
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
