// Driver, CUDA, libcuda and cuDNN versions: which CUDA a driver supports, and the numbering.
/** First Linux driver of each CUDA release (NVIDIA's CUDA Toolkit release notes, table 3). */
const MIN_DRIVER_FOR_CUDA: readonly [string, string][] = [
  ['13.1', '590.44.01'],
  ['13.0', '580.65.06'],
  ['12.9', '575.51.03'],
  ['12.8', '570.26'],
  ['12.6', '560.28.03'],
  ['12.5', '555.42.02'],
  ['12.4', '550.54.14'],
  ['12.3', '545.23.06'],
  ['12.2', '535.54.03'],
  ['12.1', '530.30.02'],
  ['12.0', '525.60.13'],
  ['11.8', '520.61.05'],
];

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function majorMinor(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

/** Highest CUDA release a driver version supports, from the table above. */
export function cudaForDriver(driverVersion: string): string | undefined {
  return MIN_DRIVER_FOR_CUDA.find(([, min]) => compareVersions(driverVersion, min) >= 0)?.[0];
}

export function minDriverFor(cuda: string): string | undefined {
  return MIN_DRIVER_FOR_CUDA.find(([release]) => release === majorMinor(cuda))?.[1];
}

/** `libcuda.so.580.95.05` among a folder's entries gives 580.95.05. */
export function libcudaVersionIn(entries: string[]): string | undefined {
  for (const entry of entries) {
    const m = /^libcuda\.so\.(\d+\.\d+(?:\.\d+)?)$/.exec(entry);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

/** cuDNN's integer version: 91900 is 9.19.0 (9.x: M*10000+m*100+p), 8902 is 8.9.2. */
export function cudnnVersion(code: number): string {
  if (code >= 10000)
    return `${Math.floor(code / 10000)}.${Math.floor((code % 10000) / 100)}.${code % 100}`;
  return `${Math.floor(code / 1000)}.${Math.floor((code % 1000) / 100)}.${code % 100}`;
}
