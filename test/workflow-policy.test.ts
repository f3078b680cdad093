// The shipped workflows keep a fork away from the GPU runner (docs/forks.md): parsed with the
// project's YAML reader and checked rule by rule, and each rule shown to catch the workflow that
// breaks it (mutate and check).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { workflowPolicyViolations } from './support/workflow-policy.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = 'examples/workflows/kernelgate.yml';

function workflowFiles(): string[] {
  return ['examples/workflows', '.github/workflows'].flatMap((dir) =>
    readdirSync(join(repoRoot, dir))
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => `${dir}/${f}`),
  );
}

type Workflow = {
  on: Record<string, unknown>;
  env?: Record<string, string>;
  jobs: Record<string, Job>;
};
type Job = {
  needs?: string | string[];
  if?: string;
  permissions?: unknown;
  'runs-on': unknown;
  steps: {
    uses?: string;
    run?: string;
    with?: Record<string, unknown>;
    env?: Record<string, string>;
  }[];
};

function example(): Workflow {
  return parseYaml(readFileSync(join(repoRoot, EXAMPLE), 'utf8')) as Workflow;
}

/** The example with one change made to it, and what the policy says about the result. */
function mutated(change: (workflow: Workflow) => void): string[] {
  const workflow = example();
  change(workflow);
  return workflowPolicyViolations(workflow, EXAMPLE);
}

describe('the shipped workflows', () => {
  test.each(workflowFiles())('%s keeps the policy', (file) => {
    const workflow: unknown = parseYaml(readFileSync(join(repoRoot, file), 'utf8'));
    expect(workflowPolicyViolations(workflow, file)).toEqual([]);
  });

  test('the example really has a GPU job behind an approval, so the rules above are exercised', () => {
    const { on, jobs } = example();
    expect(Object.keys(on)).toContain('pull_request_target');
    expect(Object.keys(on)).not.toContain('pull_request');
    expect(jobs['measure']?.['runs-on']).toContain('self-hosted');
    expect(jobs['measure']?.needs).toBe('approve');
    expect(jobs['measure']?.permissions).toEqual({});
    expect(jobs['measure']?.steps[0]?.with).toEqual({
      ref: '${{ needs.approve.outputs.sha }}',
      'persist-credentials': false,
      'allow-unsafe-pr-checkout': true,
    });
    expect(jobs['approve']?.steps[0]?.with).toEqual({ 'trust-only': 'true' });
    // The job that can write runs no code from the pull request: it checks out the base (no
    // ref), with its whole history for the stored baseline chosen by commit ancestry.
    expect(jobs['judge']?.['runs-on']).toBe('ubuntu-latest');
    expect(jobs['judge']?.steps[0]?.with).toEqual({
      'persist-credentials': false,
      'fetch-depth': 0,
    });
  });

  test('the example keeps its history on the data branch, written from one trusted job only', () => {
    const { jobs } = example();
    const kernelgate = (job: Job | undefined) =>
      (job?.steps ?? []).filter(
        (s) => s.uses?.startsWith('kernelgate/kernelgate@') && s.with?.['trust-only'] === undefined,
      );
    // One job may write the repository: record, on push, schedule and manual runs only.
    const writers = Object.entries(jobs).filter(
      ([, job]) =>
        (job.permissions as Record<string, string> | undefined)?.['contents'] === 'write',
    );
    expect(writers.map(([id]) => id)).toEqual(['record']);
    const record = jobs['record']!;
    expect(record.if).toBe("github.event_name != 'pull_request_target'");
    expect(record['runs-on']).toBe('ubuntu-latest');
    // It checks out the pushed or scheduled commit (no ref: no pull request's) and keeps no
    // credentials; kernelgate writes with the step's token.
    for (const step of record.steps.filter((s) => s.uses?.startsWith('actions/checkout@'))) {
      expect(step.with).toEqual({ 'persist-credentials': false });
    }
    expect(kernelgate(record).map((s) => s.with?.['history'])).toEqual(['branch']);
    // Pull requests are judged against the data branch with a token that can only read it.
    const judge = jobs['judge']!;
    expect(judge.if).toBe("github.event_name == 'pull_request_target'");
    expect(judge.permissions).toEqual({
      contents: 'read',
      'pull-requests': 'write',
      issues: 'write',
    });
    expect(kernelgate(judge).map((s) => s.with?.['history'])).toEqual(['branch']);
    expect(kernelgate(judge).map((s) => s.with?.['baseline'])).toEqual([undefined]);
    // No actions/cache anywhere: the data branch is the store.
    const uses = Object.values(jobs).flatMap((j) => j.steps.map((s) => s.uses ?? ''));
    expect(uses.filter((u) => u.startsWith('actions/cache'))).toEqual([]);
    // The dashboard reads the data branch and publishes with pages: write, not contents: write.
    expect(jobs['dashboard']?.if).toBe("github.event_name == 'schedule'");
    expect(jobs['dashboard']?.permissions).toEqual({
      contents: 'read',
      pages: 'write',
      'id-token': 'write',
    });
  });
});

