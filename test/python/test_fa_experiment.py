"""scripts/fa-experiment.py on the CPU: its argument errors name the bad value, its cases are the
manifest's, ptxas's report is read per kernel instance, a build whose output is off fails its check
and is left out of the timing (run_case on the CPU, CUDA events stood in for), and with --dry-run (nvcc, no GPU) the default
(the producer warpgroup, 176 keys in the non-causal D128 instances, three consumer warpgroups at
D64), the 256-thread form, 128 keys everywhere and two consumers at D64 compile without spills,
stack or serialised wgmma, 192 keys in the non-causal D64 instances builds but spills (and, with P
passed through shared memory, builds clean), while a ring too deep for shared memory and a key tile
with no wgmma instance fail alone, with the static_assert's reason."""

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import types

import pytest
from experiment_support import on_the_cpu, recorded_experiment, recorded_ncu

from conftest import REPO
from kernelgate_harness.manifest import load_manifest

SCRIPT = os.path.join(REPO, "scripts", "fa-experiment.py")
spec = importlib.util.spec_from_file_location("fa_experiment", SCRIPT)
fa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fa)

NVCC = fa.find_nvcc()


def run(*args):
    # a guard against a hang, not a speed bar: the dry run compiles some 45 builds of 24 instances
    # (9-11 minutes alone on a 2-core machine, longer on a busy one)
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=2400)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--build", "ws"], "--build ws: expected NAME=FLAGS"),
        (["--build", "w s=-DX"], "--build w s=-DX: NAME must be letters, digits, '_' or '-', got 'w s'"),
        (["--build", "ws=KG_FA_STAGES=3"], "--build ws=KG_FA_STAGES=3: flag 'KG_FA_STAGES=3' must start with '-' (e.g. -DKG_FA_STAGES=3)"),
        (["--build", "a=", "--build", "a=-DX"], "--build a=-DX: the name a is given twice"),
        (["--build", "a=", "--cases", "D=96", "--dry-run"], "--cases D=96: D=96 is not one of 128, 64"),
        (["--build", "a=", "--cases", "heads=3", "--dry-run"], "--cases heads=3: 'heads=3' is not KEY=VALUE with KEY one of dtype, D, causal"),
        (["--build", "a=", "--rounds", "0", "--out", "x.json"], "--rounds 0: must be at least 1"),
        (["--build", "a=", "--cool-ms", "-1", "--out", "x.json"], "--cool-ms -1.0: must be 0 or more"),
        (["--build", "a=", "--cool-ms", "nan", "--out", "x.json"], "--cool-ms nan: must be 0 or more"),
        (["--build", "a=", "--clock-probe", "-1", "--out", "x.json"], "--clock-probe -1: must be 0 or more"),
        (["--build", "a="], "--out: required unless --dry-run"),
        (["--dry-run"], "--build: give at least one, e.g. --build base="),
    ],
)
def test_argument_errors_name_the_bad_value(args, message):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == f"fa-experiment.py: error: {message}"


def test_builds_split_their_flags_on_commas():
    assert fa.parse_build("base=") == ("base", [])
    assert fa.parse_build("ws3=-DKG_FA_PRODUCER_WG=1,-DKG_FA_STAGES=3") == ("ws3", ["-DKG_FA_PRODUCER_WG=1", "-DKG_FA_STAGES=3"])


def test_the_cases_are_the_manifests_headline_first_then_the_tails():
    manifest_ids = {c.id for c in load_manifest(str(fa.MANIFEST)).cases}
    cases = fa.select_cases({})
    assert len(cases) == 24
    assert {c["id"] for c in cases} <= manifest_ids
    assert [c["params"]["S"] for c in cases] == [4096] * 8 + [1000] * 8 + [77] * 8
    narrowed = fa.select_cases(fa.parse_cases("dtype=bf16,D=64,causal=true"))
    assert [c["id"] for c in narrowed] == [
        "dtype=bf16,B=16,H=96,S=4096,D=64,causal=true",
        "dtype=bf16,B=2,H=3,S=1000,D=64,causal=true",
        "dtype=bf16,B=2,H=3,S=77,D=64,causal=true",
    ]
    # a key given twice keeps either value
    assert len(fa.select_cases(fa.parse_cases("D=64,D=128,causal=false"))) == 12


# What nvcc 13.0 printed for one instance of the warp-specialised build (-Xptxas -v), and the
# warning ptxas gives when it serialises wgmma (the wording the build stage parses, inspect.ts).
FN = "_ZN44_GLOBAL__N__db334923_11_fa_wgmma_cu_62f15b6b15fa_wgmma_kernelI13__nv_bfloat16Li64ELb1EEEv14CUtensorMap_stS2_S2_PT_iiif"
PTXAS = f"""ptxas info    : Compiling entry function '{FN}' for 'sm_90a'
ptxas info    : Function properties for {FN}
    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers
ptxas warning : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the presence of Extern calls in the function 'f'
"""


def test_ptxas_report_is_read_per_instance():
    instances, warnings = fa.parse_ptxas(PTXAS)
    assert instances == [{"instance": "bf16 D64 causal", "stack_bytes": 0, "spill_stores": 8, "spill_loads": 4, "registers": 168}]
    assert warnings == [PTXAS.splitlines()[-1]]


def test_the_key_tile_is_named_only_when_it_is_not_128():
    # the kernel's fourth template argument, kBlockN (<T, kD, kCausal, kBlockN>)
    name = FN.replace("Li64ELb1EEEv", "Li128ELb0ELi{}EEEv")
    assert fa.parse_ptxas(f"Compiling entry function '{name.format(176)}'")[0] == [{"instance": "bf16 D128 N176"}]
    assert fa.parse_ptxas(f"Compiling entry function '{name.format(128)}'")[0] == [{"instance": "bf16 D128"}]
    # nvcc 13.0's names since kShort (<..., kLastN, kShort>): the causal D128 instance of 128-key tiles
    # on the persistent grid (KG_FA_CAUSAL_SHORT_KEYS_D128) is "persistent", its CTA-per-item twin not
    short = "_ZN44_GLOBAL__N__2b_fa_wgmma_kernelI6__halfLi128ELb1ELi128ELi2ELi128ELb{}EEEv14CUtensorMap_stS2_S2_S2_PT_iiifPj"
    assert fa.parse_ptxas(f"Compiling entry function '{short.format(1)}'")[0] == [{"instance": "fp16 D128 causal persistent"}]
    assert fa.parse_ptxas(f"Compiling entry function '{short.format(0)}'")[0] == [{"instance": "fp16 D128 causal"}]
    n160 = short.replace("Li128ELi2ELi128ELb{}", "Li160ELi2ELi160ELb{}").format(0)
    assert fa.parse_ptxas(f"Compiling entry function '{n160}'")[0] == [{"instance": "fp16 D128 causal N160"}]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    if NVCC is None:
        pytest.skip("nvcc is not installed")
    out = tmp_path_factory.mktemp("fa") / "fa.json"
    r = run(
        "--dry-run", "--build", "base=", "--build", "old=-DKG_FA_PRODUCER_WG=0", "--build", "n128=-DKG_FA_BLOCK_N=128",
        "--build", "deep=-DKG_FA_STAGES=4", "--build", "bn144=-DKG_FA_BLOCK_N=144", "--build", "wg2=-DKG_FA_D64_WG3=0",
        "--build", "wg3old=-DKG_FA_D64_WG3=1,-DKG_FA_PRODUCER_WG=0", "--build", "pers=-DKG_FA_PERSISTENT=1",
        "--build", "stg=-DKG_FA_TMA_STORE=0", "--build", "tmapers=-DKG_FA_TMA_STORE=1,-DKG_FA_PERSISTENT=1",
        "--build", "d64n192=-DKG_FA_D64_BLOCK_N=192", "--build", "d64bad=-DKG_FA_D64_BLOCK_N=160",
        "--build", "psmem=-DKG_FA_D64_BLOCK_N=192,-DKG_FA_D64_P_SMEM=1", "--build", "psbad=-DKG_FA_D64_P_SMEM=1,-DKG_FA_D64_WG3=0",
        "--build", "clu=-DKG_FA_CLUSTER_M=2", "--build", "clupers=-DKG_FA_CLUSTER_M=2,-DKG_FA_PERSISTENT=1",
        "--build", "p4=-DKG_FA_POLY_EXP=4", "--build", "q4=-DKG_FA_POLY_EXP_D128=4", "--build", "pbad=-DKG_FA_POLY_EXP=17",
        "--build", "lz8=-DKG_FA_LAZY_RESCALE=8", "--build", "lzbad=-DKG_FA_LAZY_RESCALE=17",
        "--build", "ovfit=-DKG_FA_FORCE_OVERLAP=3,-DKG_FA_D128_P_SMEM=1,-DKG_FA_D64_P_SMEM=1",
        "--build", "nl0=-DKG_FA_NARROW_LAST=0", "--build", "nd=-DKG_FA_NARROW_DIAG=1,-DKG_FA_CAUSAL_BLOCK_N_D128=128",
        "--build", "pc=-DKG_FA_PERSISTENT_CAUSAL=1,-DKG_FA_CAUSAL_BLOCK_N_D128=128",
        "--build", "pcbad=-DKG_FA_PERSISTENT_CAUSAL=1,-DKG_FA_TMA_STORE=0,-DKG_FA_CAUSAL_BLOCK_N_D128=128",
        "--build", "c128=-DKG_FA_CAUSAL_BLOCK_N_D128=128", "--build", "c176=-DKG_FA_CAUSAL_BLOCK_N_D128=176",
        "--build", "pcwide=-DKG_FA_PERSISTENT_CAUSAL=1", "--build", "cbad=-DKG_FA_CAUSAL_BLOCK_N_D128=144",
        "--build", "c160=-DKG_FA_CAUSAL_BLOCK_N_D128=160",
        "--build", "p160=-DKG_FA_CAUSAL_BLOCK_N_D128=160,-DKG_FA_PERSISTENT_CAUSAL_D128=3,-DKG_FA_PERSISTENT_ORDER=2,-DKG_FA_UNIFORM_ITEM=1",
        "--build", "p3at192=-DKG_FA_PERSISTENT_CAUSAL_D128=3,-DKG_FA_CAUSAL_BLOCK_N_D128=192",
        "--build", "b192=-DKG_FA_CAUSAL_BLOCK_N_D128=192", "--build", "p0=-DKG_FA_PERSISTENT_CAUSAL_D128=0",
        "--build", "pnc=-DKG_FA_BLOCK_N=160,-DKG_FA_PERSISTENT_NONCAUSAL_D128=3", "--build", "pncbad=-DKG_FA_PERSISTENT_NONCAUSAL_D128=3",
        "--build", "ord0=-DKG_FA_PERSISTENT_ORDER=0", "--build", "pq=-DKG_FA_PREFETCH_Q=1",
        "--build", "nc2=-DKG_FA_NARROW_CAUSAL=2", "--build", "nc2b=-DKG_FA_NARROW_CAUSAL=2,-DKG_FA_CAUSAL_BLOCK_N_D128=192",
        "--build", "dyn=-DKG_FA_PERSISTENT_CAUSAL=2,-DKG_FA_CAUSAL_BLOCK_N_D128=128,-DKG_FA_PERSISTENT_ORDER=2,-DKG_FA_UNIFORM_ITEM=0",
        "--build", "dynu=-DKG_FA_PERSISTENT_CAUSAL=2,-DKG_FA_CAUSAL_BLOCK_N_D128=128,-DKG_FA_PERSISTENT_ORDER=2,-DKG_FA_UNIFORM_ITEM=1",
        "--build", "ds=-DKG_FA_DESC_STAGE=1", "--build", "dsbad=-DKG_FA_DESC_STAGE=2",
        "--build", "ordbad=-DKG_FA_PERSISTENT_ORDER=3", "--clock-probe", "1",
        "--out", str(out),
    )
    return r, json.loads(out.read_text())


D64 = {f"{t} D64{c}" for t in ("fp16", "bf16") for c in ("", " causal", " causal snake", " causal per item")}
# the causal D64 instances beside the persistent grid's order 2 (the twenty-second session): the
# snake's and a CTA per item's, which builds without that grid (no producer warpgroup, no TMA
# store, KG_FA_PERSISTENT) do not have
D64_EXTRA = {f"{t} D64 causal {v}" for t in ("fp16", "bf16") for v in ("snake", "per item")}


def test_the_builds_compile_clean_and_a_too_deep_ring_or_a_tile_without_wgmma_fails_alone(dry_run):
    r, doc = dry_run
    assert r.returncode == 1  # some builds failed (the static assertions'); the others went on
    builds = {b["name"]: b for b in doc["builds"]}
    # the builds whose causal D128 instance of 160 keys runs the persistent grid (the default since
    # the twenty-first session) beside a CTA-per-item instance of 192 keys and the persistent grid's
    # 128-key instance of the shorter sequences (kShort, KG_FA_CAUSAL_SHORT_KEYS_D128)
    cta192 = ("base", "n128", "wg2", "nl0", "ord0", "pq", "ds", "c160", "p160")
    for name in ("base", "old", "n128", "wg2", "pers", "stg", "nl0", "nd", "pc", "c128", "c176", "ord0", "pq", "nc2b", "dyn", "dynu", "ds",
                 "c160", "p160", "b192", "p0"):
        b = builds[name]
        assert b["ok"], b.get("error")
        assert b["warnings"] == []  # no C7514-like "wgmma serialized"
        # two more where the last key tile may be computed 64 keys wide (KG_FA_NARROW_LAST: the
        # non-causal D128 instances of 176 keys, not in the persistent grid), two more where the
        # causal D128 tile is wider than 128 keys (KG_FA_CAUSAL_BLOCK_N_D128: the 128-key instance
        # stays, for sequences of at most 128 keys), four more beside the persistent grid's 160-key
        # tiles (KG_FA_CAUSAL_CTA_BLOCK_N_D128: 192 keys, a CTA per item, for calls of at most one
        # item per SM; kShort: 128 keys on the persistent grid), and four more causal D64 ones beside
        # the persistent grid's order 2 (the snake's, kSnake, and a CTA per item's, kPerItem; two
        # under KG_FA_PERSISTENT_ORDER=0, which has no snake of its own), none without that grid;
        # and four more causal D128 ones beside the 160-key persistent grid's order 2 (the snake's
        # on 160- and on 128-key tiles: KG_FA_D128_SNAKE_ITEMS)
        n = (8 + (0 if name in ("n128", "pers", "nl0") else 2) + (0 if name in ("c128", "nd", "pc", "dyn", "dynu") else 2)
             + (4 if name in cta192 else 0) + (0 if name in ("old", "pers", "stg") else 2 if name == "ord0" else 4)
             + (4 if name in cta192 and name != "ord0" else 0))
        assert len(b["instances"]) == n, name
        for inst in b["instances"]:
            assert (inst["stack_bytes"], inst["spill_stores"], inst["spill_loads"]) == (0, 0, 0), inst
    regs = {name: {i["instance"]: i["registers"] for i in builds[name]["instances"]} for name in builds if builds[name]["ok"]}
    # The default: the producer warpgroup, 176 keys in the two non-causal D128 instances (384 threads:
    # 65536 / 384 rounded down to 8 at launch), 160 in the causal ones on the persistent grid, 192
    # in their CTA-per-item instances and 128 for the shortest sequences (a CTA per item) and the
    # shorter ones (the persistent grid), three consumer warpgroups at D64 (512 threads: 128, the
    # three causal instances alike)
    assert regs["base"] == {
        **{f"{t} D128 N176": 168 for t in ("fp16", "bf16")},
        **{f"{t} D128 N176 last64": 168 for t in ("fp16", "bf16")},
        **{f"{t} D128 causal N160": 168 for t in ("fp16", "bf16")},
        **{f"{t} D128 causal persistent": 168 for t in ("fp16", "bf16")},
        **{f"{t} D128 causal N160 snake": 168 for t in ("fp16", "bf16")},
        **{f"{t} D128 causal persistent snake": 168 for t in ("fp16", "bf16")},
        **{f"{t} D128 causal N192": 168 for t in ("fp16", "bf16")},
        **{f"{t} D128 causal": 168 for t in ("fp16", "bf16")},
        **dict.fromkeys(D64, 128),
    }
    # 192 keys, a CTA per item (the default from the sixteenth to the twentieth session): the
    # default without its persistent instances (160 keys, and 128 for the shorter sequences)
    assert regs["b192"] == {i: r for i, r in regs["base"].items() if "N160" not in i and "persistent" not in i}
    # the causal D128 tile of 128 keys (the default until the sixteenth session): one instance each
    assert regs["c128"] == {i: r for i, r in regs["b192"].items() if "N192" not in i}
    assert regs["c176"] == {i.replace("N192", "N176"): r for i, r in regs["b192"].items()}
    # 160 keys (the twentieth session) on the persistent grid with two Q buffers and the output staged
    # in the item's own (KG_FA_PERSISTENT_CAUSAL_D128=3): what the default now builds; p160, the
    # twentieth session's flags for it, the same registers; without the persistent grid (p0) 160
    # keys a CTA per item, and no 192-key instance beside them
    assert regs["c160"] == regs["p160"] == regs["base"]
    assert regs["p0"] == {i.replace("N192", "N160"): r for i, r in regs["b192"].items()}
    # 128 keys without the mask: no N176 instance, the D64 and causal ones unchanged
    assert regs["n128"] == {**{i: 168 for i in regs["n128"] if "D128" in i}, **dict.fromkeys(D64, 128)}
    assert not any("N176" in i for i in regs["n128"])
    # two consumer warpgroups at D64: 384 threads there too
    assert set(regs["wg2"]) == set(regs["base"]) and set(regs["wg2"].values()) == {168}
    # the persistent grid, the threads' stores instead of the TMA store: the same registers at launch
    # (both on 192-key causal tiles: KG_FA_PERSISTENT_CAUSAL_D128's grid needs the TMA store)
    assert regs["pers"] == {i: r for i, r in regs["b192"].items() if "last64" not in i and i not in D64_EXTRA}
    assert regs["nl0"] == {i: r for i, r in regs["base"].items() if "last64" not in i}
    assert regs["stg"] == {i: r for i, r in regs["b192"].items() if i not in D64_EXTRA} and regs["b192"] == regs["nc2b"]
    assert regs["base"] == regs["pq"] == regs["nc2"]
    assert regs["ord0"] == {i: r for i, r in regs["base"].items() if "snake" not in i}
    # KG_FA_NARROW_CAUSAL=2 in the persistent grid's 160-key instances of order 2: ptxas serialises
    # their wgmmas (C7511, one line per instance), not their snake twins' (kSnake, Li4E; why not
    # was not looked into); with 192-key tiles (nc2b) clean
    c7511 = "(C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline"
    assert len(builds["nc2"]["warnings"]) == 2
    assert all(c7511 in w and "Li128ELb1ELi160ELi2ELi160ELi0EE" in w for w in builds["nc2"]["warnings"])
    assert regs["nd"] == regs["pc"] == regs["c128"]
    # the 256-thread form (KG_FA_D64_WG3 follows KG_FA_PRODUCER_WG, so D64 has two consumers there)
    # 222: the two N176 instances (224 their last64); 158: D64 without the mask, its key loop
    # unrolled by two tiles (KG_FA_UNROLL_KEYS_D64, 154 before); 234 the causal N192 ones
    assert set(regs["old"].values()) == {186, 154, 158, 222, 224, 234}
    assert "-DKG_FA_PRODUCER_WG=0" in builds["old"]["command"]
    wg3old = builds["wg3old"]
    assert not wg3old["ok"] and "KG_FA_D64_WG3 needs the producer warpgroup" in wg3old["error"]
    deep = builds["deep"]
    assert not deep["ok"]
    assert "static assertion failed" in deep["error"] and "KG_FA_STAGES" in deep["error"] and "kD=128" in deep["error"]
    bn144 = builds["bn144"]
    assert not bn144["ok"]
    assert "static assertion failed" in bn144["error"] and "KG_FA_BLOCK_N must be 96, 128, 160, 176 or 192" in bn144["error"]
    # the non-causal D128 instances on the persistent grid of KG_FA_PERSISTENT_CAUSAL 3 (the twentieth
    # session): clean at 160 keys (no last64 instance: the persistent grid takes none), the same
    # registers; refused beside the default's 176-key rings
    assert builds["pnc"]["ok"] and builds["pnc"]["warnings"] == [], builds["pnc"].get("error")
    assert regs["pnc"] == {i.replace("N176", "N160"): r for i, r in regs["base"].items() if "last64" not in i}
    assert (
        'static assertion failed with "KG_FA_PERSISTENT_NONCAUSAL_D128: 0, or 3 with KG_FA_TMA_STORE, the producer '
        'warpgroup, neither KG_FA_PERSISTENT nor KG_FA_CLUSTER_M, and -DKG_FA_BLOCK_N=160 or 128"' in builds["pncbad"]["error"]
    )
    tmapers = builds["tmapers"]
    assert not tmapers["ok"] and "KG_FA_TMA_STORE writes the output through the Q buffer" in tmapers["error"]
    pcbad = builds["pcbad"]
    assert not pcbad["ok"]
    assert "KG_FA_PERSISTENT_CAUSAL needs KG_FA_TMA_STORE, the producer warpgroup, and not KG_FA_PERSISTENT" in pcbad["error"]
    # the persistent causal D128 grid's second Q buffer and O buffer beside 192-key rings: refused
    pcwide, cbad = builds["pcwide"], builds["cbad"]
    assert not pcwide["ok"] and not cbad["ok"]
    # and mode 3 beside them too (it fits at 160 keys)
    refused = (
        'static assertion failed with "KG_FA_PERSISTENT_CAUSAL_D128 needs -DKG_FA_CAUSAL_BLOCK_N_D128=128, or 160 with '
        "KG_FA_PERSISTENT_CAUSAL_D128=3 (the persistent grid's Q and O buffers do not fit beside wider rings)\""
    )
    assert refused in pcwide["error"] and refused in builds["p3at192"]["error"]
    assert 'static assertion failed with "KG_FA_CAUSAL_BLOCK_N_D128 must be 128, 160, 176 or 192"' in cbad["error"]
    # 192 keys in the non-causal D64 instances (named N192, as N176): the same registers at launch
    # (65536 / 512), but they spill. At 160 registers a consumer thread cannot hold S(j + 1) (96 fp32),
    # P(j) (48 packed pairs, read by the P V wgmma in flight) and O (32) at once: 176 before any
    # address or softmax state. ptxas (nvcc 13.0) spills and serialises every wgmma of those two
    # instances (C7512, an "info" line parse_ptxas keeps with the warnings, one per instance
    # hit); the other six are the default's.
    d64n192 = builds["d64n192"]
    assert d64n192["ok"], d64n192.get("error")
    assert len(d64n192["warnings"]) == 2
    c7512 = "(C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources"
    assert all(c7512 + " for the function" in w and "Li64ELb0ELi192E" in w for w in d64n192["warnings"])
    assert regs["d64n192"] == {
        **{i: r for i, r in regs["base"].items() if i not in ("fp16 D64", "bf16 D64")},
        **{f"{t} D64 N192": 128 for t in ("fp16", "bf16")},
    }
    local = {i["instance"]: (i["stack_bytes"], i["spill_stores"], i["spill_loads"]) for i in d64n192["instances"]}
    assert local == {i: (224, 400, 400) if "D64 N192" in i else (0, 0, 0) for i in regs["d64n192"]}
    d64bad = builds["d64bad"]
    assert not d64bad["ok"]
    assert "static assertion failed" in d64bad["error"] and "KG_FA_D64_BLOCK_N must be 64, 96, 128 or 192" in d64bad["error"]
    # The same 192-key tile with P passed through shared memory (KG_FA_D64_P_SMEM, FlashAttention-3's
    # form there): each consumer warpgroup stores P into a buffer of its own and P V is an SS wgmma,
    # so P's 48 registers are not live across S(j + 1). No stack, no spills, no serialised wgmma
    # (nvcc 13.0), the same registers at launch; without KG_FA_D64_BLOCK_N=192 the static_assert.
    psmem = builds["psmem"]
    assert psmem["ok"], psmem.get("error")
    assert psmem["warnings"] == []
    assert regs["psmem"] == regs["d64n192"]
    for inst in psmem["instances"]:
        assert (inst["stack_bytes"], inst["spill_stores"], inst["spill_loads"]) == (0, 0, 0), inst
    # refused with two consumer warpgroups at D64
    psbad = builds["psbad"]
    assert not psbad["ok"]
    assert "static assertion failed" in psbad["error"] and "KG_FA_D64_P_SMEM needs KG_FA_D64_BLOCK_N=192 or 128" in psbad["error"]
    # Clusters of two CTAs at the non-causal instances, K and V multicast (KG_FA_CLUSTER_M): the same
    # registers, clean; refused with the persistent grid
    clu = builds["clu"]
    assert clu["ok"] and clu["warnings"] == [] and regs["clu"] == regs["base"], clu.get("error")
    for inst in clu["instances"]:
        assert (inst["stack_bytes"], inst["spill_stores"], inst["spill_loads"]) == (0, 0, 0), inst
    clupers = builds["clupers"]
    assert not clupers["ok"]
    assert "KG_FA_CLUSTER_M must be 1 or 2, and 2 needs the producer warpgroup and not KG_FA_PERSISTENT" in clupers["error"]
    assert doc["failures"] == [
        f"build deep: {deep['error']}", f"build bn144: {bn144['error']}", f"build wg3old: {wg3old['error']}", f"build tmapers: {tmapers['error']}",
        f"build d64bad: {d64bad['error']}", f"build psbad: {psbad['error']}", f"build clupers: {clupers['error']}",
        f"build pbad: {builds['pbad']['error']}", f"build lzbad: {builds['lzbad']['error']}", f"build pcbad: {pcbad['error']}",
        f"build pcwide: {pcwide['error']}", f"build cbad: {cbad['error']}", f"build p3at192: {builds['p3at192']['error']}",
        f"build pncbad: {builds['pncbad']['error']}",
        f"build dsbad: {builds['dsbad']['error']}",
        f"build ordbad: {builds['ordbad']['error']}",
    ]
    assert 'static assertion failed with "KG_FA_PERSISTENT_ORDER: 0, 1 or 2"' in builds["ordbad"]["error"]
    # the persistent causal grid claiming its items at run time (KG_FA_PERSISTENT_ORDER 2): the
    # persistent build's registers, clean (checked above)
    assert regs["dyn"] == regs["pc"]
    # its item kept in a uniform register (KG_FA_UNIFORM_ITEM): the same, and REDUX where order 2 reads it
    assert regs["dynu"] == regs["dyn"]
    # K and V descriptors advanced to their stage once per tile (KG_FA_DESC_STAGE): clean; 2 is no value
    assert not builds["dsbad"]["ok"] and 'static assertion failed with "KG_FA_DESC_STAGE: 0 or 1"' in builds["dsbad"]["error"]
    if "sass" in builds["dyn"]:
        # 64 R2UR in dyn's fp16 D128 causal instance alone, 5 in dynu's (the nineteenth session)
        assert builds["dynu"]["sass"]["REDUX"] > 0 == builds["dyn"]["sass"]["REDUX"]
        assert builds["dyn"]["sass"]["R2UR"] - builds["dynu"]["sass"]["R2UR"] > 100
    assert "KG_FA_LAZY_RESCALE, KG_FA_LAZY_RESCALE_D128: 0 (off) to 16" in builds["lzbad"]["error"]
    assert "KG_FA_POLY_EXP, KG_FA_POLY_EXP_D128: 0 to 16 groups of every 16" in builds["pbad"]["error"]
    # a quarter of the exponentials on the FMA pipe (KG_FA_POLY_EXP): clean, the same registers
    # the conditional rescaling (KG_FA_LAZY_RESCALE), and the forced overlap where overlap_fits() lets
    # it in (the D128 causal and all D64 instances, P through shared memory): clean (no C7512: ptxas
    # did not serialise the wgmmas), the same registers
    for name in ("p4", "q4", "lz8", "ovfit"):
        assert builds[name]["ok"] and builds[name]["warnings"] == [] and regs[name] == regs["base"], builds[name].get("error")
        for inst in builds[name]["instances"]:
            assert (inst["stack_bytes"], inst["spill_stores"], inst["spill_loads"]) == (0, 0, 0), inst
    assert "gpu" not in doc and "cases" not in doc  # --dry-run times nothing


