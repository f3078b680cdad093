// What the report says per case about a benchmark read from another tool: why it is not PASS (the
// tool checks nothing) and why it has no interval or paired verdict (the tool gave statistics, not
// samples). compare() judges every case alike; this names the tool's limits beside its verdicts.
import type { Comparison } from '../judge/index.js';
import type { KernelgateResults } from '../results/index.js';
import { isCommandFormat, ONE_RUN_FIX } from '../formats/index.js';

type AdapterInfo = NonNullable<KernelgateResults['kernels'][number]['adapter']>;

/**
 * The words compare() writes for a case with no paired record (`unpaired: 'not-timed'`,
 * src/judge/performance.ts); the note here says why, after them.
 */
const UNPAIRED = 'not timed against the base revision';

function toolName(a: AdapterInfo): string {
  return a.tool ?? a.format;
}

/** Rewrites the notes of adapted cases in place; returns the comparison for chaining. */
export function annotateAdapted(comparison: Comparison, results: KernelgateResults): Comparison {
  const adapters = new Map<string, AdapterInfo>();
  for (const k of results.kernels) if (k.adapter) adapters.set(k.name, k.adapter);
  if (adapters.size === 0) return comparison;
  for (const c of comparison.cases) {
    const a = adapters.get(c.kernel);
    if (!a || !c.current) continue;
    if (c.correctness === 'UNCHECKED') {
      c.correctnessReason = `not verified: ${toolName(a)} checks no results, so this case cannot PASS`;
    }
    // A paired run pairs only what kernelgate runs in both trees: a tool's file is the head's alone.
    if (c.unpaired === 'not-timed' && c.perfNote !== undefined) {
      c.perfNote = c.perfNote.replace(
        UNPAIRED,
        isCommandFormat(a.format)
          ? `${UNPAIRED}: its folder is not in the base revision`
          : `${UNPAIRED}: ${toolName(a)} output is read once, from the head (only command benchmarks run in both trees)`,
      );
    }
    // One run's rounds: no interval (src/judge/sources.ts); here what to do for this tool.
    if (c.oneRun && c.perfNote !== undefined) c.perfNote = `${c.perfNote}; ${ONE_RUN_FIX}`;
    const timing = c.current.status === 'ok' ? c.current.timing : undefined;
    if (timing && timing.samples_ms.length === 0) {
      const note =
        `summary only: ${toolName(a)} gave statistics of ${timing.n_samples} samples, not the ` +
        'samples, so no interval and no paired verdict';
      // Too few samples is what "no interval" already says, unless a paired run's note wraps it.
      const onlyTooFew = c.tooFewSamples === true && c.unpaired === undefined;
      c.perfNote = c.perfNote === undefined || onlyTooFew ? note : `${note}; ${c.perfNote}`;
    }
  }
  return comparison;
}
