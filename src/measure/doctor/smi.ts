// `nvidia-smi -q -x` read into typed GPUs: the driver's view of each board.
import { XMLParser } from 'fast-xml-parser';
import { gpuModel } from '../../config/index.js';
import type { GpuFacts } from './types.js';

/** Normalised model from the PCI device id, else the name; `unknown` when neither says (data/gpus.json). */
export function gpuSku(name: string, pciDeviceId?: string): string {
  return gpuModel(name, pciDeviceId);
}

type XmlNode = Record<string, unknown>;

function node(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as XmlNode)[key];
  }
  return current;
}

function text(value: unknown, ...keys: string[]): string | undefined {
  const v = node(value, ...keys);
  if (typeof v !== 'string' || v === '' || v === 'N/A') return undefined;
  return v;
}

/** Leading number of "126.97 W", "1980 MHz", "0" and the like; undefined for N/A. */
function num(value: unknown, ...keys: string[]): number | undefined {
  const s = text(value, ...keys);
  const m = s === undefined ? null : /^-?\d+(\.\d+)?/.exec(s);
  return m ? Number(m[0]) : undefined;
}

function sumOf(values: (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length === 0 ? undefined : known.reduce((a, b) => a + b, 0);
}

const XML = new XMLParser({
  ignoreAttributes: false,
  parseTagValue: false,
  isArray: (name) => name === 'gpu' || name === 'process_info',
});

/** One GPU as nvidia-smi reports it: the facts kept in the report, plus what the checks need. */
export interface SmiGpu extends GpuFacts {
  pciDeviceId?: string;
  memoryMiB?: number;
  memClockMaxMhz?: number;
  appClockMhz?: number;
  pcieWidth?: number;
  pcieWidthMax?: number;
  eccPending?: string;
  migPending?: string;
  rowRemapPending?: boolean;
}

export interface SmiReading {
  driverVersion?: string;
  driverCudaVersion?: string;
  gpus: SmiGpu[];
}

const DETAIL_KEYS = [
  'pciDeviceId',
  'memoryMiB',
  'memClockMaxMhz',
  'appClockMhz',
  'pcieWidth',
  'pcieWidthMax',
  'eccPending',
  'migPending',
  'rowRemapPending',
] as const;

export function gpuFacts(g: SmiGpu): GpuFacts {
  const facts: Record<string, unknown> = { ...g };
  for (const key of DETAIL_KEYS) delete facts[key];
  return facts as unknown as GpuFacts;
}

/** Parses `nvidia-smi -q -x`. */
export function parseNvidiaSmiXml(xmlText: string): SmiReading {
  const doc = XML.parse(xmlText) as XmlNode;
  const log = node(doc, 'nvidia_smi_log');
  const gpuNodes = (node(log, 'gpu') as XmlNode[] | undefined) ?? [];
  const gpus = gpuNodes.map((g, index): SmiGpu => {
    const name = text(g, 'product_name') ?? 'unknown';
    const pciDeviceId = text(g, 'pci', 'pci_device_id');
    const reasonsNode = (node(g, 'clocks_event_reasons') ?? node(g, 'clocks_throttle_reasons')) as
      XmlNode | undefined;
    const clockEventReasons = Object.entries(reasonsNode ?? {})
      .filter(([, v]) => v === 'Active')
      .map(([k]) => k.replace(/^clocks_(event|throttle)_reason_/, ''));
    const processes = ((node(g, 'processes', 'process_info') as XmlNode[] | undefined) ?? []).map(
      (p) => ({
        pid: num(p, 'pid') ?? 0,
        name: text(p, 'process_name') ?? 'unknown',
        usedMemoryMiB: num(p, 'used_memory'),
      }),
    );
    const volatile = node(g, 'ecc_errors', 'volatile');
    const power = node(g, 'gpu_power_readings') ?? node(g, 'power_readings');
    return {
      index,
      busId:
        (node(g, '@_id') as string | undefined) ?? text(g, 'pci', 'pci_bus_id') ?? String(index),
      name,
      sku: gpuSku(name, pciDeviceId),
      brand: text(g, 'product_brand'),
      pciDeviceId,
      memoryMiB: num(g, 'fb_memory_usage', 'total'),
      smClockMhz: num(g, 'clocks', 'sm_clock'),
      smClockMaxMhz: num(g, 'max_clocks', 'sm_clock'),
      memClockMaxMhz: num(g, 'max_clocks', 'mem_clock'),
      appClockMhz: num(g, 'applications_clocks', 'graphics_clock'),
      powerDrawW:
        num(power, 'instant_power_draw') ??
        num(power, 'average_power_draw') ??
        num(power, 'power_draw'),
      powerLimitW: num(power, 'current_power_limit') ?? num(power, 'power_limit'),
      powerLimitDefaultW: num(power, 'default_power_limit'),
      temperatureC: num(g, 'temperature', 'gpu_temp'),
      utilizationPct: num(g, 'utilization', 'gpu_util'),
      clockEventReasons,
      persistenceMode: text(g, 'persistence_mode'),
      eccMode: text(g, 'ecc_mode', 'current_ecc'),
      eccPending: text(g, 'ecc_mode', 'pending_ecc'),
      eccVolatileCorrectable: sumOf([
        num(volatile, 'sram_correctable'),
        num(volatile, 'dram_correctable'),
        num(volatile, 'single_bit', 'total'),
      ]),
      eccVolatileUncorrectable: sumOf([
        num(volatile, 'sram_uncorrectable_parity'),
        num(volatile, 'sram_uncorrectable_secded'),
        num(volatile, 'sram_uncorrectable'),
        num(volatile, 'dram_uncorrectable'),
        num(volatile, 'double_bit', 'total'),
      ]),
      rowRemapPending:
        text(g, 'remapped_rows', 'remapped_row_pending') === 'Yes' ||
        text(g, 'remapped_rows', 'remapped_row_failure') === 'Yes',
      migMode: text(g, 'mig_mode', 'current_mig'),
      migPending: text(g, 'mig_mode', 'pending_mig'),
      computeMode: text(g, 'compute_mode'),
      pcieWidth: num(g, 'pci', 'pci_gpu_link_info', 'link_widths', 'current_link_width'),
      pcieWidthMax: num(g, 'pci', 'pci_gpu_link_info', 'link_widths', 'max_link_width'),
      processes,
    };
  });
  return {
    driverVersion: text(log, 'driver_version'),
    driverCudaVersion: text(log, 'cuda_version'),
    gpus,
  };
}
