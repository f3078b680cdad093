// The nightly with a planted regression, its bisection and its evidence, recorded on two H200s
// (issue 33): run 82, 2026-11-26 22:37-22:44 UTC, the device tool's nvidia-h200-x2 (2 × NVIDIA
// H200, serials 1653824128868 and 1653724056405, 700 W, driver 580.159.04), bundle and harness of
// ae00eec: `KG_SHA=ae00eec… KG_BASELINE_DIR=/tmp/kgstore bash .carry/go.sh x 400 push` (run 81,
// whose results are push.results.json.gz here), then on the same machine `… go.sh x2n 560
// nightly-bisect`: eight commits after the push, the 4th making triton_fa2 launch its kernel twice
// (planted_sha); tonight is the 8th. The action profiled base and head with Nsight Compute; its raw
// pages are ncu-{base,head}-attention-triton_fa2.csv.gz. The run recorded each profile before the
// launches were kept in results (deep.ncu_compare[].launches), so the tests read them from those
// pages as the action now does (src/deep/ncu.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { parseNcuCsv, summarizeNcu } from '../src/deep/index.js';
import { whyItMoved } from '../src/judge/index.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults } from '../src/results/index.js';
import {
  bisectStepVerdicts,
  expectAsOnTheMachine,
  loadGz,
  RECORDED,
  ROOT,
  wallOf,
} from './support/recorded.js';

const NAME = 'nightly-bisect-h200x2-run82';
const DIR = join(RECORDED, NAME);
const REPO = 'https://github.com/kernelgate/kernelgate';
const config = loadConfig(ROOT);
const gz = (file: string) => gunzipSync(readFileSync(join(DIR, file))).toString('utf8');
const planted = readFileSync(join(DIR, 'planted_sha'), 'utf8').trim();
const push = loadResults(join(DIR, 'push.results.json.gz'));
const profileOf = (side: 'base' | 'head') =>
  summarizeNcu(parseNcuCsv(gz(`ncu-${side}-attention-triton_fa2.csv.gz`)));

/** Tonight's results with each profile's launches, as the action now writes them. */
function withLaunches() {
  const r = loadGz(NAME);
  const [base, head] = [profileOf('base'), profileOf('head')];
  for (const n of r.deep?.ncu_compare ?? []) {
    if (n.kernel !== 'attention' || n.variant !== 'triton_fa2') continue;
    n.base.launches = base.launches;
    n.head.launches = head.launches;
  }
  return r;
}

