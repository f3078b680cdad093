// Judged without pairs (a night or push against one stored run, issue 25): the reference variants
// are the A/A controls, a machine that moved is named as such, and a change the absolute floor
// hides says so. The recorded H100 runs of identical kernel code (head arms only, as a
// single-revision run would have timed them) judged one against another, before and after.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { compare, type CaseComparison } from '../src/judge/index.js';
import { judge } from '../src/pipeline/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { loadGz, ROOT } from './support/recorded.js';

const config = loadConfig(ROOT);
const name = (n: number) => (n >= 32 ? `nightly-h100-run${n}` : `paired-aa-h100-run${n}`);

/** A paired run's head arm as a single-revision run would have recorded it. */
function single(n: number): KernelgateResults {
  const doc = structuredClone(loadGz(name(n)));
  delete doc.run.paired_base;
  for (const c of doc.cases) delete c.paired;
  return doc;
}

const moved = (c: CaseComparison) => c.perf === 'SLOWER' || c.perf === 'FASTER';

/** False SLOWER/FASTER of identical code: all, and those left on kernels (not controls). */
function falseAlarms(pairs: [number, number][]) {
  let all = 0;
  let kernels = 0;
  let regressionTitles = 0;
  for (const [a, b] of pairs) {
    const j = judge(single(b), single(a), config, 'nightly');
    all += j.comparison.cases.filter(moved).length;
    kernels += j.comparison.cases.filter((c) => moved(c) && c.control === undefined).length;
    if (j.rendered.full.split('\n')[0]!.includes('regression')) regressionTitles += 1;
  }
  return { all, kernels, regressionTitles };
}

describe('recorded H100 runs of identical code judged one against another, without pairs', () => {
  it('on the same machine: 5 false SLOWER/FASTER in 8 pairs, every one a reference, so no kernel is blamed', () => {
    // machines 4, 7, 8, 9 and 10 (docs/judging.md), consecutive runs of one harness
    const pairs: [number, number][] = [
      [16, 18],
      [23, 24],
      [24, 26],
      [27, 28],
      [28, 29],
      [30, 31],
      [32, 34],
      [34, 35],
    ];
    expect(falseAlarms(pairs)).toEqual({ all: 5, kernels: 0, regressionTitles: 0 });
  }, 60_000);

  it('across machines and harnesses: 20 false SLOWER/FASTER in 6 pairs, 5 left on kernels', () => {
    const pairs: [number, number][] = [
      [18, 23],
      [26, 27],
      [29, 30],
      [31, 32],
      [21, 24],
      [16, 31],
    ];
    // What remains is triton_fa2's large cases (autotuning chose other tiles: a re-tune, not yet
    // told apart) and one microsecond BSR tail: the nightly is paired for this reason. (18 while
    // kernelgate.yml's H200 noise figures were applied to these H100 runs: 2 references fewer.)
    expect(falseAlarms(pairs)).toEqual({ all: 20, kernels: 5, regressionTitles: 2 });
  }, 60_000);
});

describe('a machine that moved', () => {
  it('is named: every case 1.3× slower reads as the machine, not as regressed kernels', () => {
    const before = single(32);
    const after = single(34);
    for (const c of after.cases) {
      if (c.timing) c.timing.samples_ms = c.timing.samples_ms.map((x) => x * 1.3);
      if (c.timing) c.timing.median_ms *= 1.3;
    }
    const j = judge(after, before, config, 'nightly');
    const m = j.comparison.machineMoved!;
    expect(m.direction).toBe('SLOWER');
    expect(m.moved / m.of).toBeGreaterThan(0.95);
    expect(m.of).toBeGreaterThan(50);
    expect(m.medianPct).toBeGreaterThan(29);
    expect(m.medianPct).toBeLessThan(31);
    const kernels = j.comparison.cases.filter((c) => c.control === undefined);
    expect(kernels.filter(moved)).toEqual([]);
    const fa2 = j.comparison.cases.find(
      (c) => c.key === 'attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
    )!;
    expect(fa2.perf).toBe('AMBIGUOUS');
    expect(fa2.perfNote).toMatch(
      new RegExp(
        `^was SLOWER \\+(29|30)\\.\\d %, but the machine moved: ${m.moved} of ${m.of} reference cases \\(code not changed\\) were SLOWER against the stored run, median \\+30\\.\\d %$`,
      ),
    );
    expect(j.comparison.notes).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^The machine moved: ${m.moved} of ${m.of} reference cases \\(code not changed\\) were SLOWER against the stored run, median \\+30\\.\\d %: this run is not timed like the stored one, so no kernel is blamed for a move that size; \\d+ FASTER or SLOWER verdicts of kernels in that direction are AMBIGUOUS instead\\.`,
        ),
      ),
    );
    expect(j.rendered.full.split('\n')[0]).not.toContain('regression');
  });
});

describe('a change under the floor', () => {
  it('stays SAME for the gate and says it is below the 1 µs floor', () => {
    const before = single(32);
    const after = single(34);
    const key = 'attention/triton_fa2/dtype=fp16,B=2,H=3,S=77,D=64,causal=false';
    const c = after.cases.find((x) => `${x.kernel}/${x.variant}/${x.case}` === key)!;
    c.timing!.samples_ms = c.timing!.samples_ms.map((x) => x * 1.18);
    c.timing!.median_ms *= 1.18;
    const judged = compare(after, before, config).cases.find((x) => x.key === key)!;
    expect(judged.perf).toBe('SAME');
    expect(judged.belowFloor).toBe(true);
    expect(judged.perfNote).toMatch(
      /^below the 1 µs floor: \+1\d\.\d % in \[\+1\d\.\d %, \+1\d\.\d %\] \(0\.\d\d µs\) is a real change, but smaller than the floor, so it is not called SLOWER$/,
    );
  });
});
