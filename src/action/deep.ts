// The action's `deep` input (e.g. `deep: sanitizer,ncu` on the nightly's schedule) and its profile
// comparison (input `profile`: Nsight Compute over base and head of each moved variant, on by
// default in the nightly, on a pull request by the label kernelgate-profile): after this step
// measured, the deep checks (src/deep) run on the same runner and their section joins the results
// before they are judged.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { type DeepOptions, type DeepOutcome, runDeep } from '../deep/index.js';
import { actionsExec } from '../lib/index.js';
import { type FullRun, ncuCompareOptions, slowerDeepTargets } from '../pipeline/index.js';
import type { KernelgateResults } from '../results/index.js';
import type { RunDeps } from './deps.js';
import { type ActionInputs, inWorkspace, PROFILE_LABEL } from './inputs.js';
import type { EventContext } from './trust.js';
import { ACTION_ROOT } from './measure-options.js';

export type DeepRunner = (config: Config, options: DeepOptions) => Promise<DeepOutcome>;

export const defaultDeep: DeepRunner = (config, options) => runDeep(config, options, actionsExec());

interface Got {
  results: KernelgateResults;
  baseline: KernelgateResults | undefined;
  measured: FullRun | undefined;
}

/**
 * Whether this run compares Nsight Compute profiles of base and head (ncu-compare) for its moved
 * variants: input 'profile' true, or auto on the nightly and on a pull request labelled
 * PROFILE_LABEL.
 */
export function profileWanted(inputs: ActionInputs, event: EventContext, mode: string): boolean {
  if (inputs.profile !== 'auto') return inputs.profile === 'true';
  if (mode === 'schedule') return true;
  const labels = (event.payload as { pull_request?: { labels?: unknown } } | undefined)
    ?.pull_request?.labels;
  return (
    Array.isArray(labels) &&
    labels.some((l) => (l as { name?: unknown } | null)?.name === PROFILE_LABEL)
  );
}

const NONE: DeepOutcome = { deep: {}, diagnostics: [] };

/** ncu-compare over the moved variants, in its own time box; nothing when nothing moved. */
async function compareProfiles(
  got: Got,
  common: Omit<DeepOptions, 'checks'>,
  inputs: ActionInputs,
  config: Config,
  deps: RunDeps,
): Promise<DeepOutcome> {
  const targets = ncuCompareOptions(got.results, got.baseline, config, common.outDir);
  const moved = targets.compare?.length ?? 0;
  if (moved === 0) {
    deps.core.info('kernelgate profile: no variant moved: nothing to compare');
    return NONE;
  }
  deps.core.info(
    `kernelgate profile: Nsight Compute on base and head of ${moved} moved variant(s), within ${inputs.profileTimeBoxS} s`,
  );
  return (deps.deep ?? defaultDeep)(config, {
    ...common,
    checks: ['ncu-compare'],
    ...targets,
    deadline: Date.now() / 1000 + inputs.profileTimeBoxS,
    timeBoxS: inputs.profileTimeBoxS,
  });
}

/** The results with the deep section added (and written back), or as they were. */
export async function withDeepChecks<T extends Got>(
  got: T,
  inputs: ActionInputs,
  config: Config,
  deps: RunDeps,
  profile = false,
): Promise<T> {
  if (inputs.deep.length === 0 && !profile) return got;
  const { core, env } = deps;
  // Results an earlier step wrote (`results`, judged against the data branch) come with a
  // `measured` record too; this step measured nothing, and the file is the user's: never rewritten.
  if (got.measured === undefined || inputs.results !== undefined) {
    if (inputs.deep.length) {
      core.warning(
        `Input 'deep' (${inputs.deep.join(', ')}) runs where this step measures: not with 'results' or 'merge'. No deep check ran.`,
      );
    }
    if (profile) {
      core.info(
        'kernelgate profile: the Nsight Compute comparison runs where this step measures: none with results or merge',
      );
    }
    return got;
  }
  const outDir = inWorkspace(env, join(inputs.reportDir, 'deep'));
  mkdirSync(outDir, { recursive: true });
  // The CUDA variants' libraries this run built, for the harness under the tools.
  const buildsPath = join(outDir, 'builds.json');
  writeFileSync(buildsPath, `${JSON.stringify({ builds: got.results.builds ?? [] }, null, 1)}\n`);
  const common: Omit<DeepOptions, 'checks'> = {
    workspace: env['GITHUB_WORKSPACE'] ?? process.cwd(),
    harnessRoot: ACTION_ROOT,
    python: config.harness.python,
    kernelsDir: config.kernelsDir,
    outDir,
    ...(inputs.kernels.length > 0 ? { only: inputs.kernels } : {}),
    buildsPath,
    ...(got.results.environment.gpu.compute_capability
      ? { computeCapability: got.results.environment.gpu.compute_capability }
      : {}),
  };
  const t0 = Date.now();
  let outcome = NONE;
  if (inputs.deep.length) {
    core.info(`kernelgate deep: ${inputs.deep.join(', ')}; the tools' output under ${outDir}`);
    outcome = await (deps.deep ?? defaultDeep)(config, {
      ...common,
      checks: inputs.deep,
      ...(inputs.deep.includes('ncu-slower')
        ? { slower: slowerDeepTargets(got.results, got.baseline, config) }
        : {}),
    });
  }
  const compared = profile ? await compareProfiles(got, common, inputs, config, deps) : NONE;
  const diagnostics = [...outcome.diagnostics, ...compared.diagnostics];
  for (const d of diagnostics) {
    core.warning(`kernelgate deep: ${d.message}${d.fix ? ` (fix: ${d.fix})` : ''}`);
  }
  core.info(`kernelgate deep: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const results: KernelgateResults = {
    ...got.results,
    diagnostics: [...got.results.diagnostics, ...diagnostics],
    deep: { ...got.results.deep, ...outcome.deep, ...compared.deep },
  };
  writeFileSync(got.measured.resultsPath, `${JSON.stringify(results, null, 1)}\n`);
  return { ...got, results, measured: { ...got.measured, results } };
}
