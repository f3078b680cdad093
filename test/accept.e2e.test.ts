// Blocking chosen knowingly (issue 32), through the action (src, in process) against the GitHub
// stand-in and a data branch in a bare git repository: under `fail_on_slower: true` the recorded
// planted slowdown (slowed against main-1355, H200, 26 SLOWER) fails a pull request and its comment
// says how to accept it; the label `kernelgate-accept`, applied by alice, lets it pass and says who
// accepted; the push of the merge reads the label from the merged pull request, passes and records
// the acceptance on the data branch; the next nightly's issue names it. A correctness failure is
// never accepted.
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync, type PathLike } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, type RunDeps } from '../src/action/index.js';
import { createGitHubClient } from '../src/publish/index.js';
import { readResultsText } from '../src/results/index.js';
import { bareRemote, git } from './support/git-remote.js';
import { GitHubServer } from './support/github-server.js';
import { ROOT } from './support/recorded.js';

// A copy of the recorded results: the action writes what it adds (the acceptance, the nightly's
// records) into the results file it is given, and a fixture must stay as recorded.
const recorded = (name: string) => {
  const copy = join(mkdtempSync(join(tmpdir(), `kg-accept-${name}-`)), 'results.json');
  writeFileSync(
    copy,
    readResultsText(join(ROOT, 'test/fixtures/recorded', name, 'results.json.gz')),
  );
  return copy;
};
const events = (file: string) =>
  JSON.parse(readFileSync(join(ROOT, 'test/fixtures/events', file), 'utf8')) as Record<
    string,
    unknown
  >;
const MERGE_SHA = '5e1f0c0ffee0000000000000000000000000beef';
/** The commit of the H100 recordings of 2026-11-27 (runs 83-86). */
const H100_SHA = '0504f3669cba3f094d4e1bb55b06563ef5737530';
const BRANCH = 'kernelgate-data';

/** kernelgate.yml with fail_on_slower: true, beside the repository's kernels (a link). */
function blockingConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kg-accept-config-'));
  const text = readFileSync(join(ROOT, 'kernelgate.yml'), 'utf8');
  const blocking = text.replace('fail_on_slower: false', 'fail_on_slower: true');
  expect(blocking).not.toBe(text);
  writeFileSync(join(dir, 'kernelgate.yml'), blocking);
  symlinkSync(join(ROOT, 'kernels'), join(dir, 'kernels'));
  return dir;
}

function eventFile(payload: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'kg-accept-event-')), 'event.json');
  writeFileSync(path, JSON.stringify(payload));
  return path;
}

/** A same-repository pull request's event (#41, the fixture's, unless `number`), with these labels and action. */
function prEvent(labels: string[], action = 'synchronize', number?: number): string {
  const payload = events('pull_request.same-repo.opened.json');
  const pr = payload['pull_request'] as Record<string, unknown>;
  return eventFile({
    ...payload,
    action,
    ...(number === undefined ? {} : { number }),
    pull_request: {
      ...pr,
      ...(number === undefined ? {} : { number }),
      labels: labels.map((name, id) => ({ id, name })),
    },
  });
}

