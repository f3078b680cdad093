"""CPU-side checks of the CUDA variants' Python wrappers: argument validation, the reasons
given for unsupported cases, and the chunking of the unfused reference. No GPU needed: the
wrappers validate before they touch a library or a device."""

import ctypes
import math
import pathlib
import random
import shutil
import subprocess

import pytest
import torch

from kernelgate_harness import NotBuilt, Unsupported
from kernels.attention import cuda_variants as attn
from kernels.bsr_gemm import cuda_variants as bsr
from kernels.common import cuda_library


class NoLibraryCtx:
    """A GPU run whose build stage made no library."""

    device = "cuda"
    interpret = False

    def library(self, variant):
        raise NotBuilt(f"{variant}: no library in this test")


class CpuCtx(NoLibraryCtx):
    device = "cpu"


def qkv(shape=(1, 2, 8, 64), k_shape=None, dtype=torch.float16):
    k_shape = k_shape or shape
    return torch.zeros(shape, dtype=dtype), torch.zeros(k_shape, dtype=dtype), torch.zeros(k_shape, dtype=dtype)


def test_valid_cpu_tensors_are_unsupported_not_an_error():
    q, k, v = qkv((2, 3, 5, 64), (2, 3, 7, 64))
    with pytest.raises(Unsupported, match="CUDA only"):
        attn.check_qkv(q, k, v)


def test_check_qkv_rejects_mismatched_heads():
    q, _, _ = qkv((1, 2, 8, 64))
    _, k, v = qkv((1, 3, 8, 64))
    with pytest.raises(ValueError, match=r"k \(1, 3, 8, 64\) and v \(1, 3, 8, 64\) must be \(B, H, S_k, D\)"):
        attn.check_qkv(q, k, v)


def test_check_qkv_rejects_non_contiguous():
    q, k, v = qkv((1, 2, 8, 64))
    with pytest.raises(ValueError, match="k must be contiguous"):
        attn.check_qkv(q, k.transpose(2, 3).contiguous().transpose(2, 3), v)


def test_check_qkv_rejects_mixed_dtypes():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="v has dtype torch.bfloat16, q has torch.float16"):
        attn.check_qkv(q, k, v.to(torch.bfloat16))


def test_check_qkv_rejects_three_dimensional_inputs():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"q must be 4-D \(B, H, S, D\), got shape \(2, 8, 64\)"):
        attn.check_qkv(q[0], k, v)


def test_fp32_is_unsupported_not_an_error():
    q, k, v = qkv(dtype=torch.float32)
    with pytest.raises(Unsupported, match="fp16 and bf16 only"):
        attn.check_qkv(q, k, v)


def test_fa2_refuses_head_dim_96_before_loading_its_library():
    with pytest.raises(Unsupported, match="head dim 96"):
        attn.cuda_fa2({"D": 96, "causal": False}, NoLibraryCtx())


@pytest.mark.parametrize("factory", [*attn.VARIANTS.values(), *bsr.VARIANTS.values()])
def test_factories_skip_cpu_runs_before_asking_for_a_library(factory):
    with pytest.raises(Unsupported, match="CUDA variant; this run is on cpu"):
        factory({"dtype": "fp16", "D": 64, "block": 128, "N": 128}, CpuCtx())


def test_fp32_cases_are_refused_by_the_factory():
    with pytest.raises(Unsupported, match="dtype fp32"):
        attn.cuda_fa2({"dtype": "fp32", "D": 64}, NoLibraryCtx())


def test_bsr_factories_refuse_other_block_sizes_and_odd_n():
    with pytest.raises(Unsupported, match="blocks 64x64"):
        bsr.VARIANTS["cuda_bsr_mma"]({"dtype": "fp16", "block": 64, "N": 128}, NoLibraryCtx())
    with pytest.raises(Unsupported, match="N = 1001"):
        bsr.VARIANTS["cuda_bsr_wgmma_ws"]({"dtype": "fp16", "block": 128, "N": 1001}, NoLibraryCtx())


def test_unfused_reference_takes_any_head_dim():
    with pytest.raises(NotBuilt):
        attn.cublas_attn({"dtype": "fp16", "D": 96}, NoLibraryCtx())


@pytest.mark.parametrize("variant", ["cuda_fa2", "cuda_fa_wgmma"])
def test_fused_variants_without_library_raise_not_built(variant):
    with pytest.raises(NotBuilt, match=f"{variant}: no library"):
        attn.VARIANTS[variant]({"D": 128, "causal": False}, NoLibraryCtx())


