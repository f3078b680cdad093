"""kernels/attention/triton_fa3.py: its results under TRITON_INTERPRET=1 (both loop shapes, tails,
Sq != Sk, causal, fp16/bf16, D64/D128), the harness over its ci_cases, what it refuses, how its
tuner drops a tiling, and that every candidate tiling compiles for sm_90 (no GPU needed: Triton
compiles for a named target, ptxas ships in its wheel)."""

import os
import re
import subprocess
import sys
import types

import pytest

from conftest import HAS_GPU, REPO

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")

from kernelgate_harness import Unsupported  # noqa: E402
from kernels.attention import bench, triton_fa3  # noqa: E402

# The kernel runs in this process on a GPU, or on the CPU under TRITON_INTERPRET=1 (set before
# Triton compiles anything, as scripts/test.sh does); the harness and sm_90 tests run in their own.
needs_kernel = pytest.mark.skipif(
    not HAS_GPU and os.environ.get("TRITON_INTERPRET") != "1", reason="the kernel runs here on a GPU or under TRITON_INTERPRET=1 (scripts/test.sh sets it)"
)
DEVICE = "cuda" if HAS_GPU else "cpu"
TOL = {torch.float16: 2e-3, torch.bfloat16: 1e-2}  # kernels/attention/kernel.yml's tolerance
# Small tilings for the interpreter, one of each loop shape: two phases (masks on the diagonal and
# the key tail only), and the warp-specialised one loop (masks in every block).
# The GPU's own tilings run under the interpreter too (it ignores warps, stages and the
# specialisation, not the tile sizes): the first non-specialised one, and the specialised ones of
# 128 and 256 rows.
INTERPRET_TILINGS = [
    triton_fa3.INTERPRET_CONFIG,
    (32, 16, 4, 1, True),
    (16, 16, 4, 1, False, True),  # flat: 2-D descriptors over (B·H·S, D)
    triton_fa3.CONFIGS[64][0],
    triton_fa3.WARP_SPEC_CONFIGS[128][0],
    triton_fa3.WARP_SPEC_CONFIGS[64][1],
]
GPU_TILINGS = range(len(triton_fa3.CONFIGS[64]))  # on a GPU: every candidate of the shape's head dim, by position
SHAPES = [  # (B, H, Sq, Sk, D, causal)
    (1, 2, 37, 37, 64, True),  # no tile divides 37
    (1, 2, 64, 64, 128, False),
    (1, 2, 37, 37, 128, True),
    (1, 1, 20, 45, 64, False),  # Sq < Sk, both tails
    (1, 1, 45, 20, 64, True),  # Sq > Sk, causal: rows past Sk see every key
    (2, 1, 33, 33, 64, True),
    (1, 1, 300, 300, 128, True),  # several query and key blocks of the GPU's tilings, diagonal and tail
    (1, 1, 300, 1000, 64, False),  # the manifest's Sq 300 x Sk 1000 case, one head
]


def qkv(B, H, SQ, SK, D, dtype, seed=0):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    return [torch.randn(B, H, s, D, generator=g, device=DEVICE, dtype=dtype) for s in (SQ, SK, SK)]


def rel_l2(out, ref):
    return float(torch.linalg.vector_norm(out.float() - ref) / torch.linalg.vector_norm(ref))


@needs_kernel
@pytest.mark.parametrize("tiling", INTERPRET_TILINGS if not HAS_GPU else GPU_TILINGS, ids=str)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "B{}H{}Sq{}Sk{}D{}{}".format(*s[:5], "causal" if s[5] else ""))
def test_matches_the_fp32_oracle_and_writes_every_element(shape, dtype, tiling):
    B, H, SQ, SK, D, causal = shape
    if HAS_GPU:
        tiling = triton_fa3.CONFIGS[D][tiling]
    q, k, v = qkv(B, H, SQ, SK, D, dtype)
    assert triton_fa3.check_shapes(q, k, v, causal) is None
    out = torch.full_like(q, float("nan"))
    triton_fa3.launch(q, k, v, out, causal, tiling)
    assert int(out.isnan().sum()) == 0
    assert rel_l2(out, bench.reference_fp32(q, k, v, causal)) <= TOL[dtype]