def test_the_clock_probe_builds_beside_the_builds(dry_run):
    """--clock-probe builds scripts/clock_probe.cu for sm_90a with the builds (--dry-run too)."""
    _, doc = dry_run
    built = doc["clock_probe_build"]
    assert built["ok"], built.get("error")
    assert "-gencode=arch=compute_90a,code=sm_90a" in built["command"] and built["command"].endswith("scripts/clock_probe.cu")


def test_the_clock_over_a_call_comes_from_the_probe_readings_inside_it():
    """clock_over: cycles over nanoseconds between the first and last reading inside the call's
    stamps (1 cycle a ns is 1000 MHz), per tenth of the call too; readings outside are ignored; a
    probe that ran beside no part of the call gives no clock, and says it covered none of it."""
    # 0-10 us at 2 cycles/ns, 10-20 us at 1.5; a reading every us, and two outside the call
    samples, c = [], 0.0
    for t in range(21):
        samples.append((1_000_000 + 1000 * t, int(c)))
        c += 2000 if t < 10 else 1500
    samples = [(990_000, 0), *samples, (1_050_000, 10**9)]
    got = fa.clock_over(samples, 1_000_000, 1_020_000)
    assert got["readings"] == 21 and got["call_ms"] == 0.02 and got["covered"] == 1.0
    assert got["mean_mhz"] == pytest.approx(1750.0)
    assert got["slices_mhz"][:5] == [pytest.approx(2000.0)] * 5 and got["slices_mhz"][5:] == [pytest.approx(1500.0)] * 5
    late = fa.clock_over(samples[15:], 1_000_000, 1_020_000)  # the probe began 14 us into the call
    assert late["covered"] == pytest.approx(0.3) and late["slices_mhz"][:7] == [None] * 7
    none = fa.clock_over([(2_000_000, 5), (2_001_000, 7)], 1_000_000, 1_020_000)
    assert none == {"call_ms": 0.02, "readings": 0, "mean_mhz": None, "slices_mhz": [None] * 10, "covered": 0.0}


def test_the_sass_holds_hgmma_and_only_the_producer_warpgroup_sets_its_registers(dry_run):
    _, doc = dry_run
    builds = {b["name"]: b for b in doc["builds"]}
    if "sass" not in builds["base"]:
        pytest.skip("no cuobjdump (neither the toolkit's nor the Triton wheel's)")
    # (each with D64 without the mask's key loop unrolled by two tiles, KG_FA_UNROLL_KEYS_D64: the
    # loop's 12 twice more in each of its two instances, two tiles and the odd one's remainder;
    # 224 and 236 before; and 168 more in the two causal N192 instances, 152 in the two N160 and 64
    # in the two persistent 128-key ones, below; and 96 in the four causal D64 ones beside order 2,
    # the snake's and a CTA per item's, 24 each as the order-2 one: S(0) 4, the loop's S and P V
    # 4 + 8, the last tile's P V 8; and 216 in the four causal D128 snake instances, 76 on 160-key
    # tiles and 32 on 128-key ones as their order-2 twins)
    d64x = 2 * 2 * 24
    d128x = 2 * (76 + 32)
    assert builds["n128"]["sass"]["HGMMA"] == 272 + 168 + 152 + 64 + d64x + d128x
    assert builds["nl0"]["sass"]["HGMMA"] == 284 + 168 + 152 + 64 + d64x + d128x
    assert builds["old"]["sass"]["USETMAXREG"] == 0
    assert builds["base"]["sass"]["USETMAXREG"] == 48  # one dec, one inc in each of the 24 instances
    # KG_FA_CAUSAL_BLOCK_N_D128: each causal instance of 192 keys holds 84 wgmmas: S(0) 8 (the head
    # dim's k-steps, m64n192k16), the loop's S 8 and P V 12, the last step twice (KG_FA_NARROW_CAUSAL
    # picks it at run time: S 64 keys wide and P V 12, or 192 wide and 12), the last tile's P V 4 or
    # 12; at 176 keys 80 (P V 11 k-steps); at 128 (c128, the old default) 32 (S(0) 8, S and P V 8 + 8,
    # the last P V 8), an instance which the default keeps for sequences of at most 128 keys
    # the old default's two; the persistent grid's 160-key instances 76 each (S(0) 8, the loop's S 8
    # and P V 10, the last step twice (S 8 and P V 10 each), the last tile's P V 4 or 10), its
    # 128-key ones (kShort) 32 as the CTA-per-item 128-key ones
    c128, b192 = builds["c128"]["sass"], builds["b192"]["sass"]
    assert b192["HGMMA"] == c128["HGMMA"] + 2 * 84 and builds["base"]["sass"]["HGMMA"] == b192["HGMMA"] + 2 * 76 + 2 * 32 + d128x
    assert builds["p0"]["sass"]["HGMMA"] == c128["HGMMA"] + 2 * 76
    assert builds["c176"]["sass"]["HGMMA"] == c128["HGMMA"] + 2 * 80
    assert c128["HGMMA"] == 384 + d64x and c128["USETMAXREG"] == 28 and c128["UTMASTG"] == 20
    # KG_FA_NARROW_CAUSAL=2: each causal N192 instance's third choice of last step, 128 keys wide (S 8
    # k-steps of m64n128k16, P V 12) and last tile (P V 8): 28 more wgmmas; each N160 one's 26 (P V 10)
    assert builds["nc2b"]["sass"]["HGMMA"] == b192["HGMMA"] + 2 * 28
    assert builds["nc2"]["sass"]["HGMMA"] == builds["base"]["sass"]["HGMMA"] + 2 * 28 + 2 * 2 * 26
    # the Q prefetch: the same wgmmas, register moves and stores; order 0 at both head dims the same
    # less the snake's six instances (per dtype: D64's 24 wgmmas, a dec and an inc, one store, 5
    # loads; D128's on 160-key tiles 76, 2, 2, 10 and on 128-key ones 32, 2, 2, 10)
    keys = ("HGMMA", "USETMAXREG", "UTMASTG", "UTMALDG")
    assert {k: builds["pq"]["sass"][k] for k in keys} == {k: builds["base"]["sass"][k] for k in keys}
    assert {k: builds["ord0"]["sass"][k] for k in keys} == {
        k: builds["base"]["sass"][k] - 2 * d for k, d in zip(keys, (24 + 76 + 32, 2 + 2 + 2, 1 + 2 + 2, 5 + 10 + 10), strict=True)
    }
    # 176 keys: each non-causal D128 instance has 6 more: P V's 11 k-steps instead of 8, twice
    # (the loop and the last tile); S stays 8 k-steps (the head dim), now m64n176k16
    assert builds["nl0"]["sass"]["HGMMA"] == builds["n128"]["sass"]["HGMMA"] + 2 * 6
    # KG_FA_NARROW_LAST: each of the two last64 instances holds 50: S(0) 8, the loop's S 8 and P V
    # 11, the last step's S 8 (m64n64k16) and P V 11, the last tile's P V 4 (64 keys); the
    # 256-thread form has them too
    assert builds["base"]["sass"]["HGMMA"] == builds["nl0"]["sass"]["HGMMA"] + 2 * 50
    assert builds["old"]["sass"]["HGMMA"] == b192["HGMMA"] - d64x
    # two or three consumer warpgroups: the same wgmmas, one dec and one inc per instance
    assert builds["wg2"]["sass"]["HGMMA"] == builds["base"]["sass"]["HGMMA"] and builds["wg2"]["sass"]["USETMAXREG"] == 48
    # the persistent grid: the same wgmmas and register moves, an item loop around them (and no
    # last64 instances: ptxas serialised their wgmmas there, C7511); its causal D128 tiles 192 keys
    assert builds["pers"]["sass"]["HGMMA"] == builds["nl0"]["sass"]["HGMMA"] - 2 * 76 - 2 * 32 - d64x - d128x
    assert builds["pers"]["sass"]["USETMAXREG"] == 20
    # the TMA-store epilogue (the default since run 105): a bulk store per 64-column box of each
    # instance's output (two at D128, one at D64: 2 x 12 + 4; 2 x 8 + 4 in the old default); the
    # threads' stores (=0) and the persistent grid (which turns it off) have none, and the old
    # default's wgmmas (192-key causal tiles: the persistent causal D128 grid needs the TMA store)
    assert builds["stg"]["sass"]["HGMMA"] == b192["HGMMA"] - d64x and b192["UTMASTG"] == 24
    assert builds["base"]["sass"]["UTMASTG"] == 40 and builds["stg"]["sass"]["UTMASTG"] == builds["pers"]["sass"]["UTMASTG"] == 0
    # the causal instances persistent with the TMA store kept (KG_FA_PERSISTENT_CAUSAL): the same
    # wgmmas and stores; the first warpgroup's 64-key diagonal (KG_FA_NARROW_DIAG): each causal D128
    # instance 68 instead of 32 (S(0) 8, the loop's S and P V 8 + 8, the last step twice, 64 and 128
    # keys wide, 16 + 16, the last tile's P V 4 and 8): 36 more per dtype. Both on 128-key causal
    # tiles (the persistent grid's buffers do not fit beside 192-key rings; the narrow diagonal
    # needs the tile to be the CTA's rows)
    assert builds["pc"]["sass"]["HGMMA"] == c128["HGMMA"] and builds["pc"]["sass"]["UTMASTG"] == 20
    assert builds["nd"]["sass"]["HGMMA"] == c128["HGMMA"] + 2 * 36
    for name in ("base", "old", "n128", "wg2", "pers", "stg", "b192", "p0"):
        assert builds[name]["sass"]["LDL"] == builds[name]["sass"]["STL"] == 0
    # 192 keys at D64 without the causal mask: each of the two instances has 8 more: P V's 12
    # k-steps instead of 8, twice (the loop and the last tile); S stays 4 k-steps (the head dim),
    # now m64n192k16. Its spills are local loads and stores (nvcc 13.0: 50 and 94 per instance).
    # The default's unrolled key loop (24 more a D64 instance) is not taken with 192 keys.
    d64n192 = builds["d64n192"]["sass"]
    assert d64n192["HGMMA"] == builds["base"]["sass"]["HGMMA"] - 2 * 24 + 2 * 2 * (12 - 8)
    assert d64n192["USETMAXREG"] == 48 and d64n192["UTMASTG"] == 40
    assert (d64n192["LDL"], d64n192["STL"]) == (100, 188)
    # P through shared memory: the same wgmmas in number (S 4 k-steps of m64n192k16, P V 12 of
    # m64n64k16, now with A from a descriptor, B still transposed), and no local loads or stores
    psmem = builds["psmem"]["sass"]
    assert psmem["HGMMA"] == d64n192["HGMMA"] and psmem["USETMAXREG"] == 48 and psmem["UTMASTG"] == 40
    assert psmem["LDL"] == psmem["STL"] == 0
    # KG_FA_CLUSTER_M: the four non-causal instances' K and V loads multicast (two 64-column boxes
    # each of K and V at D128, one at D64, each load twice in the producer's code: 2 x (2 + 2) twice
    # (the N176 instance and its last64) + 2 x (1 + 1) = 20 per dtype), the rest as the default's;
    # the default multicasts nothing
    base, clu = builds["base"]["sass"], builds["clu"]["sass"]
    assert base["MULTICAST"] == 0 and clu["MULTICAST"] == 40
    assert {k: v for k, v in clu.items() if k != "MULTICAST"} == {k: v for k, v in base.items() if k != "MULTICAST"}
    # KG_FA_POLY_EXP=4: 4 of every 16 column groups' exponentials leave the MUFU in the eight D64
    # instances (2 rows x 4 groups x 2 columns of 128 keys: 16 per softmax, which each causal
    # instance holds twice: the first tile's and the loop's; the two without the mask four times,
    # their key loop unrolled by two tiles with its remainder); KG_FA_POLY_EXP_D128=4 in the D128 ones (176
    # keys in the two non-causal: 22 groups, 5 of them taken; 128 in the three causal ones per
    # dtype (a CTA per item, the persistent grid's in order 2 and in the snake's): 4; the last64
    # instances' third softmax 64 keys: 8 groups, 2 taken; the causal N192 instances' four
    # softmaxes 192, 192, 64 and 192 keys: 6, 6, 2 and 6 groups; the two N160 ones' per dtype (order
    # 2 and the snake) 160, 160, 64 and 160: 5, 5, 2 and 5)
    p4, q4 = builds["p4"]["sass"], builds["q4"]["sass"]
    assert base["MUFU"] - p4["MUFU"] == 2 * 3 * 2 * 16 + 2 * 4 * 16
    assert base["MUFU"] - q4["MUFU"] == (
        2 * 2 * (2 * 5 * 2) + 2 * 3 * 2 * (2 * 4 * 2) + 2 * (2 * 2 * 5 * 2 + 2 * 2 * 2) + 2 * 2 * 2 * (6 + 6 + 2 + 6)
        + 2 * 2 * 2 * 2 * (5 + 5 + 2 + 5)
    )


def test_a_build_off_by_more_than_the_tolerance_fails_its_check_and_is_not_timed(monkeypatch, capsys):
    """run_case on the CPU: the builds are SDPA in fp32 written to the fp16 output, one of them
    shifted by 0.1; the reference, the tolerance (kernel.yml's), the rounds and the ratio are the script's."""
    import torch.nn.functional as F

    from kernels.attention import bench, cuda_variants

    fake_torch = on_the_cpu(monkeypatch, bench)

    def factory(params, ctx):
        def run(inputs, out):
            o = F.scaled_dot_product_attention(*(inputs[n].float() for n in ("q", "k", "v")), is_causal=params["causal"])
            return out.copy_(o + (0.1 if ctx.library("cuda_fa_wgmma") == "shifted.so" else 0.0))

        return run

    monkeypatch.setattr(cuda_variants, "cuda_fa_wgmma", factory)
    args = fa.parse_args(["--build", "x=", "--out", "unused.json", "--rounds", "3", "--warmup-s", "0"])
    case = fa.select_cases(fa.parse_cases("dtype=fp16,D=64,causal=true"))[-1]  # the S77 tail
    builds = [{"name": "good", "ok": True, "library": "good.so"}, {"name": "shifted", "ok": True, "library": "shifted.so"}]
    failures = []
    record = fa.run_case(fake_torch, case, builds, load_manifest(str(fa.MANIFEST)), args, failures)
    assert record["checks"]["good"]["ok"] and record["checks"]["good"]["tolerance"] == 2.0e-3
    assert record["checks"]["good"]["rel_l2"] < 2.0e-3
    assert not record["checks"]["shifted"]["ok"] and record["checks"]["shifted"]["rel_l2"] > 2.0e-3
    assert failures == [f"{case['id']}: shifted: check failed: rel_l2 {record['checks']['shifted']['rel_l2']:.3g} > 0.002"]
    assert sorted(record["timing"]) == ["good", "sdpa_default"]
    assert [len(t["samples_ms"]) for t in record["timing"].values()] == [3, 3]
    assert record["timing"]["sdpa_default"]["ratio_to_sdpa_default"] == 1.0
    assert record["flops"] == 4 * 2 * 3 * 77 * 77 * 64 / 2
    assert failures[0] in capsys.readouterr().out


def test_rounded_inputs_time_every_runner_again_on_the_bf16_grid(monkeypatch):
    """--rounded-inputs on the CPU: each runner that passed is checked and timed a second time, in the
    same rounds, on the inputs rounded to bf16 and back (NAME@bf16grid): fp16 tensors whose
    significands' low three bits are zero, within bf16's rounding of the originals; a bf16 case has
    no second set."""
    import torch
    import torch.nn.functional as F

    from kernels.attention import bench, cuda_variants

    fake_torch = on_the_cpu(monkeypatch, bench)
    seen = []

    def factory(params, ctx):
        def run(inputs, out):
            seen.append(inputs["q"])
            o = F.scaled_dot_product_attention(*(inputs[n].float() for n in ("q", "k", "v")), is_causal=params["causal"])
            return out.copy_(o)

        return run

    monkeypatch.setattr(cuda_variants, "cuda_fa_wgmma", factory)
    args = fa.parse_args(["--build", "x=", "--out", "unused.json", "--rounds", "4", "--warmup-s", "0", "--rounded-inputs"])
    case = fa.select_cases(fa.parse_cases("dtype=fp16,D=64,causal=true"))[-1]  # the S77 tail
    builds = [{"name": "base", "ok": True, "library": "base.so"}]
    record = fa.run_case(fake_torch, case, builds, load_manifest(str(fa.MANIFEST)), args, [])
    assert sorted(record["checks"]) == ["base", "base@bf16grid", "sdpa_default", "sdpa_default@bf16grid"]
    assert all(c["ok"] for c in record["checks"].values())
    assert sorted(record["timing"]) == sorted(record["checks"])
    assert all(len(t["samples_ms"]) == 4 for t in record["timing"].values())
    # the build saw both sets: the originals, and the rounded ones (bf16's values, in fp16)
    originals = [q for q in seen if not torch.equal(q, q.to(torch.bfloat16).to(q.dtype))]
    rounded = [q for q in seen if torch.equal(q, q.to(torch.bfloat16).to(q.dtype))]
    assert originals and rounded and all(q.dtype == torch.float16 for q in seen)
    bits = rounded[0].view(torch.int16)
    normal = (bits & 0x7C00) != 0
    assert int((bits[normal] & 0x7).count_nonzero()) == 0
    assert float((rounded[0].float() - originals[0].float()).abs().max()) <= float(originals[0].float().abs().max()) * 2.0**-8
    # bf16 cases: no second set
    args_bf16 = fa.select_cases(fa.parse_cases("dtype=bf16,D=64,causal=true"))[-1]
    record = fa.run_case(fake_torch, args_bf16, builds, load_manifest(str(fa.MANIFEST)), args, [])
    assert sorted(record["timing"]) == ["base", "sdpa_default"]


def test_mix_times_the_harness_variants_beside_and_grades_on_balanced_times(monkeypatch, capsys):
    """--mix on the CPU: kernel.yml's other variants are checked and timed in the same rounds (here one
    that runs, the rest refusing the case: noted in mix_refused, not failures); every runner gets the
    harness's balanced estimate (stats.balanced over its samples' predecessors), and the ratios printed
    are balanced too."""
    import torch.nn.functional as F

    from kernelgate_harness.stats import balanced
    from kernels.attention import bench, cuda_variants

    fake_torch = on_the_cpu(monkeypatch, bench)

    def works(params, ctx):
        def run(inputs, out):
            o = F.scaled_dot_product_attention(*(inputs[n].float() for n in ("q", "k", "v")), is_causal=params["causal"])
            return out.copy_(o)

        return run

    def refuses(params, ctx):
        raise ValueError("not on this case")

    monkeypatch.setattr(cuda_variants, "cuda_fa_wgmma", works)
    variants = dict.fromkeys(bench.VARIANTS, refuses) | {"sdpa_flash": works, "sdpa_default": bench.VARIANTS["sdpa_default"]}
    monkeypatch.setattr(bench, "VARIANTS", variants)
    monkeypatch.setattr(fa, "mix_libraries", lambda args, manifest: {})
    args = fa.parse_args(["--build", "x=", "--out", "unused.json", "--rounds", "6", "--warmup-s", "0", "--mix"])
    case = fa.select_cases(fa.parse_cases("dtype=fp16,D=64,causal=true"))[-1]  # the S77 tail
    failures = []
    record = fa.run_case(fake_torch, case, [{"name": "base", "ok": True, "library": "base.so"}], load_manifest(str(fa.MANIFEST)), args, failures)
    assert failures == []
    assert sorted(record["timing"]) == ["base", "sdpa_default", "sdpa_flash"]
    others = ["triton_fa2", "sdpa_cudnn", "sdpa_efficient", "cuda_fa2", "cublas_attn"]
    assert record["mix_refused"] == [f"{case['id']}: {v}: check failed: ValueError: not on this case" for v in others]
    for t in record["timing"].values():
        assert (t["balanced_ms"], t["balanced_groups"]) == balanced(t["samples_ms"], [a or "" for a in t["after"]])
        assert t["balanced_ratio_to_sdpa_default"] == record["timing"]["sdpa_default"]["balanced_ms"] / t["balanced_ms"]
    assert ", balanced " in capsys.readouterr().out


def test_the_recorded_h100_run_of_the_producer_warpgroup():
    """Run 88 (NVIDIA H100 80GB HBM3, 2026-11-27, docs/notes/kernel-gaps.md): every build passed its
    check on every shape, and the producer warpgroup (`ws`, now the default) was faster than the
    256-thread form (`base` then) on all eight headline cases, 1.17-1.28x, within 0.95-1.03x of SDPA
    default; why KG_FA_PRODUCER_WG defaults to 1."""
    import gzip
    import json

    with gzip.open(os.path.join(REPO, "test", "fixtures", "recorded", "fa-experiment-h100-run88", "fa.json.gz")) as f:
        doc = json.load(f)
    assert doc["gpu"]["name"] == "NVIDIA H100 80GB HBM3" and doc["failures"] == []
    assert len(doc["cases"]) == 24
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    headline = [c for c in doc["cases"] if c["params"]["S"] == 4096]
    assert len(headline) == 8
    gain = [c["timing"]["base"]["median_ms"] / c["timing"]["ws"]["median_ms"] for c in headline]
    assert 1.17 < min(gain) and max(gain) < 1.28
    vs_sdpa = [c["timing"]["ws"]["ratio_to_sdpa_default"] for c in headline]
    assert 0.95 < min(vs_sdpa) and max(vs_sdpa) < 1.03
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        assert "#define KG_FA_PRODUCER_WG 1\n" in f.read()


def test_the_recorded_h100_run_of_the_176_key_tile_and_three_consumer_warpgroups():
    """Run 90 (NVIDIA H100 80GB HBM3, 2026-11-27, docs/notes/kernel-gaps.md): every build passed its
    check on every shape; three consumer warpgroups (`wg3`) ran the four D64 headline cases
    1.02-1.13x as fast as two (`base` then), and the 176-key tile (`bn176`) the two non-causal D128
    ones 1.01-1.03x as fast as 128 keys: why both are now the defaults of fa_wgmma.cu (whose
    instances are, function by function, the SASS of those two builds)."""
    import gzip

    with gzip.open(os.path.join(REPO, "test", "fixtures", "recorded", "fa-experiment-h100-run90", "fa.json.gz")) as f:
        doc = json.load(f)
    assert doc["gpu"]["name"] == "NVIDIA H100 80GB HBM3" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "bn176", "wg3"]
    assert len(doc["cases"]) == 24
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    headline = [c for c in doc["cases"] if c["params"]["S"] == 4096]
    t = {(c["params"]["dtype"], c["params"]["D"], c["params"]["causal"]): c["timing"] for c in headline}
    d64 = [v["base"]["median_ms"] / v["wg3"]["median_ms"] for k, v in t.items() if k[1] == 64]
    assert len(d64) == 4 and 1.02 < min(d64) and max(d64) < 1.13
    d128 = [v["base"]["median_ms"] / v["bn176"]["median_ms"] for k, v in t.items() if k[1] == 128 and not k[2]]
    assert len(d128) == 2 and 1.01 < min(d128) and max(d128) < 1.03
    # against SDPA default, the same run: the new default's instances
    best = [v["wg3" if k[1] == 64 else "bn176"]["ratio_to_sdpa_default"] for k, v in t.items()]
    assert 0.99 < min(best) and max(best) < 1.09
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        src = f.read()
    assert "#define KG_FA_BLOCK_N 176\n" in src and "#define KG_FA_D64_WG3 KG_FA_PRODUCER_WG\n" in src


def test_the_recorded_h100_run_of_the_persistent_grid():
    """Run 96 (NVIDIA H100 80GB HBM3 serial 1753024038151, 2026-11-27, docs/notes/kernel-gaps.md):
    both builds passed their check on all 24 shapes; the persistent grid (`pers`,
    -DKG_FA_PERSISTENT=1) was within 0.985-1.005x of the default on the eight headline cases, so
    no gain: why KG_FA_PERSISTENT stays off."""
    import gzip

    with gzip.open(os.path.join(REPO, "test", "fixtures", "recorded", "fa-experiment-h100-run96", "fa.json.gz")) as f:
        doc = json.load(f)
    assert doc["gpu"]["serial"] == "1753024038151" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "pers"]
    assert len(doc["cases"]) == 24
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    headline = [c["timing"] for c in doc["cases"] if c["params"]["S"] == 4096]
    gain = [t["base"]["median_ms"] / t["pers"]["median_ms"] for t in headline]
    assert len(gain) == 8 and 0.984 < min(gain) and max(gain) < 1.005
    # the default against SDPA default in the same run: 0.99-1.08x
    base = [t["base"]["ratio_to_sdpa_default"] for t in headline]
    assert 0.99 < min(base) and max(base) < 1.09
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        assert "#define KG_FA_PERSISTENT 0\n" in f.read()


def test_the_recorded_h100_run_of_the_tma_store_epilogue():
    """Run 105 (NVIDIA H100 80GB HBM3 serial 1753124018107, 2026-11-27, docs/notes/kernel-gaps.md):
    the default then (`base`, the threads' stores), a second build of the same code (`base2`, what
    two builds differ by in the run) and the TMA-store epilogue (`tma`): every build passed its
    check on all 24 shapes; `tma` 2.3-4.4 % faster than either build of the default at D128 (causal
    or not), 0.0-1.1 % at D64, where base and base2 differed by up to 1.4 %: why KG_FA_TMA_STORE is
    now on. The script's bursts ran at a median SM clock of 1380-1628 MHz (the power cap)."""
    import gzip

    with gzip.open(os.path.join(REPO, "test", "fixtures", "recorded", "fa-experiment-h100-run105", "fa.json.gz")) as f:
        doc = json.load(f)
    assert doc["gpu"]["serial"] == "1753124018107" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "base2", "tma"]
    assert len(doc["cases"]) == 24
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    headline = {(c["params"]["dtype"], c["params"]["D"], c["params"]["causal"]): c["timing"] for c in doc["cases"] if c["params"]["S"] == 4096}
    assert len(headline) == 8
    gain = {k: [t[b]["median_ms"] / t["tma"]["median_ms"] for b in ("base", "base2")] for k, t in headline.items()}
    d128 = [g for k, v in gain.items() if k[1] == 128 for g in v]
    d64 = [g for k, v in gain.items() if k[1] == 64 for g in v]
    assert 1.022 < min(d128) and max(d128) < 1.045
    assert 0.999 < min(d64) and max(d64) < 1.012
    same = [t["base"]["median_ms"] / t["base2"]["median_ms"] for t in headline.values()]
    assert max(abs(x - 1) for x in same) < 0.015
    clocks = [t[b]["median_sm_clock_mhz"] for t in headline.values() for b in t]
    assert 1370 < min(clocks) and max(clocks) < 1630
    # against SDPA default in the same run: tma 1.003-1.075x
    ratio = [t["tma"]["ratio_to_sdpa_default"] for t in headline.values()]
    assert 1.003 < min(ratio) and max(ratio) < 1.076
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        assert "#define KG_FA_TMA_STORE (!KG_FA_PERSISTENT)\n" in f.read()