describe(`${NAME}: a planted regression bisected, with the evidence, on two H200s`, () => {
  it('judges triton_fa2 SLOWER on all 26 cases and nothing else, as on the machine', () => {
    const results = loadGz(NAME);
    const judged = judge(results, push, config, 'nightly');
    expectAsOnTheMachine(NAME, results, judged.comparison, [26, 0, 190, 0]);
    const moved = judged.comparison.cases.filter((c) => c.perf === 'SLOWER');
    expect(new Set(moved.map((c) => c.variant))).toEqual(new Set(['triton_fa2']));
    expect(wallOf(NAME)).toBe(459.2);
  });

  it('bisects to the planted commit, measuring two of the three that changed the kernel', () => {
    const found = loadGz(NAME).diagnostics.filter((d) => d.code === 'nightly.bisect');
    expect(found.map((d) => d.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^attention/triton_fa2 became slower at ${planted}: the first bad commit of 8 commits since the last good run ` +
            `\\(3 commits changed the kernel's folder; 2 commits measured: [0-9a-f]{12} good \\(SLOWER on 0 of 26 cases, median ×1\\.000\\d\\); ` +
            `${planted.slice(0, 12)} bad \\(SLOWER on 26 of 26 cases, median ×1\\.99\\d\\d\\)\\)$`,
        ),
      ),
    ]);
    expect(bisectStepVerdicts(NAME, 'triton_fa2', config)).toEqual(
      [`${planted.slice(0, 12)} bad`, expect.stringMatching(/^[0-9a-f]{12} good$/)].sort(),
    );
  });

  it('reads two launches of the same kernel per call in the head, one in the base', () => {
    const [base, head] = [profileOf('base'), profileOf('head')];
    expect([base.launches, head.launches]).toEqual([1, 2]);
    expect([base.deviceKernel, head.deviceKernel]).toEqual(['_attn_fwd', '_attn_fwd']);
    // Twice the GPU time per call at the same throughput: the same work done twice.
    expect(head.metrics.duration_ms! / base.metrics.duration_ms!).toBeCloseTo(2.003, 3);
    expect(head.metrics.tensor_pipe_pct).toBeCloseTo(base.metrics.tensor_pipe_pct!, 1);
  });

  it('names the extra launch first in Why it moved, and the bisected commit linked', () => {
    const results = withLaunches();
    const judged = judge(results, push, config, 'nightly', undefined, [push], { repoUrl: REPO });
    const [w] = whyItMoved(judged.comparison.cases, results, push);
    expect(w?.profile?.launches).toEqual({ from: 1, to: 2 });
    expect(w?.bisect?.sha).toBe(planted);
    const line = judged.rendered.full.split('\n').find((l) => l.startsWith('- 🔴 **attention/'));
    expect(line).toBe(
      '- 🔴 **attention/triton\\_fa2** SLOWER on 26 cases, up to +108.2 %: Nsight Compute: kernel ' +
        'launches per call 1 → 2, GPU time per call 34.023 → 68.148 ms, the profile of each launch ' +
        'unchanged; tuning \\[128,128,8,3\\] → \\[128,64,8,3\\] on 4 of 26 cases, compiled kernel ' +
        `registers 226 → 160; bisected to [\`${planted.slice(0, 12)}\`](${REPO}/commit/${planted})`,
    );
    expect(judged.rendered.full).toContain('| ncu kernel launches per call | 1 | 2 | +1 |');
    expect(judged.rendered.full).toContain(
      `Bisected by tonight's run: slower from [\`${planted.slice(0, 12)}\`](${REPO}/commit/${planted}), the first bad commit of 8 commits since the last good run`,
    );
    // The comment the pull request would get carries the same line.
    expect(judged.rendered.comment).toContain(line);
  });

  it('with the launches, says what else the profile moved (TEST INPUT: the head tensor pipe lowered to 40 %)', () => {
    const results = withLaunches();
    const n = results.deep!.ncu_compare!.find((x) => x.variant === 'triton_fa2')!;
    n.head.metrics!.tensor_pipe_pct = 40;
    const judged = judge(results, push, config, 'nightly');
    const [w] = whyItMoved(judged.comparison.cases, results, push);
    expect(w?.cause).toMatch(
      /^Nsight Compute: kernel launches per call 1 → 2, GPU time per call 34\.023 → 68\.148 ms, tensor pipe 52\.9 → 40\.0 % of peak; tuning /,
    );
  });

  it('a bisection that only narrowed the range names no commit (TEST INPUT: its message replaced)', () => {
    const results = withLaunches();
    const d = results.diagnostics.find((x) => x.code === 'nightly.bisect')!;
    d.message =
      'attention/triton_fa2 became slower between 706f8db9ed72 and 1f9d3f121398 (inclusive; the time box ran out; no commit measured)';
    const judged = judge(results, push, config, 'nightly', undefined, [push], { repoUrl: REPO });
    const [w] = whyItMoved(judged.comparison.cases, results, push);
    expect(w?.bisect).toEqual({
      text: 'became slower between 706f8db9ed72 and 1f9d3f121398 (inclusive; the time box ran out; no commit measured)',
    });
    expect(w?.cause).not.toContain('bisected');
    expect(judged.rendered.full).not.toContain('; bisected to');
    expect(judged.rendered.full).toContain(
      "Bisected by tonight's run: became slower between 706f8db9ed72 and 1f9d3f121398 (inclusive; the time box ran out; no commit measured)",
    );
  });

  it('a first paired night says it has no series yet, not "over the 0 stored paired runs since "', () => {
    // The machine's issue: the push before it was timed without pairs, so left out of the series.
    const body = (
      JSON.parse(gz('standin-state.json.gz')) as { issues: { body: string }[] }
    ).issues.at(-1)!.body;
    expect(body).toContain('over the 0 stored paired runs since  (at most 14 nights');
    const full = judge(loadGz(NAME), push, config, 'nightly', undefined, [push]).rendered.full;
    const history = full.slice(full.indexOf('### History'), full.indexOf('### What changed'));
    expect(history).toBe(
      '### History: steps over the window\n\n' +
        "No stored paired run in the window yet (at most 14 nights with tonight's): no series to read steps from until the next night.\n\n" +
        "1 stored run timed without pairs (not like tonight's) left out of the series.\n\n",
    );
  });

  it('the issue posted on the machine already had the profile of base and head', () => {
    const state = JSON.parse(gz('standin-state.json.gz')) as { issues: { body: string }[] };
    const body = state.issues.at(-1)!.body;
    expect(body).toContain('| ncu duration ms | 34.023 | 68.148 | +34.125 |');
    expect(body).toContain(`became slower at ${planted}`);
    expect(body.split('\n')[1]).toBe(
      '## kernelgate nightly: ⚠️ regression: attention/triton\\_fa2 slower on 26 cases · 2026-11-26T22:37:12Z',
    );
  });
});
