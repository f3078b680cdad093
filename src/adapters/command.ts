// The generic command adapter: any program that prints a time or a rate (a CUTLASS example, a
// script) becomes a benchmark. Per variant a command with {param} placeholders, run N times per
// case; each run is one sample, read from its output by a regular expression or a JSON line. With
// a base revision's checkout the same command runs there too, alternately (ABBA), so the case gets
// a paired verdict like the harness's own.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { childEnv } from '../lib/index.js';
import type { CaseResult, Correctness, Paired, Timing } from '../results/index.js';
import { median } from '../lib/index.js';
import { RATE_UNITS, TIME_UNITS, type MetricUnit } from '../config/index.js';
import {
  adaptedCaseIdOf,
  timingFromSamples,
  type AdaptedCase,
  type Params,
} from '../formats/index.js';

export interface CommandSpec {
  /** variant name → command template ({param}, {case}; {{ and }} for literal braces) */
  variants: Record<string, string>;
  cases: Params[];
  /** runs per case and variant (samples); paired: pairs per arm, rounded up to whole ABBA blocks */
  repeat: number;
  metric: { regex?: RegExp; json?: string; unit: MetricUnit };
  /** the benchmark's own check: every run's output must match it */
  check?: RegExp;
  timeoutS: number;
  /** FLOPs and bytes of one call of a case, for rate metrics and the results' work */
  workFor: (params: Params) => { flops?: number; bytes?: number };
}

export interface CommandOutcome {
  /** null when a signal ended the process (then `signal` names it) */
  exitCode: number | null;
  /** the signal that ended the process, as Node reports it ('SIGABRT') */
  signal?: string | null;
  output: string;
  timedOut: boolean;
}

/** A signal's name from its number (6: SIGABRT), where this platform knows it. */
function signalName(n: number): string | undefined {
  return Object.entries(constants.signals).find(([, v]) => v === n)?.[0];
}

/**
 * Why a command that did not exit 0 failed, in words: "exit status 3"; "killed by signal SIGABRT"
 * (it died of the signal; bash execs a lone command, so a crashing binary reads so); "exit status
 * 134 (128 + 6: SIGABRT)" (a shell reporting a child the signal killed).
 */
export function exitReason(out: Pick<CommandOutcome, 'exitCode' | 'signal'>): string {
  if (out.exitCode === null) {
    return out.signal ? `killed by signal ${out.signal}` : 'killed by a signal';
  }
  const signal = out.exitCode > 128 ? signalName(out.exitCode - 128) : undefined;
  return signal
    ? `exit status ${out.exitCode} (128 + ${out.exitCode - 128}: ${signal})`
    : `exit status ${out.exitCode}`;
}

/** Runs one shell command line; tests pass a scripted one. */
export type CommandRunner = (
  command: string,
  options: { cwd: string; timeoutMs: number },
) => Promise<CommandOutcome>;

/**
 * bash -c COMMAND in `cwd`, stdout and stderr together, killed (the whole group) at the timeout.
 * The command may be the pull request's code: it gets the environment without the job's
 * credentials, as every tool kernelgate starts does.
 */
export const shellRunner: CommandRunner = (command, { cwd, timeoutMs }) =>
  new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], {
      cwd,
      env: childEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timedOut = false;
    const add = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ exitCode: 127, output: `${output}${err.message}`, timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code, signal, output, timedOut });
    });
  });

/** A single-quoted shell word. */
function shellQuote(value: string): string {
  return /^[A-Za-z0-9_.,:=+\-/@%]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Fills a template with a case's parameters, each a quoted shell word. `{case}` is the case's id;
 * `{root}` the checkout the command runs for (the head's, or the base revision's in paired A/B).
 */
export function fillTemplate(template: string, params: Params, root?: string): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name?: string) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    const value =
      name === 'case' ? adaptedCaseIdOf(params) : name === 'root' ? root : params[name as string];
    return value === undefined ? whole : shellQuote(String(value));
  });
}

