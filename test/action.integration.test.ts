// Runs the bundled action (node dist/index.js) as the runner does: INPUT_* variables, the event
// payload file, the GITHUB_* command files, and GITHUB_API_URL pointing at the REST stand-in.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { readInputs, resolveMode, resolvePullRequest } from '../src/action/index.js';
import { loadResults } from '../src/results/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { planShards, splitResults, unitsOfResults } from '../src/shard/index.js';
import {
  annotations,
  buildBundle,
  parseOutputs,
  runFile as run,
  type ActionRun,
} from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const fixture = (path: string): string => join(repoRoot, 'test', 'fixtures', path);
const event = (file: string): string => fixture(`events/${file}`);
const BASELINE = fixture('results/baseline.json');
const PASSING = fixture('results/aa-current.json');
const DRIFT = fixture('results/drift.json');
const MARKER = '<!-- kernelgate:report:default -->';
const SHA = '4bd3c1e0a7f94c2d8e6b5a3f2c1d0e9f8a7b6c5d';

let buildDir: string;

/** The bundle, built from src/ into a scratch folder (test/support/bundled-action.ts). */
beforeAll(async () => {
  buildDir = await buildBundle(repoRoot);
}, 120_000);

let server: GitHubServer;

async function action(opts: {
  eventName: string;
  eventFile: string;
  inputs: Record<string, string>;
  token?: string;
}): Promise<ActionRun> {
  const workspace = mkdtempSync(join(tmpdir(), 'kg-workspace-'));
  const runnerTemp = mkdtempSync(join(tmpdir(), 'kg-runner-temp-'));
  const files = {
    GITHUB_OUTPUT: 'output',
    GITHUB_STEP_SUMMARY: 'summary',
    GITHUB_STATE: 'state',
    GITHUB_ENV: 'env',
  };
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_EVENT_NAME: opts.eventName,
    GITHUB_EVENT_PATH: opts.eventFile,
    GITHUB_REPOSITORY: 'acme/kernels',
    GITHUB_SHA: SHA,
    GITHUB_REF: opts.eventName === 'pull_request' ? 'refs/pull/41/merge' : 'refs/heads/main',
    GITHUB_RUN_ID: '9100200300',
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: runnerTemp,
    GITHUB_API_URL: server.url,
    GITHUB_SERVER_URL: 'https://github.com',
    INPUT_TOKEN: opts.token ?? 'write-token',
    INPUT_CONFIG: repoRoot,
    INPUT_MODE: 'auto',
    INPUT_COMMENT: 'true',
    'INPUT_COMMENT-KEY': 'default',
    'INPUT_REPORT-DIR': '.kernelgate/report',
    'INPUT_APPROVAL-LABEL': 'kernelgate-approved',
  };
  for (const [name, file] of Object.entries(files)) {
    env[name] = join(runnerTemp, file);
    writeFileSync(env[name], '');
  }
  for (const [name, value] of Object.entries(opts.inputs))
    env[`INPUT_${name.toUpperCase()}`] = value;
  const finished = await run(process.execPath, [join(buildDir, 'dist', 'index.js')], {
    cwd: workspace,
    env,
  });
  return {
    ...finished,
    outputs: parseOutputs(readFileSync(env['GITHUB_OUTPUT']!, 'utf8')),
    summary: readFileSync(env['GITHUB_STEP_SUMMARY']!, 'utf8'),
    workspace,
  };
}

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
  server.addPullRequest({ number: 41, headSha: SHA, headLabel: 'acme:attn-tma' });
  server.addPullRequest({
    number: 42,
    headSha: SHA,
    headLabel: 'mallory:faster-attention',
    labels: ['kernelgate-approved'],
  });
  server.permissions.set('maintainer-maya', 'write');
  // The maintainer who applies the label approved the head in a review (src/action/binding.ts).
  server.addReview(42, { login: 'maintainer-maya', state: 'APPROVED', commitId: SHA });
});

afterEach(async () => {
  await server.close();
  server.assertValid();
});

afterAll(() => undefined);

