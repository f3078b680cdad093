import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compare } from '../src/compare.js';
import { loadConfig, type Config } from '../src/config.js';
import { gate } from '../src/gate.js';
import { escapeCell, escapeMarkdown, codeBlock, formatSci, mermaidLabel } from '../src/markdown.js';
import {
  COMMENT_MAX_CHARS,
  renderReport,
  stagesLine,
  truncateMarkdown,
  type ReportInput,
} from '../src/render.js';
import { loadResults } from '../src/results.js';
import type { CaseResult, KernelgateResults } from '../src/results-types.js';
import { evaluateTiers } from '../src/tiers.js';
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

  it('puts the marker first, then the verdict and the executive summary before the tables', () => {
    const { full, comment, commentLevel } = renderReport(
      input(load('correctness-fail.json'), baseline, config, {
        marker: '<!-- kernelgate:report:default -->',
      }),
    );
    expect(comment).toBe(full);
    expect(commentLevel).toBe(0);
    const lines = full.split('\n');
    expect(lines[0]).toBe('<!-- kernelgate:report:default -->');
    expect(lines[1]).toBe('## kernelgate (fixture): ❌ fail');
    const order = [
      '**Verdict: fail.**',
      '**Why the gate fails**',
      '### Results',
      '### Tiers',
      '### Next steps',
      '### Diagnostics',
      '### Build facts',
      '### Environment',
    ];
    const positions = order.map((s) => full.indexOf(s));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(full).toContain('These results are **synthetic**');
    expect(full).toContain(
      '- attention/triton\\_fa2 dtype=fp16,B=16,H=96,S=4096,D=64,causal=true: correctness FAIL: rel\\_l2 3.1e-1 &gt; tol 2e-3',
    );
  });

  it('shows Δ, verdict and CI in the results table, and a TFLOPS chart per headline case', () => {
    const { full } = renderReport(input(load('regression.json'), baseline));
    const row = full
      .split('\n')
      .find((l) =>
        l.startsWith('| triton\\_fa2 | dtype=fp16,B=16,H=96,S=4096,D=128,causal=false |'),
      );
    expect(row).toMatch(
      /\| \+\d+\.\d % \| 🔴 SLOWER \| \+\d+\.\d % … \+\d+\.\d % \| ✅ PASS \| \d\.\de-4 \/ 2e-3 \|/,
    );
    expect(full).toContain(
      '```mermaid\nxychart-beta\n    title "attention dtype=fp16,B=16,H=96,S=4096,D=128,causal=false TFLOPS"',
    );
    expect(full).toContain(
      'x-axis ["triton_fa2", "cuda_fa2", "sdpa_flash", "sdpa_cudnn", "sdpa_default"]',
    );
    expect(full).toContain('- triton differs from the baseline: 3.6.0 → 3.6.1');
    const gemmRow = full.split('\n').find((l) => l.startsWith('| cublas | op=matmul,dtype=bf16'));
    expect(gemmRow).toMatch(/ \(±10\.0 %\) \|/);
  });

  it("shows seed 001's ladder as unreachable, with the TFLOPS each tier implies", () => {
    const seed = loadConfig(join(configDir, 'seed001'));
    const { full } = renderReport(input(load('seed001-ladder.json'), undefined, seed));
    expect(full).toContain('Below the first tier.');
    expect(full).toContain(
      'Next milestone: **Tier 1 (Good)** (B): 6.135 ms, which implies 1075.3 TFLOPS: **unreachable**',
    );
    expect(full).toContain(
      '| Tier 5 (Breakthrough) | A++ | 64.00× | 0.192 | 34410.4 | 🚫 unreachable: needs 34410 TFLOPS > 989.4 peak |',
    );
    expect(full).toContain('5 tier(s) of this ladder need more than the chip');
  });

  it('flags a measurement error in the table and the summary, never as a result', () => {
    const { full } = renderReport(input(load('above-peak.json'), baseline));
    expect(full).toMatch(
      /\| sdpa\\_default \| dtype=fp16,B=16,H=96,S=4096,D=128,causal=true \| [\d.]+ \| [\d.]+ \| ⚠️ 1\d{3}\.\d \|/,
    );
    expect(full).toContain('measurement error: ');
    expect(full).toContain(
      '- Recheck the FLOP or byte count and the timing of attention/sdpa\\_default',
    );
  });

  it('renders build facts and compiler output of a failed expectation', () => {
    const { full } = renderReport(input(load('build-expectation.json'), baseline));
    expect(full).toContain(
      '| attention/cuda\\_fa2 | ⚠️ expectation unmet | sm\\_90, PTX compute\\_90 | 168 | 0 | 0 | 0 | HMMA 1024, LDSM 384, LDGSTS 192 | archs: sm\\_90a missing (found sm\\_90): built with -gencode=arch=compute\\_90,code=sm\\_90 |',
    );
    expect(full).toContain(
      '```\nptxas info    : Compiling entry function kg_fa2_fwd_d128 for sm_90',
    );
    expect(full).toContain(
      '- Fix the build of attention/cuda\\_fa2: archs: sm\\_90a missing (found sm\\_90): built with -gencode=arch=compute\\_90,code=sm\\_90.',
    );
    expect(full).toContain(
      '- Arch conditional MMA instruction used without targeting appropriate compute capability: build with -gencode=arch=compute\\_90a,code=sm\\_90a (not compute\\_90)',
    );
  });

  it('renders the nightly report with the tiers before the results', () => {
    const { full } = renderReport({ ...input(load('aa-current.json'), baseline), kind: 'nightly' });
    expect(full.split('\n')[0]).toBe(
      '## kernelgate (fixture) nightly: ✅ pass · 2026-11-21T02:00:00Z',
    );
    expect(full.indexOf('### Tiers')).toBeLessThan(full.indexOf('### Results'));
  });

  it('escapes hostile strings everywhere they can come from', () => {
    const results = load('correctness-fail.json');
    const failing = results.cases.find((c) => c.status === 'fail') as CaseResult;
    failing.variant = `evil ${HOSTILE}`;
    const timed = results.cases.find((c) => c.status === 'ok' && c.kernel === 'gemm') as CaseResult;
    timed.kernel = `gemm %%{init: {"theme": "dark"}}%% ${HOSTILE}`;
    failing.case = `case ${HOSTILE}`;
    if (failing.correctness) failing.correctness.message = HOSTILE;
    results.diagnostics.push({
      level: 'error',
      code: 'x',
      message: HOSTILE,
      fix: HOSTILE,
      source: HOSTILE,
    });
    results.kernels[0] = {
      ...(results.kernels[0] as KernelgateResults['kernels'][0]),
      description: HOSTILE,
    };
    const build = results.builds?.[0];
    if (build)
      Object.assign(build, { status: 'failed', log_tail: `${HOSTILE}\n\`\`\`\`\n${HOSTILE}` });
    const hostileConfig = { ...config, report: { ...config.report, title: HOSTILE } };
    const { full } = renderReport(
      input(results, undefined, hostileConfig, { context: { prTitle: HOSTILE, prNumber: 7 } }),
    );
    // Outside code fences: no raw HTML, no images, no mentions, no fake marker.
    const outside = full.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '');
    expect(outside).not.toMatch(/<img|<script|<\/details><script|!\[beacon\]|<!-- kernelgate/);
    expect(outside).not.toMatch(/@(?!&#8203;)[\w-]/);
    expect(outside).not.toMatch(/(?<!\\)\]\(javascript:/);
    // Every table row keeps its column count.
    for (const block of outside.split(/\n\n/)) {
      const rows = block.split('\n').filter((l) => l.startsWith('|'));
      if (rows.length < 2) continue;
      const cells = (row: string) => row.replace(/\\\|/g, '').split('|').length;
      for (const row of rows) expect(cells(row), row).toBe(cells(rows[0] as string));
    }
    // Mermaid blocks hold no quote, bracket or directive from the hostile kernel name.
    expect(full).toContain(
      'title "gemm init: theme: dark img src=https://evil.example/beacon.p TFLOPS"',
    );
    for (const chart of full.match(/```mermaid\n[\s\S]*?\n```/g) ?? []) {
      expect(chart).not.toMatch(/%%|<|\{/);
    }
    // The log is shown verbatim inside a fence longer than its own backtick runs.
    expect(full).toContain('`````\n<img src="https://evil.example/beacon.png">');
  });
});