/** The value at a dotted path of a JSON object ("timing.ms"). */
function atPath(value: unknown, path: string): unknown {
  let cur = value;
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * Every measurement in one run's output, by sub-variant ('' when the regex has no `variant`
 * group). A regex's value is its `value` group, else its first group.
 */
export function readMetric(output: string, metric: CommandSpec['metric']): Map<string, number[]> {
  const found = new Map<string, number[]>();
  const add = (sub: string, text: unknown) => {
    const value = typeof text === 'number' ? text : Number(text);
    if (!Number.isFinite(value)) return;
    found.set(sub, [...(found.get(sub) ?? []), value]);
  };
  if (metric.regex) {
    const re = new RegExp(
      metric.regex.source,
      metric.regex.flags.includes('g') ? metric.regex.flags : `${metric.regex.flags}g`,
    );
    for (const m of output.matchAll(re)) {
      add(m.groups?.variant?.trim() ?? '', m.groups?.value ?? m[1]);
    }
  } else if (metric.json) {
    for (const line of output.split(/\r?\n/)) {
      const t = line.trim();
      if (!t.startsWith('{')) continue;
      try {
        add('', atPath(JSON.parse(t), metric.json));
      } catch {
        // not JSON after all: a log line that starts with a brace
      }
    }
  }
  return found;
}

/** One reading in ms: times as they are, rates through the case's work. */
function toMs(value: number, unit: MetricUnit, work: { flops?: number; bytes?: number }): number {
  if (unit in TIME_UNITS) return value * TIME_UNITS[unit as keyof typeof TIME_UNITS];
  const amount = unit === 'gbps' ? work.bytes : work.flops;
  if (amount === undefined) throw new Error(`a ${unit} metric needs the case's work`);
  return (amount / (value * RATE_UNITS[unit as keyof typeof RATE_UNITS])) * 1e3;
}

function tail(text: string, lines = 20): string {
  return text.trimEnd().split(/\r?\n/).slice(-lines).join('\n');
}

interface Arm {
  /** the command line this arm runs (its {root} filled) and the folder it runs in */
  command: string;
  cwd: string;
  /** per run: sub-variant → ms (the median of that run's readings) */
  runs: Map<string, number>[];
  /** the output of its first run that gave a reading, for the known-failure diagnosis */
  firstOutput?: string;
  failure?: { status: 'error' | 'timeout' | 'fail'; reason: string; log: string };
}

export interface CommandRunOptions {
  /** the head's folder (the repository, or benchmarks[].cwd) */
  cwd: string;
  /** the repository root, for `{root}` */
  root?: string;
  /** the base revision's matching folder: paired A/B */
  baseCwd?: string;
  /** the base revision's checkout, for `{root}` in its arm */
  baseRoot?: string;
  runner?: CommandRunner;
  log?: (line: string) => void;
}

export interface CommandResult {
  cases: AdaptedCase[];
  variants: string[];
  /** per case, the head's first output (or its failure's last lines): a run can print a known
   * CUDA failure and still a number (seed 000's "Arch conditional MMA" beside 0.0193 TFLOPS) */
  outputs: CommandOutput[];
}

export interface CommandOutput {
  variant: string;
  case: string;
  text: string;
}

/** Outputs kept for diagnosis are cut to their last lines. */
const KEPT_OUTPUT_LINES = 400;

/** What one case of one variant runs: its command, work and how its readings are read. */
interface CaseRun {
  kernel: string;
  label: string;
  spec: CommandSpec;
  work: { flops?: number; bytes?: number };
  source: string;
  runner: CommandRunner;
  log?: (line: string) => void;
}

/**
 * Runs an arm's command once and adds its reading, or its failure: a crash, a timeout, the
 * benchmark's own check failing or no reading in the output each name the command line.
 */
