// Issue 11, "Done when" 3, end to end: the bundled action (dist/index.js, built from src/) as a
// runner runs it, its history on a real git remote (a bare repository on disk, `history-remote`),
// its nightly issue and comments on the GitHub REST stand-in. Five recorded GPU runs (real runs of
// the action on an H200, test/fixtures/recorded) are stored by pushes to main; then two nightlies:
//
//   night 1  the newest stored run's samples again, with attention/cuda_fa_wgmma's scaled by +5 %:
//            a PLANTED regression, so that the planted change is the only thing that moves. It
//            must show the trends and post one new comment (which notifies) naming the variant
//            and its cases.
//   night 2  another real run of the same code (the A/A run aa-1359) with the same +5 % planted:
//            the regression is still there but nothing regressed since night 1. The issue is
//            updated and no second alert is posted.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readResultsText, type KernelgateResults } from '../src/results/index.js';
import {
  annotations,
  buildBundle,
  runBundledAction,
  type ActionRun,
} from './support/bundled-action.js';
import { bareRemote, git, neverForced, treeOf } from './support/git-remote.js';
import { GitHubServer } from './support/github-server.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const recorded = (run: string): KernelgateResults =>
  JSON.parse(
    readResultsText(join(repoRoot, 'test', 'fixtures', 'recorded', run, 'results.json.gz')),
  ) as KernelgateResults;
const event = (file: string) => join(repoRoot, 'test', 'fixtures', 'events', file);
const BRANCH = 'kernelgate-data';
const NIGHTLY_MARKER = '<!-- kernelgate:nightly:default -->';
const ALERT_MARKER = '<!-- kernelgate:alert:default -->';
const PLANTED = { kernel: 'attention', variant: 'cuda_fa_wgmma', scale: 1.05 };

/** A recorded run, started at another time (each run a night apart, as the store orders them). */
function dated(results: KernelgateResults, startedAt: string): KernelgateResults {
  return { ...results, run: { ...results.run, started_at: startedAt } };
}

/** The planted regression: every sample of one variant's timed cases scaled by +5 %. */
function planted(results: KernelgateResults): KernelgateResults {
  const copy = structuredClone(results);
  let scaled = 0;
  for (const c of copy.cases) {
    if (c.kernel !== PLANTED.kernel || c.variant !== PLANTED.variant || !c.timing) continue;
    const t = c.timing as unknown as Record<string, unknown>;
    t['samples_ms'] = (t['samples_ms'] as number[]).map((s) => s * PLANTED.scale);
    for (const k of ['median_ms', 'q1_ms', 'q3_ms', 'min_ms', 'mean_ms'])
      if (typeof t[k] === 'number') t[k] = (t[k] as number) * PLANTED.scale;
    for (const tp of ['tflops', 'gbps', 'pct_peak_tflops', 'pct_copy_ceiling']) {
      const thr = c.throughput as Record<string, number> | undefined;
      if (thr && typeof thr[tp] === 'number') thr[tp] = thr[tp] / PLANTED.scale;
    }
    scaled++;
  }
  expect(scaled).toBe(26); // every case of the variant
  return copy;
}

let bundleDir: string;
let server: GitHubServer;
const scratch = mkdtempSync(join(tmpdir(), 'kg-nightly-e2e-'));

beforeAll(async () => {
  bundleDir = await buildBundle(repoRoot);
}, 180_000);

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
});

afterEach(async () => {
  await server.close();
  server.assertValid();
});

async function action(
  kind: 'push' | 'schedule',
  results: KernelgateResults,
  runId: string,
  remote: string,
): Promise<ActionRun> {
  const file = join(scratch, `${runId}.json`);
  writeFileSync(file, JSON.stringify(results));
  const run = await runBundledAction({
    bundleDir,
    apiUrl: server.url,
    eventName: kind,
    eventFile: event(kind === 'push' ? 'push.main.json' : 'schedule.json'),
    ref: 'refs/heads/main',
    sha: results.run.git_sha ?? '0'.repeat(40),
    runId,
    inputs: {
      token: 'write-token',
      config: repoRoot,
      mode: 'auto',
      comment: 'true',
      'comment-key': 'default',
      'report-dir': '.kernelgate/report',
      results: file,
      history: 'branch',
      'history-remote': remote,
    },
  });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(annotations(run.stdout, 'error')).toEqual([]);
  return run;
}

