// A full run on the GPU runner: for a pull request, the base revision checked out beside it (paired
// A/B); measure (doctor → build → harness); pick the stored baseline the mode calls for. Trusted
// runs are stored as the branch's newest baseline only after the gate has judged them.
import { existsSync, writeFileSync } from 'node:fs';
import {
  explicitBaseline,
  type BaselineStore,
  type SaveContext,
  type StoredBaseline,
  StoreError,
} from '../store/index.js';
import { materialiseBase } from '../measure/index.js';
import { lastGoodBase } from './nightly-base.js';
import { type AncestryCheck, ancestorBaseline } from './pr-baseline.js';
import { storedBalance } from './balance.js';
import { bisectNight } from './nightly-bisect.js';
import { measure, type MeasureDeps, type MeasureOptions } from '../measure/index.js';
import type { KernelgateResults } from '../results/index.js';

export type RunMode = 'pr' | 'push' | 'schedule';

export interface FullRunOptions extends MeasureOptions {
  mode: RunMode;
  /** the branch this run measured (push, schedule) */
  branch: string | undefined;
  /** a pull request's base branch: its newest trusted results are the baseline */
  baseBranch: string | undefined;
  store: BaselineStore;
  /** a results file given explicitly instead of the store's */
  baselinePath: string | undefined;
  /** trusted runs of a branch (push, schedule) become its newest baseline, once the gate passed */
  saveBaseline: boolean;
  /**
   * the pull request's base commit: when set, every case is timed against it in this run. `root`:
   * a checkout of it that already exists (else a git worktree is made at `dir`).
   */
  pairedBase?: { sha: string; ref?: string; dir?: string; root?: string };
  /**
   * The nightly: time this commit beside the newest good stored run of `branch` on this GPU model
   * (paired A/B against the last good night or push); without one, the stored baseline alone.
   */
  pairedWithLastGood?: boolean;
  /** each git command's deadline in seconds (the base revision's fetch); default 120 */
  gitTimeoutS?: number;
  /**
   * a pull request's base commit (pull_request.base.sha), also when it is not timed beside the
   * head: its nearest stored ancestor is the stored baseline (pr-baseline.ts)
   */
  baseSha?: string;
  /**
   * With pairedWithLastGood: seconds the night may spend tracing each variant its pairs found
   * SLOWER to its first bad commit (nightly-bisect.ts); 0 or unset: no bisection.
   */
  bisectTimeBoxS?: number;
}

export interface FullRun {
  results: KernelgateResults;
  resultsPath: string;
  baseline: StoredBaseline | undefined;
  /** where this run's results would be stored as a baseline: storeBaseline() does it after the gate */
  pendingBaseline: { store: BaselineStore; branch: string; sku: string } | undefined;
  /** said in the log and the report when there is nothing to compare with */
  notes: string[];
}

export async function fullRun(options: FullRunOptions, deps: MeasureDeps): Promise<FullRun> {
  const notes: string[] = [];
  let base: MeasureOptions['base'];
  if (options.pairedBase?.root !== undefined) {
    const { root, sha, ref } = options.pairedBase;
    if (existsSync(root)) base = { root, sha, ...(ref !== undefined ? { ref } : {}) };
    else notes.push(`Paired A/B is off for this run: the base checkout ${root} does not exist.`);
  } else if (options.pairedBase !== undefined) {
    const got = await materialiseBase(options.workspace, options.pairedBase.sha, deps.exec, {
      ...(options.pairedBase.dir !== undefined ? { dir: options.pairedBase.dir } : {}),
      ...(options.pairedBase.ref !== undefined ? { ref: options.pairedBase.ref } : {}),
      ...(options.gitTimeoutS !== undefined ? { timeoutS: options.gitTimeoutS } : {}),
      log: (line) => deps.log.info(line),
    });
    if (got.ok) base = got.base;
    else {
      notes.push(
        `Paired A/B is off for this run: ${got.reason}. Every case is judged against the stored baseline.`,
      );
    }
  }
  const resolveBase =
    base === undefined && options.pairedBase === undefined && options.pairedWithLastGood
      ? nightlyBase(options, deps)
      : undefined;
  const measured = await measure(
    {
      ...options,
      ...(base !== undefined ? { base } : {}),
      skipIdentical: skipsIdentical(options),
      ...(resolveBase !== undefined ? { resolveBase } : {}),
      balance: storedBalance(options, deps.log),
    },
    deps,
  );
  await bisected(options, deps, measured);
  const baseSha = options.mode === 'pr' ? (options.baseSha ?? options.pairedBase?.sha) : undefined;
  const ancestry =
    baseSha === undefined
      ? undefined
      : {
          baseSha,
          workspace: options.workspace,
          exec: deps.exec,
          ...(options.gitTimeoutS !== undefined ? { gitTimeoutS: options.gitTimeoutS } : {}),
        };
  return withStoredBaseline({ ...options, ancestry }, measured, notes, deps.log);
}

