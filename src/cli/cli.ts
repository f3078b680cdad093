// The kernelgate command line: a small subcommand dispatcher. `kernelgate report` judges a
// results file locally (compare → tiers → gate → render) and exits with the gate's verdict.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OutputError } from '../lib/index.js';
import { InputError } from '../results/index.js';
import { dashboardCommand } from './dashboard.js';
import { exportCommand } from './export.js';
import { historyCommand } from './history.js';
import { mergeCommand } from './merge.js';
import { adapt, bench } from './adapt.js';
import { calibrateCommand } from './calibrate.js';
import { checkCommand } from './check.js';
import { deepCommand } from './deep.js';
import {
  type CliIo,
  type Command,
  configFrom,
  EXIT_PASS,
  EXIT_USAGE,
  judgeAndPrint,
} from './common.js';
import { build, doctor, run } from './measure-commands.js';
import { report } from './report.js';
import { commandUsage, overview } from './usage.js';

/** Subcommands by name. */
export const COMMANDS: Record<string, Command> = {
  report,
  check: checkCommand(),
  run,
  doctor,
  build,
  calibrate: calibrateCommand,
  export: exportCommand,
  dashboard: dashboardCommand,
  history: historyCommand,
  merge: (args, io) => mergeCommand(args, io, { configFrom, judgeAndPrint }),
  deep: deepCommand(),
  adapt,
  bench,
};

export class UsageError extends Error {}

/** `--help` or `-h` among a command's arguments (before a `--`). */
function asksHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** Runs the command line; returns the exit status instead of exiting (tests call this). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first, ...afterFirst] = argv;
  if (first === undefined || first === '--help' || first === '-h') {
    (first === undefined ? io.stderr : io.stdout)(overview());
    return first === undefined ? EXIT_USAGE : EXIT_PASS;
  }
  // `kernelgate help` is the overview, `kernelgate help report` report's usage
  const [name, rest, help] =
    first === 'help' ? [afterFirst[0], [], true] : [first, afterFirst, asksHelp(afterFirst)];
  if (name === undefined) {
    io.stdout(overview());
    return EXIT_PASS;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`kernelgate: unknown command ${JSON.stringify(name)}\n\n${overview()}`);
    return EXIT_USAGE;
  }
  if (help) {
    io.stdout(commandUsage(name) ?? overview());
    return EXIT_PASS;
  }
  try {
    return await command(rest, io);
  } catch (err) {
    // Argument errors from parseArgs carry a code; input and output errors are ours. Anything
    // else is a bug and keeps its stack.
    const code = (err as { code?: string }).code;
    const ours = err instanceof InputError || err instanceof OutputError;
    if (ours || err instanceof UsageError || code?.startsWith('ERR_PARSE_ARGS')) {
      const hint = ours ? '' : `\n\n${commandUsage(name) ?? overview()}`;
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
