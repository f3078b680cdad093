// The rules a workflow must keep for a self-hosted GPU runner to be safe from pull requests
// (docs/forks.md): its definition comes from the base branch, every job on the runner waits for
// the approval job, runs with no token and no secret, and checks out only the approved commit; a
// job that can write runs no code from the pull request, and one that can write the repository's
// contents (the history's data branch) runs on no pull request event. Each broken rule is one
// message.

type Yaml = unknown;
type Mapping = Record<string, Yaml>;

function isMapping(value: Yaml): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asMapping(value: Yaml): Mapping {
  return isMapping(value) ? value : {};
}

function asList(value: Yaml): Yaml[] {
  return Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
}

/** Events whose workflow file GitHub takes from the pull request's merge commit, not the base. */
const PR_DEFINED_EVENTS = ['pull_request', 'pull_request_review', 'pull_request_review_comment'];

/** Expressions that name a commit or branch the pull request's author can move after approval. */
const MOVABLE_REFS = [
  'github.head_ref',
  'github.event.pull_request.head.ref',
  'github.event.pull_request.head.sha',
  'github.event.pull_request.merge_commit_sha',
  'github.event.workflow_run.head_sha',
  'github.event.workflow_run.head_branch',
  'refs/pull/',
];

function triggers(workflow: Mapping): string[] {
  const on = workflow['on'] ?? workflow['true']; // YAML 1.1 readers turn a bare `on` into true
  if (typeof on === 'string') return [on];
  if (Array.isArray(on)) return on.filter((e): e is string => typeof e === 'string');
  return Object.keys(asMapping(on));
}

function isSelfHosted(job: Mapping): boolean {
  const runsOn = job['runs-on'];
  if (isMapping(runsOn))
    return runsOn['group'] !== undefined || asList(runsOn['labels']).includes('self-hosted');
  return asList(runsOn).includes('self-hosted');
}

function steps(job: Mapping): Mapping[] {
  return asList(job['steps']).map(asMapping);
}

function isTrustOnly(step: Mapping): boolean {
  const trustOnly = asMapping(step['with'])['trust-only'];
  return typeof step['uses'] === 'string' && (trustOnly === true || trustOnly === 'true');
}

function isCheckout(step: Mapping): boolean {
  return typeof step['uses'] === 'string' && /^actions\/checkout@/.test(step['uses']);
}

/** Every string in a value, with where it sits: ['steps[1].env.TOKEN', '${{ secrets.X }}']. */
function strings(value: Yaml, path: string): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (isMapping(value)) {
    return Object.entries(value).flatMap(([k, v]) => strings(v, path ? `${path}.${k}` : k));
  }
  return [];
}

function permissionsOf(workflow: Mapping, job: Mapping): Yaml {
  return 'permissions' in job ? job['permissions'] : workflow['permissions'];
}

function canWrite(permissions: Yaml): boolean {
  if (permissions === undefined || permissions === 'write-all') return true; // the default token
  if (typeof permissions === 'string') return false; // read-all
  return Object.values(asMapping(permissions)).includes('write');
}

/** Events a pull request starts (its author chooses when, and for some, what runs). */
const PR_EVENTS = [...PR_DEFINED_EVENTS, 'pull_request_target'];

function canWriteContents(permissions: Yaml): boolean {
  if (permissions === undefined || permissions === 'write-all') return true; // the default token
  if (typeof permissions === 'string') return false; // read-all
  return asMapping(permissions)['contents'] === 'write';
}

/**
 * True when a job's `if` keeps it off every one of `events`: either `github.event_name != 'e'`
 * for each of them joined by `&&` only, or `github.event_name == 'x'` terms joined by `||` that
 * name none of them.
 */
function excludesEvents(condition: Yaml, events: string[]): boolean {
  if (typeof condition !== 'string') return false;
  const text = condition
    .trim()
    .replace(/^\$\{\{([\s\S]*)\}\}$/, '$1')
    .trim();
  const term = (op: string) => new RegExp(`^github\\.event_name\\s*${op}\\s*'([a-z_]+)'$`);
  const notEqual = text.split('&&').map((t) => term('!=').exec(t.trim())?.[1]);
  if (notEqual.every((e) => e !== undefined)) return events.every((e) => notEqual.includes(e));
  const equal = text.split('||').map((t) => term('==').exec(t.trim())?.[1]);
  return equal.every((e) => e !== undefined && !PR_EVENTS.includes(e));
}

