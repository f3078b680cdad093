// The one GPU table (data/gpus.json): both halves read it and name every GPU alike; GH200, H200
// NVL and L40S have their own models; the doctor's and the judge's peaks come from it.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PEAKS } from '../src/config/index.js';
import { gpuSku } from '../src/measure/index.js';
import { DATASHEET_PEAKS, GPU_MODELS, gpuModel, modelCapability } from '../src/config/index.js';

// Product names as drivers report them, with and without the PCI device id nvidia-smi gives.
const GPUS: [name: string, pci: string | undefined, model: string][] = [
  ['NVIDIA GH200 480GB', '234210DE', 'GH200'],
  ['NVIDIA GH200 480GB', undefined, 'GH200'],
  ['NVIDIA GH200 144G HBM3e', undefined, 'GH200'],
  ['NVIDIA H200 NVL', undefined, 'H200-NVL'],
  ['NVIDIA H200', '0x233510DE', 'H200'],
  ['NVIDIA H200', undefined, 'H200'],
  ['NVIDIA H100 NVL', '232110de', 'H100-NVL'],
  ['NVIDIA H100 PCIe', '233110DE', 'H100-PCIe'],
  ['NVIDIA H100 80GB HBM3', '233010DE', 'H100-SXM'],
  ['NVIDIA H100 80GB HBM3', undefined, 'H100-SXM'],
  ['NVIDIA H800', undefined, 'H800'],
  ['NVIDIA B200', undefined, 'B200'],
  ['NVIDIA L40S', '26B910DE', 'L40S'],
  ['NVIDIA L40S', undefined, 'L40S'],
  ['NVIDIA L40', undefined, 'L40'],
  ['NVIDIA L4', '27B810DE', 'L4'],
  ['NVIDIA A100-SXM4-80GB', '20B210DE', 'A100-SXM'],
  ['NVIDIA A100 80GB PCIe', undefined, 'A100-PCIe'],
  ['NVIDIA GeForce RTX 4090', '268410DE', 'unknown'],
  ['Tesla T4', undefined, 'unknown'],
];

describe('data/gpus.json', () => {
  it.each(GPUS)('%s (%s) is %s in TypeScript', (name, pci, model) => {
    expect(gpuModel(name, pci)).toBe(model);
    expect(gpuSku(name, pci)).toBe(model); // the doctor's lookup is the table's
  });

  it('the Python harness names every GPU as TypeScript does, from the same file', () => {
    const input = GPUS.map(([name, pci]) => `${name}\t${pci ?? ''}`).join('\n');
    const out = execFileSync('python3', ['python/kernelgate_harness/gpus.py'], { input, encoding: 'utf8' });
    expect(out.trimEnd().split('\n')).toEqual(GPUS.map(([, , model]) => model));
    expect(readFileSync('python/kernelgate_harness/gpus.py', 'utf8')).toContain(
      'os.path.join(os.path.dirname(__file__), "..", "..", "data", "gpus.json")',
    );
  });

  it('GH200 and H200 NVL are models of their own, with their own peaks', () => {
    expect(DATASHEET_PEAKS['GH200']?.tflops['bf16']).toBe(989.4);
    expect(DATASHEET_PEAKS['GH200']?.gbps).toBeUndefined(); // two memory configurations
    expect(DATASHEET_PEAKS['H200-NVL']).toEqual({
      tflops: { fp16: 835.5, bf16: 835.5, tf32: 417.5, fp8: 1670.5 },
      gbps: 4800,
    });
    expect(DATASHEET_PEAKS['H200']?.tflops['fp16']).toBe(989.4);
    expect(modelCapability('GH200')).toBe('9.0');
    expect(modelCapability('L40S')).toBe('8.9');
  });

  it("is the judge's default peak table", () => {
    expect(DEFAULT_PEAKS).toBe(DATASHEET_PEAKS);
    expect(DEFAULT_PEAKS['H100-SXM']).toEqual({
      tflops: { fp16: 989.4, bf16: 989.4, tf32: 494.7, fp8: 1978.9 },
      gbps: 3352,
    });
  });

  it('is well formed: unique models, lower-case 4-digit PCI ids used once, patterns, peaks', () => {
    const models = GPU_MODELS.map((m) => m.model);
    expect(new Set(models).size).toBe(models.length);
    const ids = GPU_MODELS.flatMap((m) => m.pci_device_ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of GPU_MODELS) {
      for (const id of m.pci_device_ids) expect(id, m.model).toMatch(/^[0-9a-f]{4}$/);
      expect(m.names.length, m.model).toBeGreaterThan(0);
      expect(m.compute_capability, m.model).toMatch(/^\d+\.\d+$/);
      for (const value of Object.values(m.peaks?.tflops ?? {})) expect(value).toBeGreaterThan(0);
      if (m.peaks) expect(m.source, `${m.model} has peaks and no source`).toBeTruthy();
    }
  });

  it('no other table of models or peaks is left in either half', () => {
    const sources = (dir: string, ext: RegExp) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => ext.test(f) && !f.includes('__pycache__'))
        .map((f) => join(dir, f));
    const offenders = [...sources('src', /\.ts$/), ...sources('kernels', /\.py$/)].filter(
      (file) =>
        file !== join('src', 'gpus.ts') &&
        /\b989\.4\b|'H200-NVL'|"H200-NVL"/.test(readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
