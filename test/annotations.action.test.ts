// Annotations as a runner reads them: the bundled action (dist/index.js built from src/) run on a
// workspace, and the workflow commands it prints on stdout, `::error title=…,file=…,line=…,col=…::`,
// asserted exactly (the toolkit escapes ':' and ',' in properties as %3A and %2C, newlines as %0A).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { KernelgateResults } from '../src/results/index.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildBundle, runBundledAction, type ActionRun } from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const fixture = (path: string): string => join(repoRoot, 'test', 'fixtures', path);
const MANIFEST = 'kernels/attention/kernel.yml';
const OWNED = 'kernels/attention/triton_fa2.py';

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

/** A workspace holding kernelgate's own attention kernel.yml, the file its triton_fa2 owns (and `files`). */
function checkout(files: Record<string, string> = {}): string {
  const workspace = mkdtempSync(join(tmpdir(), 'kg-annotated-'));
  mkdirSync(join(workspace, 'kernels', 'attention'), { recursive: true });
  cpSync(join(repoRoot, MANIFEST), join(workspace, MANIFEST));
  // the file a variant `owns` must be there for the manifest to load
  cpSync(join(repoRoot, OWNED), join(workspace, OWNED));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(workspace, file), text);
  return workspace;
}

function push(workspace: string, inputs: Record<string, string>): Promise<ActionRun> {
  return runBundledAction({
    bundleDir,
    apiUrl: server.url,
    eventName: 'push',
    eventFile: fixture('events/push.main.json'),
    ref: 'refs/heads/main',
    sha: 'c'.repeat(40),
    runId: '7100',
    workspace,
    inputs: { config: '.', comment: 'false', 'save-baseline': 'false', ...inputs },
  });
}

/** The workflow commands of one kind, as printed. */
const commands = (stdout: string, kind: 'error' | 'warning') =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith(`::${kind} `) || line.startsWith(`::${kind}::`));

/** `line=…,col=…` of the first `needle` after the line holding `after` in the real kernel.yml. */
function place(needle: string, after = ''): string {
  const lines = readFileSync(join(repoRoot, MANIFEST), 'utf8').split('\n');
  const from = after === '' ? 0 : lines.findIndex((l) => l.includes(after));
  const line = lines.findIndex((l, i) => i >= from && l.includes(needle));
  expect(line, `${needle} in ${MANIFEST}`).toBeGreaterThanOrEqual(0);
  return `line=${line + 1},col=${lines[line]!.indexOf(needle) + 1}`;
}

describe('annotations from the bundled action', { timeout: 60_000 }, () => {
  test('a config error: at its field of kernelgate.yml, then the failure message', async () => {
    const workspace = checkout({
      'kernelgate.yml': 'compare:\n  threshold_pct: 3\npolicy:\n  fail_on_slower: maybe\n',
    });
    const run = await push(workspace, { results: fixture('results/aa-current.json') });
    expect(run.code).toBe(1);
    const problem = 'kernelgate.yml: policy.fail_on_slower must be boolean (got "maybe")';
    expect(commands(run.stdout, 'error')).toEqual([
      `::error title=kernelgate%3A config error,file=kernelgate.yml,line=4,col=3::${problem}`,
      `::error::${problem}`,
    ]);
  });

  test("a kernel.yml's problem: at the field in kernels/<name>/kernel.yml", async () => {
    const workspace = checkout();
    const text = readFileSync(join(workspace, MANIFEST), 'utf8');
    writeFileSync(join(workspace, MANIFEST), text.replace(/^timeout_s: .*$/m, 'timeout_s: -1'));
    const run = await push(workspace, { results: fixture('results/aa-current.json') });
    expect(run.code).toBe(1);
    const problem = `${MANIFEST}: timeout_s must be > 0 (got -1)`;
    expect(commands(run.stdout, 'error')).toEqual([
      `::error title=kernelgate%3A config error,file=${MANIFEST},${place('timeout_s:')}::${problem}`,
      `::error::${problem}`,
    ]);
  });

  test('correctness DRIFT: at the variant in its kernel.yml, then the gate', async () => {
    const run = await push(checkout(), {
      results: fixture('results/drift.json'),
      baseline: fixture('results/baseline.json'),
    });
    expect(run.code).toBe(1);
    const reason =
      'attention/triton_fa2 dtype=bf16,B=16,H=96,S=4096,D=128,causal=false: correctness DRIFT: ' +
      'rel_l2 7.5e-3 > 2 × baseline 2.6e-3 (floor 1e-4, tol 1e-2)';
    expect(commands(run.stdout, 'error')).toEqual([
      `::error title=kernelgate%3A correctness DRIFT,file=${MANIFEST},${place('name: triton_fa2')}::${reason}`,
      `::error::kernelgate: the gate failed (1 reason):%0A- ${reason}`,
    ]);
  });

  test("a kernel's error text: one line, no workflow command of its own, no colours", async () => {
    const workspace = checkout();
    const results = JSON.parse(
      readFileSync(fixture('results/aa-current.json'), 'utf8'),
    ) as KernelgateResults;
    const errored = results.cases.find((c) => c.variant === 'triton_fa2')!;
    Object.assign(errored, {
      status: 'error',
      error: {
        kind: 'RuntimeError',
        message: 'boom\n::warning file=README.md,line=1::injected\r\n\x1b[31mred\x1b[0m\x07',
      },
    });
    delete errored.timing;
    delete errored.correctness;
    const file = join(workspace, 'errored.json');
    writeFileSync(file, JSON.stringify(results));
    const run = await push(workspace, { results: file });
    expect(run.code).toBe(1);
    const label = `attention/triton_fa2 ${errored.case}`;
    expect(commands(run.stdout, 'error')[0]).toBe(
      `::error title=kernelgate%3A case error,file=${MANIFEST},${place('name: triton_fa2')}::` +
        `${label}: error: RuntimeError: boom ::warning file=README.md,line=1::injected red`,
    );
    // The failure message keeps the text's lines, escaped by the toolkit: no command of its own.
    expect(run.stdout.split('\n').filter((l) => l.includes('injected'))).toHaveLength(2);
    expect(run.stdout).not.toMatch(/^::warning file=README/m);
  });

  test("an unmet build expectation: at its field of the variant's build.expect", async () => {
    const run = await push(checkout(), {
      results: fixture('results/build-expectation.json'),
      baseline: fixture('results/baseline.json'),
    });
    expect(run.code).toBe(1);
    const reason =
      'attention/cuda_fa2: build expectation unmet: archs: sm_90a missing (found sm_90): ' +
      'built with -gencode=arch=compute_90,code=sm_90';
    expect(commands(run.stdout, 'error')).toEqual([
      `::error title=kernelgate%3A build expectation unmet,file=${MANIFEST},${place('archs:', 'name: cuda_fa2')}::${reason}`,
      `::error::kernelgate: the gate failed (1 reason):%0A- ${reason}`,
    ]);
    // The doctor's diagnostic about the same variant: a warning at the variant, not a plain one.
    const diagnostic = commands(run.stdout, 'warning').filter((c) =>
      c.includes('arch-conditional-mma'),
    );
    expect(diagnostic).toEqual([
      `::warning title=kernelgate%3A diagnostic arch-conditional-mma,file=${MANIFEST},${place('name: cuda_fa2')}::` +
        'diagnostic arch-conditional-mma: Arch conditional MMA instruction used without targeting appropriate ' +
        'compute capability (fix: build with -gencode=arch=compute_90a,code=sm_90a (not compute_90))',
    ]);
  });
});
