import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compare, type CaseComparison } from '../src/judge/index.js';
import { loadConfig } from '../src/config/index.js';
import { loadResults, validateResults } from '../src/results/index.js';
import type { Paired } from '../src/results/index.js';
import { PAIRS, logRatios, pair, pairedRun } from './support/paired.js';

// compare.paired.detect_pct: the harness records a case's detection threshold (paired.detect_pct,
// cases of a millisecond or more) and the judge reads the interval against it. Beyond the
// threshold nothing changes; between the detection threshold and the threshold (the band) a
// verdict stands only when a second pair of worker processes repeated it.
const config = loadConfig(join(import.meta.dirname, 'fixtures', 'config', 'valid'));
const baseline = loadResults(join(import.meta.dirname, 'fixtures', 'results', 'baseline.json'));
const TRITON = 'attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

function judge(ratio: number, extra: Partial<Paired> = {}): CaseComparison {
  const doc = pair(pairedRun(baseline), TRITON, ratio, extra);
  expect(() => validateResults(JSON.parse(JSON.stringify(doc)), 'paired.json')).not.toThrow();
  const found = compare(doc, baseline, config).cases.find((c) => c.key === TRITON);
  if (!found) throw new Error(`no case ${TRITON}`);
  return found;
}

const again = (ratio: number) => ({
  status: 'ok' as const,
  n_pairs: PAIRS * 2,
  log_ratios: logRatios(ratio),
  stop_reason: 'decided' as const,
});

describe('a detection threshold under the paired threshold (compare.paired.detect_pct)', () => {
  it('defaults to 0.5 % from 1 ms', () => {
    expect(config.compare.paired).toMatchObject({
      thresholdPct: 1,
      detectPct: 0.5,
      detectMinMs: 1,
    });
  });

  it('reads +0.8 % as SAME without one: within ±1 %', () => {
    expect(judge(1.008).perf).toBe('SAME');
  });

  it('makes +0.8 % SLOWER when a second pair of worker processes repeats it', () => {
    const c = judge(1.008, { detect_pct: 0.5, confirm: again(1.009) });
    expect(c.perf).toBe('SLOWER');
    expect(c.perfNote).toMatch(
      /^confirmed in a second pair of worker processes: ×1\.009\d \[1\.00\d\d, 1\.01\d\d\]$/,
    );
    expect(judge(0.992, { detect_pct: 0.5, confirm: again(0.991) }).perf).toBe('FASTER');
  });

  it('makes it AMBIGUOUS when the second reading does not repeat, or none was made', () => {
    const c = judge(1.008, { detect_pct: 0.5, confirm: again(1.001) });
    expect(c.perf).toBe('AMBIGUOUS');
    expect(c.perfNote).toMatch(
      /^was SLOWER ×1\.0080 \[1\.00\d\d, 1\.00\d\d\], but a second pair of worker processes read ×1\.0010 \[\d\.\d{4}, 1\.00\d\d\] \(SAME\): the first reading did not repeat$/,
    );
    const none = judge(1.008, { detect_pct: 0.5 });
    expect(none.perf).toBe('AMBIGUOUS');
    expect(none.perfNote).toMatch(
      /^×1\.0080 \[1\.00\d\d, 1\.00\d\d\] is beyond the 0\.5% detection threshold but within ±1%, and was not measured again in a second pair of worker processes, which such a verdict needs$/,
    );
  });

  it('judges a change beyond the threshold as before, with or without a second reading', () => {
    const c = judge(1.02, { detect_pct: 0.5 });
    expect(c.perf).toBe('SLOWER');
    expect(c.perfNote).toBeUndefined();
  });

  it('keeps SAME for an interval within ±0.5 %', () => {
    expect(judge(1.002, { detect_pct: 0.5 }).perf).toBe('SAME');
  });

  it('ignores a detection threshold at or above the threshold (the floor raised it)', () => {
    expect(judge(1.008, { detect_pct: 1.5 }).perf).toBe('SAME');
  });
});
