// The nightly's bisection search (src/pipeline/bisect.ts): only commits that change the kernel's
// folder are candidates; they are searched in halves; a time box or a step that cannot tell
// narrows the range and says why.
import { describe, expect, it } from 'vitest';
import { bisect, type BisectPlan, describeBisect } from '../src/pipeline/index.js';

const sha = (i: number) => `${i}`.repeat(40).slice(0, 40);
const COMMITS = [1, 2, 3, 4, 5, 6, 7, 8].map(sha);

/** Eight commits after the good run; the kernel's folder changes at 2, 4 and 6; 4 is the culprit. */
function plan(over: Partial<BisectPlan> = {}, culprit = 4) {
  const measured: string[] = [];
  const fp: Record<string, string> = {};
  let tree = 'tree-0';
  for (const [i, s] of COMMITS.entries()) {
    if ([2, 4, 6].includes(i + 1)) tree = `tree-${i + 1}`;
    fp[s] = tree;
  }
  const p: BisectPlan = {
    commits: COMMITS,
    goodFingerprint: 'tree-0',
    fingerprint: async (s) => fp[s],
    measure: async (s) => {
      measured.push(s);
      const bad = COMMITS.indexOf(s) + 1 >= culprit;
      return {
        sha: s,
        verdict: bad ? 'bad' : 'good',
        detail: bad ? 'SLOWER on 2 of 2 cases' : 'SLOWER on 0 of 2 cases',
      };
    },
    outOfTime: () => false,
    ...over,
  };
  return { p, measured };
}

describe('bisect', () => {
  it('finds the fourth of eight commits measuring two of the three that changed the kernel', async () => {
    const { p, measured } = plan();
    const outcome = await bisect(p);
    expect(outcome).toMatchObject({ kind: 'found', sha: sha(4), candidates: 3, commits: 8 });
    expect(measured).toEqual([sha(2), sha(4)]);
    expect(describeBisect('scale/triton_axpb', outcome)).toBe(
      `scale/triton_axpb became slower at ${sha(4)}: the first bad commit of 8 commits since the last good run ` +
        `(3 commits changed the kernel's folder; 2 commits measured: ${sha(2).slice(0, 12)} good (SLOWER on 0 of 2 cases); ` +
        `${sha(4).slice(0, 12)} bad (SLOWER on 2 of 2 cases))`,
    );
  });

  it('names the last candidate when only it is bad, and the only candidate without measuring', async () => {
    const last = plan({}, 6);
    expect(await bisect(last.p)).toMatchObject({ kind: 'found', sha: sha(6) });
    expect(last.measured).toEqual([sha(2), sha(4)]);
    const one = plan({
      fingerprint: async (s) => (s === sha(5) || COMMITS.indexOf(s) > 4 ? 'b' : 'tree-0'),
    });
    const outcome = await bisect(one.p);
    expect(outcome).toMatchObject({ kind: 'found', sha: sha(5), steps: [] });
    expect(one.measured).toEqual([]);
    expect(describeBisect('k/v', outcome)).toContain(
      'no commit measured: it is the only one that changed the kernel',
    );
  });

  it('says when no commit changed the kernel', async () => {
    const { p } = plan({ fingerprint: async () => 'tree-0' });
    const outcome = await bisect(p);
    expect(outcome).toEqual({ kind: 'no-change', commits: 8 });
    expect(describeBisect('k/v', outcome)).toBe(
      "k/v is slower, but none of the 8 commits since the last good run changed the kernel's folder: the change is in code it imports from elsewhere in the repository",
    );
  });

  it('narrows the range when the time box runs out or a step cannot tell', async () => {
    const boxed = await bisect(plan({ outOfTime: () => true }).p);
    expect(describeBisect('k/v', boxed)).toBe(
      `k/v became slower between ${sha(2).slice(0, 12)} and ${sha(6).slice(0, 12)} (inclusive; the time box ran out; no commit measured)`,
    );
    const unsure = plan({
      measure: async (s) => ({ sha: s, verdict: 'unknown', detail: 'SLOWER on 1 of 2 cases' }),
    });
    const outcome = await bisect(unsure.p);
    expect(outcome).toMatchObject({ kind: 'narrowed', first: sha(2), last: sha(6) });
    expect(describeBisect('k/v', outcome)).toContain(
      `(inclusive; ${sha(2).slice(0, 12)} could not be told good or bad (SLOWER on 1 of 2 cases); 1 commit measured: ${sha(2).slice(0, 12)} unknown (SLOWER on 1 of 2 cases))`,
    );
  });
});
