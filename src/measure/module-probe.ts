// `kernelgate check`'s look into Python: each kernel module imported from the checkout by the
// harness's probe (python/kernelgate_harness/probe_modules.py, started as the harness is, through
// kernelgate_launch.py), which says its VARIANTS and what it lacks, or why it would not import.
// Nothing is run; no GPU is needed. No python, or a probe that fails, is said, not guessed around.
import { delimiter, join } from 'node:path';
import { type Exec, NOT_FOUND_EXIT_CODE } from '../lib/index.js';
import { launcherArgs } from './harness.js';

export interface ProbedModule {
  /** VARIANTS' names; null when the module has no VARIANTS dict */
  variants?: string[] | null;
  /** the names the harness uses that the module lacks */
  lacks?: string[];
  /** the import's error, its last line */
  error?: string;
  /** the module a ModuleNotFoundError names */
  missing_module?: string | null;
}

export type ModuleProbe =
  | { ran: true; torch: boolean; modules: Record<string, ProbedModule> }
  | { ran: false; why: string };

const MARKER = 'KERNELGATE_PROBE ';
const PROBE_TIMEOUT_S = 300;

export async function probeModules(options: {
  exec: Exec;
  python: string;
  /** kernelgate's own root: its python/ folder holds the harness */
  harnessRoot: string;
  /** the checkout the modules are imported from */
  workspace: string;
  modules: { name: string; module: string }[];
}): Promise<ModuleProbe> {
  const { exec, python, harnessRoot, workspace, modules } = options;
  const args = [
    ...launcherArgs(harnessRoot, 'kernelgate_harness.probe_modules'),
    ...modules.map((m) => `${m.name}=${m.module}`),
  ];
  const pythonPath = [join(harnessRoot, 'python'), process.env['PYTHONPATH']]
    .filter((p) => p !== undefined && p !== '')
    .join(delimiter);
  const run = await exec
    .run(python, args, {
      cwd: workspace,
      env: { PYTHONPATH: pythonPath },
      timeoutS: PROBE_TIMEOUT_S,
    })
    .catch((error: unknown) => ({
      exitCode: NOT_FOUND_EXIT_CODE,
      stdout: '',
      stderr: String(error),
    }));
  if (run.exitCode === NOT_FOUND_EXIT_CODE) {
    return { ran: false, why: `${python} not found (harness.python)` };
  }
  const line = run.stdout.split(/\r?\n/).find((l) => l.startsWith(MARKER));
  if (run.exitCode !== 0 || line === undefined) {
    const last = (run.stderr || run.stdout).trim().split(/\r?\n/).pop() ?? '';
    return { ran: false, why: `${python} could not run the probe (exit ${run.exitCode}): ${last}` };
  }
  const parsed = JSON.parse(line.slice(MARKER.length)) as {
    torch: boolean;
    modules: Record<string, ProbedModule>;
  };
  return { ran: true, torch: parsed.torch, modules: parsed.modules };
}
