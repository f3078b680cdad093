// The paired rule, the judge's half: every vector of test/fixtures/twins/paired-rule.json gives
// its case threshold and verdict (test/python/test_paired_rule_twin.py holds the harness's stop
// rule to the same vectors).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pairedThresholdPct, verdictOf } from '../src/judge/index.js';

interface Vector {
  threshold_pct: number;
  min_change_ms: number;
  base_median_ms: number;
  detect_pct: number | null;
  lo: number;
  hi: number;
  case_threshold_pct: number;
  verdict: string;
}
const { vectors } = JSON.parse(readFileSync('test/fixtures/twins/paired-rule.json', 'utf8')) as {
  vectors: Vector[];
};

describe('the paired rule, shared with the harness', () => {
  it.each(vectors)('[$lo, $hi] against $threshold_pct % (detect $detect_pct) is $verdict', (v) => {
    const threshold = pairedThresholdPct(v.threshold_pct, v.min_change_ms, v.base_median_ms);
    expect(threshold).toBeCloseTo(v.case_threshold_pct, 9);
    expect(verdictOf(v.lo, v.hi, threshold, v.detect_pct ?? undefined)).toBe(v.verdict);
  });
});
