// A workflow's job graph evaluated as GitHub evaluates it, for the tests that check which job ends
// how when another fails or is skipped (test/workflow-verdict.test.ts). Minimal, but faithful for
// what the shipped workflows use:
//
// - jobs run in the order their `needs` give; a job whose `if` is false ends `skipped`;
// - a job's `if` without a status function (success(), failure(), always(), cancelled()) is
//   `success() && (if)`, and with no `if` at all it is `success()` (GitHub's status-check default);
// - at job level success() is true when every ancestor job (the needs, and theirs) succeeded, and
//   failure() when any of them failed (GitHub: "if you have a chain of dependent jobs, failure()
//   returns true if any ancestor job fails"): a job whose needs failed or were skipped is skipped
//   unless its `if` says otherwise, and the skip travels down the chain;
// - expressions: literals, `github.*`, `needs.<job>.result` and `.outputs.*`, `env.*`, `!`, `==`,
//   `!=` (strings compared ignoring case, other types coerced to numbers), `&&` and `||` (which
//   give an operand, not a boolean), parentheses, contains() and startsWith();
// - a job named in `runSteps` really runs its `run:` steps under bash (`-eo pipefail`, as on a
//   GitHub-hosted runner), with `${{ }}` in `env:` and `run:` substituted first; every other job
//   that runs ends as the scenario says (default success).
import { spawnSync } from 'node:child_process';

export type JobResult = 'success' | 'failure' | 'cancelled' | 'skipped';
type Value = string | number | boolean | null | Record<string, unknown>;
type Mapping = Record<string, unknown>;

export interface Scenario {
  /** the `github` context: event_name, event (the payload), … */
  github: Record<string, unknown>;
  /** how a job that runs ends; default success */
  outcomes?: Record<string, Exclude<JobResult, 'skipped'>>;
  /** jobs whose `run:` steps are run for real; their result is the steps' */
  runSteps?: string[];
}

export interface Evaluated {
  results: Record<string, JobResult>;
  /** what the steps of each job in runSteps printed (stdout and stderr) */
  logs: Record<string, string>;
}

const STATUS_FUNCTION = /\b(success|failure|always|cancelled)\s*\(/;

function asMapping(value: unknown): Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Mapping)
    : {};
}

function needsOf(job: Mapping): string[] {
  const needs = job['needs'];
  if (needs === undefined) return [];
  return (Array.isArray(needs) ? needs : [needs]).map(String);
}

// ---- expressions -------------------------------------------------------------------------------

type Token = { kind: 'string' | 'name' | 'op'; text: string } | { kind: 'number'; value: number };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern =
    /\s*(?:'((?:[^']|'')*)'|(-?\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_*-]+)*)|(==|!=|&&|\|\||[!(),]))/y;
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    pattern.lastIndex = at;
    const m = pattern.exec(text);
    if (!m) throw new Error(`job-graph: cannot read the expression '${text}' at ${at}`);
    at = pattern.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: 'string', text: m[1].replace(/''/g, "'") });
    else if (m[2] !== undefined) tokens.push({ kind: 'number', value: Number(m[2]) });
    else if (m[3] !== undefined) tokens.push({ kind: 'name', text: m[3] });
    else tokens.push({ kind: 'op', text: m[4]! });
  }
  return tokens;
}

function truthy(value: Value): boolean {
  return !(value === false || value === 0 || value === '' || value === null || Number.isNaN(value));
}

function toNumber(value: Value): number {
  if (value === null) return 0;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return value.trim() === '' ? 0 : Number(value);
  return NaN;
}

function equal(a: Value, b: Value): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() === b.toLowerCase();
  if (typeof a === typeof b && typeof a !== 'object') return a === b;
  if (a === null && b === null) return true;
  if (typeof a === 'object' && a !== null) return a === b;
  return toNumber(a) === toNumber(b);
}

export interface ExpressionScope {
  lookup(path: string): Value;
  call(name: string, args: Value[]): Value;
}

/** Evaluates one expression (without the `${{ }}`), by precedence: ! then == != then && then ||. */
export function evaluate(text: string, scope: ExpressionScope): Value {
  const tokens = tokenize(text);
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const isOp = (op: string) => {
    const t = peek();
    return t?.kind === 'op' && t.text === op;
  };
  const expect = (op: string) => {
    if (!isOp(op)) throw new Error(`job-graph: expected '${op}' in '${text}'`);
    i++;
  };
  const primary = (): Value => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`job-graph: '${text}' ends too early`);
    if (t.kind === 'string') return t.text;
    if (t.kind === 'number') return t.value;
    if (t.kind === 'op' && t.text === '(') {
      const value = or();
      expect(')');
      return value;
    }
    if (t.kind === 'op' && t.text === '!') return !truthy(primary());
    if (t.kind !== 'name') throw new Error(`job-graph: unexpected '${t.text}' in '${text}'`);
    if (t.text === 'true' || t.text === 'false') return t.text === 'true';
    if (t.text === 'null') return null;
    if (!isOp('(')) return scope.lookup(t.text);
    i++;
    const args: Value[] = [];
    while (!isOp(')')) {
      args.push(or());
      if (isOp(',')) i++;
    }
    i++;
    return scope.call(t.text, args);
  };
  const comparison = (): Value => {
    let left = primary();
    while (isOp('==') || isOp('!=')) {
      const op = (tokens[i++] as { text: string }).text;
      const right = primary();
      left = op === '==' ? equal(left, right) : !equal(left, right);
    }
    return left;
  };
  const and = (): Value => {
    let left = comparison();
    while (isOp('&&')) {
      i++;
      const right = comparison();
      left = truthy(left) ? right : left;
    }
    return left;
  };
  function or(): Value {
    let left = and();
    while (isOp('||')) {
      i++;
      const right = and();
      left = truthy(left) ? left : right;
    }
    return left;
  }
  const value = or();
  if (i !== tokens.length) throw new Error(`job-graph: cannot read the rest of '${text}'`);
  return value;
}

