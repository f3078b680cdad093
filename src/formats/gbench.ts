// Google Benchmark's JSON (`--benchmark_format=json` or `--benchmark_out=FILE`): one case per
// benchmark instance, its repetitions (`--benchmark_repetitions=N`) the samples. Aggregates
// (mean, median, stddev, cv, BigO) are the library's own statistics of those repetitions and are
// not samples, so they are skipped.
import type { Diagnostic } from '../results/index.js';
import { parseJson } from '../results/index.js';
import {
  isoUtc,
  JsonReader,
  isObject,
  EmptyOutputError,
  gpuEnvironment,
  gpuNamed,
  scalarOf,
  timingFromSamples,
  type Adapted,
  type AdaptedCase,
  type FileAdapter,
} from './types.js';
import { adaptedCaseIdOf, type Params } from './case-id.js';

const MS_PER_UNIT: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1e3 };

/** Name components that set how an instance ran, not what it computes: not case parameters. */
const SETTINGS = new Set(['min_time', 'min_warmup_time', 'repeats', 'iterations']);
/** Name components that choose the clock the library reports and divides rates by. */
const CLOCKS = new Set(['real_time', 'manual_time', 'process_time']);

interface Instance {
  variant: string;
  params: Params;
  clock: 'real_time' | 'manual_time' | 'process_time' | 'cpu_time';
  samplesMs: number[];
  /** per iteration, from the counters of the first repetition */
  flops?: number;
  bytes?: number;
  error?: string;
  skipped?: string;
}

/**
 * "BM_copy/bytes:4096/min_time:0.010/real_time" → variant BM_copy, params {bytes: 4096}, clock
 * real_time. Unnamed arguments become arg0, arg1, … in order.
 */
export function splitRunName(runName: string): Pick<Instance, 'variant' | 'params' | 'clock'> {
  const [variant = runName, ...parts] = runName.split('/');
  const params: Params = {};
  let clock: Instance['clock'] = 'cpu_time';
  let positional = 0;
  for (const part of parts) {
    if (CLOCKS.has(part)) {
      clock = part as Instance['clock'];
      continue;
    }
    const named = /^([A-Za-z_][A-Za-z0-9_]*):(.*)$/.exec(part);
    if (named) {
      const [, key = '', value = ''] = named;
      if (!SETTINGS.has(key)) params[key] = scalarOf(value);
      continue;
    }
    params[`arg${positional++}`] = scalarOf(part);
  }
  return { variant, params, clock };
}

/** The instances of the runs, in order, with their repetitions as samples (aggregates skipped). */
function readInstances(read: JsonReader, runs: unknown[]): Map<string, Instance> {
  const instances = new Map<string, Instance>();
  runs.forEach((value, i) => {
    const at = `benchmarks[${i}]`;
    const run = read.object(value, at);
    if (run.run_type === 'aggregate') return;
    const runName = read.string(run.run_name ?? run.name, `${at}.run_name`);
    let inst = instances.get(runName);
    if (!inst) {
      inst = { ...splitRunName(runName), samplesMs: [] };
      instances.set(runName, inst);
    }
    if (run.error_occurred === true) {
      inst.error = String(run.error_message ?? 'error_occurred, with no message');
      return;
    }
    if (run.skipped === true) {
      inst.skipped = String(run.skip_message ?? 'skipped, with no message');
      return;
    }
    const unit = read.string(run.time_unit, `${at}.time_unit`);
    const perUnit = MS_PER_UNIT[unit];
    if (perUnit === undefined)
      throw read.error(`${at}.time_unit`, 'must be one of ns, us, ms, s', unit);
    const clockField = inst.clock === 'cpu_time' ? 'cpu_time' : 'real_time';
    // The time of one iteration on the instance's clock: what rates are divided by, and the sample.
    const timeMs = read.number(run[clockField], `${at}.${clockField}`) * perUnit;
    inst.samplesMs.push(timeMs);
    if (inst.samplesMs.length === 1) {
      // Counters the user reports per iteration (Counter::kAvgIterations) by these names win;
      // else bytes from the library's rate: bytes_per_second × the time of one iteration.
      const flops = read.optionalNumber(run.flops, `${at}.flops`);
      const bytes = read.optionalNumber(run.bytes, `${at}.bytes`);
      const rate = read.optionalNumber(run.bytes_per_second, `${at}.bytes_per_second`);
      // A FLOP rate counter (Counter::kIsRate, "FLOPS"): the rate × the time of one iteration.
      const flopRate = read.optionalNumber(run.FLOPS, `${at}.FLOPS`);
      if (flops !== undefined) inst.flops = flops;
      else if (flopRate !== undefined) inst.flops = flopRate * timeMs * 1e-3;
      if (bytes !== undefined) inst.bytes = bytes;
      else if (rate !== undefined) inst.bytes = Math.round(rate * timeMs * 1e-3);
    }
  });
  return instances;
}

