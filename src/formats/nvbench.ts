// NVIDIA nvbench's JSON (`--json FILE`, or `--jsonbin FILE` to keep the samples): one variant per
// benchmark, one case per state (a combination of its axes' values). A state's timing is its cold
// GPU time (isolated launches, CUDA events): the raw samples when `--jsonbin` wrote them beside the
// JSON (little-endian float32 seconds), else nvbench's summaries with its own noise estimate.
import type { CaseResult, Diagnostic, Environment } from '../results/index.js';
import { InputError, parseJson } from '../results/index.js';
import {
  JsonReader,
  isObject,
  MODEL_NOT_DERIVED,
  scalarOf,
  summaryTiming,
  timingFromSamples,
  type Adapted,
  type AdaptedCase,
  type FileAdapter,
} from './types.js';
import { adaptedCaseIdOf, type Params } from './case-id.js';

/** The value of a typed named value ({name, type, value}): nvbench writes numbers as text. */
function namedValue(entry: Record<string, unknown>): string | number | undefined {
  const value = entry.value;
  if (entry.type === 'int64' || entry.type === 'float64') {
    if (typeof value === 'number') return value;
    if (typeof value !== 'string') return undefined;
    const n = Number(value);
    // "inf": nvbench's sentinel for a noise it could not estimate (too few samples).
    return Number.isFinite(n) ? n : undefined;
  }
  return typeof value === 'string' ? value : undefined;
}

interface Summary {
  tag: string;
  values: Map<string, string | number | undefined>;
}

/** A number of the summaries: `name` (default `value`) of the summary tagged `tag`. */
function numberIn(summaries: Summary[], tag: string, name = 'value'): number | undefined {
  const v = summaries.find((x) => x.tag === tag)?.values.get(name);
  return typeof v === 'number' ? v : undefined;
}

/** Time summaries by measurement: cold GPU first (what nvbench reports), CPU-only benchmarks next. */
const TIMERS = [
  { prefix: 'nv/cold', time: 'nv/cold/time/gpu', what: 'cold GPU time (CUDA events)' },
  { prefix: 'nv/cpu_only', time: 'nv/cpu_only/time/cpu', what: 'CPU-only time' },
] as const;

/** A state's case parameters: its axes' values. */
function paramsOf(read: JsonReader, state: Record<string, unknown>, sat: string): Params {
  const params: Params = {};
  const axes =
    state.axis_values === null ? [] : read.array(state.axis_values ?? [], `${sat}.axis_values`);
  axes.forEach((axisValue, a) => {
    const axis = read.object(axisValue, `${sat}.axis_values[${a}]`);
    const name = read.string(axis.name, `${sat}.axis_values[${a}].name`);
    const v = namedValue(axis);
    if (v === undefined)
      throw read.error(`${sat}.axis_values[${a}].value`, 'must be a value', axis.value);
    params[name] = typeof v === 'string' ? scalarOf(v) : v;
  });
  return params;
}

/** A state's summaries: each its tag and its named values. */
function summariesOf(read: JsonReader, state: Record<string, unknown>, sat: string): Summary[] {
  const list =
    state.summaries === null ? [] : read.array(state.summaries ?? [], `${sat}.summaries`);
  return list.map((sv, k) => {
    const summ = read.object(sv, `${sat}.summaries[${k}]`);
    const values = new Map<string, string | number | undefined>();
    const data =
      summ.data === undefined ? [] : read.array(summ.data, `${sat}.summaries[${k}].data`);
    data.forEach((d, j) => {
      const entry = read.object(d, `${sat}.summaries[${k}].data[${j}]`);
      values.set(
        read.string(entry.name, `${sat}.summaries[${k}].data[${j}].name`),
        namedValue(entry),
      );
    });
    return { tag: read.string(summ.tag, `${sat}.summaries[${k}].tag`), values };
  });
}

/** What reading one state needs besides the state: its kernel, variant, sample files, findings. */
interface StateContext {
  file: string;
  kernel: string;
  variant: string;
  readSidecar: ((path: string) => Buffer) | undefined;
  diagnostics: Diagnostic[];
}

/** A timed state's timing: its samples when nvbench wrote them, else its summaries. */
function timingOf(
  summaries: Summary[],
  timer: (typeof TIMERS)[number],
  sat: string,
  ctx: StateContext,
): { timing: NonNullable<CaseResult['timing']>; summaryOnly: boolean } {
  const get = (tag: string) => numberIn(summaries, tag);
  const meanS = get(`${timer.time}/mean`) as number;
  const samplesFile = summaries.find((x) => x.tag === `nv/json/bin:${timer.prefix}/sample_times`);
  const samplesMs = samplesFile ? readSamples(samplesFile, sat, ctx) : undefined;
  if (samplesMs !== undefined && samplesMs.length > 0) {
    const timing = timingFromSamples(samplesMs, `nvbench ${timer.what}, one sample per launch`);
    return { timing, summaryOnly: false };
  }
  const median = get(`${timer.time}/median`);
  // Older nvbench (0.1) writes the mean and the relative standard deviation only.
  const timing = summaryTiming({
    method:
      median !== undefined
        ? `nvbench ${timer.what}, summary only`
        : `nvbench ${timer.what}, summary only (median_ms is nvbench's mean: it reports no median)`,
    medianMs: (median ?? meanS) * 1e3,
    nSamples: get(`${timer.prefix}/sample_size`) ?? 0,
    q1Ms: mul(get(`${timer.time}/q1`), 1e3),
    q3Ms: mul(get(`${timer.time}/q3`), 1e3),
    minMs: mul(get(`${timer.time}/min`), 1e3),
    meanMs: meanS * 1e3,
    relStd: get(`${timer.time}/stdev/relative`),
  });
  return { timing, summaryOnly: true };
}

