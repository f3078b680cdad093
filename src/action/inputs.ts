// The action's inputs (action.yml), read and checked: each error names the input and its value.
import { statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { type Config, loadConfig } from '../config/index.js';
import { type DeepCheck, parseDeepChecks } from '../deep/index.js';
import { type HistoryInputs, readHistoryInputs } from '../history/index.js';
import {
  checkCommentKey,
  DEFAULT_COMMENT_KEY,
  DEFAULT_PUBLISH_BUDGET_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from '../publish/index.js';
import { readShardInputs, type ShardInputs } from './shard.js';
import { DEFAULT_GIT_TIMEOUT_S } from '../lib/index.js';
import { DEFAULT_APPROVAL_LABEL } from './trust.js';

export const MODES = ['auto', 'pr', 'push', 'schedule'] as const;

export type Mode = (typeof MODES)[number];

export const SAVE_BASELINE = ['auto', 'true', 'false', 'always'] as const;

export const PAIRED = ['auto', 'true', 'false'] as const;

export interface ActionInputs {
  /** Results the harness already wrote; undefined: this step measures (doctor → build → harness). */
  results: string | undefined;
  /** Kernels to measure (all when empty). */
  kernels: string[];
  /** The baseline store: trusted runs' results per branch and GPU SKU. */
  baselineDir: string;
  /** Where baselines and history are kept: baseline-dir, or a data branch (history: branch). */
  history: HistoryInputs;
  /**
   * auto/true: push and schedule runs whose gate passed store their results as the branch's newest
   * baseline; always: failing runs too; false: never.
   */
  saveBaseline: (typeof SAVE_BASELINE)[number];
  /** auto/true: a pull request run times its base revision side by side (paired A/B); false: never. */
  paired: (typeof PAIRED)[number];
  /** a checkout of the base revision made by an earlier step; undefined: a git worktree is made */
  basePath: string | undefined;
  baseline: string | undefined;
  config: string;
  token: string | undefined;
  mode: Mode;
  comment: boolean;
  commentKey: string;
  reportDir: string;
  approvalLabel: string;
  /** the trend dashboard's https address ('dashboard-url'), linked from the comment and the issue */
  dashboardUrl: string | undefined;
  prNumber: number | undefined;
  trustOnly: boolean;
  /** Each GitHub request's deadline, connecting included ('request-timeout', seconds). */
  requestTimeoutMs: number;
  /** Each git command's deadline: the data branch's fetch and push, the base's fetch ('git-timeout'). */
  gitTimeoutMs: number;
  /** All of publishing: finding the PR, the comment or issue, retries and waits ('publish-timeout'). */
  publishTimeoutMs: number;
  /** true: a publishing failure fails the step; false (default): a warning, the verdict decides. */
  failOnPublishError: boolean;
  /** shard, shard-balance, merge, shards: a run split over a matrix (src/shard, docs/scaling.md) */
  shard: ShardInputs;
  /** deep: the deep checks to run after measuring (src/deep), e.g. sanitizer,ncu; none when empty */
  deep: DeepCheck[];
  /**
   * profile: Nsight Compute over base and head of each moved variant (ncu-compare). auto: on for
   * the nightly and for a pull request labelled PROFILE_LABEL; true: always; false: never
   */
  profile: 'auto' | 'true' | 'false';
  /** profile-time-box: the comparison's seconds, all of its runs together (default 120) */
  profileTimeBoxS: number;
}

/** A pull request with this label gets the Nsight Compute comparison under profile: auto. */
export const PROFILE_LABEL = 'kernelgate-profile';
export const DEFAULT_PROFILE_TIME_BOX_S = 120;

/** Typed input getters: every error quotes the input's name and the bad value. */
export function readInputs(getInput: (name: string) => string): ActionInputs {
  const text = (name: string): string | undefined => {
    const value = getInput(name).trim();
    return value === '' ? undefined : value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const value = text(name);
    if (value === undefined) return fallback;
    if (/^(true|True|TRUE)$/.test(value)) return true;
    if (/^(false|False|FALSE)$/.test(value)) return false;
    throw new Error(`Input '${name}' must be true or false, got '${value}'.`);
  };
  const results = text('results');
  const trustOnly = bool('trust-only', false);
  const kernels = (text('kernels') ?? '').split(/[\s,]+/).filter((name) => name !== '');
  const badKernel = kernels.find((name) => !/^[a-z0-9_]+$/.test(name));
  if (badKernel !== undefined) {
    throw new Error(
      `Input 'kernels' must list kernel folder names (a-z, 0-9, _), separated by commas; got '${badKernel}'.`,
    );
  }
  const saveBaseline = text('save-baseline') ?? 'auto';
  if (!(SAVE_BASELINE as readonly string[]).includes(saveBaseline)) {
    throw new Error(
      `Input 'save-baseline' must be one of ${SAVE_BASELINE.join(', ')}; got '${saveBaseline}'.`,
    );
  }
  const paired = text('paired') ?? 'auto';
  if (!(PAIRED as readonly string[]).includes(paired)) {
    throw new Error(`Input 'paired' must be one of ${PAIRED.join(', ')}; got '${paired}'.`);
  }
  const mode = text('mode') ?? 'auto';
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new Error(`Input 'mode' must be one of ${MODES.join(', ')}; got '${mode}'.`);
  }
  const secondsInput = (name: string, fallbackMs: number): number => {
    const value = text(name);
    if (value === undefined) return fallbackMs;
    if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) {
      throw new Error(
        `Input '${name}' must be a number of seconds greater than 0, got '${value}'.`,
      );
    }
    return Math.round(Number(value) * 1000);
  };
  const prText = text('pr-number');
  if (prText !== undefined && !/^[1-9]\d{0,9}$/.test(prText)) {
    throw new Error(
      `Input 'pr-number' must be a pull request number (a positive whole number), got '${prText}'.`,
    );
  }
  return {
    results,
    kernels,
    baselineDir: text('baseline-dir') ?? '.kernelgate/baselines',
    history: readHistoryInputs(getInput),
    saveBaseline: saveBaseline as ActionInputs['saveBaseline'],
    paired: paired as ActionInputs['paired'],
    basePath: text('base-path'),
    baseline: text('baseline'),
    config: text('config') ?? '.',
    token: text('token'),
    mode: mode as Mode,
    comment: bool('comment', true),
    commentKey: checkCommentKey(text('comment-key') ?? DEFAULT_COMMENT_KEY),
    reportDir: text('report-dir') ?? '.kernelgate/report',
    approvalLabel: text('approval-label') ?? DEFAULT_APPROVAL_LABEL,
    dashboardUrl: dashboardUrlInput(text('dashboard-url')),
    prNumber: prText === undefined ? undefined : Number(prText),
    trustOnly,
    requestTimeoutMs: secondsInput('request-timeout', DEFAULT_REQUEST_TIMEOUT_MS),
    gitTimeoutMs: secondsInput('git-timeout', DEFAULT_GIT_TIMEOUT_S * 1000),
    publishTimeoutMs: secondsInput('publish-timeout', DEFAULT_PUBLISH_BUDGET_MS),
    failOnPublishError: bool('fail-on-publish-error', false),
    shard: readShardInputs(getInput),
    deep: parseDeepChecks(text('deep') ?? '', "Input 'deep'"),
    ...readProfileInputs(getInput),
  };
}

