// The real tools, run now: the Google Benchmark program built with g++ against Debian's
// libbenchmark-dev and the pytest-benchmark suite, their fresh output adapted and judged against
// the committed recording of the same program (test/fixtures/adapters/README.md).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileAdapterFor } from '../src/formats/index.js';
import { adaptFile, resultsOf } from '../src/adapters/run.js';
import { defaultConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { validateResults } from '../src/results/index.js';
import {
  ADAPTER_FIXTURES,
  buildGbench,
  HAVE_GBENCH,
  HAVE_PYTEST_BENCHMARK,
  REPO,
  REQUIRE_TOOLS,
  VENV_PYTHON,
} from './support/adapter-tools.js';

function adapted(format: string, file: string, kernel: string) {
  const adapter = fileAdapterFor(format);
  if (!adapter) throw new Error(format);
  return validateResults(resultsOf([adaptFile(adapter, file, { kernel })]), file);
}

const TIMED = ['SAME', 'FASTER', 'SLOWER', 'AMBIGUOUS'];

describe.runIf(HAVE_GBENCH || REQUIRE_TOOLS)('Google Benchmark, built and run here', () => {
  it('builds bench.cc against libbenchmark, runs it with repetitions and judges the output', () => {
    if (!HAVE_GBENCH) {
      throw new Error(
        'libbenchmark-dev is not installed (/usr/include/benchmark/benchmark.h): scripts/test.sh installs it with apt-get',
      );
    }
    const dir = mkdtempSync(join(tmpdir(), 'kg-gbench-'));
    const binary = join(dir, 'bench');
    buildGbench(binary);
    const out = join(dir, 'out.json');
    execFileSync(
      binary,
      ['--benchmark_format=json', '--benchmark_repetitions=8', `--benchmark_out=${out}`],
      {
        stdio: 'ignore',
      },
    );
    const fresh = adapted('gbench', out, 'gbench');
    const recorded = adapted('gbench', join(ADAPTER_FIXTURES, 'gbench', 'bench.json'), 'gbench');
    expect(fresh.cases.map((c) => `${c.variant} ${c.case} ${c.status}`)).toEqual(
      recorded.cases.map((c) => `${c.variant} ${c.case} ${c.status}`),
    );
    for (const c of fresh.cases.filter((x) => x.status === 'ok')) {
      expect(c.timing?.samples_ms).toHaveLength(8);
    }
    // the counters and SetBytesProcessed come back exactly, whatever the machine's speed
    const sum = fresh.cases.find((c) => c.case === 'n=16384');
    expect(sum?.work).toMatchObject({ flops: 16384, bytes: 65536 });
    const copy = fresh.cases.find((c) => c.case === 'bytes=65536');
    const bytes = (copy?.throughput?.gbps ?? 0) * (copy?.timing?.median_ms ?? 0) * 1e6;
    expect(Math.round(bytes)).toBe(131072);

    const { comparison, verdict } = judge(fresh, recorded, defaultConfig(), 'pr');
    expect(comparison.baseline).toBe('compared');
    const timed = comparison.cases.filter((c) => c.status === 'ok');
    expect(timed).toHaveLength(4);
    for (const c of timed) {
      expect(TIMED).toContain(c.perf);
      expect(c.correctness).toBe('UNCHECKED');
    }
    expect(verdict.reasons).toEqual(['gbench/BM_needs_gpu n=1024: error: gbench: no CUDA device']);
  }, 120_000);
});

describe.runIf(HAVE_PYTEST_BENCHMARK || REQUIRE_TOOLS)('pytest-benchmark, run here', () => {
  it('runs the suite with --benchmark-json and judges the output', () => {
    if (!HAVE_PYTEST_BENCHMARK) {
      throw new Error(
        'pytest-benchmark is not installed in .venv: scripts/test.sh installs it (requirements-bench.txt)',
      );
    }
    const dir = mkdtempSync(join(tmpdir(), 'kg-pytest-bench-'));
    const out = join(dir, 'out.json');
    execFileSync(
      VENV_PYTHON,
      [
        '-m',
        'pytest',
        join('test', 'fixtures', 'adapters', 'pytest-benchmark'),
        '-q',
        '-p',
        'no:cacheprovider',
        `--benchmark-json=${out}`,
        '--benchmark-save-data',
        '--benchmark-min-rounds=12',
        '--benchmark-max-time=0.0005',
      ],
      { cwd: REPO, stdio: 'pipe' },
    );
    const raw = JSON.parse(readFileSync(out, 'utf8')) as { version: string };
    const fresh = adapted('pytest-benchmark', out, 'pytest_bench');
    const recorded = adapted(
      'pytest-benchmark',
      join(ADAPTER_FIXTURES, 'pytest-benchmark', 'bench.json'),
      'pytest_bench',
    );
    expect(fresh.kernels[0]?.adapter).toEqual({
      format: 'pytest-benchmark',
      tool: `pytest-benchmark ${raw.version}`,
      samples: 'raw',
      work: true,
      correctness: 'none',
      paired: false,
    });
    expect(fresh.cases.map((c) => `${c.variant} ${c.case}`)).toEqual(
      recorded.cases.map((c) => `${c.variant} ${c.case}`),
    );
    for (const c of fresh.cases) expect(c.timing?.samples_ms.length).toBeGreaterThanOrEqual(12);
    const { comparison, verdict } = judge(fresh, recorded, defaultConfig(), 'pr');
    expect(comparison.cases.map((c) => c.correctness)).toEqual([
      'UNCHECKED',
      'UNCHECKED',
      'UNCHECKED',
      'UNCHECKED',
    ]);
    for (const c of comparison.cases) expect(TIMED).toContain(c.perf);
    expect(verdict.verdict).toBe('pass');
  }, 120_000);
});