/** One case per instance: an error, a skip, or its samples and the work its counters give. */
function caseOf(inst: Instance, kernel: string): AdaptedCase {
  const base = {
    kernel,
    variant: inst.variant,
    case: adaptedCaseIdOf(inst.params),
    params: inst.params,
  };
  if (inst.error !== undefined) {
    return {
      result: {
        ...base,
        status: 'error',
        reason: inst.error,
        error: { kind: 'gbench', message: inst.error },
      },
    };
  }
  if (inst.skipped !== undefined) {
    return { result: { ...base, status: 'skipped', reason: inst.skipped } };
  }
  const clock = inst.clock === 'cpu_time' ? 'CPU time' : inst.clock.replace('_', ' ');
  const timing = timingFromSamples(
    inst.samplesMs,
    `gbench ${clock} per iteration (one sample per repetition)`,
  );
  return {
    result: { ...base, status: 'ok', timing },
    work: {
      ...(inst.flops !== undefined ? { flops: inst.flops } : {}),
      ...(inst.bytes !== undefined ? { bytes: inst.bytes } : {}),
      note: 'per iteration, from the benchmark counters',
    },
  };
}

/** What the library's context says: a warning when CPU scaling was on, the tool, the run. */
function fromContext(context: Record<string, unknown>, file: string, kernel: string) {
  const diagnostics: Diagnostic[] = [];
  if (context.cpu_scaling_enabled === true) {
    diagnostics.push({
      level: 'warning',
      code: 'adapter.gbench.cpu_scaling',
      message: `${file}: CPU frequency scaling was on while ${kernel} ran: its times move with the clock`,
      fix: 'set the CPU governor to performance on the benchmark machine',
      source: `kernel:${kernel}`,
      kernel,
    });
  }
  const version = typeof context.library_version === 'string' ? ` ${context.library_version}` : '';
  const build =
    typeof context.library_build_type === 'string'
      ? ` (library built as ${context.library_build_type})`
      : '';
  const startedAt = isoUtc(typeof context.date === 'string' ? context.date : undefined);
  return {
    tool: `Google Benchmark${version}${build}`,
    run: {
      ...(startedAt ? { started_at: startedAt } : {}),
      ...(typeof context.host_name === 'string' ? { host: context.host_name } : {}),
    },
    diagnostics,
  };
}

function parse({ text, file, kernel }: Parameters<FileAdapter['parse']>[0]): Adapted {
  const read = new JsonReader(file);
  const root = read.object(parseJson(text, file), 'the document');
  const context = read.object(root.context ?? {}, 'context');
  const runs = read.array(root.benchmarks, 'benchmarks');
  if (runs.length === 0) throw new EmptyOutputError(file);
  const instances = [...readInstances(read, runs).values()];
  const { tool, run, diagnostics } = fromContext(context, file, kernel);
  return {
    cases: instances.map((inst) => caseOf(inst, kernel)),
    variants: [...new Set(instances.map((inst) => inst.variant))],
    tool,
    // The GPU the program names in its context (AddCustomContext / --benchmark_context=gpu=…).
    environment: gpuEnvironment(gpuNamed(context.gpu ?? context.gpu_name)),
    run,
    diagnostics,
  };
}

export const gbenchAdapter: FileAdapter<'gbench'> = {
  kind: 'file',
  format: 'gbench',
  title: 'Google Benchmark JSON',
  produce: '`BIN --benchmark_format=json --benchmark_repetitions=10`',
  capabilities: {
    samples: 'raw',
    work: 'tool',
    correctness: 'none',
    paired: false,
    notes: {
      samples:
        "one per repetition (the mean time of one iteration in it, on the benchmark's clock: CPU, or real/manual time); aggregates (mean, median, stddev, cv) are not samples; without repetitions one sample, too few for an interval",
      work: 'user counters `flops` and `bytes` per iteration (`Counter::kAvgIterations`), else a `FLOPS` rate counter (`Counter::kIsRate`) × the time of one iteration, and bytes from `SetBytesProcessed` (bytes_per_second × the time of one iteration, exact)',
      correctness: 'none; `SkipWithError` is an ERROR case, `SkipWithMessage` SKIPPED',
    },
  },
  parse,
  // Its context (library_version, num_cpus) or a benchmark's run_name or time_unit.
  sniff: (root, first) =>
    (isObject(root.context) && ('library_version' in root.context || 'num_cpus' in root.context)) ||
    (isObject(first) && ('run_name' in first || 'time_unit' in first)),
  // Repetitions are one process's: Google Benchmark's unchanged benchmarks moved up to 1.55 %
  // between processes on the H100 (run 66, test/recorded-tools.test.ts; docs/adapters.md
  // "Thresholds by source").
  thresholdPct: 2,
};
