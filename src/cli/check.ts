// `kernelgate check`: kernelgate.yml and every kernel.yml checked without a GPU (src/pipeline/
// check.ts), each problem with its file, line, field, value and fix; exit 1 when there is one.
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { actionsExec, type Exec } from '../lib/index.js';
import { checkRepository, describeProblem } from '../pipeline/index.js';
import { InputError } from '../results/index.js';
import { type Command, EXIT_GATE_FAILED, EXIT_PASS, PACKAGE_ROOT } from './common.js';

export const CHECK_OPTIONS = {
  config: { type: 'string' },
  'no-python': { type: 'boolean', default: false },
} as const;

/** The repository's root and its kernelgate.yml, from --config (a folder or a file). */
function target(option: string | undefined, cwd: string): { root: string; configFile?: string } {
  const path = resolve(cwd, option ?? '.');
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) throw new InputError(`--config: no such file or folder: ${option ?? '.'}`);
  return stat.isFile() ? { root: dirname(path), configFile: path } : { root: path };
}

export function checkCommand(exec: Exec = actionsExec()): Command {
  return async (args, io) => {
    const { values } = parseArgs({
      args,
      options: CHECK_OPTIONS,
      strict: true,
      allowPositionals: false,
    });
    const { root, configFile } = target(values.config, io.cwd);
    const outcome = await checkRepository(root, {
      harnessRoot: PACKAGE_ROOT,
      ...(configFile !== undefined ? { configFile } : {}),
      ...(values['no-python'] ? {} : { exec }),
    });
    for (const p of outcome.problems) io.stdout(`${describeProblem(p)}\n`);
    for (const n of outcome.notes) io.stdout(`note: ${n}\n`);
    const errors = outcome.problems.filter((p) => p.level === 'error').length;
    const warnings = outcome.problems.length - errors;
    const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
    if (errors > 0) {
      io.stdout(
        `kernelgate check: ${counted(errors, 'problem')}, ${counted(warnings, 'warning')}\n`,
      );
      return EXIT_GATE_FAILED;
    }
    const kernels = outcome.kernels.length
      ? `${counted(outcome.kernels.length, 'kernel')} (${outcome.kernels.join(', ')})`
      : 'no kernel';
    io.stdout(
      `kernelgate check: ok: ${configFile !== undefined ? values.config : 'kernelgate.yml'} and ${kernels}, ${outcome.imported} of ${outcome.kernels.length} modules imported; ${counted(warnings, 'warning')}\n`,
    );
    return EXIT_PASS;
  };
}
