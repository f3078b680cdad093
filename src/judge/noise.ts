// What the report says of compare.noise_pct when this run's GPU model has no figures of its own:
// the figures of other models are not applied (issue 25: an H200's calibration on H100 runs
// suppressed none of their false alarms and hid a real +6-7 % re-tune).
import type { Config } from '../config/index.js';
import type { KernelgateResults } from '../results/index.js';

/** The run's GPU model as noise figures are keyed (data/gpus.json); undefined when unlisted. */
export function noiseModelOf(results: KernelgateResults): string | undefined {
  const sku = results.environment.gpu.sku;
  return sku === undefined || sku === 'unknown' ? undefined : sku;
}

/**
 * A note when compare.noise_pct holds figures for other GPU models and none for this run's, and
 * some case was judged against the stored baseline (paired verdicts use no noise figure).
 */
export function noiseNote(
  config: Config,
  results: KernelgateResults,
  storedCases: number,
): string | undefined {
  const models = Object.keys(config.compare.noisePct);
  const model = noiseModelOf(results);
  if (storedCases === 0 || models.length === 0) return undefined;
  if (model !== undefined && models.includes(model)) return undefined;
  const gpu = model ?? `${results.environment.gpu.name} (a GPU data/gpus.json does not list)`;
  return (
    `compare.noise_pct has figures for ${models.join(', ')}, none for this run's GPU ${gpu}: ` +
    `the ${storedCases} case(s) judged against the stored baseline are judged without a noise ` +
    "figure (one measured on another GPU model is never applied); run 'kernelgate calibrate' " +
    'on A/A runs of this model to give it its own.'
  );
}
