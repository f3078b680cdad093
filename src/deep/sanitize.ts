// compute-sanitizer over each target (through the harness: one variant, one case, one seed, no
// timing): on its kernel's smallest case, or the next it takes when the harness skips it there;
// not checked, with the reason, when it takes none or the time box ran out first.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Config } from '../config/index.js';
import type { Exec } from '../lib/index.js';
import { loadResults, type SanitizerRun } from '../results/index.js';
import {
  both,
  type Box,
  boxOf,
  boxText,
  type DeepOptions,
  harnessEnv,
  harnessLaunch,
  left,
  pool,
  SANITIZER_CASE_TIMEOUT_S,
  slug,
} from './common.js';
import {
  caseParamsArg,
  caseSize,
  type DeepTarget,
  SANITIZER_FALLBACK_GROWTH,
  SANITIZER_MAX_FALLBACKS,
  sanitizerTargets,
} from './plan.js';
import { parseSanitizer, type SanitizerFinding, type SanitizerTool } from './sanitizer.js';

/** What the harness recorded of the target's case, when it did not run it. */
type HarnessProblem =
  { kind: 'skipped'; reason: string } | { kind: 'missing'; message: string } | undefined;

function harnessCaseProblem(resultsPath: string, t: DeepTarget, caseId: string): HarnessProblem {
  if (!existsSync(resultsPath)) return { kind: 'missing', message: 'the harness wrote no results' };
  try {
    // Validated as every results document kernelgate reads (src/results): a document the schema
    // refuses says so, naming the file, the field and the value, rather than being half read.
    const doc = loadResults(resultsPath);
    const c = doc.cases.find(
      (x) => x.kernel === t.kernel && x.variant === t.variant && x.case === caseId,
    );
    if (!c) {
      return {
        kind: 'missing',
        message: `the harness has no result for ${t.kernel}/${t.variant} ${caseId}`,
      };
    }
    if (c.status === 'skipped') return { kind: 'skipped', reason: c.reason ?? '' };
    return undefined;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { kind: 'missing', message: `the harness's results cannot be read: ${detail}` };
  }
}

/**
 * The harness's own modules (python/kernelgate_harness/*.py of the harness that ran) by the file
 * name the tool prints, less any name a file under the kernels folder has too: a frame there might
 * be the kernel's, and a finding is the variant's unless it is surely the harness's.
 */
function harnessModules(o: DeepOptions): Set<string> {
  const py = (dir: string, recursive: boolean) =>
    existsSync(dir)
      ? readdirSync(dir, { recursive })
          .map((f) => basename(String(f)))
          .filter((f) => f.endsWith('.py'))
      : [];
  const kernels = new Set(py(resolve(o.workspace, o.kernelsDir), true));
  const own = py(join(o.harnessRoot, 'python', 'kernelgate_harness'), false);
  return new Set(own.filter((f) => !kernels.has(f) && !REPLAYS_VARIANT_WORK.has(f)));
}

/**
 * The harness's modules that replay a variant's captured CUDA graph: a kernel launched there is
 * the variant's, though no frame of its own is on the stack (sampling.py holds the rounds of
 * samples that were timing.py's).
 */
const REPLAYS_VARIANT_WORK = new Set(['graphs.py', 'timing.py', 'sampling.py', 'timed_output.py']);

/**
 * A finding whose kernel the harness's own code launched (its innermost Python frame is in one of
 * the harness's modules: the input fingerprint's reductions, the comparisons) is marked so: it is
 * not the variant's (recorded on the H100: initcheck's findings in PyTorch's reduce kernel under
 * `fingerprint in worker.py`).
 */
function attributed(f: SanitizerFinding, modules: Set<string>): SanitizerFinding {
  const file = /^\S+ in (\S+\.py):\d+$/.exec(f.python_frame ?? '')?.[1];
  return file !== undefined && modules.has(file) ? { ...f, harness: true } : f;
}

/**
 * A skip that no other case changes, so no next case is tried: a CUDA variant without its library
 * (the harness's NotBuilt, python/kernelgate_harness/worker.py) or on a machine without CUDA
 * (kernels/common/cuda_library.py).
 */
const SAME_ON_EVERY_CASE =
  /^(no library for |build of |build record of |CUDA variant; this run is on )/;

/** One sanitizer run of the target on one case: what the tool and the harness said. */
async function sanitizeCase(
  exec: Exec,
  o: DeepOptions,
  tool: SanitizerTool,
  sanitizer: string,
  t: DeepTarget,
  c: { caseId: string; params: DeepTarget['params'] },
  box: Box,
) {
  const dir = join(o.outDir, 'sanitizer', tool);
  mkdirSync(dir, { recursive: true });
  // The smallest case keeps the plain names (what the recording's fixtures are named after).
  const name = c.caseId === t.caseId ? slug(t) : `${slug(t)}-${caseSlug(c.caseId)}`;
  const results = join(dir, `${name}.json`);
  const args = [
    '--tool',
    tool,
    '--target-processes',
    'all',
    o.python,
    ...harnessLaunch(o, 'kernelgate_harness'),
    '--kernels',
    o.kernelsDir,
    '--out',
    results,
    '--only',
    t.kernel,
    '--variants',
    t.variant,
    '--case-params',
    caseParamsArg(c.params),
    '--no-timing',
    '--seeds',
    '1',
    '--gpus',
    '1',
    '--timeout-per-case',
    String(SANITIZER_CASE_TIMEOUT_S),
    ...(o.buildsPath ? ['--builds', o.buildsPath] : []),
  ];
  const t0 = box.clock();
  const timeoutS = left(box);
  const r = await exec.run(sanitizer, args, {
    cwd: o.workspace,
    env: harnessEnv(o),
    ...(timeoutS === undefined ? {} : { timeoutS }),
  });
  const seconds = Math.round((box.clock() - t0) * 10) / 10;
  const output = both(r);
  writeFileSync(join(dir, `${name}.log`), output);
  const parsed = parseSanitizer(output);
  const problem =
    parsed.errors === 0 && !r.timedOut ? harnessCaseProblem(results, t, c.caseId) : undefined;
  return { r, output, parsed, problem, seconds, command: [sanitizer, ...args].join(' ') };
}

