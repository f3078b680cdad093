// publish() against the REST stand-in with the real Octokit client: files first, summary,
// outputs, then one sticky comment or one nightly issue, with retries and read-only tokens.
import { mkdtempSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  createGitHubClient,
  DEFAULT_RETRY_POLICY,
  retryDelayMs,
  type GitHubClient,
} from '../src/publish/index.js';
import {
  BODY_LIMIT_CHARS,
  commentBudgetChars,
  NIGHTLY_LABEL,
  publish,
  SUMMARY_LIMIT_BYTES,
  type PublishOptions,
  type PublishReport,
} from '../src/publish/index.js';
import { GitHubServer } from './support/github-server.js';

const MARKER = '<!-- kernelgate:report:default -->';
const NIGHTLY_MARKER = '<!-- kernelgate:nightly:default -->';

function report(overrides: Partial<PublishReport> = {}): PublishReport {
  return {
    verdict: 'pass',
    reasons: [],
    counts: { failed: 0, drift: 0, slower: 1, faster: 2, ambiguous: 0, new: 3, missing: 0 },
    results: { schema: 'kernelgate/results@1', cases: [] },
    full: '# kernelgate\n\nfull report\n',
    comment: '# kernelgate\n\nshort report\n',
    ...overrides,
  };
}

class Sink {
  outputs = new Map<string, string>();
  summary: string[] = [];
  warnings: string[] = [];
  infos: string[] = [];
  order: string[] = [];
  setOutput(name: string, value: string): void {
    this.order.push(`output:${name}`);
    this.outputs.set(name, value);
  }
  async appendSummary(markdown: string): Promise<void> {
    this.order.push('summary');
    this.summary.push(markdown);
  }
  warning(message: string): void {
    this.warnings.push(message);
  }
  info(message: string): void {
    this.infos.push(message);
  }
}

let server: GitHubServer;
let sink: Sink;
let sleeps: number[];
let client: GitHubClient;
let reportDir: string;

