// Issue 13 end to end, as a runner runs it: the bundled action (dist/index.js, built here from
// src/) measures a pull request itself, with no results input. Its repository holds the kernel set
// (kernels/attention: Triton under TRITON_INTERPRET=1 on the CPU, tiny CI shapes) and a
// `benchmarks:` section: the Google Benchmark program and the pytest-benchmark suite the adapter
// tests build, and a command benchmark. The pull request's base revision is a real commit of the
// repository: the action checks it out as a git worktree, and the command benchmark runs base and
// head alternately (ABBA). The head's copy of the command benchmark has a planted sleep (40 ms on
// top of its 20 ms), so it must be SLOWER by its pairs; the gbench and pytest-benchmark cases are
// UNCHECKED (their tools check nothing); kernelgate.yml's policy fails on SLOWER, so the job fails
// naming that case. The comment is read from the GitHub REST stand-in.
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KernelgateResults } from '../src/results/index.js';
import {
  ADAPTER_FIXTURES,
  HAVE_GBENCH,
  HAVE_PYTEST_BENCHMARK,
  REPO,
  REQUIRE_TOOLS,
  VENV_PYTHON,
} from './support/adapter-tools.js';
import { annotations, buildBundle, parseOutputs, runFile } from './support/bundled-action.js';
import { git } from './support/git-remote.js';
import { GitHubServer } from './support/github-server.js';
import { RUN_VENV_TESTS } from './support/venv.js';

const MARKER = '<!-- kernelgate:report:default -->';
const RUN = (HAVE_GBENCH && HAVE_PYTEST_BENCHMARK && RUN_VENV_TESTS) || REQUIRE_TOOLS;

/** The command benchmark: it times its own work and prints `time: X ms`. */
const TIMER = (planted: boolean) => `import sys, time
ms = float(sys.argv[sys.argv.index("--ms") + 1])
t0 = time.perf_counter()
time.sleep(ms / 1000)
${planted ? 'time.sleep(0.040)  # the planted slowdown of this pull request\n' : ''}print(f"time: {(time.perf_counter() - t0) * 1000:.3f} ms")
`;

const CONFIG = `harness:
  python: ${VENV_PYTHON}
  timeout_s: 300
  # CPU: Triton under the interpreter, tiny shapes, short timing (the numbers mean nothing)
  args: [--ci, --device, cpu, --variants, triton_fa2, --seeds, "1", --time-cap-s, "0.05",
         --warmup-s, "0", --first-warmup-s, "0"]
compare:
  paired:
    # CPU timings of the kernel set move by tens of % between arms: only the planted 3x counts
    threshold_pct: 60
policy:
  fail_on_slower: true
  # BM_needs_gpu reports an error on a machine without a GPU: noted, not failing
  fail_on_error: false
benchmarks:
  - name: cpu_gbench
    format: gbench
    cwd: cpp
    run: >-
      g++ -O2 -std=c++17 bench.cc -o bench -lbenchmark -lpthread &&
      ./bench --benchmark_format=json --benchmark_repetitions=6 --benchmark_out=gbench.json
    output: cpp/gbench.json
    references: [BM_copy]
  - name: py_bench
    format: pytest-benchmark
    cwd: py
    run: >-
      ${VENV_PYTHON} -m pytest test_bench.py -q -p no:cacheprovider --benchmark-json=out.json
      --benchmark-save-data --benchmark-min-rounds=8 --benchmark-max-time=0.0005
    output: py/out.json
  - name: sleeper
    format: command
    cwd: cmd
    variants:
      sleep: python3 timer.py --ms {ms}
    cases: [{ ms: 20 }]
    repeat: 10
    metric: { regex: 'time: ([0-9.]+) ms', unit: ms }
`;

