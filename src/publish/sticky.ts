// The sticky items kernelgate keeps on GitHub: one comment per pull request (and key), one open
// nightly issue, found by a hidden marker among the items the token's account wrote (identity.ts
// says which account that is); duplicates a lost answer left behind are removed.
import {
  describeGitHubError,
  type GitHubClient,
  httpFailure,
  lookBeforeRetrying,
} from './github.js';
import { type TokenIdentity, tokenIdentity } from './identity.js';
import {
  DEFAULT_COMMENT_KEY,
  NIGHTLY_LABEL,
  type OutputSink,
  PAGE_SIZE,
  reportMarker,
  withMarker,
} from './marker.js';

interface Dated {
  id: number;
  created_at: string;
}

interface Authored extends Dated {
  body?: string | null;
  user?: { login: string; type?: string } | null;
}

function oldestFirst<T extends Dated>(items: T[]): T[] {
  return [...items].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id - b.id);
}

/**
 * The comments or issues that carry the marker and were written by this token's account, oldest
 * first. One that carries it but was written by anyone else (a person, another app) is never
 * edited or deleted: it could have been pasted to have kernelgate's report appear under another
 * name, or to have it deleted. Each is named once in a warning. While the account is unknown (its
 * lookup failed) none is.
 */
function markedItems<T extends Authored>(
  identity: TokenIdentity,
  marker: string,
  list: () => Promise<T[]>,
  describe: (item: T) => string,
  sink: OutputSink,
): () => Promise<T[]> {
  const warned = new Set<number>();
  return async () => {
    const marked = (await list()).filter((item) => (item.body ?? '').startsWith(marker));
    if (marked.length === 0) return [];
    const self = await identity.login();
    if (self === undefined) return [];
    for (const item of marked) {
      if (identity.owns(self, item.user) || warned.has(item.id)) continue;
      warned.add(item.id);
      sink.warning(
        `${describe(item)}, by '${item.user?.login ?? 'a deleted account'}', starts with the marker ${marker} but ` +
          `was not written by this token's account ('${self}'); kernelgate neither edits nor deletes it, and keeps ` +
          `its report in one of its own.`,
      );
    }
    return oldestFirst(marked.filter((item) => identity.owns(self, item.user)));
  };
}

/**
 * The items listed again after a write that succeeded, to keep one where a parallel job wrote
 * too; a failure to list is a warning that names what was written, never the write's failure.
 */
async function listAgain<T>(
  ours: () => Promise<T[]>,
  written: string,
  items: string,
  sink: OutputSink,
): Promise<T[] | undefined> {
  try {
    return await ours();
  } catch (error) {
    sink.warning(
      `${written}, but could not list ${items} again to remove a duplicate a parallel job may have ` +
        `written (${describeGitHubError(error).replace(/\.$/, '')}).`,
    );
    return undefined;
  }
}

export async function upsertComment(
  client: GitHubClient,
  issue: { owner: string; repo: string; issue_number: number },
  key: string,
  comment: string,
  sink: OutputSink,
): Promise<string> {
  const marker = reportMarker('report', key);
  const body = withMarker(marker, comment);
  const identity = tokenIdentity(client, (message) => sink.warning(message));
  const ours = markedItems(
    identity,
    marker,
    () => client.paginate(client.rest.issues.listComments, { ...issue, per_page: PAGE_SIZE }),
    (c) => `Comment ${c.id} on pull request #${issue.issue_number}`,
    sink,
  );

  let existing = await ours();
  if (existing.length === 0) {
    const created = await client.rest.issues.createComment({
      ...issue,
      body,
      // A POST whose answer was lost may have created the comment: look for it before posting again.
      ...lookBeforeRetrying(async () => (await ours()).find((c) => c.body === body)),
    });
    // Its author is this token's account: no lookup needed, none that can fail a posted report.
    identity.learn(created.data.user);
    const url = created.data.html_url;
    // Parallel jobs may have created theirs at the same moment: look again and keep one.
    const again = await listAgain(ours, `Created the report comment ${url}`, 'the comments', sink);
    if (again === undefined) return url;
    existing = again;
    if (existing.length <= 1 || existing[0]?.id === created.data.id) {
      await deleteDuplicates(client, issue, created.data, existing.slice(1), sink);
      sink.info(`Created the report comment ${url}.`);
      return url;
    }
  }
  const [keep, ...duplicates] = existing;
  if (!keep) throw new Error('unreachable: no comment to keep');
  const updated = await client.rest.issues.updateComment({
    owner: issue.owner,
    repo: issue.repo,
    comment_id: keep.id,
    body,
  });
  await deleteDuplicates(client, issue, keep, duplicates, sink);
  sink.info(`Updated the report comment ${updated.data.html_url}.`);
  return updated.data.html_url;
}

