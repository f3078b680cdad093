#!/usr/bin/env python3
"""A developer's experiment on kernels/attention/cuda/fa_wgmma.cu (issue 28; docs/notes/kernel-gaps.md,
"Next experiment"): builds the file once per set of -D flags, checks every build against torch's SDPA
computed in fp32 and times the builds and F.scaled_dot_product_attention (its default backend),
interleaved round by round, on the headline cases and two small tail shapes.

    python3 scripts/fa-experiment.py --build base= --build old=-DKG_FA_PRODUCER_WG=0 \\
        --build ws3=-DKG_FA_STAGES=3 [--cases dtype=fp16,D=128] --out fa.json
    python3 scripts/fa-experiment.py --dry-run --build base= --build old=-DKG_FA_PRODUCER_WG=0

--dry-run builds only (no GPU needed). A failed build or check is printed with its case and the run
goes on with the other builds; the exit status is 1 when anything failed. The JSON is rewritten after
every case, so a run cut short keeps what it measured. The builds are not registered variants: the
action never runs this.
"""

import argparse
import datetime
import functools
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "python"), str(REPO)]

from kernelgate_harness.compiled import triton_cuobjdump  # noqa: E402
from kernelgate_harness.device import SPIN_CYCLES_PER_MS  # noqa: E402
from kernelgate_harness.manifest import case_id, load_manifest  # noqa: E402
from kernelgate_harness.stats import balanced  # noqa: E402

MANIFEST = REPO / "kernels" / "attention" / "kernel.yml"
VARIANT = "cuda_fa_wgmma"  # whose build section (sources, flags) and entry the builds reuse
# The build stage's nvcc command around a variant's flags (src/measure/build/variant.ts).
NVCC_ARGS = ["-shared", "-Xcompiler", "-fPIC", "-O3"]
HEADLINE = {"B": 16, "H": 96, "S": 4096}
TAILS = ({"B": 2, "H": 3, "S": 1000}, {"B": 2, "H": 3, "S": 77})
PROBE = {"B": 2, "H": 3}  # --seq's shapes
AXES = {"dtype": ("fp16", "bf16"), "D": (128, 64), "causal": (False, True)}
NAME = re.compile(r"^[A-Za-z0-9_-]+$")
HANG_S = 60  # a call that has not finished after this long is taken for a hang: the run stops
POLL_S = 0.0005  # how often wait() looks at an event (and watch_burst reads the clock)
PROFILE_RANGE = "kgprof"  # --profile's NVTX range, around the one call of each runner
SEED = 0


def parse_build(text):
    """--build NAME=FLAGS: FLAGS is a comma-separated list of nvcc flags, possibly empty."""
    name, sep, flags = text.partition("=")
    if not sep:
        raise ValueError(f"--build {text}: expected NAME=FLAGS")
    if not NAME.match(name):
        raise ValueError(f"--build {text}: NAME must be letters, digits, '_' or '-', got {name!r}")
    parts = [f for f in flags.split(",") if f]
    for flag in parts:
        if not flag.startswith("-"):
            raise ValueError(f"--build {text}: flag {flag!r} must start with '-' (e.g. -DKG_FA_STAGES=3)")
    return name, parts


def parse_cases(text):
    """--cases KEY=VALUE,...: keeps the cases whose dtype, D and causal are among the values given."""
    wanted = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or key not in AXES:
            raise ValueError(f"--cases {text}: {item!r} is not KEY=VALUE with KEY one of {', '.join(AXES)}")
        allowed = {str(v).lower(): v for v in AXES[key]}
        if value.lower() not in allowed:
            raise ValueError(f"--cases {text}: {key}={value} is not one of {', '.join(allowed)}")
        wanted.setdefault(key, set()).add(allowed[value.lower()])
    return wanted


def parse_args(argv):
    p = argparse.ArgumentParser(prog="fa-experiment.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--build", action="append", default=[], metavar="NAME=FLAGS", help="a build of fa_wgmma.cu: NAME=-DA=1,-DB=2 (repeatable)")
    p.add_argument("--cases", metavar="KEY=VALUE,...", help="narrow dtype, D, causal, e.g. dtype=fp16,D=128,causal=false")
    p.add_argument(
        "--seq",
        metavar="S,...",
        help=f"sequence lengths to check and time after the manifest's shapes, at B={PROBE['B']} H={PROBE['H']} (not the "
        "manifest's cases: a probe of a tile's boundary, e.g. 177,369 for a last key tile of 1 and 17 keys at 176)",
    )
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="B=..,H=..,S=..",
        help="a shape to check and time after the others (repeatable), e.g. B=4,H=96,S=8192: the headline's work in "
        "sequences twice as long, to tell a cost per CTA or item from a cost per key tile",
    )
    p.add_argument(
        "--settle",
        type=int,
        default=0,
        metavar="K",
        help="instead of the rounds: in each of --rounds repetitions, for every runner (in a shuffled order) and every "
        "lead (cool: a spin of --lead-ms, little power; hot: cuBLAS GEMMs for as long, at the power cap), the lead then K "
        "calls of the runner back to back, each timed: how long a call's time depends on what ran before it, and each "
        "runner's time once that has passed (default 0: the rounds)",
    )
    p.add_argument("--lead-ms", type=float, default=60.0, help="--settle's leads: how long each lasts (default 60 ms)")
    p.add_argument(
        "--settle-leads",
        type=settle_leads,
        default=list(SETTLE_LEADS),
        metavar="LEAD,...",
        help="--settle's leads (default cool,hot): cool, hot, or a runner's name (its calls back to back for --lead-ms, "
        "e.g. sdpa_default: what the harness's rounds put before a sample), each optionally followed by +reset (then "
        "cudaCtxResetPersistingL2Cache: lines the lead left marked to stay in the L2 become normal) or +flush (then "
        "writes over four times the L2's size: its normal lines go)",
    )
    p.add_argument(
        "--mix",
        action="store_true",
        help="time the attention kernel's other variants too (kernel.yml's: the harness's mix, the CUDA ones built once "
        "per run), in the same rounds, so that each sample follows what it follows in the harness; their checks' refusals "
        "are noted (record's mix_refused), not failures. With it the ratios printed are balanced over the predecessors "
        "(balanced_ms), as the tiers grade",
    )
    p.add_argument(
        "--rounded-inputs",
        action="store_true",
        help="on the fp16 cases, time every runner twice in the same rounds: on the inputs, and (named NAME@bf16grid) on "
        "the same inputs rounded to bf16's 8-bit significand and back (rounded_to_bf16_grid), the same instructions on "
        "operands with fewer bits set: how much of a kernel's time at the power cap its operands' bits cost",
    )
    add_run_arguments(p, "SDPA")
    args = p.parse_args(argv)
    read_builds(p, args)
    try:
        args.wanted = parse_cases(args.cases) if args.cases else {}
        args.seqs = parse_seqs(args.seq) if args.seq else ()
        args.shapes = tuple(parse_shape(text) for text in args.shape)
    except ValueError as e:
        p.error(str(e))
    return args


