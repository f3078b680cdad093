// The A/A controls: reference variants (SDPA, cuBLAS, a team's eager code) run code that a change
// to the kernels does not touch, so when one moves, the machine (or the night) moved, not the code.
// Paired: both arms run the reference's identical code; against a stored run: the reference's code
// is the stored run's. And the floor: a change that is real but smaller than compare's absolute
// floor stays SAME for the gate, and says so.
import { formatRatioPct, median } from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import { CONTROL_NOTE, type CaseComparison, type Comparison } from './verdicts.js';

const moved = (c: CaseComparison): boolean => c.perf === 'FASTER' || c.perf === 'SLOWER';

function referenceOf(results: KernelgateResults): (c: CaseComparison) => boolean {
  const roles = new Map<string, string>();
  for (const k of results.kernels) {
    for (const v of k.variants) roles.set(`${k.name}/${v.name}`, v.role);
  }
  return (c) => roles.get(`${c.kernel}/${c.variant}`) === 'reference';
}

/** The moved controls by kernel and case id. */
function byCase(controls: CaseComparison[]): Map<string, CaseComparison[]> {
  const map = new Map<string, CaseComparison[]>();
  for (const c of controls) {
    const at = `${c.kernel}\u0000${c.caseId}`;
    map.set(at, [...(map.get(at) ?? []), c]);
  }
  return map;
}

const named = (controls: CaseComparison[]) =>
  controls.map((m) => `${m.variant} ${formatRatioPct(m.ratio)}`).join(', ');

/**
 * Paired: a reference variant runs the same code in both arms of a pair, so its paired verdict
 * must be SAME (or AMBIGUOUS). When one is FASTER or SLOWER the machine was not quiet while that
 * case was timed, and every other FASTER or SLOWER paired verdict of the same case (kernel and
 * case id) becomes AMBIGUOUS: the PR is not blamed for it. Returns the controls that moved and
 * the verdicts made AMBIGUOUS because of them.
 */
export function applyControls(
  cases: CaseComparison[],
  results: KernelgateResults,
): { controls: CaseComparison[]; demoted: CaseComparison[] } {
  const isReference = referenceOf(results);
  const pairedMove = (c: CaseComparison) => c.method === 'paired' && moved(c);
  const controls = cases.filter((c) => pairedMove(c) && isReference(c));
  const at = byCase(controls);
  const demoted: CaseComparison[] = [];
  for (const c of cases) {
    if (!pairedMove(c) || controls.includes(c)) continue;
    const same = at.get(`${c.kernel}\u0000${c.caseId}`);
    if (!same) continue;
    const which =
      same.length === 1
        ? `the A/A control ${named(same)} (a reference: identical code in both arms) moved`
        : `the A/A controls ${named(same)} (references: identical code in both arms) moved`;
    c.perfNote = `was ${c.perf} ${formatRatioPct(c.ratio)}, but ${which} in the same case: the machine was not quiet`;
    c.perf = 'AMBIGUOUS';
    demoted.push(c);
  }
  for (const c of controls) {
    c.perfNote = CONTROL_NOTE;
    c.control = 'paired';
  }
  return { controls, demoted };
}

/** A reference judged against a stored run that moved. */
export const STORED_CONTROL_NOTE = 'reference: code unchanged since the stored run';

/** What the references of a comparison without pairs say about the machine. */
export type MachineMove = NonNullable<Comparison['machineMoved']>;

/**
 * Without pairs (a nightly or push against a stored run, a pull request's case the base could not
 * pair): the reference variants are the A/A controls. When at least half of the reference cases
 * judged (and at least three) moved the same way, the machine or the night moved: every candidate
 * verdict in that direction becomes AMBIGUOUS, naming the move, and the comparison says so once.
 * Otherwise a reference that moved makes the same-direction verdicts of its own case AMBIGUOUS.
 */
