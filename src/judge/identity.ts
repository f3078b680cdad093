// SAME by identity: a pull request's variant whose build output, module sources, manifest entry,
// harness and library versions are the same in base and head (src/measure/identity.ts) was
// verified as always but not timed; the harness says so in the case (results cases[].identical).
import type { Config } from '../config/index.js';
import type { CaseResult } from '../results/index.js';
import type { PerfJudgement } from './performance.js';
import type { JudgeMethod } from './verdicts.js';

/** The note of a case judged SAME by identity, as the report shows it. */
export const IDENTICAL_NOTE = 'identical build and sources';

/** A case the harness verified (status ok) and left untimed because it is identical in both. */
export function isIdentical(c: CaseResult): boolean {
  return c.identical !== undefined && c.status === 'ok' && c.timing === undefined;
}

/**
 * SAME, with the note (the record's reason: IDENTICAL_NOTE, or why a reference that differs in
 * the harness alone was not timed), at the paired threshold: no interval, nothing was timed.
 */
export function judgeIdentical(
  config: Config,
  reason: string = IDENTICAL_NOTE,
): {
  perf: PerfJudgement & { thresholdPct: number };
  method: JudgeMethod;
  rule: { thresholdPct: number; floorMs: number };
} {
  const { thresholdPct, minChangeMs } = config.compare.paired;
  return {
    perf: { perf: 'SAME', perfNote: reason, thresholdPct },
    method: 'identical',
    rule: { thresholdPct, floorMs: minChangeMs },
  };
}
