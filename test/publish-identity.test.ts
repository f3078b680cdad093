// Whose comment is kernelgate's (issue 26): only what this token's own account wrote is edited or
// deleted, whatever carries the marker; another app's bot is not kernelgate's because it is a bot.
// The account is GET /user's login for a personal access token, GraphQL `viewer`'s for an app
// installation token (GITHUB_TOKEN writes as 'github-actions[bot]', another app as its own bot),
// and what a create answered once kernelgate has posted. A lookup that fails never turns a posted
// report into a failure. Through the REST stand-in and the real Octokit client.
import { mkdtempSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createGitHubClient, type GitHubClient } from '../src/publish/index.js';
import { publish, type PublishOptions, type PublishReport } from '../src/publish/index.js';
import { BOT_USER, GitHubServer, type StoredUser } from './support/github-server.js';

const MARKER = '<!-- kernelgate:report:default -->';
const NIGHTLY_MARKER = '<!-- kernelgate:nightly:default -->';
const OTHER_APP: StoredUser = { login: 'release-drafter[bot]', id: 4242, type: 'Bot' };
const OUR_APP: StoredUser = { login: 'acme-kernelgate[bot]', id: 5151, type: 'Bot' };
const CI_USER: StoredUser = { login: 'ci-user', id: 77, type: 'User' };

const report: PublishReport = {
  verdict: 'pass',
  reasons: [],
  counts: { failed: 0, drift: 0, slower: 0, faster: 0, ambiguous: 0, new: 1, missing: 0 },
  results: { schema: 'kernelgate/results@1', cases: [] },
  full: '# kernelgate\n\nfull report\n',
  comment: '# kernelgate\n\nshort report\n',
};
const BODY = `${MARKER}\n${report.comment}`;

class Sink {
  outputs = new Map<string, string>();
  warnings: string[] = [];
  infos: string[] = [];
  setOutput(name: string, value: string): void {
    this.outputs.set(name, value);
  }
  async appendSummary(): Promise<void> {}
  warning(message: string): void {
    this.warnings.push(message);
  }
  info(message: string): void {
    this.infos.push(message);
  }
}

const fs = {
  mkdir: (path: string, opts: { recursive: true }) => mkdir(path, opts),
  writeFile: (path: string, data: string) => writeFile(path, data, 'utf8'),
};

let server: GitHubServer;
let sink: Sink;

function clientFor(token = 'github-token'): GitHubClient {
  return createGitHubClient({
    token,
    apiUrl: server.url,
    sleep: async () => undefined,
    nowMs: () => Date.now(),
    log: () => undefined,
  });
}

function options(overrides: Partial<PublishOptions> = {}): PublishOptions {
  return {
    mode: 'pr',
    repository: 'acme/kernels',
    prNumber: 42,
    post: true,
    commentKey: 'default',
    reportDir: join(mkdtempSync(join(tmpdir(), 'kg-identity-')), 'report'),
    ...overrides,
  };
}

const notOurs = (what: string, by: string, self: string, marker = MARKER) =>
  `${what}, by '${by}', starts with the marker ${marker} but was not written by this token's account ` +
  `('${self}'); kernelgate neither edits nor deletes it, and keeps its report in one of its own.`;
const CANNOT_TELL = (cause: string) =>
  `Could not tell which account this token writes as (${cause}): kernelgate writes its report anew, and edits ` +
  `or deletes a comment or issue that carries its marker only once the answer to that write names the account.`;
const commentUrl = (id: number | undefined) =>
  `https://github.com/acme/kernels/pull/42#issuecomment-${id}`;

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
  server.addPullRequest({ number: 42 });
  sink = new Sink();
});

afterEach(async () => {
  await server.close();
  server.assertValid();
});