async function runOnce(run: CaseRun, arm: Arm, which: 'head' | 'base'): Promise<void> {
  if (arm.failure) return;
  const { spec } = run;
  run.log?.(`${run.kernel}/${run.label}: ${arm.command}${which === 'base' ? ' (base)' : ''}`);
  const out = await run.runner(arm.command, { cwd: arm.cwd, timeoutMs: spec.timeoutS * 1000 });
  const fail = (status: 'error' | 'timeout' | 'fail', why: string) => {
    // A crash names its command line; a failed check is the case's correctness, said as such.
    const reason = status === 'fail' ? why : `${arm.command}: ${why}`;
    arm.failure = { status, reason, log: tail(out.output) };
  };
  if (out.timedOut) return fail('timeout', `exceeded ${spec.timeoutS} s`);
  if (out.exitCode !== 0) return fail('error', exitReason(out));
  if (spec.check && !spec.check.test(out.output)) {
    return fail(
      'fail',
      `the benchmark's own check failed: its output did not match /${spec.check.source}/`,
    );
  }
  const readings = readMetric(out.output, spec.metric);
  if (readings.size === 0) {
    return fail(
      'error',
      `no ${run.source} in its output${out.output.trim() ? '' : ' (it printed nothing)'}`,
    );
  }
  const reading = new Map<string, number>();
  for (const [sub, values] of readings) {
    const value = median(values);
    const ms = toMs(value, spec.metric.unit, run.work);
    // A rate of 0 (example 88's "[FAIL] … : 0 TFLOPS/s" after a trap) would be an infinite time.
    if (!(ms > 0 && Number.isFinite(ms))) {
      const what = spec.metric.unit in TIME_UNITS ? 'a time' : 'a rate';
      const forSub = sub === '' ? '' : ` for ${sub}`;
      return fail(
        'error',
        `it printed ${what} of ${value} ${spec.metric.unit}${forSub}: ${what} must be above zero to be timed`,
      );
    }
    reading.set(sub, ms);
  }
  arm.runs.push(reading);
  arm.firstOutput ??= tail(out.output, KEPT_OUTPUT_LINES);
}

/** The head's runs alone, or head and base alternately in ABBA blocks (which ran first cancels). */
async function runArms(run: CaseRun, head: Arm, base: Arm | undefined): Promise<void> {
  if (base === undefined) {
    for (let r = 0; r < run.spec.repeat; r++) await runOnce(run, head, 'head');
    return;
  }
  const blocks = Math.ceil(run.spec.repeat / 2);
  for (let b = 0; b < blocks; b++) {
    await runOnce(run, head, 'head');
    await runOnce(run, base, 'base');
    await runOnce(run, base, 'base');
    await runOnce(run, head, 'head');
  }
}

/** An arm that failed (or gave nothing) as the case's one record. */
function failedCase(
  base0: Pick<CaseResult, 'kernel' | 'case' | 'params'>,
  variant: string,
  head: Arm,
): AdaptedCase {
  const f = head.failure ?? {
    status: 'error' as const,
    reason: `${head.command}: no runs`,
    log: '',
  };
  return {
    result: {
      ...base0,
      variant,
      status: f.status,
      reason: f.reason,
      ...(f.status === 'fail'
        ? {}
        : { error: { kind: 'command', message: f.reason, ...(f.log ? { log_tail: f.log } : {}) } }),
    },
  };
}

/**
 * Runs every case of every variant (head alone, or head and base alternately in ABBA blocks) and
 * turns the readings into cases.
 */
