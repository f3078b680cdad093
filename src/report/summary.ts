// Section `summary` (partials/summary.md.mustache): what was judged and the outcome in words.
import { ACCEPT_LABEL } from '../judge/index.js';
import { fixed } from '../lib/index.js';
import { shardTitleParts } from '../shard/index.js';
import { esc, KIND_WORDS, plural } from './cells.js';
import { deepTitleParts } from './deep.js';
import { identicalVerified } from './identity-cost.js';
import {
  blockingKinds,
  CHANGE_KINDS,
  type ChangeKind,
  type Changes,
  isControl,
  outcomeOf,
} from './digest.js';
import type { ReportInput } from './types.js';
import type { JudgedView } from './view-types.js';

/** "Judged: N cases paired against base `abc1234` in this job (…), M against the stored baseline …" */
export function judgedView(input: ReportInput): JudgedView | undefined {
  const paired = input.comparison.paired;
  if (!paired) return undefined;
  const state = input.comparison.baseline;
  return {
    paired: paired.cases,
    // Shown as code: only a commit id (hex) can be, anything else is left out.
    baseShaMd: shaText(paired.baseSha ?? '', input.repoUrl) || undefined,
    thresholdPct: fixed(paired.thresholdPct, 1),
    mdcPct: paired.medianMdcPct === undefined ? undefined : fixed(paired.medianMdcPct, 2),
    stored: paired.baselineCases,
    identical: paired.identical,
    identicalHowMd: identicalVerified(input.results),
    storedCompared: state === 'compared',
    storedOtherGpu: state === 'other-gpu',
    storedNone: state === 'none',
    confirm: paired.confirm,
  };
}

/**
 * The policy on performance regressions in one line, where a candidate is SLOWER: what would block
 * it, or that it blocks and how to accept it, or who accepted it. Undefined with nothing SLOWER.
 */
export function policyLine(input: ReportInput): string | undefined {
  const slower = input.comparison.cases.filter((c) => c.perf === 'SLOWER' && !isControl(c)).length;
  if (input.acceptance && input.gate.verdict === 'fail') {
    return (
      `Policy: the label \`${esc(input.acceptance.label)}\` accepts performance regressions only; ` +
      'this run fails for the reasons below, which no label can accept.'
    );
  }
  if (!slower) return undefined;
  const cases = plural(slower, 'SLOWER case');
  const accepted = input.gate.accepted;
  if (accepted) {
    return (
      `Policy: blocking; accepted by ${acceptedMd(accepted)}, so ` +
      `the ${cases} pass (an acceptance never covers correctness).`
    );
  }
  if (!input.config.policy.failOnSlower) {
    return `Policy: the ${cases} do not block the merge; they would block with \`fail_on_slower: true\`.`;
  }
  if (input.kind === 'nightly') {
    return `Policy: blocking (\`fail_on_slower: true\`); a regression is accepted on its pull request with the label \`${ACCEPT_LABEL}\`.`;
  }
  return `Policy: blocking; add the label \`${ACCEPT_LABEL}\` to accept the ${cases} (performance only: correctness failures cannot be accepted).`;
}

/** "@alice with the label `kernelgate-accept`" in Markdown, the login escaped. */
function acceptedMd(a: { label: string; by?: string }): string {
  const label = `the label \`${esc(a.label)}\``;
  return a.by ? `${esc(`@${a.by}`)} with ${label}` : `${label} (GitHub did not say who applied it)`;
}

/** The nightly's accepted regressions since the last night, one line each. */
export function acceptedSinceView(input: ReportInput): string[] {
  return (input.acceptedSince ?? []).map((a) => {
    const pr = a.pr !== undefined ? `pull request #${a.pr}` : 'a pull request';
    const at = a.sha ? ` at ${shaText(a.sha, input.repoUrl)}` : '';
    return `${pr}, accepted by ${acceptedMd(a)}: ${plural(a.cases, 'SLOWER case')} passed${at} (${esc(a.startedAt)})`;
  });
}

/** A commit as `abc123456789`, a link to it where the repository's address is known. */
export function shaText(sha: string, repoUrl: string | undefined): string {
  if (!/^[0-9a-f]{4,64}$/i.test(sha)) return '';
  const short = `\`${sha.slice(0, 12)}\``;
  return repoUrl && /^https?:\/\/[^\s()<>]+$/.test(repoUrl) ? `[${short}](${repoUrl}/commit/${sha})` : short;
}

/** The title's outcome: pass / regression / fail, and what. */
export function outcomeText(input: ReportInput, changes: Changes): string {
  const outcome = outcomeOf(input.gate, input.comparison.cases);
  const blocks = blockingKinds(input.config);
  const say = (kinds: ChangeKind[]) => {
    const parts: string[] = [];
    for (const v of changes.changed) {
      for (const kind of kinds) {
        const controls = kind === 'slower' || kind === 'faster' ? v.changed.filter(isControl) : [];
        const n =
          (v.counts[kind] ?? 0) - controls.filter((c) => c.perf === kind.toUpperCase()).length;
        if (n)
          parts.push(
            `${esc(`${v.kernel}/${v.variant}`)} ${KIND_WORDS[kind]} on ${plural(n, 'case')}`,
          );
      }
    }
    return parts;
  };
  const join = (parts: string[]) =>
    parts.length > 2
      ? `${parts.slice(0, 2).join(', ')} and ${parts.length - 2} more`
      : parts.join(', ');
  if (outcome === 'fail') {
    const kinds = CHANGE_KINDS.filter((k) => blocks.has(k));
    const parts = [...shardTitleParts(input.results), ...deepTitleParts(input), ...say(kinds)];
    for (const b of input.results.builds ?? []) {
      if (b.status !== 'ok' && blocks.has('build')) {
        parts.push(
          `${esc(`${b.kernel}/${b.variant}`)} ${b.status === 'failed' ? 'build failed' : 'build expectation unmet'}`,
        );
      }
    }
    const n = input.gate.reasons.length;
    return `❌ fail: ${parts.length ? join(parts) : plural(n, 'reason')}`;
  }
  if (outcome === 'regression') {
    const accepted = input.gate.accepted ? ' (accepted)' : '';
    return `⚠️ regression${accepted}: ${join(say(['slower']))}`;
  }
  const faster = say(['faster']);
  const moved = changes.changed.filter((v) => v.changed.some(isControl));
  const control = moved.length
    ? ` (the A/A control ${moved.map((v) => esc(`${v.kernel}/${v.variant}`)).join(', ')} moved: the machine was not quiet)`
    : '';
  if (faster.length) return `✅ pass: ${join(faster)}${control}`;
  if (!changes.judged) return '✅ pass';
  return `✅ pass: ${moved.length ? 'no candidate' : 'no case'} slower or faster${control}`;
}
