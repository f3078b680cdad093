// The action's entry: reads the inputs and the event, checks that the run may be trusted, judges
// the results and publishes the report. The one place that turns an outcome into core.setFailed.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { pullRequestEvent, saveContext, trendRuns, writeExports } from '../history/index.js';
import {
  type FullRun,
  mergedRun,
  shardedOptions,
  storeRun,
  withStoredBaseline,
} from '../pipeline/index.js';
import type { Config } from '../config/index.js';
import { escapeMarkdown } from '../lib/index.js';
import {
  describeGitHubError,
  TimeBudget,
  type GitHubClient,
  type PublishMode,
} from '../publish/index.js';
import { type KernelgateResults, loadResults } from '../results/index.js';
import { shardDone } from './shard.js';
import { defaultDeps, type RunDeps } from './deps.js';
import {
  approvedSha,
  branchesOf,
  readEvent,
  resolveMode,
  resolvePullRequest,
  runContext,
} from './event.js';
import { inWorkspace, loadConfigInput, readInputs, type ActionInputs } from './inputs.js';
import { profileWanted, withDeepChecks } from './deep.js';
import { acceptanceFor } from './accept.js';
import { configAnnotations, gateAnnotations } from './annotations.js';
import { measureOptions, prAncestry, storeOf } from './measure-options.js';
import { failureMessage, pipeline, publishWarning } from './pipeline.js';
import { checkTrust, type EventContext } from './trust.js';

/** What a step of the run knows: the deps, the inputs, the event and the config. */
interface Step {
  deps: RunDeps;
  inputs: ActionInputs;
  event: EventContext;
  mode: PublishMode;
  config: Config;
}

/** The results to judge, the baseline to judge them against, and the run to store after. */
interface Obtained {
  results: KernelgateResults;
  baseline: KernelgateResults | undefined;
  measured: FullRun | undefined;
}

/** Whether this event's code may run here; sets the trusted and approved-sha outputs. */
async function trusted(
  deps: RunDeps,
  inputs: ActionInputs,
  event: EventContext,
  client: GitHubClient | undefined,
) {
  const { core, env } = deps;
  const trust = await checkTrust(event, inputs.approvalLabel, {
    client,
    warning: core.warning,
    info: core.info,
  });
  if (!trust.trusted) {
    core.setOutput('trusted', 'false');
    core.setFailed(trust.message);
    return false;
  }
  core.info(`Trusted: ${trust.reason}`);
  core.setOutput('trusted', 'true');
  core.setOutput('approved-sha', approvedSha(event, env) ?? '');
  return true;
}

/** Whether this run stores its results as the branch's baseline (never for a pull request). */
function savesBaseline({ inputs, event, mode }: Step): boolean {
  return mode !== 'pr' && !pullRequestEvent(event) && inputs.saveBaseline !== 'false';
}

function fromMeasured(measured: FullRun, step: Step): Obtained {
  if (measured.baseline) step.deps.core.info(`Baseline: ${measured.baseline.path}`);
  return { results: measured.results, baseline: measured.baseline?.results, measured };
}

/** A merged matrix run: the shards' results joined, and the baseline of its branch. */
async function mergeShards(step: Step, merge: string): Promise<Obtained> {
  const { deps, inputs, event, mode } = step;
  const { core, env } = deps;
  const { branch, baseBranch } = branchesOf(event, env);
  const measured = await mergedRun({
    dirs: [inWorkspace(env, merge)],
    shards: inputs.shard.shards as number,
    cwd: env['GITHUB_WORKSPACE'] ?? process.cwd(),
    outDir: inWorkspace(env, join(inputs.reportDir, 'merge')),
    baselinePath: inputs.baseline === undefined ? undefined : inWorkspace(env, inputs.baseline),
    store: storeOf(inputs, env, core),
    baselineBranch: mode === 'pr' ? baseBranch : branch,
    // a pull request's stored baseline: the nearest stored ancestor of its base commit
    ancestry: prAncestry(inputs, mode, event, env),
    saveBranch: savesBaseline(step) ? branch : undefined,
    warning: core.warning,
    info: core.info,
  });
  return fromMeasured(measured, step);
}

