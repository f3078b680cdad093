// `kernelgate check` and the action's first step: the repository's configuration checked before
// anything is built or measured. The static half (src/config/check.ts) and, where python runs,
// each kernel module imported by the harness's probe (src/measure/module-probe.ts): importable,
// the names the harness uses there, its VARIANTS those the manifest lists.
import {
  type ConfigProblem,
  checkStatic,
  type LoadedKernel,
  problemAt,
  type StaticCheck,
} from '../config/index.js';
import { join } from 'node:path';
import type { Exec } from '../lib/index.js';
import { type ModuleProbe, type ProbedModule, probeModules } from '../measure/index.js';
import { InputError, showValue } from '../results/index.js';

export interface CheckOutcome {
  problems: ConfigProblem[];
  /** what was not checked and why (no python, no torch) */
  notes: string[];
  /** the manifests that loaded */
  kernels: string[];
  /** the kernel modules the probe imported */
  imported: number;
}

export interface CheckOptions {
  configFile?: string;
  /** kernelgate's own root (the harness); with exec, the modules are probed */
  harnessRoot: string;
  /** runs python; absent: the modules are not imported (said in the notes) */
  exec?: Exec;
}

export async function checkRepository(root: string, options: CheckOptions): Promise<CheckOutcome> {
  const found = checkStatic(root, options.configFile);
  const problems = [...found.problems];
  const notes: string[] = [];
  const kernels = found.kernels.map((k) => k.manifest.name);
  let probe: ModuleProbe | undefined;
  if (options.exec === undefined) {
    notes.push('the kernel modules were not imported (--no-python)');
  } else if (found.kernels.length > 0) {
    probe = await probeModules({
      exec: options.exec,
      python: found.python,
      harnessRoot: options.harnessRoot,
      workspace: found.root,
      modules: found.kernels.map((k) => ({ name: k.manifest.name, module: k.manifest.module })),
    });
    if (!probe.ran) notes.push(`the kernel modules were not imported: ${probe.why}`);
  }
  for (const kernel of found.kernels) {
    const probed = probe?.ran ? probe.modules[kernel.manifest.name] : undefined;
    const ran = probe?.ran === true ? probe : undefined;
    problems.push(...moduleProblems(kernel, found, probed, ran?.torch ?? false, notes));
  }
  const imported = probe?.ran
    ? Object.values(probe.modules).filter((m) => m.error === undefined).length
    : 0;
  return { problems, notes, kernels, imported };
}

/** A kernel module as the probe found it, against its manifest. */
function moduleProblems(
  kernel: LoadedKernel,
  found: StaticCheck,
  probed: ProbedModule | undefined,
  torch: boolean,
  notes: string[],
): ConfigProblem[] {
  const at = (message: string, fix: string, level: 'error' | 'warning' = 'error') =>
    problemAt(kernel, found.root, { message, fix, level });
  const { manifest } = kernel;
  const unresolved = found.unresolvedModules.get(manifest.name);
  if (probed === undefined) return unresolved ? [unresolved] : [];
  if (probed.error !== undefined) {
    const own = probed.missing_module && manifest.module.startsWith(probed.missing_module);
    if (own && unresolved) return [unresolved];
    if (!own && probed.missing_module) {
      notes.push(
        `${kernel.file}: module ${manifest.module} not imported: ${probed.error}${torch ? '' : ' (torch is not installed for this python)'}; install what it needs to check its VARIANTS`,
      );
      return unresolved ? [unresolved] : [];
    }
    return [
      at(
        `module cannot be imported (got ${showValue(manifest.module)}: ${probed.error})`,
        unresolved?.fix ??
          `run python -c "import ${manifest.module}" in the repository and correct what it says`,
      ),
    ];
  }
  const problems: ConfigProblem[] = [];
  const lacks = (probed.lacks ?? []).filter((n) => n !== 'VARIANTS');
  if (lacks.length > 0) {
    problems.push(
      at(
        `module lacks ${lacks.join(', ')}, which the harness calls (got ${showValue(manifest.module)})`,
        'define them in the module (docs/kernel-modules.md, "The module\'s interface")',
      ),
    );
  }
  if (!Array.isArray(probed.variants)) {
    problems.push(
      at(
        `module has no VARIANTS dict (got ${showValue(manifest.module)})`,
        'define VARIANTS = {"name": factory, …} in the module, one entry per variant of the manifest',
      ),
    );
    return problems;
  }
  const inModule = probed.variants;
  manifest.variants.forEach((v, i) => {
    if (inModule.includes(v.name)) return;
    problems.push(
      at(
        `variants[${i}].name is not in the module's VARIANTS (got ${showValue(v.name)}; ${manifest.module}.VARIANTS has ${inModule.join(', ') || 'nothing'})`,
        `add ${showValue(v.name)} to VARIANTS in ${manifest.module}, or name one of its variants`,
      ),
    );
  });
  const listed = new Set(manifest.variants.map((v) => v.name));
  const extra = inModule.filter((n) => !listed.has(n));
  if (extra.length > 0) {
    problems.push(
      at(
        `variants does not list ${extra.join(', ')} of the module's VARIANTS: never run (got ${showValue(extra)})`,
        'add them to variants (role candidate or reference), or remove them from VARIANTS',
        'warning',
      ),
    );
  }
  return problems;
}

