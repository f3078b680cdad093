// The kernelgate command line: a small subcommand dispatcher. `kernelgate report` judges a
// results file locally (compare → tiers → gate → render) and exits with the gate's verdict.
import { mkdirSync, readFileSync, writeFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ADAPTERS, fileAdapterFor } from '../adapters/index.js';
import { adaptFile, resultsOf, runBenchmarks } from '../adapters/index.js';
import { fileBaselineStore } from '../store/index.js';
import { dashboardCommand, DASHBOARD_USAGE } from '../history/index.js';
import { exportCommand } from '../history/index.js';
import { historyCommand, HISTORY_USAGE } from '../history/index.js';
import { buildKernels } from '../measure/index.js';
import { calibrate, calibrationYaml, writeCalibration } from '../judge/index.js';
import { describeDoctor, runDoctor } from '../measure/index.js';
import { actionsExec, packageRoot } from '../lib/index.js';
import { buildTargets } from '../measure/index.js';
import type { KernelgateResults } from '../results/index.js';
import { fullRun, storeBaseline, type FullRunOptions } from '../pipeline/index.js';
import {
  mergeCommand,
  MERGE_USAGE,
  parseShardSpec,
  SHARD_BALANCE,
  shardedOptions,
  type ShardBalance,
} from '../shard/index.js';
import { loadConfig, type Config } from '../config/index.js';
import type { GateResult } from '../judge/index.js';
import { judge } from '../pipeline/index.js';
import { InputError, loadResults, validateResults } from '../results/index.js';

/** Exit statuses: the gate passed, the gate failed, the command could not run. */
export const EXIT_PASS = 0;
export const EXIT_GATE_FAILED = 1;
export const EXIT_USAGE = 2;

/** The repository (or installed package) root: the folder of kernelgate's package.json. */
export const PACKAGE_ROOT = packageRoot();

/**
 * The built-in recorded run `kernelgate report` judges when given no --results: paths relative
 * to PACKAGE_ROOT, in this one place. A paired pull-request run of the whole kernel set on the
 * H100 (2026-11-23, docs/notes/paired-ab.md run 7): the head carries a planted 2 % slowdown of
 * attention/triton_fa2 and was timed pair by pair against its base in the same job, so it needs
 * no stored baseline.
 */
export const RECORDED_RUN: { results: string; baseline?: string } = {
  results: 'test/fixtures/recorded/paired-slow2-h100/results.json',
};

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

type Command = (args: string[], io: CliIo) => Promise<number>;

