// The deep checks in the gate: a sanitizer finding fails it (policy.fail_on_sanitizer, default
// true); a sanitizer run that did not finish is a warning, and so is a variant not checked (with
// the reason) and a run whose findings the harness's own code launched; Nsight Compute never
// gates.
import type { KernelgateResults, SanitizerRun } from '../results/index.js';

function where(s: SanitizerRun): string {
  return `sanitizer ${s.tool}: ${s.kernel}/${s.variant} ${s.case}`;
}

/** One line naming the tool, the variant, the count and the first finding. */
export function sanitizerLine(s: SanitizerRun): string {
  if (s.status === 'skipped') return `${where(s)}: not checked`;
  if (s.status === 'error') return `${where(s)}: did not run to the end`;
  const first = s.findings?.[0];
  const what = first ? `: ${first.what}${first.kernel ? ` in ${first.kernel}` : ''}` : '';
  const count = `${s.errors} error${s.errors === 1 ? '' : 's'}`;
  if (harnessOnly(s)) {
    return `${where(s)}: ${count} in the harness's own code (${first?.python_frame}), not the variant's${what}`;
  }
  return `${where(s)}: ${count}${what}`;
}

/** A run whose findings were all launched by the harness's own code: none is the variant's. */
export function harnessOnly(s: SanitizerRun): boolean {
  return (
    s.status === 'findings' && (s.findings ?? []).length > 0 && s.findings!.every((f) => f.harness)
  );
}

export function deepProblems(
  results: KernelgateResults,
  failOnSanitizer: boolean,
): { reasons: string[]; warnings: string[] } {
  const reasons: string[] = [];
  const warnings: string[] = [];
  for (const s of results.deep?.sanitizer ?? []) {
    if (harnessOnly(s)) warnings.push(sanitizerLine(s));
    else if (s.status === 'findings') {
      (failOnSanitizer ? reasons : warnings).push(sanitizerLine(s));
    } else if (s.status === 'error') {
      const line = (s.first_lines ?? '').split('\n')[0] ?? '';
      warnings.push(`${where(s)}: did not run to the end${line ? `: ${line}` : ''}`);
    } else if (s.status === 'skipped') {
      warnings.push(`${where(s)}: not checked: ${s.reason ?? 'no reason recorded'}`);
    }
  }
  return { reasons, warnings };
}
