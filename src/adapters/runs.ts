// Several runs of one tool read together (`kernelgate adapt --input a.json --input b.json …`):
// one case per benchmark, one sample per run (the median of that run's samples), so the samples
// hold the spread between runs. The way to an interval for a tool whose one run holds only its
// rounds (pytest-benchmark: docs/adapters.md, "Noise by source").
import type { CaseResult } from '../results/index.js';
import { InputError } from '../results/index.js';
import { timingFromSamples, type Adapted, type AdaptedCase } from '../formats/index.js';

type Timed = CaseResult & { timing: NonNullable<CaseResult['timing']> };

const keyOf = (c: CaseResult) => `${c.variant}\u0000${c.case}`;

/** "pytest-benchmark time per call (one sample per round)" → "… (one sample per run: …)". */
function perRunMethod(method: string, runs: number): string {
  const what = method.replace(/\s*\([^)]*\)\s*$/, '').replace(/, summary only$/, '');
  return `${what} (one sample per run: the median of each of ${runs} runs)`;
}

/**
 * One Adapted of several runs of the same benchmarks, `files` naming each. A case timed in every
 * run gets one sample per run; one that errored or was skipped in a run keeps that run's outcome
 * (the first such), since a benchmark that failed once is not a number to track; a case absent
 * from a run is refused, naming the file.
 */
export function mergeRuns(runs: readonly Adapted[], files: readonly string[]): Adapted {
  const [first, ...rest] = runs;
  if (first === undefined) throw new InputError('no run to read');
  if (rest.length === 0) return first;
  const byRun = runs.map((r) => new Map(r.cases.map((c) => [keyOf(c.result), c])));
  const cases = first.cases.map((c): AdaptedCase => {
    const all = byRun.map((m, i) => {
      const found = m.get(keyOf(c.result));
      if (found === undefined) {
        throw new InputError(
          `${files[i] ?? `run ${i + 1}`}: has no ${c.result.variant} ${c.result.case}, which ${files[0] ?? 'the first run'} has: several runs read together must hold the same benchmarks`,
        );
      }
      return found;
    });
    const untimed = all.find((x) => x.result.status !== 'ok' || x.result.timing === undefined);
    if (untimed !== undefined) return untimed;
    const timings = all.map((x) => (x.result as Timed).timing);
    const medians = timings.map((t) => t.median_ms);
    const method = perRunMethod(timings[0]!.method, runs.length);
    const timing = { ...timingFromSamples(medians, method), samples_span: 'runs' as const };
    return { ...c, result: { ...c.result, timing } };
  });
  const extra = runs.flatMap((r, i) =>
    r.cases
      .filter((c) => !byRun[0]!.has(keyOf(c.result)))
      .map((c) => `${files[i] ?? `run ${i + 1}`}: ${c.result.variant} ${c.result.case}`),
  );
  if (extra.length > 0) {
    throw new InputError(
      `${extra[0]} is not in ${files[0] ?? 'the first run'}: several runs read together must hold the same benchmarks`,
    );
  }
  // What a parser says of one run's rounds no longer holds: the samples are one per run.
  const diagnostics = runs
    .flatMap((r) => r.diagnostics)
    .filter((d) => !d.code.endsWith('.one_run'));
  return { ...first, cases, diagnostics };
}
