// The verdicts: compare (each case against the baseline: performance.ts and correctness.ts),
// tiers (ladders, measurement errors), gate (pass or fail with reasons), calibrate (noise
// thresholds from A/A runs). The only door.
export * from './calibrate.js';
export { compare, environmentNotes } from './compare.js';
export {
  coverage,
  selectedUnits,
  shardProblems,
  type Coverage,
  type CoverageGap,
} from './coverage.js';
export { IDENTICAL_NOTE, isIdentical } from './identity.js';
export {
  minChangePct,
  noisePctFor,
  pairedThresholdPct,
  timingMethodKind,
  verdictOf,
} from './performance.js';
export { applyTuning, retuneText, tuningText } from './tuning.js';
export * from './gate.js';
export * from './sanitizer.js';
export { judgeTails, tailProblems, type TailProblem, type TailVerdict } from './tails.js';
export * from './throughput.js';
export * from './tiers.js';
export * from './verdicts.js';
export * from './steps.js';
export * from './trend.js';
export * from './why.js';
