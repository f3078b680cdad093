// The action's choice of store: `history: dir` (the baseline-dir folder on the runner, the default)
// or `history: branch` (records on a data branch of this repository, read by every run and
// written only by trusted push and schedule runs). Kept apart from main.ts, which calls in here.
import { join } from 'node:path';
import pkg from '../../package.json' with { type: 'json' };
import {
  fileBaselineStore,
  type BaselineStore,
  type SaveContext,
  type StoredAcceptance,
  type StoredBaseline,
  STORE_KEY_VARIABLE,
  storeKeyOf,
} from '../store/index.js';
import type { Comparison } from '../judge/index.js';
import type { Config } from '../config/index.js';
import { actionsExec, type Exec } from '../lib/index.js';
import type { KernelgateResults } from '../results/index.js';
import { branchStore, DEFAULT_DATA_BRANCH } from './branch-store.js';

export const HISTORY_KINDS = ['dir', 'branch'] as const;
export type HistoryKind = (typeof HISTORY_KINDS)[number];

export interface HistoryInputs {
  /** dir: the baseline-dir folder; branch: a data branch of a git repository */
  kind: HistoryKind;
  /** the data branch (history-branch) */
  branch: string;
  /** the repository holding it (history-remote); undefined: this repository */
  remote: string | undefined;
}

/** kernelgate's own version, written into every record. */
export const KERNELGATE_VERSION: string = (pkg as { version: string }).version;

/** The history inputs; every error quotes the input's name and the bad value. */
export function readHistoryInputs(getInput: (name: string) => string): HistoryInputs {
  const text = (name: string) => {
    const value = getInput(name).trim();
    return value === '' ? undefined : value;
  };
  const kind = text('history') ?? 'dir';
  if (!(HISTORY_KINDS as readonly string[]).includes(kind)) {
    throw new Error(`Input 'history' must be one of ${HISTORY_KINDS.join(', ')}; got '${kind}'.`);
  }
  const branch = text('history-branch') ?? DEFAULT_DATA_BRANCH;
  // A branch name git accepts and that cannot be read as an option or a refspec.
  if (!/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(branch) || /\.\.|\/\/|\.lock$|\/$/.test(branch)) {
    throw new Error(
      `Input 'history-branch' must be a branch name (letters, digits, '.', '_', '-', '/'); got '${branch}'.`,
    );
  }
  return { kind: kind as HistoryKind, branch, remote: text('history-remote') };
}

/**
 * git's environment for the data branch of this repository: the token as an authorisation header,
 * passed in the environment (never on a command line, never written to a config file) and only to
 * this server. A remote elsewhere gets no token.
 */
export function gitAuthEnv(
  remote: string,
  token: string | undefined,
  server: string,
): Record<string, string> {
  const base = server.replace(/\/+$/, '');
  if (!token || !remote.startsWith(`${base}/`)) return {};
  const basic = Buffer.from(`x-access-token:${token}`, 'utf8').toString('base64');
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: `http.${base}/.extraheader`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
  };
}

export interface StoreDeps {
  warning(message: string): void;
  info(message: string): void;
  /** masks a secret in the log (@actions/core setSecret) */
  setSecret?(secret: string): void;
  exec?: Exec;
}

/** The store the action reads baselines from and writes trusted runs to. */
export function actionStore(
  inputs: {
    history: HistoryInputs;
    baselineDir: string;
    token: string | undefined;
    /** each git command's deadline (the 'git-timeout' input); default 120 s */
    gitTimeoutMs?: number;
  },
  env: Record<string, string | undefined>,
  inWorkspace: (path: string) => string,
  deps: StoreDeps,
): BaselineStore {
  const key = storeKeyOf(env);
  if (key !== undefined) deps.setSecret?.(key);
  if (inputs.history.kind === 'dir') {
    return fileBaselineStore(inWorkspace(inputs.baselineDir), {
      warn: deps.warning,
      info: deps.info,
      key,
    });
  }
  if (key !== undefined) {
    deps.info(
      `kernelgate: ${STORE_KEY_VARIABLE} signs the records of a baseline-dir folder; the data branch's records are not signed: who can push to ${inputs.history.branch} can write them (protect it with a ruleset, docs/forks.md).`,
    );
  }
  const server = (env['GITHUB_SERVER_URL'] ?? 'https://github.com').replace(/\/+$/, '');
  const remote = inputs.history.remote ?? `${server}/${env['GITHUB_REPOSITORY'] ?? ''}.git`;
  const gitEnv = gitAuthEnv(remote, inputs.token, server);
  if (gitEnv['GIT_CONFIG_VALUE_0']) deps.setSecret?.(gitEnv['GIT_CONFIG_VALUE_0'].split(' ')[2]!);
  const runId = env['GITHUB_RUN_ID'];
  const attempt = env['GITHUB_RUN_ATTEMPT'];
  return branchStore({
    remote,
    branch: inputs.history.branch,
    cacheDir: join(env['RUNNER_TEMP'] ?? inWorkspace('.kernelgate'), 'kernelgate-history.git'),
    exec: deps.exec ?? actionsExec(),
    warn: deps.warning,
    info: deps.info,
    gitEnv,
    ...(inputs.gitTimeoutMs !== undefined ? { timeoutS: inputs.gitTimeoutMs / 1000 } : {}),
    kernelgateVersion: KERNELGATE_VERSION,
    ...(runId ? { runId: attempt ? `${runId}-${attempt}` : runId } : {}),
  });
}