function unwrap(text: string): string {
  return text
    .trim()
    .replace(/^\$\{\{([\s\S]*)\}\}$/, '$1')
    .trim();
}

function lookupIn(root: Record<string, unknown>, path: string): Value {
  let value: unknown = root;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return null;
    value = (value as Mapping)[part];
  }
  return value === undefined ? null : (value as Value);
}

function callFunction(name: string, args: Value[], status: Record<string, boolean>): Value {
  if (name in status) return status[name]!;
  const text = (v: Value) => (v === null ? '' : String(v)).toLowerCase();
  if (name === 'contains') return text(args[0] ?? null).includes(text(args[1] ?? null));
  if (name === 'startsWith') return text(args[0] ?? null).startsWith(text(args[1] ?? null));
  throw new Error(`job-graph: the function ${name}() is not modelled`);
}

/** `${{ … }}` in a string replaced by the values of what they hold. */
function substitute(text: string, scope: ExpressionScope): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_m, inner: string) => {
    const value = evaluate(inner, scope);
    return value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}

// ---- jobs --------------------------------------------------------------------------------------

function ancestors(jobs: Mapping, id: string, seen = new Set<string>()): Set<string> {
  for (const need of needsOf(asMapping(jobs[id]))) {
    if (!(need in jobs)) throw new Error(`job-graph: job '${id}' needs '${need}', not a job`);
    if (seen.has(need)) continue;
    seen.add(need);
    ancestors(jobs, need, seen);
  }
  return seen;
}

function order(jobs: Mapping): string[] {
  const done: string[] = [];
  const visit = (id: string, path: string[]) => {
    if (done.includes(id)) return;
    if (path.includes(id))
      throw new Error(`job-graph: a cycle through ${[...path, id].join(' → ')}`);
    for (const need of needsOf(asMapping(jobs[id]))) visit(need, [...path, id]);
    done.push(id);
  };
  for (const id of Object.keys(jobs)) visit(id, []);
  return done;
}

function runSteps(
  job: Mapping,
  workflowEnv: Mapping,
  scopeFor: (env: Record<string, string>, stepsOk: boolean) => ExpressionScope,
): { result: JobResult; log: string } {
  let log = '';
  let ok = true;
  const jobEnv = { ...workflowEnv, ...asMapping(job['env']) };
  for (const stepYaml of (job['steps'] as unknown[] | undefined) ?? []) {
    const step = asMapping(stepYaml);
    if (typeof step['run'] !== 'string') {
      throw new Error(`job-graph: only run: steps can be run, not ${JSON.stringify(step)}`);
    }
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...jobEnv, ...asMapping(step['env']) })) {
      env[k] = substitute(String(v), scopeFor(env, ok));
    }
    const scope = scopeFor(env, ok);
    const condition = typeof step['if'] === 'string' ? unwrap(step['if']) : '';
    const guarded = STATUS_FUNCTION.test(condition)
      ? condition
      : `success()${condition ? ` && (${condition})` : ''}`;
    if (!truthy(evaluate(guarded, scope))) continue;
    const done = spawnSync(
      'bash',
      ['--noprofile', '--norc', '-eo', 'pipefail', '-c', substitute(step['run'], scope)],
      {
        encoding: 'utf8',
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
      },
    );
    log += `${done.stdout}${done.stderr}`;
    if (done.status !== 0) ok = false;
  }
  return { result: ok ? 'success' : 'failure', log };
}

/** Every job's result in one run of the workflow, as the scenario has it. */
export function evaluateWorkflow(workflowYaml: unknown, scenario: Scenario): Evaluated {
  const workflow = asMapping(workflowYaml);
  const jobs = asMapping(workflow['jobs']);
  const results: Record<string, JobResult> = {};
  const logs: Record<string, string> = {};
  for (const id of order(jobs)) {
    const job = asMapping(jobs[id]);
    const before = [...ancestors(jobs, id)].map((a) => results[a]!);
    const status = {
      always: true,
      cancelled: false,
      success: before.every((r) => r === 'success'),
      failure: before.some((r) => r === 'failure'),
    };
    const needs: Record<string, unknown> = {};
    for (const need of needsOf(job)) needs[need] = { result: results[need], outputs: {} };
    // In a job's `if` the status functions speak of the ancestor jobs; in a step's, of the job's
    // earlier steps (stepsOk).
    const scopeFor = (env: Record<string, string>, stepsOk?: boolean): ExpressionScope => ({
      lookup: (path) => lookupIn({ github: scenario.github, needs, env }, path),
      call: (name, args) =>
        callFunction(
          name,
          args,
          stepsOk === undefined
            ? status
            : { always: true, cancelled: false, success: stepsOk, failure: !stepsOk },
        ),
    });
    const condition = typeof job['if'] === 'string' ? unwrap(job['if']) : '';
    const guarded = STATUS_FUNCTION.test(condition)
      ? condition
      : `success()${condition ? ` && (${condition})` : ''}`;
    if (!truthy(evaluate(guarded, scopeFor({})))) {
      results[id] = 'skipped';
      continue;
    }
    if (scenario.runSteps?.includes(id)) {
      const ran = runSteps(job, asMapping(workflow['env']), scopeFor);
      results[id] = ran.result;
      logs[id] = ran.log;
    } else {
      results[id] = scenario.outcomes?.[id] ?? 'success';
    }
  }
  return { results, logs };
}
