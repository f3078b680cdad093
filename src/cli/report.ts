// `kernelgate report`: judge a results document and print the report. With no --results it judges
// kernelgate's built-in recorded run, but only in kernelgate's own checkout or with --demo: in a
// user's repository that would judge kernelgate's demo under the user's title.
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { InputError, loadResults } from '../results/index.js';
import { UsageError } from './cli.js';
import {
  type Command,
  configFrom,
  judgeAndPrint,
  PACKAGE_ROOT,
  RECORDED_RUN,
  reportKind,
} from './common.js';

export const REPORT_OPTIONS = {
  results: { type: 'string' },
  demo: { type: 'boolean', default: false },
  baseline: { type: 'string' },
  history: { type: 'string', multiple: true },
  config: { type: 'string' },
  kind: { type: 'string', default: 'pr' },
  out: { type: 'string' },
} as const;

function sameFolder(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

export const report: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: REPORT_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  const kind = reportKind(values.kind);
  if (values.demo && values.results !== undefined) {
    throw new UsageError(
      '--demo judges the built-in recorded run: give --demo or --results, not both',
    );
  }
  let config = configFrom(values.config, io.cwd);
  const own = sameFolder(config.rootDir, PACKAGE_ROOT);
  if (values.results === undefined && !values.demo && !own) {
    throw new InputError(
      `no --results: pass the results file to judge (a run's, e.g. --results .kernelgate/report/results.json); ` +
        `${config.rootDir} is not kernelgate's own checkout, so the built-in demo is not judged under its kernelgate.yml (--demo shows it)`,
    );
  }
  const recorded = values.results === undefined;
  // the demo is judged with kernelgate's own configuration unless --config says otherwise
  if (recorded && values.config === undefined && !own) config = configFrom(PACKAGE_ROOT, io.cwd);
  const resultsPath = recorded
    ? resolve(PACKAGE_ROOT, RECORDED_RUN.results)
    : resolve(io.cwd, values.results as string);
  const baselinePath =
    values.baseline !== undefined
      ? resolve(io.cwd, values.baseline)
      : recorded && RECORDED_RUN.baseline !== undefined
        ? resolve(PACKAGE_ROOT, RECORDED_RUN.baseline)
        : undefined;
  const results = loadResults(resultsPath);
  const baseline = baselinePath ? loadResults(baselinePath) : undefined;
  if (values.history !== undefined && kind !== 'nightly') {
    throw new UsageError('--history is for --kind nightly (its trends): give --kind nightly');
  }
  // the earlier nights of the branch, as the action reads them from the store (any order)
  const history = values.history?.map((file) => loadResults(resolve(io.cwd, file)));
  return judgeAndPrint(results, baseline, config, kind, values.out, io, history);
};
