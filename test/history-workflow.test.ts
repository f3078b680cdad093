// The example workflow with the history on the data branch: only the job of trusted events may
// write the repository, it runs no pull request code, and the policy of issue 16 holds for it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { workflowPolicyViolations } from './support/workflow-policy.js';

const FILE = 'examples/workflows/kernelgate-history.yml';
type Step = { uses?: string; run?: string; with?: Record<string, unknown> };
type Job = { if?: string; needs?: unknown; permissions?: Record<string, string>; steps: Step[] };
const workflow = parseYaml(readFileSync(FILE, 'utf8')) as { jobs: Record<string, Job> };
const kernelgateSteps = (job: Job) =>
  job.steps.filter(
    (s) => s.uses?.startsWith('kernelgate/kernelgate@') && s.with?.['trust-only'] === undefined,
  );

describe(FILE, () => {
  it('keeps the fork-safety policy', () => {
    expect(workflowPolicyViolations(workflow, FILE)).toEqual([]);
  });

  it('writes the data branch from one job, never on a pull request event, from the base checkout', () => {
    const writers = Object.entries(workflow.jobs).filter(
      ([, job]) => job.permissions?.['contents'] === 'write',
    );
    expect(writers.map(([id]) => id)).toEqual(['record']);
    const record = workflow.jobs['record']!;
    expect(record.if).toBe("github.event_name != 'pull_request_target'");
    for (const step of record.steps.filter((s) => s.uses?.startsWith('actions/checkout@'))) {
      expect(step.with?.['ref']).toBeUndefined(); // the pushed or scheduled commit, not a PR's
      expect(step.with?.['persist-credentials']).toBe(false);
    }
    expect(kernelgateSteps(record).map((s) => s.with?.['history'])).toEqual(['branch']);
  });

  it('pull requests read the history with a token that cannot write it', () => {
    const judge = workflow.jobs['judge']!;
    expect(judge.if).toBe("github.event_name == 'pull_request_target'");
    expect(judge.permissions?.['contents']).toBe('read');
    expect(kernelgateSteps(judge).map((s) => s.with?.['history'])).toEqual(['branch']);
    // No actions/cache anywhere: the data branch is the store.
    const uses = Object.values(workflow.jobs).flatMap((j) => j.steps.map((s) => s.uses ?? ''));
    expect(uses.some((u) => u.startsWith('actions/cache'))).toBe(false);
  });
});
