// Trust decisions, one row per event fixture, checked against the REST stand-in.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createGitHubClient } from '../src/publish/index.js';
import { assessTrust, checkTrust, type EventContext } from '../src/action/index.js';
import { GitHubServer } from './support/github-server.js';

const LABEL = 'kernelgate-approved';

function event(name: string, file: string): EventContext {
  const payload: unknown = JSON.parse(
    readFileSync(new URL(`./fixtures/events/${file}`, import.meta.url), 'utf8'),
  );
  return { name, payload, repository: 'acme/kernels' };
}

const NEEDS_LABEL =
  "Refusing to run: pull request #42 comes from the fork 'mallory/kernels', and fork code runs on this GPU runner " +
  "only after a maintainer's approval. A maintainer should review the changes and apply the label 'kernelgate-approved'.";
const STALE =
  "Refusing to run: pull request #42 from the fork 'mallory/kernels' received new commits (head 9e8d7c6) after the label " +
  "'kernelgate-approved' was applied, so the approval is stale. A maintainer should re-review the changes and re-apply " +
  "the label 'kernelgate-approved'.";
const NOT_BY_LABELING = (action: string): string =>
  `Refusing to run: pull request #42 from the fork 'mallory/kernels' has the label 'kernelgate-approved', but this run ` +
  `was started by '${action}', not by applying the label; an approval covers only the commit it was given on. ` +
  `A maintainer should re-review the changes, remove the label 'kernelgate-approved' and apply it again.`;

const server = new GitHubServer();
const warnings: string[] = [];
const infos: string[] = [];
let deps: Parameters<typeof checkTrust>[2];

/** The head the labeled fixtures name, which maintainer-maya approved in a review. */
const HEAD = '4bd3c1e0a7f94c2d8e6b5a3f2c1d0e9f8a7b6c5d';

beforeAll(async () => {
  await server.start();
  server.permissions.set('maintainer-maya', 'write');
  server.permissions.set('triager-tom', 'read');
  server.addPullRequest({ number: 42, headSha: HEAD });
  server.addReview(42, { login: 'maintainer-maya', state: 'APPROVED', commitId: HEAD });
  deps = {
    client: createGitHubClient({
      token: 'write-token',
      apiUrl: server.url,
      sleep: async () => {},
      nowMs: Date.now,
      log: () => {},
    }),
    warning: (m) => warnings.push(m),
    info: (m) => infos.push(m),
  };
});
afterAll(() => server.close());
afterEach(() => {
  server.assertValid();
  warnings.length = 0;
  infos.length = 0;
});

