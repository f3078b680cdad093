// `kernelgate deep`: the nightly's deep checks on this GPU machine (src/deep, docs/scaling.md):
// compute-sanitizer's four tools over every CUDA and Triton variant on its kernel's smallest case,
// Nsight Compute over the headline cases; their findings go into a results document's `deep`
// section, which is then judged and reported like `kernelgate report`.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type DeepCheck, parseDeepChecks, runDeep } from '../deep/index.js';
import { type Config, unknownSelection } from '../config/index.js';
import { actionsExec, type Exec, makeOutputDir, writeOutput } from '../lib/index.js';
import { ncuCompareOptions, slowerDeepTargets } from '../pipeline/index.js';
import { buildKernels, buildTargets, runDoctor } from '../measure/index.js';
import {
  InputError,
  type KernelgateResults,
  loadResults,
  validateResults,
} from '../results/index.js';
import { UsageError } from './cli.js';
import {
  type Command,
  configFrom,
  judgeAndPrint,
  onlyList,
  PACKAGE_ROOT,
  reportKind,
  terminalLog,
} from './common.js';

export const DEEP_USAGE = `kernelgate deep [--config DIR_OR_FILE] [--checks sanitizer,ncu] [--only K1,K2]
                [--results FILE [--baseline FILE]] [--out-dir DIR] [--builds FILE] [--jobs N]
                [--sanitizer PATH] [--ncu PATH] [--time-box SECONDS]
                [--kind nightly|pr] [--out FILE]
  --checks LIST         sanitizer (memcheck, racecheck, synccheck and initcheck), ncu (the
                        headline cases), ncu-slower (the cases --results is judged SLOWER in,
                        largest first, at most 6), ncu-compare (base and head of each variant a
                        paired --results moved, on its largest change), or any of memcheck,
                        racecheck, synccheck, initcheck (default: sanitizer,ncu)
  --results FILE        add the deep section to this results document (a run's results.json) and
                        judge it; default: a new document of the deep checks alone in --out-dir
  --baseline FILE       judge --results against it (and find ncu-slower's cases by it)
  --out-dir DIR         the tools' logs, the sanitizer's runs and the .ncu-rep reports go under
                        DIR/deep (default: .kernelgate/report)
  --builds FILE         the CUDA variants' build records (default: build them now)
  --jobs N              sanitizer runs at once (default 4; ncu runs one at a time)
  --sanitizer PATH, --ncu PATH
                        the tools (default: found on PATH, in $CUDA_HOME/bin, /usr/local/cuda/bin)
  --time-box SECONDS    stop the checks SECONDS after the command started (the build counts):
                        a run in flight is stopped and said so, a run not started is reported
                        not checked; what the finished runs found is kept, judged and reported
  exit status: 1 when the gate fails (a sanitizer finding, under policy.fail_on_sanitizer)
`;

/** The deep checks' own results document when none is given: the doctor's environment, no case. */
function emptyResults(environment: KernelgateResults['environment'], command: string) {
  return {
    schema: 'kernelgate/results@1',
    run: {
      started_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      harness: 'kernelgate deep',
      command,
    },
    environment,
    diagnostics: [],
    kernels: [],
    cases: [],
  } as unknown as KernelgateResults;
}

export const DEEP_OPTIONS = {
  config: { type: 'string' },
  checks: { type: 'string', default: 'sanitizer,ncu' },
  only: { type: 'string' },
  results: { type: 'string' },
  baseline: { type: 'string' },
  'out-dir': { type: 'string', default: '.kernelgate/report' },
  builds: { type: 'string' },
  jobs: { type: 'string', default: '4' },
  sanitizer: { type: 'string' },
  ncu: { type: 'string' },
  'time-box': { type: 'string' },
  kind: { type: 'string', default: 'nightly' },
  out: { type: 'string' },
} as const;

