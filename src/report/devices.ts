// Which GPU measured each case, when a run used several (the harness's --gpus lanes, or merged
// shards of several runners): a `GPU` column in the case tables and a row per GPU in the
// environment. A run on one GPU shows neither.
import type { CaseResult, Device, KernelgateResults } from '../results/index.js';
import { type Cell, table } from '../lib/index.js';

function deviceKey(d: Device): string {
  return JSON.stringify([d.host ?? '', d.uuid ?? '', d.index ?? '', d.name]);
}

/** The distinct GPUs that measured the run's cases, in the order they first measure one. */
export function devicesOf(results: KernelgateResults): Device[] {
  const seen = new Map<string, Device>();
  for (const c of results.cases) {
    if (c.device && !seen.has(deviceKey(c.device))) seen.set(deviceKey(c.device), c.device);
  }
  return [...seen.values()];
}

/** Whether the run's cases were measured on more than one GPU. */
export function severalDevices(results: KernelgateResults): boolean {
  return devicesOf(results).length > 1;
}

/** A GPU as the tables name it: its index on its host (and the host when shards ran on several). */
export function deviceLabel(d: Device | undefined, hosts: boolean): string {
  if (!d) return '';
  const which = d.index !== undefined ? `GPU ${d.index}` : d.name;
  return hosts && d.host ? `${d.host} ${which}` : which;
}

/** Whether the devices span more than one host (merged shards). */
export function manyHosts(results: KernelgateResults): boolean {
  return new Set(devicesOf(results).map((d) => d.host ?? '')).size > 1;
}

/** The `GPU` cell of a case (a plain cell: the table escapes it). */
export function deviceCell(current: CaseResult | undefined, hosts: boolean): Cell {
  return deviceLabel(current?.device, hosts);
}

/** The environment's table of GPUs (one row each: its facts and how many case records it measured). */
export function devicesTable(results: KernelgateResults): string {
  const devices = devicesOf(results);
  if (devices.length < 2) return '';
  const hosts = manyHosts(results);
  const counts = new Map<string, number>();
  for (const c of results.cases) {
    if (c.device) counts.set(deviceKey(c.device), (counts.get(deviceKey(c.device)) ?? 0) + 1);
  }
  const rows = devices.map((d): Cell[] => [
    deviceLabel(d, hosts),
    d.name,
    d.sku ?? '',
    d.uuid ?? '',
    d.pci_bus_id ?? '',
    String(counts.get(deviceKey(d)) ?? 0),
  ]);
  return table(['GPU', 'name', 'SKU', 'UUID', 'PCI bus', 'case records'], rows, [
    'l',
    'l',
    'l',
    'l',
    'l',
    'r',
  ]);
}
