// `kernelgate adapt` and `bench`: other tools' benchmark output as results.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  adaptFiles,
  adaptSummary,
  resultsOf,
  runBenchmarks,
  withRunnerGpu,
} from '../adapters/index.js';
import { FILE_FORMATS, fileAdapterFor, formatsTable } from '../formats/index.js';
import { actionsExec, makeOutputDir, writeOutput } from '../lib/index.js';
import { benchmarkFindings, runDoctor, slowPathChecks } from '../measure/index.js';
import { InputError, loadResults, validateResults } from '../results/index.js';
import { UsageError } from './cli.js';
import {
  type Command,
  configFrom,
  EXIT_GATE_FAILED,
  EXIT_PASS,
  judgeAndPrint,
  onlyList,
  reportKind,
} from './common.js';

export const ADAPT_OPTIONS = {
  format: { type: 'string' },
  input: { type: 'string', multiple: true },
  kernel: { type: 'string' },
  reference: { type: 'string' },
  out: { type: 'string' },
  formats: { type: 'boolean' },
} as const;

export const adapt: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: ADAPT_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  if (values.formats) {
    io.stdout(formatsTable());
    return EXIT_PASS;
  }
  const adapter = values.format === undefined ? undefined : fileAdapterFor(values.format);
  if (!adapter) {
    throw new UsageError(
      `--format must be one of ${FILE_FORMATS.join(', ')} (got ${values.format === undefined ? 'nothing' : JSON.stringify(values.format)})`,
    );
  }
  const inputs = values.input ?? [];
  if (inputs.length === 0) {
    throw new UsageError(
      '--input is required: the file the tool wrote (once per run, to read several runs together)',
    );
  }
  const kernel = values.kernel ?? adapter.format.replace(/-/g, '_');
  if (!/^[a-z0-9_]+$/.test(kernel)) {
    throw new UsageError(`--kernel takes lower case, digits and _ (got ${JSON.stringify(kernel)})`);
  }
  const adapted = adaptFiles(
    adapter,
    inputs.map((i) => resolve(io.cwd, i)),
    {
      kernel,
      shown: inputs,
      references: values.reference?.split(',').filter((r) => r !== '') ?? [],
    },
  );
  const merged = resultsOf([adapted], { command: `kernelgate adapt ${args.join(' ')}` });
  // A tool whose output names no GPU ran on this machine's, when it has one (nvidia-smi).
  const gpu = await withRunnerGpu(merged.environment, actionsExec());
  const results = validateResults(
    { ...merged, environment: gpu.environment },
    'the adapted results',
  );
  const text = `${JSON.stringify(results, null, 2)}\n`;
  if (values.out === undefined) io.stdout(text);
  else {
    writeOutput(resolve(io.cwd, values.out), text, values.out);
  }
  // What was written: cases, errors, warnings; nothing timed is an exit status of its own.
  const summary = adaptSummary(results, {
    written: values.out ?? 'standard output',
    title: adapter.title,
    runs: inputs.length,
  });
  if (gpu.from !== undefined) io.stderr(`GPU: ${gpu.from}: the tool's output names none\n`);
  for (const line of summary.lines) io.stderr(`${line}\n`);
  return summary.usable ? EXIT_PASS : EXIT_GATE_FAILED;
};

/** Without --doctor the driver is unknown: the binaries' runtime is not checked against it. */
const NO_DRIVER = { gpu: { name: 'unknown', sku: 'unknown' } };

export const BENCH_OPTIONS = {
  config: { type: 'string' },
  only: { type: 'string' },
  'out-dir': { type: 'string', default: '.kernelgate/report' },
  baseline: { type: 'string' },
  'base-root': { type: 'string' },
  'base-sha': { type: 'string' },
  doctor: { type: 'boolean', default: false },
  kind: { type: 'string', default: 'pr' },
  out: { type: 'string' },
} as const;

export const bench: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: BENCH_OPTIONS,
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
      // The doctor's checks of what ran: known failures in their output, binaries' CUDA runtime.
      findings: (ran, chosen) =>
        benchmarkFindings(
          ran,
          chosen,
          doctor?.environment ?? NO_DRIVER,
          config.rootDir,
          actionsExec(),
        ),
    }),
    'the benchmark results',
  );
  results.diagnostics.push(...slowPathChecks(results, names, config));
  const outDir = resolve(io.cwd, values['out-dir']);
  makeOutputDir(outDir, values['out-dir']);
  const resultsPath = join(outDir, 'results.json');
  writeOutput(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  io.stderr(`results: ${resultsPath}\n`);
  const baseline = values.baseline ? loadResults(resolve(io.cwd, values.baseline)) : undefined;
  return judgeAndPrint(results, baseline, config, kind, values.out, io);
};