def test_each_burst_records_the_sm_clock_it_ran_at(monkeypatch):
    """time_runners reads the SM clock while each burst runs (after queuing it, before waiting for
    it): per round and runner, and its median; none when no clock can be read."""
    from kernels.attention import bench

    fake_torch = on_the_cpu(monkeypatch, bench)
    args = fa.parse_args(["--build", "x=", "--out", "unused.json", "--rounds", "4", "--warmup-s", "0", "--order", "rotate"])
    readings = iter([1980.0, 1410.0, 1965.0, 1395.0, 1950.0, 1400.0, 1940.0, 1420.0])
    runners = [("a", lambda inputs, out: out), ("b", lambda inputs, out: out)]
    timing = fa.time_runners(fake_torch, runners, {}, None, args, "case", clock=lambda: next(readings))
    # rounds rotate the order: a b, b a, a b, b a
    assert timing["a"]["sm_clock_mhz"] == [1980.0, 1395.0, 1950.0, 1420.0]
    assert timing["b"]["sm_clock_mhz"] == [1410.0, 1965.0, 1400.0, 1940.0]
    assert timing["a"]["median_sm_clock_mhz"] == (1420.0 + 1950.0) / 2
    monkeypatch.setattr(fa, "sm_clock_reader", lambda: None)
    plain = fa.time_runners(fake_torch, runners, {}, None, args, "case")
    assert "sm_clock_mhz" not in plain["a"] and len(plain["a"]["samples_ms"]) == 4


class Pending:
    """An event the GPU completes at its `done_at`-th query (0: already done)."""

    def __init__(self, done_at):
        self.left = done_at

    def query(self):
        self.left -= 1
        return self.left < 0


def test_the_clock_is_read_while_the_burst_runs_not_while_the_spin_before_it_does(monkeypatch):
    """watch_burst reads the clock from when the burst's start event has completed (the --cool-ms
    spin before it has ended) until its end event has: the spin's clock is none of its readings. A
    burst shorter than a poll gets one reading, taken as it ends; a hang names the burst."""
    monkeypatch.setattr(fa, "POLL_S", 0)
    clock = iter(range(1, 100))
    # the spin runs for two polls, the burst for three more
    assert fa.watch_burst(Pending(2), Pending(5), lambda: float(next(clock)), "case") == [1.0, 2.0, 3.0]
    assert fa.watch_burst(Pending(0), Pending(0), lambda: 1755.0, "case") == [1755.0]
    assert fa.watch_burst(Pending(0), Pending(3), None, "case") is None
    monkeypatch.setattr(fa, "HANG_S", -1)
    with pytest.raises(TimeoutError) as e:
        fa.watch_burst(Pending(0), Pending(1), None, "case A: base round 3")
    assert str(e.value) == "case A: base round 3: no result after -1 s (a hang?)"


def test_each_burst_keeps_its_clock_trace_and_their_median(monkeypatch):
    """time_runners records every reading of a burst (sm_clock_trace) and, per burst, their median
    (sm_clock_mhz): the clock falls within a call at the power cap."""
    from kernels.attention import bench

    fake_torch = on_the_cpu(monkeypatch, bench)
    monkeypatch.setattr(fa, "POLL_S", 0)
    # the warm-up's event, then per burst its start and end
    events = iter([Pending(0), Pending(0), Pending(3), Pending(0), Pending(1)])
    fake_torch.cuda.Event = lambda enable_timing=False: _Timed(next(events))
    readings = iter([1980.0, 1700.0, 1500.0, 1650.0])
    args = fa.parse_args(["--build", "x=", "--out", "u.json", "--rounds", "2", "--warmup-s", "0", "--burst-ms", "0"])
    timing = fa.time_runners(fake_torch, [("a", lambda inputs, out: out)], {}, None, args, "case", clock=lambda: next(readings))
    assert timing["a"]["sm_clock_trace"] == [[1980.0, 1700.0, 1500.0], [1650.0]]
    assert timing["a"]["sm_clock_mhz"] == [1700.0, 1650.0] and timing["a"]["median_sm_clock_mhz"] == 1675.0


class _Timed(Pending):
    """A Pending event that also records and times, as torch.cuda.Event does."""

    def __init__(self, pending):
        self.left, self.t = pending.left, 0.0

    def record(self):
        self.t = time.perf_counter()

    def elapsed_time(self, other):
        return 1000 * (other.t - self.t)


def test_cool_ms_queues_a_spin_before_each_timed_burst_outside_its_events(monkeypatch):
    """--cool-ms X: a GPU spin of X ms (in cycles at 1.98 GHz, the harness's SPIN_CYCLES_PER_MS) is
    queued before each timed burst's start event, none in the warm-up; 0 (the default) queues none."""
    from kernels.attention import bench

    fake_torch = on_the_cpu(monkeypatch, bench)
    log = []
    fake_torch.cuda._sleep = lambda cycles: log.append(("spin", cycles))
    real_event = fake_torch.cuda.Event

    class Event(real_event):
        def record(self, *a, **k):
            log.append("event")
            return super().record(*a, **k)

    fake_torch.cuda.Event = Event
    runners = [("a", lambda inputs, out: log.append("a")), ("b", lambda inputs, out: log.append("b"))]
    args = fa.parse_args(["--build", "x=", "--out", "u.json", "--rounds", "2", "--warmup-s", "0", "--burst-ms", "0", "--cool-ms", "2.5"])
    timing = fa.time_runners(fake_torch, runners, {}, None, args, "case", clock=lambda: 1500.0)
    assert len(timing["a"]["samples_ms"]) == 2
    timed = log[log.index(("spin", 4_950_000)) :]
    # each burst: the spin, its start event, its one call, its end event
    bursts = [timed[i : i + 4] for i in range(0, len(timed), 4)]
    assert len(bursts) == 4 and all(b[0] == ("spin", 4_950_000) and b[1] == "event" and b[3] == "event" for b in bursts)
    assert ("spin", 4_950_000) not in log[: log.index(("spin", 4_950_000))]  # none in the warm-up
    log.clear()
    plain = fa.parse_args(["--build", "x=", "--out", "u.json", "--rounds", "2", "--warmup-s", "0"])
    assert plain.cool_ms == 0.0
    fa.time_runners(fake_torch, runners, {}, None, plain, "case", clock=lambda: 1500.0)
    assert not any(isinstance(x, tuple) for x in log)


def test_profile_calls_each_checked_runner_once_inside_the_nvtx_range_and_times_nothing(monkeypatch):
    """--profile (for ncu --nvtx --nvtx-include kgprof/): after the checks, one call of each runner
    that passed, each inside its own kgprof range, on the headline shape only; no timing."""
    import torch.nn.functional as F

    from kernels.attention import bench, cuda_variants

    fake_torch = on_the_cpu(monkeypatch, bench)
    log = []
    fake_torch.cuda.nvtx = types.SimpleNamespace(range_push=lambda name: log.append(f"push {name}"), range_pop=lambda: log.append("pop"))

    def factory(params, ctx):
        def run(inputs, out):
            log.append(f"call {ctx.library('cuda_fa_wgmma')}")
            o = F.scaled_dot_product_attention(*(inputs[n].float() for n in ("q", "k", "v")), is_causal=params["causal"])
            return out.copy_(o + (0.1 if ctx.library("cuda_fa_wgmma") == "shifted.so" else 0.0))

        return run

    monkeypatch.setattr(cuda_variants, "cuda_fa_wgmma", factory)
    monkeypatch.setitem(bench.VARIANTS, "sdpa_default", lambda params, ctx: factory(params, types.SimpleNamespace(library=lambda v: "sdpa")))
    args = fa.parse_args(["--build", "x=", "--out", "unused.json", "--profile"])
    case = fa.select_cases(fa.parse_cases("dtype=fp16,D=64,causal=true"))[-1]  # the S77 tail, taken for the headline
    monkeypatch.setattr(fa, "HEADLINE", {k: case["params"][k] for k in ("B", "H", "S")})
    builds = [{"name": "good", "ok": True, "library": "good.so"}, {"name": "shifted", "ok": True, "library": "shifted.so"}]
    failures = []
    record = fa.run_case(fake_torch, case, builds, load_manifest(str(fa.MANIFEST)), args, failures)
    assert record["profiled"] == ["good", "sdpa_default"] and record["timing"] == {}
    # the checks' calls, then one call of each runner that passed, each alone in a range
    assert log == ["call good.so", "call shifted.so", "call sdpa"] + ["push kgprof", "call good.so", "pop", "push kgprof", "call sdpa", "pop"]
    # another shape than the headline: checked, not profiled
    monkeypatch.setattr(fa, "HEADLINE", {"B": 16, "H": 96, "S": 4096})
    log.clear()
    record = fa.run_case(fake_torch, case, builds, load_manifest(str(fa.MANIFEST)), args, [])
    assert "profiled" not in record and record["timing"] == {} and log == ["call good.so", "call shifted.so", "call sdpa"]


def test_the_order_of_each_round_is_shuffled_so_that_no_runner_always_follows_the_same_one(monkeypatch):
    """--order shuffle (the default): every round holds each runner once, in an order drawn from a
    generator seeded by the case, so the same case gives the same orders and each runner follows
    several others (recorded as `after`); --order rotate keeps the cyclic order, which put every
    runner behind the same predecessor in every round it did not open."""
    from kernels.attention import bench

    fake_torch = on_the_cpu(monkeypatch, bench)
    names = ["base", "base2", "n64", "n96", "sdpa_default"]
    orders = fa.round_orders(names, 20, "shuffle", "case A")
    assert all(sorted(o) == sorted(names) for o in orders)
    assert orders == fa.round_orders(names, 20, "shuffle", "case A")  # seeded by the case
    assert orders != fa.round_orders(names, 20, "shuffle", "case B")
    rotated = fa.round_orders(names, 20, "rotate", "case A")
    assert rotated[:3] == [names, names[1:] + names[:1], names[2:] + names[:2]]
    # behind n64: always n96 when rotated, several runners when shuffled
    behind = lambda rounds: {o[o.index("n64") + 1] for o in rounds if o.index("n64") + 1 < len(o)}  # noqa: E731
    assert behind(rotated) == {"n96"} and len(behind(orders)) >= 3
    # williams: the harness's orders; over a cycle of 2n rounds (n = 5, odd) every runner follows
    # every other one, and opens a round, equally often
    williams = fa.round_orders(names, 10, "williams", "case A")
    from kernelgate_harness.sampling import round_order

    assert williams == [round_order(names, r) for r in range(10)]
    assert fa.round_orders(names, 20, "williams-one", "case A") == [round_order(names, r, relabel=False) for r in range(20)]
    assert fa.round_orders(names, 20, "williams", "case A")[10:] != fa.round_orders(names, 20, "williams-one", "case A")[10:]
    pairs = [(o[i - 1] if i else None, o[i]) for o in williams for i in range(len(o))]
    assert all(pairs.count((p, n)) == 2 for n in names for p in [None, *names] if p != n)
    args = fa.parse_args(["--build", "x=", "--out", "unused.json", "--rounds", "6", "--warmup-s", "0"])
    assert args.order == "shuffle"
    runners = [(n, lambda inputs, out: out) for n in names]
    timing = fa.time_runners(fake_torch, runners, {}, None, args, "case A", clock=lambda: 1500.0)
    expected = fa.round_orders(names, 6, "shuffle", "case A")
    for n in names:
        assert len(timing[n]["samples_ms"]) == 6
        assert timing[n]["after"] == [o[o.index(n) - 1] if o.index(n) else None for o in expected]


def recorded(run, kind="fa", stem=None, gpu="h100"):
    """The JSON of a recorded experiment run (test/fixtures/recorded/<kind>-experiment-<gpu>-run<run>/)."""
    return recorded_experiment(kind, run, stem, gpu)


def gains(doc, base="base"):
    """{(dtype, D, causal): {build: base's median over the build's}} on the eight headline cases."""
    out = {}
    for c in doc["cases"]:
        p = c["params"]
        if p["S"] == 4096:
            t = c["timing"]
            out[(p["dtype"], p["D"], p["causal"])] = {n: t[base]["median_ms"] / v["median_ms"] for n, v in t.items()}
    return out


def copies_over(v, builds, over):
    """The mean gain of `builds` (copies of one build) over the mean of `over`'s, on one case of gains()."""
    return (sum(v[b] for b in builds) / len(builds)) / (sum(v[b] for b in over) / len(over))


def over_defaults(v, build):
    """A build's gain (one case of gains()) over the mean of the run's two copies of the default,
    base and base2."""
    return copies_over(v, [build], ["base", "base2"])


def test_the_twelfth_sessions_recorded_runs_checked_every_build_on_every_shape():
    """Runs 111-116 and 119 (seven H100s, 2026-11-27, docs/notes/kernel-gaps.md, the twelfth
    session): every build of every run passed its check against SDPA in fp32, tails included."""
    expected = {
        111: ("1653923025528", ["base", "base2", "clu", "psmem", "cpsm"], 12),
        112: ("1653923056951", ["base", "base2", "clu"], 12),
        113: ("1793226006275", ["base", "base2", "p2", "p3", "p4", "p6", "q3"], 24),
        114: ("1753024029516", ["base", "base2", "lz8", "lz4"], 24),
        115: ("1753024039537", ["base", "base2", "wg2", "ov2", "n64", "ov64", "n96", "ov96"], 24),
        116: ("1652724067547", ["base", "base2", "base3", "lz4", "clu", "p2", "ov2"], 24),
        119: ("1752824025700", ["base", "base2", "ps64", "ps64ov", "ps192", "ps128", "ps128ov", "ov3"], 24),
    }
    for run, (serial, builds, cases) in expected.items():
        doc = recorded(run)
        assert doc["gpu"]["serial"] == serial and doc["failures"] == [], run
        assert [b["name"] for b in doc["builds"]] == builds and len(doc["cases"]) == cases, run
        assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values()), run
        assert all(b["warnings"] == [] for b in doc["builds"]), run  # no serialised wgmma (C7512, C7514)


def test_the_clusters_remote_arrivals_with_release_cluster_halved_the_rate_and_without_it_still_lose():
    """Run 111: the first KG_FA_CLUSTER_M=2 (each remote arrival `.release.cluster`, a MEMBAR.ALL.GPU)
    ran at 0.49-0.55x the default's rate; run 112, the arrivals at CTA scope (CUTLASS's form): 1.9-4.1 %
    slower than the default, D128 and D64 alike. So K and V multicast do not pay here: L2 is not the limit."""
    g111, g112 = gains(recorded(111)), gains(recorded(112))
    assert all(0.49 < g["clu"] < 0.55 for g in g111.values())
    assert all(0.955 < g["clu"] < 0.982 for g in g112.values())
    assert all(abs(g["base2"] - 1) < 0.01 for g in g112.values())


def test_the_exponentials_on_the_fma_pipe_cost_more_than_the_mufu_time_they_free():
    """Run 113 (KG_FA_POLY_EXP): 2, 3, 4 or 6 of every 16 column groups' exponentials by the
    polynomial made D64 5-17 % slower, the more the slower; D128 with 3 of 16 (q3) 4.5-7 %
    slower. The softmax at D64 is bound by issued instructions, not by the MUFU."""
    g = gains(recorded(113))
    for k, v in g.items():
        if k[1] == 64:
            assert 1 > v["p2"] > v["p3"] > v["p4"] > v["p6"] > 0.83, k
            assert v["p2"] < 0.955
        else:
            assert 0.93 < v["q3"] < 0.956, k
        assert abs(v["base2"] - 1) < 0.013


def test_shuffled_rounds_agree_between_copies_of_the_default_and_the_conditional_rescaling_wins_at_d64_only():
    """Run 116, the first with shuffled rounds: three builds of the same code within 1.0 % (0.4 % at
    D64); the conditional rescaling (lz4) 1.5-1.9 % faster at D64, 0.8-1.2 % causal, 2.0-4.3 %
    slower at D128 (why KG_FA_LAZY_RESCALE is 4 for D64 and 0 for D128); clusters 2.5-3.2 %
    slower without the mask; P through the FMA pipe (p2) 5-7 % slower at D64; two consumer
    warpgroups with the forced overlap (ov2) 10-16 % slower at D64."""
    g = gains(recorded(116))
    for k, v in g.items():
        assert abs(v["base2"] - 1) < 0.011 and abs(v["base3"] - 1) < 0.011, k
        if k[1] == 64:
            assert abs(v["base2"] - 1) < 0.005 and abs(v["base3"] - 1) < 0.005, k
            assert (1.014 if not k[2] else 1.007) < v["lz4"] < 1.02, k
            assert v["p2"] < 0.953 and v["ov2"] < 0.9, k
        else:
            assert 0.956 < v["lz4"] < 0.981, k
    assert all(0.967 < v["clu"] < 0.976 for k, v in g.items() if not k[2])
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        src = f.read()
    assert "#define KG_FA_LAZY_RESCALE 4\n" in src and "#define KG_FA_LAZY_RESCALE_D128 0\n" in src


def test_rotated_rounds_biased_a_copy_of_the_default_by_its_fixed_predecessor():
    """Run 115 (rotated rounds, the order before this session): n96 and ov96 change only the
    non-causal D128 instances, yet at D64, where their code is the default's, they read 2-9.5 %
    faster than it, each always behind the same slow build; base and base2, always next to
    each other, agreed within 1.2 %. With shuffled rounds (run 116) three copies agree within 1 %."""
    g = gains(recorded(115))
    d64 = [v for k, v in g.items() if k[1] == 64]
    assert all(1.06 < v["n96"] < 1.1 and 1.02 < v["ov96"] < 1.05 for v in d64)
    assert all(abs(v["base2"] - 1) < 0.013 for v in g.values())
    after = recorded(115)["cases"][0]["timing"]["n96"]
    assert "after" not in after  # the script did not record predecessors yet
    shuffled = recorded(116)["cases"][0]["timing"]
    behind_base = {a for a in shuffled["base"]["after"] if a}
    assert len(behind_base) >= 4  # shuffled: base followed many different builds


def test_p_through_shared_memory_and_the_forced_overlap_lose_everywhere_they_apply():
    """Run 119: P through shared memory at D64 (ps64, 128 keys) 14-16 % slower, with the forced
    overlap (ps64ov) 16.5-18 %; at D128 with 128 keys (ps128) 7.5-9.5 % slower, with the overlap
    (ps128ov) 13.5-16 %; FA3's D64 tile with P in shared memory (ps192) 12 % slower without the
    mask. The instances each build leaves alone read within 2 % of the default."""
    g = gains(recorded(119))
    for k, v in g.items():
        if k[1] == 64:
            assert 0.84 < v["ps64"] < 0.87 and 0.81 < v["ps64ov"] < 0.84, k
            assert abs(v["ps128"] - 1) < 0.01 and abs(v["ps128ov"] - 1) < 0.015, k
            if not k[2]:
                assert 0.87 < v["ps192"] < 0.885, k
        else:
            assert 0.9 < v["ps128"] < 0.93 and 0.83 < v["ps128ov"] < 0.87, k
            assert abs(v["ps64"] - 1) < 0.021 and abs(v["ps192"] - 1) < 0.012, k


def test_the_recorded_ncu_profile_of_the_default_beside_cudnn():
    """Run 111's Nsight Compute pass (`ncu --nvtx --nvtx-include kgprof/ --section SpeedOfLight ...
    python3 scripts/fa-experiment.py --build base= --cases dtype=fp16 --profile`): the four fp16
    headline cases, ours then cuDNN's (SDPA default, a persistent grid of 132 CTAs). In cycles ours
    are within 1 % of cuDNN's at D128 and D64 causal and 4.5 % and 7.2 % fewer at D128 causal and
    D64; ours issue more instructions on the causal cases (5 % and 13 %). No local memory either way."""
    kernels = recorded_ncu("ncu-h100-run111")
    assert len(kernels) == 8
    assert all("fa_wgmma_kernel" in k["Kernel Name"] for k in kernels[0::2])
    assert all("cudnn_generated_fort_native_sdpa_sm90" in k["Kernel Name"] for k in kernels[1::2])
    value = lambda k, m: float(k[m])  # noqa: E731
    cycles = [value(k, "Elapsed Cycles") for k in kernels]
    ratio = [cycles[k + 1] / cycles[k] for k in range(0, 8, 2)]  # cuDNN's over ours: D128, D128 causal, D64, D64 causal
    assert [round(x, 3) for x in ratio] == [1.005, 1.047, 1.077, 1.005]
    inst = [value(k, "Executed Instructions") for k in kernels]
    assert [round(inst[k] / inst[k + 1], 2) for k in range(0, 8, 2)] == [0.95, 1.05, 1.0, 1.13]
    assert all(value(k, "Local Memory Spilling Requests") == 0 for k in kernels)
    assert all(value(k, "Grid Size") == 132 for k in kernels[1::2])


def test_the_tma_store_and_the_persistent_grid_measured_again_with_shuffled_rounds():
    """Run 120 (H100 serial 1652824033076, 2026-11-27 17:46 UTC): run 105 (the TMA store) and run 96
    (the persistent grid) had rotated rounds, whose order biased builds (run 115); measured again
    beside two copies of the default. The threads' stores (stg, KG_FA_TMA_STORE=0) slower than both
    copies on all eight cases (0.7-4.5 %; D128 causal 3.1-4.5 %), the persistent grid (which takes
    the threads' stores) 1.6-5.8 % slower: both stay as they are."""
    doc = recorded(120)
    assert doc["gpu"]["serial"] == "1652824033076" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "base2", "stg", "pers"]
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    for k, v in gains(recorded(120)).items():
        assert v["stg"] < min(1.0, v["base2"]) and v["pers"] < min(1.0, v["base2"]), k
        assert 0.94 < v["pers"] < 0.985 and 0.955 < v["stg"] < 0.995, k
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        src = f.read()
    assert "#define KG_FA_TMA_STORE (!KG_FA_PERSISTENT)\n" in src and "#define KG_FA_PERSISTENT 0\n" in src


def test_the_thirteenth_sessions_descriptor_experiments_and_the_new_default_per_head_dim():
    """Runs 122 and 123 (two H100s, 2026-11-27, docs/notes/kernel-gaps.md, the thirteenth session):
    every build passed its check on every shape; both descriptor bits (d3) win at D128 and lose at
    D64, the warp-uniform warpgroup index alone (d1) wins at D64 and loses at D128, so the default
    takes each where it wins; the row sums from the tensor cores (rs1, rs2) and the cheaper causal
    mask (m3, d3m3) do not pay."""
    doc122, doc123 = recorded(122), recorded(123)
    assert doc122["gpu"]["serial"] == "1753024036372" and doc123["gpu"]["serial"] == "1752824024377"
    assert [b["name"] for b in doc122["builds"]] == ["base", "base2", "d3", "m3", "rs1", "rs2", "all"]
    assert [b["name"] for b in doc123["builds"]] == ["base", "base2", "d3", "d1", "d2", "d3m3", "d3lz"]
    for doc in (doc122, doc123):
        assert doc["failures"] == []
        assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    g122, g123 = gains(doc122), gains(doc123)
    for k in g123:
        _dtype, d, causal = k
        # the slower of the two copies of the default: what a build must beat to count as a gain
        control = min(1.0, g123[k]["base2"])
        ceiling = max(1.0, g123[k]["base2"])
        if d == 128:
            assert g123[k]["d3"] > ceiling * 1.005 and g122[k]["d3"] > max(1.0, g122[k]["base2"]) * 1.005, k
            assert g123[k]["d1"] < control, k
            assert g123[k]["d3lz"] < control, k
            # the n8 row-sum wgmma at D128 costs 8-10 % against the same descriptors without it
            assert g122[k]["rs1"] < g122[k]["d3"] * 0.93, k
        else:
            assert g123[k]["d1"] > ceiling * 1.01, k
            if not causal:
                assert g123[k]["d3"] < control and g122[k]["d3"] < min(1.0, g122[k]["base2"]), k
            # the n8 row-sum wgmma at D64 loses to the same descriptors without it
            assert g122[k]["rs2"] < g122[k]["d3"] * 0.985, k
            # P V with 8 columns of ones: no faster than the same descriptors without it
            assert g122[k]["rs1"] < g122[k]["d3"] * 1.002, k
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        src = f.read()
    assert "#define KG_FA_DESC_ITER 1\n" in src and "#define KG_FA_DESC_ITER_D128 3\n" in src
    assert "#define KG_FA_MMA_ROWSUM 0\n" in src and "#define KG_FA_MASK 0\n" in src


def test_a_causal_warpgroup_stopping_at_its_own_tiles_wins_at_d64_and_the_descriptor_parts_do_not():
    """Run 126 (an H100, 2026-11-27, the thirteenth session, D64 only): KG_FA_WG_SKIP 1.7-2.0 %
    faster at D64 causal beside two copies of the default (its non-causal code is the default's);
    advancing only S's or only V's descriptors on top of the uniform warpgroup index loses."""
    doc = recorded(126)
    assert doc["gpu"]["serial"] == "1652424044178" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "base2", "sk", "dV", "dS", "skdV"]
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    g = gains(doc)
    assert sorted(g) == [(t, 64, c) for t in ("bf16", "fp16") for c in (False, True)]
    for (_dtype, _d, causal), v in g.items():
        if causal:
            assert v["sk"] > max(1.0, v["base2"]) * 1.012, (_dtype, causal)
        else:
            assert abs(over_defaults(v, "sk") - 1) < 0.005, (_dtype, causal)
            assert v["dV"] < min(1.0, v["base2"]) * 0.98 and v["dS"] < min(1.0, v["base2"]), (_dtype, causal)
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        src = f.read()
    assert "#define KG_FA_WG_SKIP KG_FA_PRODUCER_WG\n" in src and "#define KG_FA_DESC_ADV_PARTS 3\n" in src


def test_192_keys_at_d128_no_clear_gain_over_176():
    """Run 129 (an H100, 2026-11-27, thirteenth session, D128 without the mask): 192-key tiles
    (KG_FA_BLOCK_N=192: S m64n192k16, 225 KB of shared memory) pass every check and read within
    1 % of the default's 176 (0.9 % faster at fp16, 0.1 % at bf16): 176 stays."""
    doc = recorded(129)
    assert doc["gpu"]["serial"] == "1752624024357" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "base2", "n192"]
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    g = gains(doc)
    assert sorted(g) == [("bf16", 128, False), ("fp16", 128, False)]
    for k, v in g.items():
        assert 0.995 < over_defaults(v, "n192") < 1.012, k
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        assert "#define KG_FA_BLOCK_N 176\n" in f.read()


def test_the_key_loop_unrolled_by_two_tiles_pays_at_d64_without_the_mask_only():
    """Run 137 (H100 serial 1752824026640, 2026-11-27, the fourteenth session; shuffled rounds,
    --rounds 20 --warmup-s 0.5): the key loop unrolled by two tiles (u2, -DKG_FA_UNROLL_KEYS=2 at
    the time, every instance; u2d3 that with -DKG_FA_DESC_ITER=3). 4.5-5.5 % fewer instructions per
    tile, but D128 8-11 % slower (twice the loop's code) and D64 causal 1.6-2.0 % slower; D64
    without the mask 2.2 % (fp16) and 0.7 % (bf16) faster than the two copies of the default, which
    agreed within 0.1 % there. So the default unrolls only there (KG_FA_UNROLL_KEYS_D64 2, the rest
    1, whose SASS is the old default's). Every build passed on every shape, tails included."""
    doc = recorded(137)
    assert doc["gpu"]["serial"] == "1752824026640" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "base2", "u2", "u2d3"]
    assert len(doc["cases"]) == 24 and all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
    g = {k: round(over_defaults(v, "u2"), 3) for k, v in gains(doc).items()}
    assert g[("fp16", 64, False)] == 1.022 and g[("bf16", 64, False)] == 1.007
    assert all(0.979 <= g[(t, 64, True)] <= 0.985 for t in ("fp16", "bf16"))
    assert all(g[(t, 128, c)] < 0.92 for t in ("fp16", "bf16") for c in (False, True))
    assert all(abs(v["base2"] - 1) < 0.002 for k, v in gains(doc).items() if k[1] == 64 and not k[2])
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        text = f.read()
    assert "#define KG_FA_UNROLL_KEYS 1\n" in text and "#define KG_FA_UNROLL_KEYS_D64 2\n" in text


