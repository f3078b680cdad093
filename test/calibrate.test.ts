import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { calibrate, calibrationYaml, writeCalibration } from '../src/judge/index.js';
import { runCli } from '../src/cli/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { loadResults } from '../src/results/index.js';
import { messageOf } from './support/throws.js';

const ROOT = join(import.meta.dirname, '..');
const recorded = (run: string) =>
  loadResults(join(ROOT, 'test/fixtures/recorded', run, 'results.json.gz'));
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

  it('refuses one run, runs of different GPU models, and a GPU the table does not list', () => {
    expect(() => calibrate([push], options)).toThrow(
      'calibrate needs at least two runs of the same code',
    );
    const h100 = structuredClone(push);
    h100.environment.gpu.sku = 'H100-SXM';
    expect(
      messageOf(() => calibrate([push, h100, push], options, ['a.json', 'b.json', 'c.json'])),
    ).toBe(
      'calibrate needs A/A runs of one GPU model (noise figures never cross models); these ran on H200 (a.json, c.json) and H100-SXM (b.json)',
    );
    const odd = structuredClone(push);
    odd.environment.gpu.sku = 'unknown';
    odd.environment.gpu.name = 'NVIDIA Quadro X';
    expect(messageOf(() => calibrate([push, odd], options))).toBe(
      'calibrate needs runs on a GPU model of data/gpus.json, as compare.noise_pct is keyed by it: run 2 ran on "NVIDIA Quadro X", which the table does not list',
    );
  });

  it('writes a noise_pct block kernelgate.yml accepts', () => {
    const yaml = calibrationYaml(
      calibrate([push, withMedian(push, first, 1.1)], options),
      'a test',
    );
    expect(yaml.split('\n').slice(0, 4)).toEqual([
      '  # Calibrated by `kernelgate calibrate` from 2 A/A runs on H200 (a test):',
      `  # ${calibrate([push, push], options).compared} cases compared, 1 moved more than the threshold.`,
      '  noise_pct:',
      '    H200:',
    ]);
    expect(yaml).toContain(`      ${JSON.stringify(key)}: 21\n`);
  });

  it('--write replaces the per-case entries of kernelgate.yml and keeps everything else', async () => {
    // Kept as they are: everything up to the per-case entries, and what follows the block.
    const head = [
      'harness:',
      '  args: [--time-cap-s, "1"]',
      'compare:',
      '  threshold_pct: 3',
      '  # why the noise',
      '  noise_pct:',
      '    H100-SXM:',
      '      "attention/other/dtype=fp16": 30',
      '    H200:',
      '      # kernel-wide, from MEASUREMENT.md',
      '      gemm: 10',
      '      attention/sdpa_flash: 4',
    ];
    const tail = ['policy:', '  fail_on_slower: false', ''];
    const stale = [
      '      # medians 1 / 2 ms: spread 100.0 %',
      '      "attention/old/dtype=fp16": 200',
    ];
    const config = [...head, ...stale, ...tail].join('\n');
    const dir = mkdtempSync(join(tmpdir(), 'kg-calibrate-'));
    const file = join(dir, 'kernelgate.yml');
    writeFileSync(file, config);
    const a = join(dir, 'a.json');
    const b = join(dir, 'b.json');
    writeFileSync(a, JSON.stringify(push));
    writeFileSync(b, JSON.stringify(withMedian(push, first, 1.1)));
    let stderr = '';
    const status = await runCli(
      ['calibrate', a, b, '--write', file, '--provenance', 'two test runs'],
      { stdout: () => {}, stderr: (t) => (stderr += t), cwd: ROOT },
    );
    expect(status).toBe(0);
    const compared = calibrate([push, push], options).compared;
    expect(stderr).toContain(
      `${file}: compare.noise_pct.H200 now has 1 per-case entries (${compared} cases compared)\n`,
    );
    const median = push.cases[first]!.timing!.median_ms;
    expect(readFileSync(file, 'utf8')).toBe(
      [
        ...head,
        '      # Calibrated by `kernelgate calibrate` from 2 A/A runs on H200 (two test runs):',
        `      # ${compared} cases compared, 1 moved more than the threshold.`,
        `      # medians ${median.toPrecision(3)} / ${(median * 1.1).toPrecision(3)} ms: spread 10.0 %`,
        `      ${JSON.stringify(key)}: 21`,
        ...tail,
      ].join('\n'),
    );
  });

  it('--write names the file when it is not YAML', () => {
    expect(() =>
      writeCalibration('compare: [', calibrate([push, push], options), 'x', 'kernelgate.yml'),
    ).toThrow(/^kernelgate\.yml: not valid YAML: /);
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
