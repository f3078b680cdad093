// Reads a results document (kernelgate/results@1) and validates it against the committed schema,
// so a bad file is one clear error naming the file, the field and the bad value. A results file
// may be stored gzipped (known by gzip's magic bytes, whatever its name).
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import resultsSchema from '../../schema/results.schema.json' with { type: 'json' };
import type { KernelgateResults } from './results-types.js';

/**
 * Where a problem is: its file (an absolute path) and, when known, the line and column of the
 * field; `message` is the problem's line. The action shows each as an annotation at that place.
 */
export interface ProblemSite {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

/** An input the user can fix (bad file, bad flag): the CLI prints its message without a stack. */
export class InputError extends Error {
  /** every problem found, one line each, file-prefixed */
  readonly problems: string[];
  /** the problems' places, where the reader knows them (config files); else empty */
  readonly sites: ProblemSite[];
  constructor(message: string, problems: string[] = [message], sites: ProblemSite[] = []) {
    super(message);
    this.name = 'InputError';
    this.problems = problems;
    this.sites = sites;
  }
}

const MAX_PROBLEMS_IN_MESSAGE = 5;

/**
 * Joins file-prefixed problems into one message that shows the first few and counts the rest.
 * With `at`, each problem also gets its site: the file's absolute path and, from `locate`, the
 * line and column of the field it names.
 */
export function problemsError(
  file: string,
  problems: string[],
  at?: { path: string; locate(problem: string): { line: number; column: number } | undefined },
): InputError {
  const lines = problems.map((p) => `${file}: ${p}`);
  const shown = lines.slice(0, MAX_PROBLEMS_IN_MESSAGE);
  if (lines.length > shown.length) {
    shown.push(`${file}: … and ${lines.length - shown.length} more problems`);
  }
  const sites = at
    ? problems.map((p, i) => ({ file: at.path, ...at.locate(p), message: lines[i]! }))
    : [];
  return new InputError(shown.join('\n'), lines, sites);
}

/** Ajv's "/cases/3/timing/median_ms" → "cases[3].timing.median_ms". */
export function readablePath(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const part of parts) {
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

/** A short rendering of a bad value for an error message. */
export function showValue(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'nothing';
  // JSON has no Infinity or NaN (it would print them as null), but 1e999 parses to Infinity.
  else if (typeof value === 'number' && !Number.isFinite(value)) text = String(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Turns ajv's errors (created with allErrors and verbose) into readable lines such as
 * `cases[3].timing.median_ms must be number (got "fast")`. Branch errors of a failed anyOf are
 * folded into one line for the anyOf itself. `subject` names what a path is about, shown after
 * it: `cases[3].timing.median_ms (attention/triton_fa2 dtype=fp16,…) must be >= …`.
 */
export function formatAjvErrors(
  errors: readonly ErrorObject[],
  subject?: (instancePath: string) => string | undefined,
): string[] {
  const anyOfPaths = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .map((e) => e.schemaPath);
  // A bad key of a map shows up twice: as the key's own error and as "propertyNames"; keep one.
  const kept = errors.filter(
    (e) =>
      e.keyword !== 'propertyNames' &&
      !anyOfPaths.some((p) => e.schemaPath !== p && e.schemaPath.startsWith(`${p}/`)),
  );
  const lines = kept.map((e) => formatAjvError(e, subject?.(e.instancePath)));
  return [...new Set(lines)];
}

function formatAjvError(error: ErrorObject, subject: string | undefined): string {
  const params = error.params as Record<string, unknown>;
  const of = subject !== undefined ? ` (${subject})` : '';
  const at = (readablePath(error.instancePath) || 'the document') + of;
  const got = ` (got ${showValue(error.data)})`;
  switch (error.keyword) {
    case 'required':
      return `${readablePath(error.instancePath, String(params.missingProperty))}${of} is required`;
    case 'additionalProperties': {
      const known = Object.keys(
        ((error.parentSchema as Record<string, unknown> | undefined)?.properties ?? {}) as object,
      );
      const name = readablePath(error.instancePath, String(params.additionalProperty)) + of;
      return `${name} is not a known field${known.length ? ` (known: ${known.join(', ')})` : ''}`;
    }
    case 'type':
      if (typeof error.data === 'number' && String(params.type).includes('number')) {
        return `${at} must be a finite number${got}`;
      }
      return `${at} must be ${String(params.type).split(',').join(' or ')}${got}`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => showValue(v)).join(', ')}${got}`;
    case 'const':
      return `${at} must be ${showValue(params.allowedValue)}${got}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${at} must be ${String(params.comparison)} ${String(params.limit)}${got}`;
    case 'pattern':
      if (error.propertyName !== undefined) {
        return `${at} has a key that must match ${String(params.pattern)} (got ${showValue(error.propertyName)})`;
      }
      return `${at} must match ${String(params.pattern)}${got}`;
    case 'minItems':
      return `${at} must have at least ${String(params.limit)} item(s)${got}`;
    case 'minProperties':
      return `${at} must have at least ${String(params.limit)} field(s)${got}`;
    case 'anyOf':
    case 'oneOf':
      return `${at} has an unsupported form${got}`;
    default:
      return `${at} ${error.message ?? 'is invalid'}${got}`;
  }
}

/**
 * One Ajv instance for all of kernelgate's schemas (allErrors: every problem at once;
 * strictNumbers: Infinity and NaN are no numbers, as JSON has none, though 1e999 parses to
 * Infinity and YAML's .inf and .nan load as such).
 */
export function newAjv(): Ajv {
  return new Ajv({ allErrors: true, verbose: true, strict: false, strictNumbers: true });
}

let resultsValidator: ValidateFunction | undefined;

/**
 * The case a path inside a results document is about, `kernel/variant case`, so a problem in
 * one of thousands of cases names it: undefined for paths outside `cases`.
 */
function caseSubject(data: unknown): (instancePath: string) => string | undefined {
  return (instancePath) => {
    const m = /^\/cases\/(\d+)(\/|$)/.exec(instancePath);
    const cases = (data as { cases?: unknown } | null)?.cases;
    if (!m || !Array.isArray(cases)) return undefined;
    const c = cases[Number(m[1])] as Record<string, unknown> | null | undefined;
    const text = (v: unknown) => (typeof v === 'string' ? v : '?');
    if (c === null || typeof c !== 'object') return undefined;
    return `${text(c.kernel)}/${text(c.variant)} ${text(c.case)}`;
  };
}

/**
 * Validates a parsed results document; `file` names it in the messages, and a problem in a case
 * names the case. Times no call can take (0 ms, 1e-300 ms, 1e308 ms; schema: timing) are refused
 * here, before anything is judged.
 */
export function validateResults(data: unknown, file: string): KernelgateResults {
  resultsValidator ??= newAjv().compile(resultsSchema);
  if (!resultsValidator(data)) {
    throw problemsError(file, formatAjvErrors(resultsValidator.errors ?? [], caseSubject(data)));
  }
  return data as KernelgateResults;
}

/** `JSON.parse` with an error that gives the line and column as well as V8's own words. */
export function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    const pos = /position (\d+)/.exec(detail);
    if (pos) {
      const offset = Number(pos[1]);
      const before = text.slice(0, offset).split('\n');
      const line = before.length;
      const column = (before[before.length - 1] ?? '').length + 1;
      throw new InputError(`${file}:${line}:${column}: not valid JSON: ${detail}`);
    }
    throw new InputError(`${file}: not valid JSON: ${detail}`);
  }
}

/** A file's bytes, or an InputError naming it as `shown` (`readInputFile`). */
function readInputBytes(path: string, shown: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(
      code === 'ENOENT'
        ? `${shown}: no such ${what}`
        : `${shown}: cannot read: ${(err as Error).message}`,
    );
  }
}

/**
 * A file's text, or an InputError naming it as `shown`: `<shown>: no such <what>` when it does not
 * exist, `<shown>: cannot read: …` otherwise.
 */
export function readInputFile(path: string, shown: string = path, what = 'file'): string {
  return readInputBytes(path, shown, what).toString('utf8');
}

/** The first bytes of a gzip stream (RFC 1952), whatever the file's name. */
const isGzip = (bytes: Buffer) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;

/** What can begin a JSON text (after blanks): an object, an array, a string, a number, a literal. */
const JSON_START = /^[\s\uFEFF]*[{["\-0-9tfn]/;

const hexOf = (bytes: Buffer) =>
  [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');

/**
 * A results file's text: gunzipped when it starts with gzip's magic bytes (1f 8b), as read
 * otherwise. Errors name the file: a gzip stream that does not gunzip (truncated, corrupt), and a
 * file that is neither JSON nor gzip (e.g. zstd or xz: its first bytes are shown).
 */
export function readResultsText(path: string): string {
  const bytes = readInputBytes(path, path, 'results file');
  if (isGzip(bytes)) {
    try {
      return gunzipSync(bytes).toString('utf8');
    } catch (err) {
      throw new InputError(
        `${path}: a gzip file (it starts with 1f 8b) that does not gunzip: ${(err as Error).message}`,
      );
    }
  }
  const text = bytes.toString('utf8');
  if (bytes.length > 0 && !JSON_START.test(text)) {
    throw new InputError(
      `${path}: neither JSON nor gzip (it starts with the bytes ${hexOf(bytes)}): a results file is a JSON document, plain or gzipped`,
    );
  }
  return text;
}

/** Reads, parses and validates a results document, plain JSON or gzipped (`readResultsText`). */
export function loadResults(path: string): KernelgateResults {
  return validateResults(parseJson(readResultsText(path), path), path);
}

/**
 * The diagnostics with which the measure stage says the harness did not finish (it exited
 * non-zero: `harness.exit`, or before writing anything: `harness.no_results`; src/measure).
 */
export const HARNESS_STOPPED_CODES: ReadonlySet<string> = new Set([
  'harness.exit',
  'harness.no_results',
]);
