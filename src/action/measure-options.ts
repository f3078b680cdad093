// What the action hands the measuring run: options from the inputs, the baseline store, the
// paired base revision.
import * as actionsCore from '@actions/core';
import { join } from 'node:path';
import { type Config, unknownSelection } from '../config/index.js';
import { actionStore, pullRequestEvent } from '../history/index.js';
import {
  type AncestryCheck,
  DEFAULT_BISECT_TIME_BOX_S,
  type FullRunOptions,
} from '../pipeline/index.js';
import type { PublishMode } from '../publish/index.js';
import type { ActionCore } from './deps.js';
import { branchesOf, field } from './event.js';
import { type ActionInputs, inWorkspace } from './inputs.js';
import type { EventContext } from './trust.js';
import { actionsExec, type Exec, packageRoot } from '../lib/index.js';
import { InputError } from '../results/index.js';

/** The action's own checkout (the folder of its package.json): it holds the harness. */
export const ACTION_ROOT = packageRoot();

export function measureOptions(
  inputs: ActionInputs,
  config: Config,
  mode: PublishMode,
  event: EventContext,
  env: Record<string, string | undefined>,
  core: ActionCore,
): FullRunOptions {
  const workspace = env['GITHUB_WORKSPACE'] ?? process.cwd();
  const unknown = unknownSelection(config, inputs.kernels, "the 'kernels' input");
  if (unknown !== undefined) throw new InputError(unknown);
  const { branch, baseBranch } = branchesOf(event, env);
  if (mode === 'pr' && (inputs.saveBaseline === 'true' || inputs.saveBaseline === 'always')) {
    core.warning(
      `Input 'save-baseline' is ${inputs.saveBaseline}, but pull request runs never write baselines (a PR's code is not yet trusted to define what 'normal' is). Nothing was stored.`,
    );
  }
  const pairedBase = pairedBaseOf(
    inputs.basePath === undefined
      ? inputs
      : { ...inputs, basePath: inWorkspace(env, inputs.basePath) },
    config,
    mode,
    event,
    core,
  );
  return {
    config,
    workspace,
    harnessRoot: ACTION_ROOT,
    ...(pairedBase !== undefined ? { pairedBase } : {}),
    outDir: inWorkspace(env, join(inputs.reportDir, 'measure')),
    ...(inputs.kernels.length > 0 ? { only: inputs.kernels } : {}),
    run: {
      ...(env['GITHUB_RUN_ID'] ? { id: env['GITHUB_RUN_ID'] } : {}),
      ...(env['GITHUB_SHA'] ? { git_sha: env['GITHUB_SHA'] } : {}),
      ...(env['GITHUB_REF'] ? { git_ref: env['GITHUB_REF'] } : {}),
      command: `kernelgate action (${event.name})`,
    },
    mode,
    branch,
    baseBranch,
    store: storeOf(inputs, env, core),
    baselinePath: inputs.baseline === undefined ? undefined : inWorkspace(env, inputs.baseline),
    saveBaseline: mode !== 'pr' && !pullRequestEvent(event) && inputs.saveBaseline !== 'false',
    // The nightly is timed beside the last good run, as a pull request is beside its base.
    pairedWithLastGood:
      mode === 'schedule' && inputs.paired !== 'false' && config.compare.paired.enabled,
    // and a variant it finds SLOWER is traced to its first bad commit, time-boxed
    bisectTimeBoxS: DEFAULT_BISECT_TIME_BOX_S,
    gitTimeoutS: inputs.gitTimeoutMs / 1000,
    ...prBaseSha(mode, event),
  };
}

/** A pull request's base commit: its nearest stored ancestor is the stored baseline. */
function prBaseSha(mode: PublishMode, event: EventContext): { baseSha?: string } {
  const sha = field(event.payload, 'pull_request', 'base', 'sha');
  return mode === 'pr' && typeof sha === 'string' ? { baseSha: sha } : {};
}

/**
 * A pull request's stored baseline by commit ancestry where the action does not measure (a results
 * file an earlier job wrote, the merged matrix run): its base commit and the workspace's checkout,
 * each git command under the 'git-timeout' deadline (src/pipeline/pr-baseline.ts). Undefined for
 * any other run, or an event that names no base commit (then the newest stored run, as before).
 */
export function prAncestry(
  inputs: ActionInputs,
  mode: PublishMode,
  event: EventContext,
  env: Record<string, string | undefined>,
  exec: Exec = actionsExec(),
): AncestryCheck | undefined {
  const { baseSha } = prBaseSha(mode, event);
  if (baseSha === undefined) return undefined;
  const workspace = env['GITHUB_WORKSPACE'] ?? process.cwd();
  return { baseSha, workspace, exec, gitTimeoutS: inputs.gitTimeoutMs / 1000 };
}

/** baseline-dir, or the data branch (history: branch): src/history/action.ts. */
export function storeOf(
  inputs: ActionInputs,
  env: Record<string, string | undefined>,
  core: ActionCore,
): FullRunOptions['store'] {
  return actionStore(inputs, env, (path) => inWorkspace(env, path), {
    warning: core.warning,
    info: core.info,
    setSecret: (secret) => actionsCore.setSecret(secret),
  });
}

/**
 * The base commit a pull request run times beside its head (paired A/B), from the event payload;
 * undefined when pairing is off or the base is unknown (then the stored baseline judges alone).
 */
export function pairedBaseOf(
  inputs: ActionInputs,
  config: Config,
  mode: PublishMode,
  event: EventContext,
  core: Pick<ActionCore, 'warning'>,
): FullRunOptions['pairedBase'] {
  if (mode !== 'pr' || inputs.paired === 'false') return undefined;
  if (!config.compare.paired.enabled) {
    if (inputs.paired === 'true') {
      core.warning(
        "Input 'paired' is true, but kernelgate.yml sets compare.paired.enabled: false: the pull request is judged against the stored baseline.",
      );
    }
    return undefined;
  }
  const sha = field(event.payload, 'pull_request', 'base', 'sha');
  const ref = field(event.payload, 'pull_request', 'base', 'ref');
  if (typeof sha !== 'string') {
    if (inputs.paired === 'true') {
      core.warning(
        `Input 'paired' is true, but the ${event.name} event names no pull_request.base.sha: the pull request is judged against the stored baseline.`,
      );
    }
    return undefined;
  }
  return {
    sha,
    ...(typeof ref === 'string' ? { ref } : {}),
    ...(inputs.basePath !== undefined ? { root: inputs.basePath } : {}),
  };
}
