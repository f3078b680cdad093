// Compares a run with its baseline case by case: a performance verdict decided from the raw
// samples (bootstrap CI of the ratio of medians against the stored baseline, or of the median
// per-pair ratio against the base revision timed in the same job) and a correctness verdict
// (PASS/FAIL/DRIFT).
import type { Config } from '../config/index.js';
import { formatRatioPct, median, spread } from '../lib/index.js';
import type { CaseResult, Environment, KernelgateResults } from '../results/index.js';
import { driftReference, judgeCorrectness } from './correctness.js';
import { applyControls, applyStoredControls, machineText, markBelowFloor } from './controls.js';
import { isIdentical, judgeIdentical } from './identity.js';
import {
  fallbackNote,
  isTimed,
  JUDGED,
  judgePaired,
  judgePerf,
  minChangePct,
  noisePctFor,
  type PerfJudgement,
  unpairedKind,
} from './performance.js';
import { applyTuning } from './tuning.js';
import {
  type BaselineState,
  type CaseComparison,
  caseKey,
  caseLabel,
  type Comparison,
  type JudgeMethod,
  type Unpaired,
} from './verdicts.js';
import { noiseModelOf, noiseNote } from './noise.js';
import {
  adaptedKernels,
  belowThresholdNote,
  markBelowThreshold,
  toolFloorMs,
  toolThresholdPct,
} from './sources.js';

function gpuOf(env: Environment): string {
  return env.gpu.sku && env.gpu.sku !== 'unknown' ? env.gpu.sku : env.gpu.name;
}

function gpuDescription(env: Environment): string {
  if (env.gpu.name === 'none') return 'a machine with no GPU named';
  return env.gpu.sku ? `${env.gpu.sku} (${env.gpu.name})` : env.gpu.name;
}

/** Version differences between the baseline's environment and this run's, one note each. */
export function environmentNotes(current: Environment, baseline: Environment): string[] {
  const fields: [string, string | undefined, string | undefined][] = [
    ['driver', baseline.driver_version, current.driver_version],
    ['driver CUDA version', baseline.driver_cuda_version, current.driver_cuda_version],
    ['CUDA runtime', baseline.cuda_runtime_version, current.cuda_runtime_version],
    ['CUDA toolkit (nvcc)', baseline.cuda_toolkit_version, current.cuda_toolkit_version],
  ];
  const libs = new Set([
    ...Object.keys(baseline.libraries ?? {}),
    ...Object.keys(current.libraries ?? {}),
  ]);
  for (const lib of [...libs].sort()) {
    fields.push([lib, baseline.libraries?.[lib], current.libraries?.[lib]]);
  }
  return fields
    .filter(([, before, now]) => before !== undefined && now !== undefined && before !== now)
    .map(([what, before, now]) => `${what} differs from the baseline: ${before} → ${now}`);
}

/** Whether the baseline can be compared with: none, the same GPU, or another GPU (and why not). */
function baselineState(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
): { state: BaselineState; gpuNote?: string } {
  if (!baseline) return { state: 'none' };
  if (gpuOf(results.environment) === gpuOf(baseline.environment)) return { state: 'compared' };
  return {
    state: 'other-gpu',
    gpuNote:
      `The baseline ran on ${gpuDescription(baseline.environment)}, this run on ` +
      `${gpuDescription(results.environment)}: timings and correctness drift are not ` +
      `compared across GPUs`,
  };
}

/** What judging every case of one run needs to know. */
interface RunContext {
  config: Config;
  state: BaselineState;
  comparable: boolean;
  pairedOn: boolean;
  baseSha: string | undefined;
  baselineByKey: Map<string, CaseResult>;
  /** the run's GPU model, as compare.noise_pct is keyed */
  gpuModel: string | undefined;
  /** kernels read from other tools' output: their noise model is sources.ts's */
  adapted: Map<string, string>;
}