const USAGE = `usage: kernelgate <command> [options]

commands:
  report   judge a results file against a baseline, render the report, print the verdict
  run      on a GPU machine: doctor, build, harness, then judge and report like \`report\`
  doctor   check the GPU, driver, CUDA runtime and toolkit, libraries; say what to fix
  build    build the CUDA variants and check what was built against each kernel.yml
  calibrate  from A/A runs (same code, same GPU), the per-case noise for compare.noise_pct
  adapt    turn another tool's benchmark output into a results file (docs/adapters.md)
  bench    run kernelgate.yml's benchmarks (other tools'), then judge and report like \`report\`
  export   write a results file as Bencher (BMF) or github-action-benchmark JSON
  dashboard  the trend page (static HTML) from the data branch or from results files
  history  import: move a baseline-dir store onto the data branch (docs/history.md)
  merge    join the results of a split run's shards (run --shard i/n), then judge and report

kernelgate report [--results FILE] [--baseline FILE] [--config DIR_OR_FILE]
                  [--kind pr|nightly] [--out FILE]
  --results FILE        results JSON (kernelgate/results@1); default: the built-in recorded run
  --baseline FILE       baseline results JSON; default: the recorded baseline when --results is
                        not given, otherwise none (every case NEW)
  --config DIR_OR_FILE  repository root holding kernelgate.yml and kernels/, or a kernelgate.yml
                        (default: the current directory)
  --kind pr|nightly     which report to render (default: pr)
  --out FILE            write the full Markdown report there (default: standard output)

kernelgate run [--config DIR_OR_FILE] [--only K1,K2] [--out-dir DIR] [--baseline FILE]
               [--baseline-dir DIR] [--branch NAME] [--base NAME] [--save-baseline]
               [--kind pr|nightly] [--out FILE] [--shard I/N [--shard-balance baseline|estimate]]
  --out-dir DIR         results.json and harness.log (default: .kernelgate/report)
  --shard I/N           measure only shard I of N (balanced by the stored baseline's timings on
                        this GPU SKU, else by the cases' sizes: docs/scaling.md); writes the
                        shard's results for \`kernelgate merge\` and judges nothing
  --baseline-dir DIR    the baseline store (default: .kernelgate/baselines)
  --base NAME           judge as a pull request against branch NAME's newest stored results
  --branch NAME         this run's branch; with --save-baseline, store the results as its newest

kernelgate doctor [--config DIR_OR_FILE]           exit status 1 when a finding is an error
kernelgate build [--config DIR_OR_FILE] [--only K1,K2] [--cache-dir DIR]
                                                    exit status 1 when a variant failed or missed
                                                    an expectation

kernelgate calibrate RUN.json RUN.json [...] [--margin 2] [--floor-pct 3]
                     [--exclude KERNEL/VARIANT,...] [--provenance TEXT] [--write FILE]
  prints a compare.noise_pct block for kernelgate.yml: each case whose median moved more than
  --floor-pct between the runs gets margin × its spread; --write FILE replaces the per-case
  entries of FILE's compare.noise_pct instead (kernel- and variant-wide entries are kept)

kernelgate export --results FILE --format bmf|gab-smaller|gab-bigger [--out FILE]
                  [--confidence 0.99] [--prefix NAME]
  bmf: Bencher Metric Format (latency in ns with the median's interval, throughput in FLOP/s);
  gab-smaller / gab-bigger: github-action-benchmark's customSmallerIsBetter (ms) and
  customBiggerIsBetter (TFLOP/s, GB/s for copies) JSON; one benchmark per timed, correct case

${MERGE_USAGE}
${DASHBOARD_USAGE}
${HISTORY_USAGE}
kernelgate adapt --format FORMAT --input FILE [--kernel NAME] [--reference V1,V2] [--out FILE]
  --format FORMAT       gbench, pytest-benchmark or nvbench
  --kernel NAME         the kernel name its cases get (default: the format, - as _)
  --reference V1,V2     variants that are references, not candidates
  --out FILE            write the results there (default: standard output)

kernelgate bench [--config DIR_OR_FILE] [--only B1,B2] [--out-dir DIR] [--baseline FILE]
                 [--base-root DIR] [--base-sha SHA] [--doctor] [--kind pr|nightly] [--out FILE]
  runs kernelgate.yml's benchmarks: section (gbench, pytest-benchmark, nvbench, command)
  --out-dir DIR         results.json goes there (default: .kernelgate/report)
  --base-root DIR       a base revision's checkout: command benchmarks run there too, alternately
                        (ABBA), and are judged by their pairs
  --doctor              take the GPU and versions from the doctor (else from the tools' output)

exit status: 0 the gate passed, 1 the gate failed, 2 bad usage or bad input
`;

function configFrom(option: string | undefined, cwd: string): Config {
  const target = resolve(cwd, option ?? '.');
  let isFile: boolean;
  try {
    isFile = statSync(target).isFile();
  } catch {
    throw new InputError(`--config: no such file or folder: ${option ?? '.'}`);
  }
  return isFile ? loadConfig(dirname(target), { configFile: target }) : loadConfig(target);
}

function verdictText(result: GateResult): string {
  const c = result.counts;
  const lines = [
    `kernelgate: ${result.verdict.toUpperCase()} (${c.cases} cases: ${c.passed} pass, ${c.failed} fail, ` +
      `${c.drift} drift, ${c.errors} error/timeout, ${c.skipped} skipped; ${c.slower} slower, ` +
      `${c.faster} faster, ${c.same} same, ${c.ambiguous} ambiguous, ${c.new} new, ${c.missing} missing)`,
    ...result.reasons.map((r) => `  fail: ${r}`),
    ...result.warnings.map((w) => `  note: ${w}`),
  ];
  return `${lines.join('\n')}\n`;
}