function clientFor(token: string): GitHubClient {
  return createGitHubClient({
    token,
    apiUrl: server.url,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    nowMs: () => Date.UTC(2026, 10, 21, 12, 0, 0),
    log: () => {},
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

const fs = {
  mkdir: (path: string, opts: { recursive: true }) => mkdir(path, opts),
  writeFile: (path: string, data: string) => writeFile(path, data, 'utf8'),
};

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
  server.addPullRequest({ number: 42 });
  sink = new Sink();
  sleeps = [];
  client = clientFor('write-token');
  reportDir = join(mkdtempSync(join(tmpdir(), 'kg-publish-')), 'report');
});

afterEach(async () => {
  await server.close();
  server.assertValid();
});

describe('files, summary and outputs', () => {
  test('write the files, the summary and every output before posting', async () => {
    server.beforeAnswer = () => sink.order.push('request');
    const outcome = await publish(report(), options(), { client, fs, sink });
    expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toBe(
      '# kernelgate\n\nfull report\n',
    );
    expect(JSON.parse(readFileSync(join(reportDir, 'results.json'), 'utf8'))).toEqual(
      report().results,
    );
    expect(JSON.parse(readFileSync(join(reportDir, 'verdict.json'), 'utf8'))).toEqual({
      verdict: 'pass',
      reasons: [],
      counts: report().counts,
    });
    expect(sink.summary).toEqual(['# kernelgate\n\nfull report\n']);
    expect(Object.fromEntries(sink.outputs)).toEqual({
      verdict: 'pass',
      failed: '0',
      drift: '0',
      slower: '1',
      faster: '2',
      ambiguous: '0',
      new: '3',
      missing: '0',
      'report-path': join(reportDir, 'report.md'),
      'results-path': join(reportDir, 'results.json'),
      'comment-url': outcome.url,
    });
    expect(sink.order.indexOf('summary')).toBeLessThan(sink.order.indexOf('request'));
    expect(sink.order.indexOf('output:results-path')).toBeLessThan(sink.order.indexOf('request'));
    expect(sink.order.at(-1)).toBe('output:comment-url');
  });

  test('a report over the 1 MiB summary limit puts the short report in the summary, with a warning', async () => {
    const full = 'x'.repeat(SUMMARY_LIMIT_BYTES + 1);
    const outcome = await publish(report({ full }), options({ post: false }), { client, fs, sink });
    expect(outcome.summary).toBe('short');
    expect(sink.summary).toEqual(['# kernelgate\n\nshort report\n']);
    expect(sink.warnings).toEqual([
      `The full report is ${SUMMARY_LIMIT_BYTES + 1} bytes, over the job summary's limit of ${SUMMARY_LIMIT_BYTES} bytes ` +
        `per step: the summary shows the short report; the full one is in ${join(reportDir, 'report.md')} ` +
        `(upload it as an artifact to keep it).`,
    ]);
    expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toHaveLength(
      SUMMARY_LIMIT_BYTES + 1,
    );
  });

  test('push mode posts nothing', async () => {
    const outcome = await publish(report(), options({ mode: 'push', prNumber: undefined }), {
      client,
      fs,
      sink,
    });
    expect(outcome.url).toBeUndefined();
    expect(server.requests).toEqual([]);
    expect(sink.outputs.get('comment-url')).toBe('');
  });

  test('a comment key that could break out of the HTML marker is refused', async () => {
    await expect(
      publish(report(), options({ commentKey: 'x -->' }), { client, fs, sink }),
    ).rejects.toThrow(
      "Input 'comment-key' must be 1 to 64 letters, digits, '.', '_' or '-' (it goes into a hidden HTML marker), got 'x -->'.",
    );
  });

  test('a short report over the budget is a clear error, not a rejected request', async () => {
    const comment = 'y'.repeat(commentBudgetChars('default') + 1);
    const nightly = options({ mode: 'schedule', prNumber: undefined });
    await expect(publish(report({ comment }), nightly, { client, fs, sink })).rejects.toThrow(
      `The short report is ${comment.length} characters; with its marker that is over GitHub's body limit of ${BODY_LIMIT_CHARS}.`,
    );
    expect(server.calls('issues/create')).toEqual([]);
  });
});

describe('sticky PR comment', () => {
  test('the first run creates the comment, the second updates the same one', async () => {
    const first = await publish(report(), options(), { client, fs, sink });
    const second = await publish(report({ comment: 'second run\n' }), options(), {
      client,
      fs,
      sink,
    });
    const comments = server.commentsOn(42);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body).toBe(`${MARKER}\nsecond run\n`);
    expect(second.url).toBe(first.url);
    expect(server.calls('issues/create-comment')).toHaveLength(1);
    expect(server.calls('issues/update-comment')).toHaveLength(1);
  });

  test('finds its comment on a later page and leaves other comments alone', async () => {
    server.pageSizeLimit = 25;
    for (let i = 0; i < 60; i++)
      server.addComment(42, `review comment ${i}`, { login: 'reviewer', id: 7, type: 'User' });
    server.addComment(42, `> ${MARKER}\n> quoted by a person`, {
      login: 'reviewer',
      id: 7,
      type: 'User',
    });
    server.addComment(42, '<!-- kernelgate:report:shard-2 -->\nanother shard');
    const ours = server.addComment(42, `${MARKER}\nold report`);
    await publish(report(), options(), { client, fs, sink });
    expect(server.calls('issues/list-comments').length).toBeGreaterThanOrEqual(3);
    expect(server.commentsOn(42)).toHaveLength(63);
    expect(ours.body).toBe(`${MARKER}\n# kernelgate\n\nshort report\n`);
    expect(server.calls('issues/create-comment')).toEqual([]);
  });

  test('matrix shards keep separate comments by key', async () => {
    await publish(report(), options({ commentKey: 'h100-attention' }), { client, fs, sink });
    await publish(report(), options({ commentKey: 'h100-gemm' }), { client, fs, sink });
    expect(server.commentsOn(42).map((c) => c.body.split('\n')[0])).toEqual([
      '<!-- kernelgate:report:h100-attention -->',
      '<!-- kernelgate:report:h100-gemm -->',
    ]);
  });

  test('two comments left by racing jobs: the oldest is updated, the newer deleted', async () => {
    const oldest = server.addComment(42, `${MARKER}\nfrom job A`);
    const newer = server.addComment(42, `${MARKER}\nfrom job B`);
    await publish(report(), options(), { client, fs, sink });
    expect(server.commentsOn(42).map((c) => c.id)).toEqual([oldest.id]);
    expect(server.calls('issues/delete-comment').map((r) => r.path)).toEqual([
      `/repos/acme/kernels/issues/comments/${newer.id}`,
    ]);
  });

  test('a job that races another while creating keeps the other, older comment and deletes its own', async () => {
    let raced = false;
    server.beforeAnswer = (request) => {
      if (request.operationId === 'issues/create-comment' && !raced) {
        raced = true;
        server.addComment(42, `${MARKER}\nfrom the parallel job`);
      }
    };
    const outcome = await publish(report(), options(), { client, fs, sink });
    const comments = server.commentsOn(42);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body).toBe(`${MARKER}\n# kernelgate\n\nshort report\n`);
    expect(outcome.url).toBe(
      `https://github.com/acme/kernels/pull/42#issuecomment-${comments[0]?.id}`,
    );
  });

  test('a 500 is retried with backoff and then succeeds', async () => {
    server.faults.push({ kind: 'server-error', times: 2, operationId: 'issues/create-comment' });
    await publish(report(), options(), { client, fs, sink });
    expect(server.commentsOn(42)).toHaveLength(1);
    expect(sleeps).toEqual([1000, 2000]);
    expect(server.calls('issues/create-comment').map((r) => r.status)).toEqual([500, 500, 201]);
  });

  test('429 and secondary rate limits wait as long as retry-after says', async () => {
    server.faults.push({
      kind: 'rate-limited',
      times: 1,
      operationId: 'issues/list-comments',
      retryAfterSeconds: 3,
    });
    server.faults.push({
      kind: 'secondary-rate-limit',
      times: 1,
      operationId: 'issues/create-comment',
      retryAfterSeconds: 7,
    });
    await publish(report(), options(), { client, fs, sink });
    expect(sleeps).toEqual([3000, 7000]);
    expect(server.commentsOn(42)).toHaveLength(1);
  });

  test('when retries run out the error names what failed, and the files are already written', async () => {
    server.faults.push({
      kind: 'server-error',
      times: DEFAULT_RETRY_POLICY.maxAttempts,
      operationId: 'issues/list-comments',
    });
    await expect(publish(report(), options(), { client, fs, sink })).rejects.toThrow(
      `Could not write the report comment on pull request #42: GitHub answered 500: Server Error. The ` +
        `report is in the job summary and ${join(reportDir, 'report.md')}.`,
    );
    expect(sleeps).toEqual([1000, 2000, 4000]);
    expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toBe(report().full);
    expect(sink.summary).toHaveLength(1);
  });

  test('a read-only token (fork PR) is a warning that says why and what to do, not an error', async () => {
    server.readOnlyTokens.add('fork-token');
    const outcome = await publish(report(), options(), {
      client: clientFor('fork-token'),
      fs,
      sink,
    });
    expect(outcome.url).toBeUndefined();
    expect(sink.outputs.get('comment-url')).toBe('');
    expect(sink.summary).toEqual([report().full]);
    expect(sink.warnings).toEqual([
      `Could not write the report comment on pull request #42: GitHub answered 403 "Resource not accessible by ` +
        `integration", so this run's token is read-only. A pull_request event from a fork always gets a read-only token, ` +
        `and so does a workflow without 'permissions: pull-requests: write' and 'issues: write'. The report is in the job ` +
        `summary and ${join(reportDir, 'report.md')}, and the gate's verdict still decides this step's status. To comment ` +
        `on pull requests from forks, measure in the pull_request workflow and publish from a workflow_run workflow ` +
        `(see docs/forks.md).`,
    ]);
  });

  test('no token: nothing is posted, and a warning says so', async () => {
    await publish(report(), options(), { client: undefined, fs, sink });
    expect(sink.warnings).toEqual([
      `No token was given, so the report comment on pull request #42 was not written; the report is in the job summary ` +
        `and ${join(reportDir, 'report.md')}.`,
    ]);
  });
});

