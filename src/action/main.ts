// The action's entry: reads the inputs and the event, checks that the run may be trusted, judges
// the results and publishes the report. The one place that turns an outcome into core.setFailed.
import { readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import * as actionsCore from '@actions/core';
import { loadConfig, type Config } from '../config/index.js';
import type { Comparison } from '../judge/index.js';
import type { GateResult } from '../judge/index.js';
import { judge } from '../pipeline/index.js';
import {
  createGitHubClient,
  DEFAULT_PUBLISH_BUDGET_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  describeGitHubError,
  TimeBudget,
  type GitHubClient,
} from '../publish/index.js';
import {
  checkCommentKey,
  COUNT_NAMES,
  DEFAULT_COMMENT_KEY,
  publish,
  type OutputSink,
  type PublishDeps,
  type PublishMode,
  type PublishOutcome,
} from '../publish/index.js';
import type { KernelgateResults } from '../results/index.js';
import { loadResults } from '../results/index.js';
import { checkTrust, DEFAULT_APPROVAL_LABEL, type EventContext } from './trust.js';
import { actionsExec, packageRoot } from '../lib/index.js';
import { writeExports } from '../history/index.js';
import {
  actionStore,
  pullRequestEvent,
  readHistoryInputs,
  saveContext,
  trendRuns,
  type HistoryInputs,
} from '../history/index.js';
import { fullRun, storeRun, withStoredBaseline, type FullRun, type FullRunOptions } from '../pipeline/index.js';
import {
  mergedRun,
  readShardInputs,
  shardDone,
  shardedOptions,
  type ShardInputs,
} from '../shard/index.js';

/** The action's own checkout (the folder of its package.json): it holds the harness. */
export const ACTION_ROOT = packageRoot();

export const MODES = ['auto', 'pr', 'push', 'schedule'] as const;
export type Mode = (typeof MODES)[number];

export const SAVE_BASELINE = ['auto', 'true', 'false', 'always'] as const;
export const PAIRED = ['auto', 'true', 'false'] as const;

export interface ActionInputs {
  /** Results the harness already wrote; undefined: this step measures (doctor → build → harness). */
  results: string | undefined;
  /** Kernels to measure (all when empty). */
  kernels: string[];
  /** The baseline store: trusted runs' results per branch and GPU SKU. */
  baselineDir: string;
  /** Where baselines and history are kept: baseline-dir, or a data branch (history: branch). */
  history: HistoryInputs;
  /**
   * auto/true: push and schedule runs whose gate passed store their results as the branch's newest
   * baseline; always: failing runs too; false: never.
   */
  saveBaseline: (typeof SAVE_BASELINE)[number];
  /** auto/true: a pull request run times its base revision side by side (paired A/B); false: never. */
  paired: (typeof PAIRED)[number];
  /** a checkout of the base revision made by an earlier step; undefined: a git worktree is made */
  basePath: string | undefined;
  baseline: string | undefined;
  config: string;
  token: string | undefined;
  mode: Mode;
  comment: boolean;
  commentKey: string;
  reportDir: string;
  approvalLabel: string;
  prNumber: number | undefined;
  trustOnly: boolean;
  /** Each GitHub request's deadline, connecting included ('request-timeout', seconds). */
  requestTimeoutMs: number;
  /** All of publishing: finding the PR, the comment or issue, retries and waits ('publish-timeout'). */
  publishTimeoutMs: number;
  /** true: a publishing failure fails the step; false (default): a warning, the verdict decides. */
  failOnPublishError: boolean;
  /** shard, shard-balance, merge, shards: a run split over a matrix (src/shard, docs/scaling.md) */
  shard: ShardInputs;
}

/** The deadlines a client is made with. */
export interface ClientLimits {
  requestTimeoutMs: number;
  /** Started when publishing starts; the trust check before it has only per-request deadlines. */
  budget: TimeBudget;
}

/** The parts of @actions/core the action uses; tests pass their own. */
export interface ActionCore {
  getInput(name: string): string;
  setOutput(name: string, value: string): void;
  setFailed(message: string): void;
  warning(message: string): void;
  info(message: string): void;
  appendSummary(markdown: string): Promise<void>;
}

export interface RunDeps {
  core: ActionCore;
  env: Record<string, string | undefined>;
  createClient(token: string, limits: ClientLimits): GitHubClient;
  fs: PublishDeps['fs'];
  /** doctor → build → harness on this runner, when no results input is given */
  measure(options: FullRunOptions): Promise<FullRun>;
}

export function defaultDeps(): RunDeps {
  const env = process.env;
  return {
    env,
    core: {
      getInput: (name) => actionsCore.getInput(name),
      setOutput: (name, value) => actionsCore.setOutput(name, value),
      setFailed: (message) => actionsCore.setFailed(message),
      warning: (message) => actionsCore.warning(message),
      info: (message) => actionsCore.info(message),
      appendSummary: async (markdown) => {
        if (!env['GITHUB_STEP_SUMMARY']) {
          actionsCore.info(
            'GITHUB_STEP_SUMMARY is not set (not on a runner): no job summary written.',
          );
          return;
        }
        await actionsCore.summary.addRaw(markdown, true).write();
      },
    },
    createClient: (token, limits) =>
      createGitHubClient({
        token,
        apiUrl: env['GITHUB_API_URL'],
        requestTimeoutMs: limits.requestTimeoutMs,
        budget: limits.budget,
        sleep: (ms) => new Promise((done) => setTimeout(done, ms)),
        nowMs: () => Date.now(),
        log: (message) => actionsCore.info(message),
      }),
    fs: { mkdir, writeFile: (path, data) => writeFile(path, data, 'utf8') },
    measure: (options) =>
      fullRun(options, {
        exec: actionsExec(),
        log: {
          info: (line) => actionsCore.info(line),
          startGroup: (name) => actionsCore.startGroup(name),
          endGroup: () => actionsCore.endGroup(),
          warning: (message) => actionsCore.warning(message),
        },
      }),
  };
}

/** Typed input getters: every error quotes the input's name and the bad value. */
export function readInputs(getInput: (name: string) => string): ActionInputs {
  const text = (name: string): string | undefined => {
    const value = getInput(name).trim();
    return value === '' ? undefined : value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (/^(true|True|TRUE)$/.test(value)) return true;
    if (/^(false|False|FALSE)$/.test(value)) return false;
    throw new Error(`Input '${name}' must be true or false, got '${value}'.`);
  };
  const results = text('results');
  const trustOnly = bool('trust-only', false);
  const kernels = (text('kernels') ?? '').split(/[\s,]+/).filter((name) => name !== '');
  const badKernel = kernels.find((name) => !/^[a-z0-9_]+$/.test(name));
  if (badKernel !== undefined) {
    throw new Error(
      `Input 'kernels' must list kernel folder names (a-z, 0-9, _), separated by commas; got '${badKernel}'.`,
    );
  }
  const saveBaseline = text('save-baseline') ?? 'auto';
  if (!(SAVE_BASELINE as readonly string[]).includes(saveBaseline)) {
    throw new Error(
      `Input 'save-baseline' must be one of ${SAVE_BASELINE.join(', ')}; got '${saveBaseline}'.`,
    );
  }
  const paired = text('paired') ?? 'auto';
  if (!(PAIRED as readonly string[]).includes(paired)) {
    throw new Error(`Input 'paired' must be one of ${PAIRED.join(', ')}; got '${paired}'.`);
  }
  const mode = text('mode') ?? 'auto';
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new Error(`Input 'mode' must be one of ${MODES.join(', ')}; got '${mode}'.`);
  }
  const secondsInput = (name: string, fallbackMs: number): number => {
    const value = text(name);
    if (value === undefined) return fallbackMs;
    if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) {
      throw new Error(
        `Input '${name}' must be a number of seconds greater than 0, got '${value}'.`,
      );
    }
    return Math.round(Number(value) * 1000);
  };
  const prText = text('pr-number');
  if (prText !== undefined && !/^[1-9]\d{0,9}$/.test(prText)) {
    throw new Error(
      `Input 'pr-number' must be a pull request number (a positive whole number), got '${prText}'.`,
    );
  }
  return {
    results,
    kernels,
    baselineDir: text('baseline-dir') ?? '.kernelgate/baselines',
    history: readHistoryInputs(getInput),
    saveBaseline: saveBaseline as ActionInputs['saveBaseline'],
    paired: paired as ActionInputs['paired'],
    basePath: text('base-path'),
    baseline: text('baseline'),
    config: text('config') ?? '.',
    token: text('token'),
    mode: mode as Mode,
    comment: bool('comment', true),
    commentKey: checkCommentKey(text('comment-key') ?? DEFAULT_COMMENT_KEY),
    reportDir: text('report-dir') ?? '.kernelgate/report',
    approvalLabel: text('approval-label') ?? DEFAULT_APPROVAL_LABEL,
    prNumber: prText === undefined ? undefined : Number(prText),
    trustOnly,
    requestTimeoutMs: secondsInput('request-timeout', DEFAULT_REQUEST_TIMEOUT_MS),
    publishTimeoutMs: secondsInput('publish-timeout', DEFAULT_PUBLISH_BUDGET_MS),
    failOnPublishError: bool('fail-on-publish-error', false),
    shard: readShardInputs(getInput),
  };
}