const report: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: {
      results: { type: 'string' },
      baseline: { type: 'string' },
      config: { type: 'string' },
      kind: { type: 'string', default: 'pr' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const kind = reportKind(values.kind);
  const recorded = values.results === undefined;
  const resultsPath = recorded
    ? resolve(PACKAGE_ROOT, RECORDED_RUN.results)
    : resolve(io.cwd, values.results as string);
  const baselinePath =
    values.baseline !== undefined
      ? resolve(io.cwd, values.baseline)
      : recorded && RECORDED_RUN.baseline !== undefined
        ? resolve(PACKAGE_ROOT, RECORDED_RUN.baseline)
        : undefined;

  const config = configFrom(values.config, io.cwd);
  const results = loadResults(resultsPath);
  const baseline = baselinePath ? loadResults(baselinePath) : undefined;
  return judgeAndPrint(results, baseline, config, kind, values.out, io);
};

function reportKind(option: string): 'pr' | 'nightly' {
  if (option !== 'pr' && option !== 'nightly') {
    throw new UsageError(`--kind must be pr or nightly (got ${JSON.stringify(option)})`);
  }
  return option;
}

/** Judges (judge.ts), then prints the report (or writes --out) and the verdict. */
function judgeAndPrint(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
  kind: 'pr' | 'nightly',
  out: string | undefined,
  io: CliIo,
): number {
  const { verdict, rendered } = judge(results, baseline, config, kind);
  if (out) {
    writeFileSync(resolve(io.cwd, out), rendered.full);
    io.stdout(verdictText(verdict));
  } else {
    io.stdout(rendered.full);
    io.stderr(verdictText(verdict));
  }
  return verdict.verdict === 'pass' ? EXIT_PASS : EXIT_GATE_FAILED;
}

function shardSpec(text: string) {
  try {
    return parseShardSpec(text, '--shard');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function onlyList(option: string | undefined): string[] | undefined {
  if (option === undefined) return undefined;
  const names = option
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const bad = names.find((n) => !/^[a-z0-9_]+$/.test(n));
  if (bad !== undefined)
    throw new UsageError(`--only takes kernel folder names, got ${JSON.stringify(bad)}`);
  return names;
}

/** Progress of doctor, build and harness on the terminal: groups become headings. */
function terminalLog(io: CliIo) {
  return {
    info: (line: string) => io.stderr(`${line}\n`),
    startGroup: (name: string) => io.stderr(`\n== ${name}\n`),
    endGroup: () => undefined,
    warning: (message: string) => io.stderr(`warning: ${message}\n`),
  };
}

const doctor: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: { config: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  const config = configFrom(values.config, io.cwd);
  const found = await runDoctor({ exec: actionsExec(), python: config.harness.python });
  io.stdout(describeDoctor(found));
  return found.diagnostics.some((d) => d.level === 'error') ? EXIT_GATE_FAILED : EXIT_PASS;
};

const build: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string' },
      only: { type: 'string' },
      'cache-dir': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const config = configFrom(values.config, io.cwd);
  const built = await buildKernels(buildTargets(config, onlyList(values.only)), {
    exec: actionsExec(),
    cacheDir: resolve(io.cwd, values['cache-dir'] ?? join(config.rootDir, '.kernelgate', 'build')),
    python: config.harness.python,
    log: (line) => io.stderr(`${line}\n`),
  });
  for (const d of built.diagnostics)
    io.stdout(`${d.level}: ${d.message}${d.fix ? `\n  fix: ${d.fix}` : ''}\n`);
  io.stdout(`builds: ${built.buildsJsonPath}\n`);
  return built.records.every((r) => r.status === 'ok') ? EXIT_PASS : EXIT_GATE_FAILED;
};

const run: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string' },
      only: { type: 'string' },
      'out-dir': { type: 'string', default: '.kernelgate/report' },
      baseline: { type: 'string' },
      'baseline-dir': { type: 'string', default: '.kernelgate/baselines' },
      branch: { type: 'string' },
      base: { type: 'string' },
      'base-sha': { type: 'string' },
      'save-baseline': { type: 'boolean', default: false },
      kind: { type: 'string', default: 'pr' },
      out: { type: 'string' },
      shard: { type: 'string' },
      'shard-balance': { type: 'string', default: 'baseline' },
    },
    strict: true,
    allowPositionals: false,
  });
  const kind = reportKind(values.kind);
  const shard = values.shard === undefined ? undefined : shardSpec(values.shard);
  const balance = values['shard-balance'];
  if (!(SHARD_BALANCE as readonly string[]).includes(balance)) {
    throw new UsageError(
      `--shard-balance must be ${SHARD_BALANCE.join(' or ')} (got ${JSON.stringify(balance)})`,
    );
  }
  if (values['save-baseline'] && values.branch === undefined) {
    throw new UsageError('--save-baseline needs --branch: baselines are stored per branch');
  }
  const config = configFrom(values.config, io.cwd);
  const only = onlyList(values.only);
  const runOptions: FullRunOptions = {
    config,
    workspace: config.rootDir,
    harnessRoot: PACKAGE_ROOT,
    outDir: resolve(io.cwd, values['out-dir']),
    ...(only !== undefined ? { only } : {}),
    run: { command: `kernelgate run ${args.join(' ')}`.trim() },
    mode: values.base !== undefined ? 'pr' : 'push',
    branch: values.branch,
    baseBranch: values.base,
    store: fileBaselineStore(resolve(io.cwd, values['baseline-dir'])),
    baselinePath: values.baseline === undefined ? undefined : resolve(io.cwd, values.baseline),
    saveBaseline: values['save-baseline'],
    ...(values['base-sha'] !== undefined
      ? { pairedBase: { sha: values['base-sha'], ...(values.base ? { ref: values.base } : {}) } }
      : {}),
  };
  const log = terminalLog(io);
  if (shard !== undefined) {
    const sharded = shardedOptions(runOptions, shard, balance as ShardBalance, log);
    const measured = sharded.finish(await fullRun(sharded.options, { exec: actionsExec(), log }));
    io.stderr(
      `shard ${shard.index}/${shard.count}: ${measured.results.cases.length} results: ${measured.resultsPath}\n` +
        `join the shards with: kernelgate merge DIR... --shards ${shard.count}\n`,
    );
    return EXIT_PASS;
  }
  const measured = await fullRun(runOptions, { exec: actionsExec(), log });
  io.stderr(`results: ${measured.resultsPath}\n`);
  const status = judgeAndPrint(
    measured.results,
    measured.baseline?.results,
    config,
    kind,
    values.out,
    io,
  );
  const stored = storeBaseline(measured, status === EXIT_PASS ? 'pass' : 'fail', 'passing');
  if (stored.saved) io.stderr(`stored as the newest baseline: ${stored.saved}\n`);
  if (stored.note) io.stderr(`${stored.note}\n`);
  return status;
};

