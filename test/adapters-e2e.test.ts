// End to end, as a workflow would run it: the bundled command line (dist/cli.js, built here from
// src/) runs kernelgate.yml's benchmarks — a Google Benchmark program built with g++, a
// pytest-benchmark suite and a CUTLASS-like command — into one results file, and the bundled
// action (dist/index.js) judges that file and comments on a pull request of the GitHub stand-in.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { KernelgateResults } from '../src/results/index.js';
import { buildBundle } from './support/bundled-action.js';
import { GitHubServer } from './support/github-server.js';
import {
  ADAPTER_FIXTURES,
  HAVE_GBENCH,
  HAVE_PYTEST_BENCHMARK,
  REPO,
  REQUIRE_TOOLS,
  VENV_PYTHON,
} from './support/adapter-tools.js';

const SHA = '4bd3c1e0a7f94c2d8e6b5a3f2c1d0e9f8a7b6c5d';
const MARKER = '<!-- kernelgate:report:default -->';

interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  file: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<Finished> {
  return new Promise((done) => {
    execFile(file, args, { ...options, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

let buildDir: string;
let server: GitHubServer;

/** The bundle made by the project's own script from the sources, as the integration test does. */
beforeAll(async () => {
  if (!((HAVE_GBENCH && HAVE_PYTEST_BENCHMARK) || REQUIRE_TOOLS)) return;
  buildDir = await buildBundle(REPO);
}, 120_000);

beforeEach(async () => {
  server = new GitHubServer();
  await server.start();
  server.addPullRequest({ number: 41, headSha: SHA, headLabel: 'acme:attn-tma' });
});

afterEach(async () => {
  await server.close();
  server.assertValid();
});

/** A repository holding the three benchmarks and a kernelgate.yml that runs them. */
function repository(): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-adapters-repo-'));
  cpSync(join(ADAPTER_FIXTURES, 'gbench', 'bench.cc'), join(root, 'cpp', 'bench.cc'));
  cpSync(
    join(ADAPTER_FIXTURES, 'pytest-benchmark', 'test_bench.py'),
    join(root, 'py', 'test_bench.py'),
  );
  cpSync(
    join(ADAPTER_FIXTURES, 'command', 'fake_cutlass.py'),
    join(root, 'cutlass', 'fake_cutlass.py'),
  );
  writeFileSync(
    join(root, 'kernelgate.yml'),
    `policy:
  # BM_needs_gpu reports an error on a machine without a GPU: noted, not failing
  fail_on_error: false
benchmarks:
  - name: cpu_gbench
    format: gbench
    cwd: cpp
    run: >-
      g++ -O2 -std=c++17 bench.cc -o bench -lbenchmark -lpthread &&
      ./bench --benchmark_format=json --benchmark_repetitions=8 --benchmark_out=gbench.json
    output: cpp/gbench.json
    references: [BM_copy]
  - name: py_bench
    format: pytest-benchmark
    cwd: py
    run: >-
      ${VENV_PYTHON} -m pytest test_bench.py -q -p no:cacheprovider --benchmark-json=out.json
      --benchmark-save-data --benchmark-min-rounds=12 --benchmark-max-time=0.0005
    output: py/out.json
  - name: gemm_cutlass
    format: command
    cwd: cutlass
    variants:
      example: python3 fake_cutlass.py --m={M} --n={N} --k={K}
    cases:
      - { M: 4096, N: 4096, K: 4096 }
    repeat: 6
    metric: { regex: '^\\s*(?<variant>[^:\\n]+?):\\s+(?<value>[0-9.]+) TFLOPS/s', unit: tflops }
    check: { regex: 'Disposition: Passed' }
    work: { flops: "2*M*N*K" }
`,
  );
  return root;
}

describe.runIf((HAVE_GBENCH && HAVE_PYTEST_BENCHMARK) || REQUIRE_TOOLS)(
  'bring your own benchmarks, through the bundled command line and action',
  { timeout: 180_000 },
  () => {
    it('builds and runs them, judges their output and comments on the pull request', async () => {
      const root = repository();
      const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? root };
      const bench = await run(
        process.execPath,
        [
          join(buildDir, 'dist', 'cli.js'),
          'bench',
          '--config',
          root,
          '--out-dir',
          join(root, 'report'),
        ],
        { cwd: root, env },
      );
      expect(bench.code, bench.stdout + bench.stderr).toBe(0);
      const resultsPath = join(root, 'report', 'results.json');
      const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as KernelgateResults;
      expect(
        results.kernels.map((k) => [k.name, k.adapter?.format, k.adapter?.correctness]),
      ).toEqual([
        ['cpu_gbench', 'gbench', 'none'],
        ['py_bench', 'pytest-benchmark', 'none'],
        ['gemm_cutlass', 'command', 'self_check'],
      ]);
      expect(results.cases.filter((c) => c.status === 'ok')).toHaveLength(4 + 4 + 2);

      const runnerTemp = mkdtempSync(join(tmpdir(), 'kg-runner-temp-'));
      const files: Record<string, string> = {};
      for (const name of ['GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY', 'GITHUB_STATE', 'GITHUB_ENV']) {
        files[name] = join(runnerTemp, name.toLowerCase());
        writeFileSync(files[name], '');
      }
      const action = await run(process.execPath, [join(buildDir, 'dist', 'index.js')], {
        cwd: root,
        env: {
          ...env,
          ...files,
          GITHUB_ACTIONS: 'true',
          CI: 'true',
          GITHUB_EVENT_NAME: 'pull_request',
          GITHUB_EVENT_PATH: join(
            REPO,
            'test',
            'fixtures',
            'events',
            'pull_request.same-repo.opened.json',
          ),
          GITHUB_REPOSITORY: 'acme/kernels',
          GITHUB_SHA: SHA,
          GITHUB_REF: 'refs/pull/41/merge',
          GITHUB_RUN_ID: '9100200300',
          GITHUB_WORKSPACE: root,
          RUNNER_TEMP: runnerTemp,
          GITHUB_API_URL: server.url,
          GITHUB_SERVER_URL: 'https://github.com',
          INPUT_TOKEN: 'write-token',
          INPUT_CONFIG: root,
          INPUT_RESULTS: resultsPath,
          INPUT_MODE: 'auto',
          INPUT_COMMENT: 'true',
          'INPUT_COMMENT-KEY': 'default',
          'INPUT_REPORT-DIR': '.kernelgate/report',
          'INPUT_APPROVAL-LABEL': 'kernelgate-approved',
        },
      });
      expect(action.code, action.stdout + action.stderr).toBe(0);
      const comments = server.commentsOn(41);
      expect(comments).toHaveLength(1);
      const body = comments[0]?.body ?? '';
      expect(body.startsWith(`${MARKER}\n## kernelgate: ✅ pass`)).toBe(true);
      expect(body).toContain('8 unchecked');
      // the full report (job summary) has every case: the tools that check nothing say so per
      // case, and the example's own check is its correctness
      const summary = readFileSync(files['GITHUB_STEP_SUMMARY'] as string, 'utf8');
      // each kernel's fold line (raw HTML, so its name without Markdown's backslash)
      for (const kernel of ['cpu_gbench', 'py_bench', 'gemm_cutlass']) {
        expect(summary).toContain(`<summary><b>${kernel}</b>: `);
      }
      expect(summary).toContain('not verified: Google Benchmark');
      expect(summary).toContain('not verified: pytest-benchmark');
      expect(summary).toContain('tma ws cooperative 128x64x64');
    });
  },
);
