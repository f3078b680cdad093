// Noise calibration from A/A runs (the same code measured several times on one GPU): for each
// case, how far its median moved between runs. A case whose run-to-run spread exceeds the
// practical threshold gets its own `compare.noise_pct`, so the comparison states the smallest
// change it can detect there instead of crying wolf.
import { isMap, isScalar, parseDocument, type Scalar } from 'yaml';
import { timingMethodKind } from './performance.js';
import type { KernelgateResults } from '../results/index.js';
import { InputError } from '../results/index.js';

export interface CalibrationOptions {
  /** calibrated noise = spread × margin (two runs underestimate a spread) */
  margin: number;
  /** spreads at or under this need no entry: the global threshold covers them */
  floorPct: number;
  /** `kernel/variant` pairs whose timings in these runs are not the code's own (planted faults) */
  exclude: string[];
}

export interface CaseNoise {
  key: string;
  medianMs: number[];
  spreadPct: number;
  noisePct: number;
}

export interface Calibration {
  runs: number;
  /** cases with an entry: spread above the floor */
  entries: CaseNoise[];
  /** cases compared, all runs timed the same way */
  compared: number;
  /** cases left out, with why */
  skipped: { key: string; reason: string }[];
}

export function calibrate(
  runs: readonly KernelgateResults[],
  options: CalibrationOptions,
): Calibration {
  if (runs.length < 2) throw new InputError('calibrate needs at least two runs of the same code');
  const skus = new Set(runs.map((r) => r.environment.gpu.sku ?? r.environment.gpu.name));
  if (skus.size > 1) {
    throw new InputError(
      `calibrate needs runs on one GPU SKU; these ran on ${[...skus].join(', ')}`,
    );
  }
  const [first, ...rest] = runs as [KernelgateResults, ...KernelgateResults[]];
  const entries: CaseNoise[] = [];
  const skipped: Calibration['skipped'] = [];
  let compared = 0;
  for (const c of first.cases) {
    const key = `${c.kernel}/${c.variant}/${c.case}`;
    if (options.exclude.includes(`${c.kernel}/${c.variant}`)) continue;
    const timings = [
      c,
      ...rest.map((r) =>
        r.cases.find((o) => o.kernel === c.kernel && o.variant === c.variant && o.case === c.case),
      ),
    ].map((x) => x?.timing);
    if (timings.some((t) => t === undefined || t.samples_ms.length === 0)) {
      skipped.push({ key, reason: 'not timed in every run' });
      continue;
    }
    const methods = new Set(timings.map((t) => timingMethodKind(t!.method)));
    if (methods.size > 1) {
      skipped.push({ key, reason: `timed differently across runs (${[...methods].join(' / ')})` });
      continue;
    }
    compared += 1;
    const medianMs = timings.map((t) => t!.median_ms);
    const spreadPct = (Math.max(...medianMs) / Math.min(...medianMs) - 1) * 100;
    if (spreadPct > options.floorPct) {
      entries.push({ key, medianMs, spreadPct, noisePct: Math.ceil(spreadPct * options.margin) });
    }
  }
  entries.sort((a, b) => a.key.localeCompare(b.key));
  return { runs: runs.length, entries, compared, skipped };
}

/** The comment lines that say where a calibration came from (without the `#`). */
function provenanceComment(calibration: Calibration, provenance: string): string[] {
  return [
    `Calibrated by \`kernelgate calibrate\` from ${calibration.runs} A/A runs (${provenance}):`,
    `${calibration.compared} cases compared, ${calibration.entries.length} moved more than the threshold.`,
  ];
}

/** The comment above one case's entry (without the `#`). */
function entryComment(e: CaseNoise): string {
  const medians = e.medianMs.map((m) => m.toPrecision(3)).join(' / ');
  return `medians ${medians} ms: spread ${e.spreadPct.toFixed(1)} %`;
}

/** The `compare.noise_pct` block for kernelgate.yml, one commented entry per case. */
export function calibrationYaml(calibration: Calibration, provenance: string): string {
  const lines = [
    ...provenanceComment(calibration, provenance).map((l) => `  # ${l}`),
    '  noise_pct:',
  ];
  for (const e of calibration.entries) {
    lines.push(`    # ${entryComment(e)}`);
    lines.push(`    ${JSON.stringify(e.key)}: ${e.noisePct}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * kernelgate.yml's text with the calibration in `compare.noise_pct`: per-case entries
 * (`kernel/variant/case`) are replaced by the calibration's, kernel- and variant-wide entries
 * and every other line (comments included) are kept.
 */
export function writeCalibration(
  configText: string,
  calibration: Calibration,
  provenance: string,
  file: string,
): string {
  const doc = parseDocument(configText);
  if (doc.errors.length > 0) {
    throw new InputError(`${file}: not valid YAML: ${doc.errors[0]?.message ?? ''}`);
  }
  if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  if (!isMap(doc.contents)) throw new InputError(`${file}: the top level must be a mapping`);
  let compare = doc.contents.get('compare', true);
  if (compare === undefined || compare === null) {
    doc.contents.set('compare' as never, doc.createNode({}) as never);
    compare = doc.contents.get('compare', true);
  }
  if (!isMap(compare)) throw new InputError(`${file}: compare must be a mapping`);
  let noise = compare.get('noise_pct', true);
  if (noise === undefined || noise === null) {
    compare.set('noise_pct', doc.createNode({}));
    noise = compare.get('noise_pct', true);
  }
  if (!isMap(noise)) throw new InputError(`${file}: compare.noise_pct must be a mapping`);
  noise.items = noise.items.filter((pair) => {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    return key.split('/').length < 3;
  });
  const header = provenanceComment(calibration, provenance);
  for (const [i, e] of calibration.entries.entries()) {
    const pair = doc.createPair(e.key, e.noisePct);
    const key = pair.key as Scalar;
    key.type = 'QUOTE_DOUBLE';
    // the yaml package writes each comment line as `#` + the line: keep one space
    const lines = i === 0 ? [...header, entryComment(e)] : [entryComment(e)];
    key.commentBefore = lines.map((l) => ` ${l}`).join('\n');
    noise.items.push(pair);
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}
