// Judging results that already exist: compare → tiers → gate → render. One function, shared by the
// action (which then publishes) and the command line (which prints).
import { annotateAdapted } from '../adapters/index.js';
import { compare, type Comparison } from '../judge/index.js';
import type { Config } from '../config/index.js';
import { type Acceptance, gate, type GateResult } from '../judge/index.js';
import {
  type AcceptedSince,
  renderReport,
  type RenderedReport,
  type ReportInput,
} from '../report/index.js';
import type { KernelgateResults } from '../results/index.js';
import { evaluateTiers, type TierStatus } from '../judge/index.js';
import { baseManifests } from './base-manifests.js';

export interface Judgement {
  comparison: Comparison;
  tiers: TierStatus[];
  verdict: GateResult;
  rendered: RenderedReport;
}

export function judge(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
  kind: ReportInput['kind'],
  context?: ReportInput['context'],
  /** earlier stored runs of the branch, for the nightly report's trends (the store's history()) */
  history?: KernelgateResults[],
  /**
   * a pull request's acceptance label (SLOWER then passes, said so), the nightly's accepted
   * regressions since the last night, the repository's address for links
   */
  extra: { acceptance?: Acceptance; acceptedSince?: AcceptedSince[]; repoUrl?: string } = {},
): Judgement {
  const comparison = annotateAdapted(compare(results, baseline, config), results);
  const tiers = evaluateTiers(results, config);
  const verdict = gate(comparison, tiers, results, config, extra.acceptance);
  // A pull request's own tolerance or manifest changes, named against its base checkout's.
  const manifests = kind === 'pr' ? baseManifests(results, config) : undefined;
  const rendered = renderReport({
    kind,
    results,
    ...(baseline ? { baseline } : {}),
    comparison,
    tiers,
    gate: verdict,
    config,
    ...(context ? { context } : {}),
    ...(history?.length ? { history } : {}),
    ...(extra.acceptance ? { acceptance: extra.acceptance } : {}),
    ...(extra.acceptedSince?.length ? { acceptedSince: extra.acceptedSince } : {}),
    ...(extra.repoUrl ? { repoUrl: extra.repoUrl } : {}),
    ...(manifests ? { manifests } : {}),
  });
  return { comparison, tiers, verdict, rendered };
}
