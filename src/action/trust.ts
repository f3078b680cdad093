// Decides whether this run may execute the pull request's code on the GPU runner: code from a
// fork runs only after someone with write access applies the approval label, and only for the
// commit the label was applied to, which that person must have approved in a review or named in a
// comment (binding.ts).
import type { GitHubClient } from '../publish/index.js';
import { httpFailure, isIntegrationForbidden } from '../publish/index.js';
import { reviewedHead } from './binding.js';

export const DEFAULT_APPROVAL_LABEL = 'kernelgate-approved';

const PR_EVENTS = ['pull_request', 'pull_request_target'] as const;
const WRITE_PERMISSIONS = ['admin', 'maintain', 'write'] as const;

export interface EventContext {
  name: string;
  payload: unknown;
  /** owner/name of the repository the workflow runs in (GITHUB_REPOSITORY). */
  repository: string;
}

/** The payload fields trust depends on, read defensively: payloads are JSON from outside. */
interface PullRequestFacts {
  number: number;
  action: string;
  headRepo: string | undefined;
  baseRepo: string;
  headSha: string;
  labels: string[];
  appliedLabel: string | undefined;
  sender: string | undefined;
}

/** The outcome of reading the payload alone. */
export type TrustAssessment =
  | { kind: 'trusted'; reason: string }
  | { kind: 'refused'; message: string; staleLabel?: { prNumber: number; label: string } }
  | {
      kind: 'check-approver';
      prNumber: number;
      approver: string;
      label: string;
      headRepo: string;
      headSha: string;
    };

export type TrustDecision = { trusted: true; reason: string } | { trusted: false; message: string };

export interface TrustDeps {
  client: Pick<GitHubClient, 'rest' | 'paginate'> | undefined;
  warning: (message: string) => void;
  info: (message: string) => void;
}

function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function readPullRequest(event: EventContext): PullRequestFacts {
  const pr = field(event.payload, 'pull_request');
  const number = field(pr, 'number');
  if (typeof pr !== 'object' || pr === null || typeof number !== 'number') {
    throw new Error(
      `The ${event.name} event payload has no pull_request.number; kernelgate cannot tell whose code this run executes.`,
    );
  }
  const labels = field(pr, 'labels');
  return {
    number,
    action: text(field(event.payload, 'action')) ?? '',
    headRepo: text(field(pr, 'head', 'repo', 'full_name')),
    baseRepo: text(field(pr, 'base', 'repo', 'full_name')) ?? event.repository,
    headSha: text(field(pr, 'head', 'sha')) ?? '',
    labels: Array.isArray(labels)
      ? labels.map((l) => text(field(l, 'name'))).filter((l) => l !== undefined)
      : [],
    appliedLabel: text(field(event.payload, 'label', 'name')),
    sender: text(field(event.payload, 'sender', 'login')),
  };
}

/** Reads the event payload; pure, so every case is a row in a table of fixtures. */
export function assessTrust(event: EventContext, approvalLabel: string): TrustAssessment {
  if (!(PR_EVENTS as readonly string[]).includes(event.name)) {
    return {
      kind: 'trusted',
      reason: `${event.name} events run code that is already in the repository.`,
    };
  }
  const pr = readPullRequest(event);
  if (pr.headRepo !== undefined && pr.headRepo === pr.baseRepo) {
    return {
      kind: 'trusted',
      reason: `pull request #${pr.number} comes from a branch of ${pr.baseRepo} itself.`,
    };
  }
  const fork = pr.headRepo ?? 'a deleted fork';
  const hasLabel = pr.labels.includes(approvalLabel);
  const shortSha = pr.headSha.slice(0, 7);
  if (pr.action === 'synchronize' && hasLabel) {
    return {
      kind: 'refused',
      message:
        `Refusing to run: pull request #${pr.number} from the fork '${fork}' received new commits (head ${shortSha}) ` +
        `after the label '${approvalLabel}' was applied, so the approval is stale. ` +
        `A maintainer should re-review the changes and re-apply the label '${approvalLabel}'.`,
      staleLabel: { prNumber: pr.number, label: approvalLabel },
    };
  }
  if (pr.action === 'labeled' && pr.appliedLabel === approvalLabel) {
    if (pr.sender === undefined) {
      return {
        kind: 'refused',
        message: `Refusing to run: the labeled event for pull request #${pr.number} names no sender.`,
      };
    }
    return {
      kind: 'check-approver',
      prNumber: pr.number,
      approver: pr.sender,
      label: approvalLabel,
      headRepo: fork,
      headSha: pr.headSha,
    };
  }
  if (hasLabel) {
    return {
      kind: 'refused',
      message:
        `Refusing to run: pull request #${pr.number} from the fork '${fork}' has the label '${approvalLabel}', ` +
        `but this run was started by '${pr.action}', not by applying the label; an approval covers only the commit it was given on. ` +
        `A maintainer should re-review the changes, remove the label '${approvalLabel}' and apply it again.`,
    };
  }
  return {
    kind: 'refused',
    message:
      `Refusing to run: pull request #${pr.number} comes from the fork '${fork}', and fork code runs on this GPU runner ` +
      `only after a maintainer's approval. A maintainer should review the changes and apply the label '${approvalLabel}'.`,
  };
}

