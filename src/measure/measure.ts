// The producing half of a run on the GPU runner: doctor → build → harness, merged into one
// results document written to disk before anything is judged or posted. It judges nothing.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildKernels } from './build/index.js';
import type { BaseRevision } from './base-revision.js';
import { harnessSelection, noHarness, runBenchmarkStage, withBenchmarks } from './benchmarks.js';
import { type Config } from '../config/index.js';
import { lanesBalance, type BalanceSource } from './balance.js';
import { storedCeilingsArgs } from './ceilings.js';
import { diagnoseOutput } from './diagnose.js';
import { runDoctor } from './doctor/index.js';
import type { CommandRunner } from '../adapters/index.js';
import type { Exec } from '../lib/index.js';
import { gpuModel } from '../config/index.js';
import {
  checkResults,
  runHarness,
  streamingExec,
  type LineExec,
  type ProgressLog,
} from './harness.js';
import { pullRequestIdentity } from './identity.js';
import { buildBase, buildTargets, pairedArgs, type PairedArgs } from './base-build.js';
import type { BuildRecord, Diagnostic, Environment, KernelgateResults } from '../results/index.js';
import { parseJson, validateResults } from '../results/index.js';

export interface MeasureOptions {
  config: Config;
  /** the repository being judged */
  workspace: string;
  /** the action's own root (its python/ folder holds the harness package) */
  harnessRoot: string;
  /** results.json, harness.log and builds go here */
  outDir: string;
  /** kernels to run; default all */
  only?: string[];
  /** build cache; default `<workspace>/.kernelgate/build` */
  buildCacheDir?: string;
  /** facts about the run recorded in `run` */
  run?: { id?: string; git_sha?: string; git_ref?: string; command?: string };
  /** environment for the harness (e.g. KERNELGATE_FAULT for the planted-fault proof runs) */
  harnessEnv?: Record<string, string>;
  /** more harness arguments (the nightly's bisection: --variants NAME) */
  harnessArgs?: string[];
  /** a checked-out base revision: every case is timed against it, pair by pair (paired A/B) */
  base?: BaseRevision;
  /**
   * A pull request's run: variants identical in `base` and head (identity.ts) are verified but not
   * timed. Never for a run that may be stored (push, nightly): history keeps every timing.
   */
  skipIdentical?: boolean;
  /**
   * Finds the base revision once the doctor has read the GPU (the nightly's: the newest good run
   * stored for this GPU model); undefined: the run is not paired. Not called when `base` is set.
   */
  resolveBase?: (environment: Environment) => Promise<{ base?: BaseRevision; note?: string }>;
  /**
   * Picks the cases to run (kernel/case ids) once the doctor has read the GPU: a shard of a split
   * run (src/shard). Undefined: every case of the selected kernels.
   */
  selectCases?: (environment: Environment) => Promise<string[] | undefined>;
  /** On several GPUs: the stored run of this GPU model whose timings balance the harness's lanes. */
  balance?: (environment: Environment) => Promise<BalanceSource | undefined>;
  /**
   * The configuration's check, started before this run (pipeline/check.ts startCheck): awaited
   * and called once the doctor has read the machine, before anything is built; it throws when
   * the configuration has a problem.
   */
  check?: Promise<() => void>;
}

export interface MeasureDeps {
  exec: Exec;
  /** runs the benchmarks' command lines (kernelgate.yml's benchmarks:); default bash */
  commandRunner?: CommandRunner;
  lineExec?: LineExec;
  log: ProgressLog & { warning(message: string): void };
  now?: () => number;
}

export interface Measured {
  results: KernelgateResults;
  resultsPath: string;
  /** wall seconds of doctor, build and harness */
  stageSeconds: Record<string, number>;
}

/**
 * Doctor facts fill what the harness did not measure; the harness's own readings win. The GPU's
 * model (the baseline store's key, the peaks' row) is derived here, from the raw facts (PCI device
 * id, name) and the GPU table, whatever the harness called it.
 */
export function mergeEnvironment(
  fromHarness: Environment | undefined,
  fromDoctor: Environment,
): Environment {
  if (fromHarness === undefined) return fromDoctor;
  const gpu = { ...fromDoctor.gpu, ...fromHarness.gpu };
  if (gpu.sku !== 'none') gpu.sku = gpuModel(gpu.name, gpu.pci_device_id);
  return {
    ...fromDoctor,
    ...fromHarness,
    gpu,
    libraries: { ...fromDoctor.libraries, ...fromHarness.libraries },
  };
}

