// Runs the deep checks on the GPU runner: compute-sanitizer's four tools over each target
// (sanitize.ts) and Nsight Compute over each headline target (profile.ts). Each tool's output is
// kept under the output folder and read into the results' `deep` section; a missing tool or one
// without permission is a diagnostic naming the tool and the fix.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Exec } from '../lib/index.js';
import type { Deep, Diagnostic } from '../results/index.js';
import { type DeepCheck, type DeepOptions, type DeepOutcome, DEEP_CHECKS } from './common.js';
import { runNcuCompare } from './compare.js';
import { ncuPlan, runNcus } from './profile.js';
import { runSanitizers } from './sanitize.js';
import { SANITIZER_TOOLS, type SanitizerTool } from './sanitizer.js';

export {
  DEEP_CHECKS,
  SANITIZER_CASE_TIMEOUT_S,
  type DeepCheck,
  type DeepOptions,
  type DeepOutcome,
} from './common.js';
export { MAX_SLOWER_PROFILED } from './profile.js';

/** `sanitizer` is all four sanitizer tools; names are comma-separated. */
export function parseDeepChecks(text: string, where: string): DeepCheck[] {
  const out = new Set<DeepCheck>();
  for (const raw of text.split(',').map((s) => s.trim())) {
    if (raw === '') continue;
    if (raw === 'sanitizer') SANITIZER_TOOLS.forEach((t) => out.add(t));
    else if ((DEEP_CHECKS as readonly string[]).includes(raw)) out.add(raw as DeepCheck);
    else {
      throw new Error(
        `${where}: unknown deep check '${raw}'; expected sanitizer, ncu, ncu-slower, ncu-compare, or any of ${SANITIZER_TOOLS.join(', ')}`,
      );
    }
  }
  return DEEP_CHECKS.filter((c) => out.has(c));
}

/** The tool's path: given, on PATH, under $CUDA_HOME/bin, or /usr/local/cuda/bin; else undefined. */
export function findTool(
  name: string,
  env: Record<string, string | undefined>,
  given?: string,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  if (given) return exists(given) ? given : undefined;
  const dirs = [
    ...(env.PATH ?? '').split(delimiter).filter(Boolean),
    ...(env.CUDA_HOME ? [join(env.CUDA_HOME, 'bin')] : []),
    '/usr/local/cuda/bin',
  ];
  for (const dir of dirs) {
    const path = join(dir, name);
    if (exists(path)) return path;
  }
  return undefined;
}

export const TOOL_FIX: Record<'compute-sanitizer' | 'ncu', string> = {
  'compute-sanitizer':
    "install the CUDA toolkit's compute-sanitizer (the cuda-sanitizer package of your CUDA version) and put its folder (usually /usr/local/cuda/bin) on PATH",
  ncu: 'install Nsight Compute (the nsight-compute package of your CUDA version, or the CUDA toolkit) and put its folder (e.g. /usr/local/cuda/bin or /opt/nvidia/nsight-compute/<version>) on PATH',
};

function missingTool(tool: 'compute-sanitizer' | 'ncu', given: string | undefined): Diagnostic {
  const where = given ? `at ${given}` : 'on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin';
  const what =
    tool === 'ncu'
      ? 'the Nsight Compute summaries'
      : 'the sanitizer checks (memcheck, racecheck, synccheck, initcheck)';
  return {
    level: 'error',
    code: 'deep.tool_missing',
    source: 'deep',
    message: `${tool} was not found ${where}: ${what} did not run`,
    fix: TOOL_FIX[tool],
  };
}

/** Runs the chosen checks; never throws for a tool's failure (that is a run's status). */
export async function runDeep(config: Config, o: DeepOptions, exec: Exec): Promise<DeepOutcome> {
  const env = o.env ?? process.env;
  const diagnostics: Diagnostic[] = [];
  const deep: Deep = {};
  const tools = o.checks.filter((c): c is SanitizerTool =>
    (SANITIZER_TOOLS as readonly string[]).includes(c),
  );
  if (tools.length) {
    const sanitizer = findTool('compute-sanitizer', env, o.sanitizerPath);
    if (!sanitizer) diagnostics.push(missingTool('compute-sanitizer', o.sanitizerPath));
    else deep.sanitizer = await runSanitizers(config, o, exec, tools, sanitizer);
  }
  const profiles = o.checks.includes('ncu') || o.checks.includes('ncu-slower');
  const compares = o.checks.includes('ncu-compare') && (o.compare ?? []).length > 0;
  if (profiles || compares) {
    const ncu = findTool('ncu', env, o.ncuPath);
    const targets = ncuPlan(config, o);
    if (!ncu) diagnostics.push({ ...missingTool('ncu', o.ncuPath), level: 'warning' });
    else {
      if (targets.length) deep.ncu = await runNcus(targets, o, exec, ncu, diagnostics);
      const denied = diagnostics.some((d) => d.code === 'deep.ncu_permission');
      if (compares && !denied) {
        deep.ncu_compare = await runNcuCompare(o.compare ?? [], o, exec, ncu, diagnostics);
      }
    }
  }
  return { deep, diagnostics };
}