export function workflowPolicyViolations(workflowYaml: Yaml, file: string): string[] {
  const workflow = asMapping(workflowYaml);
  const jobs = asMapping(workflow['jobs']);
  const found: string[] = [];
  const say = (message: string): void => {
    found.push(`${file}: ${message}`);
  };
  const on = triggers(workflow);

  // A job that can write the repository's contents (the history's data branch among them) runs
  // only on trusted events: push, schedule, a manual run; never on a pull request's.
  const prEvents = on.filter((event) => PR_EVENTS.includes(event));
  if (prEvents.length > 0) {
    for (const [id, jobYaml] of Object.entries(jobs)) {
      const job = asMapping(jobYaml);
      if (!canWriteContents(permissionsOf(workflow, job))) continue;
      if (excludesEvents(job['if'], prEvents)) continue;
      const condition = typeof job['if'] === 'string' ? `if: ${job['if']}` : 'no if';
      say(
        `job '${id}' can write the repository's contents and may run on ${prEvents.join(', ')} (${condition}); ` +
          `only push, schedule and manual runs may write (the history's data branch among them): give it ` +
          `if: ${prEvents.map((e) => `github.event_name != '${e}'`).join(' && ')}.`,
      );
    }
  }

  const gpuJobs = Object.entries(jobs).filter(([, job]) => isSelfHosted(asMapping(job)));
  if (gpuJobs.length === 0) return found;

  const prDefined = on.filter((event) => PR_DEFINED_EVENTS.includes(event));
  for (const event of prDefined) {
    say(
      `it runs jobs on a self-hosted runner and is triggered by ${event}, for which GitHub runs the workflow file ` +
        `of the pull request itself: a fork that edits it can drop the approval or add steps. Use ` +
        `pull_request_target, which runs the base branch's file.`,
    );
  }

  // The approval job: kernelgate with trust-only, its approved commit as the job output `sha`.
  const approvals = Object.entries(jobs).filter(([, job]) =>
    steps(asMapping(job)).some(isTrustOnly),
  );
  const approvalShas = new Map<string, string>();
  for (const [id, job] of approvals) {
    const step = steps(asMapping(job)).find(isTrustOnly);
    const expected = `\${{ steps.${String(step?.['id'])}.outputs.approved-sha }}`;
    if (asMapping(asMapping(job)['outputs'])['sha'] === expected) {
      approvalShas.set(id, `\${{ needs.${id}.outputs.sha }}`);
    } else {
      say(
        `the approval job '${id}' must output sha: ${expected} (the commit its trust check approved).`,
      );
    }
    if (isSelfHosted(asMapping(job))) {
      say(`the approval job '${id}' must run on a GitHub-hosted runner.`);
    }
  }

  const env = asMapping(workflow['env']);
  for (const [path, value] of strings(env, 'env')) {
    if (/\bsecrets\b|github\.token/.test(value)) {
      say(`the workflow-level ${path} (${value}) reaches every job, the GPU runner's included.`);
    }
  }

  for (const [id, jobYaml] of gpuJobs) {
    const job = asMapping(jobYaml);
    const needs = asList(job['needs']).filter((n): n is string => typeof n === 'string');
    const approval = needs.find((n) => approvalShas.has(n) || approvals.some(([a]) => a === n));
    if (approval === undefined) {
      const names = approvals.map(([a]) => `'${a}'`).join(' or ') || 'none in this workflow';
      say(
        `job '${id}' runs on a self-hosted runner but does not need the approval job (${names}): it would run ` +
          `without the approval.`,
      );
    }
    const condition = job['if'];
    if (typeof condition === 'string' && /\b(always|failure|cancelled)\s*\(/.test(condition)) {
      say(`job '${id}' has if: ${condition}, which runs it even when the approval was refused.`);
    }

    const permissions = permissionsOf(workflow, job);
    if (!isMapping(permissions) || Object.keys(permissions).length > 0) {
      say(
        `job '${id}' runs the pull request's code with a token that has permissions ` +
          `${JSON.stringify(permissions ?? 'the repository default')}; it needs permissions: {}.`,
      );
    }
    if (job['secrets'] !== undefined) {
      say(
        `job '${id}' hands secrets to the pull request's code (secrets: ${JSON.stringify(job['secrets'])}).`,
      );
    }
    for (const [path, value] of strings(job, '')) {
      if (/\bsecrets\b/.test(value)) {
        say(`job '${id}' hands a secret to the pull request's code (${path}: ${value}).`);
      } else if (/github\.token|GITHUB_TOKEN/.test(value)) {
        say(`job '${id}' hands a token to the pull request's code (${path}: ${value}).`);
      }
      for (const ref of MOVABLE_REFS) {
        if (value.includes(ref)) {
          say(
            `job '${id}' refers to ${ref} (${path}), which the pull request's author can move after the ` +
              `approval; check out needs.<approval job>.outputs.sha.`,
          );
        }
      }
      if (/\b(git\s+(fetch|pull|checkout|switch|reset)|gh\s+pr\s+checkout)\b/.test(value)) {
        say(
          `job '${id}' fetches or switches commits itself (${path}); only the approved checkout may run.`,
        );
      }
    }
    const wanted = approval !== undefined ? approvalShas.get(approval) : undefined;
    steps(job).forEach((step, i) => {
      if (!isCheckout(step)) return;
      const withs = asMapping(step['with']);
      const ref = withs['ref'];
      if (wanted === undefined || ref !== wanted) {
        say(
          `job '${id}' checks out ${ref === undefined ? 'the default ref' : `'${String(ref)}'`} in steps[${i}], ` +
            `not the approved commit ${wanted === undefined ? '(no approval job output)' : `'${wanted}'`}.`,
        );
      }
      if (withs['repository'] !== undefined) {
        say(
          `job '${id}' checks out another repository (${String(withs['repository'])}) in steps[${i}].`,
        );
      }
      if (withs['persist-credentials'] !== false && withs['persist-credentials'] !== 'false') {
        say(
          `job '${id}' keeps the checkout's credentials in .git/config (steps[${i}]): set persist-credentials: false.`,
        );
      }
    });
  }

  // actions/checkout refuses a fork's head under pull_request_target unless told
  // (allow-unsafe-pr-checkout): only a job whose token can do nothing may tell it.
  for (const [id, jobYaml] of Object.entries(jobs)) {
    const job = asMapping(jobYaml);
    const permissions = permissionsOf(workflow, job);
    if (isMapping(permissions) && Object.keys(permissions).length === 0) continue;
    steps(job).forEach((step, i) => {
      const allow = asMapping(step['with'])['allow-unsafe-pr-checkout'];
      if (!isCheckout(step) || (allow !== true && allow !== 'true')) return;
      say(
        `job '${id}' sets allow-unsafe-pr-checkout in steps[${i}] with a token that has permissions ` +
          `${JSON.stringify(permissions ?? 'the repository default')}; only a job with permissions: {} may check out ` +
          `a fork's code.`,
      );
    });
  }

  // Jobs that can write run no code from the pull request.
  for (const [id, jobYaml] of Object.entries(jobs)) {
    const job = asMapping(jobYaml);
    if (isSelfHosted(job) || !canWrite(permissionsOf(workflow, job))) continue;
    steps(job).forEach((step, i) => {
      if (!isCheckout(step)) return;
      const ref = asMapping(step['with'])['ref'];
      if (ref === undefined) return;
      const text = String(ref);
      const prCode =
        MOVABLE_REFS.some((r) => text.includes(r)) || [...approvalShas.values()].includes(text);
      if (prCode) {
        say(
          `job '${id}' has a token that can write and checks out '${text}' in steps[${i}], the pull request's ` +
            `code; publish from a job that runs none.`,
        );
      }
    });
  }
  return found;
}
