// The CLI's io for tests: what `runCli` writes to stdout and stderr, kept as text.
import { runCli, type CliIo } from '../../src/cli/index.js';

export function capture(cwd: string) {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    cwd,
  };
  return { out, io };
}

/** `runCli` in `cwd`, its exit status and what it wrote: `const cli = cliIn(dir); await cli('report', …)`. */
export function cliIn(cwd: string) {
  return async (...argv: string[]) => {
    const { out, io } = capture(cwd);
    const status = await runCli(argv, io);
    return { status, ...out };
  };
}
