// The nightly's bisection through the bundled action (issue 25), on the CPU user repository under
// TRITON_INTERPRET=1: a push stores the good run, eight commits land (the kernel's folder changes
// in the 2nd, 4th and 6th; the 4th makes triton_axpb sleep 5 ms a call), and the schedule event
// finds triton_axpb SLOWER beside the good run and traces it to the 4th commit, measuring the
// 2nd and the 4th only. The repository's paired threshold is 25 %: a busy CPU is no H100.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KernelgateResults } from '../src/results/index.js';
import { buildBundle, runBundledAction } from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = join(repoRoot, 'test', 'fixtures', 'user-repo');
const EVENTS = join(repoRoot, 'test', 'fixtures', 'events');
const LAUNCH = '        _axpb[(triton.cdiv(n, BLOCK),)](inputs["x"], out, n, A, B, BLOCK=BLOCK)';

describeWithVenv('the nightly bisects a regression to its commit', () => {
  let bundleDir: string;
  let server: GitHubServer;

  beforeAll(async () => {
    bundleDir = await buildBundle(repoRoot);
    server = new GitHubServer();
    await server.start();
  }, 180_000);

  afterAll(async () => {
    await server.close();
  });

  function checkout() {
    const workspace = mkdtempSync(join(tmpdir(), 'kg-bisect-'));
    cpSync(FIXTURE, workspace, { recursive: true });
    const config = join(workspace, 'kernelgate.yml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('python: python3', `python: ${VENV_PYTHON}`) +
        'compare:\n  paired: { threshold_pct: 25 }\n',
    );
    writeFileSync(join(workspace, '.gitignore'), '.kernelgate/\n__pycache__/\n');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
        encoding: 'utf8',
      }).trim();
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'kernels');
    return { workspace, git, store: mkdtempSync(join(tmpdir(), 'kg-bisect-store-')) };
  }

  function action(ws: ReturnType<typeof checkout>, eventName: 'push' | 'schedule', runId: string) {
    return runBundledAction({
      bundleDir,
      apiUrl: server.url,
      eventName,
      eventFile: join(EVENTS, eventName === 'push' ? 'push.main.json' : 'schedule.json'),
      ref: 'refs/heads/main',
      sha: ws.git('rev-parse', 'HEAD'),
      runId,
      workspace: ws.workspace,
      env: { TRITON_INTERPRET: '1' },
      inputs: {
        token: 'write-token',
        config: '.',
        mode: 'auto',
        comment: 'false',
        'comment-key': 'default',
        'report-dir': `.kernelgate/report-${runId}`,
        'baseline-dir': ws.store,
      },
    });
  }

  it('names the fourth of eight commits, having measured two', { timeout: 900_000 }, async () => {
    const ws = checkout();
    const push = await action(ws, 'push', '9001');
    expect(push.code, push.stdout + push.stderr).toBe(0);

    const bench = join(ws.workspace, 'kernels', 'scale', 'bench.py');
    const shas: string[] = [];
    for (let i = 1; i <= 8; i++) {
      if (i === 2 || i === 6)
        writeFileSync(bench, readFileSync(bench, 'utf8') + `# touched ${i}\n`);
      else if (i === 4) {
        const text = readFileSync(bench, 'utf8');
        expect(text).toContain(LAUNCH);
        writeFileSync(
          bench,
          text
            .replace('import torch\n', 'import time\n\nimport torch\n')
            .replace(LAUNCH, `${LAUNCH}\n        time.sleep(0.005)`),
        );
      } else writeFileSync(join(ws.workspace, 'README.md'), `night ${i}\n`);
      ws.git('add', '-A');
      ws.git('commit', '-qm', `commit ${i}`);
      shas.push(ws.git('rev-parse', 'HEAD'));
    }

    const night = await action(ws, 'schedule', '9002');
    expect(night.code, night.stdout + night.stderr).toBe(0);
    const results = JSON.parse(
      readFileSync(join(ws.workspace, '.kernelgate', 'report-9002', 'results.json'), 'utf8'),
    ) as KernelgateResults;
    const found = results.diagnostics.filter((d) => d.code === 'nightly.bisect');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ level: 'warning', kernel: 'scale', variant: 'triton_axpb' });
    const short = (s: string) => s.slice(0, 12);
    expect(found[0]!.message).toMatch(
      new RegExp(
        `^scale/triton_axpb became slower at ${shas[3]}: the first bad commit of 8 commits since the last good run ` +
          `\\(3 commits changed the kernel's folder; 2 commits measured: ${short(shas[1]!)} good \\(SLOWER on 0 of 2 cases, median ×[0-9.]+\\); ` +
          `${short(shas[3]!)} bad \\(SLOWER on 2 of 2 cases, median ×[0-9.]+\\)\\)$`,
      ),
    );
    expect(night.stdout).toContain(`kernelgate: bisect: ${found[0]!.message}`);
    expect(results.run.stage_seconds?.['bisect']).toBeGreaterThan(0);
    const report = readFileSync(
      join(ws.workspace, '.kernelgate', 'report-9002', 'report.md'),
      'utf8',
    );
    expect(report).toContain(`became slower at ${shas[3]}`);
  });
});
