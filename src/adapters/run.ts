// From other tools' benchmarks to one results document: read a file a tool wrote (`kernelgate
// adapt`), or run kernelgate.yml's benchmarks (their commands, then their parsers; `kernelgate
// bench`), with the work formulas applied and what each tool gave recorded per kernel.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { InputError, readInputFile } from '../results/index.js';
import type {
  CaseResult,
  Diagnostic,
  Environment,
  KernelgateResults,
  KernelInfo,
} from '../results/index.js';
import {
  exitReason,
  runCommands,
  shellRunner,
  type CommandOutput,
  type CommandRunner,
} from './command.js';
import { gpuModel, workOf, type BenchmarkConfig } from '../config/index.js';
import {
  type Adapter,
  adapterFor,
  EmptyOutputError,
  type FileFormat,
  kernelInfo,
  MODEL_NOT_DERIVED,
  refuseOtherFormat,
  workFields,
  type Adapted,
  type AdaptedCase,
  type FileAdapter,
} from '../formats/index.js';

export const ADAPTERS_HARNESS = 'kernelgate adapters 0.1.0';

/** One kernel's worth of adapted cases, ready to merge into a results document. */
export interface AdaptedKernel {
  info: KernelInfo;
  cases: CaseResult[];
  environment?: Environment;
  run: Adapted['run'];
  diagnostics: Diagnostic[];
  /** what the benchmark's commands printed, for the known-failure diagnosis (src/measure) */
  outputs?: CommandOutput[];
}

/** The model of the GPU a tool's output names, from the GPU table (src/config/gpus.ts). */
function withModel(environment: Environment): Environment {
  const { gpu } = environment;
  if (gpu.sku !== MODEL_NOT_DERIVED) return environment;
  return { ...environment, gpu: { ...gpu, sku: gpuModel(gpu.name) } };
}

/**
 * The finishing step every adapter shares: kernelgate.yml's work formulas win over the tool's
 * numbers, the GPU the output names gets its model, and kernels[].adapter records what the tool
 * actually gave.
 */
export function finishKernel(
  adapter: Adapter,
  kernel: string,
  adapted: Adapted,
  options: {
    work?: BenchmarkConfig['work'];
    references?: readonly string[];
    description?: string;
  } = {},
): AdaptedKernel {
  const cases = adapted.cases.map(({ result, work }: AdaptedCase) => {
    const fromConfig = options.work ? workOf(options.work, result.params) : {};
    const amounts = { ...work, ...fromConfig };
    if (fromConfig.flops !== undefined || fromConfig.bytes !== undefined) {
      amounts.note =
        fromConfig.flops !== undefined && fromConfig.bytes !== undefined
          ? "kernelgate.yml's work formulas"
          : `${work?.note ?? 'from the tool'}; kernelgate.yml's work formulas for ${fromConfig.flops !== undefined ? 'flops' : 'bytes'}`;
    }
    if (result.status !== 'ok' || !result.timing) return result;
    return { ...result, ...workFields(amounts, result.timing.median_ms) };
  });
  const timed = cases.filter((c) => c.status === 'ok' && c.timing);
  const withSamples = timed.filter((c) => (c.timing?.samples_ms.length ?? 0) > 0).length;
  const samples =
    timed.length === 0
      ? adapter.capabilities.samples === 'summary'
        ? 'summary'
        : 'raw'
      : withSamples === timed.length
        ? 'raw'
        : withSamples === 0
          ? 'summary'
          : 'mixed';
  const info = kernelInfo(
    kernel,
    adapted.variants,
    {
      format: adapter.format,
      ...(adapted.tool !== undefined ? { tool: adapted.tool } : {}),
      samples,
      work: cases.some((c) => c.work !== undefined || c.throughput !== undefined),
      correctness: cases.some((c) => c.correctness !== undefined) ? 'self_check' : 'none',
      paired: cases.some((c) => c.paired !== undefined),
    },
    options.references,
    options.description,
  );
  return {
    info,
    cases,
    ...(adapted.environment ? { environment: withModel(adapted.environment) } : {}),
    run: adapted.run,
    diagnostics: adapted.diagnostics,
  };
}

