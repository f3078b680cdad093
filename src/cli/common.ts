// What every command shares: exit statuses, the io, the config and the verdict in words.
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Config, loadConfig, unknownSelection } from '../config/index.js';
import type { GateResult } from '../judge/index.js';
import { packageRoot, writeOutput } from '../lib/index.js';
import { judge } from '../pipeline/index.js';
import { DEFAULT_COMMENT_KEY, reportMarker, withMarker } from '../publish/index.js';
import { InputError, type KernelgateResults } from '../results/index.js';
import { parseShardSpec } from '../shard/index.js';
import { UsageError } from './cli.js';

/** Exit statuses: the gate passed, the gate failed, the command could not run. */
export const EXIT_PASS = 0;

export const EXIT_GATE_FAILED = 1;

export const EXIT_USAGE = 2;

/** The repository (or installed package) root: the folder of kernelgate's package.json. */
export const PACKAGE_ROOT = packageRoot();

/**
 * The built-in recorded run `kernelgate report` judges when given no --results: paths relative
 * to PACKAGE_ROOT, in this one place. A paired pull-request run of the whole kernel set on the
 * H100 (2026-11-23, docs/notes/paired-ab.md run 7): the head carries a planted 2 % slowdown of
 * attention/triton_fa2 and was timed pair by pair against its base in the same job, so it needs
 * no stored baseline.
 */
export const RECORDED_RUN: { results: string; baseline?: string } = {
  results: 'test/fixtures/recorded/paired-slow2-h100/results.json.gz',
};

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

export type Command = (args: string[], io: CliIo) => Promise<number>;

export function configFrom(option: string | undefined, cwd: string): Config {
  const target = resolve(cwd, option ?? '.');
  let isFile: boolean;
  try {
    isFile = statSync(target).isFile();
  } catch {
    throw new InputError(`--config: no such file or folder: ${option ?? '.'}`);
  }
  return isFile ? loadConfig(dirname(target), { configFile: target }) : loadConfig(target);
}

function verdictText(result: GateResult): string {
  const c = result.counts;
  const lines = [
    `kernelgate: ${result.verdict.toUpperCase()} (${c.cases} cases: ${c.passed} pass, ${c.failed} fail, ` +
      `${c.drift} drift, ${c.errors} error/timeout, ${c.skipped} skipped; ${c.slower} slower, ` +
      `${c.faster} faster, ${c.same} same, ${c.ambiguous} ambiguous, ${c.new} new, ${c.missing} missing)`,
    ...result.reasons.map((r) => `  fail: ${r}`),
    ...result.warnings.map((w) => `  note: ${w}`),
  ];
  return `${lines.join('\n')}\n`;
}

export function reportKind(option: string): 'pr' | 'nightly' {
  if (option !== 'pr' && option !== 'nightly') {
    throw new UsageError(`--kind must be pr or nightly (got ${JSON.stringify(option)})`);
  }
  return option;
}

/** Judges (judge.ts), then prints the report (or writes --out) and the verdict. */
export function judgeAndPrint(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
  kind: 'pr' | 'nightly',
  out: string | undefined,
  io: CliIo,
  /** earlier runs of the branch and GPU, for the nightly's trends (the action's store history) */
  history?: KernelgateResults[],
): number {
  const judged = judge(results, baseline, config, kind, undefined, history);
  const { verdict } = judged;
  // What is printed: a nightly's issue body exactly as the action posts it (its marker line, then
  // the short report); for a pull request, the full report (the job summary's).
  const rendered = {
    full:
      kind === 'nightly'
        ? withMarker(reportMarker('nightly', DEFAULT_COMMENT_KEY), judged.rendered.comment)
        : judged.rendered.full,
  };
  if (out) {
    writeOutput(resolve(io.cwd, out), rendered.full, out);
    io.stdout(verdictText(verdict));
  } else {
    io.stdout(rendered.full);
    io.stderr(verdictText(verdict));
  }
  return verdict.verdict === 'pass' ? EXIT_PASS : EXIT_GATE_FAILED;
}

export function shardSpec(text: string) {
  try {
    return parseShardSpec(text, '--shard');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function onlyList(option: string | undefined): string[] | undefined {
  if (option === undefined) return undefined;
  const names = option
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const bad = names.find((n) => !/^[a-z0-9_]+$/.test(n));
  if (bad !== undefined)
    throw new UsageError(`--only takes kernel folder names, got ${JSON.stringify(bad)}`);
  return names;
}

/** --only's kernels, each a kernel (or benchmark) of the configuration, else refused here. */
export function selectedKernels(option: string | undefined, config: Config): string[] | undefined {
  const only = onlyList(option);
  const unknown = unknownSelection(config, only, '--only');
  if (unknown !== undefined) throw new InputError(unknown);
  return only;
}

/** Progress of doctor, build and harness on the terminal: groups become headings. */
export function terminalLog(io: CliIo) {
  return {
    info: (line: string) => io.stderr(`${line}\n`),
    startGroup: (name: string) => io.stderr(`\n== ${name}\n`),
    endGroup: () => undefined,
    warning: (message: string) => io.stderr(`warning: ${message}\n`),
  };
}
