// Judge and publish a run, and what the step's exit says about it.
import type { Config } from '../config/index.js';
import type { Acceptance, Comparison, GateResult } from '../judge/index.js';
import type { AcceptedSince, ReportContext } from '../report/index.js';
import { judge } from '../pipeline/index.js';
import {
  COUNT_NAMES,
  type GitHubClient,
  type OutputSink,
  publish,
  type PublishMode,
  type PublishOutcome,
} from '../publish/index.js';
import type { KernelgateResults } from '../results/index.js';
import type { RunDeps } from './deps.js';
import { type ActionInputs, inWorkspace } from './inputs.js';

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
  /** A pull request's acceptance label and who applied it: SLOWER passes, said so. */
  acceptance?: Acceptance;
  /** The nightly's accepted regressions since the last nightly. */
  acceptedSince?: AcceptedSince[];
  /** The repository's web address: the report links commits. */
  repoUrl?: string;
  /** Facts about the trigger the report shows. */
  context: ReportContext;
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
    {
      ...(input.acceptance ? { acceptance: input.acceptance } : {}),
      ...(input.acceptedSince ? { acceptedSince: input.acceptedSince } : {}),
      ...(input.repoUrl ? { repoUrl: input.repoUrl } : {}),
    },
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
        ...(verdict.accepted ? { accepted: verdict.accepted } : {}),
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
