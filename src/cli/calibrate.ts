// `kernelgate calibrate`: noise thresholds from repeated runs of the same code.
import { readFileSync } from 'node:fs';
import { writeOutput } from '../lib/index.js';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { calibrate, calibrationYaml, writeCalibration } from '../judge/index.js';
import { InputError, loadResults } from '../results/index.js';
import { UsageError } from './cli.js';
import { type Command, EXIT_PASS } from './common.js';

export const CALIBRATE_OPTIONS = {
  margin: { type: 'string', default: '2' },
  'floor-pct': { type: 'string', default: '3' },
  exclude: { type: 'string', default: '' },
  provenance: { type: 'string', default: 'see the runs named in the command' },
  write: { type: 'string' },
} as const;

export const calibrateCommand: Command = async (args, io) => {
  const { values, positionals } = parseArgs({
    args,
    options: CALIBRATE_OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  const number = (name: string, text: string) => {
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) {
      throw new UsageError(`--${name} must be a positive number (got ${JSON.stringify(text)})`);
    }
    return value;
  };
  if (positionals.length < 2) {
    throw new UsageError('calibrate needs two or more results files of the same code (A/A runs)');
  }
  const calibrationOptions = {
    margin: number('margin', values.margin),
    floorPct: number('floor-pct', values['floor-pct']),
    exclude: values.exclude.split(',').filter((e) => e !== ''),
  };
  const runs = positionals.map((p) => loadResults(resolve(io.cwd, p)));
  const calibration = calibrate(runs, calibrationOptions, positionals);
  if (values.write !== undefined) {
    const file = resolve(io.cwd, values.write);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new InputError(`${file}: cannot read it (${(e as Error).message})`);
    }
    writeOutput(file, writeCalibration(text, calibration, values.provenance, file), values.write);
    io.stderr(
      `${file}: compare.noise_pct.${calibration.model} now has ${calibration.entries.length} per-case entries (${calibration.compared} cases compared)\n`,
    );
  } else {
    io.stdout(calibrationYaml(calibration, values.provenance));
  }
  for (const s of calibration.skipped) io.stderr(`skipped ${s.key}: ${s.reason}\n`);
  return EXIT_PASS;
};