const DRIFT_REASON =
  'attention/triton_fa2 dtype=bf16,B=16,H=96,S=4096,D=128,causal=false: correctness DRIFT: rel_l2 7.5e-3 > ' +
  '2 × baseline 2.6e-3 (floor 1e-4, tol 1e-2)';

describe('the bundled action', { timeout: 60_000 }, () => {
  test('the first PR run creates the comment, the second updates the same one', async () => {
    const inputs = { results: PASSING, baseline: BASELINE };
    const first = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.same-repo.opened.json'),
      inputs,
    });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const second = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.same-repo.synchronize.json'),
      inputs,
    });
    expect(second.code, second.stdout + second.stderr).toBe(0);

    const comments = server.commentsOn(41);
    expect(comments).toHaveLength(1);
    expect(comments[0]?.body.startsWith(`${MARKER}\n## kernelgate: ✅ pass`)).toBe(true);
    expect(server.calls('issues/create-comment')).toHaveLength(1);
    expect(server.calls('issues/update-comment')).toHaveLength(1);
    const url = `https://github.com/acme/kernels/pull/41#issuecomment-${comments[0]?.id}`;
    expect(first.outputs).toMatchObject({
      trusted: 'true',
      verdict: 'pass',
      failed: '0',
      drift: '0',
      'comment-url': url,
    });
    expect(second.outputs['comment-url']).toBe(url);
    const declared = parseYaml(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as {
      outputs: object;
    };
    expect(Object.keys(first.outputs).sort()).toEqual(Object.keys(declared.outputs).sort());
    expect(second.stdout).toContain(`Updated the report comment ${url}.`);
    expect(first.summary).toContain('## kernelgate: ✅ pass');
    const reportPath = join(first.workspace, '.kernelgate', 'report', 'report.md');
    expect(first.outputs['report-path']).toBe(reportPath);
    expect(readFileSync(reportPath, 'utf8')).toBe(first.summary.replace(/\n$/, ''));
    expect(server.requests.every((r) => r.authorization === 'token write-token')).toBe(true);
  });

  test('drift fails the step with the reason, in the message and the summary', async () => {
    const result = await action({
      eventName: 'push',
      eventFile: event('push.main.json'),
      inputs: { results: DRIFT, baseline: BASELINE },
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      `kernelgate: the gate failed (1 reason):\n- ${DRIFT_REASON}`,
    ]);
    expect(result.summary).toContain('## kernelgate: ❌ fail');
    expect(result.summary).toContain(
      '## kernelgate: ❌ fail: attention/triton\\_fa2 drift on 1 case',
    );
    expect(result.summary).toContain(
      "- 🌊 **attention/triton\\_fa2** error grew on 1 of 5 cases: rel\\_l2 2.8× the baseline's (or the base revision's). " +
        'E.g. dtype=bf16,B=16,H=96,S=4096,D=128,causal=false: rel\\_l2 7.5e-3 &gt; 2 × baseline 2.6e-3 (floor 1e-4, tol 1e-2)',
    );
    expect(result.outputs).toMatchObject({ verdict: 'fail', drift: '1', 'comment-url': '' });
    expect(server.requests).toEqual([]);
  });

  test('a 500 is retried and the comment is then written', async () => {
    server.faults.push({ kind: 'server-error', times: 1, operationId: 'issues/create-comment' });
    const result = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.same-repo.opened.json'),
      inputs: { results: PASSING, baseline: BASELINE },
    });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain(
      'GitHub answered 500 to POST /repos/{owner}/{repo}/issues/{issue_number}/comments (listed again: it created ' +
        'nothing); retrying in 1000 ms (attempt 2 of 4).',
    );
    expect(server.calls('issues/create-comment').map((r) => r.status)).toEqual([500, 201]);
    expect(server.commentsOn(41)).toHaveLength(1);
  });

  test("a fork PR's read-only token: the report stays in the summary, a warning says why, the gate decides", async () => {
    server.readOnlyTokens.add('fork-token');
    const result = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.fork.labeled.json'),
      inputs: { results: DRIFT, baseline: BASELINE },
      token: 'fork-token',
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      `kernelgate: the gate failed (1 reason):\n- ${DRIFT_REASON}`,
    ]);
    const reportPath = join(result.workspace, '.kernelgate', 'report', 'report.md');
    expect(annotations(result.stdout, 'warning')).toContain(
      `Could not write the report comment on pull request #42: GitHub answered 403 "Resource not accessible by ` +
        `integration", so this run's token is read-only. A pull_request event from a fork always gets a read-only token, ` +
        `and so does a workflow without 'permissions: pull-requests: write' and 'issues: write'. The report is in the job ` +
        `summary and ${reportPath}, and the gate's verdict still decides this step's status. To comment ` +
        `on pull requests from forks, measure in the pull_request workflow and publish from a workflow_run workflow ` +
        `(see docs/forks.md).`,
    );
    expect(result.summary).toContain('## kernelgate: ❌ fail');
    expect(server.commentsOn(42)).toEqual([]);
    expect(result.outputs).toMatchObject({ trusted: 'true', verdict: 'fail', 'comment-url': '' });
  });

  test('a schedule run creates the nightly issue, the next one updates it', async () => {
    const inputs = { results: PASSING, baseline: BASELINE };
    const first = await action({
      eventName: 'schedule',
      eventFile: event('schedule.json'),
      inputs,
    });
    const second = await action({
      eventName: 'schedule',
      eventFile: event('schedule.json'),
      inputs,
    });
    expect([first.code, second.code]).toEqual([0, 0]);
    const issues = server.issues.filter((i) => !i.isPullRequest);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      title: 'kernelgate nightly report',
      labels: ['kernelgate-nightly'],
      state: 'open',
    });
    expect(issues[0]?.body.startsWith('<!-- kernelgate:nightly:default -->\n')).toBe(true);
    expect(server.calls('issues/create')).toHaveLength(1);
    expect(server.calls('issues/update')).toHaveLength(1);
    expect(second.outputs['comment-url']).toBe(
      `https://github.com/acme/kernels/issues/${issues[0]?.number}`,
    );
  });

  test('the workflow_run after a fork PR finds the PR from its head and comments on it', async () => {
    const result = await action({
      eventName: 'workflow_run',
      eventFile: event('workflow_run.fork.json'),
      inputs: { results: PASSING, baseline: BASELINE },
    });
    expect(result.code, result.stdout).toBe(0);
    expect(server.calls('pulls/list')[0]?.query).toMatchObject({
      head: 'mallory:faster-attention',
      state: 'open',
    });
    expect(server.commentsOn(42)).toHaveLength(1);
  });

  test('an untrusted fork PR without the label is refused before anything is judged', async () => {
    const result = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.fork.opened.json'),
      inputs: { results: PASSING, baseline: BASELINE },
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      "Refusing to run: pull request #42 comes from the fork 'mallory/kernels', and fork code runs on this GPU runner " +
        "only after a maintainer's approval. A maintainer should review the changes and apply the label 'kernelgate-approved'.",
    ]);
    expect(result.outputs).toEqual({ trusted: 'false' });
    expect(result.summary).toBe('');
    expect(server.requests).toEqual([]);
  });

  test('a bad input is refused with its name and value', async () => {
    const result = await action({
      eventName: 'push',
      eventFile: event('push.main.json'),
      inputs: { results: PASSING, mode: 'nightly' },
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      "Input 'mode' must be one of auto, pr, push, schedule; got 'nightly'.",
    ]);
  });
});

