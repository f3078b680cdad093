// publish() against a GitHub that has a bad day, through the REST stand-in and the real Octokit
// client: no answer at all, an answer that stops halfway, 5xx on every attempt, a POST whose
// answer is lost after the comment was created, rate limits past the budget, and comments that
// carry kernelgate's marker but are not kernelgate's.
import { mkdtempSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  createGitHubClient,
  TimeBudget,
  type GitHubClient,
  type RetryPolicy,
} from '../src/publish/index.js';
import { publish, type PublishOptions, type PublishReport } from '../src/publish/index.js';
import { BOT_USER, GitHubServer, type StoredUser } from './support/github-server.js';

const MARKER = '<!-- kernelgate:report:default -->';
const NIGHTLY_MARKER = '<!-- kernelgate:nightly:default -->';
// Listing goes through paginate, which asks for full addresses (shown without the host).
const LIST = 'GET /repos/acme/kernels/issues/42/comments?per_page=100';
const CREATE = 'POST /repos/{owner}/{repo}/issues/{issue_number}/comments';
const MALLORY: StoredUser = { login: 'mallory', id: 666, type: 'User' };
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
  summary: string[] = [];
  warnings: string[] = [];
  infos: string[] = [];
  setOutput(name: string, value: string): void {
    this.outputs.set(name, value);
  }
  async appendSummary(markdown: string): Promise<void> {
    this.summary.push(markdown);
  }
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
let logs: string[];
let sleeps: number[];
let reportDir: string;

interface ClientSetup {
  token?: string;
  requestTimeoutMs?: number;
  budgetMs?: number;
  retry?: RetryPolicy;
  /** Really wait (the budget counts real time); default: record the wait and go on at once. */
  realSleep?: boolean;
}

function clientFor(setup: ClientSetup = {}): GitHubClient {
  let budget: TimeBudget | undefined;
  if (setup.budgetMs !== undefined) {
    budget = new TimeBudget(setup.budgetMs, () => Date.now());
    budget.start();
  }
  return createGitHubClient({
    token: setup.token ?? 'write-token',
    apiUrl: server.url,
    ...(setup.retry ? { retry: setup.retry } : {}),
    ...(setup.requestTimeoutMs !== undefined ? { requestTimeoutMs: setup.requestTimeoutMs } : {}),
    ...(budget ? { budget } : {}),
    sleep: async (ms) => {
      sleeps.push(ms);
      if (setup.realSleep) await new Promise((done) => setTimeout(done, ms));
    },
    nowMs: () => Date.now(),
    log: (message) => logs.push(message),
  });
}

function options(overrides: Partial<PublishOptions> = {}): PublishOptions {
  return {
    mode: 'pr',
    repository: 'acme/kernels',
    prNumber: 42,
    post: true,
    commentKey: 'default',
    reportDir,
    ...overrides,
  };
}

const reportPath = (): string => join(reportDir, 'report.md');
const couldNotWrite = (cause: string): string =>
  `Could not write the report comment on pull request #42: ${cause}. The report is in the job summary and ${reportPath()}.`;

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
  server.addPullRequest({ number: 42 });
  sink = new Sink();
  logs = [];
  sleeps = [];
  reportDir = join(mkdtempSync(join(tmpdir(), 'kg-faults-')), 'report');
});

afterEach(async () => {
  await server.close();
  server.assertValid();
});

/** The report is on disk and in the summary, whatever happened to the comment. */
function expectReportKept(): void {
  expect(readFileSync(reportPath(), 'utf8')).toBe(report.full);
  expect(sink.summary).toEqual([report.full]);
  expect(sink.outputs.get('verdict')).toBe('pass');
  expect(sink.outputs.get('comment-url')).toBe('');
}

