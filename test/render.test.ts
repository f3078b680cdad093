import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compare } from '../src/judge/index.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { gate } from '../src/judge/index.js';
import {
  escapeCell,
  escapeMarkdown,
  codeBlock,
  formatSci,
  mermaidLabel,
} from '../src/lib/index.js';
import {
  COMMENT_MAX_CHARS,
  COMMENT_ROWS_PER_VARIANT,
  GITHUB_COMMENT_LIMIT,
  renderReport,
  stagesLine,
  truncateMarkdown,
  type ReportInput,
} from '../src/report/index.js';
import { keepUnits } from '../src/report/compact.js';
import { loadResults } from '../src/results/index.js';
import type { CaseResult, KernelgateResults } from '../src/results/index.js';
import { evaluateTiers } from '../src/judge/index.js';
import { sparkline } from '../src/report/index.js';
import { pair, pairedRun } from './support/paired.js';

const load = (name: string) => loadResults(join(import.meta.dirname, 'fixtures', 'results', name));
const configDir = join(import.meta.dirname, 'fixtures', 'config');
const config = loadConfig(join(configDir, 'valid'));

function input(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  cfg: Config = config,
  extra: Partial<ReportInput> = {},
): ReportInput {
  const comparison = compare(results, baseline, cfg);
  const tiers = evaluateTiers(results, cfg);
  return {
    kind: 'pr',
    results,
    baseline,
    comparison,
    tiers,
    gate: gate(comparison, tiers, results, cfg),
    config: cfg,
    ...extra,
  };
}

const HOSTILE = [
  '<img src="https://evil.example/beacon.png">',
  '![beacon](https://evil.example/b.png)',
  '@everyone @octo-org/maintainers',
  'a | b',
  'line one\nline two',
  '```\n# not a heading',
  '</details><script>alert(1)</script>',
  '<!-- kernelgate:report:default -->',
  '[click](javascript:alert(1))',
].join(' ');

describe('escaping', () => {
  it.each([
    ['<b>bold</b>', '&lt;b&gt;bold&lt;/b&gt;'],
    ['![x](http://e/x.png)', '!\\[x\\](http://e/x.png)'],
    ['@everyone', '@&#8203;everyone'],
    ['a|b', 'a\\|b'],
    ['# heading', '\\# heading'],
    ['- item', '\\- item'],
    ['1. item', '1\\. item'],
    ['1.08', '1.08'],
    ['-3', '-3'],
    ['*em* _em_ `code` ~del~', '\\*em\\* \\_em\\_ \\`code\\` \\~del\\~'],
    ['two\nlines', 'two lines'],
    ['&amp;', '&amp;amp;'],
  ])('escapeMarkdown(%j) = %j', (raw, want) => {
    expect(escapeMarkdown(raw)).toBe(want);
  });

  it('keeps a multi-line cell in its cell', () => {
    expect(escapeCell('a | b\nc')).toBe('a \\| b<br>c');
  });

  it('fences code longer than any backtick run inside', () => {
    expect(codeBlock('x ```` y')).toBe('`````\nx ```` y\n`````');
  });

  it('strips what would break a Mermaid string', () => {
    expect(mermaidLabel('a"b`c[d]\ne %%{init}%%')).toBe('abcd e init');
  });

  it.each([
    [3.1e-2, '3.1e-2'],
    [5e-3, '5e-3'],
    [4.45, '4.5'],
    [0, '0'],
    [null, 'n/a'],
  ])('formatSci(%d) = %s', (value, want) => {
    expect(formatSci(value)).toBe(want);
  });
});