/** Results an earlier step wrote: judged against the data branch, or the `baseline` input. */
async function readGiven(step: Step, resultsInput: string): Promise<Obtained> {
  const { deps, inputs, event, mode } = step;
  const { core, env } = deps;
  const results = loadResults(inWorkspace(env, resultsInput));
  if (inputs.baseline === undefined && inputs.history.kind === 'branch') {
    const { branch, baseBranch } = branchesOf(event, env);
    const measured = await withStoredBaseline(
      {
        mode,
        branch,
        baseBranch,
        store: storeOf(inputs, env, core),
        baselinePath: undefined,
        saveBaseline: savesBaseline(step),
        // a pull request's stored baseline: the nearest stored ancestor of its base commit
        ancestry: prAncestry(inputs, mode, event, env),
      },
      { results, resultsPath: inWorkspace(env, resultsInput) },
      [],
      core,
    );
    return fromMeasured(measured, step);
  }
  if (inputs.baseline === undefined) return { results, baseline: undefined, measured: undefined };
  const baselinePath = inWorkspace(env, inputs.baseline);
  if (statSync(baselinePath, { throwIfNoEntry: false })?.isFile()) {
    return { results, baseline: loadResults(baselinePath), measured: undefined };
  }
  core.warning(
    `Input 'baseline' names '${inputs.baseline}', which does not exist: every case is NEW. ` +
      `Baselines are written by trusted runs (push to the base branch, schedule); run one first.`,
  );
  return { results, baseline: undefined, measured: undefined };
}

/** The run's results: merged shards, measured here, or given by the `results` input. */
async function obtain(step: Step): Promise<Obtained> {
  const { deps, inputs, event, mode, config } = step;
  if (inputs.shard.merge !== undefined) return mergeShards(step, inputs.shard.merge);
  if (inputs.results !== undefined) return readGiven(step, inputs.results);
  const measured = await deps.measure(
    measureOptions(inputs, config, mode, event, deps.env, deps.core),
  );
  return fromMeasured(measured, step);
}

/** One shard of a matrix: measure its cases and write them; the merge judges. */
async function measureShard(step: Step, shard: NonNullable<ActionInputs['shard']['shard']>) {
  const { deps, inputs, event, mode, config } = step;
  const { core } = deps;
  const sharded = shardedOptions(
    measureOptions(inputs, config, mode, event, deps.env, core),
    shard,
    inputs.shard.balance,
    core,
  );
  const done = sharded.finish(await deps.measure(sharded.options));
  core.setOutput('results-path', done.resultsPath);
  core.info(shardDone(shard, done.results, done.resultsPath));
}

/** The pull request to comment on; a lookup that fails is kept, to be reported after publishing. */
async function pullRequestOf(step: Step, client: GitHubClient | undefined) {
  const { inputs, event, mode, deps } = step;
  if (mode !== 'pr') return { prNumber: undefined, lookupError: undefined };
  try {
    return { prNumber: await resolvePullRequest(inputs, event, client), lookupError: undefined };
  } catch (error) {
    const reportPath = join(inWorkspace(deps.env, inputs.reportDir), 'report.md');
    const lookupError = new Error(
      `Could not find the pull request to comment on: ${describeGitHubError(error).replace(/\.$/, '')}. ` +
        `The report is in the job summary and ${reportPath}.`,
      { cause: error },
    );
    return { prNumber: undefined, lookupError };
  }
}

/** Judges and publishes; the pipeline's outcome with a failed pull request lookup folded in. */
async function judgeAndPublish(step: Step, got: Obtained, client: GitHubClient | undefined) {
  const { deps, inputs, event, mode, config } = step;
  const { core, env } = deps;
  const { prNumber, lookupError } = await pullRequestOf(step, client);
  const context = {
    ...runContext(env, event, prNumber),
    ...(inputs.dashboardUrl !== undefined ? { dashboardUrl: inputs.dashboardUrl } : {}),
  };
  // The nightly's trends: the branch's stored runs on this GPU, before tonight's is added.
  const trends =
    mode === 'schedule'
      ? await trendRuns(
          storeOf(inputs, env, core),
          branchesOf(event, env).branch,
          got.results,
          core.warning,
        )
      : undefined;
  // A pull request's label kernelgate-accept (or, for a push, that of the pull request it merged).
  const acceptance = await acceptanceFor(
    event,
    mode,
    env['GITHUB_SHA'],
    config.policy.failOnSlower,
    {
      client,
      warning: core.warning,
      info: core.info,
    },
  );
  const server = (env['GITHUB_SERVER_URL'] ?? 'https://github.com').replace(/\/+$/, '');
  const judgeStartMs = Date.now();
  const published = await pipeline(
    {
      results: got.results,
      baseline: got.baseline,
      config,
      mode,
      prNumber,
      repository: event.repository,
      ...(trends ? { history: trends.runs, acceptedSince: trends.accepted } : {}),
      ...(acceptance ? { acceptance } : {}),
      repoUrl: `${server}/${event.repository}`,
      // Without the pull request there is nothing to comment on: files, summary and outputs only.
      inputs: lookupError ? { ...inputs, comment: false } : inputs,
      context,
    },
    { ...deps, client },
  );
  core.info(
    `kernelgate: judged and published in ${((Date.now() - judgeStartMs) / 1000).toFixed(2)} s`,
  );
  return {
    outcome: { ...published, publishError: published.publishError ?? lookupError },
    context,
  };
}