/** dashboard-url: an https address the report can link as it is, or none. */
function dashboardUrlInput(url: string | undefined): string | undefined {
  if (url !== undefined && !/^https:\/\/[^\s()<>"'`\\]+$/.test(url)) {
    throw new Error(
      `Input 'dashboard-url' must be an https:// address with no spaces, quotes or brackets, got '${url}'.`,
    );
  }
  return url;
}

/** profile and profile-time-box; each error quotes the input and the bad value. */
export function readProfileInputs(
  getInput: (name: string) => string,
): Pick<ActionInputs, 'profile' | 'profileTimeBoxS'> {
  const profile = getInput('profile').trim() || 'auto';
  if (profile !== 'auto' && profile !== 'true' && profile !== 'false') {
    throw new Error(`Input 'profile' must be one of auto, true, false; got '${profile}'.`);
  }
  const box = getInput('profile-time-box').trim();
  if (box !== '' && (!/^\d+(\.\d+)?$/.test(box) || Number(box) <= 0)) {
    throw new Error(
      `Input 'profile-time-box' must be a number of seconds greater than 0, got '${box}'.`,
    );
  }
  return { profile, profileTimeBoxS: box === '' ? DEFAULT_PROFILE_TIME_BOX_S : Number(box) };
}

export function inWorkspace(env: Record<string, string | undefined>, path: string): string {
  return isAbsolute(path) ? path : resolve(env['GITHUB_WORKSPACE'] ?? process.cwd(), path);
}

export function loadConfigInput(path: string): Config {
  const isFile = statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  return isFile ? loadConfig(dirname(path), { configFile: path }) : loadConfig(path);
}
