// `kernelgate export`: a results document in one of the dashboards' formats (src/history/export.ts),
// on standard output or in --out, naming every failed case a format left out.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  EXPORT_FORMATS,
  exportResults,
  failedCaseLabel,
  failedCases,
  type ExportFormat,
} from '../history/index.js';
import { writeOutput } from '../lib/index.js';
import { InputError, loadResults } from '../results/index.js';
import type { CliIo } from './common.js';

/** `kernelgate export`'s options (its usage, src/cli/usage.ts, names each of them). */
export const EXPORT_OPTIONS = {
  results: { type: 'string' },
  format: { type: 'string' },
  out: { type: 'string' },
  confidence: { type: 'string', default: '0.99' },
  prefix: { type: 'string' },
} as const;

/** `kernelgate export`: writes a results document in one of the formats (standard output or --out). */
export async function exportCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: EXPORT_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  if (values.results === undefined) throw new InputError('export needs --results FILE');
  const format = values.format as ExportFormat;
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new InputError(
      `--format must be one of ${EXPORT_FORMATS.join(', ')} (got ${JSON.stringify(values.format ?? null)})`,
    );
  }
  const confidence = Number(values.confidence);
  if (!(confidence > 0 && confidence < 1)) {
    throw new InputError(`--confidence must be between 0 and 1 (got ${values.confidence})`);
  }
  const results = loadResults(resolve(io.cwd, values.results));
  const exported = exportResults(results, format, {
    confidence,
    ...(values.prefix !== undefined ? { prefix: values.prefix } : {}),
  });
  const count = Array.isArray(exported) ? exported.length : Object.keys(exported).length;
  if (count === 0) {
    throw new InputError(`${values.results}: no timed case with a correct result to export`);
  }
  const failed = failedCases(results);
  if (format !== 'bmf' && failed.length > 0) {
    const shown = failed.slice(0, 10).map(failedCaseLabel);
    const more = failed.length > 10 ? `, and ${failed.length - 10} more` : '';
    io.stderr(
      `${values.results}: ${failed.length} failed case(s) left out of ${format}, which has no way to say a case failed: ${shown.join(', ')}${more}\n`,
    );
  }
  const text = `${JSON.stringify(exported, null, 2)}\n`;
  if (values.out !== undefined) {
    writeOutput(resolve(io.cwd, values.out), text, values.out);
    io.stderr(`${values.out}: ${count} benchmarks (${format})\n`);
  } else {
    io.stdout(text);
  }
  return 0;
}
