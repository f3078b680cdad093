// The kernelgate command line: a small subcommand dispatcher. `kernelgate report` judges a
// results file locally (compare → tiers → gate → render) and exits with the gate's verdict.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dashboardCommand, exportCommand, historyCommand } from '../history/index.js';
import { InputError } from '../results/index.js';
import { mergeCommand } from '../shard/index.js';
import { adapt, bench } from './adapt.js';
import { calibrateCommand } from './calibrate.js';
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
import { USAGE } from './usage.js';

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
  deep: deepCommand(),
  adapt,
  bench,
};

export class UsageError extends Error {}

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