/** A results document with `n` attention cases, a few of them failing. */
function bigRun(base: KernelgateResults, n: number, failEvery: number): KernelgateResults {
  const template = base.cases[0] as CaseResult;
  const cases: CaseResult[] = [];
  for (let i = 0; i < n; i++) {
    const c = structuredClone(template);
    c.case = `dtype=fp16,B=1,H=8,S=${128 + i},D=64,causal=false`;
    c.params = { dtype: 'fp16', B: 1, H: 8, S: 128 + i, D: 64, causal: false };
    // Ten tight samples: identical runs compare SAME, so only the failures need attention.
    if (c.timing) {
      const medianMs = c.timing.median_ms;
      c.timing.samples_ms = Array.from({ length: 10 }, (_, k) => medianMs * (1 + 0.001 * k));
    }
    if (failEvery && i % failEvery === 0) {
      c.status = 'fail';
      if (c.correctness)
        Object.assign(c.correctness, { status: 'FAIL', rel_l2: 0.2, message: 'wrong tail' });
    }
    cases.push(c);
  }
  return { ...base, cases };
}

describe('comment size', () => {
  // Fewer resamples keep thousands of bootstraps fast; no row cap, so size alone drives degrading.
  const small: Config = {
    ...config,
    compare: { ...config.compare, resamples: 100 },
    report: { ...config.report, maxRows: 100_000 },
  };
  const base = load('baseline.json');

  it('drops rows that need no attention when a large report does not fit, and says how many', () => {
    const baseline = bigRun(base, 3000, 0);
    const results = bigRun(base, 3000, 100);
    const { full, comment, commentLevel } = renderReport(input(results, baseline, small));
    expect(full.length).toBeGreaterThan(COMMENT_MAX_CHARS);
    expect(comment.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
    expect(commentLevel).toBe(2);
    expect(comment).toMatch(
      /_\d+ rows that need no attention \(correctness PASS or skipped; performance SAME, NEW or untimed\) are not shown here/,
    );
    // All 30 failures are still listed.
    expect(comment.match(/❌ FAIL/g)?.length).toBe(30);
    expect(comment).toContain('<details><summary>3000 results, ');
  });

  it('truncates with a note when even the problems do not fit, leaving no fence or details open', () => {
    const results = bigRun(base, 3000, 1);
    const { comment, commentLevel } = renderReport(input(results, undefined, small, {}));
    expect(commentLevel).toBe(3);
    expect(comment.length).toBeLessThanOrEqual(COMMENT_MAX_CHARS);
    expect(comment).toContain("This comment was cut to fit GitHub's 65,536-character limit");
    expect(comment.match(/<details>/g)?.length ?? 0).toBe(
      comment.match(/<\/details>/g)?.length ?? 0,
    );
    expect((comment.match(/^```/gm)?.length ?? 0) % 2).toBe(0);
  });

  it('applies report.max_rows to the comment only', () => {
    const results = bigRun(base, 80, 0);
    const capped: Config = { ...small, report: { ...small.report, maxRows: 10 } };
    const { full, comment } = renderReport(input(results, undefined, capped));
    const rows = (md: string) =>
      md.split('\n').filter((l) => l.startsWith('| triton\\_fa2 |')).length;
    expect(rows(full)).toBe(80);
    expect(rows(comment)).toBe(10);
    expect(comment).toContain('_70 rows that need no attention');
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
    const { full } = renderReport(input(run, undefined));
    expect(full.split('\n')[0]).toBe('## kernelgate (fixture): ❌ fail');
    expect(full).toContain('**Verdict: fail.** 92 cases on none (CPU) at `f4552a94cbcf`.');
    expect(full).toContain('⏭️ SKIPPED | | SDPA&#39;s FLASH\\_ATTENTION backend needs CUDA |');
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
  const rowOf = (md: string, variant: string, caseId = H) =>
    md.split('\n').find((l) => l.startsWith(`| ${variant} | ${caseId} |`));

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

  it('marks each judged row paired or vs baseline, in the Δ cell, with no new column', () => {
    const { full } = renderReport(input(pairedDoc(), baseline));
    expect(rowOf(full, 'triton\\_fa2')).toMatch(
      /\| 39\.59 \| [\d.]+ \| [\d.]+ \| \d+ \| [\d.]+ \| \+5\.0 % · paired \| 🔴 SLOWER \| \+4\.\d % … \+5\.\d % \| ✅ PASS \|/,
    );
    expect(rowOf(full, 'sdpa\\_cudnn')).toMatch(
      /\| ±0\.0 % · vs baseline \| ⚪ SAME \| −\d\.\d % … \+\d\.\d % \| ✅ PASS \| [^|]+ \| not timed against the base revision; judged against the stored baseline \|$/,
    );
    const header = full.split('\n').find((l) => l.startsWith('| variant | case |')) as string;
    expect(header.split('|')).toHaveLength(RESULT_COLUMNS + 2);
    expect(header).toContain('| Δ | verdict | CI of Δ |');
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
    expect(full).toContain('| Δ vs baseline | verdict | CI of Δ |');
  });

  it('shows the A/A control, the verdicts it made AMBIGUOUS and the note', () => {
    const doc = pairedDoc();
    pair(doc, `attention/sdpa_flash/${H}`, 1.04);
    const { full } = renderReport(input(doc, baseline));
    expect(rowOf(full, 'triton\\_fa2')).toMatch(
      /\| \+5\.0 % · paired \| 🟡 AMBIGUOUS \| .* \| was SLOWER \+5\.0 %, but the A\/A control sdpa\\_flash \+4\.0 % \(a reference: identical code in both arms\) moved in the same case: the machine was not quiet \|$/,
    );
    expect(rowOf(full, 'sdpa\\_flash')).toMatch(
      /\| \+4\.0 % · paired \| 🔴 SLOWER \| .* \| reference: identical code in both arms \|$/,
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
    expect(rowOf(full, 'sdpa\\_cudnn')).toContain(
      '| base revision: error (&lt;img src=&quot;https://evil.example/beacon.png&quot;&gt; !\\[beacon\\]',
    );
    for (const block of outside.split(/\n\n/)) {
      const rows = block.split('\n').filter((l) => l.startsWith('|'));
      if (rows.length < 2) continue;
      const cells = (row: string) => row.replace(/\\\|/g, '').split('|').length;
      for (const row of rows) expect(cells(row), row).toBe(cells(rows[0] as string));
    }
  });
});

const RESULT_COLUMNS = 13;

describe('the time of each stage', () => {
  const ROOT_DIR = join(import.meta.dirname, '..');
  const slow2 = loadResults(
    join(ROOT_DIR, 'test/fixtures/recorded/paired-slow2-h100/results.json'),
  );

  it('lists the stages, the harness phases and the kernels of a recorded H100 run', () => {
    expect(stagesLine(slow2)).toBe(
      'Time of each stage (319 s in all): doctor 6 s · build 26 s · base build 0 s · harness 287 s ' +
        '(environment 2 s, set-up 52 s, verify 31 s, base set-up 3 s, base verify 19 s, timing 164 s; ' +
        'by kernel: gemm 9 s, attention 248 s, bsr\\_gemm 27 s).',
    );
  });

  it('puts the line in the report, and nothing when the run recorded no times', () => {
    const { full } = renderReport(input(slow2, undefined, loadConfig(ROOT_DIR)));
    expect(full).toContain('### Environment\n\nTime of each stage (319 s in all): doctor 6 s');
    const bare = { ...slow2, run: { ...slow2.run, stage_seconds: undefined } };
    expect(stagesLine(bare)).toBe('');
    expect(renderReport(input(bare, undefined, loadConfig(ROOT_DIR))).full).not.toContain(
      'Time of each stage',
    );
  });

  it('escapes a stage name it does not know', () => {
    const odd = {
      ...slow2,
      run: { ...slow2.run, stage_seconds: { harness: 10, '<img src=x>|*': 2 } },
    };
    expect(stagesLine(odd)).toBe(
      'Time of each stage (10 s in all): harness 10 s · &lt;img src=x&gt;\\|\\* 2 s.',
    );
  });
});
