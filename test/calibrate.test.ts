import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { calibrate, calibrationYaml } from '../src/calibrate.js';
import { runCli } from '../src/cli.js';
import type { KernelgateResults } from '../src/results-types.js';
import { loadResults } from '../src/results.js';

const ROOT = join(import.meta.dirname, '..');
const recorded = (run: string) =>
  loadResults(join(ROOT, 'test/fixtures/recorded', run, 'results.json'));
const options = { margin: 2, floorPct: 3, exclude: [] as string[] };

function withMedian(doc: KernelgateResults, index: number, factor: number, method?: string) {
  const copy = structuredClone(doc);
  const timing = copy.cases[index]!.timing!;
  timing.samples_ms = timing.samples_ms.map((x) => x * factor);
  timing.median_ms *= factor;
  if (method !== undefined) timing.method = method;
  return copy;
}

describe('calibrate', () => {
  const push = recorded('push');
  const first = push.cases.findIndex((c) => c.timing !== undefined);
  const key = `${push.cases[first]!.kernel}/${push.cases[first]!.variant}/${push.cases[first]!.case}`;

  it('gives a case that moved between runs margin × its spread, and none to a steady one', () => {
    const moved = calibrate([push, withMedian(push, first, 1.1)], options);
    expect(moved.entries).toEqual([
      {
        key,
        medianMs: [
          push.cases[first]!.timing!.median_ms,
          push.cases[first]!.timing!.median_ms * 1.1,
        ],
        spreadPct: expect.closeTo(10, 6),
        noisePct: 21,
      },
    ]);
    expect(calibrate([push, withMedian(push, first, 1.02)], options).entries).toEqual([]);
  });

  it('leaves out excluded variants and cases timed by different methods, saying why', () => {
    const other = withMedian(push, first, 1.5, 'events, graph(40 launches)');
    const result = calibrate([push, other], options);
    expect(result.entries).toEqual([]);
    expect(result.skipped[0]).toEqual({
      key,
      reason: `timed differently across runs (${push.cases[first]!.timing!.method} / events, graph(N launches))`,
    });
    const excluded = calibrate([push, withMedian(push, first, 1.5)], {
      ...options,
      exclude: [`${push.cases[first]!.kernel}/${push.cases[first]!.variant}`],
    });
    expect(excluded.entries).toEqual([]);
  });

  it('refuses one run, and runs from different GPUs', () => {
    expect(() => calibrate([push], options)).toThrow(
      'calibrate needs at least two runs of the same code',
    );
    const h100 = structuredClone(push);
    h100.environment.gpu.sku = 'H100-SXM';
    expect(() => calibrate([push, h100], options)).toThrow(
      `calibrate needs runs on one GPU SKU; these ran on ${push.environment.gpu.sku}, H100-SXM`,
    );
  });

  it('writes a noise_pct block kernelgate.yml accepts', () => {
    const yaml = calibrationYaml(
      calibrate([push, withMedian(push, first, 1.1)], options),
      'a test',
    );
    expect(yaml.split('\n').slice(0, 3)).toEqual([
      '  # Calibrated by `kernelgate calibrate` from 2 A/A runs (a test):',
      `  # ${calibrate([push, push], options).compared} cases compared, 1 moved more than the threshold.`,
      '  noise_pct:',
    ]);
    expect(yaml).toContain(`    ${JSON.stringify(key)}: 21\n`);
  });

  it('the command line names a bad margin', async () => {
    let stderr = '';
    const status = await runCli(['calibrate', 'a.json', 'b.json', '--margin', 'wide'], {
      stdout: () => {},
      stderr: (t) => (stderr += t),
      cwd: ROOT,
    });
    expect(status).toBe(2);
    expect(stderr.split('\n')[0]).toBe(
      'kernelgate calibrate: --margin must be a positive number (got "wide")',
    );
  });
});
