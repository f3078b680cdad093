// `kernelgate doctor`, `build` and `run`: the stages on this machine.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { actionsExec, makeOutputDir } from '../lib/index.js';
import { buildKernels, buildTargets, describeDoctor, runDoctor } from '../measure/index.js';
import {
  startCheck,
  DEFAULT_BISECT_TIME_BOX_S,
  fullRun,
  type FullRunOptions,
  shardedOptions,
  storeBaseline,
} from '../pipeline/index.js';
import { SHARD_BALANCE, type ShardBalance } from '../shard/index.js';
import { fileBaselineStore, storeKeyOf } from '../store/index.js';
import { UsageError } from './cli.js';
import {
  type Command,
  configFrom,
  EXIT_GATE_FAILED,
  EXIT_PASS,
  judgeAndPrint,
  PACKAGE_ROOT,
  reportKind,
  selectedKernels,
  shardSpec,
  terminalLog,
} from './common.js';

export const DOCTOR_OPTIONS = { config: { type: 'string' } } as const;

export const BUILD_OPTIONS = {
  config: { type: 'string' },
  only: { type: 'string' },
  'cache-dir': { type: 'string' },
} as const;

export const RUN_OPTIONS = {
  config: { type: 'string' },
  only: { type: 'string' },
  'out-dir': { type: 'string', default: '.kernelgate/report' },
  baseline: { type: 'string' },
  'baseline-dir': { type: 'string', default: '.kernelgate/baselines' },
  branch: { type: 'string' },
  base: { type: 'string' },
  'base-sha': { type: 'string' },
  'save-baseline': { type: 'boolean', default: false },
  kind: { type: 'string', default: 'pr' },
  out: { type: 'string' },
  shard: { type: 'string' },
  'shard-balance': { type: 'string', default: 'baseline' },
} as const;

export const doctor: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: DOCTOR_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  const config = configFrom(values.config, io.cwd);
  const found = await runDoctor({ exec: actionsExec(), python: config.harness.python });
  io.stdout(describeDoctor(found));
  return found.diagnostics.some((d) => d.level === 'error') ? EXIT_GATE_FAILED : EXIT_PASS;
};

export const build: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: BUILD_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  const config = configFrom(values.config, io.cwd);
  const built = await buildKernels(buildTargets(config, selectedKernels(values.only, config)), {
    exec: actionsExec(),
    cacheDir: resolve(io.cwd, values['cache-dir'] ?? join(config.rootDir, '.kernelgate', 'build')),
    python: config.harness.python,
    log: (line) => io.stderr(`${line}\n`),
  });
  for (const d of built.diagnostics)
    io.stdout(`${d.level}: ${d.message}${d.fix ? `\n  fix: ${d.fix}` : ''}\n`);
  io.stdout(`builds: ${built.buildsJsonPath}\n`);
  return built.records.every((r) => r.status === 'ok') ? EXIT_PASS : EXIT_GATE_FAILED;
};

/** --kind nightly: timed beside the newest good stored run of --branch (paired A/B), bisected. */
function nightlyOptions(nightly: boolean, config: FullRunOptions['config']) {
  if (!nightly || !config.compare.paired.enabled) return {};
  return { pairedWithLastGood: true, bisectTimeBoxS: DEFAULT_BISECT_TIME_BOX_S };
}

export const run: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: RUN_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  const kind = reportKind(values.kind);
  const shard = values.shard === undefined ? undefined : shardSpec(values.shard);
  const balance = values['shard-balance'];
  if (!(SHARD_BALANCE as readonly string[]).includes(balance)) {
    throw new UsageError(
      `--shard-balance must be ${SHARD_BALANCE.join(' or ')} (got ${JSON.stringify(balance)})`,
    );
  }
  if (values['save-baseline'] && values.branch === undefined) {
    throw new UsageError('--save-baseline needs --branch: baselines are stored per branch');
  }
  const config = configFrom(values.config, io.cwd);
  const only = selectedKernels(values.only, config);
  const runOptions: FullRunOptions = {
    config,
    workspace: config.rootDir,
    harnessRoot: PACKAGE_ROOT,
    outDir: resolve(io.cwd, values['out-dir']),
    ...(only !== undefined ? { only } : {}),
    run: { command: `kernelgate run ${args.join(' ')}`.trim() },
    mode: values.base !== undefined ? 'pr' : kind === 'nightly' ? 'schedule' : 'push',
    branch: values.branch,
    baseBranch: values.base,
    store: fileBaselineStore(resolve(io.cwd, values['baseline-dir']), {
      warn: (line) => io.stderr(`warning: ${line}\n`),
      info: (line) => io.stderr(`${line}\n`),
      key: storeKeyOf(process.env),
    }),
    baselinePath: values.baseline === undefined ? undefined : resolve(io.cwd, values.baseline),
    saveBaseline: values['save-baseline'],
    ...(values['base-sha'] !== undefined
      ? { pairedBase: { sha: values['base-sha'], ...(values.base ? { ref: values.base } : {}) } }
      : {}),
    ...nightlyOptions(kind === 'nightly' && values['base-sha'] === undefined, config),
    // --kind pr with --base-sha: a pull request's paired run, identical variants untimed
    skipIdentical: kind === 'pr',
  };
  const log = terminalLog(io);
  // the configuration checked (as `kernelgate check`) before anything is built or measured: read
  // while the doctor reads the machine, awaited before the build (measure())
  const check = startCheck(config, { harnessRoot: PACKAGE_ROOT, exec: actionsExec(), log });
  makeOutputDir(runOptions.outDir, values['out-dir']);
  if (shard !== undefined) {
    const sharded = shardedOptions({ ...runOptions, check }, shard, balance as ShardBalance, log);
    const measured = sharded.finish(await fullRun(sharded.options, { exec: actionsExec(), log }));
    io.stderr(
      `shard ${shard.index}/${shard.count}: ${measured.results.cases.length} results: ${measured.resultsPath}\n` +
        `join the shards with: kernelgate merge DIR... --shards ${shard.count}\n`,
    );
    return EXIT_PASS;
  }
  const measured = await fullRun({ ...runOptions, check }, { exec: actionsExec(), log });
  io.stderr(`results: ${measured.resultsPath}\n`);
  const status = judgeAndPrint(
    measured.results,
    measured.baseline?.results,
    config,
    kind,
    values.out,
    io,
  );
  const stored = storeBaseline(measured, status === EXIT_PASS ? 'pass' : 'fail', 'passing');
  if (stored.saved) io.stderr(`stored as the newest baseline: ${stored.saved}\n`);
  if (stored.note) io.stderr(`${stored.note}\n`);
  return status;
};
