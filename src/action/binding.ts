// Binds a label's approval to the commit its maintainer reviewed (issue 26).
//
// The label approves the pull request's head as the `labeled` event names it: the head when the
// label was applied, not the commit the maintainer read. A push seconds before the label was
// approved unseen. Nothing GitHub keeps says when an ordinary push reached a pull request (the
// timeline's `committed` items carry the dates the pusher wrote; only a force push has a time of
// its own), and a push before the label is not a push the maintainer saw. What GitHub does keep is
// the commit each review was submitted on. So the label approves the head only when the person who
// applied it approved that very commit in a review, or named it, all 40 digits, in a review or
// comment: `kernelgate-approve <sha>`.
import type { GitHubClient } from '../publish/index.js';
import { httpFailure } from '../publish/index.js';

/** The words that name the reviewed commit in a review's or a comment's body. */
export const APPROVE_COMMAND = 'kernelgate-approve';

const FULL_SHA = /^[0-9a-f]{40}$/;
const COMMAND_LINE = new RegExp(`^\\s*${APPROVE_COMMAND}\\s+([0-9a-f]{40})\\s*$`, 'gim');

export interface BindingQuestion {
  owner: string;
  repo: string;
  prNumber: number;
  approver: string;
  label: string;
  /** the head the `labeled` event names */
  headSha: string;
}

export type Binding = { bound: true; how: string } | { bound: false; message: string };

/** The full commit ids a body names with `kernelgate-approve <sha>`, one a line. */
export function namedCommits(body: string | null | undefined): string[] {
  return [...(body ?? '').matchAll(COMMAND_LINE)].map((m) => (m[1] ?? '').toLowerCase());
}

function unbound(q: BindingQuestion, approvedOther: string | undefined): string {
  const who = `'${q.approver}'`;
  const short = q.headSha.slice(0, 7);
  const seen =
    approvedOther !== undefined
      ? `${who} approved ${approvedOther.slice(0, 7)} in a review, not ${short}`
      : `${who} approved no review of ${short} and named it in no comment`;
  return (
    `Refusing to run: the label '${q.label}' was applied to pull request #${q.prNumber} by ${who} while its head ` +
    `was ${short}, but ${seen}; an approval covers only the commit its maintainer reviewed, and a commit pushed ` +
    `moments before the label would run unreviewed. ${who} should review the newest commit, ${q.headSha}, ` +
    `approve it in a review of the pull request (or comment '${APPROVE_COMMAND} ${q.headSha}'), then remove and ` +
    `re-apply the label '${q.label}'.`
  );
}

/** Whether the approver reviewed the head the label approves: their reviews, then comments. */
export async function reviewedHead(
  client: Pick<GitHubClient, 'rest' | 'paginate'>,
  q: BindingQuestion,
): Promise<Binding> {
  const short = q.headSha.slice(0, 7);
  if (!FULL_SHA.test(q.headSha)) {
    return {
      bound: false,
      message: `Refusing to run: the labeled event for pull request #${q.prNumber} names no head commit (pull_request.head.sha is '${q.headSha}').`,
    };
  }
  const by = (user: { login?: string } | null | undefined) => user?.login === q.approver;
  const where = { owner: q.owner, repo: q.repo, per_page: 100 } as const;
  let what = 'reviews';
  try {
    const reviews = (
      await client.paginate(client.rest.pulls.listReviews, { ...where, pull_number: q.prNumber })
    ).filter((r) => by(r.user));
    const approved = reviews.filter((r) => r.state === 'APPROVED');
    if (approved.some((r) => r.commit_id === q.headSha)) {
      return { bound: true, how: `approved in a review of ${short}` };
    }
    if (reviews.some((r) => namedCommits(r.body).includes(q.headSha))) {
      return { bound: true, how: `named in a review: ${APPROVE_COMMAND} ${short}` };
    }
    what = 'comments';
    const comments = await client.paginate(client.rest.issues.listComments, {
      ...where,
      issue_number: q.prNumber,
    });
    if (comments.some((c) => by(c.user) && namedCommits(c.body).includes(q.headSha))) {
      return { bound: true, how: `named in a comment: ${APPROVE_COMMAND} ${short}` };
    }
    return { bound: false, message: unbound(q, approved.at(-1)?.commit_id ?? undefined) };
  } catch (error) {
    const failure = httpFailure(error);
    return {
      bound: false,
      message:
        `Refusing to run: could not read the ${what} of pull request #${q.prNumber} to check that '${q.approver}' ` +
        `reviewed its head ${short} (GitHub answered ${failure?.status ?? 'no status'}: ${failure?.message ?? String(error)}).`,
    };
  }
}
