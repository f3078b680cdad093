// The report a kernel engineer reads, on the recorded GPU runs (H200: test/fixtures/recorded/pr,
// broken, slowed, nightly; H100 paired: paired-aa-h100-bursts, paired-slow2-h100), rendered with
// today's configuration: the comment opens with the outcome, what changed and the headline, and
// stays short (issue 11).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { compare } from '../src/judge/index.js';
import { gate } from '../src/judge/index.js';
import { judge } from '../src/pipeline/index.js';
import { GITHUB_COMMENT_LIMIT, renderReport } from '../src/report/index.js';
import { keepUnits } from '../src/report/compact.js';
import { evaluateTiers } from '../src/judge/index.js';
import { loadResults } from '../src/results/index.js';

const ROOT = join(import.meta.dirname, '..');
const config = loadConfig(ROOT);
const recorded = (run: string) =>
  loadResults(join(ROOT, 'test/fixtures/recorded', run, 'results.json.gz'));
const RUN_URL = 'https://github.com/octo/kernels/actions/runs/42';

/** Each recorded run, the baseline the action judged it against (none: paired), its kind. */
const RUNS: Record<string, [string | undefined, 'pr' | 'nightly']> = {
  pr: ['push', 'pr'],
  broken: ['main-1355', 'pr'],
  slowed: ['main-1355', 'pr'],
  nightly: ['main-1355', 'nightly'],
  'paired-aa-h100-bursts': [undefined, 'pr'],
  'paired-slow2-h100': [undefined, 'pr'],
};

const rendered = new Map<string, ReturnType<typeof judge>['rendered']>();
function render(run: string) {
  const [base, kind] = RUNS[run] as [string | undefined, 'pr' | 'nightly'];
  if (!rendered.has(run)) {
    const { rendered: r } = judge(recorded(run), base ? recorded(base) : undefined, config, kind, {
      runUrl: RUN_URL,
      prNumber: 7,
    });
    rendered.set(run, r);
  }
  return rendered.get(run)!;
}
const title = (md: string) => md.split('\n')[0];
/** What a reader sees before scrolling: everything above the findings. */
const firstScreen = (md: string) => md.slice(0, md.indexOf('### Findings'));

