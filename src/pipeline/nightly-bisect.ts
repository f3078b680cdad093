// The nightly's bisection on the runner (bisect.ts is the search): each variant tonight's pairs
// found SLOWER is traced to its first bad commit between the last good run and tonight, each step
// a paired run of that variant's slowed cases (the commit in a worktree against the good base).
// What it found is a diagnostic of tonight's results: the nightly report names the commit.
import { join, relative } from 'node:path';
import { loadConfig, type Config } from '../config/index.js';
import { compare } from '../judge/index.js';
import { median } from '../lib/index.js';
import { materialiseBase, measure, type MeasureDeps } from '../measure/index.js';
import type { Diagnostic, KernelgateResults } from '../results/index.js';
import {
  bisect,
  type BisectStep,
  commitsBetween,
  describeBisect,
  type StepVerdict,
  treeAt,
} from './bisect.js';
import { bisectMemoryPath, knownSteps, rememberStep, searchKey } from './bisect-memory.js';
import { storedBalance } from './balance.js';
import type { FullRunOptions } from './run.js';

/** Seconds the nightly may spend bisecting, all variants together (FullRunOptions.bisect). */
export const DEFAULT_BISECT_TIME_BOX_S = 1200;

export interface SlowedVariant {
  kernel: string;
  variant: string;
  /** the case ids its pairs found SLOWER */
  cases: string[];
}

/** Variants whose pairs tonight found SLOWER (controls aside), with their slowed cases. */
export function slowedVariants(results: KernelgateResults, config: Config): SlowedVariant[] {
  const byVariant = new Map<string, SlowedVariant>();
  for (const c of compare(results, undefined, config).cases) {
    if (c.method !== 'paired' || c.perf !== 'SLOWER' || c.control !== undefined) continue;
    const key = `${c.kernel}/${c.variant}`;
    const v = byVariant.get(key) ?? { kernel: c.kernel, variant: c.variant, cases: [] };
    v.cases.push(c.caseId);
    byVariant.set(key, v);
  }
  return [...byVariant.values()];
}

/** A step's verdict from its pairs: bad when most slowed cases are SLOWER again, good when none is. */
export function stepVerdict(cases: { perf: string; ratio?: number }[]): {
  verdict: StepVerdict;
  detail: string;
} {
  const n = cases.length;
  const slower = cases.filter((c) => c.perf === 'SLOWER').length;
  const same = cases.filter((c) => c.perf === 'SAME').length;
  const ratios = cases.map((c) => c.ratio).filter((r): r is number => r !== undefined);
  const at = ratios.length ? `, median ×${median(ratios).toFixed(4)}` : '';
  const detail = `SLOWER on ${slower} of ${n} case${n === 1 ? '' : 's'}${at}`;
  if (n === 0) return { verdict: 'unknown', detail: 'no case was timed' };
  if (2 * slower > n) return { verdict: 'bad', detail };
  if (slower === 0 && 2 * same >= n) return { verdict: 'good', detail };
  return { verdict: 'unknown', detail };
}

interface Night {
  options: FullRunOptions;
  deps: MeasureDeps;
  good: string;
  deadlineMs: number;
}

/** One step: the commit checked out in a worktree, the variant's slowed cases paired against the good base. */
async function measureStep(night: Night, slowed: SlowedVariant, sha: string): Promise<BisectStep> {
  const { options, deps } = night;
  const ws = options.workspace;
  const log = (line: string) => deps.log.info(line);
  const at = await materialiseBase(ws, sha, deps.exec, {
    dir: join(ws, '.kernelgate', 'bisect'),
    log,
  });
  const base = await materialiseBase(ws, night.good, deps.exec, {
    ...(options.branch !== undefined ? { ref: options.branch } : {}),
    log,
  });
  if (!at.ok || !base.ok) {
    return { sha, verdict: 'unknown', detail: !at.ok ? at.reason : base.ok ? '' : base.reason };
  }
  deps.log.info(`kernelgate: bisect: ${slowed.kernel}/${slowed.variant} at ${sha.slice(0, 12)}`);
  const m = await measure(
    {
      config: loadConfig(at.base.root),
      workspace: at.base.root,
      harnessRoot: options.harnessRoot,
      outDir: join(options.outDir, `bisect-${sha.slice(0, 12)}`),
      only: [slowed.kernel],
      buildCacheDir: options.buildCacheDir ?? join(ws, '.kernelgate', 'build'),
      base: base.base,
      harnessArgs: ['--variants', slowed.variant],
      // On several GPUs the step's lanes are balanced by the stored run tonight's was.
      balance: storedBalance(options, deps.log),
      selectCases: async () => slowed.cases.map((c) => `${slowed.kernel}/${c}`),
      ...(options.harnessEnv !== undefined ? { harnessEnv: options.harnessEnv } : {}),
    },
    deps,
  );
  const judged = compare(m.results, undefined, options.config).cases.filter(
    (c) => c.kernel === slowed.kernel && c.variant === slowed.variant && c.method === 'paired',
  );
  return { sha, ...stepVerdict(judged) };
}

/**
 * Bisects each slowed variant of tonight's paired run, within one time box; returns one
 * diagnostic per variant (what it found, or the range it narrowed the search to).
 */
export async function bisectNight(
  options: FullRunOptions,
  deps: MeasureDeps,
  results: KernelgateResults,
  timeBoxS: number,
): Promise<Diagnostic[]> {
  const good = results.run.paired_base?.git_sha;
  if (good === undefined) return [];
  const slowed = slowedVariants(results, options.config);
  if (slowed.length === 0) return [];
  const now = deps.now ?? Date.now;
  const night: Night = { options, deps, good, deadlineMs: now() + timeBoxS * 1000 };
  const ws = options.workspace;
  const commits = await commitsBetween(ws, good, 'HEAD', deps.exec);
  const memory = bisectMemoryPath(options.buildCacheDir ?? join(ws, '.kernelgate', 'build'));
  const log = (line: string) => deps.log.info(line);
  const found: Diagnostic[] = [];
  for (const v of slowed) {
    const dir = options.config.kernels.find((k) => k.manifest.name === v.kernel)?.dir;
    const path = dir === undefined ? `kernels/${v.kernel}` : relative(ws, dir);
    const key = searchKey(good, `${v.kernel}/${v.variant}`);
    const known = knownSteps(memory, key, log);
    if (known.size) {
      log(
        `kernelgate: bisect: ${v.kernel}/${v.variant}: going on from ${known.size} step(s) an earlier night measured against ${good.slice(0, 12)}`,
      );
    }
    const outcome = await bisect({
      commits,
      fingerprint: (sha) => treeAt(ws, sha, path, deps.exec),
      goodFingerprint: await treeAt(ws, good, path, deps.exec),
      measure: async (sha) => {
        const step = await measureStep(night, v, sha);
        rememberStep(memory, key, step, log);
        return step;
      },
      outOfTime: () => now() >= night.deadlineMs,
      known,
    });
    const message = describeBisect(`${v.kernel}/${v.variant}`, outcome);
    deps.log.info(`kernelgate: bisect: ${message}`);
    found.push({
      level: 'warning',
      code: 'nightly.bisect',
      message,
      source: 'harness',
      kernel: v.kernel,
      variant: v.variant,
    });
  }
  return found;
}