@needs_kernel
@pytest.mark.parametrize("tiling", INTERPRET_TILINGS if not HAS_GPU else GPU_TILINGS, ids=str)
def test_tails_read_nothing_past_s_and_write_nothing_past_sq(tiling):
    if HAS_GPU:
        tiling = triton_fa3.CONFIGS[64][tiling]
    if len(tiling) > 5 and tiling[5]:
        pytest.skip("a flat tiling reads the next head's rows past S (masked) and takes contiguous tensors only")
    B, H, SQ, D = 1, 2, 37, 64
    q, k, v = qkv(B, H, SQ, SQ, D, torch.float16)
    kw = {"dtype": torch.float16, "device": DEVICE}
    # k and v as views of larger buffers whose rows past Sk are huge: a read past Sk would show
    k_big = torch.randn(B, H, SQ + 27, D, **kw) * 100
    v_big = torch.randn(B, H, SQ + 27, D, **kw) * 100
    k_big[:, :, :SQ], v_big[:, :, :SQ] = k, v
    # out as a view of a NaN buffer with rows past Sq: a write past Sq would fill them
    o_big = torch.full((B, H, SQ + 27, D), float("nan"), **kw)
    out = o_big[:, :, :SQ]
    triton_fa3.launch(q, k_big[:, :, :SQ], v_big[:, :, :SQ], out, False, tiling)
    assert int((~o_big[:, :, SQ:].isnan()).sum()) == 0
    assert rel_l2(out, bench.reference_fp32(q, k, v, False)) <= TOL[torch.float16]


# Not in kernel.yml: on the H100 its tuning did not finish in 7 minutes (push run of 936b6f2,
# 2026-11-24, docs/notes/triton-kernels.md). The harness runs it here from a copy of the manifest
# that lists it.
FA3_MANIFEST_ENTRY = """  - name: triton_fa3
    role: candidate
    backend: triton
    description: Triton attention forward for Hopper (TMA tensor descriptors), not in the kernel set
"""


def test_the_harness_passes_every_ci_case(run_harness, tmp_path):
    os.makedirs(tmp_path / "kernels" / "attention")
    with open(os.path.join(REPO, "kernels", "attention", "kernel.yml")) as f:
        manifest = f.read()
    (tmp_path / "kernels" / "attention" / "kernel.yml").write_text(manifest.rstrip("\n") + "\n" + FA3_MANIFEST_ENTRY)
    r = run_harness("--only", "attention", "--ci", "--variants", "triton_fa3", "--seeds", "2", "--no-timing", kernels=str(tmp_path / "kernels"))
    mine = [c for c in r.doc["cases"] if c["variant"] == "triton_fa3"]
    assert len(mine) == 17  # kernel.yml's ci_cases: 16 square (S 37 and 64, both dtypes, D, causal) and Sq 20 x Sk 45
    for c in mine:
        assert c["status"] == "ok", c
        corr = c["correctness"]
        assert corr["status"] == "PASS" and corr["unwritten_count"] == 0 and corr["nan_count"] == 0
        assert corr["repeat_max_diff"] == 0.0 and corr["rel_l2"] <= corr["tol_rel_l2"]


def ctx(device="cpu", interpret=True):
    return types.SimpleNamespace(kernel="attention", device=device, interpret=interpret)


CASE = {"dtype": "fp16", "B": 1, "H": 2, "S": 37, "D": 64, "causal": False}


@needs_kernel
def test_the_factory_refuses_what_the_kernel_does_not_take():
    factory = bench.VARIANTS["triton_fa3"]
    with pytest.raises(Unsupported) as e:
        factory({**CASE, "D": 96}, ctx(DEVICE, not HAS_GPU))
    assert str(e.value) == "head dim 96 not supported (have [64, 128])"
    with pytest.raises(Unsupported) as e:
        factory(CASE, ctx("cpu", interpret=False))
    assert str(e.value) == "Triton needs a GPU, or TRITON_INTERPRET=1 on the CPU"


@needs_kernel
def test_check_shapes_names_what_a_tensor_descriptor_cannot_take():
    q, k, v = qkv(1, 2, 16, 16, 64, torch.float16)
    odd = torch.empty(1, 2, 16, 65, dtype=torch.float16)[..., :64]  # row stride 65 elements: 130 bytes
    assert triton_fa3.check_shapes(q, odd, v, False) == (
        "k: a tensor descriptor needs a 16-byte aligned base and strides (strides (2080, 1040, 65, 1), 2-byte elements)"
    )
    assert triton_fa3.check_shapes(q, k.transpose(-1, -2).contiguous().transpose(-1, -2), v, False) == (
        "k: the head dim must be contiguous (strides (2048, 1024, 1, 16))"
    )
    assert triton_fa3.check_shapes(q, k.float(), v, False) == (
        "dtypes q torch.float16, k torch.float32, v torch.float16 not supported (fp16 or bf16, all three alike)"
    )


