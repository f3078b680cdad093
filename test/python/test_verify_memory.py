"""python/kernelgate_harness/verify.py: a verification that runs out of GPU memory is tried once more after the
allocator's cached blocks are returned, and a second failure is the error the kernel reports."""

import types

import pytest

from kernelgate_harness import device, verify


class FakeOOM(RuntimeError):
    pass


def fake_self(fails, device="cuda"):
    calls = {"check": 0, "empty_cache": 0}

    def check_once(*args, **kwargs):
        calls["check"] += 1
        if calls["check"] <= fails:
            raise FakeOOM("CUDA out of memory. Tried to allocate 24.00 GiB.")
        return {"ok": True}

    def empty_cache():
        calls["empty_cache"] += 1

    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(OutOfMemoryError=FakeOOM, empty_cache=empty_cache))
    return types.SimpleNamespace(device=device, torch=torch, check_once=check_once), calls


def call(obj):
    return verify.Verifier.check_once_or_free(obj, None, None, {}, None, None, 0, True)


def test_out_of_memory_once_is_retried_after_freeing_the_cache():
    obj, calls = fake_self(fails=1)
    assert call(obj) == {"ok": True}
    assert calls == {"check": 2, "empty_cache": 1}


def test_out_of_memory_twice_is_the_kernels_error():
    obj, calls = fake_self(fails=2)
    with pytest.raises(FakeOOM, match="CUDA out of memory. Tried to allocate 24.00 GiB."):
        call(obj)
    assert calls == {"check": 2, "empty_cache": 1}


def test_other_errors_and_the_cpu_are_not_retried():
    obj, calls = fake_self(fails=1, device="cpu")
    with pytest.raises(FakeOOM):
        call(obj)
    assert calls == {"check": 1, "empty_cache": 0}
    assert not device.is_out_of_memory(types.SimpleNamespace(cuda=types.SimpleNamespace(OutOfMemoryError=FakeOOM)), ValueError("shape mismatch"))


def test_the_repeat_check_takes_the_largest_difference_over_elements_finite_in_both_slice_by_slice(monkeypatch):
    """repeat_max_diff against the whole-tensor boolean index it replaced, with slices smaller than
    the output (and one that ends mid-slice), non-finite elements left out, and none left at all."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(verify, "REPEAT_SLICE", 7)
    g = torch.Generator().manual_seed(3)
    a = torch.randn(3, 5, 4, generator=g).half()
    b = a + (torch.randn(3, 5, 4, generator=g) * 1e-2).half()
    b.view(-1)[41] = a.view(-1)[41] + 4.0  # the largest difference, in the sixth slice of 7
    a.view(-1)[9] = float("nan")
    b.view(-1)[10] = float("inf")
    a.view(-1)[11], b.view(-1)[11] = 0.0, 1000.0  # a larger one, on an element left out below
    both = torch.isfinite(a) & torch.isfinite(b)
    both.view(-1)[11] = False
    expected = float((a.float() - b.float()).abs()[both].max())
    assert verify.repeat_max_diff(torch, a, b, both) == expected == pytest.approx(4.0, abs=0.02)
    assert verify.repeat_max_diff(torch, a, a.clone(), torch.isfinite(a)) == 0.0
    assert verify.repeat_max_diff(torch, a, b, torch.zeros_like(both)) == 0.0
    empty = torch.empty(0, dtype=torch.float16)
    assert verify.repeat_max_diff(torch, empty, empty, torch.zeros(0, dtype=torch.bool)) == 0.0
