// `kernelgate report`: judge a results document (default: the recorded run) and print the report.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadResults } from '../results/index.js';
import {
  type Command,
  configFrom,
  judgeAndPrint,
  PACKAGE_ROOT,
  RECORDED_RUN,
  reportKind,
} from './common.js';

export const report: Command = async (args, io) => {
  const { values } = parseArgs({
    args,
    options: {
      results: { type: 'string' },
      baseline: { type: 'string' },
      config: { type: 'string' },
      kind: { type: 'string', default: 'pr' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const kind = reportKind(values.kind);
  const recorded = values.results === undefined;
  const resultsPath = recorded
    ? resolve(PACKAGE_ROOT, RECORDED_RUN.results)
    : resolve(io.cwd, values.results as string);
  const baselinePath =
    values.baseline !== undefined
      ? resolve(io.cwd, values.baseline)
      : recorded && RECORDED_RUN.baseline !== undefined
        ? resolve(PACKAGE_ROOT, RECORDED_RUN.baseline)
        : undefined;

  const config = configFrom(values.config, io.cwd);
  const results = loadResults(resultsPath);
  const baseline = baselinePath ? loadResults(baselinePath) : undefined;
  return judgeAndPrint(results, baseline, config, kind, values.out, io);
};
