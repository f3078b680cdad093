"""pytest-benchmark hooks of issue 31's recordings (examples/tools/README.md).

The GPU's name goes into the JSON's machine_info["gpu"], where kernelgate reads it; and what the
slowed test was asked for (KG_SLOW_PCT) beside it, so a recording says which side it is.
"""

import os

import torch


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["gpu"] = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    machine_info["torch"] = torch.__version__
    machine_info["kg_slow_pct"] = os.environ.get("KG_SLOW_PCT", "")