/** Reads one output file of a tool; `shown` names it in messages. */
export function adaptFile(
  adapter: FileAdapter<FileFormat>,
  path: string,
  options: {
    kernel: string;
    shown?: string;
    work?: BenchmarkConfig['work'];
    references?: readonly string[];
    description?: string;
  },
): AdaptedKernel {
  const shown = options.shown ?? path;
  const text = readInputFile(path, shown);
  refuseOtherFormat(adapter.format, text, shown);
  const adapted = adapter.parse({
    text,
    file: shown,
    kernel: options.kernel,
    readSidecar: (rel) => readFileSync(isAbsolute(rel) ? rel : join(dirname(path), rel)),
  });
  return finishKernel(adapter, options.kernel, adapted, options);
}

/** GPU facts: the doctor's when given, else the first tool's that names a GPU, else none. */
function environmentOf(kernels: AdaptedKernel[], given: Environment | undefined): Environment {
  if (given) return given;
  const envs = kernels.map((k) => k.environment).filter((e): e is Environment => e !== undefined);
  const gpu = envs.find((e) => !['none', 'unknown'].includes(e.gpu.name));
  return gpu ?? envs[0] ?? { gpu: { name: 'unknown', sku: 'unknown' } };
}

/** Merges adapted kernels into one kernelgate/results@1 document. */
export function resultsOf(
  kernels: AdaptedKernel[],
  options: {
    startedAt?: string;
    command?: string;
    id?: string;
    gitSha?: string;
    gitRef?: string;
    environment?: Environment;
    diagnostics?: Diagnostic[];
    pairedBase?: NonNullable<KernelgateResults['run']['paired_base']>;
  } = {},
): KernelgateResults {
  const starts = kernels.map((k) => k.run?.started_at).filter((s): s is string => s !== undefined);
  const startedAt = options.startedAt ?? starts.sort()[0] ?? new Date().toISOString();
  const gitSha = options.gitSha ?? kernels.find((k) => k.run?.git_sha)?.run?.git_sha;
  const host = kernels.find((k) => k.run?.host)?.run?.host;
  const formats = [...new Set(kernels.map((k) => k.info.adapter?.format ?? ''))].join(', ');
  return {
    schema: 'kernelgate/results@1',
    run: {
      ...(options.id !== undefined ? { id: options.id } : {}),
      started_at: startedAt,
      harness: `${ADAPTERS_HARNESS} (${formats})`,
      // Other tools' cases only: no kernel of kernels_dir is measured (src/judge/coverage.ts).
      selection: { kernels: [], ci: false },
      ...(options.command !== undefined ? { command: options.command } : {}),
      ...(gitSha !== undefined ? { git_sha: gitSha } : {}),
      ...(options.gitRef !== undefined ? { git_ref: options.gitRef } : {}),
      ...(host !== undefined ? { host } : {}),
      ...(options.pairedBase ? { paired_base: options.pairedBase } : {}),
    },
    environment: environmentOf(kernels, options.environment),
    diagnostics: [...(options.diagnostics ?? []), ...kernels.flatMap((k) => k.diagnostics)],
    kernels: kernels.map((k) => k.info),
    cases: kernels.flatMap((k) => k.cases),
  };
}

export interface BenchOptions {
  /** the repository root */
  root: string;
  /** a base revision's checkout: command benchmarks run there too, alternately (paired A/B) */
  baseRoot?: string;
  runner?: CommandRunner;
  log?: (line: string) => void;
}

/** The last lines of a command's output, as error cases and diagnostics quote them. */
const TAIL_LINES = 20;

function lastLines(output: string): string {
  return output.trimEnd().split(/\r?\n/).slice(-TAIL_LINES).join('\n');
}