@needs_kernel
def test_the_tuner_drops_a_tiling_that_fails_or_is_wrong_and_keeps_the_fastest_of_the_rest(monkeypatch, capsys):
    q, k, v = qkv(1, 2, 16, 16, 64, torch.float16)
    good, broken, wrong, slow = (128, 64, 8, 4, False), (128, 128, 8, 3, False), (128, 128, 4, 2, True), (128, 64, 4, 3, True)
    monkeypatch.setitem(triton_fa3.CONFIGS, 64, [good, broken, wrong, slow])
    monkeypatch.setattr(triton_fa3, "TUNE_MIN_SCORES", 0)
    ref = bench.reference_fp32(q, k, v, False)

    launched = []

    def fake_launch(q_, k_, v_, out, causal, cfg):
        launched.append(cfg)
        if cfg == broken:
            raise RuntimeError("PassManager::run failed\nmore detail")
        out.copy_(ref * (1.1 if cfg == wrong else 1.0))
        return out

    def fake_do_bench(fn, warmup, rep):
        fn()
        return {good: 2.0, slow: 3.0}[launched[-1]]

    monkeypatch.setattr(triton_fa3, "launch", fake_launch)
    monkeypatch.setattr(triton.testing, "do_bench", fake_do_bench)
    config, times = triton_fa3.tune(q, k, v, False, interpret=False)
    assert config == good and times == {good: 2.0, slow: 3.0}
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "[kernelgate tuning] triton_fa3 tiling (128, 128, 8, 3, False) dropped: RuntimeError: PassManager::run failed",
        "[kernelgate tuning] triton_fa3 tiling (128, 128, 4, 2, True) dropped: output off the fp32 reference on (b, h) [(0, 0), (0, 1)]: "
        "rel L2 1.00e-01 > 2e-02",
    ]


@needs_kernel
def test_the_tuner_says_which_tilings_failed_when_none_runs(monkeypatch):
    q, k, v = qkv(1, 1, 16, 16, 64, torch.float16)
    monkeypatch.setitem(triton_fa3.CONFIGS, 64, [(128, 64, 8, 4, False)])
    monkeypatch.setattr(triton_fa3, "TUNE_MIN_SCORES", 0)
    monkeypatch.setattr(triton_fa3, "launch", lambda *a: (_ for _ in ()).throw(RuntimeError("out of resources")))
    with pytest.raises(RuntimeError) as e:
        triton_fa3.tune(q, k, v, False, interpret=False)
    assert str(e.value) == "no tiling of triton_fa3 runs correctly here: (128, 64, 8, 4, False): RuntimeError: out of resources"


# -- sm_90: every candidate compiles, with what it is meant to have --------------------------------

COMPILE_SCRIPT = r"""
import json, os, re, subprocess, sys, tempfile
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from kernels.attention import triton_fa3

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
fn = triton_fa3._attn_fwd_tma
facts = []
for D in sorted(triton_fa3.CONFIGS):
    tilings = triton_fa3.CONFIGS[D] + triton_fa3.WARP_SPEC_CONFIGS[D]
    for causal in (False, True):
        for bm, bn, warps, stages, ws, *flat in tilings:
            flat = bool(flat and flat[0])
            desc = lambda rows: f"tensordesc<fp16[{rows},{D}]>" if flat else f"tensordesc<fp16[1,1,{rows},{D}]>"
            sig = {"desc_q": desc(bm), "desc_k": desc(bn), "desc_v": desc(bn), "O": "*fp16", "qk_scale": "fp32",
                   "stride_ob": "i64", "stride_oh": "i64", "stride_om": "i64", "H": "i32", "SQ": "i32", "SK": "i32"}
            consts = {"D": D, "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": causal, "EVEN_M": True, "EVEN_N": True, "WARP_SPEC": ws, "FLAT": flat,
                      "DOT_FP32": False}
            sig.update({name: "constexpr" for name in consts})
            src = ASTSource(fn, sig, constexprs={(fn.arg_names.index(n),): v for n, v in consts.items()})
            k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
            with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
                f.write(k.asm["cubin"])
            sass = subprocess.run([os.path.join(BIN, "cuobjdump"), "-sass", f.name], capture_output=True, text=True, check=True).stdout
            os.unlink(f.name)
            count = lambda op: len(re.findall(r"\b" + re.escape(op) + r"\b", sass))
            facts.append({"D": D, "causal": causal, "tiling": [bm, bn, warps, stages, ws] + ([True] if flat else []), "warps": k.metadata.num_warps,
                          "smem": k.metadata.shared, "partitions": "ttg.warp_specialize" in k.asm["ttgir"],
                          "HGMMA": count("HGMMA"), "UTMALDG": count("UTMALDG"), "LDL": count("LDL"), "STL": count("STL"),
                          "USETMAXREG": count("USETMAXREG")})
print(json.dumps(facts))
"""
# H100: 227 KB of shared memory a block
SMEM_MAX = 232448
# Local memory found, and tolerated, in a few specialised candidates: spill loads and stores of 8 to
# 16 bytes of stack (compiled 2026-11-24, Triton 3.6.0); the tuner times them as they are. More fails.
LOCAL_OK = {(128, True, (128, 128, 4, 2, True)): 3, (64, False, (256, 64, 4, 2, True)): 1, (64, True, (256, 64, 4, 2, True)): 6}


