// Adapted benchmarks in the history (issue 13 with issue 18's records): a run of Google Benchmark
// and pytest-benchmark output (the committed real fixtures) stored as a kernelgate/history record,
// read back and used as the baseline of the next run: its cases are judged against it (not NEW),
// a slowed one is SLOWER, and the tools' cases stay UNCHECKED.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adaptFile, resultsOf } from '../src/adapters/index.js';
import { fileAdapterFor } from '../src/formats/index.js';
import { defaultConfig } from '../src/config/index.js';
import {
  buildRecord,
  parseRecord,
  recordToResults,
  serializeRecord,
} from '../src/history/index.js';
import { judge } from '../src/pipeline/index.js';
import { validateResults, type KernelgateResults } from '../src/results/index.js';
import { ADAPTER_FIXTURES } from './support/adapter-tools.js';

function adaptedRun(): KernelgateResults {
  const adapt = (format: string, file: string, kernel: string) =>
    adaptFile(fileAdapterFor(format)!, join(ADAPTER_FIXTURES, file), { kernel });
  return validateResults(
    resultsOf(
      [
        adapt('gbench', 'gbench/bench.json', 'cpu_gbench'),
        adapt('pytest-benchmark', 'pytest-benchmark/bench.json', 'py_bench'),
      ],
      { gitSha: 'a'.repeat(40) },
    ),
    'the adapted run',
  );
}

describe('adapted benchmarks in the history', () => {
  it('a stored record of them is the baseline the next run is judged against', () => {
    const stored = adaptedRun();
    const record = buildRecord(stored, {
      branch: 'main',
      sku: stored.environment.gpu.sku ?? 'none',
      kernelgateVersion: '0.1.0',
    });
    const baseline = recordToResults(parseRecord(serializeRecord(record)));
    expect(baseline.cases).toHaveLength(stored.cases.length);

    // The next run: the same output, with Google Benchmark's BM_sum n=16384 and pytest's
    // test_dot n=4096 planted 50 % slower.
    const next = structuredClone(stored);
    for (const [variant, caseId] of [
      ['BM_sum', 'n=16384'],
      ['test_dot', 'n=4096'],
    ]) {
      const t = next.cases.find((c) => c.variant === variant && c.case === caseId)?.timing;
      if (!t) throw new Error(`no ${variant} ${caseId} in the fixture`);
      t.samples_ms = t.samples_ms.map((x) => x * 1.5);
      t.median_ms *= 1.5;
    }
    const { comparison } = judge(next, baseline, defaultConfig(), 'pr');
    const verdicts = comparison.cases.map(
      (c) => `${c.kernel}/${c.variant} ${c.perf} ${c.correctness}`,
    );
    expect(verdicts).toContain('cpu_gbench/BM_sum SLOWER UNCHECKED');
    // One pytest-benchmark run's rounds are not the spread between runs (issue 31): no verdict.
    expect(verdicts).toContain('py_bench/test_dot AMBIGUOUS UNCHECKED');
    expect(verdicts).toContain('cpu_gbench/BM_needs_gpu UNTIMED ERROR');
    expect(comparison.cases.filter((c) => c.perf === 'NEW')).toEqual([]);
    expect(comparison.cases.filter((c) => c.correctness === 'PASS')).toEqual([]);
  });
});
