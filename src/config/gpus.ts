// The GPU table (data/gpus.json): model by PCI device id and product name, compute capability,
// datasheet peaks. The Python harness reads the same file (python/kernelgate_harness/gpus.py); the bundle
// carries a copy made at build time, which check-dist keeps equal to the file.
import table from '../../data/gpus.json' with { type: 'json' };

export interface PeakSpec {
  /** dense tensor-core TFLOPS per dtype (fp16, bf16, tf32, fp8, ...) */
  tflops: Record<string, number>;
  /** datasheet memory bandwidth, GB/s */
  gbps?: number;
}

export interface GpuModel {
  model: string;
  names: string[];
  pci_device_ids: string[];
  compute_capability: string;
  peaks?: PeakSpec;
  source?: string;
}

export const GPU_MODELS: readonly GpuModel[] = table.models as GpuModel[];

const NAME_PATTERNS: readonly [RegExp, GpuModel][] = GPU_MODELS.flatMap((m) =>
  m.names.map((pattern): [RegExp, GpuModel] => [new RegExp(pattern, 'i'), m]),
);

/** `0x233010DE`, `233010de` or `2330` to `2330`; undefined when there is none. */
export function pciDevice(pciDeviceId: string | undefined): string | undefined {
  const device = pciDeviceId?.trim().toLowerCase().replace(/^0x/, '').slice(0, 4);
  return device === undefined || device === '' ? undefined : device;
}

/** The table's entry for a GPU: by PCI device id, else by product name; undefined when neither. */
export function gpuModelEntry(name: string, pciDeviceId?: string): GpuModel | undefined {
  const device = pciDevice(pciDeviceId);
  const byId =
    device === undefined ? undefined : GPU_MODELS.find((m) => m.pci_device_ids.includes(device));
  return byId ?? NAME_PATTERNS.find(([re]) => re.test(name))?.[1];
}

/** Normalised model (the schema's `sku`): H100-SXM, GH200, H200-NVL, ...; `unknown` when unlisted. */
export function gpuModel(name: string, pciDeviceId?: string): string {
  return gpuModelEntry(name, pciDeviceId)?.model ?? 'unknown';
}

/** Compute capability of a model the table lists. */
export function modelCapability(model: string): string | undefined {
  return GPU_MODELS.find((m) => m.model === model)?.compute_capability;
}

/** Datasheet peaks of every model the table gives them for, keyed by model. */
export const DATASHEET_PEAKS: Readonly<Record<string, PeakSpec>> = Object.fromEntries(
  GPU_MODELS.filter((m) => m.peaks !== undefined).map((m) => [m.model, m.peaks as PeakSpec]),
);
