// The nightly's base: the newest stored run of the branch on this GPU model that the gate judged
// good (it passed, and found nothing SLOWER), whose commit is an ancestor of tonight's. Tonight's
// commit is timed beside that commit pair by pair, as a pull request is beside its base, so the
// nightly compares code, not one night's machine with another's.
import type { Exec } from '../lib/index.js';
import type { BaselineKey, BaselineStore, StoredBaseline } from '../store/index.js';
import { isAncestor } from './ancestry.js';

/** How many stored runs, newest first, the nightly looks through for a good one. */
export const GOOD_BASE_WINDOW = 30;

export interface GoodBase {
  sha: string;
  stored: StoredBaseline;
  /** one line for the log and the report: which run and why it is the base */
  line: string;
}

export type GoodBaseLookup =
  | { ok: true; base: GoodBase; passedOver: string[] }
  | { ok: false; reason: string; passedOver: string[] };

/** Why a stored run is not a good base (its judgement), or undefined when it is one. */
export function notGood(stored: StoredBaseline): string | undefined {
  const sha = stored.results.run.git_sha;
  if (sha === undefined || !/^[0-9a-f]{40}$/.test(sha)) return 'it names no commit';
  const judged = stored.judged;
  if (judged === undefined) return undefined; // stored before judgements were kept: passing runs only
  if (judged.verdict === 'fail') return 'its gate failed';
  if (judged.slower.length > 0) {
    const n = judged.slower.length;
    return `it reported ${n} SLOWER case${n === 1 ? '' : 's'} (${judged.slower[0]}${n > 1 ? ', …' : ''}): a regression is never the next night's base`;
  }
  return undefined;
}

/** `ancestor` of HEAD, `not` an ancestor, or `unknown` (a shallow checkout lacks the commit). */
async function ancestry(
  workspace: string,
  sha: string,
  exec: Exec,
): Promise<'ancestor' | 'not' | 'unknown'> {
  const r = await isAncestor({ workspace, exec, gitTimeoutS: 60 }, sha, 'HEAD');
  return typeof r === 'string' ? r : 'unknown';
}

function describe(stored: StoredBaseline): string {
  const { run } = stored.results;
  const event = stored.judged?.event ?? 'stored';
  return `${(run.git_sha ?? '').slice(0, 12)} (${event} run of ${run.started_at})`;
}

/**
 * The newest good stored run whose commit is an ancestor of the workspace's HEAD. Runs passed over
 * are named with why; a commit whose ancestry cannot be read (a shallow checkout) is taken, said.
 */
export async function lastGoodBase(
  store: BaselineStore,
  key: BaselineKey,
  workspace: string,
  exec: Exec,
  window = GOOD_BASE_WINDOW,
): Promise<GoodBaseLookup> {
  const passedOver: string[] = [];
  const runs = await store.history(key, window);
  for (const stored of runs) {
    const why = notGood(stored);
    if (why !== undefined) {
      passedOver.push(`${describe(stored)}: ${why}`);
      continue;
    }
    const sha = stored.results.run.git_sha!;
    const relation = await ancestry(workspace, sha, exec);
    if (relation === 'not') {
      passedOver.push(
        `${describe(stored)}: its commit is not an ancestor of tonight's (the branch was rewritten)`,
      );
      continue;
    }
    const where = `the newest good run of ${key.branch} on ${key.sku}`;
    const caveat =
      relation === 'unknown' ? '; its ancestry could not be read (a shallow checkout)' : '';
    return {
      ok: true,
      base: { sha, stored, line: `${describe(stored)}, ${where}${caveat}` },
      passedOver,
    };
  }
  const looked = runs.length === 0 ? 'none is stored' : `none of the newest ${runs.length} is good`;
  return {
    ok: false,
    reason: `no good run of ${key.branch} on ${key.sku} to time tonight's commit beside (${looked})`,
    passedOver,
  };
}
