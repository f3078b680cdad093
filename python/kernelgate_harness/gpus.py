"""The GPU table (data/gpus.json), the same file the TypeScript doctor and judge read: a GPU's
model from its PCI device id, else its product name. The harness records the raw facts and the
model from this table; datasheet peaks and every verdict on them are the TypeScript side's."""

import json
import os
import re

TABLE_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "data", "gpus.json")


def _load():
    with open(TABLE_PATH, encoding="utf-8") as f:
        models = json.load(f)["models"]
    patterns = [(re.compile(p, re.IGNORECASE), m["model"]) for m in models for p in m["names"]]
    by_id = {i: m["model"] for m in reversed(models) for i in m["pci_device_ids"]}
    return patterns, by_id


_PATTERNS, _BY_PCI_DEVICE = _load()


def pci_device(pci_device_id):
    """0x233010DE, 233010de or 2330 to 2330; None when there is none."""
    if pci_device_id is None:
        return None
    device = str(pci_device_id).strip().lower()
    device = device[2:] if device.startswith("0x") else device
    return device[:4] or None


def model_of(name, pci_device_id=None):
    """Normalised model (the schema's `sku`): H100-SXM, GH200, H200-NVL, ...; unknown when unlisted."""
    device = pci_device(pci_device_id)
    if device in _BY_PCI_DEVICE:
        return _BY_PCI_DEVICE[device]
    return next((model for pattern, model in _PATTERNS if pattern.search(name or "")), "unknown")


if __name__ == "__main__":
    # One "name<TAB>pci id" per line on stdin, one model per line out (test/gpus.test.ts).
    import sys

    for line in sys.stdin.read().splitlines():
        name, _, pci = line.partition("\t")
        print(model_of(name, pci or None))