export async function runCommands(
  kernel: string,
  spec: CommandSpec,
  options: CommandRunOptions,
): Promise<CommandResult> {
  const cases: AdaptedCase[] = [];
  const variants: string[] = [];
  const outputs: CommandOutput[] = [];
  const addVariant = (v: string) => void (variants.includes(v) || variants.push(v));
  const source = spec.metric.regex
    ? `/${spec.metric.regex.source}/`
    : `JSON field ${String(spec.metric.json)}`;
  const method = `command: ${spec.metric.unit} from ${source}, one sample per run`;

  for (const [variantName, template] of Object.entries(spec.variants)) {
    for (const params of spec.cases) {
      const run: CaseRun = {
        kernel,
        label: `${variantName} ${adaptedCaseIdOf(params)}`,
        spec,
        work: spec.workFor(params),
        source,
        runner: options.runner ?? shellRunner,
        ...(options.log ? { log: options.log } : {}),
      };
      const arm = (cwd: string, root: string | undefined): Arm => ({
        command: fillTemplate(template, params, root),
        cwd,
        runs: [],
      });
      const head = arm(options.cwd, options.root);
      const base =
        options.baseCwd === undefined ? undefined : arm(options.baseCwd, options.baseRoot);
      await runArms(run, head, base);
      const text = head.firstOutput ?? head.failure?.log;
      if (text) outputs.push({ variant: variantName, case: adaptedCaseIdOf(params), text });

      const subs = new Set<string>();
      for (const r of head.runs) for (const sub of r.keys()) subs.add(sub);
      const base0 = { kernel, case: adaptedCaseIdOf(params), params };
      if (head.failure || subs.size === 0) {
        addVariant(variantName);
        cases.push(failedCase(base0, variantName, head));
        continue;
      }
      for (const sub of subs) {
        const variant = sub === '' ? variantName : `${variantName}:${sub}`;
        addVariant(variant);
        const samples = head.runs
          .map((r) => r.get(sub))
          .filter((x): x is number => x !== undefined);
        const paired = base ? pairedOf(head, base, sub, method) : undefined;
        cases.push({
          result: {
            ...base0,
            variant,
            status: 'ok',
            timing: timingFromSamples(samples, method),
            ...(spec.check ? { correctness: selfCheck(spec.check, head.runs.length) } : {}),
            ...(paired ? { paired } : {}),
          },
          work: run.work,
        });
      }
    }
  }
  return { cases, variants, outputs };
}

/** The benchmark's own check, passed by every run: no error numbers, so those are null. */
function selfCheck(check: RegExp, runs: number): Correctness {
  return {
    status: 'PASS',
    rel_l2: null,
    max_abs: null,
    nan_count: 0,
    inf_count: 0,
    unwritten_count: 0,
    seeds: [],
    tol_rel_l2: 0,
    oracle: `the benchmark's own check (its output matched /${check.source}/)`,
    message: `all ${runs} runs passed the benchmark's own check`,
  };
}

/** Pairs in run order: runs 4b and 4b+3 are the head's of block b, 4b+1 and 4b+2 the base's. */
function pairedOf(head: Arm, base: Arm, sub: string, method: string): Paired {
  if (base.failure) {
    return {
      base_status: base.failure.status,
      base_reason: base.failure.reason,
      n_pairs: 0,
      log_ratios: [],
      stop_reason: 'untimed',
    };
  }
  const h = head.runs.map((r) => r.get(sub));
  const b = base.runs.map((r) => r.get(sub));
  if (b.every((x) => x === undefined)) {
    return {
      base_status: 'missing',
      base_reason: 'the base revision printed no reading for this variant',
      n_pairs: 0,
      log_ratios: [],
      stop_reason: 'untimed',
    };
  }
  const logRatios: number[] = [];
  for (let k = 0; k + 1 < Math.min(h.length, b.length); k += 2) {
    const [h1, h2, b1, b2] = [h[k], h[k + 1], b[k], b[k + 1]];
    if (h1 === undefined || h2 === undefined || b1 === undefined || b2 === undefined) continue;
    logRatios.push((Math.log(h1 / b1) + Math.log(h2 / b2)) / 2);
  }
  const baseSamples = b.filter((x): x is number => x !== undefined);
  const baseTiming: Timing = timingFromSamples(baseSamples, method);
  const ratios = [...logRatios].sort((x, y) => x - y);
  return {
    base_status: 'ok',
    base_timing: baseTiming,
    n_pairs: 2 * logRatios.length,
    log_ratios: logRatios,
    ...(ratios.length ? { median_ratio: Math.exp(median(ratios)) } : {}),
    stop_reason: 'max_pairs',
  };
}
