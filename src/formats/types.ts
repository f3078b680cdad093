// What an adapter is: one benchmark tool's output turned into kernelgate/results@1 cases, with
// what the tool can and cannot give declared up front (docs/adapters.md). Shared helpers that every
// parser uses to build cases, so each parser holds only what is particular to its format.
import type { CaseResult, Diagnostic, Environment, KernelInfo, Timing } from '../results/index.js';
import { InputError, showValue } from '../results/index.js';
import { quantileSorted, sortedCopy } from '../lib/index.js';

/**
 * What a tool can give, declared once per adapter and printed by `kernelgate adapt --formats`. The results
 * record what one run actually gave (kernels[].adapter).
 */
export interface AdapterCapabilities {
  /** raw: one time per sample; summary: statistics only; either: depends on the tool's options */
  samples: 'raw' | 'summary' | 'either';
  /** tool: read from the output when it carries it; config: only from kernelgate.yml's formulas */
  work: 'tool' | 'config';
  /** none: the tool does not check results; self_check: the benchmark's own check can be read */
  correctness: 'none' | 'self_check';
  /** the adapter can run the base revision's benchmark alternately with the head's */
  paired: boolean;
  /** what and how, for `kernelgate adapt --formats` (paired: where it is possible, how) */
  notes: { samples: string; work: string; correctness: string; paired?: string };
}

/** What to do when a side's samples are one run's rounds (docs/adapters.md, "Noise by source"). */
export const ONE_RUN_FIX =
  "read 5 or more runs' files of each side together (kernelgate adapt --input run1.json --input " +
  'run2.json …: one sample per run), or time base and head alternately as a command benchmark ' +
  '(paired A/B)';

/** FLOPs and bytes of one call as the tool reports them (either may be unknown). */
export interface WorkAmounts {
  flops?: number;
  bytes?: number;
  note?: string;
}

/** One case, and its work kept apart: kernelgate.yml's formulas may still override it. */
export interface AdaptedCase {
  result: CaseResult;
  work?: WorkAmounts;
}

/** What a parser made of one output file: the cases of one kernel, and what it learnt around them. */
export interface Adapted {
  cases: AdaptedCase[];
  /** variant names in the order the tool reported them */
  variants: string[];
  /** the tool and version as its output names them */
  tool?: string;
  /** the GPU (or its absence) and versions, where the output records them */
  environment?: Environment;
  run?: { started_at?: string; git_sha?: string; host?: string };
  diagnostics: Diagnostic[];
}

export interface ParseInput {
  /** the tool's output */
  text: string;
  /** its name as messages show it */
  file: string;
  /** the kernel the cases belong to (kernelgate.yml benchmarks[].name, or --kernel) */
  kernel: string;
  /** reads a file the output refers to (nvbench's binary sample files), relative to `file` */
  readSidecar?: (path: string) => Buffer;
}

/** An adapter that reads a file the tool wrote: a file format's entry in the list (index.ts). */
export interface FileAdapter<F extends string = string> {
  kind: 'file';
  /** as kernelgate.yml's benchmarks[].format and `kernelgate adapt --format` name it */
  format: F;
  title: string;
  /** how to make the tool write what this adapter reads (Markdown) */
  produce: string;
  capabilities: AdapterCapabilities;
  parse(input: ParseInput): Adapted;
  /**
   * Whether the tool's fields are there, in the JSON's root and its first benchmark: so a file of
   * another format's tool is refused by name (sniff.ts). None: such files are never recognised.
   */
  sniff?(root: Record<string, unknown>, first: unknown): boolean;
  /**
   * The default threshold (%) of its cases when their samples are one process's (src/judge/sources.ts
   * toolThresholdPct), as measured for the tool; none: compare.threshold_pct's default.
   */
  thresholdPct?: number;
  /**
   * Where its fixture under test/fixtures/adapters/<format>/ came from: the tool's version, the
   * machine and the command that wrote it (test/formats.test.ts asks for this, or a README there).
   */
  fixtureSource?: string;
}

/**
 * The command format's entry: data only. It parses no file; src/adapters/command.ts runs its
 * commands and reads their output.
 */
export interface CommandEntry<F extends string = string> {
  kind: 'command';
  format: F;
  title: string;
  produce: string;
  capabilities: AdapterCapabilities;
}

/** A JSON object (not an array, not null). */
export const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** "64" → 64, "true" → true; anything else stays text. */
export function scalarOf(text: string): string | number | boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  return text;
}

/** A full timing record from raw samples (ms), in the order they were taken. */
export function timingFromSamples(samplesMs: number[], method: string): Timing {
  const sorted = sortedCopy(samplesMs);
  const n = sorted.length;
  const mean = samplesMs.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? samplesMs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1) : 0;
  return {
    method,
    samples_ms: samplesMs,
    median_ms: quantileSorted(sorted, 0.5),
    q1_ms: quantileSorted(sorted, 0.25),
    q3_ms: quantileSorted(sorted, 0.75),
    min_ms: sorted[0] as number,
    mean_ms: mean,
    ...(mean > 0 ? { rel_std: Math.sqrt(variance) / mean } : {}),
    n_samples: n,
    stop_reason: 'max_samples',
  };
}

