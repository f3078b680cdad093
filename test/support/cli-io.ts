// The CLI's io for tests: what `runCli` writes to stdout and stderr, kept as text.
import type { CliIo } from '../../src/cli/index.js';

export function capture(cwd: string) {
  const out = { stdout: '', stderr: '' };
  const io: CliIo = {
    stdout: (t) => void (out.stdout += t),
    stderr: (t) => void (out.stderr += t),
    cwd,
  };
  return { out, io };
}
