// The check a branch rule requires fails closed (issue 26): each shipped workflow's job graph,
// evaluated as GitHub evaluates it (test/support/job-graph.ts), ends its required job in failure
// whenever the commit was not approved, not measured or not passed, and in success only when all
// of it succeeded. The required job's steps really run (bash), so the message is the one the user
// reads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { evaluate, evaluateWorkflow, type Scenario } from './support/job-graph.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const load = (file: string) => parseYaml(readFileSync(join(repoRoot, file), 'utf8')) as Workflow;
type Workflow = { jobs: Record<string, Record<string, unknown>> };

/** The README's quick start workflow, as the reader copies it. */
function readmeWorkflow(): Workflow {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const block = /## Use it in a workflow\s+```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('README.md: no yaml block under "Use it in a workflow"');
  return parseYaml(block) as Workflow;
}

const prt = (action: string, label?: string): Scenario['github'] => ({
  event_name: 'pull_request_target',
  event: { action, ...(label !== undefined ? { label: { name: label } } : {}) },
});
const PUSH: Scenario['github'] = { event_name: 'push', event: {} };
const NIGHTLY: Scenario['github'] = { event_name: 'schedule', event: {} };

const FAIL_CLOSED =
  "this check passes only when all three succeeded. A skipped job did not run: the commit was not approved (a fork's " +
  "pull request runs once a maintainer approves this very commit in a review and applies the label 'kernelgate-approved'; " +
  'a later push or another label starts a run without it) or a job it needs failed.';
const refused = (approve: string, measure: string, job: string, judged: string) =>
  `::error title=kernelgate did not pass::approve ${approve}, measure ${measure}, ${job} ${judged}; ${FAIL_CLOSED}\n`;

describe('examples/workflows/kernelgate.yml: `verdict` is the required check', () => {
  const workflow = load('examples/workflows/kernelgate.yml');
  const run = (github: Scenario['github'], outcomes: Scenario['outcomes'] = {}) =>
    evaluateWorkflow(workflow, { github, outcomes, runSteps: ['verdict'] });

  test.each([
    [
      'an unapproved fork (approve refuses)',
      prt('opened'),
      { approve: 'failure' },
      'failure',
      'skipped',
      'skipped',
    ],
    [
      'a push after the approval (approve refuses)',
      prt('synchronize'),
      { approve: 'failure' },
      'failure',
      'skipped',
      'skipped',
    ],
    [
      'another label (approve skipped)',
      prt('labeled', 'performance'),
      {},
      'skipped',
      'skipped',
      'skipped',
    ],
    [
      'a kernel that kills the harness',
      prt('labeled', 'kernelgate-approved'),
      { measure: 'failure' },
      'success',
      'failure',
      'skipped',
    ],
    [
      'the gate fails',
      prt('labeled', 'kernelgate-approved'),
      { judge: 'failure' },
      'success',
      'success',
      'failure',
    ],
  ] as const)('%s: verdict fails', (_name, github, outcomes, approve, measure, judge) => {
    const { results, logs } = run(github, outcomes);
    expect(results).toMatchObject({
      approve,
      measure,
      judge,
      record: 'skipped',
      verdict: 'failure',
    });
    expect(logs['verdict']).toBe(refused(approve, measure, 'judge', judge));
  });

  test('approved, measured and passed: verdict passes', () => {
    const { results, logs } = run(prt('labeled', 'kernelgate-approved'));
    expect(results).toEqual({
      approve: 'success',
      measure: 'success',
      judge: 'success',
      record: 'skipped',
      dashboard: 'skipped',
      verdict: 'success',
    });
    expect(logs['verdict']).toBe('kernelgate passed: approve, measure and judge succeeded.\n');
  });

  test.each([
    ['push, the harness killed', PUSH, { measure: 'failure' }, 'failure'],
    ['push, the gate fails', PUSH, { record: 'failure' }, 'failure'],
    ['the nightly, the approval job fails', NIGHTLY, { approve: 'failure' }, 'failure'],
    ['push, all passed', PUSH, {}, 'success'],
    [
      'the nightly, all passed (the dashboard failing does not gate)',
      NIGHTLY,
      { dashboard: 'failure' },
      'success',
    ],
  ] as const)('%s: verdict %s', (_name, github, outcomes, verdict) => {
    expect(run(github, outcomes).results['verdict']).toBe(verdict);
  });

  test('the record job judges trusted events: its result is the one named', () => {
    expect(run(PUSH, { record: 'failure' }).logs['verdict']).toBe(
      refused('success', 'success', 'record', 'failure'),
    );
  });

  test('without it, the judge job would be skipped, which a required check counts as passed', () => {
    const jobs = Object.fromEntries(
      Object.entries(workflow.jobs).filter(([id]) => id !== 'verdict'),
    );
    const refusedOrKilled: Scenario['outcomes'][] = [
      { approve: 'failure' },
      { measure: 'failure' },
    ];
    for (const outcomes of refusedOrKilled) {
      const { results } = evaluateWorkflow({ jobs }, { github: prt('opened'), outcomes });
      expect(results['judge']).toBe('skipped');
    }
  });
});