const caseSlug = (caseId: string) => caseId.replace(/[^\w.-]+/g, '_');

/**
 * The target under one tool: on its kernel's smallest case, or — when the harness skips the
 * variant there — on the next of its cases it takes (DeepTarget.fallbacks); not checked, with the
 * reason, when it takes none of them or the time box ran out first.
 */
async function runSanitizer(
  exec: Exec,
  o: DeepOptions,
  tool: SanitizerTool,
  sanitizer: string,
  t: DeepTarget,
  box: Box,
): Promise<SanitizerRun> {
  const cases = [{ caseId: t.caseId, params: t.params }, ...(t.fallbacks ?? [])];
  const skips: string[] = [];
  let spent = 0;
  let everyCase = false;
  for (const c of cases) {
    const remaining = left(box);
    if (remaining !== undefined && remaining <= 0) {
      const why = skips.length
        ? `the harness skipped it on ${skips.join('; ')}; ${boxText(box)} ran out before its next case`
        : `${boxText(box)} ran out before this run started`;
      return skippedRun(tool, t, why, spent);
    }
    const run = await sanitizeCase(exec, o, tool, sanitizer, t, c, box);
    spent = Math.round((spent + run.seconds) * 10) / 10;
    const { r, output, parsed, problem } = run;
    if (problem?.kind === 'skipped') {
      skips.push(`${c.caseId} (${problem.reason})`);
      everyCase = SAME_ON_EVERY_CASE.test(problem.reason);
      if (everyCase) break;
      continue;
    }
    const base = {
      tool,
      kernel: t.kernel,
      variant: t.variant,
      case: c.caseId,
      seconds: spent,
      command: run.command,
      ...(skips.length
        ? {
            reason: `checked on the smallest case it takes: the harness skipped it on ${skips.join('; ')}`,
          }
        : {}),
    };
    const findings = parsed.findings.length
      ? { findings: parsed.findings.map((f) => attributed(f, harnessModules(o))) }
      : {};
    if (parsed.errors === undefined) {
      const tail = output.split('\n').filter(Boolean).slice(-8).join('\n');
      const head = r.timedOut
        ? `${tool} was stopped after ${run.seconds} s: ${boxText(box)} ran out; it printed no ERROR SUMMARY`
        : `${tool} printed no ERROR SUMMARY (exit status ${r.exitCode})`;
      return {
        ...base,
        status: 'error',
        errors: 0,
        ...findings,
        first_lines: `${head}; the output's last lines:\n${tail}`.slice(0, 2000),
      };
    }
    const missing = problem?.kind === 'missing' ? problem.message : undefined;
    return {
      ...base,
      status: parsed.errors > 0 ? 'findings' : missing ? 'error' : 'clean',
      errors: parsed.errors,
      ...findings,
      ...(missing
        ? { first_lines: `${tool} saw nothing of the variant: ${missing}` }
        : parsed.firstLines
          ? { first_lines: parsed.firstLines }
          : {}),
    };
  }
  // Every case tried was skipped, or the skip is the same on every case.
  const tail = everyCase
    ? ''
    : t.untried
      ? `; its ${t.untried} other case(s) within ${SANITIZER_FALLBACK_GROWTH}× the size are not tried (at most ${SANITIZER_MAX_FALLBACKS} are)`
      : t.pastLimit
        ? `; its next case, ${t.pastLimit.caseId}, is ${Math.round(t.pastLimit.times)}× the size, past the sanitizer's limit of ${SANITIZER_FALLBACK_GROWTH}×`
        : '; its kernel has no other case it could run';
  return skippedRun(tool, t, `the harness skipped it on ${skips.join('; ')}${tail}`, spent);
}

function skippedRun(
  tool: SanitizerTool,
  t: DeepTarget,
  reason: string,
  seconds: number,
): SanitizerRun {
  return {
    tool,
    kernel: t.kernel,
    variant: t.variant,
    case: t.caseId,
    status: 'skipped',
    errors: 0,
    reason,
    seconds,
  };
}

export async function runSanitizers(
  config: Config,
  o: DeepOptions,
  exec: Exec,
  tools: SanitizerTool[],
  sanitizer: string,
): Promise<SanitizerRun[]> {
  const targets = sanitizerTargets(config, o.only);
  const jobs = tools.flatMap((tool) => targets.map((t) => ({ tool, t })));
  const runs = new Map<number, SanitizerRun>();
  const box = boxOf(o);
  // The largest cases start first (their runs are the longest: bsr_gemm's took twice
  // attention's under racecheck on the H100), so that a short one fills the last lane; the
  // results keep the targets' order.
  const started = jobs
    .map((j, i) => ({ ...j, i }))
    .sort((a, b) => caseSize(b.t.params) - caseSize(a.t.params) || a.i - b.i);
  await pool(started, o.jobs ?? 4, async ({ tool, t, i }) => {
    runs.set(i, await runSanitizer(exec, o, tool, sanitizer, t, box));
  });
  return jobs.map((_, i) => runs.get(i) as SanitizerRun);
}
