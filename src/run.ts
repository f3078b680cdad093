// A full run on the GPU runner: measure (doctor → build → harness), then pick the baseline the
// mode calls for and, for trusted runs, store the results as the branch's newest baseline.
import { explicitBaseline, type BaselineStore, type StoredBaseline } from './baseline.js';
import { measure, type MeasureDeps, type MeasureOptions } from './measure.js';
import type { KernelgateResults } from './results-types.js';

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
  /** trusted runs of a branch (push, schedule) become its newest baseline */
  saveBaseline: boolean;
}

export interface FullRun {
  results: KernelgateResults;
  resultsPath: string;
  baseline: StoredBaseline | undefined;
  /** where this run's results were stored as a baseline, if they were */
  savedBaseline: string | undefined;
  /** said in the log and the report when there is nothing to compare with */
  notes: string[];
}

export async function fullRun(options: FullRunOptions, deps: MeasureDeps): Promise<FullRun> {
  const measured = await measure(options, deps);
  const sku = measured.results.environment.gpu.sku ?? 'unknown';
  const notes: string[] = [];

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
      baseline = options.store.latest({ branch, sku });
      if (baseline === undefined) {
        notes.push(
          `No stored baseline for branch ${branch} on ${sku}: every case is NEW. ` +
            'Baselines are written by trusted runs (push to the branch, schedule); run one first.',
        );
      }
    }
  }

  let savedBaseline: string | undefined;
  if (options.saveBaseline) {
    if (options.branch === undefined) {
      notes.push('This run was not stored as a baseline: its branch is unknown.');
    } else {
      savedBaseline = options.store.save({ branch: options.branch, sku }, measured.results);
    }
  }
  for (const note of notes) deps.log.warning(note);
  return {
    results: measured.results,
    resultsPath: measured.resultsPath,
    baseline,
    savedBaseline,
    notes,
  };
}