describe('deadlines', () => {
  test('the budget runs from the first request after start(): judging in between does not count', () => {
    let now = 0;
    const budget = new TimeBudget(1000, () => now);
    expect(budget.remainingMs()).toBe(Infinity); // the trust check: per-request deadlines only
    budget.start();
    now = 5000;
    expect(budget.remainingMs()).toBe(1000);
    budget.requestSent();
    now = 5600;
    expect(budget.remainingMs()).toBe(400);
    budget.requestSent();
    now = 7000;
    expect(budget.remainingMs()).toBe(0);
    expect(String(budget)).toBe("the publishing budget of 1 s ('publish-timeout')");
  });

  test('a server that accepts the connection and never answers: each attempt ends at its deadline', async () => {
    server.faults.push({ kind: 'hang', times: 100 });
    const client = clientFor({ requestTimeoutMs: 150 });
    const started = Date.now();
    await expect(publish(report, options(), { client, fs, sink })).rejects.toThrow(
      couldNotWrite(`GitHub did not answer ${LIST} within 0.15 s ('request-timeout')`),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(server.requests.map((r) => r.fault)).toEqual(['hang', 'hang', 'hang', 'hang']);
    // Abandoned, not left open: a connection kept would keep the step's process alive.
    await expect.poll(() => server.unanswered.size, { timeout: 1000 }).toBe(0);
    expect(logs).toEqual([
      `GitHub did not answer ${LIST} within 0.15 s ('request-timeout'); retrying in 1000 ms (attempt 2 of 4).`,
      `GitHub did not answer ${LIST} within 0.15 s ('request-timeout'); retrying in 2000 ms (attempt 3 of 4).`,
      `GitHub did not answer ${LIST} within 0.15 s ('request-timeout'); retrying in 4000 ms (attempt 4 of 4).`,
    ]);
    expectReportKept();
  });

  test('an answer that stops halfway through its body is abandoned at the deadline too', async () => {
    server.faults.push({ kind: 'stall', times: 100, operationId: 'issues/list-comments' });
    const client = clientFor({ requestTimeoutMs: 150 });
    await expect(publish(report, options(), { client, fs, sink })).rejects.toThrow(
      couldNotWrite(`GitHub did not answer ${LIST} within 0.15 s ('request-timeout')`),
    );
    expect(server.requests.map((r) => r.fault)).toEqual(['stall', 'stall', 'stall', 'stall']);
    await expect.poll(() => server.unanswered.size, { timeout: 1000 }).toBe(0);
    expect(server.comments).toEqual([]);
  });

  test('the publishing budget ends the last attempt early, retries and waits included', async () => {
    server.faults.push({ kind: 'hang', times: 100 });
    const client = clientFor({
      requestTimeoutMs: 300,
      budgetMs: 500,
      retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 60_000 },
      realSleep: true,
    });
    const started = Date.now();
    await expect(publish(report, options(), { client, fs, sink })).rejects.toThrow(
      couldNotWrite(
        `GitHub did not answer ${LIST} before the end of the publishing budget of 0.5 s ('publish-timeout')`,
      ),
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(1500);
    expect(server.requests).toHaveLength(2);
  });

  test('a wait GitHub asks for past the end of the budget is not waited: the step goes on', async () => {
    server.faults.push({
      kind: 'secondary-rate-limit',
      times: 1,
      operationId: 'issues/create-comment',
      retryAfterSeconds: 30,
    });
    const client = clientFor({ budgetMs: 10_000 });
    await expect(publish(report, options(), { client, fs, sink })).rejects.toThrow(
      couldNotWrite(
        `GitHub answered 403 to ${CREATE} (You have exceeded a secondary rate limit. Please wait a few minutes ` +
          `before you try again); the next attempt, in 30000 ms, would start after the end of the publishing ` +
          `budget of 10 s ('publish-timeout')`,
      ),
    );
    expect(sleeps).toEqual([]);
    expect(server.comments).toEqual([]);
  });

  test('a secondary rate limit within the budget is waited out and the POST sent again at once', async () => {
    server.faults.push({
      kind: 'secondary-rate-limit',
      times: 1,
      operationId: 'issues/create-comment',
      retryAfterSeconds: 2,
    });
    const client = clientFor({ budgetMs: 10_000 });
    await publish(report, options(), { client, fs, sink });
    expect(sleeps).toEqual([2000]);
    expect(server.calls('issues/create-comment').map((r) => r.status)).toEqual([403, 201]);
    // A rate limit means GitHub did nothing: no listing before the second POST.
    expect(logs).toEqual([
      `GitHub answered 403 to ${CREATE}; retrying in 2000 ms (attempt 2 of 4).`,
    ]);
    expect(server.commentsOn(42).map((c) => c.body)).toEqual([BODY]);
  });
});

describe('POSTs whose outcome is unknown', () => {
  test('a POST that created the comment but lost its answer is not sent again', async () => {
    server.faults.push({ kind: 'lost-answer', times: 1, operationId: 'issues/create-comment' });
    const client = clientFor();
    const outcome = await publish(report, options(), { client, fs, sink });
    const comments = server.commentsOn(42);
    expect(comments.map((c) => c.body)).toEqual([BODY]);
    expect(server.calls('issues/create-comment')).toHaveLength(1);
    expect(server.calls('issues/create-comment')[0]).toMatchObject({
      status: 201,
      fault: 'lost-answer',
    });
    expect(outcome.url).toBe(
      `https://github.com/acme/kernels/pull/42#issuecomment-${comments[0]?.id}`,
    );
    expect(logs).toEqual([
      `The connection to GitHub failed during ${CREATE}: other side closed, but what it creates is there (found by ` +
        `listing again): not sending it again.`,
    ]);
    expect(sleeps).toEqual([]);
  });

  test('a 5xx on every POST: listed again after each, never two comments, and the step goes on', async () => {
    server.faults.push({ kind: 'server-error', times: 4, operationId: 'issues/create-comment' });
    const client = clientFor();
    await expect(publish(report, options(), { client, fs, sink })).rejects.toThrow(
      couldNotWrite('GitHub answered 500: Server Error'),
    );
    expect(server.calls('issues/create-comment').map((r) => r.status)).toEqual([
      500, 500, 500, 500,
    ]);
    expect(server.requests.map((r) => `${r.method} ${r.status}`)).toEqual([
      'GET 200',
      'POST 500',
      'GET 200',
      'POST 500',
      'GET 200',
      'POST 500',
      'GET 200',
      'POST 500',
      'GET 200',
    ]);
    expect(logs[0]).toBe(
      `GitHub answered 500 to ${CREATE} (listed again: it created nothing); retrying in 1000 ms (attempt 2 of 4).`,
    );
    expect(sleeps).toEqual([1000, 2000, 4000]);
    expect(server.comments).toEqual([]);
    expectReportKept();
  });

  test('a lost answer on the nightly issue POST: one issue', async () => {
    server.faults.push({ kind: 'lost-answer', times: 1, operationId: 'issues/create' });
    const client = clientFor();
    const outcome = await publish(report, options({ mode: 'schedule', prNumber: undefined }), {
      client,
      fs,
      sink,
    });
    const issues = server.issues.filter((i) => !i.isPullRequest);
    expect(issues.map((i) => i.body)).toEqual([`${NIGHTLY_MARKER}\n${report.comment}`]);
    expect(server.calls('issues/create')).toHaveLength(1);
    expect(outcome.url).toBe(`https://github.com/acme/kernels/issues/${issues[0]?.number}`);
  });

  test('a POST that never answers and created nothing is sent again after listing', async () => {
    server.faults.push({ kind: 'hang', times: 1, operationId: 'issues/create-comment' });
    const client = clientFor({ requestTimeoutMs: 150 });
    await publish(report, options(), { client, fs, sink });
    expect(server.calls('issues/create-comment').map((r) => r.fault ?? r.status)).toEqual([
      'hang',
      201,
    ]);
    expect(logs).toEqual([
      `GitHub did not answer ${CREATE} within 0.15 s ('request-timeout') (listed again: it created nothing); ` +
        `retrying in 1000 ms (attempt 2 of 4).`,
    ]);
    expect(server.commentsOn(42).map((c) => c.body)).toEqual([BODY]);
  });
});

describe('comments that carry the marker', () => {
  test('two of its own: the oldest is updated, the newer deleted, and the log says so', async () => {
    const oldest = server.addComment(42, `${MARKER}\nfrom run 1`);
    const newer = server.addComment(42, `${MARKER}\nfrom run 2`);
    const client = clientFor();
    await publish(report, options(), { client, fs, sink });
    expect(server.commentsOn(42).map((c) => [c.id, c.body])).toEqual([[oldest.id, BODY]]);
    expect(sink.infos).toEqual([
      `Found 2 report comments of this token's account with the same marker: kept the oldest, ${oldest.id}, and ` +
        `deleted the newer one, ${newer.id}.`,
      `Updated the report comment https://github.com/acme/kernels/pull/42#issuecomment-${oldest.id}.`,
    ]);
    expect(sink.warnings).toEqual([]);
  });

  test("another user's comment with the marker is never edited or deleted, and a warning names it", async () => {
    const forged = server.addComment(42, `${MARKER}\n## kernelgate: ✅ pass (trust me)`, MALLORY);
    const client = clientFor();
    const outcome = await publish(report, options(), { client, fs, sink });
    const comments = server.commentsOn(42);
    expect(comments).toHaveLength(2);
    expect(comments[0]).toEqual(forged);
    expect(comments[0]?.body).toBe(`${MARKER}\n## kernelgate: ✅ pass (trust me)`);
    expect(comments[1]).toMatchObject({ body: BODY, user: BOT_USER });
    expect(outcome.url).toBe(
      `https://github.com/acme/kernels/pull/42#issuecomment-${comments[1]?.id}`,
    );
    expect(server.calls('issues/update-comment')).toEqual([]);
    expect(server.calls('issues/delete-comment')).toEqual([]);
    expect(sink.warnings).toEqual([
      `Comment ${forged.id} on pull request #42, by 'mallory', starts with the marker ${MARKER} but was not ` +
        `written by this token's account ('github-actions[bot]'); kernelgate neither edits nor deletes it, and ` +
        `keeps its report in one of its own.`,
    ]);
  });

  test("an older comment by another user does not displace the bot's own, which is updated", async () => {
    const forged = server.addComment(42, `${MARKER}\nforged`, MALLORY);
    const own = server.addComment(42, `${MARKER}\nlast run`);
    const client = clientFor();
    await publish(report, options(), { client, fs, sink });
    expect(server.commentsOn(42).map((c) => [c.id, c.body])).toEqual([
      [forged.id, `${MARKER}\nforged`],
      [own.id, BODY],
    ]);
    expect(server.calls('issues/update-comment').map((r) => r.path)).toEqual([
      `/repos/acme/kernels/issues/comments/${own.id}`,
    ]);
    expect(server.calls('issues/delete-comment')).toEqual([]);
    expect(sink.warnings).toHaveLength(1);
  });

  test("with a person's token, only that person's comments are kernelgate's", async () => {
    server.tokenUsers.set('pat-token', CI_USER);
    const bots = server.addComment(42, `${MARKER}\nfrom GITHUB_TOKEN`);
    const own = server.addComment(42, `${MARKER}\nfrom the PAT`, CI_USER);
    const client = clientFor({ token: 'pat-token' });
    await publish(report, options(), { client, fs, sink });
    expect(server.commentsOn(42).map((c) => [c.id, c.body])).toEqual([
      [bots.id, `${MARKER}\nfrom GITHUB_TOKEN`],
      [own.id, BODY],
    ]);
    expect(server.calls('users/get-authenticated')).toHaveLength(1);
    expect(sink.warnings).toEqual([
      `Comment ${bots.id} on pull request #42, by 'github-actions[bot]', starts with the marker ${MARKER} but was ` +
        `not written by this token's account ('ci-user'); kernelgate neither edits nor deletes it, and keeps its ` +
        `report in one of its own.`,
    ]);
  });

  test('a nightly issue opened by someone else with the marker is left open; kernelgate opens its own', async () => {
    server.issues.push({
      number: 7,
      title: 'kernelgate nightly report',
      body: `${NIGHTLY_MARKER}\nforged`,
      state: 'open',
      stateReason: null,
      labels: ['kernelgate-nightly'],
      isPullRequest: false,
      createdAt: '2026-11-21T10:00:00Z',
      user: MALLORY,
    });
    const client = clientFor();
    await publish(report, options({ mode: 'schedule', prNumber: undefined }), {
      client,
      fs,
      sink,
    });
    expect(server.issues.find((i) => i.number === 7)).toMatchObject({
      state: 'open',
      body: `${NIGHTLY_MARKER}\nforged`,
    });
    expect(server.calls('issues/create')).toHaveLength(1);
    expect(sink.warnings).toEqual([
      `Issue #7, by 'mallory', starts with the marker ${NIGHTLY_MARKER} but was not written by this token's ` +
        `account ('github-actions[bot]'); kernelgate neither edits nor deletes it, and keeps its report in one of ` +
        `its own.`,
    ]);
  });
});

describe("the nightly's alert", () => {
  const ALERT_MARKER = '<!-- kernelgate:alert:default -->';
  const nightly = () => options({ mode: 'schedule', prNumber: undefined });
  const alert =
    'kernelgate nightly at `5199432aaaaa`: ⚠️ regression: attention/triton\\_fa2 slower on 26 cases.';
  const issueOf = () => server.issues.find((i) => !i.isPullRequest);

  test('a nightly with an alert updates the issue and posts the alert as a comment, which notifies', async () => {
    await publish({ ...report, alert }, nightly(), { client: clientFor(), fs, sink });
    const issue = issueOf();
    expect(issue?.body).toBe(`${NIGHTLY_MARKER}\n${report.comment}`);
    expect(server.commentsOn(issue!.number).map((c) => c.body)).toEqual([
      `${ALERT_MARKER}\n${alert}`,
    ]);
    expect(sink.infos.at(-1)).toMatch(
      /^Posted the nightly's alert https:\/\/github\.com\/acme\/kernels\/(issues|pull)\/\d+#issuecomment-\d+\.$/,
    );
  });

  test('a clean nightly posts no comment', async () => {
    await publish(report, nightly(), { client: clientFor(), fs, sink });
    expect(server.commentsOn(issueOf()!.number)).toEqual([]);
  });

  test('an alert whose answer was lost is not posted twice', async () => {
    server.faults.push({ kind: 'lost-answer', times: 1, operationId: 'issues/create-comment' });
    await publish({ ...report, alert }, nightly(), { client: clientFor(), fs, sink });
    expect(server.commentsOn(issueOf()!.number).map((c) => c.body)).toEqual([
      `${ALERT_MARKER}\n${alert}`,
    ]);
    expect(server.calls('issues/create-comment')).toHaveLength(1);
  });
});
