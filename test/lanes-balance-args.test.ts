// The action and `kernelgate run` pass --balance to the harness when it runs on more than one GPU
// and a stored run of this GPU model exists (issue 27): src/measure/balance.ts builds the
// argument and the log line, src/pipeline/balance.ts finds the stored run the mode reads.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { lanesBalance, lanesOf } from '../src/measure/index.js';
import { storedBalance } from '../src/pipeline/balance.js';
import type { Environment, KernelgateResults } from '../src/results/index.js';
import { fileBaselineStore } from '../src/store/index.js';

const night = JSON.parse(
  gunzipSync(
    readFileSync(join(import.meta.dirname, 'fixtures/recorded/nightly-h100-run32/results.json.gz')),
  ).toString('utf8'),
) as KernelgateResults;

function environment(count: number): Environment {
  return {
    ...night.environment,
    gpu: { ...night.environment.gpu, sku: 'H100-SXM', count },
  };
}

function setUp(stored: boolean) {
  const root = mkdtempSync(join(tmpdir(), 'kg-balance-'));
  const store = fileBaselineStore(root);
  const path = stored ? store.save({ branch: 'main', sku: 'H100-SXM' }, night) : undefined;
  const lines: string[] = [];
  const log = { info: (line: string) => lines.push(line) };
  const lookup = storedBalance(
    { mode: 'pr', branch: 'feature', baseBranch: 'main', store, baselinePath: undefined },
    log,
  );
  const outDir = mkdtempSync(join(tmpdir(), 'kg-out-'));
  return { path, lines, log, lookup, outDir };
}

describe('--balance for the harness on several GPUs', () => {
  it('two GPUs and a stored run of this model: --balance with its cases, and the line says so', async () => {
    const { path, lines, log, lookup, outDir } = setUp(true);
    const args = await lanesBalance(
      lookup,
      environment(2),
      ['--only', 'attention'],
      outDir,
      log,
      {},
    );
    const file = join(outDir, 'balance.json');
    expect(args).toEqual(['--balance', file]);
    const written = JSON.parse(readFileSync(file, 'utf8')) as { cases: unknown[] };
    expect(written.cases).toHaveLength(217);
    expect(lines).toEqual([
      `kernelgate: 2 GPUs: the harness balances its lanes by what each case took in the stored run ${path} (main, H100-SXM) (--balance ${file})`,
    ]);
  });

  it('two GPUs and no stored run: no --balance, and the line names the estimate', async () => {
    const { lines, log, lookup, outDir } = setUp(false);
    expect(await lanesBalance(lookup, environment(2), [], outDir, log, {})).toEqual([]);
    expect(lines).toEqual([
      'kernelgate: 2 GPUs: no stored run of this GPU model, so the harness balances its lanes by its estimate (each variant at the time cap, plus the overhead)',
    ]);
  });

  it('two GPUs and no lookup at all: says so, not that the store has none', async () => {
    const { lines, log, outDir } = setUp(false);
    expect(await lanesBalance(undefined, environment(2), [], outDir, log, {})).toEqual([]);
    expect(lines).toEqual([
      'kernelgate: 2 GPUs: this run looks up no stored run, so the harness balances its lanes by its estimate',
    ]);
  });

  it('one GPU: no --balance and no line, stored run or not', async () => {
    const { lines, log, lookup, outDir } = setUp(true);
    expect(await lanesBalance(lookup, environment(1), [], outDir, log, {})).toEqual([]);
    // Two GPUs in the machine, one lane: --gpus 1 in kernelgate.yml's harness.args, or one visible.
    expect(await lanesBalance(lookup, environment(2), ['--gpus', '1'], outDir, log, {})).toEqual(
      [],
    );
    expect(
      await lanesBalance(lookup, environment(2), [], outDir, log, { CUDA_VISIBLE_DEVICES: '1' }),
    ).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('counts the lanes as the harness will', () => {
    expect(lanesOf(environment(4), [], {})).toBe(4);
    expect(lanesOf(environment(4), ['--gpus', 'all'], {})).toBe(4);
    expect(lanesOf(environment(4), ['--gpus', '2'], {})).toBe(2);
    expect(lanesOf(environment(4), ['--gpus', '0,3'], {})).toBe(2);
    expect(lanesOf(environment(4), ['--gpus', '1,'], {})).toBe(1);
    expect(lanesOf(environment(4), [], { CUDA_VISIBLE_DEVICES: '0,1,2' })).toBe(3);
    expect(lanesOf(environment(4), ['--gpus', '8'], { CUDA_VISIBLE_DEVICES: '0,1' })).toBe(2);
  });
});