def add_run_arguments(p, reference):
    """The options every experiment script shares: rounds, warm-up, burst, --out, --dry-run."""
    p.add_argument("--rounds", type=int, default=30, help="timed rounds per case (default 30)")
    p.add_argument("--warmup-s", type=float, default=1.0, help=f"warm-up of each build and {reference} on its first call of a case (default 1 s)")
    p.add_argument("--burst-ms", type=float, default=20.0, help="about how long one timed burst of calls lasts (default 20 ms)")
    p.add_argument(
        "--cool-ms",
        type=float,
        default=0.0,
        help="a GPU spin of this many ms (at the maximum SM clock; torch.cuda._sleep, little power) queued before each "
        "timed burst, outside its events: the GPU spends that share of the time cool, as in the harness's rounds, whose "
        "samples run at higher clocks than back-to-back bursts (default 0: none)",
    )
    p.add_argument(
        "--order",
        choices=("shuffle", "rotate", "williams", "williams-one"),
        default="shuffle",
        help="the runners' order in each round: shuffle (the default: a seeded shuffle per round, so that no runner always "
        "follows the same one), rotate (the order before 2026-11-27: rotated by one each round, which keeps every "
        "runner behind the same predecessor), williams (the harness's: every runner behind every other one equally "
        "often over a cycle of rounds, each cycle labelled afresh, sampling.round_order) or williams-one (the harness's "
        "until 2026-11-29: one labelling, which fixes what ran two places ahead by the predecessor)",
    )
    p.add_argument(
        "--clock-probe",
        type=int,
        default=0,
        metavar="N",
        help="after each case's timing, N more calls of each runner in the same regime, each beside scripts/clock_probe.cu "
        "on a second stream: the SM clock as the chip ran it during the call (cycles over the global timer), not NVML's "
        "reading (default 0: none)",
    )
    p.add_argument("--out", help="the JSON to write (required unless --dry-run)")
    p.add_argument("--dry-run", action="store_true", help="build only: no GPU, no checks, no timing")
    p.add_argument(
        "--profile",
        action="store_true",
        help=f"after the checks, call each build and {reference} once inside an NVTX range named {PROFILE_RANGE} instead of "
        f"timing them: for Nsight Compute, e.g. ncu --nvtx --nvtx-include {PROFILE_RANGE}/ --set full -o prof python3 ...",
    )


def read_builds(p, args):
    """args.builds ({NAME: [flags]}) from the --build options, and the checks every experiment
    script shares; a bad value ends the run with argparse's error naming it."""
    builds = {}
    try:
        for text in args.build:
            name, flags = parse_build(text)
            if name in builds:
                raise ValueError(f"--build {text}: the name {name} is given twice")
            builds[name] = flags
    except ValueError as e:
        p.error(str(e))
    args.builds = builds
    if not builds:
        p.error("--build: give at least one, e.g. --build base=")
    if args.rounds < 1:
        p.error(f"--rounds {args.rounds}: must be at least 1")
    if not args.cool_ms >= 0:
        p.error(f"--cool-ms {args.cool_ms}: must be 0 or more")
    if args.clock_probe < 0:
        p.error(f"--clock-probe {args.clock_probe}: must be 0 or more")
    if not args.dry_run and not args.out:
        p.error("--out: required unless --dry-run")


def parse_seqs(text):
    """--seq S,...: positive sequence lengths, each once."""
    seqs = []
    for item in text.split(","):
        if not item.strip().isdigit() or int(item) < 1:
            raise ValueError(f"--seq {text}: {item!r} is not a positive whole number")
        if int(item) in seqs:
            raise ValueError(f"--seq {text}: {item} is given twice")
        seqs.append(int(item))
    return tuple(seqs)


def parse_numbers(option, text, keys):
    """--OPTION K=V,...: each of `keys` once, a positive whole number; {key: value} in keys' order
    (the order a case's id follows). Shared with bsr-experiment.py's --case."""
    found = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or key not in keys:
            raise ValueError(f"{option} {text}: {item!r} is not KEY=VALUE with KEY one of {', '.join(keys)}")
        if key in found:
            raise ValueError(f"{option} {text}: {key} is given twice")
        if not value.strip().isdigit() or int(value) < 1:
            raise ValueError(f"{option} {text}: {key}={value} is not a positive whole number")
        found[key] = int(value)
    missing = [k for k in keys if k not in found]
    if missing:
        raise ValueError(f"{option} {text}: {', '.join(missing)} missing")
    return {k: found[k] for k in keys}


def parse_shape(text):
    """--shape B=..,H=..,S=..: each once, a positive whole number."""
    return parse_numbers("--shape", text, ("B", "H", "S"))


def select_cases(wanted, seqs=(), extra=()):
    """Headline cases first, then the tails, then --seq's probes, then --shape's shapes, each over
    the dtype x D x causal axes kept by --cases."""
    combos = [
        {"dtype": dt, "D": d, "causal": c}
        for dt in AXES["dtype"] for d in AXES["D"] for c in AXES["causal"]
        if all(v in wanted.get(k, (v,)) for k, v in (("dtype", dt), ("D", d), ("causal", c)))
    ]
    shapes = (HEADLINE, *TAILS, *({**PROBE, "S": seq} for seq in seqs), *extra)
    cases = [{"dtype": c["dtype"], **shape, "D": c["D"], "causal": c["causal"]} for shape in shapes for c in combos]
    return [{"id": case_id(p), "params": p} for p in cases]


# -- builds --