def test_the_last_key_tile_64_keys_wide_pays_at_d128_on_three_h100s():
    """Runs 141, 142 and 144 (2026-11-28, the fifteenth session; shuffled rounds): the non-causal D128
    instances computing a last key tile of at most 64 keys 64 wide (KG_FA_NARROW_LAST; at S4096 the
    last of 24 tiles of 176 keys holds 48) against the full-width tile: 1.2-2.6 % faster at fp16,
    2.2-2.7 % at bf16, with the copies of each build within 1.0 %. Run 144 (with it the default,
    against w0 = -DKG_FA_NARROW_LAST=0) checked the boundary too: --seq 177,193,240,241,4112 (last
    tiles of 1, 17, 64, 65 and 64 keys), every build with the same error as the old one."""
    expected = {
        141: ("1653823021726", ["base", "base2", "nl"], ["nl"], ["base", "base2"], 6),
        142: ("1653823021726", ["base", "nl", "base2", "nl2"], ["nl", "nl2"], ["base", "base2"], 6),
        144: ("1752624024367", ["base", "w0", "base2", "w02"], ["base", "base2"], ["w0", "w02"], 16),
    }
    got = {}
    for run, (serial, builds, narrow, full, cases) in expected.items():
        doc = recorded(run)
        assert doc["gpu"]["serial"] == serial and doc["failures"] == [], run
        assert [b["name"] for b in doc["builds"]] == builds and len(doc["cases"]) == cases, run
        assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values()), run
        assert all(b["warnings"] == [] for b in doc["builds"]), run
        g = gains(doc)
        got[run] = {t: round(copies_over(g[(t, 128, False)], narrow, full), 3) for t in ("fp16", "bf16")}
        # the two copies of each build agree within 1.0 %
        for copies in (narrow, full):
            if len(copies) == 2:
                assert all(abs(g[(t, 128, False)][copies[0]] / g[(t, 128, False)][copies[1]] - 1) <= 0.010 for t in ("fp16", "bf16"))
    assert got == {141: {"fp16": 1.012, "bf16": 1.027}, 142: {"fp16": 1.023, "bf16": 1.022}, 144: {"fp16": 1.026, "bf16": 1.022}}
    probes = [c for c in recorded(144)["cases"] if c["params"]["B"] == 2 and c["params"]["S"] in (177, 193, 240, 241, 4112)]
    assert len(probes) == 10
    for c in probes:
        rel = {n: ch["rel_l2"] for n, ch in c["checks"].items()}
        assert rel["base"] == rel["w0"] and all(ch["ok"] for ch in c["checks"].values()), c["id"]
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        assert "#define KG_FA_NARROW_LAST 1\n" in f.read()


def test_the_causal_persistent_grid_pays_at_d64_with_two_q_buffers_only():
    """Run 140 (H100 serial 1752624012398): the causal instances persistent with the TMA store kept
    and one Q buffer (pc, -DKG_FA_PERSISTENT_CAUSAL=1, both head dims then) 0.4-1.0 % slower than the
    two copies of the default on the four causal headline cases; run 148 (serial 1652724112673) the
    same within 0.9 %. With two Q buffers (pc2, =2: the next item's Q loads while the last item
    finishes) runs 148 and 149 (the same machine) read D64 causal 2.2-2.8 % faster (fp16, bf16),
    D128 causal 0.7 % slower and 1.0 % faster. So the default is 2 at D64 causal, 0 at D128. Every
    build passed on every shape, tails included (S1000 and S77: persistent grids of fewer CTAs)."""
    doc = recorded(140)
    assert doc["gpu"]["serial"] == "1752624012398" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "base2", "pc"] and len(doc["cases"]) == 12
    assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
    pc = {k: round(copies_over(v, ["pc"], ["base", "base2"]), 3) for k, v in gains(doc).items()}
    assert set(pc) == {(t, d, True) for t in ("fp16", "bf16") for d in (128, 64)}
    assert all(0.990 <= v <= 0.996 for v in pc.values()), pc
    doc = recorded(148)
    assert doc["gpu"]["serial"] == "1652724112673" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "pc2", "base2", "pc"] and len(doc["cases"]) == 12
    assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
    g = gains(doc)
    assert all(abs(copies_over(v, ["pc"], ["base", "base2"]) - 1) < 0.01 for v in g.values())
    pc2 = {k[:2]: round(copies_over(v, ["pc2"], ["base", "base2"]), 3) for k, v in g.items()}
    assert pc2 == {("fp16", 128): 0.993, ("fp16", 64): 1.024, ("bf16", 128): 1.010, ("bf16", 64): 1.024}
    doc = recorded(149)
    assert doc["gpu"]["serial"] == "1652724112673" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "pc2", "base2", "pc2b"] and len(doc["cases"]) == 6
    assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
    g = gains(doc)
    assert {k[0]: round(copies_over(v, ["pc2", "pc2b"], ["base", "base2"]), 3) for k, v in g.items()} == {"fp16": 1.028, "bf16": 1.022}
    # each build's two copies within 1.0 %
    assert all(abs(v["base2"] - 1) < 0.01 and abs(v["pc2b"] / v["pc2"] - 1) < 0.01 for v in g.values())
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        text = f.read()
    assert "#define KG_FA_PERSISTENT_CAUSAL_D64 (KG_FA_TMA_STORE && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT ? 2 : 0)\n" in text
    # 0 at D128 until the twenty-first session; since, 3 where the causal D128 tiles are 160 keys
    # (test_the_persistent_causal_d128_grid_on_160_key_tiles_is_the_default_on_h200s)
    assert (
        "#define KG_FA_PERSISTENT_CAUSAL_D128 \\\n"
        "  (KG_FA_TMA_STORE && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT && KG_FA_CAUSAL_BLOCK_N_D128 == 160 ? 3 : 0)\n"
    ) in text


def test_causal_d128_on_192_key_tiles_and_the_snaking_persistent_order_pay_on_three_h100s():
    """Runs 150-152 (2026-11-28, the sixteenth session; shuffled rounds, two copies of the default in
    each run). Causal D128 on 192-key tiles (c192, -DKG_FA_CAUSAL_BLOCK_N_D128=192, a warpgroup's
    last tile 64 keys wide where it holds no more) against the 128-key tile: 1.0-1.7 % faster at
    fp16, 0.7-1.8 % at bf16 (run 152: the new defaults, base, against old = both options back); 176
    keys (c176) 0.5-1.6 %, and without the narrow last tile (c176w) no gain. The persistent causal
    grid's snake over every SM (snake, p2snake: the same D64 code) 1.4-2.5 % faster at D64 causal,
    1.4 % and 1.7 % in run 152; without the persistent grid there (d64np) 1.2-1.8 % slower, as the
    fifteenth session found. The persistent D128 causal grid (pers2, p2snake) and the Q prefetch
    (pq1, pq2) stay off. Every build passed on every shape, the probes of the tiles' boundaries
    (--seq) included."""
    expected = {
        150: ("1753024032040", ["base", "c176", "c192", "c176w", "pers2", "base2"], 12),
        151: ("1752624008002", ["base", "c192", "snake", "p2snake", "d64np", "c176", "base2"], 20),
        152: ("1650924050984", ["base", "old", "pq1", "pq2", "base2"], 40),
    }
    g = {}
    for run, (serial, builds, cases) in expected.items():
        doc = recorded(run)
        assert doc["gpu"]["serial"] == serial and doc["failures"] == [], run
        assert [b["name"] for b in doc["builds"]] == builds and len(doc["cases"]) == cases, run
        assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values()), run
        assert all(b["warnings"] == [] for b in doc["builds"]), run
        g[run] = {k: {n: round(over_defaults(v, n), 3) for n in builds} for k, v in gains(doc).items()}
    assert {run: sorted({c["params"]["S"] for c in recorded(run)["cases"]}) for run in expected} == {
        150: [77, 200, 433, 1000, 4096], 151: [77, 300, 1000, 4096], 152: [77, 257, 449, 1000, 4096]
    }
    d128c = {t: (t, 128, True) for t in ("fp16", "bf16")}
    assert {t: (g[150][k]["c192"], g[151][k]["c192"], round(1 / g[152][k]["old"], 3)) for t, k in d128c.items()} == {
        "fp16": (1.017, 1.016, 1.01),
        "bf16": (1.007, 1.01, 1.018),
    }
    assert {t: (g[150][k]["c176"], g[151][k]["c176"], g[150][k]["c176w"]) for t, k in d128c.items()} == {
        "fp16": (1.016, 1.005, 0.998),
        "bf16": (1.005, 1.009, 0.992),
    }
    d64c = {t: (t, 64, True) for t in ("fp16", "bf16")}
    assert {t: (g[151][k]["snake"], g[151][k]["p2snake"], round(1 / g[152][k]["old"], 3), g[151][k]["d64np"]) for t, k in d64c.items()} == {
        "fp16": (1.014, 1.021, 1.014, 0.982),
        "bf16": (1.017, 1.025, 1.017, 0.988),
    }
    # the persistent D128 causal grid: 0.4-0.6 % slower, with the snake 0.4 % faster and 1.5 % slower
    assert {t: (g[150][k]["pers2"], g[151][k]["p2snake"]) for t, k in d128c.items()} == {
        "fp16": (0.994, 1.004),
        "bf16": (0.996, 0.985),
    }
    # the Q prefetch: 1.2-1.3 % at fp16 D128 causal only, 0.2-1.6 % slower without the mask
    pq = {k: (v["pq1"], v["pq2"]) for k, v in g[152].items()}
    assert pq[("fp16", 128, True)] == (1.012, 1.013) and pq[("bf16", 128, True)] == (0.998, 1.0)
    assert all(0.984 <= x <= 0.998 for k, v in pq.items() if not k[2] for x in v), pq
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        text = f.read()
    # (since the twenty-first session the causal D128 tile is 160 keys on the persistent grid, 192
    # where that grid cannot run and in the CTA-per-item instance of the small calls; D128's order is
    # 2; since the twenty-second D64's too, the snake kept in an instance of its own for the calls
    # where its rounds come out even or its items are short, KG_FA_D64_SNAKE_BLOCKS)
    for define in (
        "KG_FA_CAUSAL_BLOCK_N_D128 (KG_FA_TMA_STORE && KG_FA_PRODUCER_WG && !KG_FA_PERSISTENT ? 160 : 192)",
        "KG_FA_NARROW_CAUSAL 1",
        "KG_FA_PERSISTENT_ORDER_D64 2",
        "KG_FA_D64_SNAKE_BLOCKS (KG_FA_PERSISTENT_CAUSAL_D64 != 0 && KG_FA_PERSISTENT_ORDER_D64 == 2 ? 8 : 0)",
        "KG_FA_PREFETCH_Q 0",
    ):
        assert f"#define {define}\n" in text


def test_the_64_key_diagonal_does_not_pay():
    """Run 143 (H100 serial 1652724134438): the first warpgroup's diagonal tile 64 keys wide (nd, nd2:
    -DKG_FA_NARROW_DIAG=1) 1.0 % slower at fp16 and 0.3 % faster at bf16 (D128 causal): off."""
    doc = recorded(143)
    assert doc["gpu"]["serial"] == "1652724134438" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "nd", "base2", "nd2"] and len(doc["cases"]) == 6
    assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
    nd = {k[0]: round(copies_over(v, ["nd", "nd2"], ["base", "base2"]), 3) for k, v in gains(doc).items()}
    assert nd == {"fp16": 0.990, "bf16": 1.003}
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        assert "#define KG_FA_NARROW_DIAG 0\n" in f.read()


def test_the_recorded_ncu_profile_of_the_d128_kernels_beside_cudnn():
    """Run 147 (H100 serial 1752624010503; ncu --section SpeedOfLight ... --section SourceCounters,
    scripts/fa-experiment.py --build base= --cases dtype=fp16,D=128 --profile): under Nsight
    Compute's clocks ours takes 5.4 % fewer cycles than cuDNN's kernel at D128 and 5.8 % fewer at
    D128 causal, its tensor pipes (Compute (SM) Throughput) 80.8 % and 73.3 % busy against cuDNN's
    76.1 % and 68.6 %. The causal kernel's most sampled instruction is the wait for P V
    (WARPGROUP.DEPBAR.LE gsb0, 0x0) that ptxas puts before the softmax's first max (9.9 % of its
    stall samples); the per-CTA prologue's wait for Q and the exit hold 2.5 % and 1.5 %."""
    import csv
    import gzip

    base = os.path.join(REPO, "test", "fixtures", "recorded", "ncu-h100-run147")
    kernels = recorded_ncu("ncu-h100-run147")
    ours = [m for m in kernels if "fa_wgmma_kernel" in m["Kernel Name"]]
    cudnn = [m for m in kernels if m["Kernel Name"].startswith("cudnn_generated_fort_native_sdpa_sm90")]
    assert len(ours) == len(cudnn) == 2 and "<__half, 128, 0, 176, 2, 64>" in ours[0]["Kernel Name"]  # the last64 instance at S4096

    def cycles(m):
        return int(m["Elapsed Cycles"])

    assert [round(1 - cycles(o) / cycles(c), 3) for o, c in zip(ours, cudnn, strict=True)] == [0.054, 0.058]
    assert [o["Compute (SM) Throughput"] for o in ours] == ["80.80", "73.26"]
    assert [c["Compute (SM) Throughput"] for c in cudnn] == ["76.09", "68.62"]
    with gzip.open(os.path.join(base, "src-top.csv.gz"), "rt") as f:
        rows = list(csv.reader(f))
    h = rows[0]
    causal = [r for r in rows[1:] if "(bool)1" in r[0]]
    total = int(causal[0][1])
    top = max(causal, key=lambda r: float(r[h.index("Warp Stall Sampling (All Samples)")]))
    assert top[h.index("Source")].strip() == "WARPGROUP.DEPBAR.LE gsb0, 0x0"
    assert round(100 * float(top[h.index("Warp Stall Sampling (All Samples)")]) / total, 1) == 9.9


def test_seq_probes_follow_the_manifests_shapes_and_bad_values_are_named():
    cases = fa.select_cases(fa.parse_cases("dtype=fp16,D=128,causal=false"), fa.parse_seqs("177,369"))
    assert [c["params"]["S"] for c in cases] == [4096, 1000, 77, 177, 369]
    assert cases[-1]["id"] == "dtype=fp16,B=2,H=3,S=369,D=128,causal=false"
    for text, message in (("0", "'0' is not a positive whole number"), ("177,x", "'x' is not a positive whole number"), ("5,5", "5 is given twice")):
        with pytest.raises(ValueError) as e:
            fa.parse_seqs(text)
        assert str(e.value) == f"--seq {text}: {message}"


def test_shapes_follow_the_probes_and_bad_values_are_named():
    cases = fa.select_cases(fa.parse_cases("dtype=fp16,D=128,causal=true"), fa.parse_seqs("177"), (fa.parse_shape("S=8192,B=4,H=96"),))
    assert [c["params"]["S"] for c in cases] == [4096, 1000, 77, 177, 8192]
    assert cases[-1]["id"] == "dtype=fp16,B=4,H=96,S=8192,D=128,causal=true"
    for text, message in (
        ("B=4,H=96", "S missing"),
        ("B=4,H=96,S=0", "S=0 is not a positive whole number"),
        ("B=4,B=2,H=96,S=8", "B is given twice"),
        ("B=4,H=96,S=8,D=64", "'D=64' is not KEY=VALUE with KEY one of B, H, S"),
        ("B=4,H=x,S=8", "H=x is not a positive whole number"),
    ):
        with pytest.raises(ValueError) as e:
            fa.parse_shape(text)
        assert str(e.value) == f"--shape {text}: {message}"
    r = run("--build", "a=", "--dry-run", "--shape", "B=1,H=2")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == "fa-experiment.py: error: --shape B=1,H=2: S missing"


def test_the_label_names_a_narrower_last_tile():
    name = "_ZN44_GLOBAL__N__db334923_11_fa_wgmma_cu_62f15b6b15fa_wgmma_kernelI6__halfLi128ELb0ELi176ELi2ELi{}EEEv14CUtensorMap_stS2_S2_S2_PT_iiif"
    assert fa.fa_label(name.format(64)) == "fp16 D128 N176 last64"
    assert fa.fa_label(name.format(176)) == "fp16 D128 N176"
    causal = name.replace("Lb0ELi176E", "Lb1ELi128E").format(128)
    assert fa.fa_label(causal) == "fp16 D128 causal"


def test_the_128_key_last_causal_tile_does_not_pay():
    """Run 156 (H100 serial 1752824025715, 2026-11-28, the seventeenth session): a warpgroup's last
    causal D128 tile 128 keys wide where it holds 65-128 keys (nc2, -DKG_FA_NARROW_CAUSAL=2) 0.3 %
    faster at fp16 and 1.1 % at bf16 on the headline cases, where the two copies of the default were
    0.3-0.6 % apart; at S = 1000 it went +2.5 % and -0.5 % where the copies were 0.6 % and 6.8 %
    apart. Not enough for its 56 HGMMA: off. SDPA default ÷ the default there, in the script:
    1.086x (fp16) and 1.087x (bf16)."""
    doc = recorded(156)
    assert doc["gpu"]["serial"] == "1752824025715" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "nc2", "base2"] and len(doc["cases"]) == 6
    assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
    assert {b["name"]: b["sass"]["HGMMA"] for b in doc["builds"]} == {"base": 552, "nc2": 608, "base2": 552}
    g = gains(doc)
    assert {k[0]: (round(v["base2"], 3), round(over_defaults(v, "nc2"), 3)) for k, v in g.items()} == {
        "fp16": (0.997, 1.003),
        "bf16": (0.994, 1.011),
    }
    sdpa = {k[0]: round(2 / (v["sdpa_default"] * (1 + 1 / v["base2"])), 3) for k, v in g.items()}
    assert sdpa == {"fp16": 1.086, "bf16": 1.087}
    with open(os.path.join(REPO, "kernels", "attention", "cuda", "fa_wgmma.cu")) as f:
        assert "#define KG_FA_NARROW_CAUSAL 1\n" in f.read()


def test_one_call_a_burst_does_not_reproduce_the_harness_regime():
    """Run 159 (H100 serial 1652624054224, 2026-11-28, the seventeenth session): the D128 headline
    cases with one call a burst (--burst-ms 0, as the harness's samples) and with ~20 ms bursts, on
    one machine, two copies of the default. SDPA default ÷ ours is the same in both (fp16 causal
    1.090 and 1.092), at 1425-1530 MHz in both; the harness's push of the same kernels (run 157) ran
    them at 1725-1860 MHz and read fp16 D128 causal at 1.052: not the single call, then, but likely
    the rounds' mix (cooler variants between; run 160's spin reproduces it)."""
    def ratios(b):
        doc = recorded(159, stem=f"fa-burst{b}")
        assert doc["gpu"]["serial"] == "1652624054224" and doc["failures"] == []
        assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
        out = {}
        for c in doc["cases"]:
            p, t = c["params"], c["timing"]
            if p["S"] == 4096:
                ours = (t["base"]["median_ms"] + t["base2"]["median_ms"]) / 2
                out[(p["dtype"], p["causal"])] = (round(t["sdpa_default"]["median_ms"] / ours, 3), t["base"]["calls_per_burst"])
        return out, [c["timing"]["sdpa_default"]["median_sm_clock_mhz"] for c in doc["cases"] if c["params"]["S"] == 4096]

    single, clocks0 = ratios(0)
    bursts, clocks20 = ratios(20)
    assert single == {("fp16", False): (1.07, 1), ("fp16", True): (1.09, 1), ("bf16", False): (1.056, 1), ("bf16", True): (1.106, 1)}
    assert bursts == {("fp16", False): (1.069, 1), ("fp16", True): (1.092, 2), ("bf16", False): (1.053, 1), ("bf16", True): (1.09, 2)}
    assert all(1425 <= mhz <= 1530 for mhz in clocks0 + clocks20)


def test_cool_ms_reproduces_the_harness_regime():
    """Run 160 (H100 serial 1653224080450, 2026-11-28, the seventeenth session): fp16 D128 causal,
    one call a burst, with a 12 ms spin before each (--cool-ms 12, about the call's own length) and
    without. With it the SM clock stays at 1965 MHz
    and SDPA default ÷ ours reads 1.051x, what the harness's push read (run 157: 1.052x); without it
    1447.5 MHz and 1.096-1.105x, what the script had always read. So the gap to 1.10x is where the
    clock is high, and --cool-ms is where to tune it."""
    got = {}
    for cool in (0, 12):
        doc = recorded(160, stem=f"fa-cool{cool}")
        assert doc["gpu"]["serial"] == "1653224080450" and doc["failures"] == []
        assert "--cool-ms" in doc["argv"] and doc["argv"][doc["argv"].index("--cool-ms") + 1] == str(cool)
        assert all(ch["ok"] for c in doc["cases"] for ch in c["checks"].values())
        (t,) = [c["timing"] for c in doc["cases"] if c["params"]["S"] == 4096]
        got[cool] = (
            round(t["sdpa_default"]["median_ms"] / t["base"]["median_ms"], 3),
            round(t["sdpa_default"]["median_ms"] / t["base2"]["median_ms"], 3),
            t["sdpa_default"]["median_sm_clock_mhz"],
        )
    assert got == {0: (1.096, 1.105, 1447.5), 12: (1.051, 1.051, 1965.0)}


def checked_h200_run(run, serial, builds, stem=None):
    """A recorded H200 run (its `stem`'s JSON, for a run of several invocations) whose GPU is the one
    named, with exactly these builds, every one of which passed its check on every case."""
    doc = recorded(run, stem=stem, gpu="h200")
    assert doc["gpu"]["serial"] == serial and doc["gpu"]["name"] == "NVIDIA H200" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == builds
    assert all(check["ok"] for case in doc["cases"] for check in case["checks"].values())
    return doc


def h200_gains(run, serial, builds, key=None):
    """An H200 run's builds, checked on every case, and {case id (or key(its params)): {build:
    base's median over the build's}} on its cases of 96 heads (the headline's and --shape's)."""
    doc = checked_h200_run(run, serial, builds)
    return {
        (key(c["params"]) if key else c["id"]): {n: c["timing"]["base"]["median_ms"] / t["median_ms"] for n, t in c["timing"].items()}
        for c in doc["cases"]
        if c["params"]["H"] == 96
    }


def test_in_the_harness_regime_on_an_h200_the_q_prefetch_and_the_persistent_d128_grid_do_not_reach_the_bar():
    """Run 161 (NVIDIA H200 serial 1653924058329, 2026-11-28; --burst-ms 0 --cool-ms 12, the
    harness's regime): SDPA default over ours 1.051-1.055 on the four D128 headline cases, as on
    the H100s' pushes (1.05-1.09); with sequences twice as long (B = 4, S = 8192, the same work)
    causal reads 1.075, non-causal 1.055-1.057. The Q prefetch (pq1) 0.6 % faster at causal, 0.5 %
    slower at bf16 non-causal; the persistent 128-key causal grid (pc2) 1.6-1.8 % slower, 5.7 % at
    S = 8192."""
    g = h200_gains(161, "1653924058329", ["base", "pc2", "pq1", "pq2", "base2"])
    head = "B=16,H=96,S=4096,D=128"
    sdpa = {k: round(1 / v["sdpa_default"], 3) for k, v in g.items()}
    assert [sdpa[f"dtype={dt},{head},causal={c}"] for dt in ("fp16", "bf16") for c in ("false", "true")] == [1.051, 1.055, 1.054, 1.053]
    assert [sdpa[f"dtype={dt},B=4,H=96,S=8192,D=128,causal=true"] for dt in ("fp16", "bf16")] == [1.075, 1.075]
    assert all(abs(v["base2"] - 1) < 0.0005 for v in g.values())
    causal = [v for k, v in g.items() if k.endswith("causal=true")]
    assert all(1.006 <= v["pq1"] < 1.009 and v["pc2"] < 0.985 for v in causal)
    assert round(g[f"dtype=bf16,{head},causal=false"]["pq1"], 3) == 0.995


def test_at_nsight_computes_clocks_ours_takes_5_to_11_percent_fewer_cycles_than_cudnn():
    """Run 162 (NVIDIA H200 serial 1653924054791; ncu --clock-control none, one launch of each on
    the eight headline cases): cuDNN's cycles over ours 1.057 / 1.078 / 1.120 / 1.094 (fp16 D128,
    causal, D64, causal) and 1.055 / 1.071 / 1.125 / 1.103 (bf16), both kernels at the same 1.6-1.8
    GHz; timed at 1.97 GHz in the harness's regime (run 161) the D128 ratios are 1.051-1.055. So the
    gap narrows as the clock rises: part of our time does not scale with the SM clock."""
    kernels = recorded_ncu("ncu-fa-h200-run162")
    assert len(kernels) == 16
    assert all("fa_wgmma_kernel" in k["Kernel Name"] for k in kernels[0::2])
    assert all(k["Kernel Name"].startswith("cudnn_generated_fort_native_sdpa_sm90") for k in kernels[1::2])
    cycles = [int(k["Elapsed Cycles"]) for k in kernels]
    assert [round(cycles[i + 1] / cycles[i], 3) for i in range(0, 16, 2)] == [1.057, 1.078, 1.12, 1.094, 1.055, 1.071, 1.125, 1.103]
    assert all(round(abs(float(kernels[i]["SM Frequency"]) - float(kernels[i + 1]["SM Frequency"])), 2) <= 0.03 for i in range(0, 16, 2))


def test_a_persistent_causal_grid_pays_at_d128_in_no_order_and_at_d64_only_dynamically_at_8192():
    """Runs 163 and 164 (NVIDIA H200 serials 1653824016093 and 1653724058695; the harness's regime).
    At D128 causal, 128-key tiles (n128) cost 0.9 % at S = 4096 and 1.9 % at 8192 against the
    default's 192; on those tiles the persistent grid in the snake (pc2, the D64 default) is 0.7 %
    and 4.0 % slower again, in order 0 (pc2o0) 2.2 % and 10.6 %, with more DRAM traffic (ncu, run
    163: 14.8 % and 17.4 % busy against 12.5-12.6 %). Claiming items at run time in the
    non-persistent grid's order (KG_FA_PERSISTENT_ORDER=2, new) brings it back to 0.2-0.3 % of the
    default at 4096, still 2.8-3.0 % slower at 8192: no order makes persistence pay at D128. At D64
    causal the dynamic order is 2.1-2.8 % faster than the snake at 8192 and 0.3-1.3 % slower at
    4096, where 132 SMs take 22 query blocks per head in whole rounds."""
    g163 = h200_gains(163, "1653824016093", ["base", "n128", "pc2", "pc1", "pc2o0", "base2"])
    g164 = h200_gains(164, "1653724058695", ["base", "n128", "pc2", "dyn", "dyn1", "dyn64", "base2"])
    for g in (g163, g164):
        assert all(abs(v["base2"] - 1) < 0.001 for v in g.values())
    d128 = lambda g, s: [v for k, v in g.items() if f"S={s},D=128" in k]  # noqa: E731
    for v in d128(g163, 4096):
        assert 0.990 < v["n128"] < 0.992 and 0.984 < v["pc2"] < 0.986 and 0.969 < v["pc2o0"] < 0.973
    for v in d128(g163, 8192):
        assert 0.980 < v["n128"] < 0.982 and 0.943 < v["pc2"] < 0.945 and 0.887 < v["pc2o0"] < 0.890
    assert all(0.996 < v["dyn"] < 0.998 for v in d128(g164, 4096))
    assert all(0.970 < v["dyn"] < 0.972 < v["n128"] for v in d128(g164, 8192))
    d64 = {k: v["dyn64"] for k, v in g164.items() if "D=64" in k}
    assert [round(x, 3) for x in d64.values()] == [0.997, 0.989, 1.027, 1.022]
    kernels = recorded_ncu("ncu-fa-h200-run163")
    dram = [float(k["DRAM Throughput"]) for k in kernels[:7]]  # fp16: base, n128, pc2, pc1, pc2o0, base2, cuDNN
    assert dram == [12.61, 12.49, 14.81, 14.61, 17.36, 12.6, 11.95]