function deepArgs(args: string[]) {
  const { values } = parseArgs({
    args,
    options: DEEP_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  let checks: DeepCheck[];
  try {
    checks = parseDeepChecks(values.checks, '--checks');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (checks.length === 0) throw new UsageError('--checks names no check');
  if (checks.includes('ncu-compare') && !values.results) {
    throw new UsageError(
      '--checks ncu-compare needs --results FILE: a paired run (kernelgate run --base-sha SHA) whose moved variants ncu profiles in base and head',
    );
  }
  const jobs = Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) {
    throw new UsageError(
      `--jobs must be a whole number from 1, got ${JSON.stringify(values.jobs)}`,
    );
  }
  const box = values['time-box'];
  const timeBoxS = box === undefined ? undefined : Number(box);
  if (timeBoxS !== undefined && !(Number.isFinite(timeBoxS) && timeBoxS > 0)) {
    throw new UsageError(
      `--time-box must be a number of seconds above 0, got ${JSON.stringify(box)}`,
    );
  }
  return {
    values,
    checks,
    jobs,
    timeBoxS,
    kind: reportKind(values.kind),
    only: onlyList(values.only),
  };
}

/** The build records: --builds, else the CUDA variants built now (cached as `kernelgate build`). */
async function buildsFor(
  given: string | undefined,
  config: Config,
  only: string[] | undefined,
  exec: Exec,
  log: (line: string) => void,
): Promise<string | undefined> {
  if (given !== undefined) return given;
  const built = await buildKernels(buildTargets(config, only), {
    exec,
    cacheDir: join(config.rootDir, '.kernelgate', 'build'),
    python: config.harness.python,
    log,
  });
  return built.buildsJsonPath;
}

/** ncu-compare's targets and base checkout from a paired run's results, said in the log. */
function compareTargets(
  results: KernelgateResults,
  baseline: KernelgateResults | undefined,
  config: Config,
  deepDir: string,
  info: (line: string) => void,
) {
  const compared = ncuCompareOptions(results, baseline, config, deepDir);
  const n = compared.compare?.length ?? 0;
  info(
    n
      ? `kernelgate deep: ncu-compare: base and head of ${n} moved variant(s)`
      : 'kernelgate deep: ncu-compare: no variant moved: nothing to compare',
  );
  return compared;
}

export function deepCommand(exec: Exec = actionsExec()): Command {
  return async (args, io) => {
    const started = Date.now() / 1000;
    const { values, checks, jobs, timeBoxS, kind, only } = deepArgs(args);
    const config = configFrom(values.config, io.cwd);
    const unknown = unknownSelection(config, only, '--only');
    if (unknown !== undefined) throw new InputError(unknown);
    const outDir = resolve(io.cwd, values['out-dir']);
    const log = terminalLog(io);
    const resultsPath = values.results
      ? resolve(io.cwd, values.results)
      : join(outDir, 'results.json');
    const results = values.results ? loadResults(resultsPath) : undefined;
    const baseline = values.baseline ? loadResults(resolve(io.cwd, values.baseline)) : undefined;
    if (checks.includes('ncu-slower') && !results) {
      throw new UsageError(
        '--checks ncu-slower needs --results FILE: the run whose SLOWER cases ncu profiles',
      );
    }
    const doctor = await runDoctor({ exec, python: config.harness.python });
    const buildsPath = await buildsFor(
      values.builds && resolve(io.cwd, values.builds),
      config,
      only,
      exec,
      log.info,
    );
    const deepDir = join(outDir, 'deep');
    makeOutputDir(deepDir, `${values['out-dir']}/deep`);
    log.info(`kernelgate deep: ${checks.join(', ')}; the tools' output under ${deepDir}`);
    const gpu = (results?.environment ?? doctor.environment).gpu;
    const compared =
      results && checks.includes('ncu-compare')
        ? compareTargets(results, baseline, config, deepDir, log.info)
        : {};
    const outcome = await runDeep(
      config,
      {
        workspace: config.rootDir,
        harnessRoot: PACKAGE_ROOT,
        python: config.harness.python,
        kernelsDir: config.kernelsDir,
        outDir: deepDir,
        checks,
        ...(only ? { only } : {}),
        ...(buildsPath && existsSync(buildsPath) ? { buildsPath } : {}),
        ...(gpu.compute_capability ? { computeCapability: gpu.compute_capability } : {}),
        jobs,
        ...(results && checks.includes('ncu-slower')
          ? { slower: slowerDeepTargets(results, baseline, config) }
          : {}),
        ...compared,
        ...(values.sanitizer ? { sanitizerPath: resolve(io.cwd, values.sanitizer) } : {}),
        ...(values.ncu ? { ncuPath: resolve(io.cwd, values.ncu) } : {}),
        ...(timeBoxS === undefined ? {} : { deadline: started + timeBoxS, timeBoxS }),
      },
      exec,
    );
    for (const d of outcome.diagnostics) {
      log.warning(`${d.message}${d.fix ? ` (fix: ${d.fix})` : ''}`);
    }
    const base =
      results ?? emptyResults(doctor.environment, `kernelgate deep ${args.join(' ')}`.trim());
    const merged = validateResults(
      {
        ...base,
        diagnostics: [...base.diagnostics, ...outcome.diagnostics],
        deep: { ...base.deep, ...outcome.deep },
      },
      resultsPath,
    );
    writeOutput(resultsPath, `${JSON.stringify(merged, null, 1)}\n`);
    io.stderr(`results with the deep section: ${resultsPath}\n`);
    return judgeAndPrint(merged, baseline, config, kind, values.out, io);
  };
}
