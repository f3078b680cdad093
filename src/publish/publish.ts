// Publishes a rendered report: files on disk first (nothing is lost if GitHub fails), then the
// job summary, the step outputs, and last the sticky PR comment or the nightly issue.
import { join } from 'node:path';
import { describeGitHubError, type GitHubClient, isIntegrationForbidden } from './github.js';
import { BODY_LIMIT_CHARS, type OutputSink, reportMarker } from './marker.js';
import { postAlert, upsertComment, upsertNightlyIssue } from './sticky.js';

export const PUBLISH_MODES = ['pr', 'push', 'schedule'] as const;

export type PublishMode = (typeof PUBLISH_MODES)[number];

/** GitHub's limit on the job summary of one step. */
export const SUMMARY_LIMIT_BYTES = 1024 * 1024;

const COMMENT_KEY_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export const COUNT_NAMES = [
  'failed',
  'drift',
  'slower',
  'faster',
  'ambiguous',
  'new',
  'missing',
] as const;

export type CountName = (typeof COUNT_NAMES)[number];

export interface PublishReport {
  verdict: string;
  reasons: string[];
  counts: Record<CountName, number>;
  /** The results document as read, stored beside the report (and as a baseline by trusted runs). */
  results: unknown;
  /** The whole report, for the job summary and the report file. */
  full: string;
  /** The short report for the comment or issue; at most commentBudgetChars(key) characters. */
  comment: string;
  /** A nightly's regression or failure in one line: posted as a new comment on the issue, which notifies. */
  alert?: string;
  /**
   * The acceptance that let SLOWER cases pass (the label, who applied it, the pull request, how
   * many cases): written into verdict.json.
   */
  accepted?: { label: string; by?: string; pr?: number; cases: number };
}

export interface PublishOptions {
  mode: PublishMode;
  /** owner/name */
  repository: string;
  /** The pull request to comment on, in 'pr' mode. */
  prNumber: number | undefined;
  /** False: files, summary and outputs only. */
  post: boolean;
  commentKey: string;
  reportDir: string;
}

export interface PublishFs {
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
  writeFile(path: string, data: string): Promise<void>;
}

export interface PublishDeps {
  /** Undefined when no token was given: nothing is posted. */
  client: GitHubClient | undefined;
  fs: PublishFs;
  sink: OutputSink;
}

export interface PublishOutcome {
  resultsPath: string;
  reportPath: string;
  verdictPath: string;
  summary: 'full' | 'short' | 'none';
  /** The comment's or the issue's address, when one was written. */
  url: string | undefined;
}

/** Characters left for the short report once the hidden marker line is prepended (either marker). */
export function commentBudgetChars(key: string): number {
  const markerChars = Math.max(
    reportMarker('report', key).length,
    reportMarker('nightly', key).length,
  );
  return BODY_LIMIT_CHARS - markerChars - 1;
}

export function checkCommentKey(key: string): string {
  if (!COMMENT_KEY_PATTERN.test(key)) {
    throw new Error(
      `Input 'comment-key' must be 1 to 64 letters, digits, '.', '_' or '-' (it goes into a hidden HTML marker), got '${key}'.`,
    );
  }
  return key;
}

export async function publish(
  report: PublishReport,
  options: PublishOptions,
  deps: PublishDeps,
): Promise<PublishOutcome> {
  checkCommentKey(options.commentKey);
  const { fs, sink } = deps;

  await fs.mkdir(options.reportDir, { recursive: true });
  const resultsPath = join(options.reportDir, 'results.json');
  const reportPath = join(options.reportDir, 'report.md');
  const verdictPath = join(options.reportDir, 'verdict.json');
  await fs.writeFile(resultsPath, JSON.stringify(report.results, null, 2) + '\n');
  await fs.writeFile(reportPath, report.full);
  const verdict = {
    verdict: report.verdict,
    reasons: report.reasons,
    counts: report.counts,
    ...(report.accepted ? { accepted: report.accepted } : {}),
  };
  await fs.writeFile(verdictPath, JSON.stringify(verdict, null, 2) + '\n');

  const summary = await writeSummary(report, reportPath, sink);

  sink.setOutput('verdict', report.verdict);
  for (const name of COUNT_NAMES) sink.setOutput(name, String(report.counts[name]));
  sink.setOutput('report-path', reportPath);
  sink.setOutput('results-path', resultsPath);

  let url: string | undefined;
  try {
    url = await post(report, options, deps, reportPath);
  } finally {
    sink.setOutput('comment-url', url ?? '');
  }
  return { resultsPath, reportPath, verdictPath, summary, url };
}