def test_fused_variants_load_their_own_entry():
    assert attn.FUSED_ENTRIES == {"cuda_fa2": "kg_attention_fa2", "cuda_fa_wgmma": "kg_attention_fa_wgmma"}
    assert attn.cuda_fa_wgmma.__name__ == "cuda_fa_wgmma"


def test_wgmma_header_is_what_its_generator_writes():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[2] / "kernels/common/cuda/gen_wgmma.py"
    spec = importlib.util.spec_from_file_location("gen_wgmma", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.HEADER.read_text() == gen.render(), "kernels/common/cuda/wgmma_ops.cuh is stale: run python3 kernels/common/cuda/gen_wgmma.py"


@pytest.mark.parametrize("value, expected", [(True, True), (False, False), ("true", True), ("false", False)])
def test_causal_flag_accepts_yaml_booleans_and_strings(value, expected):
    assert attn.causal_flag({"causal": value}) is expected


def test_scores_chunk_for_the_headline_case_stays_under_the_budget():
    heads = attn.heads_per_chunk(4096, 4096, 2)
    assert heads * 4096 * 4096 * 2 <= attn.SCORES_BUDGET_BYTES
    assert heads == 64
    assert attn.heads_per_chunk(1 << 20, 1 << 20, 2) == 1


def bsr_inputs(n_block_rows=2, topk=2, bm=128, bk=128, k=512, n=256, dtype=torch.float16):
    return (
        torch.zeros(n_block_rows, topk, bm, bk, dtype=dtype),
        torch.zeros(n_block_rows, topk, dtype=torch.int32),
        torch.zeros(k, n, dtype=dtype),
    )


def test_check_bsr_rejects_int64_columns():
    a_values, a_cols, b = bsr_inputs()
    with pytest.raises(ValueError, match="a_cols must be a 2-D int32 tensor"):
        bsr.check_bsr(a_values, a_cols.long(), b)


def test_check_bsr_rejects_k_not_a_multiple_of_bk():
    a_values, a_cols, _ = bsr_inputs()
    with pytest.raises(ValueError, match="K = 500 is not a multiple of bk = 128"):
        bsr.check_bsr(a_values, a_cols, torch.zeros(500, 256, dtype=torch.float16))


def test_check_bsr_rejects_too_many_blocks_per_row():
    a_values, a_cols, b = bsr_inputs(topk=5)
    with pytest.raises(ValueError, match="topk = 5 exceeds the 4 column blocks"):
        bsr.check_bsr(a_values, a_cols, b)


def test_check_bsr_rejects_wrong_output_shape():
    a_values, a_cols, b = bsr_inputs()
    with pytest.raises(ValueError, match=r"out has shape \(256, 128\), expected \(256, 256\)"):
        bsr.check_bsr(a_values, a_cols, b, torch.zeros(256, 128, dtype=torch.float16))


def test_check_bsr_cpu_tensors_are_unsupported():
    with pytest.raises(Unsupported, match="CUDA only"):
        bsr.check_bsr(*bsr_inputs())


def test_bsr_factories_raise_not_built_without_a_library():
    for factory in bsr.VARIANTS.values():
        with pytest.raises(NotBuilt):
            factory({}, NoLibraryCtx())


# -- the ctypes bindings against the real libraries (nvcc here; no GPU needed: the entries check
# their arguments before any CUDA call, and kg_cuda_error_name is a table lookup) --

NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
REPO = pathlib.Path(__file__).parents[2]
LIBRARIES = {
    "fa_wgmma": "kernels/attention/cuda/fa_wgmma.cu",
    "softmax": "kernels/attention/cuda/softmax.cu",
    "bsr_wgmma_ws": "kernels/bsr_gemm/cuda/bsr_wgmma_ws.cu",
}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    out = tmp_path_factory.mktemp("libs")
    jobs = {
        name: subprocess.Popen(
            [NVCC, "-shared", "-Xcompiler", "-fPIC", "-O1", "-gencode=arch=compute_90a,code=sm_90a", "-o", str(out / f"{name}.so"), str(REPO / src)],
            stderr=subprocess.PIPE, text=True,
        )
        for name, src in LIBRARIES.items()
    }
    for name, job in jobs.items():
        _, err = job.communicate(timeout=600)
        assert job.returncode == 0, f"nvcc failed on {LIBRARIES[name]}: {err[-2000:]}"
    return {name: str(out / f"{name}.so") for name in LIBRARIES}


def test_bound_entries_name_the_cuda_error_of_a_refused_call(libraries):
    fused = cuda_library.bind(libraries["fa_wgmma"], "kg_attention_fa_wgmma", attn.FUSED_ARGTYPES)
    with pytest.raises(RuntimeError, match=r"^kg_attention_fa_wgmma returned cudaErrorInvalidValue \(1\)$"):
        fused(None, None, None, None, 0, 1, 1, 1, 64, 0, 0, 1.0, None)  # batch 0
    softmax = cuda_library.bind(libraries["softmax"], "kg_attention_softmax", attn.SOFTMAX_ARGTYPES)
    with pytest.raises(RuntimeError, match=r"^kg_attention_softmax returned cudaErrorInvalidValue \(1\)$"):
        softmax(None, 0, 1, 1, 0, 0, 1.0, None)  # no matrices
    ws = cuda_library.bind(libraries["bsr_wgmma_ws"], "kg_bsr_gemm_wgmma_ws", bsr.ARGTYPES)
    with pytest.raises(RuntimeError, match=r"^kg_bsr_gemm_wgmma_ws returned cudaErrorInvalidValue \(1\)$"):
        ws(None, None, None, None, 128, 128, 128, 64, 64, 1, 0, None)  # bm 64, the kernel needs 128
    with pytest.raises(RuntimeError, match=r"^kg_bsr_gemm_wgmma_ws returned cudaErrorInvalidValue \(1\)$"):
        ws(None, None, None, None, 128, 128, 128, 128, 64, 1, 7, None)  # dtype 7


# -- which instance a call takes (kg_fa_wgmma_instance: dispatch()'s own choice, host code only) --


def fa_instance(library, batch, heads, seq_q, head_dim, causal, sms=132, seq_k=None, name_len=64):
    entry = ctypes.CDLL(library).kg_fa_wgmma_instance
    name = ctypes.create_string_buffer(64)
    rc = entry(batch, heads, seq_q, seq_q if seq_k is None else seq_k, head_dim, int(causal), sms, name, name_len)
    return name.value.decode() if rc == 0 else rc


def snake_imbalance(seq_q, seq_k, heads, ctas, block_m=192, block_n=128):
    """fa_wgmma.cu's model of the snake (KG_FA_PERSISTENT_ORDER 1), item by item: CTA c takes item
    c of round 0, then in round r item r x ctas + c (r even) or + ctas - 1 - c (r odd); items in head
    order, each head's query blocks heaviest first, an item costing its key tiles + 0.3."""
    n_m = -(-seq_q // block_m)
    items = n_m * heads
    totals = []
    for c in range(ctas):
        total, r, item = 0.0, 0, c
        while item < items:
            m0 = (n_m - 1 - item % n_m) * block_m
            total += -(-min(seq_k, m0 + block_m) // block_n) + 0.3
            r += 1
            item = r * ctas + (ctas - 1 - c if r % 2 else c)
        totals.append(total)
    return max(totals) * ctas / sum(totals)


def test_the_library_names_the_instance_a_call_takes(libraries):
    lib = libraries["fa_wgmma"]
    # causal D64 on 132 SMs (runs 191-193, H200s). Items: 192 query rows of a head. At most one per
    # SM: a CTA per item
    assert fa_instance(lib, 2, 3, 1000, 64, True) == "D64 causal per item"  # 36 items
    assert fa_instance(lib, 1, 22, 1152, 64, True) == "D64 causal per item"  # 132
    assert fa_instance(lib, 1, 9, 2048, 64, True) == "D64 causal per item"  # 99
    # at most four per CTA: order 2 (heaviest first across the heads, no counter)
    assert fa_instance(lib, 1, 23, 1152, 64, True) == "D64 causal"  # 138
    assert fa_instance(lib, 1, 88, 1152, 64, True) == "D64 causal"  # 528 = 4 x 132
    assert fa_instance(lib, 2, 16, 1024, 64, True) == "D64 causal"
    # more, at most 8 query blocks a head: the snake
    assert fa_instance(lib, 1, 89, 1152, 64, True) == "D64 causal snake"  # 534
    assert fa_instance(lib, 8, 32, 1536, 64, True) == "D64 causal snake"  # 8 blocks
    assert fa_instance(lib, 16, 16, 1280, 64, True) == "D64 causal snake"  # 7
    # longer: the snake where its rounds come out even (the headline: 22 blocks a head on 132 CTAs,
    # the busiest CTA 1.003x the mean; B4 H32 S3072 1.031x), else order 2 (the counter)
    assert fa_instance(lib, 16, 96, 4096, 64, True) == "D64 causal snake"
    assert fa_instance(lib, 4, 32, 3072, 64, True) == "D64 causal snake"
    assert fa_instance(lib, 8, 16, 4096, 64, True) == "D64 causal snake"  # 1.034x
    assert fa_instance(lib, 1, 16, 16384, 64, True) == "D64 causal"  # the snake's busiest 1.69x
    assert fa_instance(lib, 4, 96, 8192, 64, True) == "D64 causal"  # 1.041x
    assert fa_instance(lib, 1, 16, 16384, 64, True, sms=86) == "D64 causal snake"  # 86 blocks on 86 CTAs: even
    assert fa_instance(lib, 2, 3, 77, 64, False) == "D64"
    # D128 (the twenty-first session's choices): at most 128 keys, at most one item (128 rows) per
    # SM, the shorter sequences where 128-key tiles pay, else the persistent grid's 160-key tiles;
    # on either, the snake (the twenty-second session) at more than 4 and at most 32 items per CTA
    # where its busiest CTA is within 5 % of the mean
    assert fa_instance(lib, 2, 3, 77, 128, True) == "D128 causal"
    assert fa_instance(lib, 2, 3, 1000, 128, True) == "D128 causal N192"
    assert fa_instance(lib, 2, 16, 1024, 128, True) == "D128 causal persistent"  # 256 items: no counter
    assert fa_instance(lib, 16, 32, 256, 128, True) == "D128 causal persistent snake"  # 7.8 per CTA
    assert fa_instance(lib, 32, 32, 512, 128, True) == "D128 causal persistent snake"  # 31
    assert fa_instance(lib, 4, 16, 2048, 128, True) == "D128 causal N160 snake"  # 7.8
    assert fa_instance(lib, 8, 32, 2048, 128, True) == "D128 causal N160 snake"  # 31, the snake 1.040x
    assert fa_instance(lib, 12, 32, 2048, 128, True) == "D128 causal N160"  # 46.5
    assert fa_instance(lib, 1, 16, 16384, 128, True) == "D128 causal N160"  # 15.5, the snake 1.54x
    assert fa_instance(lib, 16, 96, 4096, 128, True) == "D128 causal N160"
    # not causal: 176-key tiles, the last one 64 keys wide where it holds at most 64 (4096 = 23 x 176 + 48)
    assert fa_instance(lib, 16, 96, 4096, 128, False) == "D128 N176 last64"
    assert fa_instance(lib, 2, 3, 1000, 128, False) == "D128 N176"
    # refused: the sizes kg_attention_fa_wgmma refuses, no SMs, a head dim without an instance, a
    # name buffer too short for the name and its NUL (cudaErrorInvalidValue)
    assert fa_instance(lib, 0, 3, 1000, 64, True) == 1
    assert fa_instance(lib, 65536, 1, 1000, 64, True) == 1
    assert fa_instance(lib, 2, 3, 1000, 64, True, sms=0) == 1
    assert fa_instance(lib, 2, 3, 1000, 96, True) == 1
    assert fa_instance(lib, 2, 3, 1000, 64, True, name_len=len("D64 causal per item")) == 1
    assert fa_instance(lib, 2, 3, 1000, 64, True, name_len=len("D64 causal per item") + 1) == "D64 causal per item"


def test_the_causal_d64_choice_follows_the_snake_model_item_by_item(libraries):
    # random calls of more than four items per CTA and more than 8 query blocks a head, on devices
    # of 60 to 140 SMs (half of them in whole rounds, where the snake often comes out even): the
    # snake exactly where the model, simulated here item by item, puts its busiest CTA within 4 % of
    # the mean (fa_wgmma.cu sums it per class of CTAs and period of rounds)
    rng = random.Random(28)
    checked = {"D64 causal snake": 0, "D64 causal": 0}
    while sum(checked.values()) < 300:
        sms = rng.randint(60, 140)
        seq_q = rng.randint(8 * 192 + 1, 12000)
        seq_k = seq_q if rng.random() < 0.7 else rng.randint(1, 12000)
        n_m = -(-seq_q // 192)
        if rng.random() < 0.5:
            heads = sms // math.gcd(n_m, sms) * rng.randint(1, 6)  # items a multiple of the SMs
        else:
            heads = rng.randint(4 * sms // n_m + 1, 12 * sms // n_m + 2)
        if n_m * heads <= 4 * sms or n_m * heads > 60000:
            continue
        imbalance = snake_imbalance(seq_q, seq_k, heads, sms)
        if abs(imbalance - 1.04) < 1e-9:
            continue
        want = "D64 causal snake" if imbalance <= 1.04 else "D64 causal"
        got = fa_instance(libraries["fa_wgmma"], 1, heads, seq_q, 64, True, sms=sms, seq_k=seq_k)
        assert got == want, (heads, seq_q, seq_k, sms, imbalance)
        checked[want] += 1
    assert min(checked.values()) >= 50, checked