describe("GITHUB_TOKEN: kernelgate is 'github-actions[bot]', not any bot", () => {
  test("another app's comment with the marker is neither edited nor deleted as a duplicate", async () => {
    const foreign = server.addComment(42, `${MARKER}\nanother app's text`, OTHER_APP);
    const own = server.addComment(42, `${MARKER}\nlast run`);
    const newer = server.addComment(42, `${MARKER}\na lost answer's duplicate`);
    const outcome = await publish(report, options(), { client: clientFor(), fs, sink });
    expect(server.commentsOn(42).map((c) => [c.id, c.user.login, c.body])).toEqual([
      [foreign.id, OTHER_APP.login, `${MARKER}\nanother app's text`],
      [own.id, BOT_USER.login, BODY],
    ]);
    expect(server.calls('issues/delete-comment').map((r) => r.path)).toEqual([
      `/repos/acme/kernels/issues/comments/${newer.id}`,
    ]);
    expect(outcome.url).toBe(commentUrl(own.id));
    // GET /user refuses an installation token; GraphQL's viewer names its bot.
    expect(server.requests.map((r) => `${r.operationId} ${r.status}`).slice(0, 3)).toEqual([
      'issues/list-comments 200',
      'users/get-authenticated 403',
      'graphql 200',
    ]);
    expect(sink.warnings).toEqual([
      notOurs(`Comment ${foreign.id} on pull request #42`, OTHER_APP.login, 'github-actions[bot]'),
    ]);
  });

  test("only another app's comment carries the marker: kernelgate posts its own", async () => {
    const foreign = server.addComment(42, `${MARKER}\nanother app's text`, OTHER_APP);
    const outcome = await publish(report, options(), { client: clientFor(), fs, sink });
    const comments = server.commentsOn(42);
    expect(comments.map((c) => [c.user.login, c.body])).toEqual([
      [OTHER_APP.login, `${MARKER}\nanother app's text`],
      [BOT_USER.login, BODY],
    ]);
    expect(outcome.url).toBe(commentUrl(comments[1]?.id));
    expect(server.calls('issues/update-comment')).toEqual([]);
    expect(server.calls('issues/delete-comment')).toEqual([]);
    expect(sink.warnings).toEqual([
      notOurs(`Comment ${foreign.id} on pull request #42`, OTHER_APP.login, 'github-actions[bot]'),
    ]);
  });
});

describe("a GitHub App's installation token: kernelgate is that app's bot", () => {
  test("its own comment is updated; GITHUB_TOKEN's, with the same marker, is left alone", async () => {
    server.tokenUsers.set('app-token', OUR_APP);
    const actions = server.addComment(42, `${MARKER}\nfrom GITHUB_TOKEN`);
    const own = server.addComment(42, `${MARKER}\nfrom the app`, OUR_APP);
    await publish(report, options(), { client: clientFor('app-token'), fs, sink });
    expect(server.commentsOn(42).map((c) => [c.id, c.body])).toEqual([
      [actions.id, `${MARKER}\nfrom GITHUB_TOKEN`],
      [own.id, BODY],
    ]);
    expect(server.calls('graphql')).toHaveLength(1);
    expect(sink.warnings).toEqual([
      notOurs(`Comment ${actions.id} on pull request #42`, 'github-actions[bot]', OUR_APP.login),
    ]);
  });

  test("the nightly issue: another app's issue with the marker stays open; the app's own is updated", async () => {
    server.tokenUsers.set('app-token', OUR_APP);
    const issue = (number: number, user: StoredUser, body: string) => ({
      number,
      title: 'kernelgate nightly report',
      body: `${NIGHTLY_MARKER}\n${body}`,
      state: 'open' as const,
      stateReason: null,
      labels: ['kernelgate-nightly'],
      isPullRequest: false,
      createdAt: `2026-11-2${number}T10:00:00Z`,
      user,
    });
    server.issues.push(issue(1, OTHER_APP, 'foreign'), issue(2, OUR_APP, 'last night'));
    const nightly = options({ mode: 'schedule', prNumber: undefined });
    const outcome = await publish(report, nightly, { client: clientFor('app-token'), fs, sink });
    expect(outcome.url).toBe('https://github.com/acme/kernels/issues/2');
    expect(server.issues.map((i) => [i.number, i.state, i.body])).toEqual([
      [42, 'open', ''],
      [1, 'open', `${NIGHTLY_MARKER}\nforeign`],
      [2, 'open', `${NIGHTLY_MARKER}\n${report.comment}`],
    ]);
    expect(sink.warnings).toEqual([
      notOurs('Issue #1', OTHER_APP.login, OUR_APP.login, NIGHTLY_MARKER),
    ]);
  });
});

