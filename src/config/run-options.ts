// kernelgate.yml `run:`: how a pull request's paired run treats what is the same in base and head.

/** run.verify_identical: how a pull request's identical variants are verified (the harness's --verify-identical) */
export type VerifyIdentical = 'first_seed' | 'all';
/** run.time_control: a PR's A/A control timed on the headline case and beside confirmations, or on every case */
export type TimeControl = 'headline' | 'every_case';

/** `run:` as kernelgate.yml writes it (validated against schema/config.schema.json) */
export interface RawRunOptions {
  skip_identical?: boolean;
  verify_identical?: VerifyIdentical;
  time_control?: TimeControl;
}

/**
 * a pull request's paired run: variants identical in base and head are verified, not timed
 * (run.skip_identical); on the first seed only or on every seed (run.verify_identical); the A/A
 * control on the headline case and beside confirmations, or on every case (run.time_control)
 */
export interface RunOptions {
  skipIdentical: boolean;
  verifyIdentical: VerifyIdentical;
  timeControl: TimeControl;
}

/** The defaults filled in. */
export function runOptions(raw: RawRunOptions | undefined): RunOptions {
  return {
    skipIdentical: raw?.skip_identical ?? true,
    verifyIdentical: raw?.verify_identical ?? 'first_seed',
    timeControl: raw?.time_control ?? 'headline',
  };
}