describe('nightly issue', () => {
  test('the first scheduled run creates the labelled issue, the next updates it', async () => {
    const first = await publish(report(), options({ mode: 'schedule', prNumber: undefined }), {
      client,
      fs,
      sink,
    });
    const second = await publish(
      report({ comment: 'night two\n' }),
      options({ mode: 'schedule', prNumber: undefined }),
      {
        client,
        fs,
        sink,
      },
    );
    const issues = server.issues.filter((i) => !i.isPullRequest);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      title: 'kernelgate nightly report',
      labels: [NIGHTLY_LABEL],
      state: 'open',
    });
    expect(issues[0]?.body).toBe(`${NIGHTLY_MARKER}\nnight two\n`);
    expect(second.url).toBe(first.url);
    expect(server.calls('issues/list-for-repo')[0]?.query).toMatchObject({
      labels: NIGHTLY_LABEL,
      state: 'open',
    });
  });

  test('a duplicate nightly issue from a race is closed, the oldest kept', async () => {
    await publish(report(), options({ mode: 'schedule', prNumber: undefined }), {
      client,
      fs,
      sink,
    });
    const [kept] = server.issues.filter((i) => !i.isPullRequest);
    server.issues.push({
      ...kept!,
      number: 99,
      body: `${NIGHTLY_MARKER}\nrace`,
      createdAt: '2026-11-21T13:00:00Z',
    });
    await publish(report(), options({ mode: 'schedule', prNumber: undefined }), {
      client,
      fs,
      sink,
    });
    expect(server.issues.find((i) => i.number === 99)).toMatchObject({
      state: 'closed',
      stateReason: 'duplicate',
    });
    expect(kept?.state).toBe('open');
  });
  test('a 403 from a token without issues: write is a warning naming the nightly issue', async () => {
    server.faults.push({ kind: 'integration-forbidden', times: 1, operationId: 'issues/create' });
    const outcome = await publish(report(), options({ mode: 'schedule', prNumber: undefined }), {
      client,
      fs,
      sink,
    });
    expect(outcome.url).toBeUndefined();
    expect(sleeps).toEqual([]);
    expect(sink.warnings[0]).toMatch(
      /^Could not write the nightly report issue: GitHub answered 403 "Resource not accessible by integration", so this run's token is read-only\./,
    );
  });
});

