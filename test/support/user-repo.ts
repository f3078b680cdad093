// The user repository of test/fixtures/user-repo as a git checkout with a baseline store beside it,
// and the bundled action run on it for a push or the nightly (test/nightly-*.e2e.test.ts).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KernelgateResults } from '../../src/results/index.js';
import { runBundledAction } from './bundled-action.js';
import { VENV_PYTHON } from './venv.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'user-repo');
const EVENTS = join(REPO_ROOT, 'test', 'fixtures', 'events');

export interface Checkout {
  workspace: string;
  git: (...args: string[]) => string;
  store: string;
}

/** The fixture committed to a fresh repository (one commit), its harness python the venv's. */
export function userRepoCheckout(moreConfig = ''): Checkout {
  const workspace = mkdtempSync(join(tmpdir(), 'kg-user-git-'));
  cpSync(FIXTURE, workspace, { recursive: true });
  const config = join(workspace, 'kernelgate.yml');
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace('python: python3', `python: ${VENV_PYTHON}`) + moreConfig,
  );
  writeFileSync(join(workspace, '.gitignore'), '.kernelgate/\n__pycache__/\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'kernels');
  return { workspace, git, store: mkdtempSync(join(tmpdir(), 'kg-user-store-')) };
}

/** The bundled action on the checkout's HEAD: a push to main or the schedule event. */
export function runOnCheckout(
  at: { bundleDir: string; apiUrl: string },
  ws: Checkout,
  eventName: 'push' | 'schedule',
  runId: string,
) {
  return runBundledAction({
    bundleDir: at.bundleDir,
    apiUrl: at.apiUrl,
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

/** A run's results.json and report.md, by its run id. */
export function reportOf(ws: Checkout, runId: string) {
  const dir = join(ws.workspace, '.kernelgate', `report-${runId}`);
  return {
    results: JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as KernelgateResults,
    report: readFileSync(join(dir, 'report.md'), 'utf8'),
  };
}
