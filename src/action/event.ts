// The triggering event: its payload, the mode it means, the pull request, the branches.
import { readFileSync } from 'node:fs';
import type { GitHubClient, PublishMode } from '../publish/index.js';
import type { ActionInputs, Mode } from './inputs.js';
import type { PipelineInput } from './pipeline.js';
import type { EventContext } from './trust.js';

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

export function field(value: unknown, ...path: (string | number)[]): unknown {
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

export function runContext(
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

/** The commit this run may execute: a pull request's head as the event names it, else GITHUB_SHA. */
export function approvedSha(
  event: EventContext,
  env: Record<string, string | undefined>,
): string | undefined {
  const head = field(event.payload, 'pull_request', 'head', 'sha');
  if (typeof head === 'string' && /^[0-9a-f]{40}$/.test(head)) return head;
  return env['GITHUB_SHA'] || undefined;
}