export function applyStoredControls(
  cases: CaseComparison[],
  results: KernelgateResults,
): { machine?: MachineMove; controls: CaseComparison[]; demoted: CaseComparison[] } {
  const isReference = referenceOf(results);
  const stored = cases.filter((c) => c.method === 'baseline' && c.perf !== 'MISSING');
  const references = stored.filter(isReference);
  const controls = references.filter(moved);
  for (const c of controls) {
    c.control = 'stored';
    c.perfNote = c.perfNote ? `${STORED_CONTROL_NOTE}; ${c.perfNote}` : STORED_CONTROL_NOTE;
  }
  const machine = machineMove(references, controls);
  const at = byCase(controls);
  const demoted: CaseComparison[] = [];
  for (const c of stored) {
    if (!moved(c) || c.control !== undefined) continue;
    const same = (at.get(`${c.kernel}\u0000${c.caseId}`) ?? []).filter((m) => m.perf === c.perf);
    let why: string | undefined;
    if (machine !== undefined && c.perf === machine.direction) why = machineText(machine);
    else if (same.length > 0) {
      why = `the A/A control ${named(same)} (a reference, not changed) moved the same way in the same case: the machine or the night moved, not the code`;
    }
    if (why === undefined) continue;
    c.perfNote = `was ${c.perf} ${formatRatioPct(c.ratio)}, but ${why}`;
    c.perf = 'AMBIGUOUS';
    demoted.push(c);
  }
  return { ...(machine ? { machine } : {}), controls, demoted };
}

function machineMove(
  references: CaseComparison[],
  controls: CaseComparison[],
): MachineMove | undefined {
  if (references.length < 3) return undefined;
  for (const direction of ['SLOWER', 'FASTER'] as const) {
    const these = controls.filter((c) => c.perf === direction);
    if (these.length * 2 < references.length) continue;
    const ratios = these.map((c) => c.ratio).filter((r): r is number => r !== undefined);
    return {
      direction,
      moved: these.length,
      of: references.length,
      medianPct: ratios.length ? 100 * (median(ratios) - 1) : 0,
    };
  }
  return undefined;
}

/** "the machine moved: 12 of 20 reference cases (code not changed) were SLOWER, median +6.1 %" */
export function machineText(m: MachineMove): string {
  const sign = m.medianPct >= 0 ? '+' : '−';
  return (
    `the machine moved: ${m.moved} of ${m.of} reference cases (code not changed) were ` +
    `${m.direction} against the stored run, median ${sign}${Math.abs(m.medianPct).toFixed(1)} %`
  );
}

/**
 * Marks a SAME whose interval cleared the rule's threshold and was kept SAME only by the absolute
 * floor (compare.min_change_ms, paired.min_change_ms): a change that is real, but too small in
 * time to be told from launch jitter. `ruleThresholdPct` is the threshold without the floor.
 */
export function markBelowFloor(c: CaseComparison, ruleThresholdPct: number, floorMs: number): void {
  if (c.perf !== 'SAME' || c.ciLo === undefined || c.ciHi === undefined) return;
  if (!(c.thresholdPct > ruleThresholdPct)) return;
  const up = 100 * (c.ciLo - 1) > ruleThresholdPct;
  const down = 100 * (1 - c.ciHi) > ruleThresholdPct;
  if (!up && !down) return;
  c.belowFloor = true;
  const base = c.baselineMedianMs;
  const us =
    base !== undefined && c.ratio !== undefined
      ? ` (${(1000 * Math.abs(c.ratio - 1) * base).toFixed(2)} µs)`
      : '';
  const note =
    `below the ${fmtFloor(floorMs)} floor: ${formatRatioPct(c.ratio)} in [${formatRatioPct(c.ciLo)}, ` +
    `${formatRatioPct(c.ciHi)}]${us} is a real change, but smaller than the floor, so it is not called ${up ? 'SLOWER' : 'FASTER'}`;
  c.perfNote = c.perfNote ? `${note}; ${c.perfNote}` : note;
}

function fmtFloor(ms: number): string {
  return ms >= 1 ? `${ms} ms` : `${Number((ms * 1000).toPrecision(3))} µs`;
}
