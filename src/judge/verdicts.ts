// The verdicts a comparison gives each case, and the comparison's shape.
import type { CaseResult } from '../results/index.js';

export const PERF_VERDICTS = [
  'SLOWER',
  'AMBIGUOUS',
  'MISSING',
  'FASTER',
  'SAME',
  'NEW',
  'UNTIMED',
] as const;

/** UNTIMED: the current case has no timing (it failed, errored, timed out or was skipped). */
export type PerfVerdict = (typeof PERF_VERDICTS)[number];

export const CORRECTNESS_VERDICTS = [
  'FAIL',
  'DRIFT',
  'ERROR',
  'MISSING',
  'UNCHECKED',
  'SKIPPED',
  'PASS',
] as const;

/**
 * FAIL: a wrong answer (case status fail, or correctness FAIL). ERROR: no answer (raised,
 * crashed, timed out). UNCHECKED: timed but the results carry no correctness record.
 */
export type CorrectnessVerdict = (typeof CORRECTNESS_VERDICTS)[number];

/** Fewer kept samples (or pairs) than this gives no interval, so no verdict but AMBIGUOUS. */
export const MIN_SAMPLES_FOR_VERDICT = 5;

/**
 * How a case's performance verdict was reached. paired: its pairs with the base revision, timed
 * in this job (results cases[].paired); baseline: the stored baseline run; identical: SAME by
 * identity, the variant's build and sources are the base revision's (results cases[].identical),
 * verified, not timed; none: nothing to compare with (NEW, UNTIMED).
 */
export type JudgeMethod = 'paired' | 'baseline' | 'identical' | 'none';

/** Paired perfNote of a reference variant that moved: it runs the same code in both arms. */
export const CONTROL_NOTE = 'reference: identical code in both arms';
/** A control timed beside a confirmation (run.time_control: headline), as the report says it. */
export const CONTROL_BESIDE_NOTE =
  'the A/A control, timed beside the confirmation of a variant that cleared the threshold';

export interface CaseComparison {
  /** kernel/variant/case */
  key: string;
  /** "attention/triton dtype=fp16,B=16,…" as reasons and reports name a case */
  label: string;
  kernel: string;
  variant: string;
  caseId: string;
  params: Record<string, string | number | boolean>;
  status: CaseResult['status'] | 'missing';
  perf: PerfVerdict;
  /** words for people: what the report and the gate's lines say; no code reads it */
  perfNote?: string;
  method: JudgeMethod;
  /**
   * a timed case of a paired run judged without pairs, and why (the perfNote says it in words):
   * `not-timed`, no paired record (the harness did not time it against the base revision);
   * `no-pairs`, the base ran but no pairs were timed; `base-failed`, the base revision's case
   * failed, errored, timed out or was skipped; `not-in-base`, the base revision lacks the case
   */
  unpaired?: Unpaired;
  /** AMBIGUOUS against the stored baseline: a side has fewer than MIN_SAMPLES_FOR_VERDICT samples */
  tooFewSamples?: true;
  medianMs?: number;
  iqrMs?: number;
  nSamples?: number;
  /** the stored baseline's median, or for a paired case the base arm's */
  baselineMedianMs?: number;
  /** current median / baseline median (>1 is slower); paired: exp(median of ln(head/base)) */
  ratio?: number;
  ciLo?: number;
  ciHi?: number;
  confidence?: number;
  /**
   * the threshold this case was judged with: max(threshold_pct, its noise_pct, min_change); for
   * a paired case max(paired.threshold_pct, paired min_change)
   */
  thresholdPct: number;
  /** paired: the pairs the verdict was decided from */
  nPairs?: number;
  /** paired: minimum detectable change, the half-width of the ratio's interval, in % */
  mdcPct?: number;
  /** paired: the base revision's commit (results run.paired_base.git_sha) */
  baseSha?: string;
  /**
   * paired SLOWER or FASTER measured again in fresh worker processes (results paired.confirm):
   * said the same, did not repeat (now AMBIGUOUS), or could not be measured (the verdict stands)
   */
  confirmed?: ConfirmOutcome;
  /** confirmed: the second pair's interval of the ratio (head ÷ base), as ciLo and ciHi are */
  confirmLo?: number;
  confirmHi?: number;
  /**
   * a reference variant that moved, the run's A/A control: `paired`, identical code in both arms;
   * `stored`, its code is the stored run's (controls.ts). The machine moved, not the code.
   */
  control?: 'paired' | 'stored';
  /** SAME only because of the absolute floor: the interval cleared the threshold without it */
  belowFloor?: boolean;
  /**
   * SAME, but a case of another tool whose interval lies wholly beyond half the threshold: a
   * resolved change too small to be called (sources.ts markBelowThreshold)
   */
  belowThreshold?: boolean;
  /**
   * AMBIGUOUS because a side's samples are the rounds of one run of a tool (results timing
   * samples_span one-run): they hold none of the spread between runs (sources.ts)
   */
  oneRun?: true;
  /**
   * the tuner's configuration differs (tuning.ts): from the stored run's (`stored`), or between
   * the two arms of a pair (`arms`, the change altered the tuner's source); both as JSON text,
   * with the tuner's own times of both where it timed them
   */
  retune?: { against: 'stored' | 'arms'; from: string; to: string; fromMs?: number; toMs?: number };
  correctness: CorrectnessVerdict;
  correctnessReason?: string;
  relL2?: number | null;
  tolRelL2?: number;
  baselineRelL2?: number | null;
  current?: CaseResult;
  baseline?: CaseResult;
}

export type Unpaired = 'not-timed' | 'no-pairs' | 'base-failed' | 'not-in-base';

export type BaselineState = 'none' | 'compared' | 'other-gpu';

export type ConfirmOutcome = 'confirmed' | 'not-repeated' | 'unmeasured';

export interface Comparison {
  cases: CaseComparison[];
  baseline: BaselineState;
  /** environment differences and other facts the reader must see */
  notes: string[];
  baselineRun?: { id?: string; gitSha?: string; startedAt: string; gpu: string };
  /**
   * Without pairs: at least half of the reference cases (at least three) moved one way against
   * the stored run, so the machine or the night moved (controls.ts applyStoredControls).
   */
  machineMoved?: { direction: 'SLOWER' | 'FASTER'; moved: number; of: number; medianPct: number };
  /** set when the results carry pairs with a base revision and compare.paired.enabled */
  paired?: {
    baseSha?: string;
    /** cases judged by their pairs */
    cases: number;
    /** timed cases judged against the stored baseline instead */
    baselineCases: number;
    /** cases SAME by identity: identical build and sources in base and head, not timed */
    identical?: number;
    /** compare.paired.threshold_pct */
    thresholdPct: number;
    /** median of the paired cases' minimum detectable change, % */
    medianMdcPct?: number;
    /** reference variants whose paired verdict was FASTER or SLOWER (labels) */
    controlsMoved: string[];
    /** SLOWER or FASTER verdicts measured again in fresh processes, by outcome (only when any was) */
    confirm?: Record<ConfirmOutcome, number>;
  };
}

export function caseKey(kernel: string, variant: string, caseId: string): string {
  return `${kernel}/${variant}/${caseId}`;
}

export function caseLabel(c: { kernel: string; variant: string; case: string }): string {
  return `${c.kernel}/${c.variant} ${c.case}`;
}

/** How the note of a paired verdict that a second pair of worker processes measured begins. */
export const CONFIRM_NOTES = {
  confirmed: 'confirmed in a second pair of worker processes: ',
  unmeasured: 'not confirmed in a second pair of worker processes: ',
} as const;