describe('checkTrust', () => {
  const cases: { eventName: string; file: string; trusted: boolean; text: string }[] = [
    {
      eventName: 'push',
      file: 'push.main.json',
      trusted: true,
      text: 'push events run code that is already in the repository.',
    },
    {
      eventName: 'schedule',
      file: 'schedule.json',
      trusted: true,
      text: 'schedule events run code that is already in the repository.',
    },
    {
      eventName: 'workflow_run',
      file: 'workflow_run.fork.json',
      trusted: true,
      text: 'workflow_run events run code that is already in the repository.',
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.same-repo.opened.json',
      trusted: true,
      text: 'pull request #41 comes from a branch of acme/kernels itself.',
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.same-repo.synchronize.json',
      trusted: true,
      text: 'pull request #41 comes from a branch of acme/kernels itself.',
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.fork.opened.json',
      trusted: false,
      text: NEEDS_LABEL,
    },
    {
      eventName: 'pull_request_target',
      file: 'pull_request_target.fork.opened.json',
      trusted: false,
      text: NEEDS_LABEL,
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.fork.synchronize.json',
      trusted: false,
      text: NEEDS_LABEL,
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.fork.labeled.json',
      trusted: true,
      text: "pull request #42 from the fork 'mallory/kernels' was approved by 'maintainer-maya' (write) for this commit, approved in a review of 4bd3c1e.",
    },
    {
      eventName: 'pull_request_target',
      file: 'pull_request_target.fork.labeled.json',
      trusted: true,
      text: "pull request #42 from the fork 'mallory/kernels' was approved by 'maintainer-maya' (write) for this commit, approved in a review of 4bd3c1e.",
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.fork.labeled-by-triager.json',
      trusted: false,
      text:
        "Refusing to run: the label 'kernelgate-approved' on pull request #42 was applied by 'triager-tom', who has 'read' " +
        'permission on acme/kernels; an approval needs write, maintain or admin.',
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.fork.labeled-other.json',
      trusted: false,
      text: NOT_BY_LABELING('labeled'),
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.fork.reopened-approved.json',
      trusted: false,
      text: NOT_BY_LABELING('reopened'),
    },
    {
      eventName: 'pull_request',
      file: 'pull_request.deleted-fork.opened.json',
      trusted: false,
      text:
        "Refusing to run: pull request #43 comes from the fork 'a deleted fork', and fork code runs on this GPU runner only " +
        "after a maintainer's approval. A maintainer should review the changes and apply the label 'kernelgate-approved'.",
    },
  ];

  test.each(cases)('$eventName $file', async ({ eventName, file, trusted, text }) => {
    const decision = await checkTrust(event(eventName, file), LABEL, deps);
    expect(decision).toEqual(trusted ? { trusted, reason: text } : { trusted, message: text });
  });

  test('a new push to an approved fork PR is refused and the stale label removed', async () => {
    server.issues.find((i) => i.number === 42)!.labels = [LABEL, 'performance'];
    const decision = await checkTrust(
      event('pull_request', 'pull_request.fork.synchronize-approved.json'),
      LABEL,
      deps,
    );
    expect(decision).toEqual({ trusted: false, message: STALE });
    expect(server.issues.find((i) => i.number === 42)?.labels).toEqual(['performance']);
    expect(infos).toEqual(["Removed the stale label 'kernelgate-approved' from pull request #42."]);
    expect(server.calls('issues/remove-label').at(-1)?.path).toBe(
      '/repos/acme/kernels/issues/42/labels/kernelgate-approved',
    );
  });

  test('a read-only token cannot remove the stale label: refused, with a warning saying what to do', async () => {
    server.readOnlyTokens.add('read-token');
    const readOnly = createGitHubClient({
      token: 'read-token',
      apiUrl: server.url,
      sleep: async () => {},
      nowMs: Date.now,
      log: () => {},
    });
    const decision = await checkTrust(
      event('pull_request', 'pull_request.fork.synchronize-approved.json'),
      LABEL,
      {
        ...deps,
        client: readOnly,
      },
    );
    expect(decision).toEqual({ trusted: false, message: STALE });
    expect(warnings).toEqual([
      "Could not remove the stale label 'kernelgate-approved': this run's token is read-only (a fork's pull_request event). " +
        "A maintainer should remove the label 'kernelgate-approved' from pull request #42 by hand.",
    ]);
  });

  test('a custom approval label is the one required', () => {
    const assessment = assessTrust(
      event('pull_request', 'pull_request.fork.labeled.json'),
      'gpu-ok',
    );
    expect(assessment).toEqual({
      kind: 'refused',
      message:
        "Refusing to run: pull request #42 comes from the fork 'mallory/kernels', and fork code runs on this GPU runner " +
        "only after a maintainer's approval. A maintainer should review the changes and apply the label 'gpu-ok'.",
    });
  });

  test('a pull_request payload without pull_request.number is an error naming the event', () => {
    expect(() =>
      assessTrust(
        { name: 'pull_request', payload: { action: 'opened' }, repository: 'acme/kernels' },
        LABEL,
      ),
    ).toThrow(
      'The pull_request event payload has no pull_request.number; kernelgate cannot tell whose code this run executes.',
    );
  });
});

