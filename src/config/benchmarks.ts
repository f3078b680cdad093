// kernelgate.yml's `benchmarks:` section, after schema validation: the checks the schema cannot
// express (a known format, the fields each format needs, formulas and regular expressions that
// parse, placeholders every case sets), with the file, the field and the bad value in each message.
// The formats' names and kinds are the list's (src/formats/index.ts), below config in the layers.
import { resolve } from 'node:path';
import { showValue } from '../results/index.js';
import {
  adapterFor,
  adapterFormats,
  type BenchmarkFormat,
  COMMAND_FORMAT,
  FILE_FORMATS,
  isBenchmarkFormat,
  type Params,
} from '../formats/index.js';
import { parseFormula, type Formula } from './formula.js';

export const TIME_UNITS = { s: 1e3, ms: 1, us: 1e-3, ns: 1e-6 } as const;
export const RATE_UNITS = { tflops: 1e12, gflops: 1e9, gbps: 1e9 } as const;
export type MetricUnit = keyof typeof TIME_UNITS | keyof typeof RATE_UNITS;

/** The placeholders a template uses ({{ and }} are literal braces). */
export function placeholders(template: string): string[] {
  const names: string[] = [];
  for (const m of template.replace(/\{\{|\}\}/g, '').matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    if (m[1] !== undefined && !names.includes(m[1])) names.push(m[1]);
  }
  return names;
}

/** The placeholders every template may use without a case setting them. */
export const BUILTIN_PLACEHOLDERS = ['case', 'root'] as const;

/** One entry of `benchmarks:` exactly as written (snake_case). */
export interface RawBenchmark {
  name: string;
  format: string;
  description?: string;
  run?: string;
  output?: string;
  cwd?: string;
  timeout_s?: number;
  references?: string[];
  work?: { flops?: string | number; bytes?: string | number };
  variants?: Record<string, string>;
  cases?: Params[];
  repeat?: number;
  metric?: { regex?: string; json?: string; unit: MetricUnit };
  check?: { regex: string };
}

export interface BenchmarkConfig {
  /** the kernel name of its cases */
  name: string;
  format: BenchmarkFormat;
  description?: string;
  /** file formats: the command that writes `output` */
  run?: string;
  /** file formats: absolute path of the tool's JSON */
  output?: string;
  /** absolute folder the commands run in */
  cwd: string;
  /** cwd relative to the repository root: the same folder in a base revision's checkout */
  cwdRelative: string;
  timeoutS: number;
  references: string[];
  work: { flops?: Formula; bytes?: Formula };
  command?: {
    variants: Record<string, string>;
    cases: Params[];
    repeat: number;
    metric: { regex?: RegExp; json?: string; unit: MetricUnit };
    check?: RegExp;
  };
}

export const DEFAULT_BENCHMARK_TIMEOUT_S = 600;
export const DEFAULT_REPEAT = 10;

const COMMAND_ONLY = ['variants', 'cases', 'repeat', 'metric', 'check'] as const;
const FILE_ONLY = ['run', 'output'] as const;

function compileRegex(text: string, field: string, problems: string[]): RegExp | undefined {
  try {
    return new RegExp(text, 'm');
  } catch (err) {
    problems.push(
      `${field} is not a valid regular expression: ${(err as Error).message} (got ${showValue(text)})`,
    );
    return undefined;
  }
}

/**
 * Checks and converts `benchmarks:`; returns the problems (without the file prefix) instead of
 * throwing, so they join the other problems of kernelgate.yml. `kernelNames`: the kernels under
 * kernels_dir, whose names a benchmark must not take.
 */
export function benchmarksFromRaw(
  raw: RawBenchmark[],
  root: string,
  kernelNames: readonly string[],
): { benchmarks: BenchmarkConfig[]; problems: string[] } {
  const problems: string[] = [];
  const benchmarks: BenchmarkConfig[] = [];
  const seen = new Set<string>();
  raw.forEach((b, i) => {
    const at = `benchmarks[${i}]`;
    const before = problems.length;
    if (seen.has(b.name)) problems.push(`${at}.name is a duplicate (got ${showValue(b.name)})`);
    seen.add(b.name);
    if (kernelNames.includes(b.name)) {
      problems.push(
        `${at}.name is already a kernel's name under kernels_dir (got ${showValue(b.name)})`,
      );
    }
    const format = b.format;
    if (!isBenchmarkFormat(format)) {
      problems.push(
        `${at}.format must be one of ${adapterFormats()
          .map((f) => showValue(f))
          .join(', ')} (got ${showValue(b.format)})`,
      );
      return;
    }
    const onlyFor = (fields: readonly (keyof RawBenchmark)[], which: string) => {
      for (const field of fields) {
        if (b[field] !== undefined) {
          problems.push(`${at}.${field} is only for ${which} (got ${showValue(b[field])})`);
        }
      }
    };

    const work: BenchmarkConfig['work'] = {};
    for (const key of ['flops', 'bytes'] as const) {
      const text = b.work?.[key];
      if (text === undefined) continue;
      try {
        work[key] = parseFormula(String(text));
      } catch (err) {
        problems.push(
          `${at}.work.${key} is not a formula: ${(err as Error).message} (got ${showValue(text)})`,
        );
      }
    }

    let command: BenchmarkConfig['command'];
    if (adapterFor(format).kind === 'command') {
      onlyFor(FILE_ONLY, `file formats (${FILE_FORMATS.join(', ')})`);
      command = commandFromRaw(b, at, work, problems);
    } else {
      onlyFor(COMMAND_ONLY, `format ${showValue(COMMAND_FORMAT)}`);
      if (b.output === undefined) {
        problems.push(`${at}.output is required for format ${showValue(b.format)} (got nothing)`);
      }
    }
    if (problems.length > before) return;
    const cwdRelative = b.cwd ?? '.';
    benchmarks.push({
      name: b.name,
      format,
      ...(b.description !== undefined ? { description: b.description } : {}),
      ...(b.run !== undefined ? { run: b.run } : {}),
      ...(b.output !== undefined ? { output: resolve(root, b.output) } : {}),
      cwd: resolve(root, cwdRelative),
      cwdRelative,
      timeoutS: b.timeout_s ?? DEFAULT_BENCHMARK_TIMEOUT_S,
      references: b.references ?? [],
      work,
      ...(command ? { command } : {}),
    });
  });
  return { benchmarks, problems };
}

