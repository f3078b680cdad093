"""What the CUDA variants' wrappers share: binding an `extern "C"` entry of a library the build
stage built (ctypes), calling it and turning a non-zero `cudaError_t` into an exception that
names it, the stream handle, and the refusals every CUDA variant makes before it loads anything.
The libraries' contract is in docs/cuda-kernels.md: each exports `kg_cuda_error_name(int)`."""

import ctypes
import functools

import torch

from kernelgate_harness import Unsupported

# dtype codes of every entry's `dtype` argument
DTYPE_CODES = {torch.float16: 0, torch.bfloat16: 1}
INT = ctypes.c_int
PTR = ctypes.c_void_p
FLOAT = ctypes.c_float


@functools.cache
def bind(path, entry, argtypes):
    """`entry` of the library at `path` as a function of its arguments (a tuple of ctypes types)
    that returns nothing and raises RuntimeError("<entry> returned <cudaError name> (<code>)")."""
    lib = ctypes.CDLL(path)
    lib.kg_cuda_error_name.argtypes = [INT]
    lib.kg_cuda_error_name.restype = ctypes.c_char_p
    fn = getattr(lib, entry)
    fn.argtypes = list(argtypes)
    fn.restype = INT

    def call(*args):
        code = fn(*args)
        if code != 0:
            raise RuntimeError(f"{entry} returned {lib.kg_cuda_error_name(code).decode()} ({code})")

    return call


def stream_handle(tensor):
    """The cudaStream_t of the current stream on the tensor's device, as the entries take it."""
    return torch.cuda.current_stream(tensor.device).cuda_stream


def refuse_unless_cuda_half(params, ctx):
    """Raises Unsupported, so the harness records the case as skipped with the reason, for runs
    off the GPU and dtypes other than fp16 and bf16."""
    if not str(ctx.device).startswith("cuda"):
        raise Unsupported(f"CUDA variant; this run is on {ctx.device}")
    dtype = params.get("dtype")
    if dtype is not None and dtype not in ("fp16", "bf16"):
        raise Unsupported(f"dtype {dtype} (fp16 and bf16 only)")
