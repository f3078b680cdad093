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
