// compare.noise_pct of kernelgate.yml: run-to-run noise figures, keyed by the GPU model they were
// measured on (a model of data/gpus.json, the results' environment.gpu.sku). A figure measured on
// one model never applies to another: an H200's noise says nothing of an H100's (issue 25).
import { showValue } from '../results/index.js';
import { GPU_MODELS, gpuModel } from './gpus.js';

/** GPU model → (kernel | kernel/variant | kernel/variant/case) → noise in %. */
export type NoiseByModel = Record<string, Record<string, number>>;

/** The models a noise_pct block may be keyed by: data/gpus.json's, in its order. */
export function noiseModels(): string[] {
  return GPU_MODELS.map((m) => m.model);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What is wrong with compare.noise_pct's keys, as the user reads it (the field and the bad value):
 * an entry that is not under a GPU model (the flat form of before), or a key that is no model of
 * the GPU table. The values under a model are the schema's to check.
 */
export function noiseProblems(data: unknown): string[] {
  if (!isMapping(data) || !isMapping(data['compare'])) return [];
  const noise = data['compare']['noise_pct'];
  if (!isMapping(noise)) return [];
  const models = noiseModels();
  const known = `one of ${models.join(', ')}`;
  const problems: string[] = [];
  for (const [key, value] of Object.entries(noise)) {
    if (!isMapping(value)) {
      problems.push(
        `compare.noise_pct.${key} is not under a GPU model (got ${showValue(value)}): noise figures ` +
          'apply only to the GPU model they were measured on; write it under that model, e.g. ' +
          `compare.noise_pct.H100-SXM.${key} (the models: ${models.join(', ')})`,
      );
    } else if (!models.includes(key)) {
      const derived = gpuModel(key);
      const hint = derived === 'unknown' ? '' : `: the GPU named ${key} is the model ${derived}`;
      problems.push(
        `compare.noise_pct has a key that must be a GPU model of data/gpus.json (${known}) (got ${showValue(key)})${hint}`,
      );
    }
  }
  return problems;
}