async function writeSummary(
  report: PublishReport,
  reportPath: string,
  sink: OutputSink,
): Promise<PublishOutcome['summary']> {
  const fullBytes = Buffer.byteLength(report.full, 'utf8');
  if (fullBytes <= SUMMARY_LIMIT_BYTES) {
    await sink.appendSummary(report.full);
    return 'full';
  }
  sink.warning(
    `The full report is ${fullBytes} bytes, over the job summary's limit of ${SUMMARY_LIMIT_BYTES} bytes per step: ` +
      `the summary shows the short report; the full one is in ${reportPath} (upload it as an artifact to keep it).`,
  );
  await sink.appendSummary(report.comment);
  return 'short';
}

function splitRepository(repository: string): { owner: string; repo: string } {
  const [owner, repo, ...rest] = repository.split('/');
  if (!owner || !repo || rest.length > 0) {
    throw new Error(`GITHUB_REPOSITORY must look like 'owner/name', got '${repository}'.`);
  }
  return { owner, repo };
}

async function post(
  report: PublishReport,
  options: PublishOptions,
  deps: PublishDeps,
  reportPath: string,
): Promise<string | undefined> {
  if (!options.post || options.mode === 'push') return undefined;
  const where =
    options.mode === 'pr'
      ? `the report comment on pull request #${options.prNumber ?? '?'}`
      : `the nightly report issue`;
  if (!deps.client) {
    deps.sink.warning(
      `No token was given, so ${where} was not written; the report is in the job summary and ${reportPath}.`,
    );
    return undefined;
  }
  const repo = splitRepository(options.repository);
  if (options.mode === 'pr' && options.prNumber === undefined) {
    throw new Error(
      `Mode 'pr' needs a pull request number: the event payload has none; set the 'pr-number' input.`,
    );
  }
  try {
    if (options.mode === 'pr' && options.prNumber !== undefined) {
      const issue = { ...repo, issue_number: options.prNumber };
      return await upsertComment(deps.client, issue, options.commentKey, report.comment, deps.sink);
    }
    const issue = await upsertNightlyIssue(
      deps.client,
      repo,
      options.commentKey,
      report.comment,
      deps.sink,
    );
    if (report.alert) {
      await postAlert(
        deps.client,
        { ...repo, issue_number: issue.number },
        options.commentKey,
        report.alert,
        deps.sink,
      );
    }
    return issue.url;
  } catch (error) {
    if (isIntegrationForbidden(error)) {
      deps.sink.warning(
        `Could not write ${where}: GitHub answered 403 "Resource not accessible by integration", so this run's token is ` +
          `read-only. A pull_request event from a fork always gets a read-only token, and so does a workflow without ` +
          `'permissions: pull-requests: write' and 'issues: write'. The report is in the job summary and ${reportPath}, and ` +
          `the gate's verdict still decides this step's status. To comment on pull requests from forks, measure in the ` +
          `pull_request workflow and publish from a workflow_run workflow (see docs/forks.md).`,
      );
      return undefined;
    }
    throw new Error(
      `Could not write ${where}: ${describeGitHubError(error).replace(/\.$/, '')}. The report is in the job summary and ${reportPath}.`,
      {
        cause: error,
      },
    );
  }
}