/** Runs one stage in its own log group and records its wall time. */
async function stage<T>(
  name: string,
  group: string | undefined,
  deps: MeasureDeps,
  seconds: Record<string, number>,
  body: () => Promise<T>,
): Promise<T> {
  const now = deps.now ?? Date.now;
  if (group) deps.log.startGroup(group);
  const t = now();
  try {
    return await body();
  } finally {
    seconds[name] = (now() - t) / 1000;
    if (group) deps.log.endGroup();
  }
}

/** `--cases FILE` when the run measures only some cases (a shard's). */
async function casesArgs(options: MeasureOptions, environment: Environment, outDir: string) {
  const selected = options.selectCases ? await options.selectCases(environment) : undefined;
  if (selected === undefined) return [];
  const casesPath = join(outDir, 'cases.txt');
  writeFileSync(casesPath, selected.map((id) => `${id}\n`).join(''));
  return ['--cases', casesPath];
}

/** The document of a run whose harness results cannot be judged: none of its cases, one error. */
function unjudged(
  startedAt: string,
  harnessText: string,
  environment: Environment,
  diagnostic: Diagnostic,
): KernelgateResults {
  return {
    schema: 'kernelgate/results@1',
    run: { started_at: startedAt, harness: harnessText },
    environment,
    diagnostics: [diagnostic],
    kernels: [],
    cases: [],
  };
}

/**
 * The harness's results; a harness that wrote none still yields a document that says why, and so
 * does one whose file changed after its last write (checkResults): none of its cases are judged,
 * so the gate fails on coverage whatever the policy.
 */
function harnessResults(
  harness: Awaited<ReturnType<typeof runHarness>>,
  resultsPath: string,
  config: Config,
  doctorEnvironment: Environment,
  startedAt: string,
  log: MeasureDeps['log'],
): { measured: KernelgateResults; diagnostics: Diagnostic[] } {
  const diagnostics = diagnoseOutput(harness.log, { source: 'harness' });
  if (harness.wroteResults) {
    const checked = checkResults(harness, resultsPath);
    if (checked.changed !== undefined) {
      log.warning(`kernelgate: ${checked.changed}`);
      const measured = unjudged(
        startedAt,
        'none: the results file changed after the harness wrote it',
        doctorEnvironment,
        {
          level: 'error',
          code: 'harness.results_changed',
          message: checked.changed,
          fix: 'None of these results can be trusted: a process a kernel started outlived the harness. Look for kernels that start processes (subprocess, multiprocessing, os.fork) and do not wait for them.',
          source: 'harness',
        },
      );
      return { measured, diagnostics };
    }
    if (checked.unchecked !== undefined) log.info(checked.unchecked);
    if (harness.exitCode !== 0) {
      diagnostics.push({
        level: 'error',
        code: 'harness.exit',
        message: `The harness exited with status ${harness.exitCode}; the cases it finished are judged. Last lines:\n${harness.logTail}`,
        fix: 'Read harness.log in the report directory; a crash of one kernel should fail only its cases, so this is a harness bug worth reporting.',
        source: 'harness',
      });
    }
    const measured = validateResults(parseJson(checked.text, resultsPath), resultsPath);
    return { measured, diagnostics };
  }
  log.warning(`kernelgate: the harness wrote no results (exit status ${harness.exitCode}).`);
  const measured = unjudged(startedAt, 'none: the harness wrote no results', doctorEnvironment, {
    level: 'error',
    code: 'harness.no_results',
    message: `The harness exited with status ${harness.exitCode} before writing any results. Last lines:\n${harness.logTail}`,
    fix: `Run \`${config.harness.python} -m kernelgate_harness --kernels ${config.kernelsDir} --out results.json\` on the runner to see the full error; the doctor's findings above often name the cause.`,
    source: 'harness',
  });
  return { measured, diagnostics };
}