/** Where a benchmark's commands run, as messages show it (relative to the repository). */
function whereShown(bench: BenchmarkConfig): string {
  return bench.cwdRelative === '.' ? 'the repository root' : bench.cwdRelative;
}

/**
 * The command adapter: the benchmark's commands, N runs per case (with a base checkout that has
 * the benchmark's folder, head and base alternately); a case whose command failed also becomes a
 * diagnostic naming the benchmark, the command and its last lines.
 */
async function runCommandBenchmark(
  adapter: Adapter,
  bench: BenchmarkConfig,
  options: BenchOptions,
  common: Parameters<typeof finishKernel>[3],
): Promise<AdaptedKernel> {
  const spec = bench.command;
  if (!spec) throw new InputError(`benchmarks: ${bench.name} has no command settings`);
  const baseCwd =
    options.baseRoot === undefined ? undefined : resolve(options.baseRoot, bench.cwdRelative);
  const paired = baseCwd !== undefined && existsSync(baseCwd);
  if (baseCwd !== undefined && !paired) {
    options.log?.(
      `${bench.name}: not paired: the base revision has no ${bench.cwdRelative} (its commands run in the head only)`,
    );
  }
  const ran = await runCommands(
    bench.name,
    { ...spec, timeoutS: bench.timeoutS, workFor: (params) => workOf(bench.work, params) },
    {
      cwd: bench.cwd,
      root: options.root,
      ...(paired ? { baseCwd, baseRoot: options.baseRoot } : {}),
      runner: options.runner ?? shellRunner,
      ...(options.log ? { log: options.log } : {}),
    },
  );
  const diagnostics = ran.cases
    .map((c) => c.result)
    .filter((c) => c.status === 'error' || c.status === 'timeout')
    .map((c): Diagnostic => ({
      level: 'error',
      code: 'adapter.command_failed',
      message:
        `benchmark ${bench.name} (${c.variant} ${c.case}, in ${whereShown(bench)}): ${c.reason ?? c.status}` +
        (c.error?.log_tail ? `. Last lines:\n${c.error.log_tail}` : '. It printed nothing.'),
      fix: `run the command by hand in ${whereShown(bench)}; metric must match what it prints`,
      source: `kernel:${bench.name}`,
      kernel: bench.name,
      variant: c.variant,
    }));
  return {
    ...finishKernel(
      adapter,
      bench.name,
      { cases: ran.cases, variants: ran.variants, run: {}, diagnostics },
      common,
    ),
    outputs: ran.outputs,
  };
}

/**
 * Runs one configured benchmark: a file format's `run` command then its parser, or the command
 * adapter. A command that fails or times out, an output that is missing, cannot be parsed or holds
 * no case becomes an error case of the whole benchmark (and a diagnostic with the command and its
 * last lines), never a thrown error and never a silent pass.
 */
export async function runBenchmark(
  bench: BenchmarkConfig,
  options: BenchOptions,
): Promise<AdaptedKernel> {
  const adapter = adapterFor(bench.format);
  const common = {
    work: bench.work,
    references: bench.references,
    ...(bench.description !== undefined ? { description: bench.description } : {}),
  };
  if (adapter.kind === 'command') return runCommandBenchmark(adapter, bench, options, common);
  const runner = options.runner ?? shellRunner;
  const output = bench.output as string;
  let printed = '';
  if (bench.run !== undefined) {
    options.log?.(`${bench.name}: ${bench.run}`);
    const out = await runner(bench.run, { cwd: bench.cwd, timeoutMs: bench.timeoutS * 1000 });
    printed = out.output;
    if (out.timedOut || out.exitCode !== 0) {
      return failedBenchmark(
        adapter,
        bench,
        out.timedOut ? `exceeded ${bench.timeoutS} s` : exitReason(out),
        out.output,
      );
    }
  }
  const shown = relativeShown(options.root, output);
  if (!existsSync(output)) {
    const why =
      bench.run !== undefined
        ? `it wrote no ${shown}`
        : `there is no ${shown} (no run command: an earlier step must write it)`;
    return failedBenchmark(adapter, bench, why, printed);
  }
  let adapted: AdaptedKernel;
  try {
    adapted = adaptFile(adapter, output, { kernel: bench.name, shown, ...common });
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    // An empty output is the tool's own, and says so; anything else is not the tool's format.
    const why =
      error instanceof EmptyOutputError
        ? error.message
        : `its output is not ${adapter.title}: ${error.message}`;
    return failedBenchmark(adapter, bench, why, printed);
  }
  if (adapted.cases.length === 0) {
    return failedBenchmark(adapter, bench, `${shown} holds no benchmark`, printed);
  }
  const text = lastLines(printed);
  return text ? { ...adapted, outputs: [{ variant: bench.format, case: 'run', text }] } : adapted;
}