/** The performance verdict of one case: by its pairs when it has them, else the stored baseline. */
function judgeCasePerf(
  key: string,
  current: CaseResult,
  base: CaseResult | undefined,
  run: RunContext,
): {
  perf: PerfJudgement & {
    thresholdPct: number;
    nPairs?: number;
    mdcPct?: number;
    unpaired?: Unpaired;
  };
  method: JudgeMethod;
  /** the threshold without the absolute floor, and the floor (ms): see markBelowFloor */
  rule: { thresholdPct: number; floorMs: number };
} {
  const { config } = run;
  if (isIdentical(current)) return judgeIdentical(config, current.identical?.reason);
  const paired = run.pairedOn ? current.paired : undefined;
  if (isTimed(current) && paired?.base_status === 'ok' && paired.log_ratios.length > 0) {
    const { thresholdPct, minChangeMs } = config.compare.paired;
    return {
      perf: judgePaired(key, current, paired, config),
      method: 'paired',
      rule: { thresholdPct, floorMs: minChangeMs },
    };
  }
  const format = run.adapted.get(current.kernel);
  const adapted = format !== undefined;
  const rulePct = Math.max(
    toolThresholdPct(config.compare, format, current.timing, base?.timing),
    noisePctFor(config, run.gpuModel, current.kernel, current.variant, current.case),
  );
  const floorMs = adapted
    ? toolFloorMs(
        config.compare.minChangeMs,
        current.timing?.samples_ms ?? [],
        base?.timing?.samples_ms ?? [],
      )
    : config.compare.minChangeMs;
  const rule = { thresholdPct: rulePct, floorMs };
  const thresholdPct = Math.max(rulePct, minChangePct(config, base, floorMs));
  const stored = judgePerf(key, current, base, run.comparable, thresholdPct, config, adapted);
  const method: JudgeMethod = JUDGED.includes(stored.perf) ? 'baseline' : 'none';
  if (run.pairedOn && isTimed(current)) {
    const perfNote = fallbackNote(paired, stored, method, run.state);
    return {
      perf: { ...stored, thresholdPct, perfNote, unpaired: unpairedKind(paired) },
      method,
      rule,
    };
  }
  return { perf: { ...stored, thresholdPct }, method, rule };
}

function compareCase(current: CaseResult, run: RunContext): CaseComparison {
  const key = caseKey(current.kernel, current.variant, current.case);
  const base = run.comparable ? run.baselineByKey.get(key) : undefined;
  const paired = run.pairedOn ? current.paired : undefined;
  const samples = current.timing?.samples_ms ?? [];
  const s = samples.length ? spread(samples) : undefined;
  const { perf, method, rule } = judgeCasePerf(key, current, base, run);
  const drift = driftReference(paired, base);
  const judged: CaseComparison = {
    key,
    label: caseLabel(current),
    kernel: current.kernel,
    variant: current.variant,
    caseId: current.case,
    params: current.params,
    status: current.status,
    ...perf,
    method,
    ...(method === 'paired' && run.baseSha !== undefined ? { baseSha: run.baseSha } : {}),
    medianMs: s?.medianMs ?? current.timing?.median_ms,
    iqrMs: s?.iqrMs,
    nSamples: current.timing ? samples.length : undefined,
    ...judgeCorrectness(current, drift, run.config),
    relL2: current.correctness?.rel_l2,
    tolRelL2: current.correctness?.tol_rel_l2,
    baselineRelL2: drift?.correctness?.rel_l2,
    current,
    baseline: base,
  };
  markBelowFloor(judged, rule.thresholdPct, rule.floorMs);
  if (run.adapted.has(current.kernel)) markBelowThreshold(judged);
  return judged;
}

/** The baseline's cases this run does not have (skipped ones aside). */
function missingCases(run: RunContext, seen: Set<string>): CaseComparison[] {
  if (!run.comparable) return [];
  return [...run.baselineByKey]
    .filter(([key, base]) => !seen.has(key) && base.status !== 'skipped')
    .map(([key, base]) => ({
      key,
      label: caseLabel(base),
      kernel: base.kernel,
      variant: base.variant,
      caseId: base.case,
      params: base.params,
      status: 'missing',
      perf: 'MISSING',
      perfNote: 'in the baseline, not in this run',
      method: 'baseline',
      baselineMedianMs: base.timing?.median_ms,
      thresholdPct: run.config.compare.thresholdPct,
      correctness: 'MISSING',
      correctnessReason: 'in the baseline, not in this run',
      baselineRelL2: base.correctness?.rel_l2,
      baseline: base,
    }));
}