describe('retryDelayMs', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);
  const rows: {
    name: string;
    status: number;
    headers: Record<string, string>;
    message: string;
    attempt: number;
    delay: number | undefined;
  }[] = [
    {
      name: '500, first failure',
      status: 500,
      headers: {},
      message: 'Server Error',
      attempt: 1,
      delay: 1000,
    },
    {
      name: '502, third failure',
      status: 502,
      headers: {},
      message: 'Bad Gateway',
      attempt: 3,
      delay: 4000,
    },
    {
      name: '500, attempts exhausted',
      status: 500,
      headers: {},
      message: 'Server Error',
      attempt: 4,
      delay: undefined,
    },
    {
      name: '429 with retry-after',
      status: 429,
      headers: { 'retry-after': '5' },
      message: 'x',
      attempt: 1,
      delay: 5000,
    },
    {
      name: '429 without retry-after',
      status: 429,
      headers: {},
      message: 'x',
      attempt: 2,
      delay: 2000,
    },
    {
      name: '403 secondary, retry-after',
      status: 403,
      headers: { 'retry-after': '2' },
      message: 'secondary rate limit',
      attempt: 1,
      delay: 2000,
    },
    {
      name: '403 secondary, no header',
      status: 403,
      headers: {},
      message: 'You have exceeded a secondary rate limit',
      attempt: 1,
      delay: 60_000,
    },
    {
      name: '403 quota exhausted, reset in 10 s',
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 10) },
      message: 'API rate limit exceeded',
      attempt: 1,
      delay: 11_000,
    },
    {
      name: '403 quota exhausted, reset in an hour: give up',
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 3600) },
      message: 'API rate limit exceeded',
      attempt: 1,
      delay: undefined,
    },
    {
      name: '403 integration',
      status: 403,
      headers: {},
      message: 'Resource not accessible by integration',
      attempt: 1,
      delay: undefined,
    },
    { name: '404', status: 404, headers: {}, message: 'Not Found', attempt: 1, delay: undefined },
    {
      name: '422',
      status: 422,
      headers: {},
      message: 'Validation Failed',
      attempt: 1,
      delay: undefined,
    },
  ];
  test.each(rows)('$name', ({ status, headers, message, attempt, delay }) => {
    expect(retryDelayMs({ status, headers, message }, attempt, DEFAULT_RETRY_POLICY, now)).toBe(
      delay,
    );
  });
});