/**
 * Whether variants identical in base and head go untimed: only a pull request's run (the CLI's
 * `--kind pr` says so itself), never one that may be stored, and as kernelgate.yml's
 * run.skip_identical says (default true). Push and nightly runs are history: they time everything.
 */
export function skipsIdentical(options: FullRunOptions): boolean {
  const pullRequest = options.skipIdentical ?? options.mode === 'pr';
  return pullRequest && !options.saveBaseline && options.config.run.skipIdentical;
}

/** The nightly's slowed variants traced to their commits, written into its results. */
async function bisected(
  options: FullRunOptions,
  deps: MeasureDeps,
  measured: { results: KernelgateResults; resultsPath: string },
): Promise<void> {
  const box = options.bisectTimeBoxS ?? 0;
  if (!options.pairedWithLastGood || box <= 0) return;
  const now = deps.now ?? Date.now;
  const started = now();
  const found = await bisectNight(options, deps, measured.results, box);
  if (found.length === 0) return;
  const { results } = measured;
  results.diagnostics.push(...found);
  results.run.stage_seconds = { ...results.run.stage_seconds, bisect: (now() - started) / 1000 };
  writeFileSync(measured.resultsPath, JSON.stringify(results, null, 2) + '\n');
}

/**
 * The nightly's base, found once the doctor has named the GPU: the newest good stored run of the
 * branch on that model, checked out as a worktree. Without one, a note says why the night is
 * judged against the stored baseline alone.
 */
function nightlyBase(
  options: FullRunOptions,
  deps: MeasureDeps,
): NonNullable<MeasureOptions['resolveBase']> {
  return async (environment) => {
    const unpaired = (why: string) => ({
      note: `The nightly is not paired: ${why}. Every case is judged against the stored baseline.`,
    });
    if (options.branch === undefined) return unpaired('the branch of this run is not known');
    const key = { branch: options.branch, sku: environment.gpu.sku ?? 'unknown' };
    let found;
    try {
      found = await lastGoodBase(options.store, key, options.workspace, deps.exec);
    } catch (error) {
      return unpaired(`the stored runs could not be read (${(error as Error).message})`);
    }
    for (const line of found.passedOver)
      deps.log.info(`kernelgate: nightly base: passed over ${line}`);
    if (!found.ok) return unpaired(found.reason);
    deps.log.info(`kernelgate: tonight is timed beside ${found.base.line}`);
    const got = await materialiseBase(options.workspace, found.base.sha, deps.exec, {
      ref: options.branch,
      ...(options.gitTimeoutS !== undefined ? { timeoutS: options.gitTimeoutS } : {}),
      log: (line) => deps.log.info(line),
    });
    return got.ok ? { base: got.base } : unpaired(got.reason);
  };
}

/**
 * A run's results (measured here, or by an earlier step) with the stored baseline its mode calls
 * for and, for a trusted run, where it will be stored after the gate.
 */
export async function withStoredBaseline(
  options: Pick<
    FullRunOptions,
    'mode' | 'branch' | 'baseBranch' | 'store' | 'baselinePath' | 'saveBaseline'
  > & {
    /** a pull request's base commit and a checkout: the stored baseline by ancestry */
    ancestry?: AncestryCheck | undefined;
  },
  measured: { results: KernelgateResults; resultsPath: string },
  notes: string[],
  log: Pick<MeasureDeps['log'], 'warning'> & Partial<Pick<MeasureDeps['log'], 'info'>>,
): Promise<FullRun> {
  const sku = measured.results.environment.gpu.sku ?? 'unknown';

  let baseline: StoredBaseline | undefined;
  if (options.baselinePath !== undefined) {
    baseline = explicitBaseline(options.baselinePath);
  } else {
    const branch = options.mode === 'pr' ? options.baseBranch : options.branch;
    if (branch === undefined) {
      notes.push(
        'No branch is known for this run, so no stored baseline was looked up: every case is NEW.',
      );
    } else {
      const found = await storedBaseline(options, { branch, sku }, notes, log);
      baseline = found.stored;
      if (baseline === undefined && !found.passedOver) {
        // A paired run judges its timed cases by their pairs: only the others are NEW.
        const judged = measured.results.run.paired_base
          ? 'the cases timed against the base revision in this job are judged by their pairs, any other is NEW'
          : 'every case is NEW';
        notes.push(
          `No stored baseline for branch ${branch} on ${sku}: ${judged}. ` +
            'Baselines are written by trusted runs (push to the branch, schedule); run one first.',
        );
      }
    }
  }

  let pendingBaseline: FullRun['pendingBaseline'];
  if (options.saveBaseline) {
    if (options.branch === undefined) {
      notes.push('This run was not stored as a baseline: its branch is unknown.');
    } else {
      pendingBaseline = { store: options.store, branch: options.branch, sku };
    }
  }
  for (const note of notes) log.warning(note);
  return {
    results: measured.results,
    resultsPath: measured.resultsPath,
    baseline,
    pendingBaseline,
    notes,
  };
}