const calibrateCommand: Command = async (args, io) => {
  const { values, positionals } = parseArgs({
    args,
    options: {
      margin: { type: 'string', default: '2' },
      'floor-pct': { type: 'string', default: '3' },
      exclude: { type: 'string', default: '' },
      provenance: { type: 'string', default: 'see the runs named in the command' },
      write: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  const number = (name: string, text: string) => {
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) {
      throw new UsageError(`--${name} must be a positive number (got ${JSON.stringify(text)})`);
    }
    return value;
  };
  if (positionals.length < 2) {
    throw new UsageError('calibrate needs two or more results files of the same code (A/A runs)');
  }
  const calibrationOptions = {
    margin: number('margin', values.margin),
    floorPct: number('floor-pct', values['floor-pct']),
    exclude: values.exclude.split(',').filter((e) => e !== ''),
  };
  const runs = positionals.map((p) => loadResults(resolve(io.cwd, p)));
  const calibration = calibrate(runs, calibrationOptions);
  if (values.write !== undefined) {
    const file = resolve(io.cwd, values.write);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new InputError(`${file}: cannot read it (${(e as Error).message})`);
    }
    writeFileSync(file, writeCalibration(text, calibration, values.provenance, file));
    io.stderr(
      `${file}: compare.noise_pct now has ${calibration.entries.length} per-case entries (${calibration.compared} cases compared)\n`,
    );
  } else {
    io.stdout(calibrationYaml(calibration, values.provenance));
  }
  for (const s of calibration.skipped) io.stderr(`skipped ${s.key}: ${s.reason}\n`);
  return EXIT_PASS;
};

/** The formats `adapt` reads: those whose adapter parses a file. */
const FILE_FORMATS = ADAPTERS.filter((a) => a.kind === 'file')
  .map((a) => a.format)
  .join(', ');

const adapt: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: {
      format: { type: 'string' },
      input: { type: 'string' },
      kernel: { type: 'string' },
      reference: { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const adapter = values.format === undefined ? undefined : fileAdapterFor(values.format);
  if (!adapter) {
    throw new UsageError(
      `--format must be one of ${FILE_FORMATS} (got ${values.format === undefined ? 'nothing' : JSON.stringify(values.format)})`,
    );
  }
  if (values.input === undefined) {
    throw new UsageError('--input is required: the file the tool wrote');
  }
  const kernel = values.kernel ?? adapter.format.replace(/-/g, '_');
  if (!/^[a-z0-9_]+$/.test(kernel)) {
    throw new UsageError(`--kernel takes lower case, digits and _ (got ${JSON.stringify(kernel)})`);
  }
  const adapted = adaptFile(adapter, resolve(io.cwd, values.input), {
    kernel,
    shown: values.input,
    references: values.reference?.split(',').filter((r) => r !== '') ?? [],
  });
  const results = validateResults(
    resultsOf([adapted], { command: `kernelgate adapt ${args.join(' ')}` }),
    'the adapted results',
  );
  const text = `${JSON.stringify(results, null, 2)}\n`;
  if (values.out === undefined) io.stdout(text);
  else {
    writeFileSync(resolve(io.cwd, values.out), text);
    io.stderr(`${values.out}: ${results.cases.length} cases of ${kernel} (${adapter.title})\n`);
  }
  return EXIT_PASS;
};

const bench: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: {
      config: { type: 'string' },
      only: { type: 'string' },
      'out-dir': { type: 'string', default: '.kernelgate/report' },
      baseline: { type: 'string' },
      'base-root': { type: 'string' },
      'base-sha': { type: 'string' },
      doctor: { type: 'boolean', default: false },
      kind: { type: 'string', default: 'pr' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const kind = reportKind(values.kind);
  const config = configFrom(values.config, io.cwd);
  const names = config.benchmarks.map((b) => b.name);
  if (names.length === 0) {
    throw new InputError(
      `${config.configFile ?? 'kernelgate.yml'}: benchmarks is empty or absent, so there is nothing to run (docs/adapters.md)`,
    );
  }
  const only = onlyList(values.only);
  const unknown = only?.find((n) => !names.includes(n));
  if (unknown !== undefined) {
    throw new UsageError(
      `--only names no benchmark of kernelgate.yml (got ${JSON.stringify(unknown)}; known: ${names.join(', ')})`,
    );
  }
  const doctor = values.doctor
    ? await runDoctor({ exec: actionsExec(), python: config.harness.python })
    : undefined;
  const baseRoot = values['base-root'];
  const results = validateResults(
    await runBenchmarks(config.benchmarks, {
      root: config.rootDir,
      ...(baseRoot !== undefined ? { baseRoot: resolve(io.cwd, baseRoot) } : {}),
      ...(values['base-sha'] !== undefined ? { baseSha: values['base-sha'] } : {}),
      ...(only !== undefined ? { only } : {}),
      command: `kernelgate bench ${args.join(' ')}`.trim(),
      ...(doctor ? { environment: doctor.environment, diagnostics: doctor.diagnostics } : {}),
      log: (line) => io.stderr(`${line}\n`),
    }),
    'the benchmark results',
  );
  const outDir = resolve(io.cwd, values['out-dir']);
  mkdirSync(outDir, { recursive: true });
  const resultsPath = join(outDir, 'results.json');
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  io.stderr(`results: ${resultsPath}\n`);
  const baseline = values.baseline ? loadResults(resolve(io.cwd, values.baseline)) : undefined;
  return judgeAndPrint(results, baseline, config, kind, values.out, io);
};

/** Subcommands by name. */
export const COMMANDS: Record<string, Command> = {
  report,
  run,
  doctor,
  build,
  calibrate: calibrateCommand,
  export: exportCommand,
  dashboard: dashboardCommand,
  history: historyCommand,
  merge: (args, io) => mergeCommand(args, io, { configFrom, judgeAndPrint }),
  adapt,
  bench,
};

class UsageError extends Error {}

/** Runs the command line; returns the exit status instead of exiting (tests call this). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(USAGE);
    return name === undefined ? EXIT_USAGE : EXIT_PASS;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`kernelgate: unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  try {
    return await command(rest, io);
  } catch (err) {
    // Argument errors from parseArgs carry a code; input errors are ours. Anything else is a bug
    // and keeps its stack.
    const code = (err as { code?: string }).code;
    if (
      err instanceof InputError ||
      err instanceof UsageError ||
      code?.startsWith('ERR_PARSE_ARGS')
    ) {
      const hint = err instanceof InputError ? '' : `\n\n${USAGE}`;
      io.stderr(`kernelgate ${name}: ${(err as Error).message}${hint}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const io: CliIo = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    cwd: process.cwd(),
  };
  runCli(process.argv.slice(2), io).then(
    (status) => {
      process.exitCode = status;
    },
    (err: unknown) => {
      process.stderr.write(`kernelgate: internal error: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = EXIT_USAGE;
    },
  );
}
