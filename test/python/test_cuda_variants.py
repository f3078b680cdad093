"""CPU-side checks of the CUDA variants' Python wrappers: argument validation, the reasons
given for unsupported cases, and the chunking of the unfused reference. No GPU needed: the
wrappers validate before they touch a library or a device."""

import pathlib
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