function splitRepository(repository: string): { owner: string; repo: string } {
  const [owner, repo, ...rest] = repository.split('/');
  if (!owner || !repo || rest.length > 0) {
    throw new Error(`GITHUB_REPOSITORY must look like 'owner/name', got '${repository}'.`);
  }
  return { owner, repo };
}

/** The full check: the payload, then who applied the label, and removal of a stale label. */
export async function checkTrust(
  event: EventContext,
  approvalLabel: string,
  deps: TrustDeps,
): Promise<TrustDecision> {
  const assessment = assessTrust(event, approvalLabel);
  switch (assessment.kind) {
    case 'trusted':
      return { trusted: true, reason: assessment.reason };
    case 'refused':
      if (assessment.staleLabel) await removeStaleLabel(event, assessment.staleLabel, deps);
      return { trusted: false, message: assessment.message };
    case 'check-approver':
      return checkApprover(event, assessment, deps);
  }
}

async function checkApprover(
  event: EventContext,
  assessment: Extract<TrustAssessment, { kind: 'check-approver' }>,
  deps: TrustDeps,
): Promise<TrustDecision> {
  const { owner, repo } = splitRepository(event.repository);
  const who = `'${assessment.approver}'`;
  if (!deps.client) {
    return {
      trusted: false,
      message: `Refusing to run: no token to check that ${who}, who applied '${assessment.label}', may approve; set the 'token' input.`,
    };
  }
  let permission: string;
  try {
    const response = await deps.client.rest.repos.getCollaboratorPermissionLevel({
      owner,
      repo,
      username: assessment.approver,
    });
    permission = response.data.permission;
  } catch (error) {
    const failure = httpFailure(error);
    return {
      trusted: false,
      message:
        `Refusing to run: could not check the permission of ${who}, who applied '${assessment.label}' to pull request ` +
        `#${assessment.prNumber} (GitHub answered ${failure?.status ?? 'no status'}: ${failure?.message ?? String(error)}).`,
    };
  }
  if (!(WRITE_PERMISSIONS as readonly string[]).includes(permission)) {
    return {
      trusted: false,
      message:
        `Refusing to run: the label '${assessment.label}' on pull request #${assessment.prNumber} was applied by ${who}, ` +
        `who has '${permission}' permission on ${owner}/${repo}; an approval needs write, maintain or admin.`,
    };
  }
  const binding = await reviewedHead(deps.client, {
    owner,
    repo,
    prNumber: assessment.prNumber,
    approver: assessment.approver,
    label: assessment.label,
    headSha: assessment.headSha,
  });
  if (!binding.bound) return { trusted: false, message: binding.message };
  return {
    trusted: true,
    reason: `pull request #${assessment.prNumber} from the fork '${assessment.headRepo}' was approved by ${who} (${permission}) for this commit, ${binding.how}.`,
  };
}

async function removeStaleLabel(
  event: EventContext,
  stale: { prNumber: number; label: string },
  deps: TrustDeps,
): Promise<void> {
  const manual = `A maintainer should remove the label '${stale.label}' from pull request #${stale.prNumber} by hand.`;
  if (!deps.client) {
    deps.warning(`No token to remove the stale label '${stale.label}'. ${manual}`);
    return;
  }
  const { owner, repo } = splitRepository(event.repository);
  try {
    await deps.client.rest.issues.removeLabel({
      owner,
      repo,
      issue_number: stale.prNumber,
      name: stale.label,
    });
    deps.info(`Removed the stale label '${stale.label}' from pull request #${stale.prNumber}.`);
  } catch (error) {
    if (isIntegrationForbidden(error)) {
      deps.warning(
        `Could not remove the stale label '${stale.label}': this run's token is read-only (a fork's pull_request event). ${manual}`,
      );
    } else if (httpFailure(error)?.status !== 404) {
      deps.warning(
        `Could not remove the stale label '${stale.label}': ${String(error)}. ${manual}`,
      );
    }
  }
}