/** What the baseline was, or why there was none, in one note. */
function baselineNotes(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  judged: { state: BaselineState; gpuNote?: string },
  pairedCases: number,
  /** the cases judged NEW: a skipped or untimed case is none of them */
  newCases: number,
): string[] {
  const others = newCases ? `${newCases} other case(s) are NEW` : 'no case is NEW';
  if (judged.state === 'other-gpu') {
    return [
      pairedCases > 0
        ? `${judged.gpuNote}; the ${pairedCases} case(s) timed against the base revision in this job are judged by their pairs, ${others}.`
        : `${judged.gpuNote}, so every case is NEW.`,
    ];
  }
  if (judged.state === 'compared' && baseline) {
    const notes = environmentNotes(results.environment, baseline.environment);
    if (baseline.cases.some((c) => c.timing?.median_ci_lo_ms)) {
      notes.push(
        'The baseline is a record of the history (medians and their intervals, no samples): ' +
          "cases not judged by pairs are judged from the two medians' intervals.",
      );
    }
    return notes;
  }
  if (pairedCases > 0) {
    return [
      `No stored baseline was given: the ${pairedCases} case(s) timed against the base revision in this job are judged by their pairs, ${others}.`,
    ];
  }
  return ['No baseline was given: every case is NEW.'];
}

/** The variants of `kernel` that `run` timed (a median). */
function timedVariants(run: KernelgateResults, kernel: string): Set<string> {
  return new Set(
    run.cases
      .filter((c) => c.kernel === kernel && c.status === 'ok' && c.timing?.median_ms !== undefined)
      .map((c) => c.variant),
  );
}

/**
 * A note per kernel judged against the stored run whose timed variants differ from the stored
 * run's. The variants of a case are sampled round by round, so a round's other variants set the
 * SM clock its samples run at: on an H100 at its 700 W cap the same attention kernel ran at 1447
 * MHz back to back and at 1965 MHz between cool kernels, and read 1.10x and 1.05x SDPA default
 * (docs/notes/kernel-gaps.md, the seventeenth session). Pairs share their round mix and cancel it;
 * a comparison with a stored run whose mix differs does not.
 */
function roundMixNotes(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  cases: CaseComparison[],
): string[] {
  if (!baseline) return [];
  const judged = new Set(
    cases
      .filter((c) => c.method === 'baseline' && c.perf !== 'MISSING' && c.perf !== 'NEW')
      .map((c) => c.kernel),
  );
  const notes: string[] = [];
  for (const kernel of [...judged].sort()) {
    const now = timedVariants(results, kernel);
    const then = timedVariants(baseline, kernel);
    const added = [...now].filter((v) => !then.has(v)).sort();
    const gone = [...then].filter((v) => !now.has(v)).sort();
    if (added.length === 0 && gone.length === 0) continue;
    const what = [
      ...(added.length ? [`timed now, not then: ${added.join(', ')}`] : []),
      ...(gone.length ? [`timed then, not now: ${gone.join(', ')}`] : []),
    ].join('; ');
    notes.push(
      `${kernel}: the variants timed beside one another differ from the stored run's (${what}). ` +
        "A round's other variants set the SM clock its samples run at, so this kernel's figures judged " +
        'against the stored run can move without a change of code; pairs (a pull request against its base) do not.',
    );
  }
  return notes;
}

/** Notes on the references judged against the stored run: the machine moved, or some controls. */
function storedControlNotes(stored: ReturnType<typeof applyStoredControls>): string[] {
  const n = stored.demoted.length;
  const verdicts = `${n} FASTER or SLOWER verdict${n === 1 ? '' : 's'} of kernels`;
  if (stored.machine) {
    const m = machineText(stored.machine);
    return [
      `${m[0]!.toUpperCase()}${m.slice(1)}: this run is not timed like the stored one, so no kernel is blamed for a move that size; ${verdicts} in that direction are AMBIGUOUS instead. Pairs (the nightly's and a pull request's paired A/B) do not have this problem.`,
    ];
  }
  if (stored.controls.length === 0) return [];
  const shown = stored.controls
    .slice(0, 5)
    .map((c) => `${c.label} ${c.perf} ${formatRatioPct(c.ratio)}`);
  const more = stored.controls.length - shown.length;
  const list = more > 0 ? [...shown, `and ${more} more`] : shown;
  const then =
    n === 0
      ? ': the machine or the night moved while they were timed.'
      : `, so ${verdicts} in the same direction and case are AMBIGUOUS instead.`;
  return [
    `A/A control${list.length > 1 ? 's' : ''} moved against the stored run: ${list.join(', ')}. Reference variants' code did not change${then}`,
  ];
}