describe('a bad day at GitHub: the verdict decides the exit status', { timeout: 60_000 }, () => {
  const PR_EVENT = event('pull_request.same-repo.opened.json');
  // The recorded A/A results have gate warnings of their own (AMBIGUOUS cases): only these count.
  const publishing = (result: ActionRun): string[] =>
    annotations(result.stdout, 'warning').filter((w) => w.startsWith('Could not'));
  const reportOf = (result: ActionRun): string =>
    join(result.workspace, '.kernelgate', 'report', 'report.md');
  const advice = (verdict: string): string =>
    ` This step's status is the gate's verdict (${verdict}); set 'fail-on-publish-error: true' to fail it when publishing fails.`;

  test('an API that accepts the connection and never answers: the step ends within its budget, on the verdict', async () => {
    const run = () =>
      action({
        eventName: 'pull_request',
        eventFile: PR_EVENT,
        inputs: {
          results: PASSING,
          baseline: BASELINE,
          'request-timeout': '0.2',
          'publish-timeout': '2',
        },
      });
    // The same step against an API that answers: starting node and judging, on this machine now.
    let started = Date.now();
    expect((await run()).code).toBe(0);
    const answeredMs = Date.now() - started;
    server.requests.length = 0;
    server.faults.push({ kind: 'hang', times: 1000 });
    started = Date.now();
    const result = await run();
    const elapsedMs = Date.now() - started;
    expect(result.code, result.stdout).toBe(0);
    // the publishing budget (2 s) beyond the answered step, with a margin for a loaded machine
    expect(elapsedMs - answeredMs).toBeLessThan(2000 + 4000);
    expect(annotations(result.stdout, 'error')).toEqual([]);
    expect(publishing(result)).toEqual([
      `Could not write the report comment on pull request #41: GitHub did not answer GET ` +
        `/repos/acme/kernels/issues/41/comments?per_page=100 within 0.2 s ('request-timeout'); the next attempt, ` +
        `in 2000 ms, would start after the end of the publishing budget of 2 s ('publish-timeout'). The report is ` +
        `in the job summary and ${reportOf(result)}.` +
        advice('pass'),
    ]);
    expect(result.summary).toContain('## kernelgate: ✅ pass');
    expect(readFileSync(reportOf(result), 'utf8')).toContain('## kernelgate: ✅ pass');
    expect(result.outputs).toMatchObject({ verdict: 'pass', 'comment-url': '' });
    expect(server.requests.map((r) => r.fault)).toEqual(['hang', 'hang']);
  });

  test('a persistent 5xx: exit status = verdict (pass), the report in the summary, no comment', async () => {
    server.faults.push({ kind: 'server-error', times: 4, operationId: 'issues/create-comment' });
    const result = await action({
      eventName: 'pull_request',
      eventFile: PR_EVENT,
      inputs: { results: PASSING, baseline: BASELINE },
    });
    expect(result.code, result.stdout).toBe(0);
    expect(publishing(result)).toEqual([
      `Could not write the report comment on pull request #41: GitHub answered 500: Server Error. The report is ` +
        `in the job summary and ${reportOf(result)}.` +
        advice('pass'),
    ]);
    expect(result.summary).toContain('## kernelgate: ✅ pass');
    expect(server.calls('issues/create-comment').map((r) => r.status)).toEqual([
      500, 500, 500, 500,
    ]);
    expect(server.comments).toEqual([]);
  });

  test('a persistent 5xx with a failing verdict: the step fails for the gate, not for GitHub', async () => {
    server.faults.push({ kind: 'server-error', times: 4, operationId: 'issues/list-comments' });
    const result = await action({
      eventName: 'pull_request',
      eventFile: PR_EVENT,
      inputs: { results: DRIFT, baseline: BASELINE },
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      `kernelgate: the gate failed (1 reason):\n- ${DRIFT_REASON}`,
    ]);
    expect(publishing(result)).toContain(
      `Could not write the report comment on pull request #41: GitHub answered 500: Server Error. The report is ` +
        `in the job summary and ${reportOf(result)}.` +
        advice('fail'),
    );
  });

  test('fail-on-publish-error: true makes a publishing failure fail the step', async () => {
    server.faults.push({ kind: 'hang', times: 1000 });
    const result = await action({
      eventName: 'pull_request',
      eventFile: PR_EVENT,
      inputs: {
        results: PASSING,
        baseline: BASELINE,
        'request-timeout': '0.2',
        'publish-timeout': '0.5',
        'fail-on-publish-error': 'true',
      },
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      `Could not write the report comment on pull request #41: GitHub did not answer GET ` +
        `/repos/acme/kernels/issues/41/comments?per_page=100 within 0.2 s ('request-timeout'); the next attempt, ` +
        `in 1000 ms, would start after the end of the publishing budget of 0.5 s ('publish-timeout'). The report ` +
        `is in the job summary and ${reportOf(result)}.`,
    ]);
    expect(publishing(result)).toEqual([]);
    expect(result.outputs).toMatchObject({ verdict: 'pass', 'comment-url': '' });
  });

  test('a comment POST whose answer is lost: one comment, the step passes', async () => {
    server.faults.push({ kind: 'lost-answer', times: 1, operationId: 'issues/create-comment' });
    const result = await action({
      eventName: 'pull_request',
      eventFile: PR_EVENT,
      inputs: { results: PASSING, baseline: BASELINE },
    });
    expect(result.code, result.stdout).toBe(0);
    const comments = server.commentsOn(41);
    expect(comments).toHaveLength(1);
    expect(server.calls('issues/create-comment')).toHaveLength(1);
    expect(result.outputs['comment-url']).toBe(
      `https://github.com/acme/kernels/pull/41#issuecomment-${comments[0]?.id}`,
    );
    expect(publishing(result)).toEqual([]);
  });

  test('the workflow_run that cannot find its pull request for a 5xx: a warning, the verdict decides', async () => {
    server.faults.push({ kind: 'server-error', times: 4, operationId: 'pulls/list' });
    const result = await action({
      eventName: 'workflow_run',
      eventFile: event('workflow_run.fork.json'),
      inputs: { results: PASSING, baseline: BASELINE },
    });
    expect(result.code, result.stdout).toBe(0);
    expect(publishing(result)).toEqual([
      `Could not find the pull request to comment on: GitHub answered 500: Server Error. The report is in the ` +
        `job summary and ${reportOf(result)}.` +
        advice('pass'),
    ]);
    expect(result.summary).toContain('## kernelgate: ✅ pass');
    expect(server.comments).toEqual([]);
  });
});