/** The trends table's rows of a report: the header and one row per graded headline. */
function trendRows(report: string): string[] {
  const lines = report.split('\n');
  const at = lines.findIndex((l) => l.startsWith('| headline (graded tonight) |'));
  if (at < 0) return [];
  const rows: string[] = [];
  for (let i = at; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(lines[i]!);
  return rows;
}

describe('the nightly from five stored runs, a planted regression, and its alert', () => {
  it('shows the trends, posts one new comment naming the variant and cases, and none again the next night', async () => {
    const { remote } = bareRemote();
    // Five real recorded runs, stored by five pushes to main on five days.
    const stored = ['calibration/run1', 'calibration/run2', 'main-1355', 'nightly', 'push'];
    for (const [i, run] of stored.entries()) {
      const pushed = await action(
        'push',
        dated(recorded(run), `2026-11-${16 + i}T03:17:00Z`),
        `50${i}`,
        remote,
      );
      expect(pushed.stdout).toMatch(
        /Stored as the newest baseline: kernelgate-data:records\/H200\/main\//,
      );
    }
    expect(treeOf(remote, BRANCH).size).toBe(1 + 5); // the README and five records
    expect(server.requests).toEqual([]); // pushes publish nothing

    // Night 1: the planted regression.
    const night1 = await action(
      'schedule',
      planted(dated(recorded('push'), '2026-11-21T03:17:00Z')),
      '601',
      remote,
    );
    expect(night1.outputs['verdict']).toBe('pass'); // a regression warns under this policy
    expect(Number(night1.outputs['slower'])).toBeGreaterThan(0);
    const issues = server.issues.filter((i) => !i.isPullRequest);
    expect(issues).toHaveLength(1);
    const issue = issues[0]!;
    expect(
      issue.body.startsWith(
        `${NIGHTLY_MARKER}\n## kernelgate nightly: ⚠️ regression: attention/cuda\\_fa\\_wgmma slower on`,
      ),
    ).toBe(true);
    // The trends: each graded headline across the five stored runs and tonight's.
    const rows1 = trendRows(issue.body);
    expect(rows1[0]).toBe(
      '| headline (graded tonight) | trend, oldest first (▁ −5 % … █ +5 % of the window median) | tonight | last night · window median · best | tonight vs median | reference ms vs median |',
    );
    // attention's headline fell from 0.79× last night to 0.75× SDPA default (the planted +5 %),
    // −5.2 % against the window's median while SDPA default's own time moved +1.6 %: code drift,
    // not the machine. bsr_gemm's stays within its window.
    expect(rows1.slice(2)).toEqual([
      '| attention (cuda\\_fa\\_wgmma) | `▅▅▆▄▄▁` (0.75–0.81×) | **0.75×** | 0.79× · 0.79× · 0.81× | −5.2 % | +1.6 % |',
      '| bsr\\_gemm (cuda\\_bsr\\_wgmma\\_ws) | `▅▇▄█▄▄` (0.71–0.81×) | **0.71×** | 0.71× · 0.72× · 0.81× | −1.4 % | −0.0 % |',
    ]);
    // The alert: a new comment (POST, not an edit of the issue), which notifies.
    const alerts = server.commentsOn(issue.number).filter((c) => c.body.startsWith(ALERT_MARKER));
    expect(alerts).toHaveLength(1);
    expect(server.calls('issues/create-comment')).toHaveLength(1);
    expect(server.calls('issues/update-comment')).toHaveLength(0);
    const alert = alerts[0]!.body;
    // It names the regressed variant and its cases, each with its change (the four D=64 cases
    // of 26 came out SLOWER at +5 %; the rest stayed within their noise).
    expect(alert).toBe(
      `${ALERT_MARKER}\n` +
        'kernelgate nightly at `329565340326`: ⚠️ regression: attention/cuda\\_fa\\_wgmma slower on 4 cases. ' +
        'Worst: attention/cuda\\_fa\\_wgmma dtype=fp16,B=16,H=96,S=4096,D=64,causal=false +5.0 %; ' +
        'attention/cuda\\_fa\\_wgmma dtype=fp16,B=16,H=96,S=4096,D=64,causal=true +5.0 %; ' +
        'attention/cuda\\_fa\\_wgmma dtype=bf16,B=16,H=96,S=4096,D=64,causal=true +5.0 %; and 1 more. ' +
        "The issue's report has the cases.",
    );
    expect(night1.stdout).toMatch(
      /Posted the nightly's alert https:\/\/github\.com\/acme\/kernels\/(issues|pull)\/\d+#issuecomment-\d+\./,
    );

    // Night 2: the regression is still in the code, nothing new regressed since night 1.
    const night2 = await action(
      'schedule',
      planted(dated(recorded('calibration/aa-1359'), '2026-11-22T03:17:00Z')),
      '602',
      remote,
    );
    expect(night2.outputs['verdict']).toBe('pass');
    expect(night2.outputs['slower']).toBe('0');
    expect(server.issues.filter((i) => !i.isPullRequest)).toHaveLength(1);
    expect(issue.body.startsWith(`${NIGHTLY_MARKER}\n## kernelgate nightly: ✅ pass`)).toBe(true);
    // Seven runs: the six stored, said above the table, and tonight's; a mark for each
    expect(issue.body).toContain('Each headline over the 6 stored runs since ');
    expect(
      trendRows(issue.body).find((r) => r.startsWith('| attention (cuda\\_fa\\_wgmma) |')),
    ).toMatch(/^\| attention \(cuda\\_fa\\_wgmma\) \| `[▁▂▃▄▅▆▇█]{7}` /);
    // No duplicate alert: still the one comment, and no second POST.
    expect(
      server.commentsOn(issue.number).filter((c) => c.body.startsWith(ALERT_MARKER)),
    ).toHaveLength(1);
    expect(server.calls('issues/create-comment')).toHaveLength(1);
    expect(night2.stdout).not.toContain("Posted the nightly's alert");

    // The store: seven records, appended, never forced.
    expect(treeOf(remote, BRANCH).size).toBe(1 + 7);
    expect(neverForced(remote, BRANCH)).toBe(true);
    expect(git(['--git-dir', remote, 'rev-list', '--count', `refs/heads/${BRANCH}`]).trim()).toBe(
      '7', // a commit a run (the first adds the README too)
    );
  }, 300_000);
});
