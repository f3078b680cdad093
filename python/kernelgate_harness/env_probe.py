"""The parent's side of the environment probe: the first worker says what it runs on (GPU, driver,
libraries: environment.py), which becomes the document's `environment`, and each lane's worker
which GPU it sees (cases[].device)."""

from typing import Any

from . import lanes
from .document import Document
from .options import Options
from .progress import say
from .workers import WORKER_START_TIMEOUT_S, WorkerDied, WorkerHandle, WorkerTimeout


def start_early(manifests: list[Any], args: Any, fault: str | None, builds: list[dict[str, Any]]) -> WorkerHandle | None:
    """The first kernel's worker, started before the harness's own process imports torch to find
    the device: the worker imports torch as it starts (worker.main), so the two imports (about
    2 s each on the H100 runner) overlap. Its options' device is None until the environment
    probe's request brings it (read_environment). None when there is no kernel."""
    if not manifests:
        return None
    handle = WorkerHandle(manifests[0], Options.from_args(args, None, fault, builds).as_dict())  # type: ignore[arg-type]
    handle.start()
    return handle


def first_worker(early: WorkerHandle | None, manifest: Any, several: bool) -> WorkerHandle | None:
    """The worker start_early started, for the first kernel on one GPU; None otherwise (several
    lanes pin their workers to their GPUs): then it is let go."""
    if early is None:
        return None
    if several or early.manifest["name"] != manifest.name:
        early.stop_later()
        return None
    return early


def read_environment(handle: Any, document: Document, device: str, visible: list[str], gpus: list[str]) -> dict[str, Any] | None:
    """Fills the document's environment from the worker's probe; returns cases[].device of the
    first lane (or of the one GPU), None without a visible GPU."""
    first_device = None
    # the device, for a worker started before it was known (start_early); a restart of the
    # worker takes it from its options
    handle.options["device"] = device
    try:
        reply = handle.request({"op": "env", "device": device}, WORKER_START_TIMEOUT_S)
        if reply.get("op") == "env":
            env = reply["env"]
            probed = env.pop("device", None)
            if visible:
                # cases[].device of the first lane (or of the one GPU) from the same probe.
                first_device = case_device(probed, gpus[0] if gpus else visible[0], 0)
                if device == "cuda" and len(gpus) > 1 and "gpu" in env:
                    env["gpu"]["count"] = len(visible)  # the probe's worker sees its GPU alone
            nvml_error = env.pop("nvml_error", None)
            if nvml_error:
                why = f"NVML could not be read ({nvml_error}): no SM clock or power per sample, no throttled-sample filter"
                document.diag("warning", "no-nvml", why, fix="install nvidia-ml-py (pynvml) next to torch")
            document.doc["environment"] = env
        else:
            document.diag("warning", "environment-unknown", f"could not read the environment: {reply['error']['message']}")
    except (WorkerTimeout, WorkerDied) as e:
        document.diag("warning", "environment-unknown", f"the environment probe did not answer ({type(e).__name__})")
    env = document.doc["environment"]
    gpu, torch_version = env["gpu"], env.get("libraries", {}).get("torch", "?")
    say(f"GPU: {gpu.get('name')} ({gpu.get('sku', 'unknown')}), driver {env.get('driver_version', '?')}, torch {torch_version}")
    if device == "cpu":
        document.diag("info", "cpu-only", "no GPU: timings are CPU wall clock (Triton kernels under TRITON_INTERPRET=1) and say nothing about GPU speed")
    return first_device


def ask_device(handle: Any, lane: Any, visible: list[str]) -> dict[str, Any] | None:
    """cases[].device of the GPU a lane's worker sees (its index as the host numbers it)."""
    name = lane.name if lane is not None else (visible[0] if visible else None)
    if name is None:
        return None
    try:
        # The environment probe says which GPU the worker sees (environment.py device_facts).
        reply = handle.request({"op": "env"}, WORKER_START_TIMEOUT_S)
    except (WorkerTimeout, WorkerDied) as e:
        say(f"the worker did not say which GPU it sees ({type(e).__name__}): its cases record the device by number only")
        reply = {"op": "fatal"}
    device = reply["env"].get("device") if reply.get("op") == "env" else None
    return case_device(device, name, lane.position if lane is not None else 0)


def case_device(device: dict[str, Any] | None, name: str, position: int) -> dict[str, Any]:
    return {**(device or {"name": "unknown"}), "index": lanes.device_index(name, position)}
