// From other tools' benchmarks to one results document: read a file a tool wrote (`kernelgate
// adapt`), or run kernelgate.yml's benchmarks (their commands, then their parsers; `kernelgate
// bench`), with the work formulas applied and what each tool gave recorded per kernel.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { InputError } from '../results/index.js';
import type {
  CaseResult,
  Diagnostic,
  Environment,
  KernelgateResults,
  KernelInfo,
} from '../results/index.js';
import { runCommands, shellRunner, type CommandRunner } from './command.js';
import { workOf, type BenchmarkConfig } from './config.js';
import { adapterFor, type Adapter } from './index.js';
import {
  kernelInfo,
  workFields,
  type Adapted,
  type AdaptedCase,
  type FileAdapter,
} from './types.js';

export const ADAPTERS_HARNESS = 'kernelgate adapters 0.1.0';

/** One kernel's worth of adapted cases, ready to merge into a results document. */
export interface AdaptedKernel {
  info: KernelInfo;
  cases: CaseResult[];
  environment?: Environment;
  run: Adapted['run'];
  diagnostics: Diagnostic[];
}

/**
 * The finishing step every adapter shares: kernelgate.yml's work formulas win over the tool's
 * numbers, and kernels[].adapter records what the tool actually gave.
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
    ...(adapted.environment ? { environment: adapted.environment } : {}),
    run: adapted.run,
    diagnostics: adapted.diagnostics,
  };
}

/** Reads one output file of a tool; `shown` names it in messages. */
export function adaptFile(
  adapter: FileAdapter,
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
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(
      code === 'ENOENT'
        ? `${shown}: no such file`
        : `${shown}: cannot read: ${(err as Error).message}`,
    );
  }
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

/**
 * Runs one configured benchmark: a file format's `run` command then its parser (a failing command
 * becomes an error case of the whole benchmark, not a thrown error), or the command adapter.
 */
export async function runBenchmark(
  bench: BenchmarkConfig,
  options: BenchOptions,
): Promise<AdaptedKernel> {
  const adapter = adapterFor(bench.format);
  if (!adapter) throw new InputError(`benchmarks: unknown format ${JSON.stringify(bench.format)}`);
  const common = {
    work: bench.work,
    references: bench.references,
    ...(bench.description !== undefined ? { description: bench.description } : {}),
  };
  const runner = options.runner ?? shellRunner;
  if (adapter.kind === 'command') {
    const spec = bench.command;
    if (!spec) throw new InputError(`benchmarks: ${bench.name} has no command settings`);
    const baseCwd =
      options.baseRoot === undefined ? undefined : resolve(options.baseRoot, bench.cwdRelative);
    const ran = await runCommands(
      bench.name,
      { ...spec, timeoutS: bench.timeoutS, workFor: (params) => workOf(bench.work, params) },
      {
        cwd: bench.cwd,
        ...(baseCwd !== undefined && existsSync(baseCwd) ? { baseCwd } : {}),
        runner,
        ...(options.log ? { log: options.log } : {}),
      },
    );
    return finishKernel(
      adapter,
      bench.name,
      { cases: ran.cases, variants: ran.variants, run: {}, diagnostics: [] },
      common,
    );
  }
  const output = bench.output as string;
  if (bench.run !== undefined) {
    options.log?.(`${bench.name}: ${bench.run}`);
    const out = await runner(bench.run, { cwd: bench.cwd, timeoutMs: bench.timeoutS * 1000 });
    if (out.timedOut || out.exitCode !== 0) {
      return failedBenchmark(
        adapter,
        bench,
        out.timedOut ? `exceeded ${bench.timeoutS} s` : `exit status ${String(out.exitCode)}`,
        out.output,
      );
    }
  }
  if (!existsSync(output)) {
    return failedBenchmark(adapter, bench, `it wrote no ${output}`, '');
  }
  return adaptFile(adapter, output, { kernel: bench.name, ...common });
}

/** A benchmark whose command failed: one error case, so the report and the gate see it. */
function failedBenchmark(
  adapter: Adapter,
  bench: BenchmarkConfig,
  why: string,
  output: string,
): AdaptedKernel {
  const message = `${bench.run ?? bench.format}: ${why}`;
  const logTail = output.trimEnd().split(/\r?\n/).slice(-20).join('\n');
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
          message: `benchmark ${bench.name}: ${message}`,
          fix: 'run the command by hand in its folder; kernelgate judges what it writes',
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
  },
): Promise<KernelgateResults> {
  const chosen = benchmarks.filter((b) => !options.only?.length || options.only.includes(b.name));
  const startedAt = new Date().toISOString();
  const kernels: AdaptedKernel[] = [];
  for (const bench of chosen) kernels.push(await runBenchmark(bench, options));
  const paired = kernels.some((k) => k.info.adapter?.paired);
  return resultsOf(kernels, {
    startedAt,
    ...(options.command !== undefined ? { command: options.command } : {}),
    ...(options.environment ? { environment: options.environment } : {}),
    ...(options.diagnostics ? { diagnostics: options.diagnostics } : {}),
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
