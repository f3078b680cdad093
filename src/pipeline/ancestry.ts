// Whether one commit is an ancestor of another, as the stored-run lookups ask it (the pull
// request's stored baseline, pr-baseline.ts; the nightly's good base, nightly-base.ts): git
// merge-base --is-ancestor under a deadline, and "cannot tell" where git cannot (a shallow
// checkout, a commit it lacks, the deadline) rather than a wrong "not an ancestor".
import { DEFAULT_GIT_TIMEOUT_S, type Exec } from '../lib/index.js';

export type Relation = 'ancestor' | 'not' | { unknown: string };

/** Whether `sha` is an ancestor of (or is) `of`: git merge-base --is-ancestor, with a deadline. */
export async function isAncestor(
  check: { workspace: string; exec: Exec; gitTimeoutS?: number },
  sha: string,
  of: string,
): Promise<Relation> {
  const timeoutS = check.gitTimeoutS ?? DEFAULT_GIT_TIMEOUT_S;
  const r = await check.exec.run(
    'git',
    ['-C', check.workspace, 'merge-base', '--is-ancestor', sha, of],
    { timeoutS },
  );
  if (r.timedOut) return { unknown: `git merge-base did not finish within ${timeoutS} s` };
  if (r.exitCode === 0) return 'ancestor';
  if (r.exitCode === 1) {
    // In a shallow checkout a commit whose history was cut off reads as "not an ancestor".
    const shallow = await check.exec.run(
      'git',
      ['-C', check.workspace, 'rev-parse', '--is-shallow-repository'],
      { timeoutS },
    );
    if (shallow.exitCode === 0 && shallow.stdout.trim() === 'false') return 'not';
    return { unknown: 'the checkout is shallow (its history is cut off)' };
  }
  const why = (r.stderr || r.stdout).trim().split('\n')[0] ?? '';
  return { unknown: `git merge-base exited ${r.exitCode}${why ? `: ${why}` : ''}` };
}
