// The nightly with a planted regression, its bisection and its evidence, recorded on two H100s
// (issue 33's "done when"): run 86, 2026-11-27 01:36-01:45 UTC, the device tool's nvidia-h100-x2
// (machine J: 2 × NVIDIA H100 80GB HBM3, serials 1752824028660 and 1752824029412, 700 W, driver
// 580.159.04), bundle and harness of 0504f36: `KG_SHA=0504f36… KG_BASELINE_DIR=/tmp/kgstore bash
// .carry/go.sh x 420 push` (run 83, 01:23 UTC, whose results are push.results.json.gz here), then
// `… go.sh xa 560 accept aa` (runs 84 and 85), then `… go.sh x2n 570 nightly-bisect`: eight commits
// after the push, the 4th making triton_fa2 launch its kernel twice (planted_sha); tonight is the
// 8th. The action profiled base and head with Nsight Compute (ncu-{base,head}-attention-triton_fa2).
// Run 82 (test/recorded-nightly-why.test.ts) is the same scenario on two H200s.
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

const NAME = 'nightly-bisect-h100x2-run86';
const DIR = join(RECORDED, NAME);
const REPO = 'https://github.com/kernelgate/kernelgate';
const config = loadConfig(ROOT);
const gz = (file: string) => gunzipSync(readFileSync(join(DIR, file))).toString('utf8');
const planted = readFileSync(join(DIR, 'planted_sha'), 'utf8').trim();
const push = loadResults(join(DIR, 'push.results.json.gz'));
const posted = () =>
  (
    JSON.parse(gz('standin-state.json.gz')) as { issues: { title: string; body: string }[] }
  ).issues.find((i) => i.title === 'kernelgate nightly report')!.body;

describe(`${NAME}: a planted regression bisected, with the evidence, on two H100s`, () => {
  it('ran on two H100s and judges triton_fa2 SLOWER on all 26 cases and nothing else, as on the machine', () => {
    const gpus = readFileSync(join(DIR, 'gpu.txt'), 'utf8').trim().split('\n').slice(1);
    expect(gpus.map((l) => l.split(',')[0])).toEqual([
      'NVIDIA H100 80GB HBM3',
      'NVIDIA H100 80GB HBM3',
    ]);
    const results = loadGz(NAME);
    expect(results.environment.gpu.count).toBe(2);
    const judged = judge(results, push, config, 'nightly');
    expectAsOnTheMachine(NAME, results, judged.comparison, [26, 0, 186, 4]);
    const moved = judged.comparison.cases.filter((c) => c.perf === 'SLOWER');
    expect(new Set(moved.map((c) => c.variant))).toEqual(new Set(['triton_fa2']));
    // Each SLOWER case measured again in a fresh pair of processes and confirmed.
    expect(moved.map((c) => c.confirmed)).toEqual(Array(26).fill('confirmed'));
    expect(wallOf(NAME)).toBe(526.8);
  });

  it('bisects to the planted commit, measuring two of the three that changed the kernel', () => {
    const found = loadGz(NAME).diagnostics.filter((d) => d.code === 'nightly.bisect');
    expect(found.map((d) => d.message)).toEqual([
      `attention/triton_fa2 became slower at ${planted}: the first bad commit of 8 commits since the last good run ` +
        `(3 commits changed the kernel's folder; 2 commits measured: 9a14c3963374 good (SLOWER on 0 of 26 cases, median ×1.0004); ` +
        `${planted.slice(0, 12)} bad (SLOWER on 26 of 26 cases, median ×1.9979))`,
    ]);
    expect(bisectStepVerdicts(NAME, 'triton_fa2', config)).toEqual(
      [`${planted.slice(0, 12)} bad`, '9a14c3963374 good'].sort(),
    );
  });

  it('recorded one launch per call in the base and two in the head, from the raw Nsight Compute pages', () => {
    const r = loadGz(NAME);
    const [n] = r.deep!.ncu_compare!;
    expect([n!.base.launches, n!.head.launches]).toEqual([1, 2]);
    const profileOf = (side: 'base' | 'head') =>
      summarizeNcu(parseNcuCsv(gz(`ncu-${side}-attention-triton_fa2.csv.gz`)));
    const [base, head] = [profileOf('base'), profileOf('head')];
    expect([base.launches, head.launches]).toEqual([1, 2]);
    expect(head.metrics.duration_ms! / base.metrics.duration_ms!).toBeCloseTo(1.98, 2);
    expect(head.metrics.tensor_pipe_pct).toBeCloseTo(base.metrics.tensor_pipe_pct!, 1);
  });

  it('names the extra launch first in Why it moved, and the bisected commit linked, as posted', () => {
    const results = loadGz(NAME);
    const judged = judge(results, push, config, 'nightly', undefined, [push], { repoUrl: REPO });
    const [w] = whyItMoved(judged.comparison.cases, results, push);
    expect(w?.profile?.launches).toEqual({ from: 1, to: 2 });
    expect(w?.bisect?.sha).toBe(planted);
    const line = judged.rendered.full.split('\n').find((l) => l.startsWith('- 🔴 **attention/'));
    expect(line).toBe(
      '- 🔴 **attention/triton\\_fa2** SLOWER on 26 cases, up to +107.1 %: Nsight Compute: kernel ' +
        'launches per call 1 → 2, GPU time per call 31.499 → 62.418 ms, the profile of each launch ' +
        'unchanged; tuning \\[128,128,8,3\\] → \\[128,64,8,3\\] on 6 of 26 cases, compiled kernel ' +
        `registers 226 → 160; bisected to [\`${planted.slice(0, 12)}\`](${REPO}/commit/${planted})`,
    );
    // The issue the action posted on the machine says the same.
    const body = posted();
    expect(body).toContain(line);
    expect(body).toContain('| ncu kernel launches per call | 1 | 2 | +1 |');
    expect(body.split('\n')[1]).toBe(
      '## kernelgate nightly: ⚠️ regression: attention/triton\\_fa2 slower on 26 cases · 2026-11-27T01:36:20Z',
    );
  });

  it("says the headline's reference moved since the stored push: SDPA default timed in pairs, the push without", () => {
    // The push (run 83) timed sdpa_default without pairs at 20.18 ms; tonight's pairs at 22.36 ms,
    // while cuda_fa_wgmma stayed at 25.8-26.2 ms: the trend says the reference moved with the ratio.
    const body = posted();
    expect(body).toContain(
      '| attention (cuda\\_fa\\_wgmma) | `▅█` (0.78–0.85×) | **0.85×** | 0.78× · 0.78× · 0.85× | +9.0 % | +10.8 % |',
    );
    expect(body).toContain(
      "If the ratio moves while its reference's median stays put, the code moved; if the reference's median moves as much as ours and the ratio holds, the machine did",
    );
  });
});