describe('examples/workflows/kernelgate-matrix.yml: `verdict` is the required check', () => {
  const workflow = load('examples/workflows/kernelgate-matrix.yml');
  const run = (outcomes: Scenario['outcomes'] = {}) =>
    evaluateWorkflow(workflow, { github: PUSH, outcomes, runSteps: ['verdict'] });
  const said = (approve: string, measure: string, merge: string) =>
    `::error title=kernelgate did not pass::approve ${approve}, measure ${measure}, merge ${merge}; this check ` +
    'passes only when all three succeeded (a shard that failed fails it, also when the merge judged the others). ' +
    'A skipped job did not run because a job it needs failed.\n';

  test('the approval job fails: merge skipped, verdict fails', () => {
    const { results, logs } = run({ approve: 'failure' });
    expect(results).toEqual({
      approve: 'failure',
      measure: 'skipped',
      merge: 'skipped',
      verdict: 'failure',
    });
    expect(logs['verdict']).toBe(said('failure', 'skipped', 'skipped'));
  });

  test('a shard fails: the merge still runs (and names it), verdict fails even if it passed', () => {
    const { results, logs } = run({ measure: 'failure' });
    expect(results).toMatchObject({ merge: 'success', verdict: 'failure' });
    expect(logs['verdict']).toBe(said('success', 'failure', 'success'));
  });

  test('the merged gate fails: verdict fails', () => {
    expect(run({ merge: 'failure' }).logs['verdict']).toBe(said('success', 'success', 'failure'));
  });

  test('all passed: verdict passes', () => {
    const { results, logs } = run();
    expect(results['verdict']).toBe('success');
    expect(logs['verdict']).toBe('kernelgate passed: approve, every shard and merge succeeded.\n');
  });
});

describe("the README's quick start: a fork's pull request is skipped and the required `verdict` fails closed", () => {
  const workflow = readmeWorkflow();
  const pr = (headRepo: string): Scenario['github'] => ({
    event_name: 'pull_request',
    repository: 'octo/kernels',
    event: { pull_request: { head: { repo: { full_name: headRepo } } } },
  });
  const run = (github: Scenario['github'], outcomes: Scenario['outcomes'] = {}) =>
    evaluateWorkflow(workflow, { github, outcomes, runSteps: ['verdict'] });
  const notPassed = (result: string) =>
    `::error title=kernelgate did not pass::kernels ${result}: this check passes only when kernels succeeded; a fork's pull request is not run by this workflow (examples/workflows/kernelgate.yml runs it after approval).\n`;

  test("a fork's pull request: kernels is skipped (never on the GPU runner), verdict fails", () => {
    const { results, logs } = run(pr('mallory/kernels'));
    expect(results).toEqual({ kernels: 'skipped', verdict: 'failure' });
    expect(logs['verdict']).toBe(notPassed('skipped'));
  });

  test('a pull request of the repository: kernels runs, and verdict is its result', () => {
    const passed = run(pr('octo/kernels'));
    expect(passed.results).toEqual({ kernels: 'success', verdict: 'success' });
    expect(passed.logs['verdict']).toBe('kernelgate passed.\n');
    const failed = run(pr('octo/kernels'), { kernels: 'failure' });
    expect(failed.results).toEqual({ kernels: 'failure', verdict: 'failure' });
    expect(failed.logs['verdict']).toBe(notPassed('failure'));
  });

  test('push and schedule runs measure', () => {
    expect(run(PUSH).results).toEqual({ kernels: 'success', verdict: 'success' });
    expect(run(NIGHTLY, { kernels: 'failure' }).results['verdict']).toBe('failure');
  });
});

describe('the job graph evaluator follows GitHub', () => {
  const graph = (jobs: Record<string, Record<string, unknown>>, outcomes: Scenario['outcomes']) =>
    evaluateWorkflow({ jobs }, { github: PUSH, outcomes }).results;

  test('a job whose need failed or was skipped is skipped, down the whole chain', () => {
    expect(
      graph(
        {
          a: {},
          b: { needs: 'a' },
          c: { needs: 'b' },
          d: { needs: 'c', if: 'always()' },
          e: { needs: 'd' },
          f: { needs: 'b', if: "github.event_name == 'push'" },
        },
        { a: 'failure' },
      ),
    ).toEqual({
      a: 'failure',
      b: 'skipped',
      c: 'skipped',
      d: 'success',
      // d ran and succeeded, but e's implicit success() sees every ancestor
      e: 'skipped',
      // an if without a status function gets success() && (…)
      f: 'skipped',
    });
  });

  test('failure() sees a failed ancestor, not a skipped one; always() runs regardless', () => {
    expect(
      graph(
        {
          a: {},
          s: { if: 'false' },
          b: { needs: 'a', if: 'failure()' },
          c: { needs: 's', if: 'failure()' },
          d: { needs: ['a', 's'], if: "always() && needs.s.result == 'skipped'" },
        },
        { a: 'failure' },
      ),
    ).toEqual({ a: 'failure', s: 'skipped', b: 'success', c: 'skipped', d: 'success' });
  });

  test('&& and || give an operand; == ignores the case of strings', () => {
    const scope = {
      lookup: (path: string) => ({ 'needs.j.result': 'failure', 'github.x': null })[path] ?? null,
      call: () => {
        throw new Error('no functions here');
      },
    };
    expect(evaluate("true && needs.j.result || 'other'", scope)).toBe('failure');
    expect(evaluate("false && needs.j.result || 'other'", scope)).toBe('other');
    expect(evaluate("needs.j.result == 'FAILURE'", scope)).toBe(true);
    expect(evaluate("!github.x && github.x == ''", scope)).toBe(true); // null and '' are both 0
  });
});