/** The Python harness over the kernels, with the run's arguments (tunings beside the build cache). */
function harnessRun(
  options: MeasureOptions,
  deps: MeasureDeps,
  paths: { resultsPath: string; outDir: string; buildsPath: string; cacheDir: string },
  moreArgs: string[],
) {
  const { config } = options;
  return runHarness(
    {
      workspace: options.workspace,
      harnessRoot: options.harnessRoot,
      python: config.harness.python,
      kernelsDir: config.kernelsDir,
      resultsPath: paths.resultsPath,
      logPath: join(paths.outDir, 'harness.log'),
      buildsPath: paths.buildsPath,
      ...(options.only !== undefined ? { only: options.only } : {}),
      timeoutPerCaseS: config.harness.timeoutS,
      // The kernels' host-side tunings live beside the build cache: a runner that keeps its
      // build cache keeps its tunings, keyed on the tuner's source, the case and the GPU.
      extraArgs: [
        ...config.harness.args,
        '--tune-cache',
        join(paths.cacheDir, 'tune'),
        ...moreArgs,
      ],
      ...(options.harnessEnv !== undefined ? { env: options.harnessEnv } : {}),
    },
    deps.log,
    deps.lineExec ?? streamingExec,
  );
}

/** The harness over the selected kernels; nothing in a run that selects only benchmarks. */
async function harnessStage(
  options: MeasureOptions,
  deps: MeasureDeps,
  paths: { resultsPath: string; outDir: string; buildsPath: string; cacheDir: string },
  moreArgs: string[],
  run: { stageSeconds: Record<string, number>; environment: Environment; startedAt: string },
): Promise<{ measured: KernelgateResults; diagnostics: Diagnostic[] }> {
  const kernels = harnessSelection(options.config, options.only);
  if (!kernels.run) return { measured: noHarness(run.startedAt, run.environment), diagnostics: [] };
  const harness = await stage('harness', undefined, deps, run.stageSeconds, () =>
    harnessRun(
      { ...options, ...(kernels.only ? { only: kernels.only } : {}) },
      deps,
      paths,
      moreArgs,
    ),
  );
  return harnessResults(
    harness,
    paths.resultsPath,
    options.config,
    run.environment,
    run.startedAt,
    deps.log,
  );
}

/** The one results document: the harness's, with the run's facts, stage times, the doctor's
 * environment filling gaps, every stage's diagnostics and the build records. */
function assemble(
  measured: KernelgateResults,
  options: MeasureOptions,
  stageSeconds: Record<string, number>,
  stageDiagnostics: Diagnostic[],
  doctorEnvironment: Environment,
  builds: BuildRecord[],
): KernelgateResults {
  return {
    ...measured,
    run: {
      ...measured.run,
      ...options.run,
      stage_seconds: { ...measured.run.stage_seconds, ...stageSeconds },
    },
    environment: mergeEnvironment(measured.environment, doctorEnvironment),
    diagnostics: [...stageDiagnostics, ...caseDiagnostics(measured), ...measured.diagnostics],
    builds,
  };
}

/** Known failure messages in case errors become diagnostics that name the cause, once each. */
function caseDiagnostics(results: KernelgateResults): Diagnostic[] {
  const found: Diagnostic[] = [];
  for (const c of results.cases) {
    const text = [c.error?.message, c.error?.log_tail, c.reason].filter(Boolean).join('\n');
    if (text === '') continue;
    for (const d of diagnoseOutput(text, {
      source: 'harness',
      kernel: c.kernel,
      variant: c.variant,
    })) {
      if (
        !found.some((f) => f.code === d.code && f.kernel === d.kernel && f.variant === d.variant)
      ) {
        found.push(d);
      }
    }
  }
  return found;
}

/** The base revision (given, or found once the doctor has named the GPU) and its build. */
async function pairedStage(
  options: MeasureOptions,
  at: {
    cacheDir: string;
    outDir: string;
    stageSeconds: Record<string, number>;
    environment: Environment;
  },
  deps: MeasureDeps,
): Promise<{ base?: BaseRevision; paired?: PairedArgs; notes: string[] }> {
  const notes: string[] = [];
  const resolved = options.base
    ? { base: options.base }
    : await options.resolveBase?.(at.environment);
  if (resolved?.note !== undefined) notes.push(resolved.note);
  const base = resolved?.base;
  if (base === undefined) return { notes };
  const paired = await stage(
    'build_base',
    `kernelgate build (base revision ${base.sha.slice(0, 12)})`,
    deps,
    at.stageSeconds,
    () => buildBase(base, options, options.config, at.cacheDir, at.outDir, deps, notes),
  );
  return { base, ...(paired ? { paired } : {}), notes };
}

/**
 * The harness's arguments beyond the usual: a shard's cases, the paired base revision, the
 * variants identical in base and head (a pull request's run: identity.ts), the caller's.
 */
