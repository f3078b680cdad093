// The per-case tables: every case of a kernel, and the cases that changed.
import {
  type CaseComparison,
  caseGbps,
  casePctPeak,
  caseTflops,
  type MeasurementError,
} from '../judge/index.js';
import { type Cell, fixed, formatMs, table } from '../lib/index.js';
import {
  axisCells,
  axisKeys,
  clip,
  correctnessCell,
  errorCell,
  noteOf,
  perfCells,
  trusted,
} from './cells.js';
import { compactTable } from './compact.js';
import { deviceCell, manyHosts, severalDevices } from './devices.js';
import type { ReportInput } from './types.js';

/** The `GPU` column's header, alignment and cell of each case, when several GPUs measured the run. */
function gpuColumn(input: ReportInput) {
  if (!severalDevices(input.results)) return { header: [], align: [], cell: () => [] };
  const hosts = manyHosts(input.results);
  return {
    header: ['GPU'],
    align: ['l' as const],
    cell: (c: CaseComparison): Cell[] => [deviceCell(c.current, hosts)],
  };
}

/** Every case of a kernel: Δ and verdict beside the variant, one column per case axis, the rest after. */
export function resultTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
): string {
  const keys = axisKeys(cases);
  const gpu = gpuColumn(input);
  const rows = cases.map((c): Cell[] => {
    const current = c.current;
    const tflops = current ? caseTflops(current) : undefined;
    const gbps = current ? caseGbps(current) : undefined;
    const pct = current ? casePctPeak(current, input.results, input.config) : undefined;
    const bad = measured.get(c.key);
    const [delta, verdict, ci] = perfCells(c, input) as [Cell, Cell, Cell];
    return [
      c.variant,
      delta,
      verdict,
      ...axisCells(c, keys),
      ...gpu.cell(c),
      trusted(formatMs(c.medianMs)),
      trusted(c.iqrMs === undefined ? '' : formatMs(c.iqrMs)),
      trusted(
        tflops === undefined || tflops === 0
          ? ''
          : `${bad?.quantity === 'tflops' ? '⚠️ ' : ''}${fixed(tflops, 1)}`,
      ),
      trusted(
        gbps === undefined ? '' : `${bad?.quantity === 'gbps' ? '⚠️ ' : ''}${fixed(gbps, 0)}`,
      ),
      trusted(
        pct === undefined || tflops === 0
          ? ''
          : `${bad?.quantity === 'tflops' ? '⚠️ ' : ''}${fixed(pct, 1)}`,
      ),
      ci,
      correctnessCell(c),
      errorCell(c),
      noteOf(c, measured),
    ];
  });
  const header = [
    'variant',
    input.comparison.paired ? 'Δ' : 'Δ vs baseline',
    'verdict',
    ...keys,
    ...gpu.header,
    'median ms',
    'IQR ms',
    'TFLOPS',
    'GB/s',
    '% peak',
    'CI of Δ',
    'correctness',
    'rel_l2 / tol',
    'note',
  ];
  const align: ('l' | 'r' | 'c')[] = [
    'l',
    'r',
    'l',
    ...keys.map((): 'l' => 'l'),
    ...gpu.align,
    'r',
    'r',
    'r',
    'r',
    'r',
    'r',
    'l',
    'r',
    'l',
  ];
  return table(header, rows, align);
}

/** The changed cases of a kernel, worst first: the verdict, then the case, then why. */
export function changedTable(
  cases: CaseComparison[],
  input: ReportInput,
  measured: Map<string, MeasurementError>,
  noteMax: number | undefined,
): string {
  const keys = axisKeys(cases);
  const gpu = gpuColumn(input);
  // The verdict column is always the performance verdict; a correctness other than PASS (FAIL,
  // ERROR, UNCHECKED: another tool's case) has a column of its own.
  const unpassed = (c: CaseComparison) => c.correctness !== 'PASS' && c.correctness !== 'SKIPPED';
  const checks = cases.some(unpassed);
  const rows = cases.map((c): Cell[] => {
    const [delta, verdict, ci] = perfCells(c, input) as [Cell, Cell, Cell];
    return [
      c.variant,
      delta,
      measured.has(c.key) ? trusted("⚠️ above the chip's peak") : verdict,
      ...(checks ? [unpassed(c) ? correctnessCell(c) : trusted('')] : []),
      ...axisCells(c, keys),
      ...gpu.cell(c),
      trusted(c.medianMs === undefined ? '' : formatMs(c.medianMs)),
      trusted(c.baselineMedianMs === undefined ? '' : formatMs(c.baselineMedianMs)),
      ci,
      clip(noteOf(c, measured), noteMax),
    ];
  });
  const header = [
    'variant',
    'Δ',
    'verdict',
    ...(checks ? ['correctness'] : []),
    ...keys,
    ...gpu.header,
    'ms',
    'base ms',
    'CI of Δ',
  ];
  return compactTable([...header, 'note'], rows, [
    'l',
    'r',
    'l',
    ...(checks ? ['l' as const] : []),
    ...keys.map((): 'l' => 'l'),
    ...gpu.align,
    'r',
    'r',
    'r',
    'l',
  ]);
}
