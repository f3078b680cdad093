"""Environment facts for the results document (GPU, driver, library versions); the GPU's model
comes from the GPU table the TypeScript side reads too (gpus.py, data/gpus.json). Runs in a
worker process: it initialises CUDA and NVML."""

import platform
import re
import shutil
import subprocess

from .gpus import model_of


class Nvml:
    """NVML handle of the GPU torch uses, or a stand-in that reads nothing when NVML is absent."""

    def __init__(self, torch_device_index=0):
        self.ok = False
        self.error = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nv = pynvml
            self.handle = self._handle(torch_device_index)
            self.ok = True
        except Exception as e:  # pynvml missing, no driver, or a container without NVML
            self.error = f"{type(e).__name__}: {e}"

    def _handle(self, index):
        import torch

        props = torch.cuda.get_device_properties(index)
        try:
            bus_id = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
            return self.nv.nvmlDeviceGetHandleByPciBusId(bus_id)
        except Exception:
            # No PCI ids in this torch: NVML's order matches CUDA's unless CUDA_VISIBLE_DEVICES reorders.
            return self.nv.nvmlDeviceGetHandleByIndex(index)

    def sm_clock_mhz(self):
        return float(self.nv.nvmlDeviceGetClockInfo(self.handle, self.nv.NVML_CLOCK_SM)) if self.ok else None

    def power_w(self):
        return self.nv.nvmlDeviceGetPowerUsage(self.handle) / 1000.0 if self.ok else None


def _version(module_name):
    try:
        module = __import__(module_name)
        return str(module.__version__)
    except Exception:
        return None


def _nvcc_version():
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


def device_facts(props, pci_device_id=None):
    """cases[].device of the GPU this worker sees (torch's device 0): name, model, UUID and PCI bus
    id as nvidia-smi writes them; the parent adds the index the host numbers it by (lanes.py)."""
    facts = {"name": props.name, "sku": model_of(props.name, pci_device_id)}
    uuid = getattr(props, "uuid", None)
    if uuid:
        uuid = str(uuid)
        facts["uuid"] = uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"
    try:
        facts["pci_bus_id"] = f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
    except AttributeError:  # a torch without PCI ids
        pass
    return facts


def collect(device):
    """The schema's `environment` object (ceilings are added later by the parent), plus
    `nvml_error` when NVML could not be read (the parent turns it into a diagnostic) and `device`,
    the GPU this worker sees (cases[].device; the parent takes both out)."""
    import torch

    libraries = {"python": platform.python_version(), "torch": torch.__version__}
    for name in ("triton", "numpy"):
        v = _version(name)
        if v:
            libraries[name] = v
    env = {"libraries": libraries}
    toolkit = _nvcc_version()
    if toolkit:
        env["cuda_toolkit_version"] = toolkit
    if device != "cuda":
        env["gpu"] = {"name": "none (CPU)", "sku": "none", "count": 0}
        env["device"] = {"name": "cpu"}  # a lane of the fake-GPU test hook (lanes.py FAKE_ENV)
        return env

    props = torch.cuda.get_device_properties(0)
    gpu = {
        "name": props.name,
        "compute_capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "memory_bytes": int(props.total_memory),
        "count": torch.cuda.device_count(),
    }
    l2 = getattr(props, "L2_cache_size", None)
    if l2:
        gpu["l2_bytes"] = int(l2)
    if torch.version.cuda:
        env["cuda_runtime_version"] = torch.version.cuda
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    if cudnn:
        libraries["cudnn"] = f"{cudnn // 10000}.{cudnn // 100 % 100}.{cudnn % 100}" if cudnn >= 10000 else str(cudnn)
    nvml = Nvml(0)
    pci_device_id = None
    if not nvml.ok:
        env["nvml_error"] = nvml.error
    if nvml.ok:
        nv = nvml.nv
        try:
            pci_device_id = f"{nv.nvmlDeviceGetPciInfo(nvml.handle).pciDeviceId:08x}"
        except Exception:  # an NVML without PCI info: the name decides the model
            pci_device_id = None
        gpu["sm_clock_max_mhz"] = float(nv.nvmlDeviceGetMaxClockInfo(nvml.handle, nv.NVML_CLOCK_SM))
        gpu["mem_clock_max_mhz"] = float(nv.nvmlDeviceGetMaxClockInfo(nvml.handle, nv.NVML_CLOCK_MEM))
        gpu["power_limit_w"] = nv.nvmlDeviceGetEnforcedPowerLimit(nvml.handle) / 1000.0
        driver = nv.nvmlSystemGetDriverVersion()
        env["driver_version"] = driver.decode() if isinstance(driver, bytes) else str(driver)
        cuda_driver = nv.nvmlSystemGetCudaDriverVersion()
        env["driver_cuda_version"] = f"{cuda_driver // 1000}.{cuda_driver % 1000 // 10}"
    if pci_device_id:
        gpu["pci_device_id"] = pci_device_id
    gpu["sku"] = model_of(props.name, pci_device_id)
    env["gpu"] = gpu
    env["device"] = device_facts(props, pci_device_id)
    return env
