// Runs the deep checks on the GPU runner: compute-sanitizer's four tools over each target
// (through the harness: one variant, one case, one seed, no timing), and Nsight Compute over each
// headline target (through python/kernelgate_harness/profile_one.py, one launch between the profiler's start
// and stop). Each tool's output is kept under the output folder and read into the results' `deep`
// section; a missing tool or one without permission is a diagnostic naming the tool and the fix.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Exec, ExecResult } from '../lib/index.js';
import type { Deep, Diagnostic, NcuRun, SanitizerRun } from '../results/index.js';
import { ncuMetricsArg, ncuProblem, NcuFormatError, parseNcuCsv, summarizeNcu } from './ncu.js';
import { caseParamsArg, type DeepTarget, ncuTargets, sanitizerTargets } from './plan.js';
import { parseSanitizer, SANITIZER_TOOLS, type SanitizerTool } from './sanitizer.js';

export const DEEP_CHECKS = [...SANITIZER_TOOLS, 'ncu', 'ncu-slower'] as const;
export type DeepCheck = (typeof DEEP_CHECKS)[number];

/** `sanitizer` is all four sanitizer tools; names are comma-separated. */
export function parseDeepChecks(text: string, where: string): DeepCheck[] {
  const out = new Set<DeepCheck>();
  for (const raw of text.split(',').map((s) => s.trim())) {
    if (raw === '') continue;
    if (raw === 'sanitizer') SANITIZER_TOOLS.forEach((t) => out.add(t));
    else if ((DEEP_CHECKS as readonly string[]).includes(raw)) out.add(raw as DeepCheck);
    else {
      throw new Error(
        `${where}: unknown deep check '${raw}'; expected sanitizer, ncu, ncu-slower, or any of ${SANITIZER_TOOLS.join(', ')}`,
      );
    }
  }
  return DEEP_CHECKS.filter((c) => out.has(c));
}

export interface DeepOptions {
  /** the repository (the harness runs here) */
  workspace: string;
  /** the action's own root: its python/ folder holds the `kernelgate_harness` package */
  harnessRoot: string;
  python: string;
  kernelsDir: string;
  /** every log, the sanitizer's results and the .ncu-rep files go under it */
  outDir: string;
  checks: DeepCheck[];
  only?: string[];
  buildsPath?: string;
  /** the GPU's compute capability (Hopper's tensor metric on 9.x) */
  computeCapability?: string;
  /** sanitizer runs at once (ncu runs one at a time) */
  jobs?: number;
  /**
   * ncu-slower: the cases this run judged SLOWER, largest change first (the caller judges:
   * slowerTargets); the first MAX_SLOWER_PROFILED are profiled
   */
  slower?: DeepTarget[];
  /** the tools, when not found on PATH or under CUDA_HOME */
  sanitizerPath?: string;
  ncuPath?: string;
  /** the parent's environment (tests) */
  env?: Record<string, string | undefined>;
  /** seconds now (tests) */
  clock?: () => number;
}

export interface DeepOutcome {
  deep: Deep;
  diagnostics: Diagnostic[];
}

/** A harness case may take this long under the sanitizer (it slows kernels 10-100×). */
export const SANITIZER_CASE_TIMEOUT_S = 900;

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

async function pool<T>(items: T[], jobs: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  });
  await Promise.all(lanes);
}

const slug = (t: DeepTarget) => `${t.kernel}-${t.variant}`.replace(/[^\w.-]+/g, '_');
const both = (r: ExecResult) => `${r.stdout}${r.stdout && r.stderr ? '\n' : ''}${r.stderr}`;

function harnessEnv(o: DeepOptions): Record<string, string> {
  const parent = o.env ?? process.env;
  return {
    // the harness package alone from the action (python/), the kernels from the workspace
    PYTHONPATH: [join(o.harnessRoot, 'python'), o.workspace, parent.PYTHONPATH]
      .filter((p): p is string => Boolean(p))
      .join(delimiter),
    PYTHONUNBUFFERED: '1',
    // Each tensor its own allocation: the sanitizer then sees a write past a tensor's end (in
    // PyTorch's cached pool it lands in the pool's own memory and goes unseen).
    PYTORCH_NO_CUDA_MEMORY_CACHING: '1',
  };
}

/** What the harness recorded of the target's case, when it did not run it (skipped, error). */
function harnessCaseProblem(resultsPath: string, t: DeepTarget): string | undefined {
  if (!existsSync(resultsPath)) return 'the harness wrote no results';
  try {
    const doc = JSON.parse(readFileSync(resultsPath, 'utf8')) as {
      cases?: { kernel: string; variant: string; case: string; status: string; reason?: string }[];
    };
    const c = doc.cases?.find(
      (x) => x.kernel === t.kernel && x.variant === t.variant && x.case === t.caseId,
    );
    if (!c) return `the harness has no result for ${t.kernel}/${t.variant} ${t.caseId}`;
    if (c.status === 'skipped') return `the harness skipped it: ${c.reason ?? ''}`;
    return undefined;
  } catch (error) {
    return `the harness's results cannot be read: ${String(error)}`;
  }
}

