// `kernelgate adapt`'s reading: one output file of a tool, or several runs of it read together
// (one sample per run), and the summary of what was written: cases, errors, warnings.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { KernelgateResults } from '../results/index.js';
import { readInputFile } from '../results/index.js';
import type { BenchmarkConfig } from '../config/index.js';
import { finishKernel, type AdaptedKernel } from './run.js';
import { mergeRuns } from './runs.js';
import { refuseOtherFormat, type FileAdapter, type FileFormat } from '../formats/index.js';

/** Reads the files of one or more runs of a tool (`shown` names each in messages). */
export function adaptFiles(
  adapter: FileAdapter<FileFormat>,
  paths: readonly string[],
  options: {
    kernel: string;
    shown?: readonly string[];
    work?: BenchmarkConfig['work'];
    references?: readonly string[];
  },
): AdaptedKernel {
  const shown = paths.map((p, i) => options.shown?.[i] ?? p);
  const runs = paths.map((path, i) => {
    const file = shown[i]!;
    const text = readInputFile(path, file);
    refuseOtherFormat(adapter.format, text, file);
    return adapter.parse({
      text,
      file,
      kernel: options.kernel,
      readSidecar: (rel) => readFileSync(isAbsolute(rel) ? rel : join(dirname(path), rel)),
    });
  });
  return finishKernel(adapter, options.kernel, mergeRuns(runs, shown), options);
}

/** What `adapt` wrote, in lines for the terminal, and whether anything in it can be judged. */
export function adaptSummary(
  results: KernelgateResults,
  what: { written: string; title: string; runs: number },
): { lines: string[]; usable: boolean } {
  const count = (status: string) => results.cases.filter((c) => c.status === status).length;
  const timed = results.cases.filter((c) => c.status === 'ok' && c.timing).length;
  const errors = count('error') + count('timeout') + count('fail');
  const skipped = count('skipped');
  const warnings = results.diagnostics.filter((d) => d.level === 'warning' || d.level === 'error');
  const runs = what.runs > 1 ? ` from ${what.runs} runs (one sample per run)` : '';
  const gpu =
    results.environment.gpu.name === 'none' ? 'no GPU named' : results.environment.gpu.name;
  const lines = [
    `${what.written}: ${results.cases.length} case(s) (${what.title})${runs}: ${timed} timed, ${errors} error(s), ${skipped} skipped; ${warnings.length} warning(s); GPU: ${gpu}`,
    ...warnings.map((d) => `  ${d.level}: ${d.message}${d.fix ? ` (fix: ${d.fix})` : ''}`),
  ];
  if (timed === 0) lines.push(`${what.written}: no timed case: nothing in it can be judged`);
  return { lines, usable: timed > 0 };
}