/** After the verdict: the exports, the baseline (a passing run, or any with save-baseline: always), the exit. */
async function afterGate(
  step: Step,
  got: Obtained,
  { outcome, context }: Awaited<ReturnType<typeof judgeAndPublish>>,
) {
  const { deps, inputs, event, config } = step;
  const { core, env } = deps;
  // The gate's lines about kernel variants at their place: reasons as errors, warnings in place.
  const annotations = gateAnnotations(outcome.gate, got.results, config, workspaceOf(env));
  for (const annotation of annotations.errors) core.annotate(annotation);
  for (const warning of annotations.warnings) {
    if (typeof warning === 'string') core.warning(warning);
    else core.annotate(warning);
  }
  // Bencher and github-action-benchmark JSON next to the report; a failure here is a warning.
  await writeExports(got.results, inWorkspace(env, inputs.reportDir), deps.fs, core.setOutput, {
    confidence: config.compare.confidence,
  }).catch((error: unknown) =>
    core.warning(`kernelgate: the exports were not written: ${(error as Error).message}`),
  );
  // After the gate: a baseline is what later pull requests are compared with (known good).
  // The gate's verdict and whether the run was incomplete (never stored, whatever the policy).
  const stored =
    got.measured === undefined
      ? {}
      : await storeRun(
          got.measured,
          outcome.gate,
          inputs.saveBaseline === 'always' ? 'always' : 'passing',
          saveContext(
            config,
            event.name,
            context.runUrl,
            outcome.comparison,
            outcome.gate.accepted,
          ),
        );
  if (stored.saved) core.info(`Stored as the newest baseline: ${stored.saved}`);
  if (stored.note) core.warning(stored.note);
  core.setOutput('stored', stored.saved ?? '');
  core.setOutput('store-error', stored.failed ? (stored.note ?? '') : '');
  // A run that was to be stored and was not: in the summary too, where a warning is not missed.
  if (stored.failed) await core.appendSummary(unstoredSummary(stored.note ?? ''));
  const warning = publishWarning(outcome, inputs.failOnPublishError);
  if (warning !== undefined) core.warning(warning);
  const failure = failureMessage(outcome, inputs.failOnPublishError);
  if (failure !== undefined) core.setFailed(failure);
}

/** The job summary's section for a run the store refused: the store's message, line by line. */
export function unstoredSummary(message: string): string {
  const quoted = message
    .split('\n')
    .map((line) => `> ${escapeMarkdown(line)}`)
    .join('<br>\n');
  return (
    `\n### ⚠️ kernelgate: this run was not stored in the history\n\n${quoted}\n\n` +
    'The verdict above stands. Later runs are compared with the newest run that was stored; ' +
    'this one is missing from the trend.\n'
  );
}

function workspaceOf(env: Record<string, string | undefined>): string {
  return env['GITHUB_WORKSPACE'] ?? process.cwd();
}

export async function run(deps: RunDeps = defaultDeps()): Promise<void> {
  const { core, env } = deps;
  try {
    const inputs = readInputs(core.getInput);
    const event = readEvent(env);
    // One budget for all of publishing, started once the verdict is known (below).
    const budget = new TimeBudget(inputs.publishTimeoutMs, () => Date.now());
    const client = inputs.token
      ? deps.createClient(inputs.token, { requestTimeoutMs: inputs.requestTimeoutMs, budget })
      : undefined;
    if (!(await trusted(deps, inputs, event, client)) || inputs.trustOnly) return;
    const config = loadConfigInput(inWorkspace(env, inputs.config));
    const step: Step = { deps, inputs, event, mode: resolveMode(inputs.mode, event), config };
    if (inputs.shard.shard !== undefined) return await measureShard(step, inputs.shard.shard);
    const profile = profileWanted(inputs, event, step.mode);
    const got = await withDeepChecks(await obtain(step), inputs, config, deps, profile);
    budget.start();
    await afterGate(step, got, await judgeAndPublish(step, got, client));
  } catch (error) {
    // A config error's problems at their fields, then the one failure message with all of them.
    for (const annotation of configAnnotations(error, workspaceOf(env))) core.annotate(annotation);
    core.setFailed(error instanceof Error ? error.message : String(error));
  }
}
