// pytest-benchmark's JSON (`pytest --benchmark-json=FILE`): one case per test, the test function
// the variant and its parametrize arguments the case. With `--benchmark-save-data` the JSON keeps
// every round's time (stats.data): those are the samples; without it only the statistics remain.
import type { CaseResult } from '../results/index.js';
import { parseJson } from '../results/index.js';
import {
  isoUtc,
  JsonReader,
  isObject,
  EmptyOutputError,
  gpuEnvironment,
  gpuNamed,
  summaryTiming,
  timingFromSamples,
  type Adapted,
  type AdaptedCase,
  type FileAdapter,
  ONE_RUN_FIX,
} from './types.js';
import { adaptedCaseIdOf, type Params } from './case-id.js';

/** A parametrize value as a case parameter: scalars as they are, anything else as its JSON. */
function paramValue(value: unknown): string | number | boolean {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

/** A benchmark's timing: its rounds as samples, or (without stats.data) its statistics only. */
function timingOf(
  read: JsonReader,
  stats: Record<string, unknown>,
  at: string,
): { timing: CaseResult['timing']; summaryOnly: boolean } {
  const data = stats.data === undefined ? undefined : read.array(stats.data, `${at}.stats.data`);
  const method = 'pytest-benchmark time per call (one sample per round)';
  if (data !== undefined && data.length > 0) {
    const samplesMs = data.map((x, j) => read.number(x, `${at}.stats.data[${j}]`) * 1e3);
    // The rounds of one run: they hold none of the spread between runs (docs/adapters.md).
    const timing = { ...timingFromSamples(samplesMs, method), samples_span: 'one-run' as const };
    return { timing, summaryOnly: false };
  }
  const sec = (key: string) => {
    const x = read.optionalNumber(stats[key], `${at}.stats.${key}`);
    return x === undefined ? undefined : x * 1e3;
  };
  const mean = read.number(stats.mean, `${at}.stats.mean`);
  const stddev = read.optionalNumber(stats.stddev, `${at}.stats.stddev`);
  const timing = summaryTiming({
    method: `${method}, summary only`,
    medianMs: read.number(stats.median, `${at}.stats.median`) * 1e3,
    nSamples: read.number(stats.rounds, `${at}.stats.rounds`),
    q1Ms: sec('q1'),
    q3Ms: sec('q3'),
    minMs: sec('min'),
    meanMs: mean * 1e3,
    ...(stddev !== undefined && mean > 0 ? { relStd: stddev / mean } : {}),
  });
  return { timing, summaryOnly: true };
}

/** benchmarks[i]: the test function its variant, the parametrize arguments its case. */
function caseOf(read: JsonReader, value: unknown, i: number, kernel: string) {
  const at = `benchmarks[${i}]`;
  const b = read.object(value, at);
  const name = read.string(b.name, `${at}.name`);
  const variant = name.replace(/\[.*\]$/, '');
  const params: Params = {};
  if (b.params !== undefined && b.params !== null) {
    for (const [k, v] of Object.entries(read.object(b.params, `${at}.params`))) {
      params[k] = paramValue(v);
    }
  } else if (typeof b.param === 'string') {
    params.param = b.param;
  }
  const { timing, summaryOnly } = timingOf(read, read.object(b.stats, `${at}.stats`), at);
  const extra = b.extra_info === undefined ? {} : read.object(b.extra_info, `${at}.extra_info`);
  const flops = read.optionalNumber(extra.flops, `${at}.extra_info.flops`);
  const bytes = read.optionalNumber(extra.bytes, `${at}.extra_info.bytes`);
  const adapted: AdaptedCase = {
    result: { kernel, variant, case: adaptedCaseIdOf(params), params, status: 'ok', timing },
    work: {
      ...(flops !== undefined ? { flops } : {}),
      ...(bytes !== undefined ? { bytes } : {}),
      note: "per call, from the test's extra_info",
    },
  };
  return { adapted, variant, summaryOnly };
}

function parse({ text, file, kernel }: Parameters<FileAdapter['parse']>[0]): Adapted {
  const read = new JsonReader(file);
  const root = read.object(parseJson(text, file), 'the document');
  const benchmarks = read.array(root.benchmarks, 'benchmarks');
  if (benchmarks.length === 0) throw new EmptyOutputError(file);
  const parsed = benchmarks.map((value, i) => caseOf(read, value, i, kernel));
  const summaryOnly = parsed.filter((c) => c.summaryOnly).length;

  const diagnostics: Adapted['diagnostics'] = [];
  if (summaryOnly > 0) {
    diagnostics.push({
      level: 'info',
      code: 'adapter.pytest_benchmark.no_data',
      message: `${file}: ${summaryOnly} benchmark(s) carry statistics only: they get no interval and no paired verdict`,
      fix: 'run pytest with --benchmark-save-data so the JSON keeps every round',
      source: `kernel:${kernel}`,
      kernel,
    });
  }
  const oneRun = parsed.length - summaryOnly;
  if (oneRun > 0) {
    diagnostics.push({
      level: 'warning',
      code: 'adapter.pytest_benchmark.one_run',
      message: `${file}: the samples of ${oneRun} benchmark(s) are the rounds of one run, which hold none of the spread between runs: against a baseline they are AMBIGUOUS, never SLOWER or FASTER`,
      fix: ONE_RUN_FIX,
      source: `kernel:${kernel}`,
      kernel,
    });
  }
  const machine =
    root.machine_info === undefined ? {} : read.object(root.machine_info, 'machine_info');
  const commit = root.commit_info === undefined ? {} : read.object(root.commit_info, 'commit_info');
  const libraries: Record<string, string> = {};
  if (typeof machine.python_version === 'string') libraries.python = machine.python_version;
  const version = typeof root.version === 'string' ? ` ${root.version}` : '';
  const startedAt = isoUtc(typeof root.datetime === 'string' ? root.datetime : undefined);
  return {
    cases: parsed.map((c) => c.adapted),
    variants: [...new Set(parsed.map((c) => c.variant))],
    tool: `pytest-benchmark${version}`,
    environment: gpuEnvironment(gpuNamed(machine.gpu), libraries),
    run: {
      ...(startedAt ? { started_at: startedAt } : {}),
      ...(typeof commit.id === 'string' ? { git_sha: commit.id } : {}),
      ...(typeof machine.node === 'string' ? { host: machine.node } : {}),
    },
    diagnostics,
  };
}

export const pytestBenchmarkAdapter: FileAdapter<'pytest-benchmark'> = {
  kind: 'file',
  format: 'pytest-benchmark',
  title: 'pytest-benchmark JSON',
  produce: '`pytest --benchmark-json=FILE --benchmark-save-data`',
  capabilities: {
    samples: 'either',
    work: 'tool',
    correctness: 'none',
    paired: false,
    notes: {
      samples:
        "one per round (`stats.data`, time per call), marked as one run's (no interval; several runs' files read together give one sample per run); without `--benchmark-save-data` only the statistics",
      work: "`benchmark.extra_info['flops']` and `['bytes']`",
      correctness: 'none: a test whose assertion failed after timing is still in the JSON',
    },
  },
  parse,
  // machine_info or commit_info, or a benchmark's stats.
  sniff: (root, first) =>
    'machine_info' in root || 'commit_info' in root || (isObject(first) && isObject(first.stats)),
};
