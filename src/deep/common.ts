// What the deep checks' runs share: the options, the harness's environment, a pool of runs at
// once, the names of the files each run writes, and the time box (DeepOptions.deadline).
import { delimiter, join } from 'node:path';
import type { ExecResult } from '../lib/index.js';
import type { Deep, Diagnostic } from '../results/index.js';
import type { CompareTarget, DeepTarget } from './plan.js';
import { SANITIZER_TOOLS } from './sanitizer.js';

export const DEEP_CHECKS = [...SANITIZER_TOOLS, 'ncu', 'ncu-slower', 'ncu-compare'] as const;
export type DeepCheck = (typeof DEEP_CHECKS)[number];

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
  /**
   * ncu-compare: one case of each variant the run judged SLOWER or FASTER (its largest change;
   * the caller judges: movedTargets), profiled in the head and in `base`
   */
  compare?: CompareTarget[];
  /** ncu-compare: the base revision's checkout, its kernels folder and build records */
  base?: { root: string; kernelsDir: string; buildsPath?: string };
  /** the tools, when not found on PATH or under CUDA_HOME */
  sanitizerPath?: string;
  ncuPath?: string;
  /** the parent's environment (tests) */
  env?: Record<string, string | undefined>;
  /** seconds now (tests) */
  clock?: () => number;
  /**
   * The time box: on `clock`, when the checks stop. A run in flight then is stopped (its process
   * group; said so in its status), a run not started is reported not checked; the results of the
   * runs that finished are kept.
   */
  deadline?: number;
  /** the time box's length in seconds, for the messages */
  timeBoxS?: number;
}

export interface DeepOutcome {
  deep: Deep;
  diagnostics: Diagnostic[];
}

/** A harness case may take this long under the sanitizer (it slows kernels 10-100×). */
export const SANITIZER_CASE_TIMEOUT_S = 900;

export async function pool<T>(items: T[], jobs: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  });
  await Promise.all(lanes);
}

export const slug = (t: DeepTarget) => `${t.kernel}-${t.variant}`.replace(/[^\w.-]+/g, '_');
export const both = (r: ExecResult) => `${r.stdout}${r.stdout && r.stderr ? '\n' : ''}${r.stderr}`;

/**
 * A module of the harness started by file (python/kernelgate_launch.py), as measuring starts it:
 * `python -m` would put the workspace first on sys.path, where a pull request's own
 * `kernelgate_harness/` shadows the action's (issue 26).
 */
export function harnessLaunch(o: DeepOptions, module: string): string[] {
  return [join(o.harnessRoot, 'python', 'kernelgate_launch.py'), module];
}

export function harnessEnv(o: DeepOptions): Record<string, string> {
  const parent = o.env ?? process.env;
  return {
    // The harness package alone from the action (python/); the workspace is not on the harness's
    // path (a sitecustomize.py of it would run there): the processes that run a kernel put it
    // first on theirs (worker.py, profile_one.py: checkout_on_path).
    PYTHONPATH: [join(o.harnessRoot, 'python'), parent.PYTHONPATH]
      .filter((p): p is string => Boolean(p))
      .join(delimiter),
    PYTHONUNBUFFERED: '1',
    // Each tensor its own allocation: the sanitizer then sees a write past a tensor's end (in
    // PyTorch's cached pool it lands in the pool's own memory and goes unseen).
    PYTORCH_NO_CUDA_MEMORY_CACHING: '1',
  };
}

/** The clock and the time box that the runs share (DeepOptions.deadline). */
export interface Box {
  clock: () => number;
  deadline?: number;
  /** its length, for the messages */
  seconds?: number;
}

export function boxOf(o: DeepOptions): Box {
  return {
    clock: o.clock ?? (() => Date.now() / 1000),
    ...(o.deadline === undefined ? {} : { deadline: o.deadline }),
    ...(o.timeBoxS === undefined ? {} : { seconds: o.timeBoxS }),
  };
}

export const left = (box: Box) =>
  box.deadline === undefined ? undefined : box.deadline - box.clock();
export const boxText = (box: Box) =>
  box.seconds === undefined ? 'the time box' : `the time box (${box.seconds} s)`;
