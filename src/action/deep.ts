// The action's `deep` input (e.g. `deep: sanitizer,ncu` on the nightly's schedule): after this
// step measured, the deep checks (src/deep) run on the same runner and their section joins the
// results before they are judged.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { type DeepOptions, type DeepOutcome, runDeep } from '../deep/index.js';
import { actionsExec } from '../lib/index.js';
import { type FullRun, slowerDeepTargets } from '../pipeline/index.js';
import type { KernelgateResults } from '../results/index.js';
import type { RunDeps } from './deps.js';
import { type ActionInputs, inWorkspace } from './inputs.js';
import { ACTION_ROOT } from './measure-options.js';

export type DeepRunner = (config: Config, options: DeepOptions) => Promise<DeepOutcome>;

export const defaultDeep: DeepRunner = (config, options) => runDeep(config, options, actionsExec());

interface Got {
  results: KernelgateResults;
  baseline: KernelgateResults | undefined;
  measured: FullRun | undefined;
}

/** The results with the deep section added (and written back), or as they were. */
export async function withDeepChecks<T extends Got>(
  got: T,
  inputs: ActionInputs,
  config: Config,
  deps: RunDeps,
): Promise<T> {
  if (inputs.deep.length === 0) return got;
  const { core, env } = deps;
  if (got.measured === undefined) {
    core.warning(
      `Input 'deep' (${inputs.deep.join(', ')}) runs where this step measures: not with 'results' or 'merge'. No deep check ran.`,
    );
    return got;
  }
  const outDir = inWorkspace(env, join(inputs.reportDir, 'deep'));
  mkdirSync(outDir, { recursive: true });
  // The CUDA variants' libraries this run built, for the harness under the tools.
  const buildsPath = join(outDir, 'builds.json');
  writeFileSync(buildsPath, `${JSON.stringify({ builds: got.results.builds ?? [] }, null, 1)}\n`);
  core.info(`kernelgate deep: ${inputs.deep.join(', ')}; the tools' output under ${outDir}`);
  const t0 = Date.now();
  const outcome = await (deps.deep ?? defaultDeep)(config, {
    workspace: env['GITHUB_WORKSPACE'] ?? process.cwd(),
    harnessRoot: ACTION_ROOT,
    python: config.harness.python,
    kernelsDir: config.kernelsDir,
    outDir,
    checks: inputs.deep,
    ...(inputs.kernels.length > 0 ? { only: inputs.kernels } : {}),
    buildsPath,
    ...(inputs.deep.includes('ncu-slower')
      ? { slower: slowerDeepTargets(got.results, got.baseline, config) }
      : {}),
    ...(got.results.environment.gpu.compute_capability
      ? { computeCapability: got.results.environment.gpu.compute_capability }
      : {}),
  });
  for (const d of outcome.diagnostics) {
    core.warning(`kernelgate deep: ${d.message}${d.fix ? ` (fix: ${d.fix})` : ''}`);
  }
  core.info(`kernelgate deep: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const results: KernelgateResults = {
    ...got.results,
    diagnostics: [...got.results.diagnostics, ...outcome.diagnostics],
    deep: { ...got.results.deep, ...outcome.deep },
  };
  writeFileSync(got.measured.resultsPath, `${JSON.stringify(results, null, 1)}\n`);
  return { ...got, results, measured: { ...got.measured, results } };
}