def test_at_d128_causal_cudnn_gains_more_than_ours_from_the_higher_clock():
    """Run 165 (NVIDIA H200 serial 1653924042964; the eight headline cases at --cool-ms 0, back to
    back, then 12, the harness's regime). D128 causal: SDPA default over ours 1.107 (fp16) and 1.108
    (bf16) at 1545 and 1620 MHz, 1.053 and 1.051 at 1965 and 1980 MHz; ours runs 1.167 and 1.152
    times as fast at the higher clock, cuDNN 1.226 and 1.214 times. D128 without the mask and D64
    differ by 0.5-2.8 % between the regimes. The H100s' runs 159 and 160 read the same. (Those MHz
    are NVML's, read as each burst was queued: at --cool-ms 12 the clock of the spin before it. The
    chip ran these calls at 1640-1672 MHz: run 168's probe, below.)"""
    cool = {c: recorded(165, stem=f"fa-cool{c}", gpu="h200") for c in (0, 12)}
    assert {d["gpu"]["serial"] for d in cool.values()} == {"1653924042964"}
    assert all(d["failures"] == [] for d in cool.values())
    ratio, speedup, mhz = {}, {}, {}
    for c, doc in cool.items():
        for case in doc["cases"]:
            if case["params"]["H"] == 96:
                t = case["timing"]
                ratio[(case["id"], c)] = round(t["sdpa_default"]["median_ms"] / t["base"]["median_ms"], 3)
                mhz[(case["id"], c)] = t["base"]["median_sm_clock_mhz"]
                speedup.setdefault(case["id"], {}).setdefault("ours", []).append(t["base"]["median_ms"])
                speedup[case["id"]].setdefault("cudnn", []).append(t["sdpa_default"]["median_ms"])
    causal = [f"dtype={dt},B=16,H=96,S=4096,D=128,causal=true" for dt in ("fp16", "bf16")]
    assert [ratio[(k, 0)] for k in causal] == [1.107, 1.108] and [ratio[(k, 12)] for k in causal] == [1.053, 1.051]
    assert [mhz[(k, c)] for k in causal for c in (0, 12)] == [1545.0, 1965.0, 1620.0, 1980.0]
    gain = {k: {who: round(v[0] / v[1], 3) for who, v in s.items()} for k, s in speedup.items()}
    assert [gain[k] for k in causal] == [{"ours": 1.167, "cudnn": 1.226}, {"ours": 1.152, "cudnn": 1.214}]
    others = [round(abs(ratio[(k, 0)] - ratio[(k, 12)]), 3) for k in gain if k not in causal]
    assert len(others) == 6 and min(others) == 0.005 and max(others) == 0.028


def test_a_third_ring_stage_does_not_pay_at_the_high_clock():
    """Run 166 (NVIDIA H200 serial 1654024199312; the harness's regime): 128-key tiles everywhere
    at D128 (n128), and the same with a third K and V stage (s3, 225 KB of shared memory): the
    third stage is 0.6-1.9 % slower than two on every D128 case, S = 4096 and 8192, so the loads'
    latency is not what the higher clock exposes."""
    g = h200_gains(166, "1654024199312", ["base", "n128", "s3", "base2"])
    assert len(g) == 8 and all(abs(v["base2"] - 1) < 0.002 for v in g.values())
    third = [v["s3"] / v["n128"] for v in g.values()]
    assert 0.981 < min(third) and max(third) < 0.995


