// The kernelgate command line: a small subcommand dispatcher. `kernelgate report` judges a
// results file locally (compare → tiers → gate → render) and exits with the gate's verdict.
import { writeFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compare } from './compare.js';
import { loadConfig, type Config } from './config.js';
import { gate, type GateResult } from './gate.js';
import { renderReport } from './render.js';
import { InputError, loadResults } from './results.js';
import { evaluateTiers } from './tiers.js';

/** Exit statuses: the gate passed, the gate failed, the command could not run. */
export const EXIT_PASS = 0;
export const EXIT_GATE_FAILED = 1;
export const EXIT_USAGE = 2;

/** The repository (or installed package) root: src/cli.ts and dist/cli.js sit one level below. */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The built-in recorded run `kernelgate report` judges when given no --results: paths relative
 * to PACKAGE_ROOT, in this one place. Synthetic until real GPU runs replace them.
 */
export const RECORDED_RUN = {
  results: 'test/fixtures/recorded/pr/results.json',
  baseline: 'test/fixtures/recorded/push/results.json',
} as const;

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

type Command = (args: string[], io: CliIo) => Promise<number>;

const USAGE = `usage: kernelgate <command> [options]

commands:
  report   judge a results file against a baseline, render the report, print the verdict

kernelgate report [--results FILE] [--baseline FILE] [--config DIR_OR_FILE]
                  [--kind pr|nightly] [--out FILE]
  --results FILE        results JSON (kernelgate/results@1); default: the built-in recorded run
  --baseline FILE       baseline results JSON; default: the recorded baseline when --results is
                        not given, otherwise none (every case NEW)
  --config DIR_OR_FILE  repository root holding kernelgate.yml and kernels/, or a kernelgate.yml
                        (default: the current directory)
  --kind pr|nightly     which report to render (default: pr)
  --out FILE            write the full Markdown report there (default: standard output)

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
  if (values.kind !== 'pr' && values.kind !== 'nightly') {
    throw new UsageError(`--kind must be pr or nightly (got ${JSON.stringify(values.kind)})`);
  }
  const recorded = values.results === undefined;
  const resultsPath = recorded
    ? resolve(PACKAGE_ROOT, RECORDED_RUN.results)
    : resolve(io.cwd, values.results as string);
  const baselinePath =
    values.baseline !== undefined
      ? resolve(io.cwd, values.baseline)
      : recorded
        ? resolve(PACKAGE_ROOT, RECORDED_RUN.baseline)
        : undefined;

  const config = configFrom(values.config, io.cwd);
  const results = loadResults(resultsPath);
  const baseline = baselinePath ? loadResults(baselinePath) : undefined;
  const comparison = compare(results, baseline, config);
  const tiers = evaluateTiers(results, config);
  const verdict = gate(comparison, tiers, results, config);
  const rendered = renderReport({
    kind: values.kind,
    results,
    baseline,
    comparison,
    tiers,
    gate: verdict,
    config,
  });
  if (values.out) {
    writeFileSync(resolve(io.cwd, values.out), rendered.full);
    io.stdout(verdictText(verdict));
  } else {
    io.stdout(rendered.full);
    io.stderr(verdictText(verdict));
  }
  return verdict.verdict === 'pass' ? EXIT_PASS : EXIT_GATE_FAILED;
};

/** Subcommands by name; `run`, `build` and `doctor` join here. */
export const COMMANDS: Record<string, Command> = { report };

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
