// The nightly as a paired run on the H100 (issue 25), 2026-11-26 03:14-03:36 UTC, NVIDIA H100 80GB
// HBM3, 700 W, driver 580.159.04, the device tool's nvidia-h100-x1 (machine 10), harness and
// bundle of 708c622: `KG_SHA=708c622… KG_BASELINE_DIR=/tmp/kgstore bash scripts/gpu-e2e.sh /tmp/n1
// push nightly nightly-slow2 nightly2`, then `… /tmp/n1 nightly3` on the same machine. Each night
// is a new commit with the same kernel code, timed pair by pair beside the newest good stored run:
//   run 32 (nightly)        beside the push's commit;
//   run 33 (nightly-slow2)  beside run 32's, with triton_fa2 planted 2 % slower in tonight's arm;
//   run 34 (nightly2)       passed over run 33 (it found 26 cases SLOWER), beside run 32's;
//   run 35 (nightly3)       beside run 34's.
// And on a second H100 (machine 11, serial 1752524018199), 03:37-03:50 UTC, the same commit:
// `… bash scripts/gpu-e2e.sh /tmp/n2 push nightly nightly2`: run 36 (nightly) beside the push's
// commit, run 37 (nightly2) beside run 36's.
// Judged again here as the action judges a schedule event; docs/judging.md gives the runs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { compare } from '../src/judge/index.js';
import { judge, stepVerdict } from '../src/pipeline/index.js';
import { validateResults } from '../src/results/index.js';
import { expectAsOnTheMachine, loadGz, RECORDED, ROOT, wallOf } from './support/recorded.js';

const config = loadConfig(ROOT);
const LARGE = 'B=16,H=96,S=4096';
const key = (kv: string, dtype: string, d: number, causal: boolean) =>
  `attention/${kv}/dtype=${dtype},${LARGE},D=${d},causal=${causal}`;
const actionLog = (name: string) =>
  gunzipSync(readFileSync(join(RECORDED, name, 'action.log.gz'))).toString('utf8');
/** The commit each night ran (its run.git_sha) and the one it was timed beside. */
const commits = (name: string) => {
  const r = loadGz(name);
  return { sha: r.run.git_sha!, base: r.run.paired_base?.git_sha };
};

describe.each([
  // name, [SLOWER, FASTER, SAME, AMBIGUOUS], the keys AMBIGUOUS, wall s
  ['nightly-h100-run32', [0, 0, 215, 1], [key('sdpa_flash', 'bf16', 128, false)], 272.8],
  ['nightly-h100-run34', [0, 0, 215, 1], [key('sdpa_flash', 'bf16', 128, false)], 242.8],
  [
    'nightly-h100-run35',
    [0, 0, 214, 2],
    [key('sdpa_flash', 'fp16', 128, true), key('sdpa_flash', 'bf16', 128, false)],
    255.3,
  ],
  ['nightly-h100-run36', [0, 0, 215, 1], [key('sdpa_flash', 'bf16', 128, false)], 275.3],
  [
    'nightly-h100-run37',
    [0, 0, 214, 2],
    [key('triton_fa2', 'bf16', 128, false), key('sdpa_flash', 'bf16', 128, false)],
    277.1,
  ],
] as const)('%s: a night of identical kernel code on the H100', (name, perf, ambiguous, wall) => {
  const results = loadGz(name);
  const judged = judge(results, undefined, config, 'nightly');

  it('is paired on every timed case, nothing SLOWER or FASTER, at most 1 % AMBIGUOUS', () => {
    expectAsOnTheMachine(name, results, judged.comparison, perf);
    const timed = judged.comparison.cases.filter((c) => c.perf !== 'UNTIMED');
    expect(timed.every((c) => c.method === 'paired')).toBe(true);
    expect(timed).toHaveLength(216);
    expect(judged.comparison.cases.filter((c) => c.perf === 'AMBIGUOUS').map((c) => c.key)).toEqual(
      ambiguous,
    );
    expect(perf[3] / 216).toBeLessThanOrEqual(0.01);
  });

  it('has no regression title and posts no alert', () => {
    expect(judged.rendered.full.split('\n')[0]).toMatch(
      /^## kernelgate nightly: ✅ pass: no case slower or faster · 2026-11-26T03:/,
    );
    expect(judged.rendered.alert).toBeUndefined();
    expect(wallOf(name)).toBe(wall);
  });
});

describe('nightly-slow2-h100-run33: triton_fa2 planted 2 % slower tonight', () => {
  const name = 'nightly-slow2-h100-run33';
  const results = loadGz(name);
  const judged = judge(results, undefined, config, 'nightly');
  const cases = judged.comparison.cases;

  it('is SLOWER on every case of the planted variant and moves nothing else', () => {
    expectAsOnTheMachine(name, results, judged.comparison, [26, 0, 189, 1]);
    const fa2 = cases.filter((c) => c.variant === 'triton_fa2');
    expect(fa2).toHaveLength(26);
    expect(fa2.every((c) => c.perf === 'SLOWER')).toBe(true);
    // The Done-when bar: at least 95 % of its cases of 100 µs or more (8 of 8 here).
    const large = fa2.filter((c) => (c.medianMs ?? 0) >= 0.1);
    expect(large).toHaveLength(8);
    for (const c of large) {
      expect(c.ratio).toBeGreaterThan(1.015);
      expect(c.ratio).toBeLessThan(1.03);
    }
    const others = cases.filter((c) => c.variant !== 'triton_fa2');
    expect(others.filter((c) => c.perf === 'SLOWER' || c.perf === 'FASTER')).toEqual([]);
    expect(others.filter((c) => c.perf === 'AMBIGUOUS').map((c) => c.key)).toEqual([
      key('sdpa_flash', 'bf16', 128, false),
    ]);
  });

  it('titles the nightly a regression of triton_fa2 and raises the alert', () => {
    expect(judged.rendered.full.split('\n')[0]).toBe(
      '## kernelgate nightly: ⚠️ regression: attention/triton\\_fa2 slower on 26 cases · 2026-11-26T03:23:20Z',
    );
    expect(judged.rendered.alert).toBeDefined();
  });
});