/** What a record keeps besides the results: the event, the run's page, the verdicts, references. */
export function saveContext(
  config: Config,
  event: string,
  runUrl: string | undefined,
  comparison: Comparison | undefined,
  /** the SLOWER cases the gate let through because a pull request accepted them */
  accepted?: StoredAcceptance,
): SaveContext {
  const references: Record<string, string> = {};
  for (const k of config.kernels) {
    if (k.manifest.speed_reference) references[k.manifest.name] = k.manifest.speed_reference;
  }
  return {
    event,
    ...(runUrl !== undefined ? { artifact: runUrl } : {}),
    references,
    confidence: config.compare.confidence,
    ...(comparison
      ? { verdicts: Object.fromEntries(comparison.cases.map((c) => [c.key, c.perf])) }
      : {}),
    ...(accepted ? { accepted } : {}),
  };
}

/** A stored run whose gate let SLOWER cases through because a pull request accepted them. */
export interface AcceptedRun extends StoredAcceptance {
  startedAt: string;
  sha?: string;
}

/**
 * The accepted regressions stored since the last nightly: the stored runs (newest first) up to the
 * newest one a schedule stored, those that carry an acceptance, newest first.
 */
export function acceptedSinceLastNight(stored: StoredBaseline[]): AcceptedRun[] {
  const out: AcceptedRun[] = [];
  for (const s of stored) {
    if (s.judged?.event === 'schedule') break;
    const accepted = s.judged?.accepted;
    if (!accepted) continue;
    const sha = s.results.run.git_sha;
    out.push({ ...accepted, startedAt: s.results.run.started_at, ...(sha ? { sha } : {}) });
  }
  return out;
}

/**
 * True for runs of pull request code, whatever the mode input says: pull_request,
 * pull_request_target, and a workflow_run that a pull request started. They never write a store.
 */
export function pullRequestEvent(event: { name: string; payload: unknown }): boolean {
  if (event.name === 'pull_request' || event.name === 'pull_request_target') return true;
  if (event.name !== 'workflow_run') return false;
  const run = (event.payload as { workflow_run?: { event?: unknown } } | null)?.workflow_run;
  return run?.event === 'pull_request' || run?.event === 'pull_request_target';
}

/** How many stored runs the nightly report's trends look back over. */
export const TREND_WINDOW = 30;

/**
 * The nightly's trend window: the branch's newest stored runs on this run's GPU SKU, read from the
 * store (records of the data branch, or results files of baseline-dir). Undefined when the branch
 * is unknown or the store cannot be read, which `warn` says: the report then has no trends, and
 * the verdict is the same.
 */
export async function trendRuns(
  store: BaselineStore,
  branch: string | undefined,
  results: KernelgateResults,
  warn: (message: string) => void,
  limit = TREND_WINDOW,
): Promise<{ runs: KernelgateResults[]; accepted: AcceptedRun[] } | undefined> {
  if (branch === undefined) return undefined;
  const sku = results.environment.gpu.sku ?? 'unknown';
  try {
    const stored = await store.history({ branch, sku }, limit);
    return { runs: stored.map((s) => s.results), accepted: acceptedSinceLastNight(stored) };
  } catch (error) {
    warn(
      `No trends in the nightly report: the stored runs of ${branch} on ${sku} could not be read (${(error as Error).message}).`,
    );
    return undefined;
  }
}