describe('each rule catches the workflow that breaks it', () => {
  test('a GPU job without needs: approve', () => {
    expect(
      mutated((w) => {
        delete w.jobs['measure']!.needs;
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' runs on a self-hosted runner but does not need the approval job ('approve'): ` +
        `it would run without the approval.`,
      `${EXAMPLE}: job 'measure' checks out '\${{ needs.approve.outputs.sha }}' in steps[0], not the approved ` +
        `commit (no approval job output).`,
    ]);
  });

  test('a secret in the GPU job', () => {
    expect(
      mutated((w) => {
        w.jobs['measure']!.steps[1]!.env = { HF_TOKEN: '${{ secrets.HF_TOKEN }}' };
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' hands a secret to the pull request's code (steps[1].env.HF_TOKEN: ` +
        `\${{ secrets.HF_TOKEN }}).`,
    ]);
  });

  test('secrets: inherit, or a token, in the GPU job', () => {
    expect(
      mutated((w) => {
        (w.jobs['measure'] as Record<string, unknown>)['secrets'] = 'inherit';
        w.jobs['measure']!.steps[1]!.env = { GH_TOKEN: '${{ github.token }}' };
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' hands secrets to the pull request's code (secrets: "inherit").`,
      `${EXAMPLE}: job 'measure' hands a token to the pull request's code (steps[1].env.GH_TOKEN: ` +
        `\${{ github.token }}).`,
    ]);
  });

  test('a GPU job that checks out github.head_ref', () => {
    expect(
      mutated((w) => {
        w.jobs['measure']!.steps[0]!.with!['ref'] = '${{ github.head_ref }}';
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' refers to github.head_ref (steps[0].with.ref), which the pull request's ` +
        `author can move after the approval; check out needs.<approval job>.outputs.sha.`,
      `${EXAMPLE}: job 'measure' checks out '\${{ github.head_ref }}' in steps[0], not the approved commit ` +
        `'\${{ needs.approve.outputs.sha }}'.`,
    ]);
  });

  test('a GPU job that checks out the default ref (the base, or the merge commit) or keeps credentials', () => {
    expect(
      mutated((w) => {
        w.jobs['measure']!.steps[0]!.with = {};
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' checks out the default ref in steps[0], not the approved commit ` +
        `'\${{ needs.approve.outputs.sha }}'.`,
      `${EXAMPLE}: job 'measure' keeps the checkout's credentials in .git/config (steps[0]): set ` +
        `persist-credentials: false.`,
    ]);
  });

  test('a GPU job that fetches another commit itself', () => {
    expect(
      mutated((w) => {
        w.jobs['measure']!.steps[1]!.run =
          'git fetch origin pull/42/head && git checkout FETCH_HEAD';
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' fetches or switches commits itself (steps[1].run); only the approved ` +
        `checkout may run.`,
    ]);
  });

  test('the workflow triggered by pull_request (the pull request supplies the file)', () => {
    expect(
      mutated((w) => {
        w.on = { pull_request: { types: ['labeled'] }, push: { branches: ['main'] } };
      }),
    ).toEqual([
      // record's if excludes pull_request_target only; under pull_request it would write too
      `${EXAMPLE}: job 'record' can write the repository's contents and may run on pull_request ` +
        `(if: github.event_name != 'pull_request_target'); only push, schedule and manual runs may write ` +
        `(the history's data branch among them): give it if: github.event_name != 'pull_request'.`,
      `${EXAMPLE}: it runs jobs on a self-hosted runner and is triggered by pull_request, for which GitHub runs ` +
        `the workflow file of the pull request itself: a fork that edits it can drop the approval or add steps. ` +
        `Use pull_request_target, which runs the base branch's file.`,
    ]);
  });

  test('a token with permissions in the GPU job, or the default one', () => {
    expect(
      mutated((w) => {
        w.jobs['measure']!.permissions = { contents: 'read' };
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' runs the pull request's code with a token that has permissions ` +
        `{"contents":"read"}; it needs permissions: {}.`,
      `${EXAMPLE}: job 'measure' sets allow-unsafe-pr-checkout in steps[0] with a token that has permissions ` +
        `{"contents":"read"}; only a job with permissions: {} may check out a fork's code.`,
    ]);
    expect(
      mutated((w) => {
        delete w.jobs['measure']!.permissions;
        delete (w as Record<string, unknown>)['permissions'];
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' can write the repository's contents and may run on pull_request_target ` +
        `(no if); only push, schedule and manual runs may write (the history's data branch among them): ` +
        `give it if: github.event_name != 'pull_request_target'.`,
      `${EXAMPLE}: job 'measure' runs the pull request's code with a token that has permissions ` +
        `"the repository default"; it needs permissions: {}.`,
      `${EXAMPLE}: job 'measure' sets allow-unsafe-pr-checkout in steps[0] with a token that has permissions ` +
        `"the repository default"; only a job with permissions: {} may check out a fork's code.`,
    ]);
  });

  test('a GPU job that runs even when the approval failed', () => {
    expect(
      mutated((w) => {
        w.jobs['measure']!.if = 'always()';
      }),
    ).toEqual([
      `${EXAMPLE}: job 'measure' has if: always(), which runs it even when the approval was refused.`,
    ]);
  });

  test('a secret in the workflow-level env', () => {
    expect(
      mutated((w) => {
        w.env = { ...w.env, WANDB_API_KEY: '${{ secrets.WANDB_API_KEY }}' };
      }),
    ).toEqual([
      `${EXAMPLE}: the workflow-level env.WANDB_API_KEY (\${{ secrets.WANDB_API_KEY }}) reaches every job, the ` +
        `GPU runner's included.`,
    ]);
  });

  test('an approval job that does not say which commit it approved', () => {
    expect(
      mutated((w) => {
        delete (w.jobs['approve'] as Record<string, unknown>)['outputs'];
      }),
    ).toEqual([
      `${EXAMPLE}: the approval job 'approve' must output sha: \${{ steps.trust.outputs.approved-sha }} (the ` +
        `commit its trust check approved).`,
      `${EXAMPLE}: job 'measure' checks out '\${{ needs.approve.outputs.sha }}' in steps[0], not the approved ` +
        `commit (no approval job output).`,
    ]);
  });

  test('the publishing job checking out the pull request', () => {
    expect(
      mutated((w) => {
        w.jobs['judge']!.steps[0]!.with = { ref: '${{ github.event.pull_request.head.sha }}' };
      }),
    ).toEqual([
      `${EXAMPLE}: job 'judge' has a token that can write and checks out '\${{ github.event.pull_request.head.sha }}' ` +
        `in steps[0], the pull request's code; publish from a job that runs none.`,
    ]);
  });

  test("a job with a token that lets actions/checkout take a fork's code", () => {
    expect(
      mutated((w) => {
        w.jobs['judge']!.steps[0]!.with = {
          'persist-credentials': false,
          'allow-unsafe-pr-checkout': true,
        };
      }),
    ).toEqual([
      `${EXAMPLE}: job 'judge' sets allow-unsafe-pr-checkout in steps[0] with a token that has permissions ` +
        `{"contents":"read","pull-requests":"write","issues":"write"}; only a job with permissions: {} may check ` +
        `out a fork's code.`,
    ]);
  });

  test('a job that can write the data branch and runs on a pull request event', () => {
    const says = (id: string, condition: string) =>
      `${EXAMPLE}: job '${id}' can write the repository's contents and may run on pull_request_target ` +
      `(${condition}); only push, schedule and manual runs may write (the history's data branch among ` +
      `them): give it if: github.event_name != 'pull_request_target'.`;
    expect(
      mutated((w) => {
        delete w.jobs['record']!.if;
      }),
    ).toEqual([says('record', 'no if')]);
    expect(
      mutated((w) => {
        w.jobs['record']!.if = "github.event_name != 'pull_request_target' || true";
      }),
    ).toEqual([says('record', "if: github.event_name != 'pull_request_target' || true")]);
    expect(
      mutated((w) => {
        w.jobs['judge']!.permissions = { contents: 'write', 'pull-requests': 'write' };
      }),
    ).toEqual([says('judge', "if: github.event_name == 'pull_request_target'")]);
    expect(
      mutated((w) => {
        w.jobs['record']!.if =
          "github.event_name == 'pull_request_target' || github.event_name == 'push'";
      }),
    ).toEqual([
      says(
        'record',
        "if: github.event_name == 'pull_request_target' || github.event_name == 'push'",
      ),
    ]);
    // Trusted events named one by one are fine.
    expect(
      mutated((w) => {
        w.jobs['record']!.if =
          "${{ github.event_name == 'push' || github.event_name == 'schedule' }}";
      }),
    ).toEqual([]);
  });
});
