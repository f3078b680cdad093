// Tuning is part of the result (issue 25): a case whose tuner chose another configuration than the
// stored run is a re-tune, reported with both configurations, not a regression; in a pair, arms
// that launched different tunings say so and keep their verdict. Recorded H100 runs of identical
// code (nightly runs 32 and 34, machine 10), one case's tuning and timing edited.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { compare, type CaseComparison } from '../src/judge/index.js';
import { judge } from '../src/pipeline/index.js';
import type { CaseResult, KernelgateResults } from '../src/results/index.js';
import { loadGz, ROOT } from './support/recorded.js';

const config = loadConfig(ROOT);
const CASE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=true';
const KEY = `attention/triton_fa2/${CASE}`;
const BEST = {
  config: [128, 64, 8, 3],
  candidates_ms: [
    { config: [128, 64, 8, 3], ms: 2.101 },
    { config: [64, 64, 4, 3], ms: 2.175 },
  ],
};
const WORSE = { config: [64, 64, 4, 3] };
/** The re-tune from BEST to WORSE, with the tuner's own times of both. */
const BEST_TO_WORSE = { from: '[128,64,8,3]', to: '[64,64,4,3]', fromMs: 2.101, toMs: 2.175 };

function single(n: number): KernelgateResults {
  const doc = structuredClone(loadGz(`nightly-h100-run${n}`));
  delete doc.run.paired_base;
  for (const c of doc.cases) delete c.paired;
  return doc;
}

function paired(n: number): KernelgateResults {
  return structuredClone(loadGz(`nightly-h100-run${n}`));
}

const at = (doc: KernelgateResults, key = KEY): CaseResult =>
  doc.cases.find((c) => `${c.kernel}/${c.variant}/${c.case}` === key)!;

/** Every sample of the case × factor: what a worse tiling measured would look like. */
function slow(c: CaseResult, factor: number) {
  c.timing!.samples_ms = c.timing!.samples_ms.map((x) => x * factor);
  c.timing!.median_ms *= factor;
}

const verdictOf = (cases: CaseComparison[], key = KEY) => cases.find((c) => c.key === key)!;

describe('a re-tune against the stored run (no pairs)', () => {
  it('a case that moved +10 % with the same tiling is SLOWER', () => {
    const [base, now] = [single(32), single(34)];
    at(base).tuning = BEST;
    at(now).tuning = BEST;
    slow(at(now), 1.1);
    const c = verdictOf(compare(now, base, config).cases);
    expect(c.perf).toBe('SLOWER');
    expect(c.retune).toBeUndefined();
  });

  it("the same move with another tiling is AMBIGUOUS, named a re-tune with both configurations and the tuner's times", () => {
    const [base, now] = [single(32), single(34)];
    at(base).tuning = BEST;
    at(now).tuning = { config: WORSE.config, candidates_ms: [...BEST.candidates_ms].reverse() };
    slow(at(now), 1.1);
    const c = verdictOf(compare(now, base, config).cases);
    expect(c.perf).toBe('AMBIGUOUS');
    expect(c.retune).toEqual({ against: 'stored', ...BEST_TO_WORSE });
    expect(c.perfNote).toMatch(
      /^was SLOWER \+1\d\.\d %, but the tuner chose differently than in the stored run \(\[128,64,8,3\] → \[64,64,4,3\] \(the tuner timed them at 2\.101 ms and 2\.175 ms\)\): a re-tune, not a change of the code$/,
    );
  });

  it('the nightly report names the re-tune and does not call the night a regression', () => {
    const [base, now] = [single(32), single(34)];
    at(base).tuning = BEST;
    at(now).tuning = WORSE;
    slow(at(now), 1.1);
    const j = judge(now, base, config, 'nightly');
    expect(j.rendered.full.split('\n')[0]).not.toContain('regression');
    expect(j.rendered.full).toContain(
      `- 🎛️ **attention/triton\\_fa2** re-tuned since the stored run on 1 of 26 cases: the tuner chose another configuration, a re-tune, not a regression; 1 of them moved, AMBIGUOUS rather than a verdict on the code. ${CASE}: \\[128,64,8,3\\] → \\[64,64,4,3\\] (the tuner timed them at 2.101 ms and 2.175 ms)\n`,
    );
  });

  it('a record without a tuning (written before tunings were recorded) is judged as before', () => {
    const [base, now] = [single(32), single(34)];
    at(now).tuning = WORSE;
    slow(at(now), 1.1);
    expect(verdictOf(compare(now, base, config).cases).perf).toBe('SLOWER');
  });
});

describe('tunings in a paired run', () => {
  it('arms that share a tuning the stored run did not have: the pairs stand, the re-tune is a note', () => {
    const [base, now] = [single(32), paired(34)];
    at(base).tuning = BEST;
    at(now).tuning = WORSE;
    at(now).paired!.base_tuning = WORSE;
    const c = verdictOf(compare(now, base, config).cases);
    expect(c.method).toBe('paired');
    expect(c.perf).toBe('SAME');
    expect(c.retune).toEqual({ against: 'stored', ...BEST_TO_WORSE });
    expect(c.perfNote).toContain(
      're-tuned since the stored run ([128,64,8,3] → [64,64,4,3] (the tuner timed them at 2.101 ms and 2.175 ms)); both arms launched the new tuning',
    );
  });

  it("arms that launched different tunings (the change altered the tuner's source) keep their verdict and say so", () => {
    const now = paired(34);
    at(now).tuning = WORSE;
    at(now).paired!.base_tuning = BEST;
    const c = verdictOf(compare(now, undefined, config).cases);
    expect(c.perf).toBe('SAME');
    expect(c.retune).toEqual({ against: 'arms', ...BEST_TO_WORSE });
    expect(c.perfNote).toContain(
      "the arms launched different tunings (base [128,64,8,3] → [64,64,4,3] (the tuner timed them at 2.101 ms and 2.175 ms)): the change altered the tuner's source, so its choice is part of what it did",
    );
  });
});
