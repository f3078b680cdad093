// The python probe the doctor runs with the harness's python.
/**
 * Run with `python -c`: loads libcuda.so.1 the way every CUDA program in this environment will
 * (so a forward-compat layer in LD_LIBRARY_PATH shows up by its path and its cuInit result),
 * then asks torch and triton for their versions.
 */
export const PYTHON_PROBE = `
import json, platform, warnings
out = {"python": platform.python_version()}
try:
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    rc = lib.cuInit(0)
    ver = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(ver))
    name = ctypes.c_char_p()
    lib.cuGetErrorName(rc, ctypes.byref(name))
    info = {"cu_init": rc, "cu_init_name": name.value.decode() if name.value else None, "driver_api_version": ver.value}
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libcuda.so" in line:
                info["path"] = line.split()[-1]
                break
    out["libcuda"] = info
except OSError as e:
    out["libcuda"] = {"error": str(e)}
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda
    try:
        out["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        out["cudnn"] = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out["cuda_available"] = torch.cuda.is_available()
    if caught:
        out["cuda_init_warning"] = " ".join(str(w.message) for w in caught)
    if out["cuda_available"]:
        out["devices"] = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            out["devices"].append({"name": p.name, "capability": [p.major, p.minor], "sm_count": p.multi_processor_count, "total_memory_bytes": p.total_memory, "l2_bytes": getattr(p, "L2_cache_size", None)})
except Exception as e:
    out["torch_error"] = type(e).__name__ + ": " + str(e)
try:
    import triton
    out["triton"] = triton.__version__
except Exception as e:
    out["triton_error"] = type(e).__name__ + ": " + str(e)
print(json.dumps(out))
`;