async function runSanitizer(
  exec: Exec,
  o: DeepOptions,
  tool: SanitizerTool,
  sanitizer: string,
  t: DeepTarget,
): Promise<SanitizerRun> {
  const dir = join(o.outDir, 'sanitizer', tool);
  mkdirSync(dir, { recursive: true });
  const results = join(dir, `${slug(t)}.json`);
  const args = [
    '--tool',
    tool,
    '--target-processes',
    'all',
    o.python,
    '-m',
    'kernelgate_harness',
    '--kernels',
    o.kernelsDir,
    '--out',
    results,
    '--only',
    t.kernel,
    '--variants',
    t.variant,
    '--case-params',
    caseParamsArg(t.params),
    '--no-timing',
    '--seeds',
    '1',
    '--gpus',
    '1',
    '--timeout-per-case',
    String(SANITIZER_CASE_TIMEOUT_S),
    ...(o.buildsPath ? ['--builds', o.buildsPath] : []),
  ];
  const clock = o.clock ?? (() => Date.now() / 1000);
  const t0 = clock();
  const r = await exec.run(sanitizer, args, { cwd: o.workspace, env: harnessEnv(o) });
  const seconds = Math.round((clock() - t0) * 10) / 10;
  const output = both(r);
  writeFileSync(join(dir, `${slug(t)}.log`), output);
  const parsed = parseSanitizer(output);
  const base = {
    tool,
    kernel: t.kernel,
    variant: t.variant,
    case: t.caseId,
    seconds,
    command: [sanitizer, ...args].join(' '),
  };
  const findings = parsed.findings.length ? { findings: parsed.findings } : {};
  if (parsed.errors === undefined) {
    const tail = output.split('\n').filter(Boolean).slice(-8).join('\n');
    return {
      ...base,
      status: 'error',
      errors: 0,
      ...findings,
      first_lines:
        `${tool} printed no ERROR SUMMARY (exit status ${r.exitCode}); the output's last lines:\n${tail}`.slice(
          0,
          2000,
        ),
    };
  }
  const problem = parsed.errors === 0 ? harnessCaseProblem(results, t) : undefined;
  return {
    ...base,
    status: parsed.errors > 0 ? 'findings' : problem ? 'error' : 'clean',
    errors: parsed.errors,
    ...findings,
    ...(problem
      ? { first_lines: `${tool} saw nothing of the variant: ${problem}` }
      : parsed.firstLines
        ? { first_lines: parsed.firstLines }
        : {}),
  };
}

function ncuArgs(o: DeepOptions, t: DeepTarget, metrics: string[], report: string): string[] {
  return [
    '--target-processes',
    'all',
    '--profile-from-start',
    'off',
    '--metrics',
    metrics.join(','),
    '--export',
    report,
    '--force-overwrite',
    o.python,
    '-m',
    'kernelgate_harness.profile_one',
    '--kernels',
    o.kernelsDir,
    '--kernel',
    t.kernel,
    '--variant',
    t.variant,
    '--case-params',
    caseParamsArg(t.params),
    ...(o.buildsPath ? ['--builds', o.buildsPath] : []),
  ];
}

/**
 * Profiles one target. `metrics` is shared by the targets: a metric this GPU's ncu does not know
 * ("Failed to find metric") is dropped from it, said once through `dropped`, and the target is
 * profiled again without it.
 */