/** One problem as the user reads it: `file:line:col: message` and its fix below. */
export function describeProblem(p: ConfigProblem): string {
  const where = p.line !== undefined ? `${p.file}:${p.line}:${p.column ?? 1}` : p.file;
  return `${where}: ${p.level === 'warning' ? 'warning: ' : ''}${p.message}\n  fix: ${p.fix}`;
}

/** The check's errors as one InputError (each problem at its file and line), or undefined. */
export function checkFailure(outcome: CheckOutcome, root: string): InputError | undefined {
  // root: the repository the files are relative to (the annotations' paths are absolute)
  const errors = outcome.problems.filter((p) => p.level === 'error');
  if (errors.length === 0) return undefined;
  const lines = errors.map(describeProblem);
  const sites = errors.map((p, i) => ({
    file: join(root, p.file),
    ...(p.line !== undefined ? { line: p.line, column: p.column ?? 1 } : {}),
    message: lines[i]!,
  }));
  const head = `kernelgate check: ${errors.length} problem${errors.length === 1 ? '' : 's'} in the configuration (run \`kernelgate check\` to see them again):`;
  return new InputError([head, ...lines].join('\n'), lines, sites);
}

type StartCheckOptions = {
  harnessRoot: string;
  exec: Exec;
  log: { info(line: string): void; warning(line: string): void };
};

/**
 * The check as the first step of a measuring run (`kernelgate run`, the action), started, not
 * awaited: the promise settles with a function that logs its warnings and notes and throws its
 * problems as one InputError. measure() calls it after the doctor and before the build, so that
 * the check's Python probe (torch and the kernel modules imported: seconds) and the doctor's read
 * the machine at once, and nothing is built or timed unless the check passed. The promise never
 * rejects: a check that throws is the function's throw (so no rejection goes unhandled while the
 * doctor runs).
 */
export function startCheck(
  config: { rootDir: string; configFile: string | undefined },
  options: StartCheckOptions,
): Promise<() => void> {
  return checkRepository(config.rootDir, {
    harnessRoot: options.harnessRoot,
    exec: options.exec,
    ...(config.configFile !== undefined ? { configFile: config.configFile } : {}),
  }).then(
    (outcome) => () => {
      for (const p of outcome.problems) {
        if (p.level === 'warning') {
          options.log.warning(describeProblem(p).replace(': warning: ', ': '));
        }
      }
      for (const n of outcome.notes) options.log.info(`kernelgate check: ${n}`);
      const failure = checkFailure(outcome, config.rootDir);
      if (failure) throw failure;
    },
    (error: unknown) => () => {
      throw error;
    },
  );
}
