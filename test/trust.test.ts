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

beforeAll(async () => {
  await server.start();
  server.permissions.set('maintainer-maya', 'write');
  server.permissions.set('triager-tom', 'read');
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
      text: "pull request #42 from the fork 'mallory/kernels' was approved by 'maintainer-maya' (write) for this commit.",
    },
    {
      eventName: 'pull_request_target',
      file: 'pull_request_target.fork.labeled.json',
      trusted: true,
      text: "pull request #42 from the fork 'mallory/kernels' was approved by 'maintainer-maya' (write) for this commit.",
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
    server.addPullRequest({ number: 42, labels: [LABEL, 'performance'] });
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