/** Notes on the paired run: A/A controls that moved, pairs left unused by the config. */
function pairedNotes(
  results: KernelgateResults,
  config: Config,
  controls: CaseComparison[],
  demoted: number,
): string[] {
  const notes: string[] = [];
  if (controls.length) {
    const list = controls.map((c) => `${c.label} ${c.perf} ${formatRatioPct(c.ratio)}`).join(', ');
    notes.push(
      `A/A control${controls.length > 1 ? 's' : ''} moved: ${list}. Reference variants run ` +
        `identical code in both arms, so ${demoted} FASTER or SLOWER verdict(s) of the ` +
        `same case(s) are AMBIGUOUS instead: the machine was not quiet; rerun.`,
    );
  }
  const pairedRun = results.cases.filter((c) => c.paired !== undefined).length;
  if ((results.run.paired_base !== undefined || pairedRun > 0) && !config.compare.paired.enabled) {
    notes.push(
      `compare.paired.enabled is false: the pairs of ${pairedRun} case(s) with the base revision were ` +
        `not used; every case is judged against the stored baseline.`,
    );
  }
  return notes;
}

function pairedSummary(
  run: RunContext,
  cases: CaseComparison[],
  controls: CaseComparison[],
): Comparison['paired'] {
  const pairedCases = cases.filter((c) => c.method === 'paired');
  const mdcs = pairedCases.map((c) => c.mdcPct).filter((x): x is number => x !== undefined);
  const confirm = { confirmed: 0, 'not-repeated': 0, unmeasured: 0 };
  for (const c of pairedCases) if (c.confirmed) confirm[c.confirmed] += 1;
  return {
    ...(run.baseSha !== undefined ? { baseSha: run.baseSha } : {}),
    cases: pairedCases.length,
    baselineCases: cases.filter((c) => c.method === 'baseline' && c.perf !== 'MISSING').length,
    ...(cases.some((c) => c.method === 'identical')
      ? { identical: cases.filter((c) => c.method === 'identical').length }
      : {}),
    thresholdPct: run.config.compare.paired.thresholdPct,
    ...(mdcs.length ? { medianMdcPct: median(mdcs) } : {}),
    controlsMoved: controls.map((c) => c.label),
    ...(pairedCases.some((c) => c.confirmed) ? { confirm } : {}),
  };
}

/**
 * Compares `results` with `baseline` (undefined: every case NEW). A baseline from another GPU
 * is not compared: every case is NEW and a note says why. Cases that carry pairs with the base
 * revision (`cases[].paired`, timed in the same job on this GPU) are judged by their pairs
 * whatever the stored baseline is; the others against the stored baseline, with a note when a
 * paired run could not pair them.
 */
export function compare(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
): Comparison {
  const judged = baselineState(results, baseline);
  const pairedRun =
    results.run.paired_base !== undefined || results.cases.some((c) => c.paired !== undefined);
  const run: RunContext = {
    config,
    state: judged.state,
    comparable: judged.state === 'compared',
    pairedOn: config.compare.paired.enabled && pairedRun,
    baseSha: results.run.paired_base?.git_sha,
    gpuModel: noiseModelOf(results),
    adapted: adaptedKernels(results),
    baselineByKey: new Map(
      (baseline?.cases ?? []).map((c) => [caseKey(c.kernel, c.variant, c.case), c]),
    ),
  };
  const cases = results.cases.map((current) => compareCase(current, run));
  cases.push(...missingCases(run, new Set(cases.map((c) => c.key))));
  applyTuning(cases);
  const { controls, demoted } = run.pairedOn
    ? applyControls(cases, results)
    : { controls: [], demoted: [] };
  const stored = applyStoredControls(cases, results);
  const pairedCases = cases.filter((c) => c.method === 'paired').length;
  return {
    cases,
    baseline: judged.state,
    notes: [
      ...baselineNotes(
        results,
        baseline,
        judged,
        pairedCases,
        cases.filter((c) => c.perf === 'NEW').length,
      ),
      ...pairedNotes(results, config, controls, demoted.length),
      ...storedControlNotes(stored),
      ...roundMixNotes(results, judged.state === 'compared' ? baseline : undefined, cases),
      ...[
        noiseNote(config, results, cases.filter((c) => c.method === 'baseline').length),
        belowThresholdNote(cases),
      ].filter((n) => n !== undefined),
    ],
    ...(stored.machine ? { machineMoved: stored.machine } : {}),
    baselineRun: baseline
      ? {
          id: baseline.run.id,
          gitSha: baseline.run.git_sha,
          startedAt: baseline.run.started_at,
          gpu: gpuDescription(baseline.environment),
        }
      : undefined,
    ...(run.pairedOn ? { paired: pairedSummary(run, cases, controls) } : {}),
  };
}