/** A timing record from a tool's statistics only: no samples, so no interval and no pairs. */
export function summaryTiming(summary: {
  method: string;
  medianMs: number;
  nSamples: number;
  q1Ms?: number;
  q3Ms?: number;
  minMs?: number;
  meanMs?: number;
  relStd?: number;
}): Timing {
  const ok = (x: number | undefined): x is number =>
    x !== undefined && Number.isFinite(x) && x >= 0;
  return {
    method: summary.method,
    samples_ms: [],
    median_ms: summary.medianMs,
    ...(ok(summary.q1Ms) ? { q1_ms: summary.q1Ms } : {}),
    ...(ok(summary.q3Ms) ? { q3_ms: summary.q3Ms } : {}),
    ...(ok(summary.minMs) ? { min_ms: summary.minMs } : {}),
    ...(ok(summary.meanMs) ? { mean_ms: summary.meanMs } : {}),
    ...(ok(summary.relStd) ? { rel_std: summary.relStd } : {}),
    n_samples: summary.nSamples,
    stop_reason: 'max_samples',
  };
}

/**
 * Work where the tool knows both FLOPs and bytes of one call; when it knows one, the rate goes in
 * `throughput` instead (a FLOP count of 0 would read as "no FLOPs", not "unknown").
 */
export function workFields(
  work: WorkAmounts,
  medianMs: number | undefined,
): Pick<CaseResult, 'work' | 'throughput'> {
  const { flops, bytes } = work;
  if (flops !== undefined && bytes !== undefined) {
    return { work: { flops, bytes, ...(work.note ? { note: work.note } : {}) } };
  }
  if (medianMs === undefined || !(medianMs > 0)) return {};
  const seconds = medianMs * 1e-3;
  if (flops !== undefined) return { throughput: { tflops: flops / seconds / 1e12 } };
  if (bytes !== undefined) return { throughput: { gbps: bytes / seconds / 1e9 } };
  return {};
}

/** The environment of a run with no GPU (CPU benchmarks). */
export function noGpuEnvironment(libraries: Record<string, string> = {}): Environment {
  return {
    gpu: { name: 'none', sku: 'none' },
    ...(Object.keys(libraries).length ? { libraries } : {}),
  };
}

/**
 * A GPU's name from a tool's own context: a string, or an object with a `name` (pytest-benchmark's
 * machine_info.gpu as a hook may set it). Undefined when the tool's output names none.
 */
export function gpuNamed(value: unknown): string | undefined {
  const name =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>).name
      : value;
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : undefined;
}

/**
 * The model of a GPU a tool's output names is not the parser's to derive: the GPU table is config's
 * (src/config/gpus.ts), above this folder. The adapters derive it from the name once the file is
 * parsed (src/adapters/run.ts finishKernel); until then it is `unknown`, as for a GPU the table
 * does not list.
 */
export const MODEL_NOT_DERIVED = 'unknown';

/**
 * The environment of a tool's run: the GPU its output names (its model MODEL_NOT_DERIVED until the
 * adapters derive it), else none named (`none`): the runner's GPU is then added where one is found
 * (src/cli/adapt.ts, the doctor's in `bench --doctor` and the action).
 */
export function gpuEnvironment(
  name: string | undefined,
  libraries: Record<string, string> = {},
): Environment {
  if (name === undefined) return noGpuEnvironment(libraries);
  return {
    gpu: { name, sku: MODEL_NOT_DERIVED },
    ...(Object.keys(libraries).length ? { libraries } : {}),
  };
}

/** A tool's output with no benchmark in it: "empty.json holds no benchmark". */
export class EmptyOutputError extends InputError {
  constructor(file: string) {
    super(`${file} holds no benchmark`);
  }
}

/** The kernels[] entry of an adapted kernel. */
export function kernelInfo(
  kernel: string,
  variants: string[],
  adapter: NonNullable<KernelInfo['adapter']>,
  references: readonly string[] = [],
  description?: string,
): KernelInfo {
  return {
    name: kernel,
    ...(description !== undefined ? { description } : {}),
    adapter,
    variants: variants.map((name) => ({
      name,
      role: references.includes(name) ? 'reference' : 'candidate',
    })),
  };
}

/**
 * Reading a tool's JSON: each accessor names the file, the field and the bad value when the output
 * is not what the format says, the way results and config errors do.
 */
export class JsonReader {
  constructor(readonly file: string) {}

  error(path: string, what: string, value: unknown): InputError {
    return new InputError(`${this.file}: ${path} ${what} (got ${showValue(value)})`);
  }

  object(value: unknown, path: string): Record<string, unknown> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw this.error(path, 'must be object', value);
    }
    return value as Record<string, unknown>;
  }

  array(value: unknown, path: string): unknown[] {
    if (!Array.isArray(value)) throw this.error(path, 'must be array', value);
    return value;
  }

  string(value: unknown, path: string): string {
    if (typeof value !== 'string') throw this.error(path, 'must be string', value);
    return value;
  }

  number(value: unknown, path: string): number {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw this.error(path, 'must be number', value);
    return value;
  }

  optionalNumber(value: unknown, path: string): number | undefined {
    return value === undefined || value === null ? undefined : this.number(value, path);
  }

  optionalString(value: unknown, path: string): string | undefined {
    return value === undefined || value === null ? undefined : this.string(value, path);
  }
}

/** ISO 8601 UTC from a tool's date, or undefined when it is not a date. */
export function isoUtc(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}