describe('the comment on the recorded runs', { timeout: 120_000 }, () => {
  it('A/A on the H100 (paired, run 5): short, nothing changed, the headline on the first screen', () => {
    const { comment } = render('paired-aa-h100-bursts');
    expect(comment.length).toBeLessThanOrEqual(6_000);
    expect(title(comment)).toBe(
      '## kernelgate: ✅ pass: no candidate slower or faster (the A/A control bsr\\_gemm/torch\\_bsr\\_dense\\_mm moved: the machine was not quiet) · PR #7',
    );
    const screen = firstScreen(comment);
    // numbers keep their units (no-break spaces) in the tables: keepUnits
    expect(screen).toContain(
      keepUnits(
        '| bsr\\_gemm/torch\\_bsr\\_dense\\_mm | 1 of 3 | +1.7 % | +1.7 % | 🔴 1 slower · 🟡 1 ambiguous (an A/A control: the machine moved, not the code) |\n' +
          '| 15 other variants | 0 of 214 | +0.0 % | −2.0 % … +1.5 % | ⚪ 214 same |',
      ),
    );
    // The honest headline: our fastest passing kernel against SDPA's default and dense cuBLAS,
    // this PR and its base timed in the same job.
    expect(screen).toContain(
      keepUnits(
        '| attention dtype=fp16, B=16, H=96, S=4096, D=128, causal=false | **0.88×** | 0.88× | **C** (half of SDPA default); next B at 25.01 ms (1.02× faster) | cuda\\_fa\\_wgmma 25.49 ms, 518 TFLOPS (fastest of 3) | sdpa\\_default 22.51 ms, 586 TFLOPS |',
      ),
    );
    expect(screen).toContain(
      keepUnits(
        '| bsr\\_gemm dtype=fp16, M=8192, N=8192, K=8192, block=128, topk=16 | **0.64×** per useful FLOP · 2.54× wall clock | 0.64× | **C** (half of dense cuBLAS per useful FLOP); next B at 0.415 ms (1.26× faster) | cuda\\_bsr\\_wgmma\\_ws 0.523 ms, 526 TFLOPS (fastest of 4) | cublas\\_dense 1.329 ms, 827 dense TFLOPS |',
      ),
    );
    expect(screen).toContain(`[the full report in the job summary](${RUN_URL})`);
  });

  it('A/A on the H200 (run 9 against run 8): short, nothing changed, the headline', () => {
    const { comment } = render('pr');
    expect(comment.length).toBeLessThanOrEqual(6_000);
    expect(title(comment)).toBe('## kernelgate: ✅ pass: no case slower or faster · PR #7');
    const screen = firstScreen(comment);
    expect(screen).toContain(
      'No case changed: nothing is slower, faster, wrong, failing or missing.',
    );
    expect(screen).toContain(
      keepUnits('| all 16 variants | 0 of 217 | −0.2 % | −5.1 % … +3.1 % |'),
    );
    expect(screen).toMatch(
      /\| \*\*0\.81×\*\* \| 0\.79× \| .* \| cuda\\_fa\\_wgmma 25\.07\sms, 526\sTFLOPS \(fastest of 3\) \| sdpa\\_default 20\.31\sms, 649\sTFLOPS \|/,
    );
  });

  it('the slowed pull request: the title says regression and names the variant', () => {
    const { comment } = render('slowed');
    expect(title(comment)).toBe(
      '## kernelgate: ⚠️ regression: attention/triton\\_fa2 slower on 26 cases · PR #7',
    );
    expect(firstScreen(comment)).toContain(
      keepUnits(
        '| attention/triton\\_fa2 | 26 of 26 | +100.9 % | +94.4 % … +110.9 % | 🔴 26 slower |',
      ),
    );
    expect(title(render('paired-slow2-h100').comment)).toBe(
      '## kernelgate: ⚠️ regression: attention/triton\\_fa2 slower on 26 cases · PR #7',
    );
  });

  it('the broken pull request: the variant and its error pattern in a few lines', () => {
    const { comment } = render('broken');
    expect(title(comment)).toBe(
      '## kernelgate: ❌ fail: attention/triton\\_fa2 wrong on 26 cases · PR #7',
    );
    const why = comment.slice(
      comment.indexOf('**Why the gate fails**'),
      comment.indexOf('**Needs attention'),
    );
    expect(why.trim().split('\n')).toEqual([
      '**Why the gate fails**',
      '',
      '- ❌ **attention/triton\\_fa2** wrong on 26 of 26 cases: rel\\_l2 above tolerance (rel\\_l2 2e-2 … 2.1e-2, tolerance 2e-3 … 1e-2). E.g. dtype=fp16,B=16,H=96,S=4096,D=128,causal=false: rel\\_l2 2e-2 &gt; tol 2e-3; seed 0: rel\\_l2 2.000e-02 &gt; tolerance 2.0e-03; seed 1: rel\\_l2 2.000e-02 &gt; tolerance 2.0e-03',
    ]);
    expect(comment).toContain(
      '_… 16 more cases of attention/triton\\_fa2 (❌ 16 wrong): in the full report._',
    );
  });

  it('groups the diagnostics by code, with a count and a range', () => {
    expect(render('pr').comment).toContain(
      '- ⚠️ clock-unstable on 62 cases of attention (8 variants), bsr\\_gemm (3 variants), SM clock spread 11–25 %. E.g. ',
    );
  });

  it('keeps every comment under GitHub limit and the full report whole', () => {
    for (const run of Object.keys(RUNS)) {
      const { comment, full, commentLevel } = render(run);
      expect(comment.length, run).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
      expect(comment.length, run).toBeLessThan(8_000);
      expect(commentLevel, run).toBe(0);
      expect(full, run).toContain('### All results');
    }
  });
});

/**
 * The nightly's trends, from five earlier runs of the same code on the H200 (runs 1–4 and the
 * nightly run 7 of docs/gpu-runs.md; run 4, calibration/aa-1359, was a pull request of that code
 * and stands in for a stored night) and the push run 8 as tonight's.
 */
function nightlyWithHistory() {
  const stored = ['calibration/run1', 'calibration/run2', 'main-1355', 'calibration/aa-1359'];
  const history = [...stored, 'nightly'].map(recorded);
  const results = recorded('push');
  const baseline = recorded('nightly');
  const comparison = compare(results, baseline, config);
  const tiers = evaluateTiers(results, config);
  return renderReport({
    kind: 'nightly',
    results,
    baseline,
    comparison,
    tiers,
    gate: gate(comparison, tiers, results, config),
    config,
    history,
    context: { runUrl: RUN_URL },
  });
}

