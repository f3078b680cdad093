// The nightly's bisection search (src/pipeline/bisect.ts): only commits that change the kernel's
// folder are candidates; they are searched in halves; a time box or a step that cannot tell
// narrows the range and says why; the steps it measured are kept, and the next night goes on.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bisectMemoryPath,
  knownSteps,
  rememberStep,
  searchKey,
} from '../src/pipeline/bisect-memory.js';
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

describe('a bisection the time box stopped goes on the next night', () => {
  const GOOD = 'a'.repeat(40);
  const key = searchKey(GOOD, 'scale/triton_axpb');

  it('night 1 measures one step and keeps it; night 2 takes it and measures only the rest', async () => {
    const file = bisectMemoryPath(mkdtempSync(join(tmpdir(), 'kg-bisect-')));
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    // Night 1: the box allows one step.
    let budget = 1;
    const first = plan({ outOfTime: () => budget-- <= 0 });
    const remembering = (p: BisectPlan): BisectPlan => ({
      ...p,
      measure: async (s) => {
        const step = await p.measure(s);
        rememberStep(file, key, step, log);
        return step;
      },
    });
    const night1 = await bisect(remembering(first.p));
    expect(night1).toMatchObject({ kind: 'narrowed', first: sha(4), last: sha(6) });
    expect(first.measured).toEqual([sha(2)]);
    // Night 2: the same good run, the step measured before taken as it was.
    const known = knownSteps(file, key, log);
    expect([...known.keys()]).toEqual([sha(2)]);
    const second = plan({ known });
    const night2 = await bisect(remembering(second.p));
    expect(night2).toMatchObject({ kind: 'found', sha: sha(4) });
    expect(second.measured).toEqual([sha(4)]);
    expect(describeBisect('scale/triton_axpb', night2)).toContain(
      `2 commits measured: ${sha(2).slice(0, 12)} good (SLOWER on 0 of 2 cases, measured on an earlier night); ${sha(4).slice(0, 12)} bad (SLOWER on 2 of 2 cases)`,
    );
    // Another good run, or another variant, starts afresh.
    expect(knownSteps(file, searchKey('b'.repeat(40), 'scale/triton_axpb'), log).size).toBe(0);
    expect(knownSteps(file, searchKey(GOOD, 'scale/torch_axpb'), log).size).toBe(0);
    expect(lines).toEqual([]);
  });

  it('keeps no step that could not tell, and ignores a file that is not its record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-bisect-'));
    const file = bisectMemoryPath(dir);
    const lines: string[] = [];
    rememberStep(file, key, { sha: sha(2), verdict: 'unknown', detail: 'x' }, (l) => lines.push(l));
    expect(knownSteps(file, key, (l) => lines.push(l)).size).toBe(0);
    mkdirSync(join(dir, 'bisect'), { recursive: true });
    writeFileSync(file, '{"format": "something/else@1", "searches": {}}');
    expect(knownSteps(file, key, (l) => lines.push(l)).size).toBe(0);
    expect(lines).toEqual([
      `kernelgate: bisect: ${file} is not a record of earlier steps (format "something/else@1", expected kernelgate/bisect-steps@1): not used`,
    ]);
  });
});