describe('accepting a performance regression: kernelgate-accept', { timeout: 120_000 }, () => {
  const server = new GitHubServer();
  const config = blockingConfig();
  let remote = '';

  beforeAll(async () => {
    await server.start();
    remote = bareRemote().remote;
  });
  afterAll(() => server.close());

  async function action(opts: {
    eventName: string;
    eventFile: PathLike;
    ref: string;
    sha: string;
    results: string;
    runId: string;
  }) {
    const workspace = mkdtempSync(join(tmpdir(), 'kg-accept-ws-'));
    const outputs: Record<string, string> = {};
    const warnings: string[] = [];
    const failed: string[] = [];
    const inputs: Record<string, string> = {
      config,
      token: 'test-token',
      results: opts.results,
      history: 'branch',
      'history-remote': remote,
      'report-dir': '.kernelgate/report',
    };
    const deps: RunDeps = {
      core: {
        getInput: (name) => inputs[name] ?? '',
        setOutput: (name, value) => {
          outputs[name] = value;
        },
        setFailed: (message) => failed.push(message),
        warning: (message) => warnings.push(message),
        info: () => undefined,
        appendSummary: async () => undefined,
        annotate: () => undefined,
      },
      env: {
        GITHUB_EVENT_NAME: opts.eventName,
        GITHUB_EVENT_PATH: String(opts.eventFile),
        GITHUB_REPOSITORY: 'acme/kernels',
        GITHUB_SHA: opts.sha,
        GITHUB_REF: opts.ref,
        GITHUB_RUN_ID: opts.runId,
        GITHUB_RUN_ATTEMPT: '1',
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_WORKSPACE: workspace,
        RUNNER_TEMP: mkdtempSync(join(tmpdir(), 'kg-accept-temp-')),
      },
      createClient: (token, limits) =>
        createGitHubClient({
          token,
          apiUrl: server.url,
          requestTimeoutMs: limits.requestTimeoutMs,
          budget: limits.budget,
          retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
          sleep: async () => undefined,
          nowMs: () => Date.now(),
          log: () => undefined,
        }),
      fs: { mkdir, writeFile: (path, data) => writeFile(path, data, 'utf8') },
      measure: async () => {
        throw new Error('this test judges results given as an input');
      },
    };
    await run(deps);
    const verdict = JSON.parse(
      readFileSync(join(workspace, '.kernelgate/report/verdict.json'), 'utf8'),
    ) as { verdict: string; accepted?: unknown };
    return { outputs, warnings, failed, verdict };
  }

  /** Pull request #number's run on these results (#41 at its fixture's head unless told). */
  const prOn = (
    number: number,
    labels: string[],
    results: string,
    runId: string,
    sha = '4bd3c1e0a7f94c2d8e6b5a3f2c1d0e9f8a7b6c5d',
  ) =>
    action({
      eventName: 'pull_request',
      eventFile: prEvent(labels, 'synchronize', number === 41 ? undefined : number),
      ref: `refs/pull/${number}/merge`,
      sha,
      results,
      runId,
    });
  const pr = (labels: string[], results = recorded('slowed')) => prOn(41, labels, results, '201');
  const comment = () => server.commentsOn(41).at(-1)?.body ?? '';

  it('blocks, is accepted by the label, is stored as accepted, and the nightly names it', async () => {
    server.addPullRequest({ number: 41, headSha: '4bd3c1e0a7f94c2d8e6b5a3f2c1d0e9f8a7b6c5d' });
    const main = await action({
      eventName: 'push',
      eventFile: join(ROOT, 'test/fixtures/events/push.main.json'),
      ref: 'refs/heads/main',
      sha: '922981b55e5be865b9de1af52ee525b8949ba0e7',
      results: recorded('main-1355'),
      runId: '200',
    });
    expect(main.failed).toEqual([]);

    // No label: the planted slowdown blocks, and the comment says how to accept it.
    const blocked = await pr([]);
    expect(blocked.outputs['verdict']).toBe('fail');
    expect(blocked.failed[0]).toMatch(/^kernelgate: the gate failed \(26 reasons\):/);
    expect(comment()).toContain(
      '- Policy: blocking; add the label `kernelgate-accept` to accept the 26 SLOWER cases (performance only: correctness failures cannot be accepted).',
    );

    // alice applies the label; the next run (a push to the pull request) reads who from its events.
    server.applyLabel(41, 'kernelgate-accept', 'alice');
    const accepted = await pr(['kernelgate-accept']);
    expect(accepted.failed).toEqual([]);
    expect(accepted.outputs['verdict']).toBe('pass');
    expect(accepted.verdict.accepted).toEqual({
      label: 'kernelgate-accept',
      by: 'alice',
      pr: 41,
      cases: 26,
    });
    expect(comment().split('\n')[1]).toBe(
      '## kernelgate: ⚠️ regression (accepted): attention/triton\\_fa2 slower on 26 cases · PR #41',
    );
    expect(comment()).toContain(
      '- Policy: blocking; accepted by @&#8203;alice with the label `kernelgate-accept`, so the 26 SLOWER cases pass (an acceptance never covers correctness).',
    );

    // The merge's push: its commit came from #41, which carries the label: stored as accepted.
    const issue = server.issues.find((i) => i.number === 41)!;
    issue.mergedAt = '2026-11-21T14:02:00Z';
    issue.commits = [MERGE_SHA];
    const merged = await action({
      eventName: 'push',
      eventFile: join(ROOT, 'test/fixtures/events/push.main.json'),
      ref: 'refs/heads/main',
      sha: MERGE_SHA,
      results: recorded('slowed'),
      runId: '202',
    });
    expect(merged.failed).toEqual([]);
    expect(merged.outputs['verdict']).toBe('pass');
    const stored = merged.outputs['stored']!.replace(`${BRANCH}:`, '');
    const record = JSON.parse(git(['--git-dir', remote, 'show', `refs/heads/${BRANCH}:${stored}`]));
    expect(record.run.accepted).toEqual({
      label: 'kernelgate-accept',
      by: 'alice',
      pr: 41,
      cases: 26,
    });

    // The next nightly's issue names the accepted regression.
    const nightly = await action({
      eventName: 'schedule',
      eventFile: join(ROOT, 'test/fixtures/events/schedule.json'),
      ref: 'refs/heads/main',
      sha: MERGE_SHA,
      results: recorded('nightly'),
      runId: '203',
    });
    expect(nightly.failed).toEqual([]);
    const body = server.issues.find((i) => i.labels.includes('kernelgate-nightly'))?.body ?? '';
    expect(body).toContain(
      '**Accepted regressions since last night:**\n\n' +
        '- pull request #41, accepted by @&#8203;alice with the label `kernelgate-accept`: 26 SLOWER cases passed at ' +
        '[`922981b55e5b`](https://github.com/acme/kernels/commit/922981b55e5be865b9de1af52ee525b8949ba0e7) (2026-11-21T14:01:11Z)\n',
    );
    server.assertValid();
  });

  it('on two H100s (runs 83, 84, 86): blocks without the label, passes with it as the machine posted, is stored as accepted, and the nightly names it', async () => {
    // Recorded 2026-11-27 01:27-01:32 UTC on the device tool's nvidia-h100-x2 (2 × H100 80GB HBM3,
    // 0504f36): `go.sh xa 560 accept`, triton_fa2 planted 2 % slower in the head, under
    // fail_on_slower: true, the pull request labelled kernelgate-accept by alice.
    const dir = join(ROOT, 'test/fixtures/recorded/accept-h100x2-run84');
    const onMachine = JSON.parse(readFileSync(join(dir, 'verdict.json'), 'utf8')) as unknown;
    expect(onMachine).toMatchObject({
      verdict: 'pass',
      accepted: { label: 'kernelgate-accept', by: 'alice', pr: 42, cases: 26 },
    });
    const posted = readFileSync(join(dir, 'comment.md'), 'utf8');
    expect(posted.split('\n')[1]).toBe(
      '## kernelgate: ⚠️ regression (accepted): attention/triton\\_fa2 slower on 26 cases · PR #42',
    );
    expect(posted).toContain(
      '- Policy: blocking; accepted by @&#8203;alice with the label `kernelgate-accept`, so the 26 SLOWER cases pass (an acceptance never covers correctness).',
    );
    expect(posted).toContain('**217 cases on H100-SXM**');

    const results = recorded('accept-h100x2-run84');
    server.addPullRequest({ number: 43, headSha: H100_SHA });
    const pr43 = (labels: string[]) => prOn(43, labels, results, '301', H100_SHA);
    const blocked = await pr43([]);
    expect(blocked.outputs['verdict']).toBe('fail');
    expect(blocked.failed[0]).toMatch(/^kernelgate: the gate failed \(26 reasons\):/);
    const last = () => server.commentsOn(43).at(-1)?.body ?? '';
    expect(last()).toContain(
      '- Policy: blocking; add the label `kernelgate-accept` to accept the 26 SLOWER cases (performance only: correctness failures cannot be accepted).',
    );
    server.applyLabel(43, 'kernelgate-accept', 'alice');
    const accepted = await pr43(['kernelgate-accept']);
    expect(accepted.failed).toEqual([]);
    expect(accepted.verdict.accepted).toEqual({
      label: 'kernelgate-accept',
      by: 'alice',
      pr: 43,
      cases: 26,
    });
    expect(last().split('\n')[1]).toBe(
      '## kernelgate: ⚠️ regression (accepted): attention/triton\\_fa2 slower on 26 cases · PR #43',
    );

    // The merge's push (the same H100 results) is stored as accepted, after run 83's push of main;
    // the nightly of two H100s (run 86) then names the acceptance.
    const mergeSha = H100_SHA;
    const pushOf = (results: string, sha: string, runId: string) =>
      action({
        eventName: 'push',
        eventFile: join(ROOT, 'test/fixtures/events/push.main.json'),
        ref: 'refs/heads/main',
        sha,
        results,
        runId,
      });
    expect(
      (
        await pushOf(
          recorded('push-h100x2-run83'),
          '843d104adb6a1323b5a373e4b4d971113d9f10e6',
          '302',
        )
      ).failed,
    ).toEqual([]);
    const issue = server.issues.find((i) => i.number === 43)!;
    issue.mergedAt = '2026-11-27T01:33:00Z';
    issue.commits = [mergeSha];
    const merged = await pushOf(results, mergeSha, '303');
    expect(merged.failed).toEqual([]);
    const stored = merged.outputs['stored']!.replace(`${BRANCH}:`, '');
    expect(stored).toContain('H100-SXM');
    const record = JSON.parse(git(['--git-dir', remote, 'show', `refs/heads/${BRANCH}:${stored}`]));
    expect(record.run.accepted).toEqual({
      label: 'kernelgate-accept',
      by: 'alice',
      pr: 43,
      cases: 26,
    });
    await action({
      eventName: 'schedule',
      eventFile: join(ROOT, 'test/fixtures/events/schedule.json'),
      ref: 'refs/heads/main',
      sha: mergeSha,
      results: recorded('nightly-bisect-h100x2-run86'),
      runId: '304',
    });
    const body = server.issues.find((i) => i.labels.includes('kernelgate-nightly'))?.body ?? '';
    expect(body).toContain(
      '- pull request #43, accepted by @&#8203;alice with the label `kernelgate-accept`: 26 SLOWER cases passed at ' +
        `[\`0504f3669cba\`](https://github.com/acme/kernels/commit/${mergeSha}) (2026-11-27T01:27:31Z)\n`,
    );
    server.assertValid();
  });

  it('never accepts a correctness failure, nor the wrong case’s SLOWER, on two H100s (TEST INPUT: run 84 with one of its SLOWER cases made wrong)', async () => {
    const copy = recorded('accept-h100x2-run84');
    const doc = JSON.parse(readFileSync(copy, 'utf8')) as {
      cases: { variant: string; case: string; correctness?: { status: string; rel_l2?: number } }[];
    };
    const wrong = doc.cases.find(
      (c) =>
        c.variant === 'triton_fa2' && c.case === 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
    )!;
    wrong.correctness = { ...wrong.correctness!, status: 'FAIL', rel_l2: 0.02 };
    writeFileSync(copy, JSON.stringify(doc));
    server.addPullRequest({ number: 45, headSha: H100_SHA });
    server.applyLabel(45, 'kernelgate-accept', 'alice');
    const broken = await prOn(45, ['kernelgate-accept'], copy, '305', H100_SHA);
    expect(broken.outputs['verdict']).toBe('fail');
    // The label covers the 25 cases that are only SLOWER, not the wrong one: its correctness fails
    // the gate, and its SLOWER with it.
    expect(broken.verdict.accepted).toEqual({
      label: 'kernelgate-accept',
      by: 'alice',
      pr: 45,
      cases: 25,
    });
    expect(broken.failed[0]).toMatch(/^kernelgate: the gate failed \(2 reasons\):/);
    expect(broken.failed[0]).toContain('correctness FAIL');
    expect(server.commentsOn(45).at(-1)?.body).toContain(
      '- Policy: the label `kernelgate-accept` accepts performance regressions only; this run fails for the reasons below, which no label can accept.',
    );
    server.assertValid();
  });

  it('never accepts a correctness failure', async () => {
    const broken = await pr(['kernelgate-accept'], recorded('broken'));
    expect(broken.outputs['verdict']).toBe('fail');
    expect(broken.verdict.accepted).toBeUndefined();
    expect(broken.failed[0]).toContain('correctness FAIL');
    expect(comment()).toContain(
      '- Policy: the label `kernelgate-accept` accepts performance regressions only; this run fails for the reasons below, which no label can accept.',
    );
    server.assertValid();
  });
});
