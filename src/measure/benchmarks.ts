// The benchmarks stage of a measuring run (docs/adapters.md): after the harness, in the same job,
// kernelgate.yml's `benchmarks:` (other tools' programs) run, each adapter's command with its
// repetitions; with the pull request's base revision checked out, a command benchmark runs the
// base's and the head's command alternately (ABBA, paired A/B). Their cases join the harness's in
// the one results document, so the report, the comment and the gate show them beside the kernel
// set; the doctor's checks of their binaries and rates follow (doctor/checks-benchmarks.ts).
import { join, relative } from 'node:path';
import {
  ADAPTERS_HARNESS,
  runBenchmark,
  type AdaptedKernel,
  type CommandRunner,
} from '../adapters/index.js';
import type { BenchmarkConfig, Config } from '../config/index.js';
import type { Exec } from '../lib/index.js';
import type { Diagnostic, Environment, KernelgateResults } from '../results/index.js';
import type { BaseRevision } from './base-revision.js';
import { diagnoseOutput } from './diagnose.js';
import { benchmarkBinaryChecks, slowPathChecks } from './doctor/index.js';
import type { ProgressLog } from './harness.js';

export interface BenchmarkStageOptions {
  config: Config;
  /** the repository being judged: the base revision's checkout mirrors it */
  workspace: string;
  /** names to run (the action's kernels input); default every benchmark */
  only?: string[];
  /** the pull request's base revision: command benchmarks run there too, alternately */
  base?: BaseRevision;
  /** the doctor's environment: the driver's CUDA that binaries are checked against */
  environment: Environment;
  /** a shard of a split run runs no benchmarks (they would repeat in every shard) */
  shard?: boolean;
}

export interface BenchmarkDeps {
  exec: Exec;
  log: ProgressLog;
  /** runs the benchmarks' command lines; default bash in their folder (src/adapters/command.ts) */
  commandRunner?: CommandRunner;
  now?: () => number;
}

export interface BenchmarkStage {
  kernels: AdaptedKernel[];
  diagnostics: Diagnostic[];
  /** the base checkout's root the command benchmarks were paired against, if any */
  pairedRoot?: string;
  /** wall seconds of the stage; undefined when there was nothing to run */
  seconds?: number;
}

/** The configured benchmarks the run selects (all of them without `only`). */
export function selectedBenchmarks(config: Config, only?: string[]): BenchmarkConfig[] {
  return config.benchmarks.filter((b) => !only?.length || only.includes(b.name));
}

function summary(kernel: AdaptedKernel, seconds: number): string {
  const count = (s: string) => kernel.cases.filter((c) => c.status === s).length;
  const parts = [`${count('ok')} ok`];
  for (const s of ['fail', 'error', 'timeout', 'skipped'])
    if (count(s)) parts.push(`${count(s)} ${s}`);
  const paired = kernel.cases.filter((c) => c.paired?.base_status === 'ok').length;
  if (paired) parts.push(`${paired} paired with the base revision`);
  return `benchmark ${kernel.info.name}: ${kernel.cases.length} case(s): ${parts.join(', ')} (${seconds.toFixed(1)} s)`;
}

/**
 * Runs the selected benchmarks one after another, a progress line per command run and a summary
 * per benchmark; never throws for a benchmark that fails (it is an error case of its own).
 */
export async function runBenchmarkStage(
  options: BenchmarkStageOptions,
  deps: BenchmarkDeps,
): Promise<BenchmarkStage> {
  const benchmarks = selectedBenchmarks(options.config, options.only);
  if (benchmarks.length === 0) return { kernels: [], diagnostics: [] };
  if (options.shard) {
    const message = `kernelgate.yml's ${benchmarks.length} benchmark(s) (${benchmarks.map((b) => b.name).join(', ')}) are not run in a shard of a split run: each shard would repeat them.`;
    deps.log.info(message);
    return {
      kernels: [],
      diagnostics: [
        {
          level: 'warning',
          code: 'benchmarks.not_in_shard',
          message,
          fix: 'Run them in a job of their own (`kernelgate bench`, then the action with results:), or unsplit.',
          source: 'harness',
        },
      ],
    };
  }
  const now = deps.now ?? Date.now;
  const started = now();
  deps.log.startGroup('kernelgate benchmarks');
  try {
    const stage = await runEach(benchmarks, options, deps);
    return { ...stage, seconds: (now() - started) / 1000 };
  } finally {
    deps.log.endGroup();
  }
}

/** Each benchmark in turn, then the doctor's checks of their binaries. */
async function runEach(
  benchmarks: BenchmarkConfig[],
  options: BenchmarkStageOptions,
  deps: BenchmarkDeps,
): Promise<BenchmarkStage> {
  const { config, base } = options;
  const now = deps.now ?? Date.now;
  // The base checkout mirrors the workspace: kernelgate.yml's folder sits at the same place in it.
  const baseRoot = base ? join(base.root, relative(options.workspace, config.rootDir)) : undefined;
  const kernels: AdaptedKernel[] = [];
  for (const bench of benchmarks) {
    deps.log.info(
      `benchmark ${bench.name} (${bench.format})${bench.command && baseRoot ? ': head and base revision alternately (ABBA)' : ''}`,
    );
    const t = now();
    const kernel = await runBenchmark(bench, {
      root: config.rootDir,
      ...(baseRoot !== undefined ? { baseRoot } : {}),
      ...(deps.commandRunner ? { runner: deps.commandRunner } : {}),
      log: (line) => deps.log.info(`  ${line}`),
    });
    deps.log.info(summary(kernel, (now() - t) / 1000));
    kernels.push(kernel);
  }
  const diagnostics = await benchmarkFindings(
    kernels,
    benchmarks,
    options.environment,
    config.rootDir,
    deps.exec,
  );
  const paired = kernels.some((k) => k.cases.some((c) => c.paired !== undefined));
  return { kernels, diagnostics, ...(paired && baseRoot ? { pairedRoot: baseRoot } : {}) };
}