/** The repository: base commit, then the pull request's head commit with the planted sleep. */
function repository(): { root: string; base: string; head: string } {
  const root = mkdtempSync(join(tmpdir(), 'kg-bench-action-'));
  mkdirSync(join(root, 'kernels'));
  symlinkSync(join(REPO, 'kernels', 'attention'), join(root, 'kernels', 'attention'));
  // what the attention kernel imports of kernelgate's kernels (the harness brings none)
  symlinkSync(join(REPO, 'kernels', 'common'), join(root, 'kernels', 'common'));
  cpSync(join(ADAPTER_FIXTURES, 'gbench', 'bench.cc'), join(root, 'cpp', 'bench.cc'));
  cpSync(
    join(ADAPTER_FIXTURES, 'pytest-benchmark', 'test_bench.py'),
    join(root, 'py', 'test_bench.py'),
  );
  mkdirSync(join(root, 'cmd'));
  writeFileSync(join(root, 'cmd', 'timer.py'), TIMER(false));
  writeFileSync(join(root, 'kernelgate.yml'), CONFIG);
  writeFileSync(
    join(root, '.gitignore'),
    '.kernelgate/\ncpp/bench\ncpp/gbench.json\npy/out.json\n',
  );
  git(['init', '--quiet', '-b', 'main'], root);
  git(['add', '-A'], root);
  git(['commit', '--quiet', '-m', 'base'], root);
  const base = git(['rev-parse', 'HEAD'], root).trim();
  writeFileSync(join(root, 'cmd', 'timer.py'), TIMER(true));
  git(['commit', '--quiet', '-am', 'head: a planted sleep in the command benchmark'], root);
  const head = git(['rev-parse', 'HEAD'], root).trim();
  return { root, base, head };
}

let bundleDir: string;
let server: GitHubServer;

beforeAll(async () => {
  if (!RUN) return;
  bundleDir = await buildBundle(REPO);
  // The bundle's folder holds what the action's own checkout does: the harness (python/), the GPU
  // table (data/) and kernelgate's kernels/ (buildBundle links them).
  server = new GitHubServer();
  await server.start();
}, 180_000);

afterAll(async () => {
  if (!RUN) return;
  await server.close();
  server.assertValid();
});