async function runNcu(
  exec: Exec,
  o: DeepOptions,
  ncu: string,
  t: DeepTarget,
  metrics: string[],
  dropped: (metric: string) => void,
): Promise<NcuRun> {
  const dir = join(o.outDir, 'ncu');
  mkdirSync(dir, { recursive: true });
  const report = join(dir, slug(t));
  const clock = o.clock ?? (() => Date.now() / 1000);
  const t0 = clock();
  const base = { kernel: t.kernel, variant: t.variant, case: t.caseId };
  const seconds = () => Math.round((clock() - t0) * 10) / 10;
  let r = await exec.run(ncu, ncuArgs(o, t, metrics, report), {
    cwd: o.workspace,
    env: harnessEnv(o),
  });
  for (let tries = 0; tries < 3; tries++) {
    const unknown = /==ERROR== Failed to find metric (\S+)/.exec(both(r))?.[1];
    const at = unknown === undefined ? -1 : metrics.indexOf(unknown);
    if (at < 1) break; // none, or the duration itself: nothing to profile without it
    metrics.splice(at, 1);
    dropped(unknown as string);
    r = await exec.run(ncu, ncuArgs(o, t, metrics, report), {
      cwd: o.workspace,
      env: harnessEnv(o),
    });
  }
  const profiled = both(r);
  writeFileSync(join(dir, `${slug(t)}.log`), profiled);
  const problem = ncuProblem(profiled);
  if (r.exitCode !== 0 || problem) {
    const skipped = /\[kernelgate profile\] .*: skipped: (.*)/.exec(profiled);
    const why = skipped
      ? `the variant cannot run the case: ${skipped[1]}`
      : (problem ??
        `ncu exited with status ${r.exitCode}: ${profiled.split('\n').filter(Boolean).slice(-3).join(' / ')}`);
    return { ...base, status: 'error', message: why, seconds: seconds() };
  }
  const imported = await exec.run(
    ncu,
    ['--import', `${report}.ncu-rep`, '--csv', '--page', 'raw', '--print-units', 'base'],
    { cwd: o.workspace },
  );
  writeFileSync(join(dir, `${slug(t)}.csv`), imported.stdout);
  try {
    const summary = summarizeNcu(parseNcuCsv(imported.stdout));
    return {
      ...base,
      status: 'ok',
      device_kernel: summary.deviceKernel,
      metrics: summary.metrics,
      ...(summary.stalls.length ? { stalls: summary.stalls } : {}),
      report: `${report}.ncu-rep`,
      seconds: seconds(),
    };
  } catch (error) {
    if (!(error instanceof NcuFormatError)) throw error;
    return {
      ...base,
      status: 'error',
      message: `ncu --import ${report}.ncu-rep --csv --page raw: ${error.message}`,
      seconds: seconds(),
    };
  }
}

/** ncu-slower profiles at most this many of the SLOWER cases. */
export const MAX_SLOWER_PROFILED = 6;

const PERMISSION: Diagnostic = {
  level: 'warning',
  code: 'deep.ncu_permission',
  source: 'deep',
  message: `ncu could not read the GPU's performance counters (ERR_NVGPUCTRPERM): no Nsight Compute summary`,
  fix: 'run the job as root, or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)',
};

/** What ncu profiles: the headline cases (ncu) and the SLOWER ones (ncu-slower), each once. */
function ncuPlan(config: Config, o: DeepOptions): DeepTarget[] {
  const targets = [
    ...(o.checks.includes('ncu') ? ncuTargets(config, o.only) : []),
    ...(o.checks.includes('ncu-slower') ? (o.slower ?? []).slice(0, MAX_SLOWER_PROFILED) : []),
  ];
  const seen = new Set<string>();
  return targets.filter((t) => {
    const key = `${t.kernel}/${t.variant} ${t.caseId}`;
    return !seen.has(key) && Boolean(seen.add(key));
  });
}

async function runSanitizers(
  config: Config,
  o: DeepOptions,
  exec: Exec,
  tools: SanitizerTool[],
  sanitizer: string,
): Promise<SanitizerRun[]> {
  const targets = sanitizerTargets(config, o.only);
  const jobs = tools.flatMap((tool) => targets.map((t) => ({ tool, t })));
  const runs = new Map<number, SanitizerRun>();
  await pool(
    jobs.map((j, i) => ({ ...j, i })),
    o.jobs ?? 4,
    async ({ tool, t, i }) => {
      runs.set(i, await runSanitizer(exec, o, tool, sanitizer, t));
    },
  );
  return jobs.map((_, i) => runs.get(i) as SanitizerRun);
}

async function runNcus(
  targets: DeepTarget[],
  o: DeepOptions,
  exec: Exec,
  ncu: string,
  diagnostics: Diagnostic[],
): Promise<NcuRun[]> {
  const runs: NcuRun[] = [];
  const metrics = ncuMetricsArg(o.computeCapability).split(',');
  const dropped = (metric: string) =>
    diagnostics.push({
      level: 'warning',
      code: 'deep.ncu_metric_missing',
      source: 'deep',
      message: `ncu on this GPU has no metric ${metric}: the Nsight Compute summaries go without it`,
      fix: 'a newer Nsight Compute, or a GPU that has the metric (ncu --query-metrics lists them)',
    });
  for (const t of targets) {
    const run = await runNcu(exec, o, ncu, t, metrics, dropped);
    runs.push(run);
    if (run.status === 'error' && /ERR_NVGPUCTRPERM/.test(run.message ?? '')) {
      diagnostics.push(PERMISSION);
      break; // every other target would fail the same way
    }
  }
  return runs;
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
  if (o.checks.includes('ncu') || o.checks.includes('ncu-slower')) {
    const ncu = findTool('ncu', env, o.ncuPath);
    const targets = ncuPlan(config, o);
    if (!ncu) diagnostics.push({ ...missingTool('ncu', o.ncuPath), level: 'warning' });
    else if (targets.length) deep.ncu = await runNcus(targets, o, exec, ncu, diagnostics);
  }
  return { deep, diagnostics };
}