/** Deletes this account's newer comments with the same marker (a race, a lost answer), keeping the oldest. */
async function deleteDuplicates(
  client: GitHubClient,
  issue: { owner: string; repo: string },
  keep: Dated,
  duplicates: Dated[],
  sink: OutputSink,
): Promise<void> {
  if (duplicates.length === 0) return;
  for (const duplicate of duplicates) {
    try {
      await client.rest.issues.deleteComment({
        owner: issue.owner,
        repo: issue.repo,
        comment_id: duplicate.id,
      });
    } catch (error) {
      // Another job deleting the same duplicate first is the expected race, not a failure.
      if (httpFailure(error)?.status !== 404) throw error;
    }
  }
  const ids = duplicates.map((d) => d.id).join(', ');
  sink.info(
    `Found ${duplicates.length + 1} report comments of this token's account with the same marker: kept the ` +
      `oldest, ${keep.id}, and deleted the newer ${duplicates.length === 1 ? 'one' : 'ones'}, ${ids}.`,
  );
}

/**
 * Posts a nightly's alert as a new comment on its issue: the body was edited, which notifies
 * nobody, and a comment notifies the issue's subscribers. A POST whose answer was lost is looked
 * for before it is sent again, so a retry never posts the alert twice.
 */
export async function postAlert(
  client: GitHubClient,
  issue: { owner: string; repo: string; issue_number: number },
  key: string,
  alert: string,
  sink: OutputSink,
): Promise<void> {
  const body = `${reportMarker('alert', key)}\n${alert}`;
  const created = await client.rest.issues.createComment({
    ...issue,
    body,
    ...lookBeforeRetrying(async () =>
      (
        await client.paginate(client.rest.issues.listComments, { ...issue, per_page: PAGE_SIZE })
      ).find((c) => c.body === body),
    ),
  });
  sink.info(`Posted the nightly's alert ${created.data.html_url}.`);
}

export async function upsertNightlyIssue(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  key: string,
  comment: string,
  sink: OutputSink,
): Promise<{ url: string; number: number }> {
  const marker = reportMarker('nightly', key);
  const body = withMarker(marker, comment);
  const identity = tokenIdentity(client, (message) => sink.warning(message));
  const ours = markedItems(
    identity,
    marker,
    async () =>
      (
        await client.paginate(client.rest.issues.listForRepo, {
          ...repo,
          labels: NIGHTLY_LABEL,
          state: 'open',
          per_page: PAGE_SIZE,
        })
      ).filter((i) => i.pull_request === undefined),
    (i) => `Issue #${i.number}`,
    sink,
  );

  let existing = await ours();
  if (existing.length === 0) {
    const title =
      key === DEFAULT_COMMENT_KEY
        ? 'kernelgate nightly report'
        : `kernelgate nightly report (${key})`;
    const created = await client.rest.issues.create({
      ...repo,
      title,
      body,
      labels: [NIGHTLY_LABEL],
      ...lookBeforeRetrying(async () => (await ours()).find((i) => i.body === body)),
    });
    identity.learn(created.data.user);
    const made = { url: created.data.html_url, number: created.data.number };
    const again = await listAgain(
      ours,
      `Created the nightly report issue ${made.url}`,
      'the open nightly issues',
      sink,
    );
    if (again === undefined) return made;
    existing = again;
    if (existing.length <= 1 || existing[0]?.number === created.data.number) {
      await closeDuplicates(client, repo, existing.slice(1), sink);
      sink.info(`Created the nightly report issue ${made.url}.`);
      return made;
    }
  }
  const [keep, ...duplicates] = existing;
  if (!keep) throw new Error('unreachable: no issue to keep');
  const updated = await client.rest.issues.update({ ...repo, issue_number: keep.number, body });
  await closeDuplicates(client, repo, duplicates, sink);
  sink.info(`Updated the nightly report issue ${updated.data.html_url}.`);
  return { url: updated.data.html_url, number: updated.data.number };
}

async function closeDuplicates(
  client: GitHubClient,
  repo: { owner: string; repo: string },
  duplicates: { number: number }[],
  sink: OutputSink,
): Promise<void> {
  for (const duplicate of duplicates) {
    await client.rest.issues.update({
      ...repo,
      issue_number: duplicate.number,
      state: 'closed',
      state_reason: 'duplicate',
    });
    sink.info(`Closed the duplicate nightly report issue #${duplicate.number}.`);
  }
}
