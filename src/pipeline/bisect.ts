// The nightly's bisection: a variant tonight's pairs found SLOWER against the last good run is
// traced to the commit that made it slower. Only commits that change the kernel's folder can (a
// commit whose kernel sources are those of the one before it gives the same code, so the same
// time), so those are the candidates; they are searched in halves, each step a paired run of that
// variant's slowed cases, the commit against the good base, in a worktree. Time-boxed: when the
// box runs out the report names the range it narrowed the search to, and the steps measured are
// kept (nightly-bisect.ts), so the next night, still slower against the same good run, goes on
// from there instead of measuring them again.
import type { Exec } from '../lib/index.js';

export type StepVerdict = 'bad' | 'good' | 'unknown';

export interface BisectStep {
  sha: string;
  verdict: StepVerdict;
  /** e.g. "SLOWER on 8 of 8 cases, median ×1.021" */
  detail: string;
}

export type BisectOutcome =
  /** the first bad commit, found by measuring (or, with one candidate, by its sources alone) */
  | { kind: 'found'; sha: string; steps: BisectStep[]; candidates: number; commits: number }
  /** the kernel's sources did not change between the good run and tonight */
  | { kind: 'no-change'; commits: number }
  /** stopped (time box, or a step that could not tell): the first bad commit lies in this range */
  | {
      kind: 'narrowed';
      first: string;
      last: string;
      reason: string;
      steps: BisectStep[];
      candidates: number;
      commits: number;
    };

export interface BisectPlan {
  /** good..tonight on the first-parent line, oldest first; the last is tonight's commit */
  commits: string[];
  /** per commit, what the variant's code is made of (a tree hash of the kernel's folder) */
  fingerprint: (sha: string) => Promise<string | undefined>;
  /** the good run's fingerprint */
  goodFingerprint: string | undefined;
  measure: (sha: string) => Promise<BisectStep>;
  /** true once no further step may start */
  outOfTime: () => boolean;
  /**
   * steps an earlier night measured against the same good run (their verdict good or bad): taken
   * as they are, not measured again, so a search the time box stopped goes on the next night
   */
  known?: ReadonlyMap<string, BisectStep>;
}

/** The commits where the kernel's sources change: only these can have made it slower. */
async function transitions(plan: BisectPlan): Promise<string[]> {
  const found: string[] = [];
  let previous = plan.goodFingerprint;
  for (const sha of plan.commits) {
    const fp = await plan.fingerprint(sha);
    if (fp === undefined || fp !== previous) found.push(sha);
    previous = fp;
  }
  return found;
}

/**
 * Binary search over the commits that change the kernel's sources: tonight's code is bad (its
 * pairs said so), so the last of them is bad; each step measures the middle one.
 */
export async function bisect(plan: BisectPlan): Promise<BisectOutcome> {
  const commits = plan.commits.length;
  const candidates = await transitions(plan);
  if (candidates.length === 0) return { kind: 'no-change', commits };
  const steps: BisectStep[] = [];
  let lo = -1; // index of the last candidate known good (-1: the good run)
  let hi = candidates.length - 1; // index of the first candidate known bad
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const earlier = plan.known?.get(candidates[mid]!);
    if (earlier === undefined && plan.outOfTime()) {
      return narrowed(candidates, lo, hi, 'the time box ran out', steps, commits);
    }
    const step = earlier
      ? { ...earlier, detail: `${earlier.detail}, measured on an earlier night` }
      : await plan.measure(candidates[mid]!);
    steps.push(step);
    if (step.verdict === 'bad') hi = mid;
    else if (step.verdict === 'good') lo = mid;
    else {
      const why = `${step.sha.slice(0, 12)} could not be told good or bad (${step.detail})`;
      return narrowed(candidates, lo, hi, why, steps, commits);
    }
  }
  return { kind: 'found', sha: candidates[hi]!, steps, candidates: candidates.length, commits };
}

function narrowed(
  candidates: string[],
  lo: number,
  hi: number,
  reason: string,
  steps: BisectStep[],
  commits: number,
): BisectOutcome {
  return {
    kind: 'narrowed',
    first: candidates[lo + 1]!,
    last: candidates[hi]!,
    reason,
    steps,
    candidates: candidates.length,
    commits,
  };
}

/** good..tonight on the first-parent line, oldest first (empty when git cannot say). */
export async function commitsBetween(
  workspace: string,
  good: string,
  tonight: string,
  exec: Exec,
): Promise<string[]> {
  const r = await exec.run(
    'git',
    ['-C', workspace, 'rev-list', '--reverse', '--first-parent', `${good}..${tonight}`],
    { timeoutS: 60 },
  );
  if (r.exitCode !== 0) return [];
  return r.stdout.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l.trim()));
}

/** The tree hash of `path` at `sha` (undefined when it is not there). */
export async function treeAt(
  workspace: string,
  sha: string,
  path: string,
  exec: Exec,
): Promise<string | undefined> {
  const r = await exec.run(
    'git',
    ['-C', workspace, 'rev-parse', '--verify', '-q', `${sha}:${path}`],
    {
      timeoutS: 60,
    },
  );
  return r.exitCode === 0 ? r.stdout.trim() : undefined;
}

/** One line for the report and the log. */
export function describeBisect(variant: string, outcome: BisectOutcome): string {
  const s = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const measured = (steps: BisectStep[], none: string) =>
    steps.length === 0
      ? none
      : `${s(steps.length, 'commit')} measured: ${steps.map((x) => `${x.sha.slice(0, 12)} ${x.verdict} (${x.detail})`).join('; ')}`;
  switch (outcome.kind) {
    case 'found':
      return (
        `${variant} became slower at ${outcome.sha}: the first bad commit of ${s(outcome.commits, 'commit')} since the last good run ` +
        `(${s(outcome.candidates, 'commit')} changed the kernel's folder; ${measured(outcome.steps, 'no commit measured: it is the only one that changed the kernel')})`
      );
    case 'no-change':
      return (
        `${variant} is slower, but none of the ${s(outcome.commits, 'commit')} since the last good run changed the kernel's folder: ` +
        'the change is in code it imports from elsewhere in the repository'
      );
    case 'narrowed':
      return (
        `${variant} became slower between ${outcome.first.slice(0, 12)} and ${outcome.last.slice(0, 12)} (inclusive; ` +
        `${outcome.reason}; ${measured(outcome.steps, 'no commit measured')})`
      );
  }
}