@pytest.fixture(scope="module")
def sm90_facts(tmp_path_factory):
    import json

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), REPO]), TRITON_CACHE_DIR=str(tmp_path_factory.mktemp("triton-cache")))
    env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0 and re.search(r"ptxas|cuobjdump", proc.stderr) and "No such file" in proc.stderr:
        pytest.skip("Triton's ptxas / cuobjdump are not in this Triton wheel")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_candidate_compiles_for_sm_90_with_wgmma_and_tma_loads(sm90_facts):
    expected = sum(len(triton_fa3.CONFIGS[D] + triton_fa3.WARP_SPEC_CONFIGS[D]) for D in triton_fa3.CONFIGS) * 2
    assert len(sm90_facts) == expected
    for f in sm90_facts:
        where = f"D{f['D']} causal={f['causal']} {tuple(f['tiling'])}"
        assert f["HGMMA"] > 0 and f["UTMALDG"] > 0, where
        assert f["smem"] <= SMEM_MAX, where
        local = LOCAL_OK.get((f["D"], f["causal"], tuple(f["tiling"])), 0)
        assert f["LDL"] <= local and f["STL"] <= local, f"{where}: local memory LDL {f['LDL']} STL {f['STL']}"


def test_the_warp_specialised_candidates_get_a_producer_and_two_consumer_warpgroups(sm90_facts):
    for f in sm90_facts:
        where = f"D{f['D']} causal={f['causal']} {tuple(f['tiling'])}"
        if f["tiling"][4]:
            # 4 warps asked: the pass adds a producer warpgroup and splits the rows between two
            # consumer warpgroups, reallocating registers between them (setmaxnreg)
            assert f["partitions"] and f["warps"] == 12 and f["USETMAXREG"] > 0, where
        else:
            assert not f["partitions"] and f["warps"] == f["tiling"][2] and f["USETMAXREG"] == 0, where


def test_the_warp_specialised_tilings_are_candidates_only_when_asked_for(monkeypatch):
    monkeypatch.delenv(triton_fa3.WARP_SPEC_ENV, raising=False)
    assert triton_fa3.candidates(128) == triton_fa3.CONFIGS[128]
    assert not any(t[4] for t in triton_fa3.CONFIGS[64] + triton_fa3.CONFIGS[128])
    monkeypatch.setenv(triton_fa3.WARP_SPEC_ENV, "1")
    assert triton_fa3.candidates(64) == triton_fa3.CONFIGS[64] + triton_fa3.WARP_SPEC_CONFIGS[64]
    assert all(t[4] and t[2] == 4 for t in triton_fa3.WARP_SPEC_CONFIGS[64] + triton_fa3.WARP_SPEC_CONFIGS[128])


@needs_kernel
def test_the_remembered_tuning_tells_runs_with_and_without_the_specialised_tilings_apart(monkeypatch, tmp_path):
    from kernels.common import tuning

    monkeypatch.setenv(tuning.ENV, str(tmp_path / "cache"))
    picks = iter([(16, 16, 4, 1, False), (32, 16, 4, 1, True)])
    monkeypatch.setattr(triton_fa3, "tune", lambda *a: (next(picks), {}))
    factory = bench.VARIANTS["triton_fa3"]
    assert factory(CASE, ctx(DEVICE, not HAS_GPU)).config == (16, 16, 4, 1, False)
    monkeypatch.setenv(triton_fa3.WARP_SPEC_ENV, "1")
    assert factory(CASE, ctx(DEVICE, not HAS_GPU)).config == (32, 16, 4, 1, True)  # tuned afresh
    monkeypatch.delenv(triton_fa3.WARP_SPEC_ENV)
    assert factory(CASE, ctx(DEVICE, not HAS_GPU)).config == (16, 16, 4, 1, False)  # the first choice, remembered


@needs_kernel
def test_a_flat_tiling_refuses_tensors_it_cannot_see_as_one_matrix():
    q, k, v = qkv(1, 2, 37, 37, 64, torch.float16)
    k_view = torch.randn(1, 2, 64, 64, dtype=torch.float16, device=DEVICE)[:, :, :37]
    with pytest.raises(ValueError) as e:
        triton_fa3.launch(q, k_view, v, torch.empty_like(q), False, (16, 16, 4, 1, False, True))
    assert str(e.value) == (
        "a flat tiling (16, 16, 4, 1, False, True) needs contiguous q, k, v (strides (4736, 2368, 64, 1), (8192, 4096, 64, 1), (4736, 2368, 64, 1))"
    )
