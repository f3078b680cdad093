// The verdicts: compare (each case against the baseline), tiers (ladders, measurement errors),
// gate (pass or fail with reasons), calibrate (noise thresholds from A/A runs). The only door.
export * from './calibrate.js';
export * from './compare.js';
export * from './gate.js';
export * from './tiers.js';