describe('the nightly report with a history', { timeout: 120_000 }, () => {
  it('shows each headline across the stored runs, against last night, the median and the best', () => {
    const { comment, full } = nightlyWithHistory();
    expect(comment).toContain(
      "Each headline over the 5 stored runs since 2026-11-21T13:50:36Z and tonight's.",
    );
    expect(comment).toContain(
      [
        '| headline (graded tonight) | trend, oldest first (▁ −5 % … █ +5 % of the window median) | tonight | last night · window median · best | tonight vs median | reference ms vs median |',
        '| :- | :- | -: | -: | -: | -: |',
        '| attention (cuda\\_fa\\_wgmma) | `▅▅▆▄▄▄` (0.79–0.81×) | **0.79×** | 0.79× · 0.79× · 0.81× | −0.4 % | +1.6 % |',
        '| bsr\\_gemm (cuda\\_bsr\\_wgmma\\_ws) | `▄▇▃▅█▃` (0.71–0.81×) | **0.71×** | 0.81× · 0.73× · 0.81× | −2.5 % | +0.8 % |',
      ].join('\n'),
    );
    // The grade says when its reference moved (issue 32): cuBLAS ran 10 % faster tonight than in
    // the baseline run, which is most of bsr_gemm's 0.81× → 0.71×.
    expect(comment).toContain(
      keepUnits('| **0.71×** per useful FLOP · 2.83× wall clock | 0.81× · reference −10.0 % |'),
    );
    expect(comment).toContain(
      '\nThe reference moved between the baseline and this run, so the ratio moved with it whatever the candidate did: ' +
        'bsr\\_gemm: cublas\\_dense 1.525 → 1.373 ms (−10.0 %).\n',
    );
    // "No case changed" never stands beside a headline drop without naming it (issue 32)
    expect(comment).toContain(
      'No case changed: nothing is slower, faster, wrong, failing or missing. The headline moved since last night all the same: bsr\\_gemm 0.81× → 0.71× (−12.2 %); see Trends.\n',
    );
    expect(comment.indexOf('### Trends')).toBeLessThan(comment.indexOf('### What changed'));
    // The chart is in the full report, 260 px tall, not Mermaid's 500; the table is its text
    // equivalent in both. Six runs of one day: each label is its time.
    expect(full).toContain(
      [
        '```mermaid',
        '%%{init: {"xyChart": {"height": 260}}}%%',
        'xychart-beta',
        '    title "attention headline"',
        '    x-axis ["11-21 13:50", "11-21 13:53", "11-21 13:55", "11-21 13:57", "11-21 14:03", "11-21 14:07"]',
        '    y-axis "× the reference" 0 --> 1',
        '    line [0.801, 0.792, 0.811, 0.789, 0.789, 0.788]',
        '```',
      ].join('\n'),
    );
    expect(comment).not.toContain('```mermaid');
  });

  it('leaves runs of another GPU out of the trend, and pull requests never show one', () => {
    const h100 = recorded('paired-aa-h100-bursts');
    const results = recorded('nightly');
    const comparison = compare(results, undefined, config);
    const tiers = evaluateTiers(results, config);
    const base = {
      results,
      comparison,
      tiers,
      gate: gate(comparison, tiers, results, config),
      config,
    };
    expect(renderReport({ ...base, kind: 'nightly', history: [h100] }).full).not.toContain(
      '### Trends',
    );
    expect(
      renderReport({ ...base, kind: 'pr', history: [recorded('main-1355')] }).full,
    ).not.toContain('### Trends');
  });
});

/**
 * docs/examples: each comment exactly as this renderer writes it on a recorded run, with the
 * marker publish puts first. `KG_WRITE_EXAMPLES=1 npx vitest run test/render-recorded.test.ts`
 * writes them again after a change of wording.
 */
const EXAMPLES: Record<string, [string, string]> = {
  'pr-comment-aa.md': ['pr', '<!-- kernelgate:report:default -->'],
  'pr-comment-aa-h100.md': ['paired-aa-h100-bursts', '<!-- kernelgate:report:default -->'],
  'pr-comment-broken.md': ['broken', '<!-- kernelgate:report:default -->'],
  'pr-comment-slowed.md': ['slowed', '<!-- kernelgate:report:default -->'],
  'pr-comment-slow2-h100.md': ['paired-slow2-h100', '<!-- kernelgate:report:default -->'],
  'nightly-report.md': ['nightly', '<!-- kernelgate:nightly:default -->'],
};

describe('docs/examples', { timeout: 120_000 }, () => {
  it('nightly-report-trends.md is what the renderer writes', () => {
    const body = `<!-- kernelgate:nightly:default -->\n${nightlyWithHistory().comment}`;
    const path = join(ROOT, 'docs/examples/nightly-report-trends.md');
    if (process.env['KG_WRITE_EXAMPLES'] === '1') writeFileSync(path, body);
    expect(readFileSync(path, 'utf8')).toBe(body);
  });

  it.each(Object.entries(EXAMPLES))('%s is what the renderer writes', (file, [run, marker]) => {
    const body = `${marker}\n${render(run).comment}`;
    const path = join(ROOT, 'docs/examples', file);
    if (process.env['KG_WRITE_EXAMPLES'] === '1') writeFileSync(path, body);
    expect(readFileSync(path, 'utf8')).toBe(body);
  });
});