/** One state's case: skipped, untimed (an error), or timed, with the bytes of one launch. */
function caseOfState(
  read: JsonReader,
  state: Record<string, unknown>,
  sat: string,
  ctx: StateContext,
): { adapted: AdaptedCase; summaryOnly: boolean } {
  const params = paramsOf(read, state, sat);
  const base = { kernel: ctx.kernel, variant: ctx.variant, case: adaptedCaseIdOf(params), params };
  if (state.is_skipped === true) {
    const reason = typeof state.skip_reason === 'string' ? state.skip_reason : 'skipped by nvbench';
    return { adapted: { result: { ...base, status: 'skipped', reason } }, summaryOnly: false };
  }
  const summaries = summariesOf(read, state, sat);
  const get = (tag: string) => numberIn(summaries, tag);
  const timer = TIMERS.find((t) => get(`${t.time}/mean`) !== undefined);
  if (timer === undefined) {
    const result: CaseResult = {
      ...base,
      status: 'error',
      reason: 'nvbench recorded no time for this state (timed out, or every sample discarded)',
      error: { kind: 'nvbench', message: 'no time summary in the state' },
    };
    return { adapted: { result }, summaryOnly: false };
  }
  const { timing, summaryOnly } = timingOf(summaries, timer, sat, ctx);
  // nvbench's bandwidth is bytes / mean time: the bytes of one launch come back exactly.
  const bw = get(`${timer.prefix}/bw/global/bytes_per_second`);
  const meanS = get(`${timer.time}/mean`) as number;
  const bytes = bw === undefined ? undefined : Math.round(bw * meanS);
  const adapted: AdaptedCase = {
    result: { ...base, status: 'ok', timing },
    work: {
      ...(bytes !== undefined ? { bytes } : {}),
      note: 'bytes from nvbench global memory reads and writes',
    },
  };
  return { adapted, summaryOnly };
}

/** The run's own findings: states of other GPUs left out, states with summaries only. */
function runDiagnostics(
  file: string,
  kernel: string,
  { dropped, device, summaryOnly }: { dropped: number; device?: number; summaryOnly: number },
): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  if (dropped > 0) {
    diagnostics.push({
      level: 'warning',
      code: 'adapter.nvbench.other_devices',
      message: `${file}: nvbench ran on several GPUs; kernelgate judges one per results document, so the ${dropped} state(s) of devices other than ${String(device)} were left out`,
      fix: 'run the benchmark with --devices N, one results document per GPU',
      source: `kernel:${kernel}`,
      kernel,
    });
  }
  if (summaryOnly > 0) {
    diagnostics.push({
      level: 'info',
      code: 'adapter.nvbench.no_samples',
      message: `${file}: ${summaryOnly} state(s) carry nvbench's summaries only: they get no interval and no paired verdict`,
      fix: 'run the benchmark with --jsonbin FILE instead of --json FILE: the samples go beside the JSON',
      source: `kernel:${kernel}`,
      kernel,
    });
  }
  return diagnostics;
}

/** "nvbench 0.1.0", from meta.version.nvbench.string when nvbench wrote it. */
function toolOf(read: JsonReader, root: Record<string, unknown>): string {
  const meta = root.meta === undefined ? {} : read.object(root.meta, 'meta');
  const version = meta.version === undefined ? {} : read.object(meta.version, 'meta.version');
  const nv =
    version.nvbench === undefined ? {} : read.object(version.nvbench, 'meta.version.nvbench');
  return typeof nv.string === 'string' ? `nvbench ${nv.string}` : 'nvbench';
}