/**
 * The stored run a run is judged against: for a pull request whose base commit is known, the
 * nearest stored ancestor of it (pr-baseline.ts, its lines in the log); else the newest stored run.
 * `passedOver`: stored runs there were, none an ancestor (a note says so).
 */
async function storedBaseline(
  options: Pick<FullRunOptions, 'mode' | 'store'> & { ancestry?: AncestryCheck | undefined },
  key: { branch: string; sku: string },
  notes: string[],
  log: Partial<Pick<MeasureDeps['log'], 'info'>>,
): Promise<{ stored: StoredBaseline | undefined; passedOver: boolean }> {
  if (options.mode !== 'pr' || options.ancestry === undefined) {
    return { stored: await options.store.latest(key), passedOver: false };
  }
  const found = await ancestorBaseline(options.store, key, options.ancestry);
  for (const line of found.lines) log.info?.(line);
  const passedOver = found.stored === undefined && found.lines.length > 0;
  if (passedOver) {
    notes.push(
      `No stored run of branch ${key.branch} on ${key.sku} is an ancestor of the pull request's base ` +
        `${options.ancestry.baseSha.slice(0, 12)} (the log names those passed over): every case ` +
        'not timed beside the base is NEW.',
    );
  }
  return { stored: found.stored, passedOver };
}

/** `always` stores a run whatever the gate said; otherwise a baseline means "known good". */
export type StorePolicy = 'passing' | 'always';

const NOT_STORED_FAILING =
  'Not stored as a baseline: the gate failed, and a baseline is what later pull requests are ' +
  'compared with. Set save-baseline: always to store failing runs too.';

/**
 * Stores a trusted run as its branch's newest baseline once the gate has judged it: a run whose
 * gate failed is kept out unless the policy says `always` (a baseline is what the next pull
 * request is compared with, so it must be known good). A run that holds no case, or fewer than it
 * selected (the gate's `incomplete`), is kept out whatever the policy: as a baseline it had made
 * the next pull request's 24 SLOWER cases 36 NEW (issue 26). For a store that answers at once
 * (the directory store); storeRun() takes any store.
 */
export function storeBaseline(
  run: FullRun,
  gate: 'pass' | 'fail' | { verdict: 'pass' | 'fail'; incomplete?: string },
  policy: StorePolicy,
): { saved?: string; note?: string } {
  const pending = run.pendingBaseline;
  if (pending === undefined) return {};
  const { verdict, incomplete } = typeof gate === 'string' ? { verdict: gate } : gate;
  const partial = incomplete ?? (run.results.cases.length ? undefined : 'the results hold no case');
  if (partial !== undefined) {
    return { note: `Not stored as a baseline, whatever save-baseline says: ${partial}` };
  }
  if (verdict === 'fail' && policy !== 'always') return { note: NOT_STORED_FAILING };
  const saved = pending.store.save({ branch: pending.branch, sku: pending.sku }, run.results);
  if (typeof saved !== 'string') {
    throw new Error('storeBaseline: this store answers later (a data branch): use storeRun');
  }
  return { saved };
}

/**
 * storeBaseline() for any store, with what the judge knew about the run (the gate's verdict, per
 * case verdicts, the run's page); an incomplete run is kept out whatever the policy, as there. A
 * store that cannot write (StoreError: the data branch unreachable, the push refused, the race
 * lost for too long) leaves a note and `failed` (the run was to be stored and was not: the action
 * says so in its summary and outputs), never a different verdict.
 */
export async function storeRun(
  run: FullRun,
  gate: 'pass' | 'fail' | { verdict: 'pass' | 'fail'; incomplete?: string },
  policy: StorePolicy,
  context: SaveContext = {},
): Promise<{ saved?: string; note?: string; failed?: true }> {
  const pending = run.pendingBaseline;
  if (pending === undefined) return {};
  const { verdict, incomplete } = typeof gate === 'string' ? { verdict: gate } : gate;
  const partial = incomplete ?? (run.results.cases.length ? undefined : 'the results hold no case');
  if (partial !== undefined) {
    return { note: `Not stored as a baseline, whatever save-baseline says: ${partial}` };
  }
  if (verdict === 'fail' && policy !== 'always') return { note: NOT_STORED_FAILING };
  try {
    const saved = await pending.store.save(
      { branch: pending.branch, sku: pending.sku },
      run.results,
      { verdict, ...context },
    );
    return { saved };
  } catch (error) {
    if (error instanceof StoreError) return { note: error.message, failed: true };
    throw error;
  }
}
