// Nsight Compute over each headline target (through python/kernelgate_harness/profile_one.py,
// one launch between the profiler's start and stop) and the SLOWER cases (ncu-slower), one at a
// time; the raw page of each report read into its summary.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Exec } from '../lib/index.js';
import type { Diagnostic, NcuRun } from '../results/index.js';
import {
  both,
  boxOf,
  boxText,
  type DeepOptions,
  harnessEnv,
  harnessLaunch,
  left,
  slug,
} from './common.js';
import { ncuMetricsArg, ncuProblem, NcuFormatError, parseNcuCsv, summarizeNcu } from './ncu.js';
import { caseParamsArg, type DeepTarget, ncuTargets } from './plan.js';

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
    ...harnessLaunch(o, 'kernelgate_harness.profile_one'),
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
export async function runNcu(
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
  const box = boxOf(o);
  const clock = box.clock;
  const t0 = clock();
  const base = { kernel: t.kernel, variant: t.variant, case: t.caseId };
  const seconds = () => Math.round((clock() - t0) * 10) / 10;
  const timed = () => {
    const timeoutS = left(box);
    return timeoutS === undefined ? {} : { timeoutS };
  };
  const before = left(box);
  if (before !== undefined && before <= 0) {
    return { ...base, status: 'skipped', message: `${boxText(box)} ran out before it` };
  }
  let r = await exec.run(ncu, ncuArgs(o, t, metrics, report), {
    cwd: o.workspace,
    env: harnessEnv(o),
    ...timed(),
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
      ...timed(),
    });
  }
  const profiled = both(r);
  writeFileSync(join(dir, `${slug(t)}.log`), profiled);
  if (r.timedOut) {
    return {
      ...base,
      status: 'error',
      message: `ncu was stopped after ${seconds()} s: ${boxText(box)} ran out`,
      seconds: seconds(),
    };
  }
  const problem = ncuProblem(profiled);
  if (r.exitCode !== 0 || problem) {
    const skipped = /\[kernelgate profile\] .*: skipped: (.*)/.exec(profiled);
    const why = skipped
      ? `the variant cannot run the case: ${skipped[1]}`
      : (problem ??
        `ncu exited with status ${r.exitCode}: ${profiled.split('\n').filter(Boolean).slice(-3).join(' / ')}`);
    return { ...base, status: 'error', message: why, seconds: seconds() };
  }
  return { ...base, ...(await readReport(exec, o, ncu, report)), seconds: seconds() };
}

/** The summary of a profiled target's report (its raw page, kept beside it as .csv). */
async function readReport(
  exec: Exec,
  o: DeepOptions,
  ncu: string,
  report: string,
): Promise<Omit<NcuRun, 'kernel' | 'variant' | 'case'>> {
  const imported = await exec.run(
    ncu,
    ['--import', `${report}.ncu-rep`, '--csv', '--page', 'raw', '--print-units', 'base'],
    { cwd: o.workspace },
  );
  writeFileSync(`${report}.csv`, imported.stdout);
  try {
    const summary = summarizeNcu(parseNcuCsv(imported.stdout));
    return {
      status: 'ok',
      device_kernel: summary.deviceKernel,
      launches: summary.launches,
      metrics: summary.metrics,
      ...(summary.stalls.length ? { stalls: summary.stalls } : {}),
      report: `${report}.ncu-rep`,
    };
  } catch (error) {
    if (!(error instanceof NcuFormatError)) throw error;
    return {
      status: 'error',
      message: `ncu --import ${report}.ncu-rep --csv --page raw: ${error.message}`,
    };
  }
}

/** ncu-slower profiles at most this many of the SLOWER cases. */
export const MAX_SLOWER_PROFILED = 6;

export const PERMISSION: Diagnostic = {
  level: 'warning',
  code: 'deep.ncu_permission',
  source: 'deep',
  message: `ncu could not read the GPU's performance counters (ERR_NVGPUCTRPERM): no Nsight Compute summary`,
  fix: 'run the job as root, or load the NVIDIA driver with NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)',
};

/** What ncu profiles: the headline cases (ncu) and the SLOWER ones (ncu-slower), each once. */
export function ncuPlan(config: Config, o: DeepOptions): DeepTarget[] {
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

/** The warning of a metric this GPU's ncu lacks, pushed once per metric the caller drops. */
export function metricDropped(diagnostics: Diagnostic[], what: 'summaries' | 'comparisons') {
  return (metric: string) =>
    diagnostics.push({
      level: 'warning',
      code: 'deep.ncu_metric_missing',
      source: 'deep',
      message: `ncu on this GPU has no metric ${metric}: the Nsight Compute ${what} go without it`,
      fix: 'a newer Nsight Compute, or a GPU that has the metric (ncu --query-metrics lists them)',
    });
}

export async function runNcus(
  targets: DeepTarget[],
  o: DeepOptions,
  exec: Exec,
  ncu: string,
  diagnostics: Diagnostic[],
): Promise<NcuRun[]> {
  const runs: NcuRun[] = [];
  const metrics = ncuMetricsArg(o.computeCapability).split(',');
  const dropped = metricDropped(diagnostics, 'summaries');
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