function parse({ text, file, kernel, readSidecar }: Parameters<FileAdapter['parse']>[0]): Adapted {
  const read = new JsonReader(file);
  const root = read.object(parseJson(text, file), 'the document');
  const devices = root.devices === undefined ? [] : read.array(root.devices, 'devices');
  const benches = read.array(root.benchmarks, 'benchmarks');
  const diagnostics: Diagnostic[] = [];
  const cases: AdaptedCase[] = [];
  const variants: string[] = [];

  // One results document describes one GPU: states of the first device seen are kept.
  let device: number | undefined;
  let dropped = 0;
  let summaryOnly = 0;

  benches.forEach((value, b) => {
    const at = `benchmarks[${b}]`;
    const bench = read.object(value, at);
    const variant = read.string(bench.name, `${at}.name`);
    const states = bench.states === null ? [] : read.array(bench.states, `${at}.states`);
    states.forEach((stateValue, s) => {
      const sat = `${at}.states[${s}]`;
      const state = read.object(stateValue, sat);
      const stateDevice = read.optionalNumber(state.device, `${sat}.device`) ?? 0;
      device ??= stateDevice;
      if (stateDevice !== device) {
        dropped++;
        return;
      }
      if (!variants.includes(variant)) variants.push(variant);
      const one = caseOfState(read, state, sat, {
        file,
        kernel,
        variant,
        readSidecar,
        diagnostics,
      });
      cases.push(one.adapted);
      if (one.summaryOnly) summaryOnly++;
    });
  });

  diagnostics.push(...runDiagnostics(file, kernel, { dropped, device, summaryOnly }));
  return {
    cases,
    variants,
    tool: toolOf(read, root),
    ...(device !== undefined ? { environment: environmentOf(devices, device, read) } : {}),
    run: {},
    diagnostics,
  };
}

function mul(x: number | undefined, k: number): number | undefined {
  return x === undefined ? undefined : x * k;
}

function readSamples(
  summary: Summary,
  at: string,
  { file, kernel, readSidecar, diagnostics }: StateContext,
): number[] | undefined {
  const filename = summary.values.get('filename');
  if (typeof filename !== 'string' || readSidecar === undefined) return undefined;
  let bytes: Buffer;
  try {
    bytes = readSidecar(filename);
  } catch (err) {
    diagnostics.push({
      level: 'warning',
      code: 'adapter.nvbench.samples_unreadable',
      message: `${at}: its sample file ${filename} cannot be read (${(err as Error).message}): judged from the summaries`,
      fix: 'keep the folder nvbench wrote beside the JSON (FILE-bin/) with it',
      source: `kernel:${kernel}`,
      kernel,
    });
    return undefined;
  }
  const n = Math.floor(bytes.length / 4);
  const size = summary.values.get('size');
  if (typeof size === 'number' && (size !== n || bytes.length % 4 !== 0)) {
    throw new InputError(
      `${file}: ${at}: its sample file ${filename} holds ${n} samples (${bytes.length} bytes), but the JSON says ${size} (size): the file is truncated or belongs to another run`,
    );
  }
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(bytes.readFloatLE(i * 4) * 1e3);
  return samples;
}

function environmentOf(devices: unknown[], id: number, read: JsonReader): Environment {
  const found = devices.map((d, i) => read.object(d, `devices[${i}]`)).find((d) => d.id === id);
  if (!found) return { gpu: { name: `device ${id}` } };
  const name = read.string(found.name, 'devices[].name');
  const sm = typeof found.sm_version === 'number' ? found.sm_version : undefined;
  const int = (x: unknown) =>
    typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : undefined;
  const gpu: Environment['gpu'] = { name, sku: MODEL_NOT_DERIVED, count: devices.length };
  if (sm !== undefined)
    gpu.compute_capability = `${Math.floor(sm / 100)}.${Math.floor((sm % 100) / 10)}`;
  const smCount = int(found.number_of_sms);
  if (smCount !== undefined) gpu.sm_count = smCount;
  const memory = int(found.global_memory_size);
  if (memory !== undefined) gpu.memory_bytes = memory;
  const l2 = int(found.l2_cache_size);
  if (l2 !== undefined) gpu.l2_bytes = l2;
  return { gpu };
}

export const nvbenchAdapter: FileAdapter<'nvbench'> = {
  kind: 'file',
  format: 'nvbench',
  title: 'nvbench JSON',
  produce: '`BIN --jsonbin FILE` (samples) or `--json FILE` (summaries)',
  capabilities: {
    samples: 'either',
    work: 'tool',
    correctness: 'none',
    paired: false,
    notes: {
      samples:
        "with `--jsonbin` every cold launch (the float32 files beside the JSON); with `--json` nvbench's summaries (median and quartiles where the version writes them, else the mean) and its noise (relative standard deviation)",
      work: 'bytes from `add_global_memory_reads/writes` (bandwidth × mean time, exact); FLOPs only from `work.flops`',
      correctness: "none; a skipped state is SKIPPED with nvbench's reason",
    },
  },
  parse,
  // meta.version.nvbench, or a benchmark's states.
  sniff: (root, first) =>
    (isObject(root.meta) && isObject(root.meta.version) && 'nvbench' in root.meta.version) ||
    (isObject(first) && Array.isArray(first.states)),
  // Launches are one process's: nvbench's unchanged benchmarks moved at most 0.14 % between
  // processes on the H100 (interval ends within ±0.20 %; run 66, test/recorded-tools.test.ts;
  // docs/adapters.md "Thresholds by source").
  thresholdPct: 1,
};
