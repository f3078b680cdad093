// The stored baseline of a pull request, ordered by commit ancestry (issue 26): among the stored
// runs of the base branch on this GPU model, the nearest one whose commit is an ancestor of the
// pull request's base, the start time (a runner's clock) only as a tie-break. A stored run of a
// commit that is not an ancestor (a force-pushed branch, another line of history) is passed over
// by name. When git cannot answer (a shallow checkout, a commit it lacks, its deadline), the newest
// stored run by its start time is the baseline, as before, and the log says so.
import type { Exec } from '../lib/index.js';
import type { BaselineKey, BaselineStore, StoredBaseline } from '../store/index.js';
import { isAncestor } from './ancestry.js';
import { GOOD_BASE_WINDOW } from './nightly-base.js';

export interface AncestryCheck {
  /** the pull request's base commit (pull_request.base.sha) */
  baseSha: string;
  /** a git checkout holding it (the workspace) */
  workspace: string;
  exec: Exec;
  /** each git command's deadline in seconds (the 'git-timeout' input); default 120 */
  gitTimeoutS?: number;
}

export interface AncestorBaseline {
  /** undefined: nothing stored, or no stored run is an ancestor of the base */
  stored: StoredBaseline | undefined;
  /** what the log says: the runs passed over, the one chosen, or why git could not tell */
  lines: string[];
  /** git could not answer: the newest stored run by its start time was taken */
  fellBack: boolean;
}

const PREFIX = 'kernelgate: stored baseline:';

function describe(stored: StoredBaseline): string {
  const { run } = stored.results;
  return `${(run.git_sha ?? 'no commit').slice(0, 12)} (run of ${run.started_at}, ${stored.path})`;
}

/**
 * The stored baseline of a pull request: the nearest stored ancestor of its base commit among the
 * newest `window` stored runs of the branch on the GPU model (see the file's head).
 */
export async function ancestorBaseline(
  store: BaselineStore,
  key: BaselineKey,
  check: AncestryCheck,
  window = GOOD_BASE_WINDOW,
): Promise<AncestorBaseline> {
  const runs = await store.history(key, window);
  const base = check.baseSha.slice(0, 12);
  const lines: string[] = [];
  const fallBack = (sha: string, why: string): AncestorBaseline => ({
    stored: runs[0],
    lines: [
      ...lines,
      `${PREFIX} git cannot tell whether ${sha.slice(0, 12)} is an ancestor of the pull request's base ${base} (${why}): the newest stored run by its start time is the baseline${runs[0] ? `, ${describe(runs[0])}` : ''}`,
    ],
    fellBack: true,
  });
  const ancestors: StoredBaseline[] = [];
  for (const stored of runs) {
    const sha = stored.results.run.git_sha;
    if (sha === undefined || !/^[0-9a-f]{40}$/.test(sha)) {
      lines.push(`${PREFIX} passed over ${describe(stored)}: it names no commit`);
      continue;
    }
    const relation = await isAncestor(check, sha, check.baseSha);
    if (typeof relation === 'object') return fallBack(sha, relation.unknown);
    if (relation === 'ancestor') ancestors.push(stored);
    else {
      lines.push(
        `${PREFIX} passed over ${describe(stored)}: its commit is not an ancestor of the pull request's base ${base} (a force-pushed branch or another line of history)`,
      );
    }
  }
  // Newest first by start time: a later ancestor that descends from the best so far is nearer.
  let best = ancestors[0];
  for (const next of ancestors.slice(1)) {
    const [a, b] = [best!.results.run.git_sha!, next.results.run.git_sha!];
    if (a === b) continue;
    const relation = await isAncestor(check, a, b);
    if (typeof relation === 'object') return fallBack(b, relation.unknown);
    if (relation === 'ancestor') best = next;
  }
  if (best === undefined) return { stored: undefined, lines, fellBack: false };
  lines.push(
    `${PREFIX} ${describe(best)}, the nearest stored ancestor of the pull request's base ${base} of ${key.branch} on ${key.sku}`,
  );
  return { stored: best, lines, fellBack: false };
}
