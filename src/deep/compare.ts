// ncu-compare: Nsight Compute over the base revision and the head on one case of each moved
// variant (its largest change), the same launch of the same case in both checkouts, one run at a
// time within the time box (a run the box left no time for is `skipped`, saying so): the head
// first, then the base. The reports stay under
// <outDir>/compare/head/ncu/ and <outDir>/compare/base/ncu/ for the artifact.
import { join } from 'node:path';
import type { Exec } from '../lib/index.js';
import type { Diagnostic, NcuComparison, NcuRun } from '../results/index.js';
import type { DeepOptions } from './common.js';
import { ncuMetricsArg } from './ncu.js';
import type { CompareTarget } from './plan.js';
import { metricDropped, PERMISSION, runNcu } from './profile.js';

/** ncu-compare profiles at most this many variants (two runs each). */
export const MAX_COMPARED = 4;

const noPermission = (r: NcuRun) =>
  r.status === 'error' && /ERR_NVGPUCTRPERM/.test(r.message ?? '');

/** Where a comparison needs a base checkout and the run has none: said once, nothing profiled. */
export const NO_BASE: Diagnostic = {
  level: 'warning',
  code: 'deep.ncu_compare_no_base',
  source: 'deep',
  message:
    'ncu-compare needs the base revision checked out beside the head (a paired run): this run was not paired, so no Nsight Compute comparison',
  fix: "time the pull request against its base (input 'paired': auto or true), or the nightly against its last good run",
};

export async function runNcuCompare(
  targets: CompareTarget[],
  o: DeepOptions,
  exec: Exec,
  ncu: string,
  diagnostics: Diagnostic[],
): Promise<NcuComparison[]> {
  const base = o.base;
  if (base === undefined) {
    if (targets.length) diagnostics.push(NO_BASE);
    return [];
  }
  const metrics = ncuMetricsArg(o.computeCapability).split(',');
  const dropped = metricDropped(diagnostics, 'comparisons');
  const head: DeepOptions = { ...o, outDir: join(o.outDir, 'compare', 'head') };
  // The base arm: its checkout (its kernels' modules), its kernels folder, its own build records.
  const baseSide: DeepOptions = {
    ...o,
    workspace: base.root,
    kernelsDir: base.kernelsDir,
    outDir: join(o.outDir, 'compare', 'base'),
  };
  if (base.buildsPath !== undefined) baseSide.buildsPath = base.buildsPath;
  else delete baseSide.buildsPath;
  const out: NcuComparison[] = [];
  for (const t of targets.slice(0, MAX_COMPARED)) {
    const h = await runNcu(exec, head, ncu, t, metrics, dropped);
    const b = await runNcu(exec, baseSide, ncu, t, metrics, dropped);
    out.push({
      kernel: t.kernel,
      variant: t.variant,
      case: t.caseId,
      ratio: t.ratio,
      base: b,
      head: h,
    });
    if (noPermission(h) || noPermission(b)) {
      diagnostics.push(PERMISSION);
      break;
    }
  }
  return out;
}
