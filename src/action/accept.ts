// A pull request's acceptance of its performance regressions: the label `kernelgate-accept` on it,
// and who applied the label. The pull request's own run reads it from the event; the push run on
// the base branch after the merge reads it from the pull request the pushed commit came from, so
// the stored record (and the next nightly) say the regression was accepted, and by whom.
import { ACCEPT_LABEL, type Acceptance } from '../judge/index.js';
import { describeGitHubError, type GitHubClient, type PublishMode } from '../publish/index.js';
import { field } from './event.js';
import type { EventContext } from './trust.js';

export interface AcceptDeps {
  client: GitHubClient | undefined;
  warning(message: string): void;
  info(message: string): void;
}

function labelNames(labels: unknown): string[] {
  if (!Array.isArray(labels)) return [];
  return labels
    .map((l) => (typeof l === 'string' ? l : field(l, 'name')))
    .filter((n): n is string => typeof n === 'string');
}

/** Who applied `label` last, by the issue's events (GitHub keeps who labelled what, and when). */
async function labelledBy(
  repository: string,
  prNumber: number,
  deps: AcceptDeps,
): Promise<string | undefined> {
  const { client } = deps;
  if (!client) return undefined;
  const [owner = '', repo = ''] = repository.split('/');
  try {
    const events = await client.paginate(client.rest.issues.listEvents, {
      owner,
      repo,
      issue_number: prNumber,
      per_page: 100,
    });
    const applied = events.filter(
      (e) => e.event === 'labeled' && field(e, 'label', 'name') === ACCEPT_LABEL,
    );
    const login = field(applied[applied.length - 1], 'actor', 'login');
    return typeof login === 'string' ? login : undefined;
  } catch (error) {
    deps.warning(
      `Pull request #${prNumber} carries the label '${ACCEPT_LABEL}', but who applied it could not be read: ` +
        `${describeGitHubError(error).replace(/\.$/, '')}. The acceptance is recorded without a name.`,
    );
    return undefined;
  }
}

/** A pull request event's acceptance: its labels, and who applied the label (the event, or its events). */
async function fromPullRequest(
  event: EventContext,
  deps: AcceptDeps,
): Promise<Acceptance | undefined> {
  const pr = field(event.payload, 'pull_request');
  const number = field(pr, 'number');
  if (!labelNames(field(pr, 'labels')).includes(ACCEPT_LABEL) || typeof number !== 'number') {
    return undefined;
  }
  const sender = field(event.payload, 'sender', 'login');
  const justApplied =
    field(event.payload, 'action') === 'labeled' &&
    field(event.payload, 'label', 'name') === ACCEPT_LABEL &&
    typeof sender === 'string';
  const by = justApplied ? sender : await labelledBy(event.repository, number, deps);
  return { label: ACCEPT_LABEL, pr: number, ...(by ? { by } : {}) };
}

/** A push's acceptance: the merged pull request the pushed commit belongs to, when it carries the label. */
async function fromPush(
  event: EventContext,
  sha: string | undefined,
  deps: AcceptDeps,
): Promise<Acceptance | undefined> {
  const { client } = deps;
  if (!client || !sha) return undefined;
  const [owner = '', repo = ''] = event.repository.split('/');
  let pulls: Awaited<
    ReturnType<GitHubClient['rest']['repos']['listPullRequestsAssociatedWithCommit']>
  >['data'];
  try {
    pulls = (
      await client.rest.repos.listPullRequestsAssociatedWithCommit({
        owner,
        repo,
        commit_sha: sha,
        per_page: 100,
      })
    ).data;
  } catch (error) {
    deps.warning(
      `Could not ask GitHub which pull request commit ${sha.slice(0, 12)} came from (` +
        `${describeGitHubError(error).replace(/\.$/, '')}): a '${ACCEPT_LABEL}' label on it is not read, ` +
        'and a SLOWER case fails this run as the policy says.',
    );
    return undefined;
  }
  const accepted = pulls.find(
    (p) => p.merged_at !== null && labelNames(p.labels).includes(ACCEPT_LABEL),
  );
  if (!accepted) return undefined;
  const by = await labelledBy(event.repository, accepted.number, deps);
  deps.info(
    `Commit ${sha.slice(0, 12)} came from pull request #${accepted.number}, which carries the label '${ACCEPT_LABEL}'.`,
  );
  return { label: ACCEPT_LABEL, pr: accepted.number, ...(by ? { by } : {}) };
}

/**
 * The acceptance that applies to this run: a pull request's label, or for a push the label of the
 * merged pull request it came from. A nightly accepts nothing (accept on the pull request). Only
 * under `fail_on_slower: true` can it change anything, so only then is GitHub asked.
 */
export async function acceptanceFor(
  event: EventContext,
  mode: PublishMode,
  sha: string | undefined,
  failOnSlower: boolean,
  deps: AcceptDeps,
): Promise<Acceptance | undefined> {
  if (!failOnSlower) return undefined;
  if (mode === 'pr') return fromPullRequest(event, deps);
  if (mode === 'push' && event.name === 'push') return fromPush(event, sha, deps);
  return undefined;
}