/** A case may not set a parameter that a template's builtin placeholder fills. */
function reservedParams(cases: Params[], at: string, problems: string[]): void {
  cases.forEach((c, j) => {
    for (const name of BUILTIN_PLACEHOLDERS) {
      if (c[name] === undefined) continue;
      const what =
        name === 'root'
          ? "the checkout's root (the head's, or the base revision's)"
          : "the case's id";
      problems.push(
        `${at}.cases[${j}].${name} is reserved: {${name}} is ${what} (got ${showValue(c[name])})`,
      );
    }
  });
}

function commandFromRaw(
  b: RawBenchmark,
  at: string,
  work: BenchmarkConfig['work'],
  problems: string[],
): BenchmarkConfig['command'] {
  if (b.variants === undefined) {
    problems.push(
      `${at}.variants is required for format ${showValue(COMMAND_FORMAT)} (got nothing)`,
    );
  }
  if (b.metric === undefined) {
    problems.push(`${at}.metric is required for format ${showValue(COMMAND_FORMAT)} (got nothing)`);
  }
  if (b.variants === undefined || b.metric === undefined) return undefined;
  const metric = b.metric;
  const cases = b.cases ?? [{}];
  let regex: RegExp | undefined;
  if ((metric.regex === undefined) === (metric.json === undefined)) {
    problems.push(`${at}.metric needs exactly one of regex and json (got ${showValue(metric)})`);
  } else if (metric.regex !== undefined) {
    regex = compileRegex(metric.regex, `${at}.metric.regex`, problems);
    // The number of groups: matching the empty alternative leaves each one undefined.
    if (regex && (new RegExp(`${regex.source}|`).exec('')?.length ?? 1) < 2) {
      problems.push(
        `${at}.metric.regex needs a group that captures the reading (got ${showValue(metric.regex)})`,
      );
    }
  }
  if (metric.unit in RATE_UNITS) {
    const need = metric.unit === 'gbps' ? 'bytes' : 'flops';
    if (work[need] === undefined) {
      problems.push(
        `${at}.metric.unit ${showValue(metric.unit)} needs work.${need}: a rate becomes a time through the work of one call (got nothing)`,
      );
    }
  }
  const check = b.check ? compileRegex(b.check.regex, `${at}.check.regex`, problems) : undefined;
  reservedParams(cases, at, problems);
  const used = new Set<string>();
  for (const [variant, template] of Object.entries(b.variants)) {
    for (const name of placeholders(template)) {
      used.add(name);
      if ((BUILTIN_PLACEHOLDERS as readonly string[]).includes(name)) continue;
      const missing = cases.findIndex((c) => c[name] === undefined);
      if (missing >= 0) {
        problems.push(
          `${at}.variants.${variant} uses {${name}}, which ${at}.cases[${missing}] does not set (got ${showValue(cases[missing])})`,
        );
      }
    }
  }
  for (const key of ['flops', 'bytes'] as const) {
    const formula = work[key];
    if (!formula) continue;
    for (const name of formula.names) {
      const missing = cases.findIndex((c) => c[name] === undefined);
      if (missing >= 0) {
        problems.push(
          `${at}.work.${key} uses ${name}, which ${at}.cases[${missing}] does not set (got ${showValue(cases[missing])})`,
        );
      }
    }
  }
  return {
    variants: b.variants,
    cases,
    repeat: b.repeat ?? DEFAULT_REPEAT,
    metric: {
      ...(regex ? { regex } : {}),
      ...(metric.json !== undefined ? { json: metric.json } : {}),
      unit: metric.unit,
    },
    ...(check ? { check } : {}),
  };
}

/** The work of one call of a case from the formulas; a formula that cannot be evaluated is left out. */
export function workOf(
  work: BenchmarkConfig['work'],
  params: Params,
): { flops?: number; bytes?: number } {
  const out: { flops?: number; bytes?: number } = {};
  for (const key of ['flops', 'bytes'] as const) {
    const formula = work[key];
    if (!formula) continue;
    try {
      const value = formula.evaluate(params);
      if (Number.isFinite(value) && value >= 0) out[key] = value;
    } catch {
      // a parameter the case lacks: the tool's own numbers, if any, stand
    }
  }
  return out;
}