describe('a lookup that fails never fails a posted report', () => {
  test('GET /user answers 500 after the post: the post stands, and no lookup was needed', async () => {
    server.tokenUsers.set('pat-token', CI_USER);
    server.faults.push({ kind: 'server-error', times: 8, operationId: 'users/get-authenticated' });
    const outcome = await publish(report, options(), { client: clientFor('pat-token'), fs, sink });
    const comments = server.commentsOn(42);
    expect(comments.map((c) => [c.user.login, c.body])).toEqual([[CI_USER.login, BODY]]);
    expect(outcome.url).toBe(commentUrl(comments[0]?.id));
    expect(sink.outputs.get('comment-url')).toBe(outcome.url);
    // The create's answer names the account: nothing asked GET /user.
    expect(server.calls('users/get-authenticated')).toEqual([]);
    expect(sink.warnings).toEqual([]);
    expect(sink.infos).toEqual([`Created the report comment ${outcome.url}.`]);
  });

  test('GET /user answers 500 with its comment there: posted anew, then the oldest kept', async () => {
    server.tokenUsers.set('pat-token', CI_USER);
    server.faults.push({ kind: 'server-error', times: 4, operationId: 'users/get-authenticated' });
    const own = server.addComment(42, `${MARKER}\nlast run`, CI_USER);
    const outcome = await publish(report, options(), { client: clientFor('pat-token'), fs, sink });
    // The new comment's answer named 'ci-user': the older one is kept and updated, the new one
    // deleted as its duplicate.
    expect(server.commentsOn(42).map((c) => [c.id, c.body])).toEqual([[own.id, BODY]]);
    expect(outcome.url).toBe(commentUrl(own.id));
    expect(server.calls('users/get-authenticated')).toHaveLength(4);
    expect(sink.warnings).toEqual([CANNOT_TELL('GitHub answered 500: Server Error')]);
  });

  test('listing again after the post fails: a warning with the address, the post stands', async () => {
    server.beforeAnswer = (request) => {
      if (request.operationId !== 'issues/create-comment') return;
      server.faults.push({ kind: 'server-error', times: 4, operationId: 'issues/list-comments' });
    };
    const outcome = await publish(report, options(), { client: clientFor(), fs, sink });
    const comments = server.commentsOn(42);
    expect(comments.map((c) => c.body)).toEqual([BODY]);
    expect(outcome.url).toBe(commentUrl(comments[0]?.id));
    expect(sink.warnings).toEqual([
      `Created the report comment ${outcome.url}, but could not list the comments again to remove a duplicate ` +
        'a parallel job may have written (GitHub answered 500: Server Error).',
    ]);
  });

  test("GraphQL's viewer fails for an installation token: the same, nothing foreign touched", async () => {
    server.faults.push({ kind: 'server-error', times: 4, operationId: 'graphql' });
    const foreign = server.addComment(42, `${MARKER}\nanother app's text`, OTHER_APP);
    const outcome = await publish(report, options(), { client: clientFor(), fs, sink });
    const comments = server.commentsOn(42);
    expect(comments.map((c) => [c.id === foreign.id, c.user.login, c.body])).toEqual([
      [true, OTHER_APP.login, `${MARKER}\nanother app's text`],
      [false, BOT_USER.login, BODY],
    ]);
    expect(outcome.url).toBe(commentUrl(comments[1]?.id));
    expect(server.calls('issues/delete-comment')).toEqual([]);
    expect(sink.warnings).toEqual([
      CANNOT_TELL('GitHub answered 500: Server Error'),
      notOurs(`Comment ${foreign.id} on pull request #42`, OTHER_APP.login, 'github-actions[bot]'),
    ]);
  });
});