async function harnessMoreArgs(
  options: MeasureOptions,
  paired: PairedArgs | undefined,
  builds: BuildRecord[],
  environment: Environment,
  log: MeasureDeps['log'],
): Promise<string[]> {
  const outDir = resolve(options.outDir);
  const selectArgs = await casesArgs(options, environment, outDir);
  const identical =
    paired && options.skipIdentical && options.base !== undefined
      ? pullRequestIdentity(options, builds, paired, environment, outDir, log)
      : [];
  // run.verify_identical: how the harness verifies the variants --identical names
  const verify = identical.length ? ['--verify-identical', options.config.run.verifyIdentical] : [];
  // one look-up of the stored run of this GPU model, for the ceilings and the lanes' order
  const stored = options.balance && memo(options.balance);
  const ceilings = identical.length
    ? storedCeilingsArgs(
        options.config,
        identical,
        environment,
        await stored?.(environment),
        outDir,
        log,
      )
    : [];
  const args = [
    ...selectArgs,
    ...(paired ? pairedArgs(paired, options.config) : []),
    ...identical,
    ...verify,
    ...ceilings,
    ...(options.harnessArgs ?? []),
  ];
  const lanes = [...options.config.harness.args, ...args];
  return [...args, ...(await lanesBalance(stored, environment, lanes, outDir, log))];
}

/** `lookup` asked once: later calls get the first call's promise. */
function memo<T>(lookup: (environment: Environment) => Promise<T>) {
  let first: Promise<T> | undefined;
  return (environment: Environment) => (first ??= lookup(environment));
}

export async function measure(options: MeasureOptions, deps: MeasureDeps): Promise<Measured> {
  const now = deps.now ?? Date.now;
  const { config } = options;
  const { log } = deps;
  const outDir = resolve(options.outDir);
  mkdirSync(outDir, { recursive: true });
  const stageSeconds: Record<string, number> = {};
  const startedAt = new Date(now()).toISOString();

  const doctor = await stage('doctor', 'kernelgate doctor', deps, stageSeconds, async () => {
    const report = await runDoctor({ exec: deps.exec, python: config.harness.python });
    for (const d of report.diagnostics) log.info(`doctor: ${d.level}: ${d.message}`);
    return report;
  });
  // the check, read meanwhile: its problems stop the run here, before the build
  if (options.check !== undefined) (await options.check)();
  const cacheDir = options.buildCacheDir ?? join(options.workspace, '.kernelgate', 'build');
  // Each build rewrites <cache>/builds.json: the head's and the base's records are kept apart.
  const buildsPath = join(outDir, 'builds.json');
  const build = await stage('build', 'kernelgate build', deps, stageSeconds, async () => {
    const built = await buildKernels(buildTargets(config, options.only), {
      exec: deps.exec,
      cacheDir,
      python: config.harness.python,
      log: (line) => log.info(line),
      now,
    });
    copyFileSync(built.buildsJsonPath, buildsPath);
    return built;
  });
  const { base, paired, notes } = await pairedStage(
    options,
    { cacheDir, outDir, stageSeconds, environment: doctor.environment },
    deps,
  );
  const moreArgs = await harnessMoreArgs(options, paired, build.records, doctor.environment, log);

  const resultsPath = join(outDir, 'results.json');
  const { measured, diagnostics: harnessDiagnostics } = await harnessStage(
    options,
    deps,
    { resultsPath, outDir, buildsPath, cacheDir },
    moreArgs,
    { stageSeconds, environment: doctor.environment, startedAt },
  );
  // kernelgate.yml's benchmarks after the harness, in the same job (src/measure/benchmarks.ts)
  const benchmarks = await runBenchmarkStage(
    {
      config,
      workspace: options.workspace,
      ...(options.only ? { only: options.only } : {}),
      ...(base ? { base } : {}),
      environment: doctor.environment,
      shard: options.selectCases !== undefined,
    },
    deps,
  );

  const assembled = assemble(
    measured,
    options,
    stageSeconds,
    [
      ...doctor.diagnostics,
      ...build.diagnostics,
      ...notes.map((message): Diagnostic => ({
        level: 'warning',
        code: 'paired.base_unavailable',
        message,
        source: 'build',
      })),
      ...harnessDiagnostics,
    ],
    doctor.environment,
    build.records,
  );
  // The base arm's build records beside the head's: the judge's base-against-head diff of what
  // was built (src/judge/why.ts).
  if (paired !== undefined) assembled.base_builds = paired.records;
  const results = withBenchmarks(assembled, benchmarks, base, config);
  writeFileSync(resultsPath, JSON.stringify(results, null, 2) + '\n');
  return { results, resultsPath, stageSeconds };
}
