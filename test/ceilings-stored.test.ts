// The ceilings of a pull request's run from a stored run (issue 27, src/measure/ceilings.ts): when
// the calibration kernel (kernels/gemm) is identical in base and head, the copy and GEMM ceilings a
// stored run of the same GPU model measured are handed to the harness (--ceilings) instead of 8.5 s
// of calibration; the report's environment table names the run they came from, escaped.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { compare, evaluateTiers, gate } from '../src/judge/index.js';
import { storedCeilingsArgs } from '../src/measure/ceilings.js';
import { renderReport } from '../src/report/index.js';
import type { KernelgateResults } from '../src/results/index.js';

const night = JSON.parse(
  gunzipSync(
    readFileSync(join(import.meta.dirname, 'fixtures/recorded/nightly-h100-run32/results.json.gz')),
  ).toString('utf8'),
) as KernelgateResults;
const config = loadConfig(join(import.meta.dirname, '..'));
const SOURCE = { results: night, label: 'the stored run runs/main/H100-SXM.json (main, H100-SXM)' };
const FROM = 'the stored run runs/main/H100-SXM.json (main, H100-SXM), 2026-11-26T03:18:47Z';

function call(identical: string, source = SOURCE, sku = 'H100-SXM') {
  const outDir = mkdtempSync(join(tmpdir(), 'kg-ceilings-'));
  const lines: string[] = [];
  const environment = { ...night.environment, gpu: { ...night.environment.gpu, sku } };
  const args = storedCeilingsArgs(config, ['--identical', identical], environment, source, outDir, {
    info: (l) => lines.push(l),
  });
  return { args, lines, outDir };
}

describe('ceilings from a stored run', () => {
  it('are handed to the harness when every variant of the calibration kernel is identical', () => {
    const { args, lines, outDir } = call('attention.sdpa_default,gemm.cublas,gemm.torch_copy');
    expect(args).toEqual(['--ceilings', join(outDir, 'ceilings.json')]);
    expect(JSON.parse(readFileSync(join(outDir, 'ceilings.json'), 'utf8'))).toEqual({
      copy_gbps: night.environment.ceilings!.copy_gbps,
      gemm_tflops: night.environment.ceilings!.gemm_tflops,
      source: FROM,
    });
    expect(lines).toEqual([
      `kernelgate: ceilings: from ${FROM}: the calibration kernel (gemm) is identical in base and head, so it is not run again`,
    ]);
  });

  it('are measured when the calibration kernel changed, or without a stored run', () => {
    expect(call('gemm.torch_copy')).toMatchObject({ args: [], lines: [] });
    const lines: string[] = [];
    const environment = night.environment;
    const none = storedCeilingsArgs(
      config,
      ['--identical', 'gemm.cublas,gemm.torch_copy'],
      environment,
      undefined,
      mkdtempSync(join(tmpdir(), 'kg-ceilings-')),
      { info: (l) => lines.push(l) },
    );
    expect([none, lines]).toEqual([[], []]);
  });

  it('are measured, and the log says why, when the stored run is of another GPU model or measured none', () => {
    expect(call('gemm.cublas,gemm.torch_copy', SOURCE, 'H200-SXM')).toMatchObject({
      args: [],
      lines: [
        `kernelgate: ceilings: measured in this run, not taken from ${SOURCE.label}: its GPU model (H100-SXM) is not this run's (H200-SXM)`,
      ],
    });
    const bare = structuredClone(night);
    delete bare.environment.ceilings;
    expect(call('gemm.cublas,gemm.torch_copy', { ...SOURCE, results: bare })).toMatchObject({
      args: [],
      lines: [
        `kernelgate: ceilings: measured in this run, not taken from ${SOURCE.label}: it has no measured copy and GEMM ceilings`,
      ],
    });
  });

  it("are named in the report's environment table, escaped", () => {
    const results = structuredClone(night);
    results.environment.ceilings!.source = 'the stored run <img src=x> | main';
    const comparison = compare(results, undefined, config);
    const tiers = evaluateTiers(results, config);
    const { full } = renderReport({
      kind: 'pr',
      results,
      baseline: undefined,
      comparison,
      tiers,
      gate: gate(comparison, tiers, results, config),
      config,
    });
    expect(full).toContain(
      '| ceilings measured by | the stored run &lt;img src=x&gt; \\| main (the calibration kernel is identical) |',
    );
  });
});