// Issue 26: the label approves the head as the labeled event names it; a push seconds before the
// label was approved unseen. The approval binds to the commit the approver reviewed.
describe('the approval binds to the reviewed commit', () => {
  const PUSHED = '9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807';
  const REVIEWED = '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';

  /** The labeled fixture for pull request `number`, its head at `headSha`. */
  function labeled(number: number, headSha: string): EventContext {
    const base = event('pull_request_target', 'pull_request_target.fork.labeled.json');
    const payload = structuredClone(base.payload) as {
      pull_request: { number: number; head: { sha: string } };
      number: number;
    };
    payload.number = number;
    payload.pull_request.number = number;
    payload.pull_request.head.sha = headSha;
    return { ...base, payload };
  }

  const unseen = (n: number, approved: string) =>
    `Refusing to run: the label 'kernelgate-approved' was applied to pull request #${n} by 'maintainer-maya' while its ` +
    `head was 9e8d7c6, but 'maintainer-maya' ${approved}; an approval covers only the commit its maintainer reviewed, ` +
    `and a commit pushed moments before the label would run unreviewed. 'maintainer-maya' should review the newest ` +
    `commit, ${PUSHED}, approve it in a review of the pull request (or comment 'kernelgate-approve ${PUSHED}'), then ` +
    "remove and re-apply the label 'kernelgate-approved'.";

  test('a push seconds before the label: the head is not the commit the maintainer approved', async () => {
    server.addPullRequest({ number: 60, headSha: PUSHED });
    server.addReview(60, { login: 'maintainer-maya', state: 'APPROVED', commitId: REVIEWED });
    expect(await checkTrust(labeled(60, PUSHED), LABEL, deps)).toEqual({
      trusted: false,
      message: unseen(60, 'approved 1a2b3c4 in a review, not 9e8d7c6'),
    });
  });

  test('no review and no comment naming the head: refused', async () => {
    server.addPullRequest({ number: 61, headSha: PUSHED });
    // A review that only comments, a comment naming another commit, and the fork's own comment
    // naming the head: none of them is the approver's approval of the head.
    server.addReview(61, { login: 'maintainer-maya', state: 'COMMENTED', commitId: PUSHED });
    const mallory = { login: 'mallory', id: 6666, type: 'User' as const };
    server.addComment(61, `kernelgate-approve ${REVIEWED}`, {
      login: 'maintainer-maya',
      id: 1,
      type: 'User',
    });
    server.addComment(61, `kernelgate-approve ${PUSHED}`, mallory);
    expect(await checkTrust(labeled(61, PUSHED), LABEL, deps)).toEqual({
      trusted: false,
      message: unseen(61, 'approved no review of 9e8d7c6 and named it in no comment'),
    });
  });

  test("the approver's comment naming the head, all 40 digits, binds it", async () => {
    server.addPullRequest({ number: 62, headSha: PUSHED });
    server.addComment(62, `Read it all.\nkernelgate-approve ${PUSHED}\n`, {
      login: 'maintainer-maya',
      id: 1,
      type: 'User',
    });
    expect(await checkTrust(labeled(62, PUSHED), LABEL, deps)).toEqual({
      trusted: true,
      reason:
        "pull request #62 from the fork 'mallory/kernels' was approved by 'maintainer-maya' (write) for this commit, " +
        'named in a comment: kernelgate-approve 9e8d7c6.',
    });
    expect(server.calls('issues/list-comments').at(-1)?.path).toBe(
      '/repos/acme/kernels/issues/62/comments',
    );
  });

  test('a short commit id binds nothing: a fork can make a commit with any 7 digits', async () => {
    server.addPullRequest({ number: 63, headSha: PUSHED });
    server.addReview(63, {
      login: 'maintainer-maya',
      state: 'COMMENTED',
      commitId: REVIEWED,
      body: 'kernelgate-approve 9e8d7c6',
    });
    const decision = await checkTrust(labeled(63, PUSHED), LABEL, deps);
    expect(decision).toEqual({
      trusted: false,
      message: unseen(63, 'approved no review of 9e8d7c6 and named it in no comment'),
    });
  });

  test('reviews GitHub will not show: refused, with its answer', async () => {
    server.addPullRequest({ number: 64, headSha: PUSHED });
    server.faults.push({
      kind: 'integration-forbidden',
      times: 1,
      operationId: 'pulls/list-reviews',
    });
    expect(await checkTrust(labeled(64, PUSHED), LABEL, deps)).toEqual({
      trusted: false,
      message:
        "Refusing to run: could not read the reviews of pull request #64 to check that 'maintainer-maya' reviewed its " +
        'head 9e8d7c6 (GitHub answered 403: Resource not accessible by integration - https://docs.github.com/rest).',
    });
  });
});