describe('renderReport', () => {
  const baseline = load('baseline.json');

  it('opens with the outcome, what changed, the headline and the findings; the rest is in the full report', () => {
    const { full, comment, commentLevel } = renderReport(
      input(load('correctness-fail.json'), baseline, config, {
        marker: '<!-- kernelgate:report:default -->',
      }),
    );
    expect(commentLevel).toBe(0);
    const lines = comment.split('\n');
    expect(lines[0]).toBe('<!-- kernelgate:report:default -->');
    expect(lines[1]).toBe(
      '## kernelgate (fixture): ❌ fail: attention/triton\\_fa2 wrong on 1 case, bsr\\_gemm/cuda\\_bsr\\_mma error or timeout on 1 case',
    );
    const head = [
      '**36 cases on H100-SXM**',
      '### What this PR changed',
      '### Headline',
      '### Findings',
      '**Why the gate fails**',
      '### Changed cases: correctness first, then the headline case and the largest change in time',
    ];
    const rest = [
      '### Tiers',
      '### All results',
      '### Diagnostics',
      '### Build facts',
      '### Environment',
    ];
    for (const [md, sections] of [
      [comment, head],
      [full, [...head, ...rest]],
    ] as const) {
      const positions = sections.map((s) => md.indexOf(s));
      expect(
        positions.every((p) => p > 0),
        sections.join(),
      ).toBe(true);
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    }
    for (const s of rest) expect(comment).not.toContain(s);
    expect(comment).toContain(
      'Every case, the ladders, diagnostics and build facts: the full report in the job summary and the report artifact.',
    );
    expect(full).toContain('These results are **synthetic**');
    expect(comment).toContain(
      '| attention/triton\\_fa2 | 1 of 5 | | | ❌ 1 wrong |\n| bsr\\_gemm/cuda\\_bsr\\_mma | 1 of 2 | | | 💥 1 error or timeout |\n| 9 other variants | 0 of 29 | ',
    );
    expect(comment).toContain(
      '- ❌ **attention/triton\\_fa2** wrong on 1 of 5 cases: rel\\_l2 above tolerance, max\\_abs above tolerance (rel\\_l2 3.1e-1, tolerance 2e-3). E.g. dtype=fp16,B=16,H=96,S=4096,D=64,causal=true: rel\\_l2 3.1e-1 &gt; tol 2e-3; max\\_abs 4.5 &gt; tol 5e-2; wrong on every seed; worst at the causal diagonal\n' +
        '- 💥 **bsr\\_gemm/cuda\\_bsr\\_mma** timeout on 1 of 2 cases. E.g. dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16: timeout: timeout: no result after 60.0 s\n',
    );
  });

  it('links the full report when the run URL is known, and only a plain https address', () => {
    const run = 'https://github.com/o/r/actions/runs/42';
    const { comment, full } = renderReport(
      input(load('aa-current.json'), baseline, config, { context: { runUrl: run } }),
    );
    expect(comment).toContain(
      `Every case, the ladders, diagnostics and build facts: [the full report in the job summary](${run}).`,
    );
    expect(full).not.toContain('the full report in the job summary');
    const odd = renderReport(
      input(load('aa-current.json'), baseline, config, {
        context: { runUrl: 'javascript:alert(1)//https://x' },
      }),
    ).comment;
    expect(odd).not.toContain('javascript');
    expect(odd).toContain('the full report in the job summary and the report artifact.');
  });

  it('states a regression the policy lets through in the title, and puts the changed variants first', () => {
    const { comment, full } = renderReport(input(load('regression.json'), baseline));
    expect(comment.split('\n')[0]).toBe(
      '## kernelgate (fixture): ⚠️ regression: attention/triton\\_fa2 slower on 1 case',
    );
    expect(comment).toContain(
      keepUnits(
        [
          '| variant | changed | Δ (geomean) | range | verdict |',
          '| :- | -: | -: | -: | :- |',
          '| attention/triton\\_fa2 | 1 of 5 | +9.3 % | +9.3 % | 🔴 1 slower · 🟡 1 ambiguous |',
          '| attention/cuda\\_fa2 | 1 of 5 | −7.7 % | −7.7 % | 🟢 1 faster |',
          '| 9 other variants | 0 of 26 | −0.6 % | −7.4 % … +1.0 % | 🟡 3 ambiguous · ⚪ 23 same |',
        ].join('\n'),
      ),
    );
    expect(comment).toContain(
      '- 🔴 **attention/triton\\_fa2** slower on 1 of 5 cases: +9.3 % (geomean +9.3 %)\n',
    );
    // Changed cases: Δ and verdict beside the variant, one case column whose header names the axes.
    expect(comment).toContain(
      [
        // no note column (no row has one); numbers keep their unit, intervals stay on one line
        '| variant | Δ | verdict | dtype, B, H, S, D, causal | ms | base | CI of Δ |',
        '| :- | -: | :- | :- | -: | -: | -: |',
        '| triton\\_fa2 | +9.3 % | 🔴 SLOWER | fp16, 16, 96, 4096, 128, false | 43.28 | 39.59 | +8.2 % … +10.6 % |',
        '| cuda\\_fa2 | −7.7 % | 🟢 FASTER | fp16, 16, 96, 4096, 128, false | 38.44 | 41.65 | −9.3 % … −6.8 % |',
      ]
        .join('\n')
        .replace(/(\d) %/g, '$1\u00a0%')
        .replace(/ (SLOWER|FASTER)/g, '\u00a0$1')
        .replace(/ … /g, '\u00a0…\u00a0'),
    );
    expect(comment).toContain('- triton differs from the baseline: 3.6.0 → 3.6.1');
    // The full report's changed cases name the case in one column (at most 10 columns).
    expect(full.replace(/\u00a0/g, ' ')).toContain(
      '| triton\\_fa2 | +9.3 % | 🔴 SLOWER | fp16, 16, 96, 4096, 128, false | 43.28 |',
    );
    // It keeps every case, and the charts: horizontal bars, as tall as their bars.
    expect(full).toMatch(
      /```mermaid\n%%\{init: \{"xyChart": \{"height": \d+\}\}\}%%\nxychart-beta horizontal\n {4}title "attention dtype=fp16,B=16,H=96,S=4096,D=128,causal=false TFLOPS"/,
    );
    const gemmRow = full
      .replace(/\u00a0/g, ' ')
      .split('\n')
      .find((l) => l.startsWith('| op=matmul, dtype=bf16,') && l.includes('| cublas |'));
    expect(gemmRow).toMatch(/ \(±10\.0 %\) \|/);
  });

  it('fails the title when the policy fails slower cases', () => {
    const strict: Config = { ...config, policy: { ...config.policy, failOnSlower: true } };
    const { comment } = renderReport(input(load('regression.json'), baseline, strict));
    expect(comment.split('\n')[0]).toBe(
      '## kernelgate (fixture): ❌ fail: attention/triton\\_fa2 slower on 1 case',
    );
    expect(comment).toContain(
      '**Why the gate fails**\n\n- 🔴 **attention/triton\\_fa2** slower on 1 of 5 cases',
    );
  });

  it('says nothing changed on an A/A run, and shows the headline ratios against the base', () => {
    const { comment } = renderReport(input(load('aa-current.json'), baseline));
    expect(comment.split('\n')[0]).toBe(
      '## kernelgate (fixture): ✅ pass: no case slower or faster',
    );
    expect(comment).toContain(
      'No case changed: nothing is slower, faster, wrong, failing or missing.',
    );
    expect(comment).toMatch(/\| all 11 variants \| 0 of 36 \| [−+]\d\.\d\s% \| /);
    expect(comment).toContain(
      '| kernel · headline case | this PR | baseline | tier | fastest passing candidate | against |',
    );
    expect(comment).toMatch(
      /\| attention dtype=fp16, B=16, H=96, S=4096, D=128, causal=false \| \*\*0\.5\d×\*\* \| 0\.55× \| \*\*C\*\* \(half of SDPA default\); next B at [\d.]+\sms \([\d.]+× faster\) \| triton\\_fa2 [\d.]+\sms, \d+\sTFLOPS \(fastest of 2\) \| sdpa\\_default [\d.]+\sms, \d+\sTFLOPS \|/,
    );
    expect(comment).toMatch(
      /\| bsr\\_gemm dtype=fp16, M=8192, N=8192, K=8192, block=128, topk=16 \| \*\*0\.5\d×\*\* per useful FLOP \| 0\.57× \| .* \| triton\\_bsr [\d.]+\sms, \d+\sTFLOPS \(fastest of 2\) \| measured cuBLAS 657\sTFLOPS \|/,
    );
  });

  it('flags a measurement error in the changed cases, the findings and the full table', () => {
    const { full, comment } = renderReport(input(load('above-peak.json'), baseline));
    expect(comment).toContain(
      "| attention/sdpa\\_default | 1 of 5 | | | ⚠️ 1 above the chip's peak |",
    );
    expect(comment).toContain(
      '- ⚠️ **attention/sdpa\\_default** above what the chip can do on 1 case: 1070.2 TFLOPS &gt; 989.4 TFLOPS datasheet peak (H100-SXM fp16). A measurement error, not a result: check the FLOP or byte count (e.g. causal halving) and the timing',
    );
    expect(comment).toMatch(
      /\| sdpa\\_default \| \+1\.0\u00a0% \| ⚠️\u00a0above\u00a0the\u00a0chip's\u00a0peak \| fp16, /,
    );
    expect(full.replace(/\u00a0/g, ' ')).toMatch(
      /\| sdpa\\_default \| \+1\.0 % \| ⚪ SAME \| [^|]+ \| [\d.]+ \([\d.]+\) \| ⚠️ 1070\.2 \(10\d\.\d %\) \|/,
    );
  });

  it('names a build that missed its expectations in the findings, with its compiler output in the full report', () => {
    const { full, comment } = renderReport(input(load('build-expectation.json'), baseline));
    expect(comment.split('\n')[0]).toBe(
      '## kernelgate (fixture): ❌ fail: attention/cuda\\_fa2 build expectation unmet',
    );
    expect(comment).toContain(
      '- 🔨 **attention/cuda\\_fa2** built, but not as kernel.yml expects: archs: sm\\_90a missing (found sm\\_90): built with -gencode=arch=compute\\_90,code=sm\\_90\n',
    );
    expect(comment).toContain(
      '- ❌ arch-conditional-mma × 1 of attention/cuda\\_fa2. E.g. Arch conditional MMA instruction used without targeting appropriate compute capability. Fix: build with -gencode=arch=compute\\_90a,code=sm\\_90a (not compute\\_90)',
    );
    expect(comment).not.toContain('ptxas info');
    expect(full).toContain(
      // the stack and the spills in one column; the variant may break after its slash
      '| attention/<wbr>cuda\\_fa2 | ⚠️ expectation unmet | sm\\_90, PTX compute\\_90 | 168 | 0 | 0 / 0 | HMMA 1024, LDSM 384, LDGSTS 192 | archs: sm\\_90a missing (found sm\\_90): built with -gencode=arch=compute\\_90,code=sm\\_90 |',
    );
    expect(full).toContain(
      '```\nptxas info    : Compiling entry function kg_fa2_fwd_d128 for sm_90',
    );
  });

  it('renders the nightly report with the headline before what changed', () => {
    const { full, comment } = renderReport({
      ...input(load('aa-current.json'), baseline),
      kind: 'nightly',
    });
    expect(comment.split('\n')[0]).toBe(
      '## kernelgate (fixture) nightly: ✅ pass: no case slower or faster · 2026-11-21T02:00:00Z',
    );
    expect(comment.indexOf('### Headline')).toBeLessThan(
      comment.indexOf('### What changed since the baseline'),
    );
    expect(comment).toContain('| this run | baseline | tier |');
    expect(full.indexOf('### Tiers')).toBeLessThan(full.indexOf('### All results'));
  });

  it('grades tiers on the fastest passing candidate, with the ladder in the full report', () => {
    const { full } = renderReport(input(load('aa-current.json'), baseline));
    expect(full).toMatch(
      /Graded: triton\\_fa2, the fastest candidate that passed on this case \(then cuda\\_fa2 [\d.]+ ms\)\. Now: \*\*0\.5\d×\*\* \(speedup; /,
    );
    expect(full).toContain('| 1.1× SDPA default | A+ | 1.10× |');
    expect(full).not.toContain('unreachable');
  });

  it('says when the tier compares balanced times', () => {
    const run = load('aa-current.json');
    for (const c of run.cases) {
      if (c.case === 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false' && c.timing) {
        c.timing.balanced_ms = c.variant === 'sdpa_default' ? 20 : 40;
      }
    }
    const { full } = renderReport(input(run, baseline));
    expect(full).toMatch(
      /Now: \*\*0\.50×\*\* \(speedup, balanced over the samples' predecessors; no interval: the balanced time of triton\\_fa2 carries no timing\.after \(recorded since kernelgate-harness 0\.2\.0\); 40\.0+ ms, [\d.]+ TFLOPS against sdpa\\_default at 20\.0+ ms\)/,
    );
  });

  it('says so when a rung needs more than the chip on this run', () => {
    const fast = load('aa-current.json');
    const ref = fast.cases.find(
      (c) =>
        c.variant === 'sdpa_default' && c.case === 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
    );
    if (!ref?.timing || !ref.throughput) throw new Error('fixture incomplete');
    ref.timing.median_ms /= 1.5;
    ref.throughput.tflops = (ref.throughput.tflops ?? 0) * 1.5;
    const { comment } = renderReport(input(fast, undefined));
    expect(comment).toContain(
      "- 🏷️ attention tiers: 1 rung needs more than the chip's peak on this run (kernel.yml's tiers.reference_pct_peak says 62.0 %; the reference reached 92.4 % of the peak here): 1.1× SDPA default. Revise the ladder",
    );
  });

  it('escapes hostile strings everywhere they can come from', () => {
    const results = load('correctness-fail.json');
    const failing = results.cases.find((c) => c.status === 'fail') as CaseResult;
    failing.variant = `evil ${HOSTILE}`;
    const timed = results.cases.find((c) => c.status === 'ok' && c.kernel === 'gemm') as CaseResult;
    timed.kernel = `gemm %%{init: {"theme": "dark"}}%% ${HOSTILE}`;
    failing.case = `case ${HOSTILE}`;
    failing.params = { ...failing.params, [HOSTILE]: HOSTILE };
    if (failing.correctness) failing.correctness.message = HOSTILE;
    results.diagnostics.push({
      level: 'error',
      code: HOSTILE,
      message: HOSTILE,
      fix: HOSTILE,
      source: HOSTILE,
      kernel: HOSTILE,
      variant: HOSTILE,
    });
    results.kernels[0] = {
      ...(results.kernels[0] as KernelgateResults['kernels'][0]),
      description: HOSTILE,
    };
    const build = results.builds?.[0];
    if (build)
      Object.assign(build, {
        status: 'failed',
        variant: HOSTILE,
        log_tail: `${HOSTILE}\n\`\`\`\`\n${HOSTILE}`,
      });
    const hostileConfig = { ...config, report: { ...config.report, title: HOSTILE } };
    const { full, comment } = renderReport(
      input(results, undefined, hostileConfig, {
        context: { prTitle: HOSTILE, prNumber: 7, runUrl: `https://x/${HOSTILE}` },
      }),
    );
    for (const md of [full, comment]) {
      // Outside code fences: no raw HTML, no images, no mentions, no fake marker.
      const outside = md.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '');
      expect(outside).not.toMatch(/<img|<script|<\/details><script|!\[beacon\]|<!-- kernelgate/);
      expect(outside).not.toMatch(/@(?!&#8203;)[\w-]/);
      expect(outside).not.toMatch(/(?<!\\)\]\(javascript:/);
      expect(outside).not.toContain('https://x/');
      // Every table row keeps its column count.
      for (const block of outside.split(/\n\n/)) {
        const rows = block.split('\n').filter((l) => l.startsWith('|'));
        if (rows.length < 2) continue;
        const cells = (row: string) => row.replace(/\\\|/g, '').split('|').length;
        for (const row of rows) expect(cells(row), row).toBe(cells(rows[0] as string));
      }
      // Headings stay single lines: the hostile title cannot start a block of its own.
      for (const line of outside.split('\n').filter((l) => l.startsWith('#'))) {
        expect(line).toMatch(/^#{2,4} /);
      }
    }
    // Mermaid blocks hold no quote, bracket or directive from the hostile kernel name.
    // (gemm's one bar draws no chart: its table row says it all.)
    expect(full).not.toContain('title "gemm');
    for (const chart of full.match(/```mermaid\n[\s\S]*?\n```/g) ?? []) {
      // Our own first line sizes the chart; nothing else may be a directive.
      const sized = /^```mermaid\n%%\{init: \{"xyChart": \{"height": \d+\}\}\}%%\n/;
      expect(chart).toMatch(sized);
      expect(chart.replace(sized, '')).not.toMatch(/%%|<|\{/);
    }
    // The log is shown verbatim inside a fence longer than its own backtick runs.
    expect(full).toContain('`````\n<img src="https://evil.example/beacon.png">');
  });
});

/** A results document with `n` attention cases over `variants` variants, some failing or slower. */
function bigRun(
  base: KernelgateResults,
  n: number,
  failEvery: number,
  opts: { variants?: number; slowEvery?: number; note?: string } = {},
): KernelgateResults {
  const template = base.cases[0] as CaseResult;
  const cases: CaseResult[] = [];
  const variants = opts.variants ?? 1;
  for (let i = 0; i < n; i++) {
    const c = structuredClone(template);
    const v = i % variants;
    c.variant = variants > 1 ? `variant_${v}` : template.variant;
    const S = 128 + Math.floor(i / variants);
    c.case = `dtype=fp16,B=1,H=8,S=${S},D=64,causal=false`;
    c.params = { dtype: 'fp16', B: 1, H: 8, S, D: 64, causal: false };
    // Ten tight samples: identical runs compare SAME, so only the planted cases change.
    if (c.timing) {
      const slow = opts.slowEvery && i % opts.slowEvery === 0 ? 1.5 : 1;
      const medianMs = c.timing.median_ms * slow;
      c.timing.samples_ms = Array.from({ length: 10 }, (_, k) => medianMs * (1 + 0.001 * k));
      c.timing.median_ms = medianMs;
    }
    if (failEvery && i % failEvery === 0) {
      c.status = 'fail';
      if (c.correctness)
        Object.assign(c.correctness, {
          status: 'FAIL',
          rel_l2: 0.2,
          message: opts.note ?? 'wrong tail',
        });
    }
    cases.push(c);
  }
  return { ...base, cases, diagnostics: [] };
}

describe('comment size', () => {
  // Fewer resamples keep thousands of bootstraps fast.
  const small: Config = { ...config, compare: { ...config.compare, resamples: 100 } };
  const base = load('baseline.json');

  it('stays small at 1,000 cases: changed variants summarised, changed cases capped, the rest in the full report', () => {
    const baseline = bigRun(base, 1000, 0);
    const results = bigRun(base, 1000, 100, { slowEvery: 7 });
    const { full, comment, commentLevel } = renderReport(input(results, baseline, small));
    expect(commentLevel).toBe(0);
    expect(comment.length).toBeLessThan(6_000);
    expect(full.length).toBeGreaterThan(100_000);
    // Failures planted every 100 cases, 1.5× slowdowns every 7 (two of them on failed cases).
    expect(comment.split('\n')[0]).toBe(
      '## kernelgate (fixture): ❌ fail: attention/triton\\_fa2 wrong on 10 cases',
    );
    expect(comment).toContain(
      keepUnits(
        '| attention/triton\\_fa2 | 151 of 1000 | +50.0 % | +50.0 % | ❌ 10 wrong · 🔴 141 slower |',
      ),
    );
    expect(comment).toContain(
      '_… 141 more cases of attention/triton\\_fa2 (🔴 141 slower): in the full report._',
    );
    // every row of attention's changed table is triton_fa2's: the variant is said once above it
    const changed = comment.slice(comment.indexOf('Every row: variant triton\\_fa2'));
    const rows = changed.split('\n\n')[1]!.split('\n').slice(2);
    expect(rows.filter((r) => r.startsWith('| ')).length).toBe(COMMENT_ROWS_PER_VARIANT);
  });

  it('stays under the limit at 1,000 cases over 100 variants, every one failing with a long message', () => {
    const results = bigRun(base, 1000, 1, { variants: 100, note: 'x'.repeat(2000) });
    const { comment, commentLevel } = renderReport(input(results, undefined, small));
    expect(comment.length).toBeLessThanOrEqual(GITHUB_COMMENT_LIMIT);
    expect(comment.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
    expect(commentLevel).toBeLessThan(3);
    // Every variant is named in the findings, each in one line.
    expect(
      comment.match(/^- ❌ \*\*attention\/variant\\_\d+\*\* wrong on 10 of 10 cases/gm)?.length,
    ).toBe(100);
  });

  it('degrades, then truncates with a note, leaving no fence or details open', () => {
    const results = bigRun(base, 3000, 1, { variants: 3000, note: 'y'.repeat(500) });
    const { comment, commentLevel } = renderReport(input(results, undefined, small, {}));
    expect(commentLevel).toBe(3);
    expect(comment.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
    expect(comment).toContain("This comment was cut to fit GitHub's 65,536-character limit");
    expect(comment.match(/<details>/g)?.length ?? 0).toBe(
      comment.match(/<\/details>/g)?.length ?? 0,
    );
    expect((comment.match(/^```/gm)?.length ?? 0) % 2).toBe(0);
  });

  it('applies report.max_rows to the changed cases of the comment only', () => {
    const results = bigRun(base, 80, 1, { variants: 8 });
    const capped: Config = { ...small, report: { ...small.report, maxRows: 12 } };
    const { full, comment } = renderReport(input(results, undefined, capped));
    const rows = (md: string) =>
      md.split('\n').filter((l) => /^\|(.*?\|)? variant\\_\d \|/.test(l)).length;
    expect(rows(comment)).toBe(12);
    // The full report: the 80 changed cases, every case's timing (80), each wrong case's
    // correctness (80) and each variant's (8).
    expect(rows(full)).toBe(80 + 80 + 80 + 8);
    expect(comment).toContain(
      '_… 8 more cases of attention/variant\\_1 (❌ 8 wrong); 10 more cases of attention/variant\\_2 (❌ 10 wrong);',
    );
  });
});

describe('sparkline', () => {
  it('draws on a fixed scale of ±5 % around the median, with a gap for a run without one', () => {
    // −1.5 % is two eighths down, not the whole height; beyond ±5 % is drawn at the end
    expect(sparkline([1, 1, 1, 0.985])).toBe('▅▅▅▃');
    expect(sparkline([1, 1.1, 0.9], 1)).toBe('▅█▁');
    expect(sparkline([1, 2, undefined, 3])).toBe('▁▅ █');
    expect(sparkline([0.8, 0.8])).toBe('▅▅');
    expect(sparkline([undefined])).toBe('');
  });
});

describe('truncateMarkdown', () => {
  it('cuts at a line, drops an unclosed fence and closes open details', () => {
    const md = [
      '<details><summary>x</summary>',
      '',
      'a',
      '```',
      'code',
      'more code',
      '```',
      'tail',
    ].join('\n');
    const out = truncateMarkdown(md, 64 + 10 + 45, 'NOTE');
    expect(out).toBe('<details><summary>x</summary>\n\na\n\n</details>\n\nNOTE\n');
  });
});

describe('a real harness run (CPU, CI shapes)', () => {
  const run = load('cpu-ci-run.json');

  it('renders: errors fail the gate, skipped cases are shown with their reason, no empty chart', () => {
    const { full, comment } = renderReport(input(run, undefined));
    expect(full.split('\n')[0]).toBe(
      '## kernelgate (fixture): ❌ fail: attention/sdpa\\_default error or timeout on 4 cases, bsr\\_gemm/cublas\\_dense error or timeout on 2 cases and 1 more',
    );
    expect(full).toContain('**92 cases on none (CPU)** at `f4552a94cbcf`.');
    expect(comment).toContain(
      'No baseline and no base revision: performance is not compared, every timed case is NEW.\n\n' +
        '| variant | changed | Δ (geomean) | range | verdict |\n| :- | -: | -: | -: | :- |\n' +
        '| attention/sdpa\\_default | 4 of 17 | | | 💥 4 error or timeout |',
    );
    expect(comment).toContain(
      '- 💥 **bsr\\_gemm/cublas\\_dense** error: crash on 2 of 4 cases (only where dtype=bf16). E.g. dtype=bf16,M=256,N=128,K=512,block=128,topk=2: error: crash: the worker process died (killed by signal SIGILL) during verify seed 0 of cublas\\_dense; it was restarted for the other cases',
    );
    expect(full).toMatch(
      /⏭️\u00a0SKIPPED \|( \|)? SDPA&#39;s FLASH\\_ATTENTION backend needs CUDA \|/,
    );
    expect(full).not.toContain('bar [0.0]');
  });

  it('compares with itself as SAME, or AMBIGUOUS where the data cannot decide', () => {
    const cases = compare(run, run, config).cases;
    expect(new Set(cases.map((c) => c.perf))).toEqual(new Set(['SAME', 'AMBIGUOUS', 'UNTIMED']));
    // Interpreted Triton kernels hit the time cap after 3 samples; CPU timings are so noisy that
    // even identical samples give an interval wider than the threshold.
    for (const c of cases.filter((x) => x.perf === 'AMBIGUOUS')) {
      const fewSamples = /^too few samples for an interval/.test(c.perfNote ?? '');
      const wide = (c.ciLo ?? 1) < 0.97 || (c.ciHi ?? 1) > 1.03;
      expect(fewSamples || wide, c.key).toBe(true);
    }
    expect(cases.filter((x) => x.perf === 'SAME').length).toBeGreaterThan(0);
  });
});

describe('notes', () => {
  it('says when the baseline is synthetic even with no version differences', () => {
    const base = load('baseline.json');
    const current = structuredClone(base);
    current.run.synthetic = false;
    const { full } = renderReport(input(current, base));
    expect(full).toContain('- The baseline is synthetic test data, not a measurement.');
    expect(full).not.toContain('These results are **synthetic**');
  });
});

describe('paired A/B in the report', () => {
  const baseline = load('baseline.json');
  const H = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
  // A row of the full report's timing table on case H, from its variant on (the case is written
  // on the first row of its rows only; no-break spaces read as spaces), and the case's note, a
  // list item under the table.
  const CASE = 'dtype=fp16, B=16, H=96, S=4096, D=128, causal=false';
  const rowOf = (md: string, variant: string) => {
    let current = '';
    for (const line of md.slice(md.indexOf('### All results')).split('\n')) {
      const m = /^\| ?(.*?) ?\| (.*)$/.exec(line);
      if (!m) continue;
      if (m[1]) current = m[1];
      if (current === CASE && m[2]?.startsWith(`${variant} |`))
        return `| ${m[2]}`.replace(/\u00a0/g, ' ');
    }
    return undefined;
  };
  const noteOf = (md: string, variant: string) =>
    md
      .slice(md.indexOf('### All results'))
      .split('\n')
      .find((l) => l.startsWith(`- ${variant} · ${CASE}: `));

  function pairedDoc(): KernelgateResults {
    const doc = pairedRun(baseline);
    pair(doc, `attention/triton_fa2/${H}`, 1.05);
    pair(doc, `attention/cuda_fa2/${H}`, 1.0);
    pair(doc, `attention/sdpa_flash/${H}`, 1.0);
    return doc;
  }

  it('says near the top how many cases pairs judged and how many the stored baseline', () => {
    const rendered = input(pairedDoc(), baseline);
    const { full } = renderReport(rendered);
    const mdc = (rendered.comparison.paired?.medianMdcPct as number).toFixed(2);
    const line =
      `Judged: 3 case(s) paired against base \`bbbbbbbbbbbb\` in this job (threshold ±1.0 %, ` +
      `median minimum detectable change ${mdc} %), 33 against the stored baseline of run ` +
      'synthetic-baseline at `aaaaaaaaaaaa`.';
    expect(full).toContain(`\n${line}\n`);
    expect(full.indexOf(line)).toBeLessThan(full.indexOf('- Correctness:'));
    const alone = renderReport(input(pairedDoc(), undefined)).full;
    expect(alone).toContain(
      `median minimum detectable change ${mdc} %), none against a stored baseline (none was given).`,
    );
  });

  it('says how the verdicts measured again in fresh processes came out, and the notes why', () => {
    const doc = pairedDoc();
    const again = (r: number) => ({
      status: 'ok' as const,
      n_pairs: 90,
      log_ratios: Array.from({ length: 45 }, (_, i) => Math.log(r) + ((i % 9) - 4) * 0.0005),
      stop_reason: 'decided' as const,
    });
    pair(doc, `attention/triton_fa2/${H}`, 1.05, { confirm: again(1.05) });
    pair(doc, `attention/cuda_fa2/${H}`, 1.03, { confirm: again(1.0) });
    pair(doc, `attention/triton_fa2/${H.replace('causal=false', 'causal=true')}`, 0.95, {
      confirm: { status: 'error', reason: 'no pairs in the second pair of processes (<b>x</b>)' },
    });
    const rendered = input(doc, baseline);
    expect(rendered.comparison.paired?.confirm).toEqual({
      confirmed: 1,
      'not-repeated': 1,
      unmeasured: 1,
    });
    const { full } = renderReport(rendered);
    expect(full).toContain(
      ' Measured again in a fresh pair of worker processes: 1 confirmed, 1 did not repeat (now ambiguous), 1 could not be measured.\n',
    );
    expect(rowOf(full, 'cuda\\_fa2')).toMatch(/ 🟡 AMBIGUOUS \|/);
    expect(noteOf(full, 'cuda\\_fa2')).toMatch(
      /was SLOWER ×1\.0300 .*the first reading did not repeat$/,
    );
    // The harness's reason is kernel-side text: escaped like any other.
    expect(full).toContain('(&lt;b&gt;x&lt;/b&gt;)');
    // Nothing of it when no verdict was measured again.
    expect(renderReport(input(pairedDoc(), baseline)).full).not.toContain('Measured again');
  });

  it('marks each judged row paired or vs baseline, in the Δ cell, with no new column', () => {
    const { full } = renderReport(input(pairedDoc(), baseline));
    const row = (variant: string) => rowOf(full, variant);
    expect(row('triton\\_fa2')).toMatch(
      /^\| triton\\_fa2 \| \+5\.0 % · paired \| 🔴 SLOWER \| \+4\.\d % … \+5\.\d % \| 39\.59 \([\d.]+\) \| [\d.]+ \([\d.]+ %\) \| \d+ \|$/,
    );
    expect(row('sdpa\\_cudnn')).toMatch(
      /^\| sdpa\\_cudnn \| ±0\.0 % · vs baseline \| ⚪ SAME \| −\d\.\d % … \+\d\.\d % \|/,
    );
    expect(noteOf(full, 'sdpa\\_cudnn')).toMatch(
      /: not timed against the base revision; judged against the stored baseline$/,
    );
    const header = full
      .slice(full.indexOf('### All results'))
      .split('\n')
      .find((l) => l.startsWith('| case | variant | Δ | verdict')) as string;
    // The case in one column, median with its IQR, TFLOPS with its share of the peak: 8
    // columns, not 19 (nor 9, which scrolled in a 1012 px job summary).
    expect(header).toBe(
      '| case | variant | Δ | verdict | CI of Δ | median ms (IQR) | TFLOPS (% peak) | GB/s |',
    );
    // Correctness stays visible: per variant, beside the timings.
    expect(full).toContain('| variant | cases | passed | worst rel\\_l2 / tol | on case |');
    expect(full).toContain('Δ marked *paired* is different');
    expect(full).toContain('or of the median per-pair ratio against the base revision');
    // A paired case shows its threshold only when the floor raised it above ±1 %.
    expect(rowOf(full, 'triton\\_fa2')).not.toMatch(/\(±/);
  });

  it('leaves a run without pairs as it was: no Judged line, no marks', () => {
    const { full } = renderReport(input(load('regression.json'), baseline));
    expect(full).not.toContain('Judged:');
    expect(full).not.toContain('· paired');
    expect(full).not.toContain('· vs baseline');
    expect(full).not.toContain('Δ marked *paired*');
    expect(full).toContain('| case | variant | Δ vs baseline | verdict | CI of Δ |');
  });

  it('shows the A/A control, the verdicts it made AMBIGUOUS and the note', () => {
    const doc = pairedDoc();
    pair(doc, `attention/sdpa_flash/${H}`, 1.04);
    const { full } = renderReport(input(doc, baseline));
    expect(rowOf(full, 'triton\\_fa2')).toMatch(
      /^\| triton\\_fa2 \| \+5\.0 % · paired \| 🟡 AMBIGUOUS \|/,
    );
    expect(noteOf(full, 'triton\\_fa2')).toMatch(
      /: was SLOWER \+5\.0 %, but the A\/A control sdpa\\_flash \+4\.0 % \(a reference: identical code in both arms\) moved in the same case: the machine was not quiet$/,
    );
    expect(rowOf(full, 'sdpa\\_flash')).toMatch(
      /^\| sdpa\\_flash \| \+4\.0 % · paired \| 🔴 SLOWER \|/,
    );
    expect(noteOf(full, 'sdpa\\_flash')).toMatch(/: reference: identical code in both arms$/);
    // Not the pull request's doing: the title and the changes table say so.
    expect(full.split('\n')[0]).toBe(
      '## kernelgate (fixture): ✅ pass: no candidate slower or faster (the A/A control attention/sdpa\\_flash moved: the machine was not quiet)',
    );
    expect(full).toContain(
      keepUnits(
        '| attention/sdpa\\_flash | 1 of 5 | +4.0 % | +4.0 % | 🔴 1 slower (an A/A control: the machine moved, not the code) |',
      ),
    );
    expect(full).toContain(
      `- A/A control moved: attention/sdpa\\_flash ${H} SLOWER +4.0 %. Reference variants run identical code in both arms, so 1 FASTER or SLOWER verdict(s) of the same case(s) are AMBIGUOUS instead: the machine was not quiet; rerun.`,
    );
  });

  it('escapes what the pairs bring from the results', () => {
    const doc = pairedDoc();
    doc.run.paired_base = { root: HOSTILE, git_sha: `<img src=x>\`@everyone ${HOSTILE}` };
    pair(doc, `attention/sdpa_cudnn/${H}`, 1, {
      base_status: 'error',
      base_reason: HOSTILE,
      log_ratios: [],
      n_pairs: 0,
    });
    const { full } = renderReport(input(doc, baseline));
    const outside = full.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '');
    expect(outside).not.toMatch(/<img|<script|!\[beacon\]|<!-- kernelgate/);
    expect(outside).not.toMatch(/@(?!&#8203;)[\w-]/);
    // Not a commit id: left out rather than put in a code span it could break out of.
    expect(full).toContain('Judged: 3 case(s) paired against base in this job (threshold');
    expect(noteOf(full, 'sdpa\\_cudnn')).toContain(
      ': base revision: error (&lt;img src=&quot;https://evil.example/beacon.png&quot;&gt; !\\[beacon\\]',
    );
    for (const block of outside.split(/\n\n/)) {
      const rows = block.split('\n').filter((l) => l.startsWith('|'));
      if (rows.length < 2) continue;
      const cells = (row: string) => row.replace(/\\\|/g, '').split('|').length;
      for (const row of rows) expect(cells(row), row).toBe(cells(rows[0] as string));
    }
  });
});

describe('the time of each stage', () => {
  const ROOT_DIR = join(import.meta.dirname, '..');
  const slow2 = loadResults(
    join(ROOT_DIR, 'test/fixtures/recorded/paired-slow2-h100/results.json.gz'),
  );

  it('lists the stages, the harness phases and the kernels of a recorded H100 run', () => {
    expect(stagesLine(slow2)).toBe(
      'GPU-seconds of each stage (319 s in all): doctor 6 s · build 26 s · base build 0 s · harness 287 s ' +
        '(environment 2 s, set-up 52 s, verify 31 s, base set-up 3 s, base verify 19 s, timing 164 s; ' +
        'by kernel: gemm 9 s, attention 248 s, bsr\\_gemm 27 s).',
    );
  });

  it('puts the line in the report, and nothing when the run recorded no times', () => {
    const { full } = renderReport(input(slow2, undefined, loadConfig(ROOT_DIR)));
    expect(full).toContain(
      '### Environment\n\nGPU-seconds of each stage (319 s in all): doctor 6 s',
    );
    const bare = { ...slow2, run: { ...slow2.run, stage_seconds: undefined } };
    expect(stagesLine(bare)).toBe('');
    expect(renderReport(input(bare, undefined, loadConfig(ROOT_DIR))).full).not.toContain(
      'GPU-seconds of each stage',
    );
  });

  it('names the phases of a paired run: preparation, the warm-ups within timing, finish', () => {
    const run21 = {
      ...slow2,
      run: {
        ...slow2.run,
        stage_seconds: {
          doctor: 3.1,
          harness: 319.5,
          verify: 39.5,
          prepare: 1.2,
          'base verify': 20.7,
          'base prepare': 1.4,
          bench: 226.1,
          'bench warm-up': 56.6,
          finish: 3.0,
        },
      },
    };
    expect(stagesLine(run21)).toBe(
      'GPU-seconds of each stage (323 s in all): doctor 3 s · harness 320 s (verify 40 s, base verify 21 s, ' +
        'preparation 1 s, base preparation 1 s, timing 226 s, of it warm-ups 57 s, finish 3 s).',
    );
  });

  it("adds what each variant's checks took, the three most by name and the rest summed", () => {
    // seconds per case (correctness.seconds); the line sums them over each variant's cases:
    // attention's variants have 26 cases here, bsr_gemm's 3, gemm/cublas 2
    const withChecks = (spent: Record<string, number>) => ({
      ...slow2,
      run: { ...slow2.run, stage_seconds: { harness: 60, verify: 30 } },
      cases: slow2.cases.map((c) =>
        c.correctness && `${c.kernel}/${c.variant}` in spent
          ? { ...c, correctness: { ...c.correctness, seconds: spent[`${c.kernel}/${c.variant}`] } }
          : c,
      ),
    });
    expect(
      stagesLine(
        withChecks({
          'attention/triton_fa2': 0.5,
          'attention/cublas_attn': 0.3,
          'attention/cuda_fa2': 0.2,
          'bsr_gemm/triton_bsr': 0.1,
          'gemm/cublas': 0.3,
        }),
      ),
    ).toBe(
      'GPU-seconds of each stage (60 s in all): harness 60 s (verify 30 s; checks by variant: ' +
        'attention/triton\\_fa2 13 s, attention/cublas\\_attn 8 s, attention/cuda\\_fa2 5 s, 2 more 1 s).',
    );
    expect(stagesLine(withChecks({ 'gemm/cublas': 1.4 }))).toBe(
      'GPU-seconds of each stage (60 s in all): harness 60 s (verify 30 s; checks by variant: gemm/cublas 3 s).',
    );
  });

  it('escapes a stage name it does not know', () => {
    const odd = {
      ...slow2,
      run: { ...slow2.run, stage_seconds: { harness: 10, '<img src=x>|*': 2 } },
    };
    expect(stagesLine(odd)).toBe(
      'GPU-seconds of each stage (10 s in all): harness 10 s · &lt;img src=x&gt;\\|\\* 2 s.',
    );
  });
});

describe("the nightly's alert", () => {
  const ROOT_DIR = join(import.meta.dirname, '..');
  const rec = (name: string) =>
    loadResults(join(ROOT_DIR, 'test/fixtures/recorded', name, 'results.json.gz'));
  const cfg = () => loadConfig(ROOT_DIR);

  it('is one line for a nightly that found a regression, and only then', () => {
    const slowed = renderReport(
      input(rec('paired-slow2-h100'), undefined, cfg(), { kind: 'nightly' }),
    );
    // The outcome, then the worst cases by name with their change: the notification says where.
    expect(slowed.alert).toBe(
      'kernelgate nightly at `5199432aaaaa`: ⚠️ regression: attention/triton\\_fa2 slower on 26 cases. ' +
        'Worst: attention/triton\\_fa2 dtype=bf16,B=2,H=3,S=77,D=64,causal=false +19.2 %; ' +
        'attention/triton\\_fa2 dtype=fp16,B=2,H=3,S=77,D=64,causal=false +19.1 %; ' +
        'attention/triton\\_fa2 dtype=fp16,B=2,H=3,S=77,D=128,causal=true +17.8 %; and 23 more. ' +
        "The issue's report has the cases.",
    );
    const pr = renderReport(input(rec('paired-slow2-h100'), undefined, cfg()));
    expect(pr.alert).toBeUndefined();
    const clean = renderReport(input(rec('nightly'), rec('main-1355'), cfg(), { kind: 'nightly' }));
    expect(clean.alert).toBeUndefined();
  });

  it('names the failing variant and case of a nightly that found a wrong result', () => {
    const broken = renderReport(input(rec('broken'), rec('main-1355'), cfg(), { kind: 'nightly' }));
    expect(broken.alert).toBe(
      'kernelgate nightly at `922981b55e5b`: ❌ fail: attention/triton\\_fa2 wrong on 26 cases. ' +
        'Worst: attention/triton\\_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=false wrong; ' +
        'attention/triton\\_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=true wrong; ' +
        'attention/triton\\_fa2 dtype=fp16,B=16,H=96,S=4096,D=64,causal=false wrong; and 23 more. ' +
        "The issue's report has the cases.",
    );
  });
});