export function readEvent(env: Record<string, string | undefined>): EventContext {
  const name = env['GITHUB_EVENT_NAME'];
  const repository = env['GITHUB_REPOSITORY'];
  if (!name)
    throw new Error(
      'GITHUB_EVENT_NAME is not set: kernelgate runs as a step of a GitHub Actions job.',
    );
  if (!repository)
    throw new Error(
      'GITHUB_REPOSITORY is not set: kernelgate runs as a step of a GitHub Actions job.',
    );
  const path = env['GITHUB_EVENT_PATH'];
  let payload: unknown = {};
  if (path) {
    try {
      payload = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      throw new Error(
        `GITHUB_EVENT_PATH '${path}': cannot read the event payload: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  return { name, payload, repository };
}

function field(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

/** auto: pull requests (and the workflow_run that publishes for one) comment; schedule reports nightly. */
export function resolveMode(mode: Mode, event: EventContext): PublishMode {
  if (mode !== 'auto') return mode;
  switch (event.name) {
    case 'pull_request':
    case 'pull_request_target':
      return 'pr';
    case 'workflow_run': {
      const triggeredBy = field(event.payload, 'workflow_run', 'event');
      return triggeredBy === 'pull_request' || triggeredBy === 'pull_request_target'
        ? 'pr'
        : 'push';
    }
    case 'schedule':
      return 'schedule';
    default:
      return 'push';
  }
}

/**
 * The pull request to comment on. In workflow_run, `pull_requests` is empty for forks, so the PR
 * is found from the head branch and SHA of the run that measured it.
 */
export async function resolvePullRequest(
  inputs: ActionInputs,
  event: EventContext,
  client: GitHubClient | undefined,
): Promise<number | undefined> {
  if (inputs.prNumber !== undefined) return inputs.prNumber;
  const direct = field(event.payload, 'pull_request', 'number');
  if (typeof direct === 'number') return direct;
  if (event.name !== 'workflow_run') return undefined;
  const listed = field(event.payload, 'workflow_run', 'pull_requests', 0, 'number');
  if (typeof listed === 'number') return listed;
  const headSha = field(event.payload, 'workflow_run', 'head_sha');
  const headBranch = field(event.payload, 'workflow_run', 'head_branch');
  const headOwner = field(event.payload, 'workflow_run', 'head_repository', 'owner', 'login');
  if (
    !client ||
    typeof headSha !== 'string' ||
    typeof headBranch !== 'string' ||
    typeof headOwner !== 'string'
  ) {
    return undefined;
  }
  const [owner = '', repo = ''] = event.repository.split('/');
  const pulls = await client.paginate(client.rest.pulls.list, {
    owner,
    repo,
    state: 'open',
    head: `${headOwner}:${headBranch}`,
    per_page: 100,
  });
  return pulls.find((pr) => pr.head.sha === headSha)?.number;
}

function runContext(
  env: Record<string, string | undefined>,
  event: EventContext,
  prNumber: number | undefined,
): PipelineInput['context'] {
  const title = field(event.payload, 'pull_request', 'title');
  const server = env['GITHUB_SERVER_URL'] ?? 'https://github.com';
  const runId = env['GITHUB_RUN_ID'];
  return {
    ...(prNumber !== undefined ? { prNumber } : {}),
    ...(typeof title === 'string' ? { prTitle: title } : {}),
    ...(env['GITHUB_SHA'] ? { sha: env['GITHUB_SHA'] } : {}),
    ...(env['GITHUB_REF'] ? { ref: env['GITHUB_REF'] } : {}),
    ...(runId ? { runUrl: `${server}/${event.repository}/actions/runs/${runId}` } : {}),
  };
}

function inWorkspace(env: Record<string, string | undefined>, path: string): string {
  return isAbsolute(path) ? path : resolve(env['GITHUB_WORKSPACE'] ?? process.cwd(), path);
}

function loadConfigInput(path: string): Config {
  const isFile = statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  return isFile ? loadConfig(dirname(path), { configFile: path }) : loadConfig(path);
}

export interface PipelineInput {
  results: KernelgateResults;
  baseline: KernelgateResults | undefined;
  config: Config;
  mode: PublishMode;
  prNumber: number | undefined;
  repository: string;
  inputs: ActionInputs;
  /** Earlier stored runs of the branch on this GPU: the nightly report's trends. */
  history?: KernelgateResults[];
  /** Facts about the trigger the report shows. */
  context: { prNumber?: number; prTitle?: string; sha?: string; ref?: string; runUrl?: string };
}

export interface PipelineOutcome {
  gate: GateResult;
  /** case by case, what the gate judged (a trusted run's history record keeps the verdicts) */
  comparison?: Comparison;
  published: PublishOutcome | undefined;
  /** Posting failed for a reason other than a read-only token; the files and summary exist. */
  publishError: Error | undefined;
}

/**
 * Judges results that already exist and publishes the verdict: compare → tiers → gate → render →
 * publish. Stages that produce results (doctor, build, harness) run before this and hand it theirs.
 */
export async function pipeline(
  input: PipelineInput,
  deps: { client: GitHubClient | undefined } & RunDeps,
): Promise<PipelineOutcome> {
  const { results, baseline, config, inputs } = input;
  const { verdict, rendered, comparison } = judge(
    results,
    baseline,
    config,
    input.mode === 'schedule' ? 'nightly' : 'pr',
    input.context,
    input.history,
  );
  const sink: OutputSink = {
    setOutput: deps.core.setOutput,
    appendSummary: deps.core.appendSummary,
    warning: deps.core.warning,
    info: deps.core.info,
  };
  const counts = Object.fromEntries(
    COUNT_NAMES.map((name) => [name, verdict.counts[name]]),
  ) as Record<(typeof COUNT_NAMES)[number], number>;
  try {
    const published = await publish(
      {
        verdict: verdict.verdict,
        reasons: verdict.reasons,
        counts,
        results,
        full: rendered.full,
        comment: rendered.comment,
        ...(rendered.alert ? { alert: rendered.alert } : {}),
      },
      {
        mode: input.mode,
        repository: input.repository,
        prNumber: input.prNumber,
        post: inputs.comment,
        commentKey: inputs.commentKey,
        reportDir: inWorkspace(deps.env, inputs.reportDir),
      },
      { client: deps.client, fs: deps.fs, sink },
    );
    return { gate: verdict, comparison, published, publishError: undefined };
  } catch (error) {
    return {
      gate: verdict,
      comparison,
      published: undefined,
      publishError: error instanceof Error ? error : new Error(String(error)),
    };
  }
}

/** The branch a run measured (push, schedule) and, for a pull request, the branch it targets. */
export function branchesOf(
  event: EventContext,
  env: Record<string, string | undefined>,
): { branch: string | undefined; baseBranch: string | undefined } {
  const ref = env['GITHUB_REF'] ?? '';
  const headRef = field(event.payload, 'pull_request', 'head', 'ref');
  const baseRef = field(event.payload, 'pull_request', 'base', 'ref');
  return {
    branch: ref.startsWith('refs/heads/')
      ? ref.slice('refs/heads/'.length)
      : typeof headRef === 'string'
        ? headRef
        : undefined,
    baseBranch: typeof baseRef === 'string' ? baseRef : env['GITHUB_BASE_REF'] || undefined,
  };
}

function measureOptions(
  inputs: ActionInputs,
  config: Config,
  mode: PublishMode,
  event: EventContext,
  env: Record<string, string | undefined>,
  core: ActionCore,
): FullRunOptions {
  const workspace = env['GITHUB_WORKSPACE'] ?? process.cwd();
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
  };
}

/** baseline-dir, or the data branch (history: branch): src/history/action.ts. */
function storeOf(
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

/**
 * The step's failure message, or undefined when it passes: the gate's verdict decides. A publishing
 * failure (GitHub down, rate limited past the budget, no answer) fails the step only with
 * 'fail-on-publish-error: true'; otherwise publishWarning() says what happened.
 */
export function failureMessage(
  outcome: PipelineOutcome,
  failOnPublishError = false,
): string | undefined {
  const lines: string[] = [];
  if (outcome.gate.verdict === 'fail') {
    const n = outcome.gate.reasons.length;
    lines.push(`kernelgate: the gate failed (${n} ${n === 1 ? 'reason' : 'reasons'}):`);
    lines.push(...outcome.gate.reasons.map((reason) => `- ${reason}`));
  }
  if (outcome.publishError && failOnPublishError) lines.push(outcome.publishError.message);
  return lines.length > 0 ? lines.join('\n') : undefined;
}

/** The warning for a publishing failure that does not fail the step. */
export function publishWarning(
  outcome: PipelineOutcome,
  failOnPublishError = false,
): string | undefined {
  if (!outcome.publishError || failOnPublishError) return undefined;
  return (
    `${outcome.publishError.message} This step's status is the gate's verdict (${outcome.gate.verdict}); ` +
    `set 'fail-on-publish-error: true' to fail it when publishing fails.`
  );
}

/** The commit this run may execute: a pull request's head as the event names it, else GITHUB_SHA. */
export function approvedSha(
  event: EventContext,
  env: Record<string, string | undefined>,
): string | undefined {
  const head = field(event.payload, 'pull_request', 'head', 'sha');
  if (typeof head === 'string' && /^[0-9a-f]{40}$/.test(head)) return head;
  return env['GITHUB_SHA'] || undefined;
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

    const trust = await checkTrust(event, inputs.approvalLabel, {
      client,
      warning: core.warning,
      info: core.info,
    });
    if (!trust.trusted) {
      core.setOutput('trusted', 'false');
      core.setFailed(trust.message);
      return;
    }
    core.info(`Trusted: ${trust.reason}`);
    core.setOutput('trusted', 'true');
    core.setOutput('approved-sha', approvedSha(event, env) ?? '');
    if (inputs.trustOnly) return;

    const config = loadConfigInput(inWorkspace(env, inputs.config));
    const mode = resolveMode(inputs.mode, event);
    let results: KernelgateResults;
    let baseline: KernelgateResults | undefined;
    let measured: FullRun | undefined;
    const { shard, merge } = inputs.shard;
    if (shard !== undefined) {
      // One shard of a matrix: measure its cases, write them, and leave judging to the merge.
      const sharded = shardedOptions(
        measureOptions(inputs, config, mode, event, env, core),
        shard,
        inputs.shard.balance,
        core,
      );
      const done = sharded.finish(await deps.measure(sharded.options));
      core.setOutput('results-path', done.resultsPath);
      core.info(shardDone(shard, done.results, done.resultsPath));
      return;
    }
    if (merge !== undefined) {
      const { branch, baseBranch } = branchesOf(event, env);
      measured = await mergedRun({
        dirs: [inWorkspace(env, merge)],
        shards: inputs.shard.shards as number,
        cwd: env['GITHUB_WORKSPACE'] ?? process.cwd(),
        outDir: inWorkspace(env, join(inputs.reportDir, 'merge')),
        baselinePath: inputs.baseline === undefined ? undefined : inWorkspace(env, inputs.baseline),
        store: storeOf(inputs, env, core),
        baselineBranch: mode === 'pr' ? baseBranch : branch,
        saveBranch:
          mode !== 'pr' && !pullRequestEvent(event) && inputs.saveBaseline !== 'false'
            ? branch
            : undefined,
        warning: core.warning,
        info: core.info,
      });
      results = measured.results;
      baseline = measured.baseline?.results;
      if (measured.baseline) core.info(`Baseline: ${measured.baseline.path}`);
    } else if (inputs.results === undefined) {
      measured = await deps.measure(measureOptions(inputs, config, mode, event, env, core));
      results = measured.results;
      baseline = measured.baseline?.results;
      if (measured.baseline) core.info(`Baseline: ${measured.baseline.path}`);
    } else {
      results = loadResults(inWorkspace(env, inputs.results));
      if (inputs.baseline === undefined && inputs.history.kind === 'branch') {
        // Results measured by an earlier step, judged against the data branch and stored there.
        const { branch, baseBranch } = branchesOf(event, env);
        measured = await withStoredBaseline(
          {
            mode,
            branch,
            baseBranch,
            store: storeOf(inputs, env, core),
            baselinePath: undefined,
            saveBaseline:
              mode !== 'pr' && !pullRequestEvent(event) && inputs.saveBaseline !== 'false',
          },
          { results, resultsPath: inWorkspace(env, inputs.results) },
          [],
          core,
        );
        baseline = measured.baseline?.results;
        if (measured.baseline) core.info(`Baseline: ${measured.baseline.path}`);
      } else if (inputs.baseline !== undefined) {
        const baselinePath = inWorkspace(env, inputs.baseline);
        if (statSync(baselinePath, { throwIfNoEntry: false })?.isFile()) {
          baseline = loadResults(baselinePath);
        } else {
          core.warning(
            `Input 'baseline' names '${inputs.baseline}', which does not exist: every case is NEW. ` +
              `Baselines are written by trusted runs (push to the base branch, schedule); run one first.`,
          );
        }
      }
    }
    budget.start();
    let prNumber: number | undefined;
    let lookupError: Error | undefined;
    if (mode === 'pr') {
      try {
        prNumber = await resolvePullRequest(inputs, event, client);
      } catch (error) {
        const reportPath = join(inWorkspace(env, inputs.reportDir), 'report.md');
        lookupError = new Error(
          `Could not find the pull request to comment on: ${describeGitHubError(error).replace(/\.$/, '')}. ` +
            `The report is in the job summary and ${reportPath}.`,
          { cause: error },
        );
      }
    }
    const context = runContext(env, event, prNumber);
    // The nightly's trends: the branch's stored runs on this GPU, before tonight's is added.
    const history =
      mode === 'schedule'
        ? await trendRuns(
            storeOf(inputs, env, core),
            branchesOf(event, env).branch,
            results,
            core.warning,
          )
        : undefined;
    const judgeStartMs = Date.now();
    const published = await pipeline(
      {
        results,
        baseline,
        config,
        mode,
        prNumber,
        repository: event.repository,
        ...(history ? { history } : {}),
        // Without the pull request there is nothing to comment on: files, summary and outputs only.
        inputs: lookupError ? { ...inputs, comment: false } : inputs,
        context,
      },
      { ...deps, client },
    );
    const outcome = { ...published, publishError: published.publishError ?? lookupError };
    core.info(
      `kernelgate: judged and published in ${((Date.now() - judgeStartMs) / 1000).toFixed(2)} s`,
    );
    for (const warning of outcome.gate.warnings) core.warning(warning);
    // Bencher and github-action-benchmark JSON next to the report; a failure here is a warning.
    await writeExports(results, inWorkspace(env, inputs.reportDir), deps.fs, core.setOutput, {
      confidence: config.compare.confidence,
    }).catch((error: unknown) =>
      core.warning(`kernelgate: the exports were not written: ${(error as Error).message}`),
    );
    if (measured !== undefined) {
      // After the gate: a baseline is what later pull requests are compared with (known good).
      const stored = await storeRun(
        measured,
        outcome.gate.verdict,
        inputs.saveBaseline === 'always' ? 'always' : 'passing',
        saveContext(config, event.name, context.runUrl, outcome.comparison),
      );
      if (stored.saved) core.info(`Stored as the newest baseline: ${stored.saved}`);
      if (stored.note) core.warning(stored.note);
    }
    const warning = publishWarning(outcome, inputs.failOnPublishError);
    if (warning !== undefined) core.warning(warning);
    const failure = failureMessage(outcome, inputs.failOnPublishError);
    if (failure !== undefined) core.setFailed(failure);
  } catch (error) {
    core.setFailed(error instanceof Error ? error.message : String(error));
  }
}
