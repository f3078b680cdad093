// What identity skipping saved: the seconds the skipped variant-cases' timing took in the stored run;
// and how the identical variants were verified (run.verify_identical, the harness's identical.verified).
import { escapeMarkdown, fixed } from '../lib/index.js';
import { IDENTICAL_NOTE, isIdentical } from '../judge/index.js';
import type { CaseResult, KernelgateResults } from '../results/index.js';
import { plural } from './cells.js';

/**
 * "identical build and sources in base and head, not timed, verified on the first seed only (…)"
 * for the summary's SAME-by-identity line: why the variant-cases were left untimed (references that
 * differ in the harness alone say so, in the lead when all of them are) and what the harness did
 * with them, from each record's
 * identical.verified (absent in documents written before run.verify_identical: every seed), and
 * the tails it verified on the first seed only. Undefined without such a case.
 */
export function identicalVerified(results: KernelgateResults): string | undefined {
  const cases = results.cases.filter(isIdentical);
  if (!cases.length) return undefined;
  const first = cases.filter((c) => c.identical?.verified === 'first_seed').length;
  const every = cases.length - first;
  const how =
    every === 0
      ? "verified on the first seed only (`run.verify_identical: first_seed`: their code is the base's, verified on every seed on its push)"
      : first === 0
        ? 'verified on every seed'
        : `verified on the first seed only (${first}) or on every seed (${every})`;
  const tails = (results.tails ?? []).filter((t) => t.identical?.verified === 'first_seed').length;
  // references left untimed because they differ from the base in the harness alone
  const harness = cases.filter(harnessAlone).length;
  const all = harness === cases.length;
  const references = `references whose only difference${all ? ' from the base' : ''} is the harness, which their kernel's A/A control (timed) measures`;
  // all of them: the lead says so (their build and sources are the base's, their harness is not)
  const lead = all ? references : 'identical build and sources in base and head';
  const only = harness && !all ? `; ${harness} of them ${references}` : '';
  return `${lead}, not timed, ${how}${tails ? `; ${plural(tails, 'tail case')} of theirs on the first seed only too` : ''}${only}`;
}

/** A reference left untimed because it differs from the base in the harness alone (--harness-only). */
const harnessAlone = (c: CaseResult) => c.identical?.reason !== IDENTICAL_NOTE;

/**
 * The seconds a record's timing took, as its document measured them: a paired record's
 * paired.seconds (and its confirming pair's), else the sum of its samples (and of the base's,
 * when it carries them). Undefined when the record was not timed.
 */
export function timingSeconds(r: CaseResult): number | undefined {
  if (!r.timing) return undefined;
  const p = r.paired;
  if (p?.seconds !== undefined) return p.seconds + (p.confirm?.seconds ?? 0);
  const sum = (ms: number[] | undefined) => (ms ?? []).reduce((s, x) => s + x, 0) / 1000;
  return sum(r.timing.samples_ms) + sum(p?.base_timing?.samples_ms);
}

/**
 * " Identity skipped the timing of N variant-cases (…), about S GPU-seconds of timing in the
 * stored run of <sha>." when a pull request's run had any; the saving is what those variant-cases'
 * timing took in `baseline` (timingSeconds), or said unknown without one of this run's GPU.
 */
export function identitySkipped(results: KernelgateResults, baseline?: KernelgateResults): string {
  const skipped = results.cases.filter(isIdentical);
  const n = skipped.length;
  if (n === 0) return '';
  const harness = skipped.some(harnessAlone)
    ? ', or references that differ in the harness alone'
    : '';
  const head = ` Identity skipped the timing of ${n} variant-case${n === 1 ? '' : 's'} (identical build and sources in base and head${harness}: verified, not timed)`;
  return `${head}, ${saving(skipped, baseline, skuOf(results))}.${controlsLine(results)}`;
}

/**
 * " The A/A control attention/sdpa\_default was timed on its kernel's headline case and beside 1
 * confirmation, not in 7 other cases (`run.time_control: headline`)." when a control was left
 * untimed in a case (identical.control) or timed beside a confirmation (paired.timed_in); ''.
 */
export function controlsLine(results: KernelgateResults): string {
  const untimed = results.cases.filter((c) => c.identical?.control === true && isIdentical(c));
  const beside = results.cases.filter((c) => c.paired?.timed_in === 'confirmation');
  if (!untimed.length && !beside.length) return '';
  const names = [...new Set([...untimed, ...beside].map((c) => `${c.kernel}/${c.variant}`))];
  const which = `${names.length === 1 ? 'control' : 'controls'} ${names.map(escapeMarkdown).join(', ')}`;
  const confirmations = beside.length ? ` and beside ${plural(beside.length, 'confirmation')}` : '';
  const rest = untimed.length
    ? `, not in ${untimed.length} other case${untimed.length === 1 ? '' : 's'}`
    : '';
  return ` The A/A ${which} ${names.length === 1 ? 'was' : 'were'} timed on the headline case${confirmations}${rest} (\`run.time_control: headline\`).`;
}

function saving(
  skipped: CaseResult[],
  baseline: KernelgateResults | undefined,
  sku: string | undefined,
): string {
  if (!baseline) return 'the GPU-seconds it saved unknown: no stored run to price it';
  const theirs = skuOf(baseline);
  if (sku !== undefined && theirs !== undefined && theirs !== sku) {
    return `the GPU-seconds it saved unknown: the stored run is of another GPU (${escapeMarkdown(theirs)})`;
  }
  const key = (c: CaseResult) => `${c.kernel}\u0000${c.variant}\u0000${c.case}`;
  const stored = new Map(baseline.cases.map((c) => [key(c), timingSeconds(c)]));
  const priced = skipped.map((c) => stored.get(key(c))).filter((s): s is number => s !== undefined);
  const sha = baseline.run.git_sha;
  const of = sha
    ? `of ${escapeMarkdown(sha.slice(0, 7))}`
    : `of ${escapeMarkdown(baseline.run.started_at)}`;
  if (priced.length === 0) return `none of them timed in the stored run ${of} to price it`;
  const total = priced.reduce((s, x) => s + x, 0);
  const missing = skipped.length - priced.length;
  const notes = [
    baseline.run.paired_base ? '' : 'one revision, unpaired',
    missing ? `${missing} of them not timed in it` : '',
  ].filter(Boolean);
  return `about ${fixed(total, 0)} GPU-seconds of timing in the stored run ${of}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

/** The run's GPU SKU, or undefined when unknown. */
function skuOf(results: KernelgateResults): string | undefined {
  const sku = results.environment.gpu.sku;
  return sku === undefined || sku === 'unknown' ? undefined : sku;
}