describe.runIf(RUN)('the bundled action measures benchmarks beside the kernel set', () => {
  it(
    'runs them after the harness, pairs the command benchmark with the base revision, comments and fails on the planted slowdown',
    { timeout: 900_000 },
    async () => {
      const { root, base, head } = repository();
      server.addPullRequest({ number: 41, headSha: head, headLabel: 'acme:slow-sleep' });
      const event = JSON.parse(
        readFileSync(join(REPO, 'test/fixtures/events/pull_request.same-repo.opened.json'), 'utf8'),
      ) as { pull_request: { base: { sha: string }; head: { sha: string } } };
      event.pull_request.base.sha = base;
      event.pull_request.head.sha = head;
      const runnerTemp = mkdtempSync(join(tmpdir(), 'kg-runner-temp-'));
      const eventPath = join(runnerTemp, 'event.json');
      writeFileSync(eventPath, JSON.stringify(event));
      const files: Record<string, string> = {};
      for (const name of ['GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY', 'GITHUB_STATE', 'GITHUB_ENV']) {
        files[name] = join(runnerTemp, name.toLowerCase());
        writeFileSync(files[name], '');
      }
      const action = await runFile(process.execPath, [join(bundleDir, 'dist', 'index.js')], {
        cwd: root,
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: process.env['HOME'] ?? root,
          TRITON_INTERPRET: '1',
          ...files,
          GITHUB_ACTIONS: 'true',
          CI: 'true',
          GITHUB_EVENT_NAME: 'pull_request',
          GITHUB_EVENT_PATH: eventPath,
          GITHUB_REPOSITORY: 'acme/kernels',
          GITHUB_SHA: head,
          GITHUB_REF: 'refs/pull/41/merge',
          GITHUB_RUN_ID: '9100200400',
          GITHUB_WORKSPACE: root,
          RUNNER_TEMP: runnerTemp,
          GITHUB_API_URL: server.url,
          GITHUB_SERVER_URL: 'https://github.com',
          INPUT_TOKEN: 'write-token',
          INPUT_CONFIG: root,
          INPUT_MODE: 'auto',
          INPUT_PAIRED: 'auto',
          INPUT_COMMENT: 'true',
          'INPUT_COMMENT-KEY': 'default',
          'INPUT_REPORT-DIR': '.kernelgate/report',
          'INPUT_APPROVAL-LABEL': 'kernelgate-approved',
        },
      });
      const log = action.stdout + action.stderr;
      const outputs = parseOutputs(readFileSync(files['GITHUB_OUTPUT'] as string, 'utf8'));

      // The measuring run: the base as a worktree, the harness, then the benchmarks with progress.
      expect(log).toContain(`kernelgate: base revision ${base.slice(0, 12)} checked out in`);
      expect(log).toContain('::group::kernelgate benchmarks');
      expect(log.indexOf('::group::kernelgate benchmarks')).toBeGreaterThan(
        log.indexOf('attention/triton_fa2'),
      );
      expect(log).toContain(
        'benchmark sleeper (command): head and base revision alternately (ABBA)',
      );
      expect(log).toContain('  sleeper/sleep ms=20: python3 timer.py --ms 20 (base)');
      expect(log).toMatch(/benchmark sleeper: 1 case\(s\): 1 ok, 1 paired with the base revision/);

      const results = JSON.parse(
        readFileSync(join(root, '.kernelgate/report/measure/results.json'), 'utf8'),
      ) as KernelgateResults;
      expect(results.kernels.map((k) => [k.name, k.adapter?.format ?? 'kernel module'])).toEqual([
        ['attention', 'kernel module'],
        ['cpu_gbench', 'gbench'],
        ['py_bench', 'pytest-benchmark'],
        ['sleeper', 'command'],
      ]);
      expect(results.run.paired_base?.git_sha).toBe(base);
      const sleeper = results.cases.find((c) => c.kernel === 'sleeper');
      expect(sleeper?.paired).toMatchObject({ base_status: 'ok', n_pairs: 10 });

      // The policy fails on SLOWER: the job fails naming the slowed benchmark, and only it.
      expect(action.code, log).toBe(1);
      expect(outputs['verdict']).toBe('fail');
      const [failure] = annotations(action.stdout, 'error');
      expect(failure).toMatch(
        /^kernelgate: the gate failed \(1 reason\):\n- sleeper\/sleep ms=20: SLOWER \+\d+\.\d % \(99 % CI \+\d+\.\d % … \+\d+\.\d %, threshold 60\.0 %, 5 pairs against the base revision\): [\d.]+ ms vs [\d.]+ ms$/,
      );

      // The comment shows the benchmarks beside the kernels.
      const comments = server.commentsOn(41);
      expect(comments).toHaveLength(1);
      const body = comments[0]?.body ?? '';
      if (process.env['KG13_DUMP'])
        writeFileSync(
          process.env['KG13_DUMP'],
          body + '\n=====\n' + readFileSync(files['GITHUB_STEP_SUMMARY'] as string, 'utf8'),
        );
      expect(
        body.startsWith(
          `${MARKER}\n## kernelgate: ❌ fail: sleeper/sleep slower on 1 case · PR #41`,
        ),
      ).toBe(true);
      // what the pull request changed: the slowed benchmark by its pairs, beside the kernel set
      expect(body).toMatch(
        /^\| sleeper\/sleep \| 1 of 1 \| \+\d+\.\d\u00a0% \| \+\d+\.\d\u00a0% \| 🔴 1 slower · ❔ 1 unchecked \|$/m,
      );
      expect(body).toMatch(
        /^- 🔴 \*\*sleeper\/sleep\*\* slower on 1 of 1 cases: .*, paired against the base revision$/m,
      );
      expect(body).toMatch(
        /^\| sleep \| \+\d+\.\d\s%\s·\spaired \| 🔴\sSLOWER \| ❔\sUNCHECKED \| 20 \|/mu,
      );
      // gbench and pytest-benchmark check nothing: 4 + 4 timed cases and the sleeper UNCHECKED
      expect(body).toContain('❔ 9 unchecked');
      expect(body).toContain('- ❔ 9 timed cases carry no correctness record: UNCHECKED');
      const summary = readFileSync(files['GITHUB_STEP_SUMMARY'] as string, 'utf8');
      for (const kernel of ['attention', 'cpu\\_gbench', 'py\\_bench', 'sleeper']) {
        expect(summary).toContain(kernel);
      }
      expect(summary).toContain('not verified: Google Benchmark');
      expect(summary).toContain('not verified: pytest-benchmark');
      expect(summary).toMatch(
        /not timed against the base revision: pytest-benchmark [\d.]+ output is read once, from the head \(only command benchmarks run in both trees\)/,
      );
      // the pull request changes no kernel: the kernel set's own cases are SAME by identity
      // (identical build and sources in base and head), verified and judged beside them
      // (cells keep their spaces from breaking: no-break spaces, read here as spaces)
      const spaced = summary.replace(/\u00a0/g, ' ');
      expect(spaced).toMatch(/^\|[^|\n]*\| triton\\_fa2 \|[^\n]* ⚪ SAME \|/m);
      expect(spaced).toMatch(/^- triton\\_fa2 · [^\n]*: identical build and sources$/m);
      expect(results.cases.filter((c) => c.kernel === 'attention').every((c) => c.identical)).toBe(
        true,
      );
    },
  );
});