/**
 * A run split over three matrix jobs, merged by the bundled action: the shards are the recorded
 * paired H100 run split by kernelgate's own shard function; shard 2 never uploaded its results
 * and shard 3's harness died before its last two cases.
 */
describe('merging shards (issue 14)', { timeout: 120_000 }, () => {
  const RECORDED = fixture('recorded/paired-slow2-h100/results.json.gz');
  const recorded = loadResults(RECORDED);
  const plan = planShards(unitsOfResults(recorded), 3, { results: recorded, path: RECORDED });
  const shardDir = (docs: Record<number, KernelgateResults>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-shards-'));
    for (const [index, doc] of Object.entries(docs)) {
      mkdirSync(join(dir, `kernelgate-shard-${index}`));
      writeFileSync(join(dir, `kernelgate-shard-${index}`, 'results.json'), JSON.stringify(doc));
    }
    return dir;
  };
  const pr = { eventName: 'pull_request', eventFile: event('pull_request.same-repo.opened.json') };

  test('a shard that did not report and one that failed: the comment names them, the step fails', async () => {
    const third = splitResults(recorded, plan, 3);
    const lost = (plan.shards[2] as string[]).slice(-2);
    const dying: KernelgateResults = {
      ...third,
      diagnostics: [
        ...third.diagnostics,
        {
          level: 'error',
          code: 'harness.exit',
          message:
            'The harness exited with status 137; the cases it finished are judged. Last lines:\nKilled',
          source: 'harness',
        },
      ],
      cases: third.cases.filter((c) => !lost.includes(`${c.kernel}/${c.case}`)),
    };
    const dir = shardDir({ 1: splitResults(recorded, plan, 1), 3: dying });
    const result = await action({ ...pr, inputs: { merge: dir, shards: '3' } });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const owned2 = plan.shards[1] as string[];
    const missing = `shard 2/3 did not report: no results for cases ${owned2.slice(0, 6).join(', ')}${owned2.length > 6 ? ` and ${owned2.length - 6} more` : ''}`;
    const failed = `shard 3/3 failed: The harness exited with status 137; the cases it finished are judged.; no results for cases ${lost.join(', ')}`;
    const [error] = annotations(result.stdout, 'error');
    expect(error).toContain(`\n- ${missing}\n- ${failed}`);
    const comments = server.commentsOn(41);
    expect(comments).toHaveLength(1);
    const body = comments[0]?.body ?? '';
    expect(body).toContain(
      `${MARKER}\n## kernelgate: ❌ fail: shard 2/3 did not report, shard 3/3 failed`,
    );
    expect(body).toContain(`- 🧩 ${missing.replace(/_/g, '\\_')}`);
    expect(body).toContain('🧩 shard 3/3 failed');
    expect(result.outputs['verdict']).toBe('fail');
    const merged = loadResults(join(result.workspace, '.kernelgate/report/merge/results.json'));
    expect(merged.run.shards?.map((s) => s.status)).toEqual(['ok', 'missing', 'failed']);
  });

  test('all three shards merged: the verdict of the run judged whole', async () => {
    const whole = await action({ ...pr, inputs: { results: RECORDED } });
    const title = () => server.commentsOn(41)[0]?.body.split('\n')[1];
    const wholeTitle = title();
    expect(wholeTitle).toMatch(/^## kernelgate: /);
    const dir = shardDir({
      1: splitResults(recorded, plan, 1),
      2: splitResults(recorded, plan, 2),
      3: splitResults(recorded, plan, 3),
    });
    const merged = await action({ ...pr, inputs: { merge: dir, shards: '3' } });
    expect(merged.code, merged.stdout + merged.stderr).toBe(whole.code);
    for (const name of ['verdict', 'failed', 'slower', 'faster', 'new', 'missing'])
      expect(merged.outputs[name], name).toBe(whole.outputs[name]);
    // The sticky comment, updated by the merge: the same title as the whole run's.
    expect(title()).toBe(wholeTitle);
  });

  test('merge without shards is refused by name', async () => {
    const result = await action({ ...pr, inputs: { merge: 'shards' } });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      "Input 'merge' is 'shards', but 'shards' is empty: the merge must know how many shards to expect, or a shard that never reported would go unnoticed.",
    ]);
  });
});

