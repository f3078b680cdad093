// The action's side effects, passed in: the toolkit's core, the GitHub client, the file system,
// the measuring run. Tests pass their own.
import * as actionsCore from '@actions/core';
import { mkdir, writeFile } from 'node:fs/promises';
import type { Config } from '../config/index.js';
import type { DeepOptions, DeepOutcome } from '../deep/index.js';
import { actionsExec } from '../lib/index.js';
import type { Annotation } from './annotations.js';
import { fullRun, startCheck, type FullRun, type FullRunOptions } from '../pipeline/index.js';
import {
  createGitHubClient,
  type GitHubClient,
  type PublishDeps,
  TimeBudget,
} from '../publish/index.js';

/** The deadlines a client is made with. */
export interface ClientLimits {
  requestTimeoutMs: number;
  /** Started when publishing starts; the trust check before it has only per-request deadlines. */
  budget: TimeBudget;
}

/** The parts of @actions/core the action uses; tests pass their own. */
export interface ActionCore {
  getInput(name: string): string;
  setOutput(name: string, value: string): void;
  setFailed(message: string): void;
  warning(message: string): void;
  info(message: string): void;
  appendSummary(markdown: string): Promise<void>;
  /** an error, warning or notice at a file and line (src/action/annotations.ts) */
  annotate(annotation: Annotation): void;
}

export interface RunDeps {
  core: ActionCore;
  env: Record<string, string | undefined>;
  createClient(token: string, limits: ClientLimits): GitHubClient;
  fs: PublishDeps['fs'];
  /** doctor → build → harness on this runner, when no results input is given */
  measure(options: FullRunOptions): Promise<FullRun>;
  /** the deep checks (input 'deep'); default: compute-sanitizer and ncu on this runner */
  deep?(config: Config, options: DeepOptions): Promise<DeepOutcome>;
}

/**
 * The runner's deps. `token`: the 'token' input as the relaunched image carried it
 * (src/action/relaunch.ts), no longer in the environment where @actions/core reads inputs.
 */
export function defaultDeps(carried: { token?: string } = {}): RunDeps {
  const env = process.env;
  return {
    env,
    core: {
      getInput: (name) =>
        name === 'token' && carried.token !== undefined
          ? carried.token.trim()
          : actionsCore.getInput(name),
      setOutput: (name, value) => actionsCore.setOutput(name, value),
      setFailed: (message) => actionsCore.setFailed(message),
      warning: (message) => actionsCore.warning(message),
      info: (message) => actionsCore.info(message),
      annotate: ({ level, message, properties }) => actionsCore[level](message, properties),
      appendSummary: async (markdown) => {
        if (!env['GITHUB_STEP_SUMMARY']) {
          actionsCore.info(
            'GITHUB_STEP_SUMMARY is not set (not on a runner): no job summary written.',
          );
          return;
        }
        await actionsCore.summary.addRaw(markdown, true).write();
      },
    },
    createClient: (token, limits) =>
      createGitHubClient({
        token,
        apiUrl: env['GITHUB_API_URL'],
        requestTimeoutMs: limits.requestTimeoutMs,
        budget: limits.budget,
        sleep: (ms) => new Promise((done) => setTimeout(done, ms)),
        nowMs: () => Date.now(),
        log: (message) => actionsCore.info(message),
      }),
    fs: { mkdir, writeFile: (path, data) => writeFile(path, data, 'utf8') },
    measure: async (options) => {
      const log = {
        info: (line: string) => actionsCore.info(line),
        startGroup: (name: string) => actionsCore.startGroup(name),
        endGroup: () => actionsCore.endGroup(),
        warning: (message: string) => actionsCore.warning(message),
      };
      // `kernelgate check` first: a configuration mistake fails before any build or GPU time,
      // with each problem at its file and line (the annotations of src/action/main.ts). It reads
      // the checkout while the base revision is checked out and the doctor reads the machine;
      // measure() awaits it before the build.
      const check = startCheck(options.config, {
        harnessRoot: options.harnessRoot,
        exec: actionsExec(),
        log,
      });
      return fullRun({ ...options, check }, { exec: actionsExec(), log });
    },
  };
}