/** A path inside the repository as messages show it; others as they are. */
function relativeShown(root: string, path: string): string {
  const rel = relative(root, path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? path : rel;
}

/** A benchmark whose command failed: one error case, so the report and the gate see it. */
function failedBenchmark(
  adapter: Adapter,
  bench: BenchmarkConfig,
  why: string,
  output: string,
): AdaptedKernel {
  const message = bench.run !== undefined ? `${bench.run}: ${why}` : why;
  const logTail = lastLines(output);
  return finishKernel(
    adapter,
    bench.name,
    {
      cases: [
        {
          result: {
            kernel: bench.name,
            variant: bench.format,
            case: 'run',
            params: {},
            status: 'error',
            reason: message,
            error: {
              kind: 'benchmark command',
              message,
              ...(logTail ? { log_tail: logTail } : {}),
            },
          },
        },
      ],
      variants: [bench.format],
      run: {},
      diagnostics: [
        {
          level: 'error',
          code: 'adapter.run_failed',
          message:
            `benchmark ${bench.name} (in ${whereShown(bench)}): ${message}` +
            (logTail ? `. Last lines:\n${logTail}` : ''),
          fix: `run the command by hand in ${whereShown(bench)}; kernelgate judges what it writes`,
          source: `kernel:${bench.name}`,
          kernel: bench.name,
        },
      ],
    },
    { references: bench.references },
  );
}

/** Runs every configured benchmark (or those named in `only`) into one results document. */
export async function runBenchmarks(
  benchmarks: readonly BenchmarkConfig[],
  options: BenchOptions & {
    only?: string[];
    command?: string;
    environment?: Environment;
    diagnostics?: Diagnostic[];
    gitSha?: string;
    baseSha?: string;
    /** what else to say about the benchmarks once they ran (the doctor's checks, src/measure) */
    findings?: (ran: AdaptedKernel[], chosen: BenchmarkConfig[]) => Promise<Diagnostic[]>;
  },
): Promise<KernelgateResults> {
  const chosen = benchmarks.filter((b) => !options.only?.length || options.only.includes(b.name));
  const startedAt = new Date().toISOString();
  const kernels: AdaptedKernel[] = [];
  for (const bench of chosen) kernels.push(await runBenchmark(bench, options));
  const paired = kernels.some((k) => k.info.adapter?.paired);
  const findings = options.findings ? await options.findings(kernels, chosen) : [];
  const diagnostics = [...(options.diagnostics ?? []), ...findings];
  return resultsOf(kernels, {
    startedAt,
    ...(options.command !== undefined ? { command: options.command } : {}),
    ...(options.environment ? { environment: options.environment } : {}),
    ...(diagnostics.length ? { diagnostics } : {}),
    ...(options.gitSha !== undefined ? { gitSha: options.gitSha } : {}),
    ...(paired && options.baseRoot !== undefined
      ? {
          pairedBase: {
            root: options.baseRoot,
            ...(options.baseSha !== undefined ? { git_sha: options.baseSha } : {}),
            order: 'ABBA',
          },
        }
      : {}),
  });
}
