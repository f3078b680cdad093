// One story across the log, the comment and its links (issue 32), on the recorded H100 run of a
// planted 1 % slowdown (paired-slow1-h100-run12, 2026-11-23): a paired run with no stored baseline
// says in the log what the comment says (its cases are judged by their pairs), the comment names no
// skipped case as NEW, cuts no finding mid-word, and links the commits when the repository is known.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge, withStoredBaseline } from '../src/pipeline/index.js';
import { clip } from '../src/report/cells.js';
import { fileBaselineStore } from '../src/store/index.js';
import { loadGz, ROOT } from './support/recorded.js';

const config = loadConfig(ROOT);
const results = loadGz('paired-slow1-h100-run12');
const HEAD = '5c5014a68608892cf34a9302164f0bc1c7fb7282';
const BASE = 'a3a7cac0ef90e684243cb79f8b79488fe6a0e9ba';

describe('the recorded slow1 run tells one story', { timeout: 120_000 }, () => {
  const { comment } = judge(results, undefined, config, 'pr', { prNumber: 7 }, undefined, {
    repoUrl: 'https://github.com/acme/kernels',
  }).rendered;

  it('logs what the comment says: a paired run with no stored baseline is judged by its pairs', async () => {
    const warnings: string[] = [];
    await withStoredBaseline(
      {
        mode: 'pr',
        branch: 'feature',
        baseBranch: 'main',
        store: fileBaselineStore(mkdtempSync(join(tmpdir(), 'kg-story-'))),
        baselinePath: undefined,
        saveBaseline: false,
      },
      { results, resultsPath: 'results.json' },
      [],
      { warning: (m) => warnings.push(m) },
    );
    expect(warnings).toEqual([
      'No stored baseline for branch main on H100-SXM: the cases timed against the base revision in this job ' +
        'are judged by their pairs, any other is NEW. Baselines are written by trusted runs (push to the branch, ' +
        'schedule); run one first.',
    ]);
    // 216 paired, 1 skipped: the skipped case is not NEW
    expect(comment).toContain(
      '- No stored baseline was given: the 216 case(s) timed against the base revision in this job are judged by their pairs, no case is NEW.',
    );
    expect(comment).not.toContain('the others are NEW');
  });

  it('links the commits of head and base', () => {
    expect(comment).toContain(
      `**217 cases on H100-SXM** at [\`5c5014a68608\`](https://github.com/acme/kernels/commit/${HEAD}).`,
    );
    expect(comment).toContain(
      `Judged: 216 case(s) paired against base [\`a3a7cac0ef90\`](https://github.com/acme/kernels/commit/${BASE}) in this job`,
    );
    // without the repository's address (the command line): code spans, as before
    const plain = judge(results, undefined, config, 'pr').rendered.comment;
    expect(plain).toContain('**217 cases on H100-SXM** at `5c5014a68608`.');
  });

  it('links the dashboard when its address is given (the input dashboard-url)', () => {
    const dashboard = 'https://acme.github.io/kernels/';
    const linked = (dashboardUrl: string) =>
      judge(results, undefined, config, 'pr', { prNumber: 7, dashboardUrl }).rendered;
    const { comment: withLink, full } = linked(dashboard);
    expect(withLink).toContain(
      'the full report in the job summary and the report artifact. Each case over time: [the dashboard](https://acme.github.io/kernels/).\n',
    );
    expect(full).toContain('Each case over time: [the dashboard](https://acme.github.io/kernels/).');
    const nightly = judge(results, undefined, config, 'nightly', { dashboardUrl: dashboard });
    expect(nightly.rendered.comment).toContain(
      'Each case over time: [the dashboard](https://acme.github.io/kernels/).',
    );
    // no address, or one that is not an https link, links nothing
    expect(comment).not.toContain('the dashboard');
    expect(linked('javascript:alert(1)').comment).not.toContain('the dashboard');
  });

  it('cuts a finding at a word boundary', () => {
    expect(comment).toContain(
      'SM clock moved 1335–1545 MHz (14 % of its median) during the samples…\n',
    );
    for (const line of comment.split('\n').filter((l) => l.includes('…'))) {
      // an ellipsis that ends a cut follows a whole word: never "clock-…"
      expect(line).not.toMatch(/[-–(,;:]…/);
    }
    expect(clip('the samples: compare clock-locked runs', 30)).toBe('the samples: compare…');
    expect(clip('abcdefghijklmnopqrstuvwxyz', 10)).toBe('abcdefghi…');
    expect(clip('short', 10)).toBe('short');
  });
});

describe('the recorded A/A run tells one story', { timeout: 120_000 }, () => {
  it('says of its ambiguous case what its pass means, not "ambiguous is not a pass"', () => {
    // paired-aa-h100-run64 (2026-11-26): a pass with one AMBIGUOUS case (attention/sdpa_flash)
    const { comment } = judge(loadGz('paired-aa-h100-run64'), undefined, config, 'pr', {
      prNumber: 7,
    }).rendered;
    expect(comment).toMatch(/^## kernelgate: ✅ pass: no case slower or faster · PR #7$/m);
    expect(comment).toContain(
      '- 🟡 1 case AMBIGUOUS (attention/sdpa\\_flash 1): the data cannot tell a change from noise, so it neither blocks the merge nor is shown unchanged. Rerun, or raise the sample count\n',
    );
    expect(comment).not.toContain('is not a pass');
  });
});