describe('action.yml', () => {
  const manifest = parseYaml(readFileSync(join(repoRoot, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { description: string; default?: string }>;
    outputs: Record<string, { description: string }>;
    runs: { using: string; main: string };
  };

  test('declares exactly the inputs the action reads, each described', () => {
    const read: string[] = [];
    readInputs((name) => {
      read.push(name);
      return name === 'results' ? 'results.json' : (manifest.inputs[name]?.default ?? '');
    });
    expect([...read].sort()).toEqual(Object.keys(manifest.inputs).sort());
    for (const [name, input] of Object.entries(manifest.inputs))
      expect(input.description, name).not.toBe('');
  });

  test('runs the bundle on node24', () => {
    expect(manifest.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
  });
});

describe('inputs and event, in process', () => {
  const inputs = (values: Record<string, string>) => (name: string) => values[name] ?? '';

  test.each([
    [{ results: 'r.json', comment: 'yes' }, "Input 'comment' must be true or false, got 'yes'."],
    [
      { results: 'r.json', 'trust-only': '1' },
      "Input 'trust-only' must be true or false, got '1'.",
    ],
    [
      { results: 'r.json', mode: 'nightly' },
      "Input 'mode' must be one of auto, pr, push, schedule; got 'nightly'.",
    ],
    [
      { results: 'r.json', 'pr-number': '#42' },
      "Input 'pr-number' must be a pull request number (a positive whole number), got '#42'.",
    ],
    [
      { results: 'r.json', 'comment-key': 'h100 attention' },
      "Input 'comment-key' must be 1 to 64 letters, digits, '.', '_' or '-' (it goes into a hidden HTML marker), got 'h100 attention'.",
    ],
    [
      { kernels: 'attention, ../etc' },
      "Input 'kernels' must list kernel folder names (a-z, 0-9, _), separated by commas; got '../etc'.",
    ],
    [
      { 'save-baseline': 'yes' },
      "Input 'save-baseline' must be one of auto, true, false, always; got 'yes'.",
    ],
    [
      { 'request-timeout': '0' },
      "Input 'request-timeout' must be a number of seconds greater than 0, got '0'.",
    ],
    [
      { 'git-timeout': 'never' },
      "Input 'git-timeout' must be a number of seconds greater than 0, got 'never'.",
    ],
    [
      { 'publish-timeout': '2m' },
      "Input 'publish-timeout' must be a number of seconds greater than 0, got '2m'.",
    ],
    [
      { 'dashboard-url': 'gh-pages' },
      "Input 'dashboard-url' must be an https:// address with no spaces, quotes or brackets, got 'gh-pages'.",
    ],
    [
      { 'fail-on-publish-error': 'maybe' },
      "Input 'fail-on-publish-error' must be true or false, got 'maybe'.",
    ],
  ])('%j is refused', (values, message) => {
    expect(() => readInputs(inputs(values))).toThrow(message);
  });

  test('defaults', () => {
    expect(readInputs(inputs({ results: 'r.json' }))).toEqual({
      results: 'r.json',
      kernels: [],
      baselineDir: '.kernelgate/baselines',
      history: { kind: 'dir', branch: 'kernelgate-data', remote: undefined },
      saveBaseline: 'auto',
      baseline: undefined,
      config: '.',
      token: undefined,
      mode: 'auto',
      comment: true,
      commentKey: 'default',
      reportDir: '.kernelgate/report',
      approvalLabel: 'kernelgate-approved',
      prNumber: undefined,
      profile: 'auto',
      profileTimeBoxS: 120,
      trustOnly: false,
      paired: 'auto',
      basePath: undefined,
      requestTimeoutMs: 30_000,
      gitTimeoutMs: 120_000,
      publishTimeoutMs: 120_000,
      failOnPublishError: false,
      shard: { shard: undefined, balance: 'baseline', merge: undefined, shards: undefined },
      deep: [],
    });
    expect(readInputs(inputs({ shard: '2/3', 'shard-balance': 'estimate' })).shard).toEqual({
      shard: { index: 2, count: 3 },
      balance: 'estimate',
      merge: undefined,
      shards: undefined,
    });
    expect(() => readInputs(inputs({ shard: '2 of 3' }))).toThrow(
      "Input 'shard' must be i/n (shard i of n, counted from 1), got '2 of 3'.",
    );
    expect(() => readInputs(inputs({ merge: 'shards', shards: 'three' }))).toThrow(
      "Input 'shards' must be a whole number from 1 to 256; got 'three'.",
    );
    expect(() => readInputs(inputs({ shard: '1/2', merge: 'shards', shards: '2' }))).toThrow(
      "Inputs 'shard' and 'merge' are both set: a step either measures a shard or merges them.",
    );
    expect(
      readInputs(
        inputs({
          'request-timeout': '0.5',
          'publish-timeout': '90',
          'fail-on-publish-error': 'true',
        }),
      ),
    ).toMatchObject({ requestTimeoutMs: 500, publishTimeoutMs: 90_000, failOnPublishError: true });
    expect(() => readInputs(inputs({ paired: 'sometimes' }))).toThrow(
      "Input 'paired' must be one of auto, true, false; got 'sometimes'.",
    );
    expect(readInputs(inputs({ 'trust-only': 'true' }))).toMatchObject({
      results: undefined,
      trustOnly: true,
    });
  });

  test.each([
    ['pull_request', 'pull_request.same-repo.opened.json', 'pr'],
    ['pull_request_target', 'pull_request_target.fork.labeled.json', 'pr'],
    ['workflow_run', 'workflow_run.fork.json', 'pr'],
    ['schedule', 'schedule.json', 'schedule'],
    ['push', 'push.main.json', 'push'],
    ['workflow_dispatch', 'workflow_dispatch.json', 'push'],
  ])('mode auto for %s is %s', (name, file, mode) => {
    const payload: unknown = JSON.parse(readFileSync(event(file), 'utf8'));
    expect(resolveMode('auto', { name, payload, repository: 'acme/kernels' })).toBe(mode);
  });

  test('an explicit mode wins over the event', () => {
    expect(
      resolveMode('push', { name: 'pull_request', payload: {}, repository: 'acme/kernels' }),
    ).toBe('push');
  });

  test('the PR number comes from the input, the payload, or the workflow_run', async () => {
    const base = readInputs(inputs({ results: 'r.json' }));
    const load = (file: string): unknown => JSON.parse(readFileSync(event(file), 'utf8'));
    const pr = {
      name: 'pull_request',
      payload: load('pull_request.same-repo.opened.json'),
      repository: 'acme/kernels',
    };
    expect(await resolvePullRequest(base, pr, undefined)).toBe(41);
    expect(await resolvePullRequest({ ...base, prNumber: 7 }, pr, undefined)).toBe(7);
    const run = {
      name: 'workflow_run',
      payload: load('workflow_run.same-repo.json'),
      repository: 'acme/kernels',
    };
    expect(await resolvePullRequest(base, run, undefined)).toBe(41);
    const forkRun = {
      name: 'workflow_run',
      payload: load('workflow_run.fork.json'),
      repository: 'acme/kernels',
    };
    expect(await resolvePullRequest(base, forkRun, undefined)).toBeUndefined();
  });
});

describe('trust-only', { timeout: 60_000 }, () => {
  test('an approved fork PR passes the trust check and stops there', async () => {
    const result = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.fork.labeled.json'),
      inputs: { 'trust-only': 'true' },
    });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain(
      "Trusted: pull request #42 from the fork 'mallory/kernels' was approved by 'maintainer-maya' (write) for this commit, " +
        'approved in a review of 4bd3c1e.',
    );
    expect(result.outputs).toEqual({ trusted: 'true', 'approved-sha': SHA });
    expect(server.calls('repos/get-collaborator-permission-level')).toHaveLength(1);
    expect(server.calls('pulls/list-reviews').map((r) => r.path)).toEqual([
      '/repos/acme/kernels/pulls/42/reviews',
    ]);
  });

  test('a push seconds before the label is not approved unseen: refused, the approved commit named', async () => {
    // The maintainer approved SHA in a review; the fork pushed PUSHED; the label came after it.
    const PUSHED = '9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807';
    const payload = JSON.parse(
      readFileSync(event('pull_request_target.fork.labeled.json'), 'utf8'),
    );
    payload.pull_request.head.sha = PUSHED;
    const file = join(mkdtempSync(join(tmpdir(), 'kg-event-')), 'event.json');
    writeFileSync(file, JSON.stringify(payload));
    const result = await action({
      eventName: 'pull_request_target',
      eventFile: file,
      inputs: { 'trust-only': 'true' },
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      "Refusing to run: the label 'kernelgate-approved' was applied to pull request #42 by 'maintainer-maya' while its " +
        "head was 9e8d7c6, but 'maintainer-maya' approved 4bd3c1e in a review, not 9e8d7c6; an approval covers only the " +
        'commit its maintainer reviewed, and a commit pushed moments before the label would run unreviewed. ' +
        `'maintainer-maya' should review the newest commit, ${PUSHED}, approve it in a review of the pull request (or ` +
        `comment 'kernelgate-approve ${PUSHED}'), then remove and re-apply the label 'kernelgate-approved'.`,
    ]);
    expect(result.outputs).toEqual({ trusted: 'false' });
  });

  test('a new push to an approved fork PR is refused and the stale label removed', async () => {
    const result = await action({
      eventName: 'pull_request',
      eventFile: event('pull_request.fork.synchronize-approved.json'),
      inputs: { 'trust-only': 'true' },
    });
    expect(result.code).toBe(1);
    expect(annotations(result.stdout, 'error')).toEqual([
      "Refusing to run: pull request #42 from the fork 'mallory/kernels' received new commits (head 9e8d7c6) after the " +
        "label 'kernelgate-approved' was applied, so the approval is stale. A maintainer should re-review the changes " +
        "and re-apply the label 'kernelgate-approved'.",
    ]);
    expect(server.issues.find((i) => i.number === 42)?.labels).toEqual([]);
  });
});
