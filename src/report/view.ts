// The view the templates render: one entry per section, each from its own module.
import { fixed, formatSci } from '../lib/index.js';
import { buildsView } from './builds.js';
import { gpuName, runLink } from './cells.js';
import { changedCasesView, changedLegend } from './changed-cases.js';
import { changesView } from './changes.js';
import { deepView } from './deep.js';
import { diagnosticsView } from './diagnostics.js';
import { variantChanges } from './digest.js';
import { environmentView } from './environment.js';
import { findingsView } from './findings.js';
import { baseTiers, headlineView } from './headline.js';
import { historyView } from './history.js';
import { kernelViews } from './kernels.js';
import { acceptedSinceView, judgedView, outcomeText, policyLine, shaText } from './summary.js';
import { tierViews } from './tiers.js';
import { tailCountsView } from './tails.js';
import { trendsView } from './trends.js';
import { whyView } from './why.js';
import type { Digest, ReportInput, ViewOptions } from './types.js';
import type { BaselineView, ReportView } from './view-types.js';

export function digestOf(input: ReportInput): Digest {
  const measured = new Map(input.gate.measurementErrors.map((m) => [m.key, m]));
  return {
    changes: variantChanges(input.comparison.cases, new Set(measured.keys())),
    measured,
    base: baseTiers(input),
  };
}

function baselineView(
  run: ReportInput['comparison']['baselineRun'],
  repoUrl: string | undefined,
): BaselineView | undefined {
  if (!run) return undefined;
  return {
    id: run.id,
    gpu: run.gpu,
    shaMd: shaText(run.gitSha ?? '', repoUrl) || undefined,
  };
}

export function buildView(input: ReportInput, opts: ViewOptions, digest: Digest): ReportView {
  const { gate: g, results, comparison, config } = input;
  const run = results.run;
  const headline = headlineView(input, digest.base);
  const changedCases = changedCasesView(input, digest.changes, opts, digest.measured);
  const tailCounts = tailCountsView(input);
  return {
    marker: input.marker ?? '',
    title: config.report.title,
    outcome: outcomeText(input, digest.changes),
    pr: input.kind === 'pr',
    nightly: input.kind === 'nightly',
    full: opts.full,
    synthetic: run.synthetic === true,
    baselineSynthetic: input.baseline?.run.synthetic === true,
    context: { prNumber: input.context?.prNumber, prTitle: input.context?.prTitle },
    runUrl: runLink(input.context?.runUrl),
    dashboardUrl: runLink(input.context?.dashboardUrl),
    run: {
      id: run.id,
      startedAt: run.started_at,
      harness: run.harness,
      shaMd: shaText(run.git_sha ?? '', input.repoUrl) || undefined,
      gpu: gpuName(results),
    },
    baseline: baselineView(comparison.baselineRun, input.repoUrl),
    judged: judgedView(input),
    policy: policyLine(input),
    acceptedSince: acceptedSinceView(input),
    counts: g.counts,
    tailCounts,
    buildsOrMeasurement: g.counts.buildFailures > 0 || g.counts.measurementErrors > 0 || undefined,
    changes: changesView(input, digest.changes, tailCounts?.failed),
    why: whyView(input, opts),
    changedCases: changedCases.map(({ kernel, table, tails, more }) => ({
      kernel,
      table,
      tails,
      more,
    })),
    changedLegend: changedLegend(input, changedCases),
    findings: findingsView(input, digest.changes, opts),
    deep: deepView(input, opts),
    headline,
    trends: trendsView(input, opts),
    history: historyView(input, opts),
    notes: comparison.notes,
    hasNotes: comparison.notes.length > 0 || input.baseline?.run.synthetic === true,
    kernels: opts.full ? kernelViews(input) : [],
    tiers: tierViews(input),
    hasTiers: input.tiers.length > 0,
    diagnostics: diagnosticsView(input),
    environment: environmentView(input),
    builds: buildsView(input, opts),
    method: {
      confidencePct: fixed(config.compare.confidence * 100, 0),
      thresholdPct: fixed(config.compare.thresholdPct, 1),
      resamples: config.compare.resamples,
      driftFactor: config.correctness.driftFactor,
      driftFloor: formatSci(config.correctness.driftFloorRelL2),
      paired: comparison.paired !== undefined,
      pairedThresholdPct: fixed(config.compare.paired.thresholdPct, 1),
    },
  };
}