def per_item_fit(doc, runner, causal):
    """Cycles of one call (median ms x the probe's median MHz, --clock-probe) on the cases of 96
    heads, fitted to A + C x items (items: B x H x S / 128, the query blocks; the shapes hold B x S^2
    fixed, so the work is the same): (A in cycles, C x 132: the cycles an item costs its SM beyond
    its key tiles, the largest residual over the fit's values)."""
    import statistics

    points = []
    for case in doc["cases"]:
        p = case["params"]
        if p["H"] == 96 and p["causal"] == causal and runner in case["timing"]:
            mhz = statistics.median(g["mean_mhz"] for g in case["clock_probe"][runner] if g["mean_mhz"])
            points.append((p["B"] * p["H"] * p["S"] // 128, case["timing"][runner]["median_ms"] * mhz * 1e3))
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    c = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    a = my - c * mx
    return a, c * 132, max(abs(y - a - c * x) / y for x, y in points)


def test_nvml_reads_the_clock_the_driver_asks_for_and_the_probe_the_one_the_chip_ran():
    """Runs 167 and 168 (NVIDIA H200 serials 1653724050652 and 1653724056683, the nineteenth
    session). Read while each burst ran (watch_burst), NVML says 1845-1973 MHz for the eight
    headline cases at --cool-ms 12; clock_probe.cu beside the same calls (cycles over the global
    timer) says the chip ran them at 1583-1873 MHz, D128 causal at 1640 (ours) and 1672 (cuDNN) where
    NVML said 1958 for both. With the probe's clocks the cycles of fp16 D128 causal read cuDNN 1.074x
    ours (Nsight Compute, run 162: 1.078x); the time 1.054x: ours ran 1.9 % slower a clock."""
    import statistics

    nvml = recorded(167, stem="fa-cool12", gpu="h200")
    probed = recorded(168, stem="fa-cool12", gpu="h200")
    assert (nvml["gpu"]["serial"], probed["gpu"]["serial"]) == ("1653724050652", "1653724056683")
    assert nvml["failures"] == probed["failures"] == []
    headline = lambda doc: {c["id"]: c for c in doc["cases"] if c["params"]["H"] == 96}  # noqa: E731
    read = [t["median_sm_clock_mhz"] for c in headline(nvml).values() for t in c["timing"].values()]
    assert len(read) == 24 and min(read) == 1845.0 and max(read) == 1972.5
    # every burst of run 167 has its readings, taken while it ran
    assert all(len(trace) >= 8 for c in headline(nvml).values() for t in c["timing"].values() for trace in t["sm_clock_trace"])
    ran = {}
    for cid, c in headline(probed).items():
        for name, got in c["clock_probe"].items():
            # the process's first probe started after its call (its module loaded at that launch;
            # ClockProbe now launches it once first): no readings inside, so no clock
            first = cid == "dtype=fp16,B=16,H=96,S=4096,D=128,causal=false" and name == "base"
            assert len(got) == 4 and [g["covered"] > 0.99 for g in got] == [not first, True, True, True]
            ran[(cid, name)] = statistics.median(g["mean_mhz"] for g in got if g["mean_mhz"])
    assert len(ran) == 16 and 1580 < min(ran.values()) and max(ran.values()) < 1875
    key = "dtype=fp16,B=16,H=96,S=4096,D=128,causal=true"
    t = headline(probed)[key]["timing"]
    assert t["base"]["median_sm_clock_mhz"] == t["sdpa_default"]["median_sm_clock_mhz"] == 1957.5
    assert (round(ran[(key, "base")]), round(ran[(key, "sdpa_default")])) == (1640, 1672)
    cycles = {n: t[n]["median_ms"] * ran[(key, n)] for n in ("base", "sdpa_default")}
    assert round(cycles["sdpa_default"] / cycles["base"], 3) == 1.074
    assert round(t["sdpa_default"]["median_ms"] / t["base"]["median_ms"], 3) == 1.054


def test_ours_pays_half_again_cudnns_cost_per_work_item_and_the_persistent_grid_pays_it_per_key_tile():
    """Runs 169 and 170 (NVIDIA H200 serials 1654024085003 and 1654924156289): fp16 D128 at B x S^2
    fixed (S = 2048, 4096, 8192, 16384, 96 heads), --cool-ms 12, cycles from the probe's clock. Fitted
    to A + C x items (per_item_fit; residuals under 0.5 % causal, 1.3 % without the mask), an item (a 128-row query block) costs
    our SM about 6300 cycles beyond its key tiles without the mask and 7500 with it (both runs),
    cuDNN's 2900 and 5000; our key tiles cost 9-13 % fewer cycles than cuDNN's (A). The persistent
    causal grid on 128-key tiles with run-time claims (dyn) cuts the item's cost to 3900 cycles
    (n128, the same tiles without it: 6200) but its tiles cost 4.4 % more; 192-key tiles (the
    default) cost 4.6 % less than 128-key ones. At S = 4096 the items are 16 % of our causal cycles."""
    r169, r170 = recorded(169, gpu="h200"), recorded(170, gpu="h200")
    assert (r169["gpu"]["serial"], r170["gpu"]["serial"]) == ("1654024085003", "1654924156289")
    assert r169["failures"] == r170["failures"] == []
    assert all(ck["ok"] for doc in (r169, r170) for c in doc["cases"] for ck in c["checks"].values())
    fit = {("169", n, causal): per_item_fit(r169, n, causal) for n in ("base", "sdpa_default") for causal in (False, True)}
    fit |= {("170", n, True): per_item_fit(r170, n, True) for n in ("base", "n128", "dyn", "sdpa_default")}
    assert max(resid for (_, _, causal), (_, _, resid) in fit.items() if causal) < 0.005
    assert max(resid for (_, _, causal), (_, _, resid) in fit.items() if not causal) < 0.013
    item = {k: round(v[1], -2) for k, v in fit.items()}
    assert item == {
        ("169", "base", False): 6300, ("169", "base", True): 7600, ("169", "sdpa_default", False): 2900,
        ("169", "sdpa_default", True): 4900, ("170", "base", True): 7500, ("170", "n128", True): 6200,
        ("170", "dyn", True): 3900, ("170", "sdpa_default", True): 5000,
    }
    a = {k: v[0] for k, v in fit.items()}
    assert round(a[("169", "sdpa_default", False)] / a[("169", "base", False)], 2) == 1.10
    assert round(a[("170", "sdpa_default", True)] / a[("170", "base", True)], 2) == 1.15
    assert round(a[("170", "dyn", True)] / a[("170", "n128", True)], 3) == 1.044
    assert round(a[("170", "n128", True)] / a[("170", "base", True)], 3) == 1.049
    a0, c0, _ = fit[("170", "base", True)]
    assert round(c0 / 132 * 49152 / (a0 + c0 / 132 * 49152), 2) == 0.16
    # Nsight Compute (run 171, the headline case): dyn executes 3.0 % more instructions than n128
    k = recorded_ncu("ncu-fa-h200-run171")
    inst = [int(x["smsp__inst_executed.sum"]) for x in k]  # base, n128, dyn, cuDNN
    assert round(inst[2] / inst[1], 3) == 1.030 and inst[0] < inst[1] < inst[2] < inst[3]


def test_a_uniform_item_pays_at_d64_causal_on_long_sequences_and_not_at_d128():
    """Run 172 (NVIDIA H200 serial 1654024032186; the causal cases at S = 4096 and 8192, the
    harness's regime, every build checked on every shape, --seq 200,4112 too): KG_FA_UNIFORM_ITEM
    (order 2's item through redux.sync: R2UR 64 -> 5 in the D128 causal instance) with order 2 at D64
    causal (o2u) is 3.0-3.7 % faster than the default's snake at S = 8192 and within 0.2 % of it at
    4096 (without it, dyn: 2.4-3.3 % and -0.3 to -0.8 %). At D128 causal on 128-key tiles (dynu
    against dyn) it changes nothing: 0.0-0.04 %; both stay 0.3 % (S = 4096) and 3 % (8192) behind
    the default's 192-key tiles. Nsight Compute (run 173): 0.4 % fewer instructions than dyn, still
    2.6 % more than the same tiles without the persistent grid, with DRAM reads 2.7 % up. The probe
    marks the snake's calls perturbed (it needs every SM) and not the claiming grid's."""
    g = h200_gains(172, "1654024032186", ["base", "n128", "dyn", "dynu", "o2u", "base2"], key=lambda p: (p["dtype"], p["D"], p["S"]))
    assert all(abs(v["base2"] - 1) < 0.0005 for v in g.values())
    doc = recorded(172, gpu="h200")
    assert len(doc["cases"]) == 24
    for c in doc["cases"]:
        if c["params"]["H"] == 96:
            perturbed = {n for n, got in c["clock_probe"].items() if got[0]["perturbed"]}
            assert perturbed == ({"base", "n128", "base2"} if c["params"]["D"] == 64 else set()), c["id"]
    d64 = {k: v for k, v in g.items() if k[1] == 64}
    assert [round(d64[(dt, 64, 8192)]["o2u"], 3) for dt in ("fp16", "bf16")] == [1.037, 1.030]
    assert all(abs(d64[(dt, 64, 4096)]["o2u"] - 1) < 0.002 for dt in ("fp16", "bf16"))
    assert [round(d64[(dt, 64, s)]["dyn"], 3) for s in (4096, 8192) for dt in ("fp16", "bf16")] == [0.997, 0.992, 1.033, 1.024]
    d128 = [v for k, v in g.items() if k[1] == 128]
    assert all(abs(v["dynu"] / v["dyn"] - 1) < 0.0005 for v in d128)
    k = recorded_ncu("ncu-fa-h200-run173")  # n128, dyn, dynu, cuDNN
    inst = [int(x["smsp__inst_executed.sum"]) for x in k]
    assert round(inst[2] / inst[1], 3) == 0.996 and round(inst[2] / inst[0], 3) == 1.026
    assert [x["dram__bytes_read.sum"] for x in k] == ["4.83", "4.96", "4.96", "4.83"]


def test_k_and_v_descriptors_advanced_to_their_stage_once_per_tile():
    """Run 174 (NVIDIA H200 serial 1653924041624; D128 at S = 4096 and 8192, the harness's regime,
    every build checked on every shape): KG_FA_DESC_STAGE on the default's instances (bs) is 0.4-0.6 %
    faster at D128 causal, fp16 and bf16 at both lengths, where the two builds of the default are
    within 0.03 %; without the mask 0.1-0.9 % (the copies up to 0.4 % apart). With it the persistent
    causal grid on 128-key tiles (dyns, with KG_FA_UNIFORM_ITEM; its key loop 705 instructions against
    dyn's 718) is level with the default at S = 4096 and 2.9 % behind at 8192. dyns's non-causal
    instances, bs's code, read 0.980 at fp16 S = 4096 and within 0.2 % of bs elsewhere. Run 175,
    another H200, reads the same gain at D128 causal."""
    g = h200_gains(174, "1653924041624", ["base", "bs", "dyns", "base2"], key=lambda p: (p["dtype"], p["S"], p["causal"]))
    assert len(recorded(174, gpu="h200")["cases"]) == 16
    causal = [v for k, v in g.items() if k[2]]
    assert len(causal) == 4 and all(1.004 < v["bs"] < 1.006 and abs(v["base2"] - 1) < 0.0004 for v in causal)
    plain = [v for k, v in g.items() if not k[2]]
    assert all(1.0007 < v["bs"] < 1.0094 and abs(v["base2"] - 1) < 0.0042 for v in plain)
    assert [round(g[(dt, s, True)]["dyns"], 3) for s in (4096, 8192) for dt in ("fp16", "bf16")] == [0.999, 1.0, 0.972, 0.971]
    assert round(g[("fp16", 4096, False)]["dyns"], 3) == 0.98
    # again on another H200 (run 175, serial 1653924042041; the four causal D128 cases, 20 rounds):
    # 0.43-0.57 %, the copies within 0.01 %
    again = h200_gains(175, "1653924042041", ["base", "bs", "base2"])
    assert sorted(round(v["bs"], 4) for v in again.values()) == [1.0043, 1.0045, 1.0057, 1.0057]
    assert len(again) == 4 and all(abs(v["base2"] - 1) < 0.0002 for v in again.values())


def test_probe_runners_keeps_each_runners_clock_and_marks_calls_the_probe_slowed(capsys):
    """probe_runners: N probed calls per runner, round-robin, each behind the timing's spin; it
    prints each runner's median clock and its first and last tenth, and marks as perturbed (printing
    why, no clock) a runner whose probed calls ran more than 3 % longer than its timing's median."""
    calls = []

    class FakeProbe:
        def measure(self, fn, inputs, out, call_ms, cool_cycles, what):
            calls.append((what, call_ms, cool_cycles))
            slow = what.startswith("case: persistent")
            return {"call_ms": call_ms * (1.7 if slow else 1.01), "readings": 100, "mean_mhz": 1640.0 if not slow else 1500.0,
                    "slices_mhz": [1650.0] + [1640.0] * 8 + [1635.0], "covered": 0.999}

    args = fa.parse_args(["--build", "x=", "--out", "u.json", "--cool-ms", "2", "--clock-probe", "2"])
    runners = [("base", None), ("persistent", None)]
    timing = {"base": {"median_ms": 10.0}, "persistent": {"median_ms": 6.0}}
    got = fa.probe_runners(FakeProbe(), runners, {}, None, args, timing, "case")
    assert [c[0] for c in calls] == ["case: base probe 0", "case: persistent probe 0", "case: base probe 1", "case: persistent probe 1"]
    assert {c[2] for c in calls} == {3_960_000}  # the --cool-ms spin, in cycles
    assert [g["perturbed"] for g in got["base"]] == [False, False] and [g["perturbed"] for g in got["persistent"]] == [True, True]
    assert capsys.readouterr().out.splitlines() == [
        "case: base           SM clock as run (probe): 1640 MHz, first tenth 1650, last tenth 1635",
        "case: persistent     SM clock as run (probe): not kept: its calls ran 1.70x as long beside the probe (a grid that needs every SM)",
    ]


def causal_gains(run, serial, builds, causal=True):
    """An H200 run's builds, checked on every case, and {(dtype, B, S, D): {build: base's median
    over the build's}} on its causal cases, or (causal=False) the others (a shape timed twice keeps
    its second timing)."""
    doc = checked_h200_run(run, serial, builds)
    return {
        (c["params"]["dtype"], c["params"]["B"], c["params"]["S"], c["params"]["D"]): {
            n: c["timing"]["base"]["median_ms"] / t["median_ms"] for n, t in c["timing"].items()
        }
        for c in doc["cases"]
        if c["params"]["causal"] == causal
    }


def test_the_persistent_grid_on_160_key_tiles_with_the_output_in_its_q_buffer_is_2_pct_faster_at_d128_causal():
    """Runs 176-179 (four H200s, the twentieth session; the harness's regime, every build checked on
    every case). KG_FA_PERSISTENT_CAUSAL_D128=3 (two Q buffers, the output staged in the item's own)
    with 160-key tiles, KG_FA_DESC_STAGE, and items claimed at run time (order 2, KG_FA_UNIFORM_ITEM):
    2.1-2.6 % faster than the default at the headline's D128 causal cases (the copies within
    0.03 %), 0.5-0.9 % at B4 H96 S8192. The same grid in the snake's order (p160s): 1.0-1.9 % faster
    at the headline, 0.6-1.1 % slower at S = 8192. The 160-key tiles without the persistent grid
    (n160): 0.7 % slower. Claimed one item ahead (run 176's p160, run 177's p160e), B2 H3 S4112
    ran 28-29 % slower; claimed once the item's copies are issued, 1.4-1.9 %; heaviest first across
    the heads 26 % faster, while in sections of 32 MB of K and V that order cost the headline
    1.4-1.6 % (run 178): so (run 179, the claims then as the code's now) only on grids of at most
    four items per CTA. (The order's flags of these runs, KG_FA_CLAIM_LATE and KG_FA_CLAIM_SECTIONS,
    are gone: the fixtures' README says what each build did.) The smallest calls (S <= 1000,
    7-18 us) run 1-11 % slower with any of them: why none is a default yet."""
    r176 = causal_gains(176, "1654024198433", ["base", "n160", "p160", "p160s", "bs", "base2"])
    r177 = causal_gains(177, "1653724057632", ["base", "p160", "p160e", "p160s", "p128", "bs", "base2"])
    r178 = causal_gains(178, "1653724033384", ["base", "p160", "p160h", "p160s", "base2"])
    r179 = causal_gains(179, "1653824128515", ["base", "p160", "p160h", "p160s", "base2"])
    head = [(dt, 16, 4096, 128) for dt in ("fp16", "bf16")]
    long = [(dt, 4, 8192, 128) for dt in ("fp16", "bf16")]
    tail = [(dt, 2, 4112, 128) for dt in ("fp16", "bf16")]
    # the claims late, in the heads' order or (179's p160) KG_FA_CLAIM_SECTIONS 2's
    late = [(r176, "p160"), (r177, "p160"), (r178, "p160h"), (r179, "p160h"), (r179, "p160")]
    assert all(1.020 <= g[k][b] <= 1.026 for g, b in late for k in head)
    assert all(abs(g[k]["base2"] - 1) < 0.0003 for g in (r176, r177, r178, r179) for k in head)
    assert all(1.004 <= g[k][b] <= 1.009 for g, b in late for k in long)
    assert all(1.010 <= g[k]["p160s"] <= 1.019 for g in (r176, r177, r178, r179) for k in head)
    assert all(0.989 <= g[k]["p160s"] <= 0.994 for g in (r176, r177, r178, r179) for k in long)
    assert [round(r176[k]["n160"], 4) for k in head] == [0.9934, 0.9932]
    # the grid's tail: one item ahead, late in the heads' order, heaviest first across the heads
    assert all(0.709 <= g[k][b] <= 0.720 for g, b in ((r176, "p160"), (r177, "p160e")) for k in tail)
    assert all(0.981 <= g[k][b] <= 0.987 for g, b in ((r177, "p160"), (r178, "p160h"), (r179, "p160h")) for k in tail)
    assert all(1.255 <= g[k]["p160"] <= 1.264 for g in (r178, r179) for k in tail)
    assert [round(r178[k]["p160"], 4) for k in head] == [1.0069, 1.0089]  # 32 MB sections at the headline
    # the smallest calls
    assert all(g[(dt, 2, 77, 128)]["p160"] < 0.92 for g in (r178, r179) for dt in ("fp16", "bf16"))
    # causal D64 (persistent by default, in the snake's order), order 2 instead: 2.6-3.9 % faster at
    # S = 8192, from 0.3 % slower to 1.1 % faster at the headline
    d64 = [(r177, "p160"), (r178, "p160h"), (r179, "p160h"), (r179, "p160")]
    assert all(1.026 <= g[(dt, 4, 8192, 64)][b] <= 1.040 for g, b in d64 for dt in ("fp16", "bf16"))
    assert all(0.996 <= g[(dt, 16, 4096, 64)][b] <= 1.011 for g, b in d64 for dt in ("fp16", "bf16"))


def test_the_persistent_160_key_grids_items_cost_about_cudnns_and_its_clock_is_lower():
    """Run 180 (H200 serial 1653824128515, run 179's machine): fp16 D128 causal at S = 2048 to 16384
    with B x S^2 fixed, cycles from the probe's clock (per_item_fit). The default (192-key tiles, a
    CTA per item): key tiles 14.22 Mcycles, 7,580 cycles an item (run 170: 14.14-14.20 and
    7,500-7,600); 160-key tiles without the persistent grid 14.36 and 7,530; with it (p160) 14.41
    and 5,170, cuDNN's 4,950. Its calls ran at 1593-1607 MHz against the default's 1598-1672: 4.1 %
    fewer cycles at the headline, 2.0 % less time."""
    doc = recorded(180, gpu="h200")
    assert doc["gpu"]["serial"] == "1653824128515" and doc["failures"] == []
    assert [b["name"] for b in doc["builds"]] == ["base", "p160", "n160"]
    fit = {n: per_item_fit(doc, n, True) for n in ("base", "p160", "n160", "sdpa_default")}
    assert {n: (round(a / 1e6, 2), round(c, -1)) for n, (a, c, _) in fit.items()} == {
        "base": (14.22, 7580.0),
        "p160": (14.41, 5170.0),
        "n160": (14.36, 7530.0),
        "sdpa_default": (16.37, 4950.0),
    }
    assert all(res < 0.003 for _, _, res in fit.values())
    case = next(c for c in doc["cases"] if c["params"]["S"] == 4096 and c["params"]["B"] == 16)
    mhz = {n: statistics.median(g["mean_mhz"] for g in case["clock_probe"][n]) for n in ("base", "p160")}
    assert {n: round(m) for n, m in mhz.items()} == {"base": 1632, "p160": 1601}
    cycles = {n: case["timing"][n]["median_ms"] * mhz[n] for n in mhz}
    assert round(cycles["base"] / cycles["p160"], 3) == 1.041
    assert round(case["timing"]["base"]["median_ms"] / case["timing"]["p160"]["median_ms"], 3) == 1.021


def test_nsight_compute_finds_the_persistent_160_key_grid_busier_per_cycle_than_cudnn_not_leaner():
    """Run 181 (H200 serial 1653724033586, ncu --clock-control none, one call each of fp16 D128 causal
    at the headline): the default, p160 and cuDNN read the same DRAM bytes (4.83 GB) and issue about
    as many MUFU instructions (423-429 M). p160 takes 3.8 % fewer cycles than the default for 1.9 %
    more instructions (8.2 % more wgmma instructions, at 160 keys a tile), 4 % more shared-memory
    wavefronts and the same L2 bytes; cuDNN 20.5 % more instructions than the default, 9.0 % more
    shared-memory wavefronts, 7 % fewer L2 bytes, and 7.0 % more cycles than the default, but at
    1.66 GHz where the default ran at 1.63 and p160 at 1.60: fewer instructions per FLOP is not what
    the clock rewards."""
    kernels = recorded_ncu("ncu-fa-h200-run181")
    assert [k["Kernel Name"][:30] for k in kernels] == ["void <unnamed>::fa_wgmma_kerne"] * 2 + ["cudnn_generated_fort_native_sd"]
    base, p160, cudnn = ({m: float(v) for m, v in k.items() if m != "Kernel Name" and v.replace(".", "").isdigit()} for k in kernels)
    assert {k["dram__bytes_read.sum"] for k in (base, p160, cudnn)} == {4.83}
    ratio = lambda m, k: round(k[m] / base[m], 3)  # noqa: E731
    assert [ratio("sm__cycles_elapsed.max", k) for k in (p160, cudnn)] == [0.962, 1.070]
    assert [ratio("smsp__inst_executed.sum", k) for k in (p160, cudnn)] == [1.019, 1.205]
    assert [ratio("smsp__inst_executed_pipe_tensor_op_gmma.sum", k) for k in (p160, cudnn)] == [1.082, 1.196]
    assert [ratio("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", k) for k in (p160, cudnn)] == [1.04, 1.09]
    assert [ratio("lts__t_bytes.sum", k) for k in (p160, cudnn)] == [1.001, 0.931]
    assert [k["SM Frequency"] for k in (base, p160, cudnn)] == [1.63, 1.60, 1.66]


def test_order_2_with_a_counter_per_call_keeps_the_gains_and_small_grids_need_no_counter():
    """Run 182 (H200 serial 1653724057388, a fifth machine), the committed code: order 2's counter
    is the call's own (stream-ordered memory, zeroed on the call's stream) and only grids of more than
    four items per CTA take one; smaller grids take their items in the snake's order, the query
    blocks heaviest first across all the heads. p160 2.1-2.2 % faster than the default at the
    headline's D128 causal cases, 0.6 % at B4 H96 S8192, 26.5-27.0 % at B2 H3 S4112 (198 items,
    no counter); the snake over the heads' order (p160s) 1.8-1.9 %, 0.4-0.5 % slower, 18.8-19.6 %.
    The smallest calls (S <= 1000) still 3-9 % slower with p160."""
    g = causal_gains(182, "1653724057388", ["base", "p160", "p160s", "base2"])
    dts = ("fp16", "bf16")
    assert [round(g[(dt, 16, 4096, 128)]["p160"], 3) for dt in dts] == [1.021, 1.022]
    assert [round(g[(dt, 4, 8192, 128)]["p160"], 3) for dt in dts] == [1.006, 1.006]
    assert [round(g[(dt, 2, 4112, 128)]["p160"], 3) for dt in dts] == [1.265, 1.270]
    assert [round(g[(dt, 16, 4096, 128)]["p160s"], 3) for dt in dts] == [1.019, 1.018]
    assert [round(g[(dt, 4, 8192, 128)]["p160s"], 3) for dt in dts] == [0.995, 0.996]
    assert [round(g[(dt, 2, 4112, 128)]["p160s"], 3) for dt in dts] == [1.196, 1.188]
    assert all(abs(g[(dt, 16, 4096, 128)]["base2"] - 1) < 0.0003 for dt in dts)
    assert all(0.91 < g[(dt, 2, s, 128)]["p160"] < 0.98 for dt in dts for s in (77, 200, 1000))
    # causal D64 (order 2 there too): 3.1-3.6 % faster at S = 8192, 0.9 % slower to level at the headline
    assert [round(g[(dt, 4, 8192, 64)]["p160"], 3) for dt in dts] == [1.036, 1.031]
    assert [round(g[(dt, 16, 4096, 64)]["p160"], 3) for dt in dts] == [1.0, 0.991]


def test_the_persistent_grid_does_not_pay_without_the_mask():
    """Run 183 (H200 serial 1653724033745): the non-causal D128 instances on KG_FA_PERSISTENT_CAUSAL
    3's grid (KG_FA_PERSISTENT_NONCAUSAL_D128=3, 160-key tiles, KG_FA_DESC_STAGE) 1.2-2.0 % slower
    than the default (176-key tiles, a CTA per item) at the headline and 1.7-1.8 % at B4 H96 S8192;
    the 160-key tiles alone 1.1-2.1 % and 0.4 %: what the narrower tiles cost, the persistent grid
    does not win back (at S = 8192 it loses 1.4 % more). The smallest calls 4-10 % slower on it."""
    g = causal_gains(183, "1653724033745", ["base", "nc160", "pnc160", "bs", "base2"], causal=False)
    dts = ("fp16", "bf16")
    assert [round(g[(dt, 16, 4096, 128)]["pnc160"], 3) for dt in dts] == [0.98, 0.988]
    assert [round(g[(dt, 16, 4096, 128)]["nc160"], 3) for dt in dts] == [0.979, 0.989]
    assert [round(g[(dt, 4, 8192, 128)]["pnc160"], 3) for dt in dts] == [0.982, 0.983]
    assert [round(g[(dt, 4, 8192, 128)]["nc160"], 3) for dt in dts] == [0.996, 0.996]
    assert all(abs(g[(dt, s, 4096 if s == 16 else 8192, 128)]["base2"] - 1) < 0.003 for dt in dts for s in (16, 4))
    assert all(0.90 < g[(dt, 2, s, 128)]["pnc160"] < 0.96 for dt in dts for s in (177, 1000))


def clean_h200_push(run):
    """A recorded harness push on an H200 (push-h200-runN): its verdict judged all 216 cases new
    (no baseline), none failed; its results."""
    import gzip

    push = os.path.join(REPO, "test", "fixtures", "recorded", f"push-h200-run{run}")
    with open(os.path.join(push, "verdict.json")) as f:
        assert json.load(f)["counts"] == {"failed": 0, "drift": 0, "slower": 0, "faster": 0, "ambiguous": 0, "new": 216, "missing": 0}
    with gzip.open(os.path.join(push, "results.json.gz")) as f:
        res = json.load(f)
    assert res["environment"]["gpu"]["name"] == "NVIDIA H200"
    return res


def shape_gains(run, serial, builds, ref="base"):
    """An H200 run's builds, checked on every case, and {(dtype, B, H, S, D): {build: the build's
    median over ref's}} (above 1: slower than ref) on its causal cases (a shape timed twice keeps its
    second timing)."""
    doc = checked_h200_run(run, serial, builds)
    return {
        tuple(c["params"][k] for k in ("dtype", "B", "H", "S", "D")): {
            n: t["median_ms"] / c["timing"][ref]["median_ms"] for n, t in c["timing"].items()
        }
        for c in doc["cases"]
        if c["params"]["causal"]
    }


def test_the_persistent_causal_d128_grid_on_160_key_tiles_is_the_default_on_h200s():
    """Run 184 (an H200, the twenty-first session; the harness's regime, 15 rounds): the new default
    (base: the persistent grid of KG_FA_PERSISTENT_CAUSAL_D128 3 on 160-key tiles, order 2, a CTA
    per item on 192-key tiles for calls of at most one item per SM) against two builds of the old
    one (old, old2: -DKG_FA_CAUSAL_BLOCK_N_D128=192, within 0.0-1.8 % of each other). Faster at
    D128 causal by 1.9 % at the headline, 0.5 % at B4 H96 S8192, 27-28 % at B2 H3 S4112, 26-28 %
    at B2 H16 S1024, 11-12 % at B32 H32 S512, 19-20 % at B16 H32 S256; the calls of at most one item
    per SM (B2 H3 S <= 1000, B1 H8 S2048: the old default's instances) level within the copies'
    spread; B1 H9 S2048 (144 items on 132 SMs) 0.3-0.9 % slower. Run 185, the harness's push on the
    default (another H200): 216 PASS, nothing failed; run 190 the same on the final library. Run 186 (a third): the persistent grid on
    128-key tiles (p128) 6-9 % faster than the default at S <= 1024 with many items, 2-3 % slower
    at 4096 and 8192, 2-10 % on the B2 H3 grids; D64 causal on a CTA per item (d64np) 1-4 % faster
    on grids of at most one item per SM, 3-21 % slower elsewhere; order 2 at D64 causal (d64o2)
    16-17 % faster at B2 H16 S1024, 2.6-3.3 % at S = 8192, 3-9 % slower at S <= 512 and on the
    small grids.
    None of these is an H100's figure."""
    g = shape_gains(184, "1653824016921", ["old", "base", "old2"])
    speedup = {k: v["old"] for k, v in g.items()}  # the old default's median over the new one's
    assert all(abs(v["old2"] / v["old"] - 1) < 0.019 for v in g.values())
    by = lambda B, H, S: [speedup[(dt, B, H, S, 128)] for dt in ("fp16", "bf16")]  # noqa: E731
    assert all(1.019 < v < 1.020 for v in by(16, 96, 4096))
    assert all(1.004 < v < 1.006 for v in by(4, 96, 8192))
    assert all(1.27 < v < 1.29 for v in by(2, 3, 4112))
    assert all(1.25 < v < 1.29 for v in by(2, 16, 1024))
    assert all(1.11 < v < 1.13 for v in by(32, 32, 512))
    assert all(1.19 < v < 1.20 for v in by(16, 32, 256))
    small = by(2, 3, 77) + by(2, 3, 200) + by(2, 3, 1000) + by(1, 8, 2048)
    assert all(0.995 <= v <= 1.015 for v in small)
    assert all(0.991 < v < 0.997 for v in by(1, 9, 2048))
    # SDPA's default (cuDNN) stays ahead at the short sequences of large batches: 6.7-7.1 % at S =
    # 512, 11.9-12.8 % at S = 256
    base_over_sdpa = {k: g[k]["base"] / g[k]["sdpa_default"] for k in g}
    assert all(1.066 < base_over_sdpa[(dt, 32, 32, 512, 128)] < 1.072 for dt in ("fp16", "bf16"))
    assert all(1.118 < base_over_sdpa[(dt, 16, 32, 256, 128)] < 1.129 for dt in ("fp16", "bf16"))
    # run 185: the push on commit a531749
    res = clean_h200_push(185)
    att = {(c["variant"], c["case"]): c for c in res["cases"] if c["kernel"] == "attention"}
    assert all(c["correctness"]["status"] == "PASS" for (v, _), c in att.items() if v == "cuda_fa_wgmma")
    ratio = {
        case: att[("sdpa_default", case)]["timing"]["median_ms"] / c["timing"]["median_ms"]
        for (v, case), c in att.items()
        if v == "cuda_fa_wgmma" and ("sdpa_default", case) in att
    }
    assert round(ratio["dtype=fp16,B=16,H=96,S=4096,D=128,causal=true"], 3) == 1.101
    assert round(ratio["dtype=bf16,B=16,H=96,S=4096,D=128,causal=true"], 3) == 1.134
    # run 190, the push on commit b4919ea (the short sequences' 128-key tiles too) on another H200:
    # nothing failed; fp16 D128 causal 1.079x, with our median where run 185 had it and SDPA's 2.2 %
    # faster than there
    res190 = clean_h200_push(190)
    head = "dtype=fp16,B=16,H=96,S=4096,D=128,causal=true"
    med = {
        (run, c["variant"]): c["timing"]["median_ms"]
        for run, doc in ((185, res), (190, res190))
        for c in doc["cases"]
        if c["kernel"] == "attention" and c["case"] == head and c["variant"] in ("cuda_fa_wgmma", "sdpa_default")
    }
    assert round(med[(190, "sdpa_default")] / med[(190, "cuda_fa_wgmma")], 3) == 1.079
    assert abs(med[(190, "cuda_fa_wgmma")] / med[(185, "cuda_fa_wgmma")] - 1) < 0.003
    assert 0.975 < med[(190, "sdpa_default")] / med[(185, "sdpa_default")] < 0.98
    # run 186: p128, d64np, d64o2 beside the default (base, base2 within 1.1 % on the large grids)
    g = shape_gains(186, "1653724066279", ["base", "p128", "d64o2", "d64np", "base2"])
    d128 = lambda B, H, S, b: [g[(dt, B, H, S, 128)][b] for dt in ("fp16", "bf16")]  # noqa: E731
    d64 = lambda B, H, S, b: [g[(dt, B, H, S, 64)][b] for dt in ("fp16", "bf16")]  # noqa: E731
    assert all(1.021 < v < 1.023 for v in d128(16, 96, 4096, "p128")) and all(1.033 < v < 1.035 for v in d128(4, 96, 8192, "p128"))
    assert all(0.905 < v < 0.945 for S, B, H in ((1024, 2, 16), (512, 32, 32), (256, 16, 32)) for v in d128(B, H, S, "p128"))
    assert all(1.02 < v < 1.11 for S in (77, 200, 1000, 4112) for v in d128(2, 3, S, "p128"))
    assert all(0.95 < v < 0.99 for S in (77, 200) for v in d64(2, 3, S, "d64np"))
    assert all(1.03 < v for S, B, H in ((4096, 16, 96), (1024, 2, 16), (512, 32, 32), (256, 16, 32)) for v in d64(B, H, S, "d64np"))
    assert all(0.85 < v < 0.86 for v in d64(2, 16, 1024, "d64o2")) and all(0.968 < v < 0.976 for v in d64(4, 96, 8192, "d64o2"))
    assert all(1.03 < v < 1.08 for S, B, H in ((512, 32, 32), (256, 16, 32)) for v in d64(B, H, S, "d64o2"))


def causal_tile_keys(seq, w):
    """The keys a head's causal D128 items compute on w-key tiles (fa_wgmma.cu's causal_tile_keys,
    for seq_q = seq_k = seq): each 128-row query block takes the tiles holding its keys, the last whole."""
    return sum(-(-min(seq, m0 + 128) // w) * w for m0 in range(0, seq, 128))


def test_short_causal_d128_sequences_take_the_persistent_grid_on_128_key_tiles_where_those_compute_fewer_keys():
    """Runs 187-189 (three H200s, the twenty-first session; the harness's regime). The persistent
    grid on 128-key tiles against its 160-key ones, at D128 causal on grids of many items: 8-9 %
    faster at S = 384 and 512, 2.5-3 % at S = 1000 and 1024, 1 % at 1536, level at 2048, 1.3-1.7 %
    slower at 3072, 2.2 % at 4096 (run 187, p128 beside the default) and 7.5 % slower at S = 129 (run
    188), where the 128-key tiles compute 1.2x the keys. The rule in dispatch() (short_tiles_pay():
    128-key tiles where they compute at most 94 % of the keys) keeps the 160-key tiles at S = 129,
    1537 and 2048 (run 189: level, within 0.7 %) and takes the 128-key ones from S = 256 to 1536:
    0.7-10 % faster (runs 188, 189: prev and prev2 are -DKG_FA_CAUSAL_SHORT_KEYS_D128=0)."""
    ratio = {s: causal_tile_keys(s, 128) / causal_tile_keys(s, 160) for s in (129, 256, 384, 512, 640, 800, 1000, 1024, 1536, 1537, 2048, 3072, 4096)}
    assert round(ratio[129], 3) == 1.2 and round(ratio[1536], 3) == 0.931 and round(ratio[2048], 3) == 0.946
    # run 187: the 128-key tiles' time over the 160-key ones', against the keys' ratio
    g = shape_gains(187, "1653724025457", ["base", "p128", "base2"])
    p128 = {k[1:4]: v["p128"] for k, v in g.items() if k[2] != 3}
    assert all(abs(v["base2"] - 1) < 0.0065 for k, v in g.items() if k[2] != 3)
    assert all(0.91 < p128[(B, H, S)] < 0.92 for B, H, S in ((64, 16, 384),))
    assert all(0.96 < p128[(8, 32, S)] < 0.976 for S in (1024,)) and 0.989 < p128[(8, 32, 1536)] < 0.992
    assert 1.002 < p128[(8, 32, 2048)] < 1.008 and 1.013 < p128[(8, 32, 3072)] < 1.017 and 1.021 < p128[(16, 96, 4096)] < 1.023
    # runs 188-189: the kernel's choice (base) against the 160-key tiles alone (prev, prev2)
    for run, serial in ((188, "1653724056404"), (189, "1653724063181")):
        g = shape_gains(run, serial, ["prev", "base", "prev2"])
        for (dt, _b, H, S, _d), v in g.items():
            copies = (v["prev"] + v["prev2"]) / 2
            if H == 3 or S == 128 or S > 2048 or (run, S) == (188, 129):
                continue  # a CTA per item (the small grids, S <= 128), the headline, and run 188's S = 129
            if ratio[S] <= 0.94:
                assert copies > 1.0065, (run, dt, S, copies)  # the 128-key tiles: faster
            else:
                assert abs(copies - 1) < 0.0065, (run, dt, S, copies)  # the 160-key tiles: the same code
    g = shape_gains(188, "1653724056404", ["prev", "base", "prev2"])
    assert all(0.92 < g[(dt, 64, 32, 129, 128)]["prev"] < 0.93 for dt in ("fp16", "bf16"))  # 128-key tiles then, 7.5 % slower
    assert all(1.09 < g[(dt, 32, 32, 512, 128)]["prev"] < 1.11 for dt in ("fp16", "bf16"))


def test_causal_d64_takes_order_2_where_the_snakes_rounds_are_uneven_on_h200s():
    """Runs 191-193 (three H200s, the twenty-second session; the harness's regime, 15 rounds). Run
    191: against the snake (base, commit c8d3c08's default) order 2 (d64o2) is 1.56x faster at B1
    H16 S16384 and 1.17x at B1 H32 S8192 (the snake's busiest CTA 1.69x and 1.29x the mean), 1.16x
    at B2 H16 S1024 (at most four items per CTA: no counter), level at the headline, but 5-13 %
    slower at S <= 1024 of many items; a CTA per item (d64np) 1-2 % faster at B2 H3 S77 and S1000.
    Run 192: the counter's items across the heads (o2xc) take 1.07x the snake's time at the
    headline, and at D128 1.00-1.30x the default's (head after head). Run 193: an uncommitted first
    version of the new default (base) against two builds of the old (old, old2); x0 the counter's
    items head after head."""
    g = shape_gains(191, "1653724057717", ["base", "d64o2", "d64np", "base2"])
    assert all(abs(v["base2"] - 1) < 0.006 for v in g.values())
    o2 = {k[1:4]: 1 / v["d64o2"] for k, v in g.items()}  # the snake's time over order 2's
    assert 1.55 < o2[(1, 16, 16384)] < 1.57 and 1.16 < o2[(1, 32, 8192)] < 1.18 and 1.03 < o2[(4, 96, 8192)] < 1.04
    assert 1.16 < o2[(2, 16, 1024)] < 1.17 and abs(o2[(16, 96, 4096)] - 1) < 0.001
    assert all(o2[(B, H, S)] < 0.96 for B, H, S in ((8, 16, 1024), (8, 32, 1024), (64, 16, 384), (16, 32, 256)))
    assert all(0.97 < g[("fp16", 2, 3, S, 64)]["d64np"] < 0.99 for S in (77, 1000))
    g = shape_gains(192, "1653724049489", ["base", "o2x", "o2xc", "base2"])
    assert all(abs(v["base2"] - 1) < 0.008 for v in g.values())
    assert 1.07 < g[("fp16", 16, 96, 4096, 64)]["o2xc"] < 1.08
    d128 = [v["o2xc"] for k, v in g.items() if k[4] == 128 and k[1] * k[2] * -(-k[3] // 128) > 4 * 132]
    assert len(d128) == 10 and all(0.995 < x < 1.31 for x in d128) and max(d128) > 1.29
    # run 193: the new default's choices, each against the old default (its time over the old's)
    g = shape_gains(193, "1653325086018", ["base", "old", "x0", "old2"], ref="old")
    assert all(abs(v["old2"] - 1) < 0.027 for v in g.values())
    by = lambda B, H, S, n="base": [g[(dt, B, H, S, 64)][n] for dt in ("fp16", "bf16")]  # noqa: E731
    assert all(0.60 < v < 0.62 for v in by(1, 16, 16384)) and all(0.78 < v < 0.81 for v in by(1, 8, 32768) + by(1, 32, 8192))
    assert all(0.87 < v < 0.90 for v in by(2, 32, 8192)) and all(0.94 < v < 0.96 for v in by(2, 32, 4096) + by(4, 32, 8192))
    assert all(0.96 < v < 0.98 for v in by(4, 96, 8192)) and all(0.98 < v < 0.99 for v in by(4, 32, 2048) + by(8, 16, 2048))
    assert all(0.72 < v < 0.73 for v in by(4, 16, 1280)) and all(0.86 < v < 0.87 for v in by(2, 16, 1024))
    # order 2 where the committed rule keeps the snake: 5-6 % slower at 7-8 blocks a head, level to
    # 0.7 % slower at the headline
    assert all(1.04 < v < 1.06 for v in by(8, 32, 1536) + by(16, 16, 1280)) and all(0.99 < v < 1.01 for v in by(16, 96, 4096))
    # the counter's items across the heads where the call's K and V fit 64 MiB or it has at most 66
    # heads: 3-7 % faster than head after head (x0)
    for B, H, S in ((1, 16, 16384), (1, 32, 8192), (2, 32, 4096), (4, 32, 2048), (8, 16, 2048), (1, 8, 32768)):
        assert all(1.02 < x / b < 1.075 for x, b in zip(by(B, H, S, "x0"), by(B, H, S), strict=True)), (B, H, S)
    # a CTA per item at B2 H3 S77: 3-6 % faster
    assert all(0.94 < v < 0.97 for v in by(2, 3, 77))


def test_the_snake_keeps_the_calls_whose_rounds_come_out_within_4_percent():
    """Run 194 (an H200, the twenty-second session): with the snake's threshold at 2 % (base, the
    working tree then) the shapes whose snake's busiest CTA sits 2.7-3.4 % over the mean took order
    2, and so did o2 (order 2 wherever the grid is persistent): 0.3-4.9 % slower than the old
    default's snake (old); B2 H48 S4096 (1.003) kept the snake, where order 2 is 6.6 % slower; the
    per-case log names each build's instance (kg_fa_wgmma_instance)."""
    doc = checked_h200_run(194, "1653724057074", ["base", "old", "o2"])
    g = shape_gains(194, "1653724057074", ["base", "old", "o2"], ref="old")
    near = ((8, 32, 4096), (4, 32, 3072), (16, 16, 3584), (4, 32, 6144), (8, 32, 2304), (8, 32, 1792), (8, 16, 4096))
    assert all(1.002 < g[(dt, *s, 64)]["o2"] < 1.05 for s in near for dt in ("fp16", "bf16"))
    assert all(1.06 < g[(dt, 2, 48, 4096, 64)]["o2"] < 1.07 for dt in ("fp16", "bf16"))
    instances = {tuple(c["params"][k] for k in ("B", "H", "S")): c["instances"] for c in doc["cases"] if c["params"]["dtype"] == "fp16"}
    assert instances[(2, 48, 4096)] == {"base": "D64 causal snake", "old": "D64 causal", "o2": "D64 causal"}
    assert all(instances[s]["base"] == "D64 causal" for s in near)
    assert instances[(2, 3, 77)]["base"] == "D64 causal per item"
    # where base took the snake, the old default's code: level with it
    assert all(abs(g[(dt, *s, 64)]["base"] - 1) < 0.003 for s in ((16, 96, 4096), (2, 48, 4096), (8, 32, 1536)) for dt in ("fp16", "bf16"))


def test_the_committed_causal_d64_choice_and_its_push_on_an_h200():
    """Run 195 (an H200, the twenty-second session, one call): the harness's push on commit 1e5c41b
    (20 instances): 216 PASS, 1 skipped, nothing failed; then the committed rule (base) against the
    old default (old) at the shapes of runs 193-194: faster where it takes order 2 or a CTA per
    item, level where it keeps the snake (the old default's code). None of it an H100's figure."""
    res = clean_h200_push(195)
    assert [c["correctness"]["status"] for c in res["cases"] if c.get("correctness")].count("PASS") == 216
    att = {(c["variant"], c["case"]): c["timing"]["median_ms"] for c in res["cases"] if c["kernel"] == "attention" and c.get("timing")}
    ratio = {case: att[("sdpa_default", case)] / ms for (v, case), ms in att.items() if v == "cuda_fa_wgmma"}
    head = "dtype={},B=16,H=96,S=4096,D=64,causal=true"
    assert [round(ratio[head.format(dt)], 3) for dt in ("fp16", "bf16")] == [1.118, 1.129]
    doc = checked_h200_run(195, "1653724000223", ["base", "old"])
    g = shape_gains(195, "1653724000223", ["base", "old"], ref="old")
    by = lambda B, H, S: [g[(dt, B, H, S, 64)]["base"] for dt in ("fp16", "bf16")]  # noqa: E731
    assert all(0.60 < v < 0.62 for v in by(1, 16, 16384)) and all(0.79 < v < 0.81 for v in by(1, 32, 8192))
    assert all(0.96 < v < 0.97 for v in by(4, 96, 8192)) and all(0.71 < v < 0.73 for v in by(4, 16, 1280))
    assert all(0.98 < v < 0.99 for v in by(4, 32, 2048)) and all(0.96 < v < 0.975 for v in by(2, 3, 77))
    snake = [(16, 96, 4096), (16, 16, 1280), (8, 16, 4096), (2, 48, 4096)]
    assert all(abs(v - 1) < 0.003 for s in snake for v in by(*s))
    instances = {tuple(c["params"][k] for k in ("B", "H", "S")): c["instances"]["base"] for c in doc["cases"]}
    assert all(instances[s] == "D64 causal snake" for s in snake) and instances[(1, 16, 16384)] == "D64 causal"


def test_causal_d128_takes_the_snake_at_few_items_per_cta_on_h200s():
    """Runs 196-197 (two H200s, the twenty-second session): the snake at causal D128 (snk:
    -DKG_FA_PERSISTENT_ORDER_D128=1, both persistent instances) against order 2 (base, commit
    2ec5dc4's default, whose counter hands the items out head after head): faster by 10-13 % at 7.8
    items per CTA, 2-5 % at 15.5-23, 0-3 % at 31, 1 % at 46.5; level at 62; 0.5-1.2 % slower at 186
    and 372 (B4 H96 S8192, the headline); 30 % slower at B1 H16 S16384, where its busiest CTA takes
    1.54x the mean. Hence KG_FA_D128_SNAKE_ITEMS (32) and KG_FA_D128_SNAKE_EVEN (5 %)."""
    g = shape_gains(196, "1653924042316", ["base", "snk", "base2"])
    assert all(abs(v["base2"] - 1) < 0.009 for k, v in g.items() if k[2] != 3)  # (B2 H3: microseconds)
    snk = {k: 1 / v["snk"] for k, v in g.items()}  # order 2's time over the snake's
    by = lambda B, H, S: [snk[(dt, B, H, S, 128)] for dt in ("fp16", "bf16")]  # noqa: E731
    assert all(1.12 < v < 1.14 for v in by(8, 16, 1024) + by(16, 32, 256))
    assert all(1.02 < v < 1.06 for v in by(8, 32, 1024) + by(4, 32, 2048) + by(2, 32, 4096) + by(1, 32, 8192) + by(64, 16, 384))
    assert all(0.98 < v < 0.996 for v in by(16, 96, 4096) + by(4, 96, 8192)) and all(0.99 < v < 1.01 for v in by(8, 32, 4096))
    assert all(0.69 < v < 0.71 for v in by(1, 16, 16384))
    g = shape_gains(197, "1653924042984", ["base", "snk"])
    snk = {k[1:4]: 1 / v["snk"] for k, v in g.items()}
    assert all(snk[s] > 1.10 for s in ((4, 16, 2048), (2, 16, 4096), (32, 16, 256)))
    assert all(1.0 <= snk[s] < 1.035 for s in ((8, 32, 2048), (4, 32, 4096), (8, 16, 4096), (16, 32, 1024), (32, 32, 512)))
    assert 0.995 < snk[(2, 32, 8192)] < 1.005 and 1.005 < snk[(12, 32, 2048)] < 1.015


class SettleGpu:
    """A stream whose kernels take their time times a factor the op before them left (a spin:
    0.8, the clock high; a GEMM: 1.3, the clock low; the same runner: 1.0), run as queued."""

    AFTER = {"spin": 0.8, "gemm": 1.3}

    def __init__(self, ms):
        self.ms, self.t, self.prev, self.ops = ms, 0.0, None, []

    def run(self, name, ms):
        self.t += ms * (self.AFTER.get(self.prev, 1.0) if self.prev != name else 1.0)
        self.prev = name
        self.ops.append(name)

    def torch(self):
        gpu = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = gpu.t

            def query(self):
                return True

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.at - self.at

        cuda = types.SimpleNamespace(Event=Event, _sleep=lambda cycles: gpu.run("spin", 60.0))
        return types.SimpleNamespace(
            cuda=cuda,
            float16="fp16",
            randn=lambda *a, **k: None,
            empty_like=lambda x: None,
            matmul=lambda a, b, out=None: gpu.run("gemm", 1.6),
        )


def test_settle_times_each_runner_after_a_cool_and_a_hot_lead_then_at_its_own_steady_state():
    gpu = SettleGpu({})
    runners = [("base", lambda inputs, out: gpu.run("base", 20.0)), ("sdpa_default", lambda inputs, out: gpu.run("sdpa_default", 21.0))]
    args = types.SimpleNamespace(settle=4, lead_ms=60.0, rounds=3, warmup_s=0.0)
    doc = fa.settle_runners(gpu.torch(), runners, {}, None, args, "case")
    assert doc["calls"] == 4 and doc["hot_lead_gemms"] == 38  # 60 ms of 1.6 ms GEMMs
    assert doc["runners"]["base"]["cool"] == [[16.0, 20.0, 20.0, 20.0]] * 3
    assert doc["runners"]["base"]["hot"] == [[26.0, 20.0, 20.0, 20.0]] * 3
    per_call, steady = fa.settle_summary(doc)
    assert per_call["sdpa_default"] == {"cool": pytest.approx([16.8, 21.0, 21.0, 21.0]), "hot": pytest.approx([27.3, 21.0, 21.0, 21.0])}
    assert steady == {"base": 20.0, "sdpa_default": 21.0}
    # after the six GEMMs that size the hot lead, every sequence of four calls right behind its
    # lead (no warm-up at --warmup-s 0)
    assert gpu.ops[:6] == ["gemm"] * 6
    runs, i = [], 6
    while i < len(gpu.ops):
        lead = gpu.ops[i]
        while gpu.ops[i] == lead:
            i += 1
        runs.append((lead, tuple(gpu.ops[i : i + 4])))
        i += 4
    assert len(runs) == 2 * 2 * 3 and {lead for lead, _ in runs} == {"spin", "gemm"}
    assert sorted(set(runs)) == [(lead, (v,) * 4) for lead in ("gemm", "spin") for v in ("base", "sdpa_default")]
    assert fa.parse_args(["--build", "base=", "--settle", "8", "--out", "x.json"]).settle == 8


def test_settle_leads_may_be_a_runner_then_an_l2_reset_or_flush():
    """--settle-leads: a runner's name leads with its own calls for about --lead-ms (from three timed
    after the warm-up), +reset calls the L2 reset after the lead, +flush writes a buffer of four
    times the L2 over it; each (runner, lead) sequence is then the runner's calls, timed."""
    gpu = SettleGpu({})
    resets, flushes = [], []
    torch = gpu.torch()
    torch.uint8 = "u8"
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_properties = lambda i: types.SimpleNamespace(L2_cache_size=60 << 20)
    torch.empty = lambda n, dtype, device: types.SimpleNamespace(n=n, zero_=lambda: (flushes.append(n), gpu.run("flush", 0.1)))
    runners = [("base", lambda inputs, out: gpu.run("base", 20.0)), ("sdpa_default", lambda inputs, out: gpu.run("sdpa_default", 21.0))]
    leads = fa.parse_args(["--build", "base=", "--settle", "2", "--settle-leads", "cool,sdpa_default,sdpa_default+reset,base+flush", "--out", "x"]).settle_leads
    assert leads == ["cool", "sdpa_default", "sdpa_default+reset", "base+flush"]
    args = types.SimpleNamespace(settle=2, lead_ms=60.0, rounds=2, warmup_s=0.0, settle_leads=leads)
    doc = fa.settle_runners(torch, runners, {}, None, args, "case", l2_reset=lambda: resets.append(gpu.prev))
    assert doc["lead_calls"] == {"sdpa_default": 3, "base": 3}  # 60 ms of 21 and 20 ms calls
    assert set(doc["runners"]["base"]) == set(leads) and all(len(x) == 2 for r in doc["runners"].values() for x in r.values())
    # behind a lead of the same runner its first call is at its own rate; behind another's, not
    assert doc["runners"]["base"]["base+flush"] == [[20.0, 20.0]] * 2
    assert doc["runners"]["sdpa_default"]["sdpa_default"] == [[21.0, 21.0]] * 2
    assert resets == ["sdpa_default"] * 4  # two runners, two repetitions, right after the lead's calls
    assert flushes == [4 * (60 << 20)] * 4
    assert doc["runners"]["sdpa_default"]["base+flush"] == [[21.0, 21.0]] * 2  # behind the flush, not base
    with pytest.raises(SystemExit, match=r"--settle-leads: 'cudnn\+reset': 'cudnn' is neither cool, hot nor a runner of case \(base, sdpa_default\)"):
        fa.settle_runners(torch, runners, {}, None, types.SimpleNamespace(**{**vars(args), "settle_leads": ["cudnn+reset"]}), "case")


@pytest.mark.parametrize(
    "value, message",
    [
        ("cool,hot+cold", "'hot+cold': expected cool, hot or a runner's name, optionally followed by +reset or +flush"),
        ("+reset", "'+reset': expected cool, hot or a runner's name, optionally followed by +reset or +flush"),
        ("cool,cool", "'cool,cool': a lead named twice"),
    ],
)
def test_settle_leads_refuses_what_it_cannot_run(value, message, capsys):
    with pytest.raises(SystemExit):
        fa.parse_args(["--build", "base=", "--settle", "2", "--settle-leads", value, "--out", "x"])
    assert f"argument --settle-leads: {message}" in capsys.readouterr().err


def test_on_an_h200_a_headline_call_reads_what_ran_before_it_and_settles_in_about_100_ms():
    """Run 198 (an H200, the twenty-third session, fa-experiment.py --settle 8): each runner's eight
    calls back to back after a cool lead (a 60 ms spin) and after a hot one (60 ms of cuBLAS at the
    power cap), eight repetitions. fp16 D128 without the mask: ours 18.95 ms as the first call after
    the cool lead, 23.21 after the hot one, 21.98 from the sixth call on after either (the power
    cap's clock settles in about 100 ms of load); SDPA's default 20.02, 24.60 and 23.25. So SDPA's
    default over ours reads 1.057, 1.060 and 1.058 in the three states, while the harness's
    median, which mixes samples behind cool and hot predecessors, read 0.997-1.027 on five H200
    pushes. The 128-key tile (n128) is 2.5-3.8 % slower than the default 176 at its steady state,
    as in the cool regime. Causal D64 (7 ms calls) has not settled after eight calls."""
    doc = checked_h200_run(198, "1653724055146", ["base", "n128"])
    calls = {}
    for c in doc["cases"]:
        if c["params"]["S"] == 4096:
            p = c["params"]
            calls[(p["dtype"], p["D"], p["causal"])] = fa.settle_summary(c["settle"])
    per, steady = calls[("fp16", 128, False)]
    assert [round(per["base"]["cool"][0], 2), round(per["base"]["hot"][0], 2), round(steady["base"], 2)] == [18.95, 23.21, 21.98]
    assert [round(per["sdpa_default"]["cool"][0], 2), round(per["sdpa_default"]["hot"][0], 2), round(steady["sdpa_default"], 2)] == [20.02, 24.6, 23.25]
    for dt in ("fp16", "bf16"):
        per, steady = calls[(dt, 128, False)]
        first = [per["sdpa_default"][lead][0] / per["base"][lead][0] for lead in ("cool", "hot")]
        states = first + [steady["sdpa_default"] / steady["base"]]
        assert all(1.05 < r < 1.065 for r in states), (dt, states)
        # settled: the last three calls after either lead within 0.5 % of each other
        tail = per["base"]["cool"][5:] + per["base"]["hot"][5:]
        assert max(tail) / min(tail) < 1.005
        assert 1.018 < steady["n128"] / steady["base"] < 1.04
    per, steady = calls[("fp16", 64, True)]
    assert per["base"]["hot"][-1] / per["base"]["cool"][-1] > 1.15  # still apart after 56 ms


def williams_cycle_means(results, case):
    """{variant: mean of its samples over the whole Williams cycles} for one case of a recorded
    push (sampling.round_order: n variants, a cycle of n rounds for an even n), with the round
    orders the samples came in: {variant: [(predecessor, ms), ...]} (None behind the lead-in)."""
    got = {c["variant"]: c["timing"]["samples_ms"] for c in results["cases"] if c["case"] == case and c.get("timing")}
    n = min(len(x) for x in got.values())
    cycle = len(got) if len(got) % 2 == 0 else 2 * len(got)
    whole = n // cycle * cycle
    return {v: statistics.mean(x[:whole]) for v, x in got.items()}, behind_in_rounds(got, n)


def behind_in_rounds(got, rounds=None, relabel=False):
    """{variant: [(predecessor, ms), ...]} for one case's samples ({variant: samples_ms}, in the
    order the harness timed them): round r in sampling.round_order's order over the variants in the
    results' order (None behind the lead-in); each variant's own samples (rounds: at most that many).
    relabel: the design's since the twenty-fifth session (the recordings read here are older)."""
    from kernelgate_harness.sampling import round_order

    names = list(got)
    behind = {v: [] for v in names}
    for r in range(rounds if rounds is not None else max(len(x) for x in got.values())):
        order = round_order(names, r, relabel=relabel)
        for i, v in enumerate(order):
            if r < len(got[v]):
                behind[v].append((order[i - 1] if i else None, got[v][r]))
    return behind


def timed_groups(res):
    """A results document's timed cases by (kernel, case id): the variants timed round by round
    together, in the results' order."""
    groups = {}
    for c in res["cases"]:
        if c.get("timing"):
            groups.setdefault((c["kernel"], c["case"]), []).append(c)
    return groups


def test_the_harness_headline_median_mixes_samples_behind_cool_and_hot_predecessors():
    """Five H200 pushes (runs 185, 190, 195, 200 and run 199's unsettled one): at fp16 D128 without
    the mask every sample of ours behind a cool predecessor (cuda_fa2, sdpa_efficient, sdpa_flash:
    slow kernels that leave the GPU under its power cap) reads 18.8-20.0 ms, every one behind
    cuDNN (sdpa_default, sdpa_cudnn) 20.8-23.3, on every machine apart: two modes, whose mix the median falls between, so
    SDPA's default over ours read 0.997-1.027 by the medians, 1.032-1.041 by the means over whole
    Williams cycles (every predecessor equally often) and 1.040-1.043 by the mean over the
    predecessors of the median behind each (stats.balanced, the harness's balanced_ms since). The harness's --settle-ms (100 ms of untimed
    calls of the same variant before each sample; run 199, withdrawn) left SDPA's two names for the
    same cuDNN kernel 2.0 and 3.4 % apart on the two cases it reached in its 290 s."""
    import gzip

    fixtures = os.path.join(REPO, "test", "fixtures", "recorded")
    runs = {r: clean_h200_push(r) for r in (185, 190, 195, 200)}
    with gzip.open(os.path.join(fixtures, "harness-settle-h200-run199", "unsettled.results.json.gz")) as f:
        runs[199] = json.load(f)
    case = "dtype=fp16,B=16,H=96,S=4096,D=128,causal=false"
    from kernelgate_harness.stats import balanced

    medians, means, bal = {}, {}, {}
    for r, res in runs.items():
        med = {c["variant"]: c["timing"]["median_ms"] for c in res["cases"] if c["case"] == case and c.get("timing")}
        mean, behind = williams_cycle_means(res, case)
        medians[r] = med["sdpa_default"] / med["cuda_fa_wgmma"]
        means[r] = mean["sdpa_default"] / mean["cuda_fa_wgmma"]
        est = {v: balanced([ms for _, ms in x], [p or "" for p, _ in x]) for v, x in behind.items()}
        assert all(groups == 8 for _, groups in est.values())
        bal[r] = est["sdpa_default"][0] / est["cuda_fa_wgmma"][0]
        cool = [ms for p, ms in behind["cuda_fa_wgmma"] if p in ("cuda_fa2", "sdpa_efficient", "sdpa_flash")]
        hot = [ms for p, ms in behind["cuda_fa_wgmma"] if p in ("sdpa_default", "sdpa_cudnn")]
        assert len(cool) == 18 and len(hot) == 14 and max(cool) < min(hot), r
        assert 18.7 < min(cool) and max(cool) < 20.1 and 20.8 < min(hot) and max(hot) < 23.3, (r, cool, hot)
    assert {r: round(x, 3) for r, x in medians.items()} == {185: 1.027, 190: 1.005, 195: 1.006, 200: 1.006, 199: 0.997}
    assert {r: round(x, 3) for r, x in means.items()} == {185: 1.041, 190: 1.037, 195: 1.041, 200: 1.032, 199: 1.034}
    # the harness's balanced estimate (stats.balanced, recorded as timing.balanced_ms since): the
    # mean over the eight predecessors of the median behind each
    assert {r: round(x, 3) for r, x in bal.items()} == {185: 1.042, 190: 1.043, 195: 1.041, 200: 1.04, 199: 1.04}
    with gzip.open(os.path.join(fixtures, "harness-settle-h200-run199", "settled.results.json.gz")) as f:
        settled = json.load(f)
    timed = {(c["case"], c["variant"]): c["timing"] for c in settled["cases"] if c.get("timing")}
    assert {case for case, _ in timed} == {case, case.replace("false", "true")}
    assert all(t["method"] == "events, settled 100 ms, interleaved" for t in timed.values())
    apart = [timed[(k, "sdpa_cudnn")]["median_ms"] / timed[(k, "sdpa_default")]["median_ms"] for k in (case, case.replace("false", "true"))]
    assert [round(x, 3) for x in apart] == [1.02, 1.034]


def test_the_d128_snakes_first_push_on_an_h200():
    """Run 200 (an H200, the twenty-third session, one call): the harness's push on commit 7f5440b,
    the first with the causal D128 snake (24 instances): 216 PASS, 1 skipped, every tail case ok,
    nothing failed. SDPA's default over ours at the headline by the medians: fp16 1.006 (D128),
    1.093 (causal), 1.113 (D64), 1.127 (causal); bf16 1.068, 1.130, 1.127, 1.130."""
    res = clean_h200_push(200)
    assert [c["correctness"]["status"] for c in res["cases"] if c.get("correctness")].count("PASS") == 216
    assert [t["status"] for t in res["tails"]].count("ok") == 153 and all(t["status"] in ("ok", "skipped") for t in res["tails"])
    att = {(c["variant"], c["case"]): c["timing"]["median_ms"] for c in res["cases"] if c["kernel"] == "attention" and c.get("timing")}
    ratio = {case: att[("sdpa_default", case)] / ms for (v, case), ms in att.items() if v == "cuda_fa_wgmma"}
    head = "dtype={},B=16,H=96,S=4096,D={},causal={}"
    got = [round(ratio[head.format(dt, d, c)], 3) for dt in ("fp16", "bf16") for d in (128, 64) for c in ("false", "true")]
    assert got == [1.006, 1.093, 1.113, 1.127, 1.068, 1.13, 1.127, 1.13]


def test_at_its_steady_power_on_an_h200_ours_leads_sdpa_by_5_to_11_percent():
    """Run 201 (another H200, the twenty-third session, fa-experiment.py --settle 24, five
    repetitions): the default's eight headline cases at the steady state of 24 calls back to back
    (the second half of each sequence, after either lead), where each kernel runs at its own power
    at the cap. SDPA's default over ours: fp16 1.056 (D128), 1.071 (causal), 1.104 (D64), 1.069
    (causal); bf16 1.054, 1.081, 1.111, 1.084. The causal cases lead by less at steady power than
    in the harness's rounds (1.09-1.13 on five pushes), where a sample follows cool kernels half
    the time; run 198 (another machine) read 1.058 / 1.084 / 1.101 (fp16) and 1.058 / 1.083 / 1.113
    (bf16) for the three cases it settled."""
    doc = checked_h200_run(201, "1653724049949", ["base"])
    steady = {}
    for c in doc["cases"]:
        p = c["params"]
        if p["S"] == 4096:
            _, st = fa.settle_summary(c["settle"])
            steady[(p["dtype"], p["D"], p["causal"])] = round(st["sdpa_default"] / st["base"], 3)
            assert c["settle"]["calls"] == 24 and all(len(seqs) == 5 for r in c["settle"]["runners"].values() for seqs in r.values())
    assert [steady[(dt, d, c)] for dt in ("fp16", "bf16") for d in (128, 64) for c in (False, True)] == [
        1.056, 1.071, 1.104, 1.069, 1.054, 1.081, 1.111, 1.084
    ]


def test_the_first_push_with_balanced_ms_records_what_its_samples_say():
    """Run 202 (an H200, the twenty-fourth session, one call): the harness's push on commit a65b7d6,
    the first to record timing.balanced_ms. 216 PASS, 1 skipped, nothing failed. Every case timed
    beside other variants (213 of 216: not the gemm calibration's three, each timed alone) carries
    it, and it is what stats.balanced makes of the case's samples with the predecessors
    sampling.round_order gave them. SDPA default over ours at the headline by the medians: fp16
    0.993 (D128), 1.110 (causal), 1.089 (D64), 1.129 (causal); balanced 1.031, 1.096, 1.092, 1.132
    (bf16 1.082, 1.124, 1.132, 1.118)."""
    from kernelgate_harness.stats import balanced

    res = clean_h200_push(202)
    assert [c["correctness"]["status"] for c in res["cases"] if c.get("correctness")].count("PASS") == 216
    checked = 0
    for cases in timed_groups(res).values():
        behind = behind_in_rounds({c["variant"]: c["timing"]["samples_ms"] for c in cases})
        for c in cases:
            t = c["timing"]
            if len(cases) == 1:
                assert "balanced_ms" not in t and "balanced_groups" not in t
                continue
            est = balanced([ms for _, ms in behind[c["variant"]]], [p or "" for p, _ in behind[c["variant"]]])
            assert (t["balanced_ms"], t["balanced_groups"]) == pytest.approx(est, rel=1e-12), (c["variant"], c["case"])
            checked += 1
    assert checked == 213
    att = {(c["variant"], c["case"]): c["timing"] for c in res["cases"] if c["kernel"] == "attention" and c.get("timing")}
    head = "dtype={},B=16,H=96,S=4096,D={},causal={}"
    keys = [head.format(dt, d, c) for dt in ("fp16", "bf16") for d in (128, 64) for c in ("false", "true")]
    med = [round(att[("sdpa_default", k)]["median_ms"] / att[("cuda_fa_wgmma", k)]["median_ms"], 3) for k in keys]
    bal = [round(att[("sdpa_default", k)]["balanced_ms"] / att[("cuda_fa_wgmma", k)]["balanced_ms"], 3) for k in keys]
    assert med == [0.993, 1.11, 1.089, 1.129, 1.079, 1.121, 1.126, 1.122]
    assert bal == [1.031, 1.096, 1.092, 1.132, 1.082, 1.124, 1.132, 1.118]


def test_fp16_and_bf16_run_the_same_instructions_and_rounded_operands_cost_less():
    """Run 203 (an H200, the twenty-fourth session; --rounded-inputs, the harness's regime, --cool-ms
    12). Nsight Compute at its locked clock (1.36 GHz): ours at fp16 and bf16 D128 the same cycles
    (30,315,442 and 30,315,360) and instructions (6.252e9), cuDNN one kernel for both dtypes (knob 7,
    a persistent grid of 132 CTAs, 7.457e9 instructions, 32.08-32.10 M cycles: 5.9 % more than
    ours); our two instantiations' SASS differ only in the P conversion's opcode (F2FP.F16 against
    F2FP.BF16, compiled here). Timed, fp16 over bf16 at D128: ours 1.032, SDPA's default 1.027; the
    fp16 inputs rounded to bf16's grid (the same instructions, operands with three fewer significand
    bits) take 1.2 % off ours and 3.4 % off cuDNN's, so SDPA default over ours reads 1.053 on the
    inputs, 1.030 rounded and 1.058 at bf16; at D64 nothing moves (1.120, 1.110, 1.119)."""
    doc = checked_h200_run(203, "1653724060849", ["base"])
    assert "--rounded-inputs" in doc["argv"] and doc["argv"][doc["argv"].index("--cool-ms") + 1] == "12"
    m = {}
    for c in doc["cases"]:
        p = c["params"]
        if p["S"] == 4096:
            m.update({(p["dtype"], p["D"], n): t["median_ms"] for n, t in c["timing"].items()})
    r = lambda a, b: round(m[a] / m[b], 3)  # noqa: E731
    assert r(("fp16", 128, "base"), ("bf16", 128, "base")) == 1.032
    assert r(("fp16", 128, "sdpa_default"), ("bf16", 128, "sdpa_default")) == 1.027
    assert r(("fp16", 128, "base@bf16grid"), ("fp16", 128, "base")) == 0.988
    assert r(("fp16", 128, "sdpa_default@bf16grid"), ("fp16", 128, "sdpa_default")) == 0.966
    ratios = {
        d: [
            r(("fp16", d, "sdpa_default"), ("fp16", d, "base")),
            r(("fp16", d, "sdpa_default@bf16grid"), ("fp16", d, "base@bf16grid")),
            r(("bf16", d, "sdpa_default"), ("bf16", d, "base")),
        ]
        for d in (128, 64)
    }
    assert ratios == {128: [1.053, 1.03, 1.058], 64: [1.12, 1.11, 1.119]}
    ours16, cudnn16, ours_bf, cudnn_bf = recorded_ncu("fa-experiment-h200-run203")
    assert "__half, 128" in ours16["Kernel Name"] and "__nv_bfloat16, 128" in ours_bf["Kernel Name"]
    assert cudnn16["Kernel Name"] == cudnn_bf["Kernel Name"] and "knob_7" in cudnn16["Kernel Name"]
    assert [k["SM Frequency"] for k in (ours16, cudnn16, ours_bf, cudnn_bf)] == ["1.36"] * 4
    assert (ours16["Elapsed Cycles"], ours_bf["Elapsed Cycles"]) == ("30315442", "30315360")
    assert (ours16["Executed Instructions"], ours_bf["Executed Instructions"]) == ("6251991744", "6251974992")
    assert (cudnn16["Executed Instructions"], cudnn_bf["Executed Instructions"]) == ("7457332140", "7457337236")
    assert round(int(cudnn16["Elapsed Cycles"]) / int(ours16["Elapsed Cycles"]), 3) == 1.059


def test_k_and_v_multicast_over_clusters_of_two_gains_at_steady_power_only():
    """Run 204 (an H200, the twenty-fourth session): KG_FA_CLUSTER_M=2 (K and V multicast to the two
    CTAs of a cluster, half the L2 reads) beside two builds of the default. In the harness's regime
    (--cool-ms 12) D128 the same (1.000 over the mean of the two copies, which were 0.0-0.4 % apart),
    D64 3.2-3.3 % slower; at steady power (--settle 16) D128 0.7-0.8 % faster (SDPA default over it
    1.066 against the default's 1.058, both dtypes). Off, as on the H100s (runs 112, 116)."""
    rounds = checked_h200_run(204, "1654124045283", ["base", "clu", "base2"], stem="rounds")
    got = {}
    for c in rounds["cases"]:
        p, t = c["params"], c["timing"]
        if p["S"] == 4096:
            copies = (t["base"]["median_ms"] + t["base2"]["median_ms"]) / 2
            got[(p["dtype"], p["D"])] = round(t["clu"]["median_ms"] / copies, 3)
    assert got == {("fp16", 128): 1.0, ("bf16", 128): 1.0, ("fp16", 64): 1.032, ("bf16", 64): 1.033}
    settle = checked_h200_run(204, "1654124045283", ["base", "clu"], stem="settle")
    steady = {}
    for c in settle["cases"]:
        if c["params"]["S"] == 4096:
            _, st = fa.settle_summary(c["settle"])
            steady[c["params"]["dtype"]] = (round(st["sdpa_default"] / st["base"], 3), round(st["sdpa_default"] / st["clu"], 3))
    assert steady == {"fp16": (1.058, 1.066), "bf16": (1.058, 1.066)}


def test_on_one_h200_the_balanced_ratio_repeats_where_the_median_moves():
    """Run 205 (an H200, the twenty-fourth session, one call): the harness twice on the headline
    attention cases (configs.txt: one seed, no tails), commit 7833c13. SDPA default over ours at fp16
    D128: balanced 1.035 and 1.034, medians 1.037 and 1.021; SDPA's two names for one cuDNN kernel
    (sdpa_cudnn over sdpa_default) within 1.3 % balanced on all eight cases of both runs, 1.9 % by the
    medians (half of the sixteen within 0.4 and 0.5 %)."""
    import gzip

    base = os.path.join(REPO, "test", "fixtures", "recorded", "harness-h200-run205")
    head = "dtype={},B=16,H=96,S=4096,D={},causal={}"
    keys = [head.format(dt, d, c) for dt in ("fp16", "bf16") for d in (128, 64) for c in ("false", "true")]
    ratios, aa_med, aa_bal = [], [], []
    for name in ("first", "second"):
        with gzip.open(os.path.join(base, f"{name}.results.json.gz")) as f:
            res = json.load(f)
        assert res["environment"]["gpu"]["name"] == "NVIDIA H200" and res["run"]["git_sha"].startswith("4248292")
        assert [c["correctness"]["status"] for c in res["cases"]] == ["PASS"] * 60
        t = {(c["variant"], c["case"]): c["timing"] for c in res["cases"]}
        ratio = lambda v, w, k, f, t=t: t[(v, k)][f] / t[(w, k)][f]  # noqa: E731
        ratios.append(
            [round(ratio("sdpa_default", "cuda_fa_wgmma", keys[0], f), 3) for f in ("balanced_ms", "median_ms")]
        )
        aa_med += [ratio("sdpa_cudnn", "sdpa_default", k, "median_ms") for k in keys]
        aa_bal += [ratio("sdpa_cudnn", "sdpa_default", k, "balanced_ms") for k in keys]
    assert ratios == [[1.035, 1.037], [1.034, 1.021]]
    assert round(max(abs(x - 1) for x in aa_bal), 3) == 0.013 and round(max(abs(x - 1) for x in aa_med), 3) == 0.019


def test_the_harness_mix_in_the_script_does_not_yet_read_what_the_harness_reads():
    """Run 206 (an H200, the twenty-fourth session; --mix --burst-ms 0, shuffled rounds): ours and
    SDPA's default behind the attention kernel's six other variants, one call a sample, as in the
    harness. Every variant passed its check on every case, none refused. fp16 D128: SDPA default
    over ours 1.050 by the medians and balanced (the harness's pushes: 1.031-1.043 balanced), bf16
    1.092 and 1.073; SDPA's two names for one cuDNN kernel 3.6 % apart by the medians at fp16, 1.7 %
    balanced, with 16 shuffled rounds leaving five to eight predecessors two or three samples each.
    Next: the harness's own orders (--order williams, built after this run)."""
    doc = checked_h200_run(206, "1654924119017", ["base"])
    assert "--mix" in doc["argv"] and doc["argv"][doc["argv"].index("--burst-ms") + 1] == "0"
    got = {}
    for c in doc["cases"]:
        if c["params"]["S"] == 4096:
            t = c["timing"]
            assert c["mix_refused"] == [] and len(t) == 8
            assert all(len(v["samples_ms"]) == 16 and 5 <= v["balanced_groups"] <= 8 for v in t.values())
            got[c["params"]["dtype"]] = [
                round(t["sdpa_default"][f] / t["base"][f], 3) for f in ("median_ms", "balanced_ms")
            ] + [round(t["sdpa_cudnn"][f] / t["sdpa_default"][f], 3) for f in ("median_ms", "balanced_ms")]
    assert got == {"fp16": [1.05, 1.05, 1.036, 1.017], "bf16": [1.092, 1.073, 0.984, 0.994]}
    # fp16 over bf16, balanced: ours 5.1 % slower, SDPA's default 2.8 % (run 203's own rounds: 3.2, 2.7)
    bal = {(c["params"]["dtype"], n): t["balanced_ms"] for c in doc["cases"] if c["params"]["S"] == 4096 for n, t in c["timing"].items()}
    assert [round(bal[("fp16", n)] / bal[("bf16", n)], 3) for n in ("base", "sdpa_default")] == [1.051, 1.028]


def test_in_the_harness_our_fp16_is_slower_than_our_bf16_where_cudnns_is_faster():
    """Five H200 pushes (runs 185, 190, 195, 200, 202), the fp16 D128 headline over the bf16 one by
    the medians: ours 4.3-6.9 % slower, SDPA's default 1.2-4.3 % faster, though both kernels run the
    same instructions at either dtype (run 203's Nsight Compute)."""
    head = "dtype={},B=16,H=96,S=4096,D=128,causal=false"
    got = {}
    for run in (185, 190, 195, 200, 202):
        med = {(c["variant"], c["case"]): c["timing"]["median_ms"] for c in clean_h200_push(run)["cases"] if c.get("timing")}
        got[run] = tuple(round(med[(v, head.format("fp16"))] / med[(v, head.format("bf16"))], 3) for v in ("cuda_fa_wgmma", "sdpa_default"))
    assert got == {185: (1.043, 0.987), 190: (1.069, 0.967), 195: (1.057, 0.957), 200: (1.049, 0.988), 202: (1.061, 0.976)}


def two_ahead_of(names, variant, relabel):
    """{predecessor: {what ran two places ahead}} of `variant`'s samples over 32 rounds of
    sampling.round_order (the rounds it did not open or follow the opener in)."""
    from kernelgate_harness.sampling import round_order

    out = {}
    for r in range(32):
        o = round_order(names, r, relabel=relabel)
        i = o.index(variant)
        if i >= 2:
            out.setdefault(o[i - 1], set()).add(o[i - 2])
    return out


def test_in_the_harness_s_orders_of_then_the_script_reads_what_the_harness_read():
    """Run 207 (an H200, the twenty-fifth session; --mix --order williams --burst-ms 0, 32 rounds):
    the harness's orders as they were (one labelling of the Williams square, relabel=False since),
    each sample's predecessor recorded. fp16 D128: SDPA default over ours 1.052 by the medians and
    1.032 balanced, as the harness's pushes read (1.031-1.043): where the script's shuffled rounds
    read 1.050 (run 206). Behind sdpa_cudnn ours read 0.940 (22.8 ms, its slowest group), and with one
    labelling what ran two places ahead is fixed by the predecessor: sdpa_default, so ours followed two
    cuDNN calls there, where SDPA's default behind sdpa_cudnn followed ours and sdpa_cudnn (21.4 ms)."""
    doc = checked_h200_run(207, "1653724033992", ["base"])
    got = {}
    for c in doc["cases"]:
        if c["params"]["S"] != 4096:
            continue
        t = c["timing"]
        names = list(t)
        assert c["mix_refused"] == [] and len(names) == 8 and all(len(v["after"]) == 32 for v in t.values())
        # the recorded predecessors are those of one labelling
        from kernelgate_harness.sampling import round_order

        orders = [round_order(names, r, relabel=False) for r in range(32)]
        assert all(t[v]["after"][r] == (orders[r][orders[r].index(v) - 1] if orders[r].index(v) else None) for v in names for r in range(32))
        got[(c["params"]["dtype"], c["params"]["causal"])] = (
            round(t["base"]["ratio_to_sdpa_default"], 3),
            round(t["base"]["balanced_ratio_to_sdpa_default"], 3),
        )
        if c["params"]["dtype"] == "fp16" and not c["params"]["causal"]:
            by = {v: {} for v in ("base", "sdpa_default")}
            for v in by:
                for p, ms in zip(t[v]["after"], t[v]["samples_ms"], strict=True):
                    by[v].setdefault(p, []).append(ms)
            med = {v: {p: statistics.median(x) for p, x in g.items()} for v, g in by.items()}
            assert round(med["sdpa_default"]["sdpa_cudnn"] / med["base"]["sdpa_cudnn"], 3) == 0.94
            assert [round(med["base"]["sdpa_cudnn"], 1), round(med["sdpa_default"]["sdpa_cudnn"], 1)] == [22.8, 21.4]
            assert max(med["base"].values()) == med["base"]["sdpa_cudnn"]
            assert two_ahead_of(names, "base", False)["sdpa_cudnn"] == {"sdpa_default"}
            assert two_ahead_of(names, "sdpa_default", False)["sdpa_cudnn"] == {"base"}
    assert got == {("fp16", False): (1.052, 1.032), ("fp16", True): (1.109, 1.103), ("bf16", False): (1.057, 1.049), ("bf16", True): (1.108, 1.11)}


def test_behind_cudnn_at_steady_power_ours_leads_as_behind_anything_and_the_l2_is_not_it():
    """Run 208 (another H200, the twenty-fifth session). --settle 6 with new leads: 60 ms of SDPA's
    default (three calls), the same then cudaCtxResetPersistingL2Cache (+reset) or a write over four
    times the L2 (+flush), 60 ms of ours. The first call after each: SDPA default over ours 1.075
    behind cuDNN, 1.059 behind ours, 1.053 after the cool spin, 1.077 after the GEMMs; the reset and
    the flush take nothing off ours' first call (22.43 and 22.00 ms against 21.97). So a cuDNN call
    ahead costs ours no more than any other hot load, and what cuDNN leaves in the L2 is not it.
    The same run's fa.json: L2 policies on our TMA copies (KG_FA_KV_HINT, built for the run and not
    kept: 1 K and V evict_last, 2 also Q evict_first) in the harness's orders of then, balanced
    1.019, 1.027, 1.030 at fp16 and 1.043, 1.035, 1.039 at bf16 (SDPA's two names 0.7 % and 0.3 %
    apart): no change beyond the run's noise."""
    settle = checked_h200_run(208, "1653924058300", ["base"], stem="settle")
    assert "--settle-leads" in settle["argv"]
    (case,) = [c for c in settle["cases"] if c["params"]["S"] == 4096]
    per_call, steady = fa.settle_summary(case["settle"])
    assert case["settle"]["lead_calls"] == {"sdpa_default": 3, "base": 3}
    first = {lead: round(per_call["sdpa_default"][lead][0] / per_call["base"][lead][0], 3) for lead in per_call["base"]}
    assert first == {
        "cool": 1.053,
        "hot": 1.077,
        "sdpa_default": 1.075,
        "sdpa_default+reset": 1.047,
        "sdpa_default+flush": 1.057,
        "base": 1.059,
    }
    assert [round(per_call["base"][lead][0], 2) for lead in ("sdpa_default", "sdpa_default+reset", "sdpa_default+flush")] == [21.97, 22.43, 22.0]
    assert round(steady["sdpa_default"] / steady["base"], 3) == 1.055
    doc = checked_h200_run(208, "1653924058300", ["base", "kv1", "kv2"], stem="fa")
    got = {}
    for c in doc["cases"]:
        if c["params"]["S"] == 4096:
            t = c["timing"]
            got[c["params"]["dtype"]] = [round(t[n]["balanced_ratio_to_sdpa_default"], 3) for n in ("base", "kv1", "kv2", "sdpa_cudnn")]
    assert got == {"fp16": [1.019, 1.027, 1.03, 0.993], "bf16": [1.043, 1.035, 1.039, 1.003]}


def test_with_the_rounds_relabelled_per_cycle_the_h200_headline_meets_the_attention_bars():
    """Runs 209, 210 and 211 (one H200, the twenty-fifth session, commit 02f54e0): the harness with
    each Williams cycle relabelled, two headline-only pushes and the whole set's push (216 PASS,
    nothing failed). Every recorded balanced_ms is what stats.balanced makes of its samples with
    the relabelled orders' predecessors (60 + 213 + 60 cases). SDPA default over ours, balanced:
    fp16 D128 1.078, 1.065, 1.072 (1.031-1.043 in the seven pushes of one labelling), causal
    1.118-1.131, D64 1.139-1.143, D64 causal 1.105-1.109; bf16 1.058-1.085, 1.135-1.144, 1.132-1.134,
    1.107-1.112. SDPA's two names for one cuDNN kernel within 2.1 % balanced. On an H200: issue 28's
    attention bars are graded on an H100."""
    import gzip

    from kernelgate_harness.stats import balanced

    fixtures = os.path.join(REPO, "test", "fixtures", "recorded")
    paths = {209: "harness-h200-run209", 210: "push-h200-run210", 211: "harness-h200-run211"}
    runs = {}
    for run, d in paths.items():
        with gzip.open(os.path.join(fixtures, d, "results.json.gz")) as f:
            runs[run] = json.load(f)
        with open(os.path.join(fixtures, d, "gpu.txt")) as f:
            assert "NVIDIA H200, 1653724062426" in f.read()
    res = runs[210]
    assert [c["correctness"]["status"] for c in res["cases"] if c.get("correctness")].count("PASS") == 216
    with open(os.path.join(fixtures, "push-h200-run210", "verdict.json")) as f:
        assert json.load(f)["counts"] == {"failed": 0, "drift": 0, "slower": 0, "faster": 0, "ambiguous": 21, "new": 156, "missing": 0}
    checked = {}
    for run, res in runs.items():
        checked[run] = 0
        for cases in timed_groups(res).values():
            if len(cases) == 1:
                continue
            behind = behind_in_rounds({c["variant"]: c["timing"]["samples_ms"] for c in cases}, relabel=True)
            for c in cases:
                est = balanced([ms for _, ms in behind[c["variant"]]], [p or "" for p, _ in behind[c["variant"]]])
                assert (c["timing"]["balanced_ms"], c["timing"]["balanced_groups"]) == pytest.approx(est, rel=1e-12)
                checked[run] += 1
    assert checked == {209: 60, 210: 213, 211: 60}
    head = "dtype={},B=16,H=96,S=4096,D={},causal={}"
    keys = [head.format(dt, d, c) for dt in ("fp16", "bf16") for d in (128, 64) for c in ("false", "true")]
    bal, aa = {}, []
    for run, res in runs.items():
        t = {(c["variant"], c["case"]): c["timing"]["balanced_ms"] for c in res["cases"] if c["kernel"] == "attention" and c.get("timing")}
        bal[run] = [round(t[("sdpa_default", k)] / t[("cuda_fa_wgmma", k)], 3) for k in keys]
        aa += [t[("sdpa_cudnn", k)] / t[("sdpa_default", k)] for k in keys]
    assert bal == {
        209: [1.078, 1.124, 1.139, 1.109, 1.085, 1.144, 1.134, 1.111],
        210: [1.065, 1.131, 1.143, 1.105, 1.06, 1.135, 1.132, 1.112],
        211: [1.072, 1.118, 1.139, 1.109, 1.058, 1.136, 1.132, 1.107],
    }
    assert round(max(abs(x - 1) for x in aa), 3) == 0.021


def test_on_a_second_h200_the_harness_records_the_designs_predecessors_and_the_attention_bars_hold():
    """Run 212 (the twenty-sixth session: another H200, serial 1653824017207; the harness's push of
    11a5e21, kernelgate-harness 0.2.0): 216 PASS, nothing failed. Every kept sample's recorded
    predecessor (timing.after, new in 0.2.0) is the one the relabelled design gave it, on all 213
    cases timed beside others, and balanced_ms is stats.balanced over them. SDPA default over ours,
    balanced: fp16 1.083 / 1.127 / 1.144 / 1.111 (D128, causal, D64, causal), bf16 1.062 / 1.144 /
    1.125 / 1.108, as runs 209-211 on the first machine read (1.058-1.144); SDPA's two names for one
    cuDNN kernel within 1.2 %. On an H200: issue 28's bars are graded on an H100."""
    res = clean_h200_push(212)
    fixtures = os.path.join(REPO, "test", "fixtures", "recorded", "push-h200-run212")
    with open(os.path.join(fixtures, "gpu.txt")) as f:
        assert "NVIDIA H200, 1653824017207" in f.read()
    assert res["run"]["harness"] == "kernelgate-harness 0.2.0"
    assert [c["correctness"]["status"] for c in res["cases"] if c.get("correctness")].count("PASS") == 216
    assert recorded_design_predecessors(res) == 213
    head = "dtype={},B=16,H=96,S=4096,D={},causal={}"
    keys = [head.format(dt, d, c) for dt in ("fp16", "bf16") for d in (128, 64) for c in ("false", "true")]
    t = {(c["variant"], c["case"]): c["timing"]["balanced_ms"] for c in res["cases"] if c["kernel"] == "attention" and c.get("timing")}
    assert [round(t[("sdpa_default", k)] / t[("cuda_fa_wgmma", k)], 3) for k in keys] == [1.083, 1.127, 1.144, 1.111, 1.062, 1.144, 1.125, 1.108]
    assert round(max(abs(t[("sdpa_cudnn", k)] / t[("sdpa_default", k)] - 1) for k in keys), 3) == 0.012


def recorded_design_predecessors(res):
    """Checks every case of a harness results document (kernelgate-harness 0.2.0) timed beside
    others: its kept samples' recorded predecessors (timing.after) are those the relabelled design
    gave them (no sample dropped as throttled), and balanced_ms is stats.balanced over them; a case
    timed alone has none. How many cases were checked."""
    from kernelgate_harness.stats import balanced

    checked = 0
    for cases in timed_groups(res).values():
        if len(cases) == 1:
            assert "after" not in cases[0]["timing"]  # timed alone: no predecessors to weigh
            continue
        behind = behind_in_rounds({c["variant"]: c["timing"]["samples_ms"] for c in cases}, relabel=True)
        for c in cases:
            t = c["timing"]
            assert t["n_discarded_throttled"] == 0 and t["after"] == [p or "" for p, _ in behind[c["variant"]]]
            assert (t["balanced_ms"], t["balanced_groups"]) == pytest.approx(balanced(t["samples_ms"], t["after"]), rel=1e-12)
            checked += 1
    return checked


def test_with_three_seconds_a_variant_the_headline_takes_150_to_300_samples_and_reads_as_at_one():
    """Run 213 (a third H200, serial 1653924042301; a headline-only push of e38f2a3 with
    --time-cap-s 3, kgh3.yml in configs.txt): 60 cases, all PASS, 153-300 samples a variant (50-140
    at 1 s), the recorded predecessors the design's. SDPA default over ours, balanced: fp16 1.073 /
    1.117 / 1.126 / 1.109, bf16 1.057 / 1.126 / 1.120 / 1.110, within a percent of runs 209-212's on
    two other machines; SDPA's two names within 1.3 %."""
    import gzip

    d = os.path.join(REPO, "test", "fixtures", "recorded", "harness-h200-run213")
    with open(os.path.join(d, "gpu.txt")) as f:
        assert "NVIDIA H200, 1653924042301" in f.read()
    with open(os.path.join(d, "configs.txt")) as f:
        assert '--time-cap-s, "3"' in f.read()
    with gzip.open(os.path.join(d, "results.json.gz")) as f:
        res = json.load(f)
    assert res["run"]["harness"] == "kernelgate-harness 0.2.0"
    assert [c["correctness"]["status"] for c in res["cases"]] == ["PASS"] * 60
    assert recorded_design_predecessors(res) == 60
    head = "dtype={},B=16,H=96,S=4096,D={},causal={}"
    keys = [head.format(dt, d, c) for dt in ("fp16", "bf16") for d in (128, 64) for c in ("false", "true")]
    timed = {(c["variant"], c["case"]): c["timing"] for c in res["cases"]}
    assert min(len(timed[("cuda_fa_wgmma", k)]["samples_ms"]) for k in keys) == 153
    assert max(len(timed[("cuda_fa_wgmma", k)]["samples_ms"]) for k in keys) == 300
    t = {k: v["balanced_ms"] for k, v in timed.items()}
    assert [round(t[("sdpa_default", k)] / t[("cuda_fa_wgmma", k)], 3) for k in keys] == [1.073, 1.117, 1.126, 1.109, 1.057, 1.126, 1.12, 1.11]
    assert round(max(abs(t[("sdpa_cudnn", k)] / t[("sdpa_default", k)] - 1) for k in keys), 3) == 0.013


def over_copies(doc, builds):
    """{(dtype, B, H, S, D, causal): {build: the mean of base's and base2's medians over the
    build's}} on every shape of a run."""
    out = {}
    for c in doc["cases"]:
        p, t = c["params"], c["timing"]
        b = (t["base"]["median_ms"] + t["base2"]["median_ms"]) / 2
        out[(p["dtype"], p["B"], p["H"], p["S"], p["D"], p["causal"])] = {x: b / t[x]["median_ms"] for x in builds}
    return out


def test_the_row_sums_from_the_packed_p_lose_on_every_headline_case():
    """Run 215 (an H200, serial 1653724061005; KG_FA_PACKED_SUM): one HADD2 per pair of P instead of
    two fp32 adds (in the D64 key loop's SASS 28 fewer instructions a tile) is slower on all eight
    headline cases, most at bf16 D64 (2.8-2.9 %), where D64 was thought bound by the instructions
    its softmax issues; the errors barely move. So it stays off."""
    runs = {stem: checked_h200_run(215, "1653724061005", ["base", "ps", "base2"], stem=stem) for stem in ("fa64", "fa128")}
    for stem, d in (("fa64", 64), ("fa128", 128)):
        g = {k: round(over_defaults(v, "ps"), 3) for k, v in gains(runs[stem]).items()}
        assert sorted(k[1] for k in g) == [d] * 4
        assert all(0.96 < v < 0.998 for v in g.values()), g
    g64 = {k: round(over_defaults(v, "ps"), 3) for k, v in gains(runs["fa64"]).items()}
    assert g64 == {("fp16", 64, False): 0.993, ("fp16", 64, True): 0.985, ("bf16", 64, False): 0.972, ("bf16", 64, True): 0.971}


def test_the_narrow_last_causal_d64_tile_pays_on_short_grids_and_little_at_the_headline():
    """Runs 216-217 (one H200, serial 1653724033049; KG_FA_NARROW_CAUSAL_D64): a warpgroup's last
    causal D64 tile 64 keys wide where its rows see at most 64 of it. 0.2-0.4 % faster at the
    headline (both runs), 5-7 % at B2 H3 S = 129, 192 and 320, 2 % at B16 H32 S256, but 2.3-3.6 %
    slower at B32 H32 S512 and 1-3 % on the tails' short calls (the instances' code 53 % longer).
    So it stays off."""
    r216, r217 = (over_copies(checked_h200_run(r, "1653724033049", ["base", "nc", "base2"]), ["nc"]) for r in (216, 217))
    head = [("fp16", 16, 96, 4096, 64, True), ("bf16", 16, 96, 4096, 64, True)]
    assert [round(r[k]["nc"], 3) for r in (r216, r217) for k in head] == [1.003, 1.002, 1.004, 1.004]
    for s in (129, 192, 320):
        assert all(1.05 < r216[(dt, 2, 3, s, 64, True)]["nc"] < 1.07 for dt in ("fp16", "bf16"))
    assert [round(r217[(dt, 32, 32, 512, 64, True)]["nc"], 3) for dt in ("fp16", "bf16")] == [0.977, 0.964]
    assert [round(r217[(dt, 16, 32, 256, 64, True)]["nc"], 3) for dt in ("fp16", "bf16")] == [1.021, 1.017]


def test_a_warpgroup_of_no_rows_first_hung_then_pays_at_d64_without_the_mask():
    """Runs 218-220 (KG_FA_EMPTY_WG). Run 218: the first form, whose last warpgroup, skipping, kept
    the rule that it passes no turn after its final P V, hung (the script's guard stopped it after
    60 s). Run 219 on the fix: bit 2 (non-causal D64) 1.2-1.6 % faster at the headline, 1.2 %
    slower at B2 H3 S1000; bit 1 (causal) level at the D64 causal headline (-0.04 %, -0.4 %), 3-7 %
    faster at S = 320 and 4112 and at D128 S = 1040. Run 220 (another H200, after the push of
    89f6dab): the old code 1.6 % and 1.3 % slower at the headline, 0.9-1.2 % faster at S1000."""
    hung = [recorded(218, stem=s, gpu="h200") for s in ("fa64", "fa128")]
    assert {d["gpu"]["serial"] for d in hung} == {"1654124006944"}
    assert [d["failures"] for d in hung] == [
        ["dtype=fp16,B=16,H=96,S=4096,D=64,causal=false: e3: no result after 60 s (a hang?)"],
        ["dtype=fp16,B=2,H=3,S=1040,D=128,causal=true: e1: no result after 60 s (a hang?)"],
    ]
    d64 = over_copies(checked_h200_run(219, "1653124039639", ["base", "e1", "e3", "base2"], stem="fa64"), ["e1", "e3"])
    d128 = over_copies(checked_h200_run(219, "1653124039639", ["base", "e1", "base2"], stem="fa128"), ["e1"])
    assert [round(d64[(dt, 16, 96, 4096, 64, False)]["e3"], 3) for dt in ("fp16", "bf16")] == [1.016, 1.012]
    assert [round(d64[(dt, 16, 96, 4096, 64, True)]["e1"], 3) for dt in ("fp16", "bf16")] == [1.0, 0.996]
    assert [round(d64[(dt, 2, 3, 320, 64, True)]["e1"], 3) for dt in ("fp16", "bf16")] == [1.07, 1.061]
    assert [round(d128[(dt, 2, 3, 1040, 128, True)]["e1"], 3) for dt in ("fp16", "bf16")] == [1.059, 1.061]
    old = over_copies(checked_h200_run(220, "1653724026306", ["base", "old", "base2"]), ["old"])
    assert [round(old[(dt, 16, 96, 4096, 64, False)]["old"], 3) for dt in ("fp16", "bf16")] == [0.984, 0.987]
    assert [round(old[(dt, 2, 3, 1000, 64, False)]["old"], 3) for dt in ("fp16", "bf16")] == [1.012, 1.009]


def test_the_push_on_kg_fa_empty_wg_checks_every_case_and_records_the_designs_predecessors():
    """Run 220 (serial 1653724026306): the harness's push of 89f6dab, KG_FA_EMPTY_WG 3: 216 cases
    PASS, one skipped, nothing failed; every timed predecessor the design's."""
    passed_h200_push(220, "1653724026306")


def passed_h200_push(run, serial):
    """A recorded H200 push (test/fixtures/recorded/push-h200-run<run>/) on the GPU named, by harness
    0.2.0: 216 cases PASS, one skipped, every timed predecessor the design's. Its results document."""
    import gzip

    d = os.path.join(REPO, "test", "fixtures", "recorded", f"push-h200-run{run}")
    with open(os.path.join(d, "gpu.txt")) as f:
        assert f"NVIDIA H200, {serial}" in f.read()
    with gzip.open(os.path.join(d, "results.json.gz")) as f:
        res = json.load(f)
    assert res["run"]["harness"] == "kernelgate-harness 0.2.0"
    assert sorted(c["status"] for c in res["cases"]) == ["ok"] * 216 + ["skipped"]
    assert {c["correctness"]["status"] for c in res["cases"] if c["status"] == "ok"} == {"PASS"}
    assert recorded_design_predecessors(res) == 213
    return res


def test_the_round_run_on_across_items_pays_on_every_causal_headline():
    """Runs 221-223 (two H200s, the twenty-eighth session; KG_FA_RING_ACROSS): the persistent causal
    grids' last warpgroup passes the turn after an item's final P V, so the next item's first S no
    longer waits for its epilogue. Run 221, beside two copies of the old default: 1.5-1.7 % faster
    at the D64 causal headline and 1.3-1.4 % at D128 causal, 0.7-1.1 % at B4 H96 S8192; with the
    causal D64 warpgroups of no rows skipping too (raew) 2.0-2.2 % at the headline, 5-6 % at B2 H3
    S320. Run 222 (another H200): the old default 2.1-2.3 % slower at the D64 causal headline.
    Run 223: at causal D128 the warpgroups of no rows cost 0.2 % at the headline (ra is ring-only)
    and gain 5-6 % at B2 H3 S1040, so they stay off there."""
    r221 = over_copies(checked_h200_run(221, "1653724055744", ["base", "ra", "raew", "base2"], stem="fa64"), ["ra", "raew"])
    r221_128 = over_copies(checked_h200_run(221, "1653724055744", ["base", "ra", "base2"], stem="fa128"), ["ra"])
    head = [(dt, 16, 96, 4096) for dt in ("fp16", "bf16")]
    assert [round(r221[k + (64, True)]["ra"], 3) for k in head] == [1.015, 1.017]
    assert [round(r221[k + (64, True)]["raew"], 3) for k in head] == [1.022, 1.02]
    assert [round(r221_128[k + (128, True)]["ra"], 3) for k in head] == [1.013, 1.014]
    for dt in ("fp16", "bf16"):
        assert 1.007 <= r221[(dt, 4, 96, 8192, 64, True)]["ra"] < r221[(dt, 4, 96, 8192, 64, True)]["raew"] < 1.02
        assert 1.005 < r221_128[(dt, 4, 96, 8192, 128, True)]["ra"] < 1.01
        assert r221[(dt, 2, 3, 320, 64, True)]["raew"] > 1.05
    r222 = over_copies(checked_h200_run(222, "1653724048805", ["base", "old", "ra", "base2"], stem="fa64"), ["old", "ra"])
    assert [round(r222[k + (64, True)]["old"], 3) for k in head] == [0.979, 0.977]
    r223 = over_copies(checked_h200_run(223, "1653724048805", ["base", "old", "ra", "base2"], stem="fa128"), ["old", "ra"])
    assert [round(r223[k + (128, True)][b], 3) for b in ("old", "ra") for k in head] == [0.989, 0.989, 1.002, 1.002]
    assert [round(r223[(dt, 2, 3, 1040, 128, True)]["ra"], 3) for dt in ("fp16", "bf16")] == [0.948, 0.943]


def test_the_pushes_on_the_round_run_on_across_items_pass_every_case():
    """Runs 222-224: the harness's push of 5088da4 (run 222: its results did not come back, the
    device returns 8 files; its log says pass), again on the same machine minutes later (run 223,
    judged against run 222's stored results of the same commit: pass, and the only cases beyond
    the noise are the A/A control's, cuBLAS 8192^3 +8.9 % bf16 and -6.1 % fp16, which the report
    calls the machine moving), and of a90e54d, the session's last default (run 224, another H200):
    216 cases PASS, one skipped, nothing failed, every timed predecessor the design's."""
    import gzip

    root = os.path.join(REPO, "test", "fixtures", "recorded")
    with open(os.path.join(root, "fa-experiment-h200-run222", "push222.log")) as f:
        assert f.read().startswith("push    exit=0 wall=387.1s pass")
    for run, serial in ((223, "1653724048805"), (224, "1653924291662")):
        passed_h200_push(run, serial)
        d = os.path.join(root, f"push-h200-run{run}")
        with open(os.path.join(d, "verdict.json")) as f:
            v = json.load(f)
        assert v["verdict"] == "pass" and v["counts"]["failed"] == 0, run
        if run == 223:
            assert {k: v["counts"][k] for k in ("new", "slower", "faster", "ambiguous")} == {"new": 0, "slower": 1, "faster": 1, "ambiguous": 19}
            with gzip.open(os.path.join(d, "report.md.gz"), "rt") as f:
                report = f.read()
            assert "gemm/cublas op=matmul,dtype=bf16,M=8192,N=8192,K=8192 SLOWER +8.9 %" in report
            assert "gemm/cublas op=matmul,dtype=fp16,M=8192,N=8192,K=8192 FASTER −6.1 %" in report
        else:
            assert v["counts"]["new"] == 216


def test_the_persistent_noncausal_d128_grid_still_loses_with_the_round_run_on():
    """Run 224 (an H200, serial 1653924291662): KG_FA_PERSISTENT_NONCAUSAL_D128=3 on 160-key tiles,
    now with the round run on across items, is still 1.8 % slower than the CTA-per-item default
    at the D128 headline (run 183 without it: 1.2-2.0 %) and 4.7 % at B2 H3 S1000: it stays off."""
    r = over_copies(checked_h200_run(224, "1653924291662", ["base", "pn", "base2"], stem="fa128"), ["pn"])
    assert [round(r[(dt, 16, 96, 4096, 128, False)]["pn"], 3) for dt in ("fp16", "bf16")] == [0.982, 0.982]
    assert [round(r[(dt, 2, 3, 1000, 128, False)]["pn"], 3) for dt in ("fp16", "bf16")] == [0.953, 0.953]
