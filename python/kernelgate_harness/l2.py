"""The L2 cache's persisting lines (docs/harness.md, "cold and warm"). A kernel can set aside part
of L2 for persisting accesses (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize) and an
access-policy window on its stream): lines it marks persisting survive the harness's flush, so a
case timed cold would be timed warm. torch.cuda has no API for it; the CUDA runtime has, through
ctypes: before every cold sample the persisting lines are reset to normal
(cudaCtxResetPersistingL2Cache), and after each variant's verification the limit is read back and
a variant that left one set is named and the limit set back to 0."""

import ctypes
import ctypes.util
import glob
import os

CUDA_LIMIT_PERSISTING_L2 = 0x06  # cudaLimitPersistingL2CacheSize
ERROR_KIND = "l2-persistence"


def _candidates():
    names = []
    try:
        import nvidia.cuda_runtime as rt  # the runtime torch's wheels load

        for folder in getattr(rt, "__path__", []):
            names += sorted(glob.glob(os.path.join(folder, "lib", "libcudart.so*")))
    except ImportError:
        pass
    try:
        import torch

        names += sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libcudart*.so*")))
    except ImportError:
        pass
    found = ctypes.util.find_library("cudart")
    names += [found] if found else []
    return names + ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]


class PersistingL2:
    """The CUDA runtime's persisting-L2 calls, or none (`ok` False, `why` says so) where the
    runtime library cannot be loaded or lacks them."""

    def __init__(self):
        self.lib, self.why = None, "the CUDA runtime library (libcudart) could not be loaded"
        for name in _candidates():
            try:
                lib = ctypes.CDLL(name)
                if not all(hasattr(lib, f) for f in ("cudaCtxResetPersistingL2Cache", "cudaDeviceGetLimit", "cudaDeviceSetLimit")):
                    continue
            except OSError:
                continue
            self.lib, self.why = lib, None
            break
        # The limit as the worker found it, before any kernel module ran: the driver's own default
        # is not 0 (an H100 read 9.38 MiB, 2026-11-26), so a variant is named only for changing it.
        self.initial = self.limit()

    @property
    def ok(self):
        return self.lib is not None

    def reset_lines(self):
        """Persisting lines back to normal (evictable by the flush); True when the call succeeded."""
        return self.ok and self.lib.cudaCtxResetPersistingL2Cache() == 0

    def limit(self):
        """Bytes of L2 set aside for persisting accesses, or None when unreadable."""
        if not self.ok:
            return None
        value = ctypes.c_size_t(0)
        if self.lib.cudaDeviceGetLimit(ctypes.byref(value), CUDA_LIMIT_PERSISTING_L2) != 0:
            return None
        return int(value.value)

    def changed(self):
        """The limit now when a variant changed it from the worker's starting value, else None."""
        now = self.limit()
        return None if now is None or self.initial is None or now == self.initial else now

    def clear_limit(self):
        """The limit back to the worker's starting value, persisting lines back to normal."""
        if self.ok:
            self.lib.cudaDeviceSetLimit(CUDA_LIMIT_PERSISTING_L2, ctypes.c_size_t(self.initial or 0))
            self.lib.cudaCtxResetPersistingL2Cache()


def persistence_error(v, limit_bytes):
    return {
        "kind": ERROR_KIND,
        "message": (
            f"{v} set aside {limit_bytes / (1 << 20):.3g} MiB of L2 for persisting accesses (cudaLimitPersistingL2CacheSize) and left "
            "it set after its call returned: persisting lines survive the flush between cold samples, so its timing would be warm; "
            "the harness set the limit back to what it was (a kernel may use persisting L2 inside its call only if it resets it before returning)"
        ),
    }


def l2_statement(cold, use_graph, batched, reset_ok, work_bytes, l2_bytes, cuda):
    """The cold/warm statement of one case and variant (Timing.l2_state in the results)."""
    if not cuda:
        return "not applicable: timed on the CPU"
    if use_graph:
        how = "calls back to back" if batched else "a CUDA graph's launches back to back"
        return f"warm: {how} (a short case: the launches after the first find the inputs in L2)"
    if not cold:
        return f"warm: not flushed (its working set, {work_bytes / (1 << 20):.4g} MiB, is over 4x the L2's {l2_bytes / (1 << 20):.4g} MiB)"
    if reset_ok:
        return "cold: L2 flushed (2x its size zeroed) and its persisting lines reset before every sample"
    return "cold: L2 flushed (2x its size zeroed) before every sample; persisting lines not reset (the CUDA runtime's call was not available)"