describe('the chain of nights: each timed beside the newest good one', () => {
  const [n32, n33, n34, n35] = [
    'nightly-h100-run32',
    'nightly-slow2-h100-run33',
    'nightly-h100-run34',
    'nightly-h100-run35',
  ].map(commits) as [ReturnType<typeof commits>, ...ReturnType<typeof commits>[]];

  it('the second machine: each night beside the one before', () => {
    const [n36, n37] = ['nightly-h100-run36', 'nightly-h100-run37'].map(commits);
    expect(n37!.base).toBe(n36!.sha);
    expect(actionLog('nightly-h100-run36')).toContain(
      `kernelgate: tonight is timed beside ${n36!.base!.slice(0, 12)} (push run of 2026-11-26T03:37:44Z), the newest good run of main on H100-SXM`,
    );
  });

  it('a regressed night is never the next one’s base', () => {
    expect(n33!.base).toBe(n32.sha);
    // Run 34 passed over run 33, which found triton_fa2 SLOWER, and went back to run 32.
    expect(n34!.base).toBe(n32.sha);
    expect(n35!.base).toBe(n34!.sha);
    const log = actionLog('nightly-h100-run34');
    expect(log).toContain(
      `kernelgate: nightly base: passed over ${n33!.sha.slice(0, 12)} (schedule run of 2026-11-26T03:23:20Z): it reported 26 SLOWER cases (attention/triton_fa2/dtype=bf16,B=16,H=96,S=4096,D=128,causal=false, …): a regression is never the next night's base`,
    );
    expect(log).toContain(
      `kernelgate: tonight is timed beside ${n32.sha.slice(0, 12)} (schedule run of 2026-11-26T03:18:47Z), the newest good run of main on H100-SXM`,
    );
  });
});

// Run 39 (machine 12, serial 1752624019654, 2026-11-26 04:01-04:12 UTC, d13c4ee): `KG_SHA=d13c4ee…
// KG_BASELINE_DIR=/tmp/kgstore bash scripts/gpu-e2e.sh /tmp/n3 push nightly-bisect`: eight commits
// after the push, the 4th making triton_fa2 launch twice; tonight (the 8th) bisected on the H100.
describe('nightly-bisect-h100-run39: a planted regression bisected to its commit', () => {
  const name = 'nightly-bisect-h100-run39';
  const dir = join(RECORDED, name);
  const planted = readFileSync(join(dir, 'planted_sha'), 'utf8').trim();
  const results = loadGz(name);
  const gz = (file: string) => gunzipSync(readFileSync(join(dir, file))).toString('utf8');

  it('finds triton_fa2 SLOWER and names the 4th commit, measuring two of the three that changed the kernel', () => {
    const judged = judge(results, undefined, config, 'nightly');
    expectAsOnTheMachine(name, results, judged.comparison, [26, 0, 189, 1]);
    const found = results.diagnostics.filter((d) => d.code === 'nightly.bisect');
    expect(found).toHaveLength(1);
    expect(found[0]!.message).toMatch(
      new RegExp(
        `^attention/triton_fa2 became slower at ${planted}: the first bad commit of 8 commits since the last good run ` +
          `\\(3 commits changed the kernel's folder; 2 commits measured: [0-9a-f]{12} good \\(SLOWER on 0 of 26 cases, median ×1\\.000\\d\\); ` +
          `${planted.slice(0, 12)} bad \\(SLOWER on 26 of 26 cases, median ×1\\.99\\d\\d\\)\\)$`,
      ),
    );
    expect(results.run.stage_seconds?.['bisect']).toBe(96.087);
    expect(wallOf(name)).toBe(368.3);
  });

  it('each step judged again says what it said on the machine', () => {
    const steps = readdirSync(dir)
      .filter((f) => f.startsWith('bisect-'))
      .sort();
    const verdicts = steps.map((f) => {
      const r = validateResults(JSON.parse(gz(f)), f);
      const cases = compare(r, undefined, config).cases.filter((c) => c.variant === 'triton_fa2');
      return `${f.slice(7, 19)} ${stepVerdict(cases).verdict}`;
    });
    expect(verdicts).toContain(`${planted.slice(0, 12)} bad`);
    expect(verdicts.filter((v) => v.endsWith(' good'))).toHaveLength(1);
  });

  it('the nightly issue names the commit', () => {
    expect(gz('standin-state.json.gz')).toContain(`became slower at ${planted}`);
    expect(gz('report.md.gz')).toContain(`became slower at ${planted}`);
  });
});