def find_nvcc():
    for cand in (shutil.which("nvcc"), os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.exists(cand):
            return cand
    return None


def find_cuobjdump():
    """The toolkit's cuobjdump, else the one in the Triton wheel; None when neither is there."""
    return shutil.which("cuobjdump") or triton_cuobjdump()


# <T, kD, kCausal, kBlockN, kWGs, kLastN, kVariant>; the key tile is named in the label only when it
# is not 128, the last tile's width only when it is not the key tile's (KG_FA_NARROW_LAST), and the
# variant (fa_wgmma.cu's Variant; a bool kShort in the builds before the twenty-second session) as
# VARIANT_LABEL names it
INSTANCE = re.compile(
    r"fa_wgmma_kernelI(6__half|13__nv_bfloat16)Li(\d+)ELb([01])E(?:Li(\d+)E(?:Li\d+E(?:Li(\d+)E(?:L[bi](\d)E)?)?)?)?"
)
# (head dim, variant bits) -> the label's last words: kShort (1) is the causal D128 instance of
# KG_FA_CAUSAL_SHORT_KEYS_D128 (128-key tiles on the persistent grid), kPerItem (2) the causal D64
# one of KG_FA_D64_CTA_PER_ITEM (a CTA per item), kSnake (4) the persistent grid in the snake's
# order (KG_FA_D64_SNAKE_BLOCKS, KG_FA_D128_SNAKE_ITEMS)
VARIANT_LABEL = {
    ("128", "1"): " persistent",
    ("128", "4"): " snake",
    ("128", "5"): " persistent snake",
    ("64", "2"): " per item",
    ("64", "4"): " snake",
}
DTYPE_OF = {"6__half": "fp16", "13__nv_bfloat16": "bf16"}


def instance_label(inst):
    """'fp16 D128', 'bf16 D64 causal', 'fp16 D128 N176', 'fp16 D128 N176 last64', 'fp16 D128 causal
    persistent', 'bf16 D64 causal snake', 'fp16 D64 causal per item' from a mangled fa_wgmma_kernel
    name's match."""
    causal = " causal" if inst.group(3) == "1" else ""
    tile = f" N{inst.group(4)}" if inst.group(4) not in (None, "128") else ""
    last = f" last{inst.group(5)}" if inst.group(5) not in (None, inst.group(4)) else ""
    variant = VARIANT_LABEL.get((inst.group(2), inst.group(6)), "")
    return f"{DTYPE_OF[inst.group(1)]} D{inst.group(2)}{causal}{tile}{last}{variant}"


def fa_label(mangled):
    """An fa_wgmma_kernel instance's label (instance_label), or the mangled name of another function."""
    inst = INSTANCE.search(mangled)
    return instance_label(inst) if inst else mangled


def parse_ptxas(log, label=fa_label):
    """Per kernel instance (named by label(its mangled name)): registers, stack, spills from
    `-Xptxas -v`; and every ptxas warning and performance-loss line (C7514, C7512: "wgmma serialized")."""
    instances, current = [], None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = {"instance": label(m.group(1))}
            instances.append(current)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current is not None:
            current.update(stack_bytes=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            current["registers"] = int(m.group(1))
    # ptxas's warnings, and its "Potential Performance Loss" info lines (C7514, C7512: serialised
    # wgmma), which say the build runs slow while it succeeds
    warnings = [line.strip() for line in log.splitlines() if re.search(r"warning|Potential Performance Loss", line, re.IGNORECASE)]
    return instances, warnings


def sass_counts(cuobjdump, library):
    """How many HGMMA, USETMAXREG, TMA (UTMALDG, UTMASTG; MULTICAST: the loads that multicast to a
    cluster), MUFU (the multi-function unit's: exponentials, reciprocals), local-memory (LDL/STL),
    R2UR (a vector register moved to a uniform one: a wgmma descriptor or TMA operand ptxas could
    not prove uniform) and REDUX instructions the library's SASS holds."""
    out = subprocess.run([cuobjdump, "-sass", library], capture_output=True, text=True, timeout=300).stdout
    ops = ("HGMMA", "USETMAXREG", "UTMALDG", "UTMASTG", "MULTICAST", "MUFU", "LDL", "STL", "R2UR", "REDUX")
    return {op: len(re.findall(rf"\b{op}\b", out)) for op in ops}


def build(name, flags, manifest, workdir, nvcc, cuobjdump):
    """One build of fa_wgmma.cu with `flags` added (build_variant)."""
    return build_variant(MANIFEST, VARIANT, fa_label, name, flags, manifest, workdir, nvcc, cuobjdump)


def build_variant(manifest_path, variant, label, name, flags, manifest, workdir, nvcc, cuobjdump):
    """One build of `variant`'s sources (its build section in the kernel.yml at manifest_path) with
    `flags` added, as the build stage builds it; the record says what ptxas said per instance
    (parse_ptxas, each named by `label`), and the SASS's counts when cuobjdump is there."""
    spec = next(v for v in manifest.variants if v["name"] == variant)["build"]
    sources = [str(Path(manifest_path).parent / s) for s in spec["sources"]]
    library = str(Path(workdir) / f"{variant}_{name}.so")
    cmd = [nvcc, *NVCC_ARGS, *spec.get("flags", []), "-Xptxas", "-v", *flags, "-o", library, *sources]
    record = {"name": name, "flags": flags, "command": " ".join(cmd)}
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    record["seconds"] = round(time.monotonic() - start, 1)
    log = proc.stdout + proc.stderr
    record["instances"], record["warnings"] = parse_ptxas(log, label)
    if proc.returncode != 0:
        lines = log.splitlines()
        # the first errors, and where the first was instantiated (a static_assert names kD there)
        errors = [line for line in lines if "error" in line][:2] + [line.strip() for line in lines if "instantiation of" in line][:1]
        record.update(ok=False, error=f"nvcc exited with {proc.returncode}: {' | '.join(errors or lines[-5:])}")
        return record
    record.update(ok=True, library=library)
    if cuobjdump:
        record["sass"] = sass_counts(cuobjdump, library)
    return record


def print_build(record):
    if not record["ok"]:
        print(f"build {record['name']}: FAILED: {record['error']}", flush=True)
        return
    regs = ", ".join(f"{i['instance']} {i.get('registers')}" for i in record["instances"])
    local = sum(i.get("stack_bytes", 0) + i.get("spill_stores", 0) + i.get("spill_loads", 0) for i in record["instances"])
    print(f"build {record['name']} ({' '.join(record['flags']) or 'no flags'}, {record['seconds']} s): registers {regs}; "
          f"stack+spills {local} bytes; SASS {record.get('sass', 'not read (no cuobjdump)')}", flush=True)
    for w in record["warnings"]:
        print(f"build {record['name']}: ptxas: {w}", flush=True)


# -- checks and timing on the GPU --


class LibraryCtx:
    """The harness's context as cuda_variants' factories use it: a CUDA run whose library is ours."""

    device = "cuda"
    interpret = False

    def __init__(self, library):
        self._library = library

    def library(self, variant):
        return self._library


def wait(torch, event, what, poll=None):
    """Waits for `event`, calling `poll` (when given) every POLL_S meanwhile; a call still running
    after HANG_S seconds is taken for a hang."""
    deadline = time.monotonic() + HANG_S
    while not event.query():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: no result after {HANG_S} s (a hang?)")
        if poll is not None:
            poll()
        time.sleep(POLL_S)


def check(torch, fn, inputs, out, tolerance, what):
    """rel L2 and max |error| of one call's output against SDPA in fp32, batch by batch."""
    import torch.nn.functional as F

    out.fill_(float("nan"))
    result = fn(inputs, out)
    done = torch.cuda.Event()
    done.record()
    wait(torch, done, what)
    num = den = 0.0
    worst = 0.0
    for b in range(result.shape[0]):
        q, k, v = (inputs[n][b : b + 1].float() for n in ("q", "k", "v"))
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=bool(inputs["causal"]))
        err = result[b : b + 1].float() - ref
        num += float(err.square().sum())
        den += float(ref.square().sum())
        worst = max(worst, float(err.abs().max()))
    rel = math.sqrt(num / den) if den > 0 else float("inf")
    ok = math.isfinite(rel) and rel <= tolerance
    return {"rel_l2": rel, "max_abs": worst, "tolerance": tolerance, "ok": ok}


@functools.cache
def nvml():
    """The harness's environment.Nvml for device 0 when it reads (NVML and a CUDA device), else None;
    made once per process."""
    from kernelgate_harness.environment import Nvml

    handle = Nvml(0)
    return handle if handle.ok else None


def sm_clock_reader():
    """A callable that reads the SM clock in MHz through NVML, or None."""
    return nvml().sm_clock_mhz if nvml() else None


def power_reader():
    """A callable that reads the board's power in W through NVML, or None."""
    return nvml().power_w if nvml() else None


def round_orders(names, rounds, how, seed):
    """The runners' order in each of `rounds` rounds: `rotate` shifts the list by one per round, which
    keeps the cyclic order, so every runner follows the same predecessor in every round but the
    ones it opens; `shuffle` draws each round's order (random.Random(seed)), so predecessors vary.
    A runner behind a slow, cool kernel starts its burst at a higher clock than one behind a hot
    kernel at the power cap: with `rotate` a copy of the default build read 8 % faster at D64 than
    the default itself (H100, 2026-11-27, twelfth session, the build behind the slowest one)."""
    if how == "rotate":
        return [names[r % len(names):] + names[: r % len(names)] for r in range(rounds)]
    if how in ("williams", "williams-one"):
        # the harness's own orders (sampling.round_order): every runner behind every other one
        # equally often over a cycle of n rounds (2n for an odd n); williams-one: one labelling
        from kernelgate_harness.sampling import round_order

        return [round_order(names, r, relabel=how == "williams") for r in range(rounds)]
    rng = random.Random(seed)
    return [rng.sample(names, len(names)) for _ in range(rounds)]


def watch_burst(begin, end, read, what):
    """Waits for a queued burst (its start and end events) and reads the SM clock (`read`, MHz)
    while the GPU runs it: every POLL_S from when `begin` has completed until `end` has. The
    readings, in order; a burst shorter than a poll gets one, taken as it ends (the clock moves over
    milliseconds, so that reading is still the burst's). None without `read`. Until 2026-11-28 (the
    nineteenth session) the clock was read once, as the burst was queued: with --cool-ms that was
    the clock of the spin queued before it, not the burst's (docs/notes/kernel-gaps.md)."""
    if read is None:
        wait(None, end, what)
        return None
    readings, started = [], [False]

    def poll():
        started[0] = started[0] or begin.query()
        if started[0]:
            readings.append(read())

    wait(None, end, what, poll)
    return readings or [read()]


def time_runners(torch, runners, inputs, out, args, what, clock=None):
    """Warm-up then `rounds` rounds; in each, every runner times one burst (CUDA events), in the
    order round_orders gives (--order; seeded by `what`). ms per call per round, each burst's
    predecessor (`after`: None for a round's first), and the SM clock while each burst ran
    (watch_burst's readings, `sm_clock_trace`, and their median, `sm_clock_mhz`; `clock`, MHz,
    NVML's when None and readable): a kernel held at the power cap runs at a lower clock in
    back-to-back bursts than in the harness's single-call samples (docs/notes/kernel-gaps.md, the
    tenth session), and within a call its clock falls as the power cap's limiter acts."""
    clock = clock or sm_clock_reader()
    plan = {}
    for name, fn in runners:
        calls, start = 0, time.monotonic()
        while time.monotonic() - start < args.warmup_s or calls == 0:
            fn(inputs, out)
            done = torch.cuda.Event()
            done.record()
            wait(torch, done, f"{what}: {name} warm-up")
            calls += 1
        per_call_ms = 1000 * (time.monotonic() - start) / calls
        plan[name] = max(1, math.ceil(args.burst_ms / per_call_ms))
    samples = {name: [] for name, _ in runners}
    clocks = {name: [] for name, _ in runners}
    traces = {name: [] for name, _ in runners}
    after = {name: [] for name, _ in runners}
    fns = dict(runners)
    orders = round_orders([name for name, _ in runners], args.rounds, args.order, what)
    cool_cycles = int(args.cool_ms * SPIN_CYCLES_PER_MS)
    for r, order in enumerate(orders):
        for i, name in enumerate(order):
            fn = fns[name]
            after[name].append(order[i - 1] if i else None)
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if cool_cycles:
                torch.cuda._sleep(cool_cycles)  # the burst starts as the spin ends: the host's launch hidden too
            begin.record()
            for _ in range(plan[name]):
                fn(inputs, out)
            end.record()
            readings = watch_burst(begin, end, clock, f"{what}: {name} round {r}")
            if readings is not None:
                traces[name].append(readings)
                clocks[name].append(statistics.median(readings))
            samples[name].append(begin.elapsed_time(end) / plan[name])
    timing = {
        name: {"calls_per_burst": plan[name], "samples_ms": samples[name], "median_ms": statistics.median(samples[name]), "after": after[name]}
        for name, _ in runners
    }
    # the harness's balanced estimate (stats.balanced): the mean over the predecessors of the median behind each
    for t in timing.values():
        est = balanced(t["samples_ms"], [a or "" for a in t["after"]])
        if est is not None:
            t["balanced_ms"], t["balanced_groups"] = est
    for name, mhz in clocks.items():
        if mhz:
            timing[name]["sm_clock_mhz"] = mhz
            timing[name]["sm_clock_trace"] = traces[name]
            timing[name]["median_sm_clock_mhz"] = statistics.median(mhz)
    return timing


SETTLE_LEADS = ("cool", "hot")
SETTLE_AFTER = ("reset", "flush")  # what --settle-leads' "+..." does between a lead and the calls
GEMM_N = 8192  # the hot lead's GEMM: fp16 8192^3, about 1.6 ms on an H100, at the power cap


def settle_leads(text):
    """--settle-leads' value: [lead, ...], each "cool", "hot" or a runner's name (checked against the
    case's runners when the settle runs), optionally "+reset" or "+flush"; no repeats."""
    leads = [x.strip() for x in text.split(",")]
    for lead in leads:
        base, plus, after = lead.partition("+")
        if not base or (plus and after not in SETTLE_AFTER):
            raise argparse.ArgumentTypeError(
                f"{lead!r}: expected cool, hot or a runner's name, optionally followed by +reset or +flush"
            )
    if len(set(leads)) != len(leads):
        raise argparse.ArgumentTypeError(f"{text!r}: a lead named twice")
    return leads


def cudart_reset_persisting_l2(torch):
    """A function that waits for the GPU, then calls cudaCtxResetPersistingL2Cache (every L2 line
    marked persisting, evict_last among them, made normal) in the runtime torch loaded."""
    import ctypes
    import glob

    paths = ["libcudart.so.13", "libcudart.so.12"]
    try:
        import nvidia  # the wheels' runtime, where torch found it

        for root in nvidia.__path__:
            paths += sorted(glob.glob(os.path.join(root, "*", "lib", "libcudart.so.*")))
    except ImportError:
        pass
    for path in paths:
        try:
            fn = ctypes.CDLL(path).cudaCtxResetPersistingL2Cache
            break
        except (OSError, AttributeError):
            continue
    else:
        raise SystemExit("--settle-leads ...+reset: no CUDA runtime found (libcudart.so.13 or .12) with cudaCtxResetPersistingL2Cache")

    def reset():
        torch.cuda.synchronize()
        rc = fn()
        if rc != 0:
            raise RuntimeError(f"cudaCtxResetPersistingL2Cache returned {rc}")

    return reset


def settle_runners(torch, runners, inputs, out, args, what, power=None, l2_reset=None):
    """--settle: in each of args.rounds repetitions, every (runner, lead) pair in a shuffled order
    (seeded by `what`): the lead (cool: a spin of args.lead_ms at little power; hot: fp16 GEMMs for
    as long, the power cap's load; a runner's name: that runner's calls for about as long; "+reset":
    then `l2_reset()`, by default cudart_reset_persisting_l2's; "+flush": then a write over four
    times the L2), then args.settle calls of the runner back to back, each between its own events.
    The leads are args.settle_leads (cool and hot when absent). {runner: {lead: [[ms of call 0,
    1, ...] per repetition]}}, and NVML's power (`power`, W) read as each sequence ends. A call's
    time after a cool lead against the same runner's after a hot one says how much the time
    depends on what ran before it (the harness's rounds put every variant behind every other one,
    some of them cool); the last calls are the runner's time at its own steady power."""
    leads = list(getattr(args, "settle_leads", None) or SETTLE_LEADS)
    names = [name for name, _ in runners]
    for lead in leads:
        base = lead.partition("+")[0]
        if base not in SETTLE_LEADS and base not in names:
            raise SystemExit(f"--settle-leads: {lead!r}: {base!r} is neither cool, hot nor a runner of {what} ({', '.join(names)})")
    a = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=torch.float16)
    b = torch.randn(GEMM_N, GEMM_N, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    torch.matmul(a, b, out=c)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        torch.matmul(a, b, out=c)
    stop.record()
    stop.synchronize()
    gemms = max(1, math.ceil(args.lead_ms / (start.elapsed_time(stop) / 5)))
    spin = int(args.lead_ms * SPIN_CYCLES_PER_MS)
    fns = dict(runners)
    for name, fn in runners:  # warm: clocks settle as power reaches its cap
        t0 = time.monotonic()
        while time.monotonic() - t0 < args.warmup_s:
            fn(inputs, out)
            done = torch.cuda.Event()
            done.record()
            wait(torch, done, f"{what}: {name} warm-up")
    lead_calls = {}  # a runner lead's calls: about args.lead_ms of them, from three timed after the warm-up
    for base in dict.fromkeys(lead.partition("+")[0] for lead in leads):
        if base not in SETTLE_LEADS:
            start.record()
            for _ in range(3):
                fns[base](inputs, out)
            stop.record()
            wait(torch, stop, f"{what}: {base} as a lead")
            lead_calls[base] = max(1, math.ceil(args.lead_ms / (start.elapsed_time(stop) / 3)))
    if any(lead.endswith("+reset") for lead in leads) and l2_reset is None:
        l2_reset = cudart_reset_persisting_l2(torch)
    flush = None
    if any(lead.endswith("+flush") for lead in leads):
        flush = torch.empty(4 * torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size, dtype=torch.uint8, device="cuda")
    pairs = [(name, lead) for name, _ in runners for lead in leads]
    rng = random.Random(what)
    result = {name: {lead: [] for lead in leads} for name, _ in runners}
    watts = {name: {lead: [] for lead in leads} for name, _ in runners}
    for r in range(args.rounds):
        for name, lead in rng.sample(pairs, len(pairs)):
            base, _, after = lead.partition("+")
            if base == "cool":
                torch.cuda._sleep(spin)
            elif base == "hot":
                for _ in range(gemms):
                    torch.matmul(a, b, out=c)
            else:
                for _ in range(lead_calls[base]):
                    fns[base](inputs, out)
            if after == "reset":
                l2_reset()
            elif after == "flush":
                flush.zero_()
            events = [torch.cuda.Event(enable_timing=True) for _ in range(args.settle + 1)]
            events[0].record()
            for k in range(args.settle):
                fns[name](inputs, out)
                events[k + 1].record()
            wait(torch, events[-1], f"{what}: {name} after {lead}, repetition {r}")
            if power is not None:
                watts[name][lead].append(power())
            result[name][lead].append([events[k].elapsed_time(events[k + 1]) for k in range(args.settle)])
    del a, b, c
    doc = {"calls": args.settle, "lead_ms": args.lead_ms, "hot_lead_gemms": gemms, "runners": result}
    if lead_calls:
        doc["lead_calls"] = lead_calls
    if power is not None:
        doc["power_w_at_end"] = watts
    return doc


def settle_summary(doc):
    """{runner: {lead: [median ms of call k over the repetitions]}} and each runner's steady time:
    the median of its calls in the second half of every sequence, both leads."""
    per_call, steady = {}, {}
    for name, leads in doc["runners"].items():
        per_call[name] = {lead: [statistics.median(seq[k] for seq in seqs) for k in range(doc["calls"])] for lead, seqs in leads.items() if seqs}
        tail = [seq[k] for seqs in leads.values() for seq in seqs for k in range(doc["calls"] // 2, doc["calls"])]
        steady[name] = statistics.median(tail) if tail else None
    return per_call, steady


def print_settle(cid, doc, reference="sdpa_default"):
    per_call, steady = settle_summary(doc)
    for name, leads in per_call.items():
        for lead, ms in leads.items():
            print(f"{cid}: {name:<14} after {lead:<4} " + " ".join(f"{x:7.3f}" for x in ms), flush=True)
    ref = steady.get(reference)
    for name, ms in steady.items():
        if ms and ref:
            print(f"{cid}: {name:<14} steady {ms:9.4f} ms {ref / ms:6.3f}x {reference}", flush=True)


PROBE_SOURCE = REPO / "scripts" / "clock_probe.cu"
PROBE_SAMPLES = 4096  # readings a probe holds at most
PROBE_SLICES = 10  # the call's clock in this many equal slices of its time
PROBE_PERTURBED = 1.03  # probed calls this much longer than the timing's median: the probe slowed them


def build_probe(nvcc, workdir):
    """scripts/clock_probe.cu as a shared library: {ok, library | error, command}."""
    library = str(Path(workdir) / "clock_probe.so")
    cmd = [nvcc, *NVCC_ARGS, "-gencode=arch=compute_90a,code=sm_90a", "-o", library, str(PROBE_SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).splitlines()
        return {"ok": False, "command": " ".join(cmd), "error": f"nvcc exited with {proc.returncode}: {' | '.join(lines[-3:])}"}
    return {"ok": True, "command": " ".join(cmd), "library": library}


def clock_over(samples, begin_ns, end_ns, slices=PROBE_SLICES):
    """The SM clock during a call from a probe's readings ([(global ns, SM cycles)], in order) and
    the call's bounds on the same timer (begin_ns, end_ns): `mean_mhz` (the cycles between the
    first and last reading inside the call over their nanoseconds), `slices_mhz` (the same in each
    of `slices` equal parts of the call; None where a part holds fewer than two readings),
    `covered` (the share of the call between the first and last reading inside it: below 1 when
    the probe started late or ended early) and `call_ms`. mean_mhz None without two readings inside."""
    inside = [(t, c) for t, c in samples if begin_ns <= t <= end_ns]
    span = end_ns - begin_ns
    out = {"call_ms": span / 1e6, "readings": len(inside), "mean_mhz": None, "slices_mhz": [None] * slices, "covered": 0.0}
    if len(inside) < 2 or span <= 0:
        return out
    (t0, c0), (t1, c1) = inside[0], inside[-1]
    out["mean_mhz"] = 1000.0 * (c1 - c0) / (t1 - t0) if t1 > t0 else None
    out["covered"] = (t1 - t0) / span
    for k in range(slices):
        lo, hi = begin_ns + span * k / slices, begin_ns + span * (k + 1) / slices
        part = [(t, c) for t, c in inside if lo <= t <= hi]
        if len(part) >= 2 and part[-1][0] > part[0][0]:
            out["slices_mhz"][k] = 1000.0 * (part[-1][1] - part[0][1]) / (part[-1][0] - part[0][0])
    return out


class ClockProbe:
    """scripts/clock_probe.cu through ctypes (--clock-probe): one call of a runner with the probe
    beside it on a second stream and a time stamp before and after it on its own."""

    def __init__(self, torch, library):
        import ctypes

        self.torch = torch
        self.lib = ctypes.CDLL(library)
        self.lib.kg_clock_probe.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
        self.lib.kg_clock_stamp.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.buf = torch.zeros(2 * PROBE_SAMPLES, dtype=torch.int64, device="cuda")
        self.count = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.stamps = torch.zeros(2, dtype=torch.int64, device="cuda")
        self.side = torch.cuda.Stream()
        # One launch first: the library's kernels load at their first launch, which else delays
        # the first probe past the call beside it (runs 168 and 169: no readings inside it)
        self._ok(self.lib.kg_clock_probe(self.buf.data_ptr(), 2, 0, 0, self.count.data_ptr(), self.side.cuda_stream), "the clock probe's warm-up")
        self._ok(self.lib.kg_clock_stamp(self.stamps.data_ptr(), self.side.cuda_stream), "the clock probe's warm-up")
        self.side.synchronize()

    def _ok(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: the clock probe's launch returned CUDA error {rc}")

    def measure(self, fn, inputs, out, call_ms, cool_cycles, what):
        """clock_over of one call of fn, `cool_cycles` of spin before it as in the timing."""
        torch = self.torch
        main = torch.cuda.current_stream()
        if cool_cycles:
            torch.cuda._sleep(cool_cycles)
        ready = torch.cuda.Event()
        ready.record()
        self.side.wait_event(ready)
        period_ns = max(2000, int(call_ms * 1e6 / (PROBE_SAMPLES // 4)))
        duration_ns = int(call_ms * 1e6 * 2) + 1_000_000
        self._ok(self.lib.kg_clock_probe(self.buf.data_ptr(), PROBE_SAMPLES, duration_ns, period_ns, self.count.data_ptr(), self.side.cuda_stream), what)
        self._ok(self.lib.kg_clock_stamp(self.stamps.data_ptr(), main.cuda_stream), what)
        fn(inputs, out)
        self._ok(self.lib.kg_clock_stamp(self.stamps.data_ptr() + 8, main.cuda_stream), what)
        done, side_done = torch.cuda.Event(), torch.cuda.Event()
        done.record()
        side_done.record(self.side)
        wait(torch, done, what)
        wait(torch, side_done, f"{what} (clock probe)")
        n = int(self.count.item())
        samples = [tuple(pair) for pair in self.buf[: 2 * n].view(n, 2).tolist()]
        begin, end = self.stamps.tolist()
        return clock_over(samples, begin, end)


def probe_runners(probe, runners, inputs, out, args, timing, what):
    """--clock-probe N: N probed calls of each timed runner, in round-robin order, each behind the
    timing's --cool-ms spin: {runner: [clock_over, ...]}; the median of each runner's means printed."""
    cool_cycles = int(args.cool_ms * SPIN_CYCLES_PER_MS)
    result = {name: [] for name, _ in runners}
    for i in range(args.clock_probe):
        for name, fn in runners:
            result[name].append(probe.measure(fn, inputs, out, timing[name]["median_ms"], cool_cycles, f"{what}: {name} probe {i}"))
    for name, got in result.items():
        means = [g["mean_mhz"] for g in got if g["mean_mhz"] is not None]
        # A grid of one block per SM (a persistent kernel's) waits for the SM the probe holds:
        # its calls run longer beside the probe, and their clock is not the timing's
        longer = statistics.median(g["call_ms"] for g in got) / timing[name]["median_ms"] if got else 1.0
        for g in got:
            g["perturbed"] = longer > PROBE_PERTURBED
        if got and longer > PROBE_PERTURBED:
            print(f"{what}: {name:<14} SM clock as run (probe): not kept: its calls ran {longer:.2f}x as long beside the probe "
                  "(a grid that needs every SM)", flush=True)
        elif means:
            first = [g["slices_mhz"][0] for g in got if g["slices_mhz"][0] is not None]
            last = [g["slices_mhz"][-1] for g in got if g["slices_mhz"][-1] is not None]
            ends = f", first tenth {statistics.median(first):.0f}" if first else ""
            ends += f", last tenth {statistics.median(last):.0f}" if last else ""
            print(f"{what}: {name:<14} SM clock as run (probe): {statistics.median(means):.0f} MHz{ends}", flush=True)
        else:
            print(f"{what}: {name:<14} SM clock as run (probe): no readings inside the call", flush=True)
    return result


def profile_runners(torch, runners, inputs, out, what):
    """--profile: one call of each runner inside the NVTX range PROFILE_RANGE (what ncu's
    --nvtx-include PROFILE_RANGE/ profiles), in order; their names."""
    for name, fn in runners:
        torch.cuda.nvtx.range_push(PROFILE_RANGE)
        fn(inputs, out)
        torch.cuda.nvtx.range_pop()
        done = torch.cuda.Event()
        done.record()
        wait(torch, done, f"{what}: {name} (profiled)")
    return [name for name, _ in runners]


def gpu_facts():
    fields = "name,serial,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,pci.device_id"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return {"nvidia_smi_error": str(e)}
    first = (out.stdout.strip().splitlines() or [""])[0]
    return dict(zip(fields.split(","), (v.strip() for v in first.split(",")), strict=False)) | {"nvidia_smi_rc": out.returncode}


def check_candidates(candidates, params, cid, tolerance, check_one, record, failures):
    """Makes each candidate's runner (factory(params, ctx)) and checks one call of it (check_one(fn,
    name): the check's record, into record["checks"]); a failure is printed and added to `failures`.
    The runners that passed, in order. A TimeoutError (a hang) goes up: run_gpu stops the run."""
    runners = []
    for name, factory, ctx in candidates:
        try:
            fn = factory(params, ctx)
            result = check_one(fn, name)
        except TimeoutError:
            raise
        except Exception as e:  # a refused case or launch, an illegal address: that build's failure on this case
            result = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        record["checks"][name] = result
        if result["ok"]:
            runners.append((name, fn))
        else:
            why = result.get("error") or f"rel_l2 {result['rel_l2']:.3g} > {tolerance:g}"
            failures.append(f"{cid}: {name}: check failed: {why}")
            print(failures[-1], flush=True)
    return runners


def instance_of(library, params, sms):
    """The instance a build's kg_attention_fa_wgmma takes for a case on a device of `sms` SMs, as the
    library names it (kg_fa_wgmma_instance: "D64 causal snake"); None for a library without that
    entry (the builds before the twenty-second session) or one that refuses the case."""
    import ctypes

    try:
        entry = ctypes.CDLL(library).kg_fa_wgmma_instance
    except (OSError, AttributeError):
        return None
    entry.restype = ctypes.c_int
    name = ctypes.create_string_buffer(64)
    seq_k = params.get("Sk", params["S"])  # the keys, when a case has its own (kernels/attention/bench.py)
    rc = entry(params["B"], params["H"], params["S"], seq_k, params["D"], int(bool(params["causal"])), sms, name, len(name))
    return name.value.decode() if rc == 0 else None


class MixCtx(LibraryCtx):
    """The harness's context for --mix's variants: each CUDA variant's own library."""

    def library(self, variant):
        return self._library[variant]


def mix_libraries(args, manifest):
    """--mix: {variant: library} for the manifest's CUDA variants other than the one the builds
    replace, built once per run (build_variant, no flags) into a directory kept for the run; a build
    that fails is printed and left out."""
    if getattr(args, "mix_libs", None) is None:
        nvcc, workdir = find_nvcc(), tempfile.mkdtemp(prefix="fa-experiment-mix-")
        args.mix_libs = {}
        for v in manifest.variants:
            if v["name"] != VARIANT and v.get("build"):
                b = build_variant(MANIFEST, v["name"], lambda m: m, "mix", [], manifest, workdir, nvcc, None)
                if b["ok"]:
                    args.mix_libs[v["name"]] = b["library"]
                else:
                    print(f"--mix: {v['name']}: {b['error']}", flush=True)
    return args.mix_libs


ROUNDED_SUFFIX = "@bf16grid"


def rounded_to_bf16_grid(inputs):
    """q, k and v of fp16 inputs rounded to bf16 (an 8-bit significand, round to nearest even) and back
    to fp16, exactly (bf16's values in fp16's range are fp16 values, bar the subnormals of neither):
    the same tensors with the low three bits of every significand zero."""
    import torch

    return {n: t.to(dtype=torch.bfloat16).to(dtype=t.dtype) for n, t in inputs.items()}


def on_inputs(fn, inputs, out):
    """A runner that ignores the inputs and output it is given and calls fn on these (its own)."""
    return lambda _inputs, _out: fn(inputs, out)


def run_case(torch, case, builds, manifest, args, failures):
    from kernels.attention import bench, cuda_variants

    params, cid = case["params"], case["id"]
    tolerance = float(manifest.tolerance[params["dtype"]]["rel_l2"])
    inputs = bench.make_inputs(params, SEED, "cuda")
    out = torch.empty_like(inputs["q"])
    flops = bench.work(params)["flops"]
    record = {"id": cid, "params": params, "flops": flops, "checks": {}, "timing": {}}
    # which instance each build's library takes here (dispatch()'s choice on this device)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    record["instances"] = {b["name"]: instance_of(b["library"], params, sms) for b in builds if b["ok"]}
    if any(record["instances"].values()):
        print(f"{cid}: instances: " + ", ".join(f"{n}={i}" for n, i in record["instances"].items()), flush=True)
    checked = {**inputs, "causal": params["causal"]}
    # factories, made inside the try: loading a library can fail as much as running it
    candidates = [(b["name"], cuda_variants.cuda_fa_wgmma, LibraryCtx(b["library"])) for b in builds if b["ok"]]
    candidates.append(("sdpa_default", bench.VARIANTS["sdpa_default"], LibraryCtx(None)))
    runners = check_candidates(
        candidates, params, cid, tolerance, lambda fn, name, out=out: check(torch, fn, checked, out, tolerance, f"{cid}: {name}"), record, failures
    )
    if getattr(args, "mix", False):
        # the harness's other variants, checked like the rest; a refusal is the variant's, not the run's
        ctx = MixCtx(mix_libraries(args, manifest))
        others = [(v["name"], bench.VARIANTS[v["name"]], ctx) for v in manifest.variants if v["name"] not in (VARIANT, "sdpa_default")]
        refused = []
        runners += check_candidates(
            others, params, cid, tolerance, lambda fn, name, out=out: check(torch, fn, checked, out, tolerance, f"{cid}: {name}"), record, refused
        )
        record["mix_refused"] = refused
    if getattr(args, "rounded_inputs", False) and params["dtype"] == "fp16":
        # the same runners on the rounded inputs, checked there, timed in the same rounds
        rounded, rounded_out = rounded_to_bf16_grid(inputs), out.new_empty(out.shape)
        again = [(name + ROUNDED_SUFFIX, lambda p, c, fn=fn: on_inputs(fn, rounded, rounded_out), None) for name, fn in runners]
        runners += check_candidates(
            again,
            params,
            cid,
            tolerance,
            lambda fn, name: check(torch, fn, {**rounded, "causal": params["causal"]}, rounded_out, tolerance, f"{cid}: {name}"),
            record,
            failures,
        )
    if args.profile:
        # the headline shape only: the tails are checked, not profiled
        if all(params[k] == v for k, v in HEADLINE.items()):
            record["profiled"] = profile_runners(torch, runners, inputs, out, cid)
    elif args.settle and any(name == "sdpa_default" for name, _ in runners):
        record["settle"] = settle_runners(torch, runners, inputs, out, args, cid, power_reader())
        print_settle(cid, record["settle"])
    elif any(name == "sdpa_default" for name, _ in runners):
        record["timing"] = time_runners(torch, runners, inputs, out, args, cid)
        ref_ms = record["timing"]["sdpa_default"]["median_ms"]
        ref_bal = record["timing"]["sdpa_default"].get("balanced_ms")
        for name, t in record["timing"].items():
            t["tflops"] = flops / (t["median_ms"] * 1e-3) / 1e12
            t["ratio_to_sdpa_default"] = ref_ms / t["median_ms"]
            rel = record["checks"][name]["rel_l2"]
            speed = f"{t['median_ms']:9.4f} ms {t['tflops']:7.1f} TFLOPS {t['ratio_to_sdpa_default']:6.3f}x SDPA default"
            if getattr(args, "mix", False) and ref_bal and t.get("balanced_ms"):
                t["balanced_ratio_to_sdpa_default"] = ref_bal / t["balanced_ms"]
                speed += f", balanced {t['balanced_ms']:9.4f} ms {t['balanced_ratio_to_sdpa_default']:6.3f}x"
            print(f"{cid}: {name:<14} {speed} (rel_l2 {rel:.2e})", flush=True)
        if getattr(args, "probe", None) is not None:
            record["clock_probe"] = probe_runners(args.probe, runners, inputs, out, args, record["timing"], cid)
    del inputs, out
    torch.cuda.empty_cache()
    return record


def write(path, doc):
    if path:
        tmp = f"{path}.tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)


def main(argv):
    args = parse_args(argv)
    manifest = load_manifest(str(MANIFEST))
    return run_experiment("fa-experiment.py", argv, args, manifest, build, select_cases(args.wanted, args.seqs, args.shapes), run_case)


def run_experiment(tool, argv, args, manifest, build_one, cases, run_one):
    """The builds (build_one, in parallel), then, unless --dry-run, each case on the GPU (run_one);
    the JSON written after each case. 1 when a build or a check failed, 2 without nvcc; a hang
    ends the process (exit status 3)."""
    nvcc = find_nvcc()
    if nvcc is None:
        print(f"{tool}: nvcc not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin", file=sys.stderr)
        return 2
    utc = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    doc = {"tool": f"scripts/{tool}", "argv": argv, "utc": utc, "dry_run": args.dry_run}
    failures = []
    with tempfile.TemporaryDirectory(prefix=tool.removesuffix(".py") + "-") as workdir:
        cuobjdump = find_cuobjdump()
        with ThreadPoolExecutor(max_workers=max(1, min(len(args.builds), os.cpu_count() or 1))) as pool:
            jobs = [pool.submit(build_one, name, flags, manifest, workdir, nvcc, cuobjdump) for name, flags in args.builds.items()]
            builds = [j.result() for j in jobs]
        for b in builds:
            print_build(b)
            if not b["ok"]:
                failures.append(f"build {b['name']}: {b['error']}")
        args.probe_library = None
        if args.clock_probe:
            doc["clock_probe_build"] = built = build_probe(nvcc, workdir)
            if built["ok"]:
                args.probe_library = built["library"]
            else:
                failures.append(f"build of the clock probe: {built['error']}")
                print(failures[-1], flush=True)
        doc.update(builds=builds, failures=failures)
        if not args.dry_run:
            run_gpu(args, builds, manifest, doc, failures, cases, run_one)
        write(args.out, doc)
    return 1 if failures else 0


def run_gpu(args, builds, manifest, doc, failures, cases, run_one):
    import torch

    doc["gpu"] = gpu_facts() | {"torch_name": torch.cuda.get_device_name(0)}
    doc["torch"] = torch.__version__
    doc["cases"] = []
    args.probe = ClockProbe(torch, args.probe_library) if args.probe_library else None
    for case in cases:
        try:
            doc["cases"].append(run_one(torch, case, builds, manifest, args, failures))
        except TimeoutError as e:
            failures.append(str(e))
            print(f"{e}; stopping (the GPU may be stuck: nothing after this ran)", flush=True)
            write(args.out, doc)
            os._exit(3)  # a hung kernel cannot be interrupted; leaving the process frees the GPU
        write(args.out, doc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