/**
 * What the doctor finds in benchmarks that ran: known CUDA failures in what they printed, and
 * binaries whose CUDA runtime is newer than the driver's (`kernelgate bench` calls it too).
 */
export async function benchmarkFindings(
  kernels: AdaptedKernel[],
  benchmarks: readonly BenchmarkConfig[],
  environment: Environment,
  root: string,
  exec: Exec,
): Promise<Diagnostic[]> {
  return [
    ...knownFailures(kernels),
    ...(await benchmarkBinaryChecks(benchmarks, environment, root, exec)),
  ];
}

/**
 * Known CUDA failures in what the benchmarks printed, once per benchmark, variant and cause: a run
 * that printed a number may still have printed why the number is wrong.
 */
function knownFailures(kernels: AdaptedKernel[]): Diagnostic[] {
  const found: Diagnostic[] = [];
  for (const k of kernels) {
    const texts = [
      ...(k.outputs ?? []),
      ...k.cases.map((c) => ({ variant: c.variant, text: c.error?.log_tail ?? '' })),
    ];
    for (const { variant, text } of texts) {
      if (!text) continue;
      const where = { source: `kernel:${k.info.name}`, kernel: k.info.name, variant };
      for (const d of diagnoseOutput(text, where)) {
        const seen = found.some(
          (f) => f.code === d.code && f.kernel === d.kernel && f.variant === d.variant,
        );
        if (!seen) found.push(d);
      }
    }
  }
  return found;
}

/**
 * The harness's results with the benchmarks' kernels, cases and diagnostics added: one document.
 * The harness's GPU stays the run's; a run paired only through benchmarks records its base.
 */
export function withBenchmarks(
  results: KernelgateResults,
  stage: BenchmarkStage,
  base: BaseRevision | undefined,
  config: Pick<Config, 'peaks'>,
): KernelgateResults {
  if (stage.kernels.length === 0 && stage.diagnostics.length === 0) return results;
  const merged = mergeBenchmarks(results, stage, base);
  const names = stage.kernels.map((k) => k.info.name);
  return {
    ...merged,
    diagnostics: [...merged.diagnostics, ...slowPathChecks(merged, names, config)],
  };
}

/** The writers of the document: the harness and the adapters, or the adapters alone. */
function harnessName(results: KernelgateResults, formats: string[]): string {
  const adapters = `${ADAPTERS_HARNESS} (${formats.join(', ')})`;
  return results.run.harness === NO_HARNESS ? adapters : `${results.run.harness} + ${adapters}`;
}

function mergeBenchmarks(
  results: KernelgateResults,
  stage: BenchmarkStage,
  base: BaseRevision | undefined,
): KernelgateResults {
  const formats = [...new Set(stage.kernels.map((k) => k.info.adapter?.format ?? ''))];
  const pairedBase =
    results.run.paired_base ??
    (stage.pairedRoot !== undefined && base
      ? {
          root: stage.pairedRoot,
          git_sha: base.sha,
          ...(base.ref !== undefined ? { git_ref: base.ref } : {}),
          order: 'ABBA' as const,
        }
      : undefined);
  return {
    ...results,
    run: {
      ...results.run,
      ...(formats.length ? { harness: harnessName(results, formats) } : {}),
      ...(pairedBase ? { paired_base: pairedBase } : {}),
      ...(stage.seconds !== undefined
        ? { stage_seconds: { ...results.run.stage_seconds, benchmarks: stage.seconds } }
        : {}),
    },
    diagnostics: [
      ...results.diagnostics,
      ...stage.kernels.flatMap((k) => k.diagnostics),
      ...stage.diagnostics,
    ],
    kernels: [...results.kernels, ...stage.kernels.map((k) => k.info)],
    cases: [...results.cases, ...stage.kernels.flatMap((k) => k.cases)],
  };
}

/**
 * What the harness runs: kernels only (the action's `kernels` input may name benchmarks too), and
 * nothing at all in a repository whose selection holds benchmarks but no kernel.
 */
export function harnessSelection(
  config: Config,
  only: string[] | undefined,
): { run: boolean; only?: string[] } {
  const names = new Set(config.benchmarks.map((b) => b.name));
  const benchmarks = selectedBenchmarks(config, only).length;
  if (only?.length) {
    const kernels = only.filter((n) => !names.has(n));
    return kernels.length > 0 || benchmarks === 0 ? { run: true, only: kernels } : { run: false };
  }
  return { run: config.kernels.length > 0 || benchmarks === 0 };
}

const NO_HARNESS = 'none: no kernel selected, benchmarks only';

/** The harness's part of a run that has only benchmarks: no kernels, no cases, no error. */
export function noHarness(startedAt: string, environment: Environment): KernelgateResults {
  return {
    schema: 'kernelgate/results@1',
    // No kernel selected: the gate holds the run to its benchmarks' cases alone.
    run: { started_at: startedAt, harness: NO_HARNESS, selection: { kernels: [], ci: false } },
    environment,
    diagnostics: [],
    kernels: [],
    cases: [],
  };
}
