// The report's input, output and rendering options.
import type { Config, ManifestChange } from '../config/index.js';
import type { Comparison, GateResult, MeasurementError, TierStatus } from '../judge/index.js';
import type { KernelgateResults } from '../results/index.js';
import type { Changes } from './digest.js';

/** GitHub refuses comment bodies over 65,536 characters; the margin leaves room for a marker. */
export const GITHUB_COMMENT_LIMIT = 65_536;

export const COMMENT_MARGIN = 1_024;

export const COMMENT_MAX_CHARS = GITHUB_COMMENT_LIMIT - COMMENT_MARGIN;

/** How far a comment had to degrade to fit: see renderReport. */
export type DegradeLevel = 0 | 1 | 2 | 3;

/** Facts about the trigger the report shows as given (escaped). */
export interface ReportContext {
  prNumber?: number;
  prTitle?: string;
  sha?: string;
  ref?: string;
  runUrl?: string;
  /** the trend dashboard's address (the action's input dashboard-url): linked beside the run's */
  dashboardUrl?: string;
}

export interface ReportInput {
  kind: 'pr' | 'nightly';
  results: KernelgateResults;
  baseline?: KernelgateResults;
  comparison: Comparison;
  tiers: TierStatus[];
  gate: GateResult;
  config: Config;
  /** a hidden line publish uses to find its comment, e.g. <!-- kernelgate:report:default --> */
  marker?: string;
  /** facts about the trigger, shown as given (escaped) */
  context?: ReportContext;
  /**
   * Earlier stored runs of the same branch and GPU (the store's history(), any order): the
   * nightly report shows each headline's trend across them. Runs of another GPU are left out.
   */
  history?: KernelgateResults[];
  /**
   * The nightly's "accepted regressions since last night": stored runs since the last nightly
   * whose gate let SLOWER cases through because a pull request carried the acceptance label.
   */
  acceptedSince?: AcceptedSince[];
  /** the pull request's acceptance label, when it carries one (the gate says what it let through) */
  acceptance?: { label: string; by?: string; pr?: number };
  /** the repository's web address (https://github.com/owner/repo): commits are shown as links */
  repoUrl?: string;
  /**
   * A pull request's own manifest changes against its base revision's kernel.yml files (the
   * pipeline's baseManifests()), or why they could not be read: the findings name them.
   */
  manifests?: { changes: ManifestChange[] } | { unreadable: { root: string; error: string } };
  /** override the templates folder (tests) */
  templatesDir?: string;
  /** override the comment size budget (tests) */
  commentMaxChars?: number;
}

/** A stored run whose gate let SLOWER cases through because a pull request accepted them. */
export interface AcceptedSince {
  startedAt: string;
  sha?: string;
  label: string;
  by?: string;
  pr?: number;
  cases: number;
}

export interface RenderedReport {
  /** everything, for the job summary and the report file */
  full: string;
  /** fits a GitHub comment (≤ COMMENT_MAX_CHARS) */
  comment: string;
  /** 0 in full, 1 fewer changed-case rows and no examples, 2 no changed-case rows, 3 truncated */
  commentLevel: DegradeLevel;
  /**
   * A nightly report that found a regression or a failure: one line to post as a new comment on
   * the nightly issue (editing the body notifies nobody; a comment notifies its
   * subscribers). Absent for pull requests and for a nightly that passed cleanly.
   */
  alert?: string;
}

export interface ViewOptions {
  /** the full report (job summary) rather than the comment */
  full: boolean;
  /** changed-case rows per variant in the comment (undefined: all) */
  rowsPerVariant: number | undefined;
  /** changed-case rows in all, in the comment (report.max_rows) */
  maxRows: number | undefined;
  /** an example message beside each finding */
  examples: boolean;
  logTails: boolean;
}

/** Changed-case rows a comment shows of each variant, and notes cut to this many characters. */
export const COMMENT_ROWS_PER_VARIANT = 10;

export const COMMENT_NOTE_CHARS = 140;

export interface Digest {
  changes: Changes;
  measured: Map<string, MeasurementError>;
  base: TierStatus[] | undefined;
}
