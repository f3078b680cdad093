// `kernelgate export`: Bencher Metric Format and github-action-benchmark's custom JSON, from
// recorded GPU runs, checked against BMF's published JSON schema and the documented custom format.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../src/cli/index.js';
import { failedCases, toBmf, toGabBigger, toGabSmaller } from '../src/history/export.js';
import { loadResults, newAjv } from '../src/results/index.js';

const RUNS = ['push', 'pr', 'nightly', 'slowed', 'broken', 'paired-slow2-h100'];
const schema = (name: string) => {
  const s = JSON.parse(readFileSync(`test/fixtures/formats/${name}.schema.json`, 'utf8'));
  delete s.$schema; // draft-07, ajv's default
  delete s.$comment;
  return newAjv().compile(s);
};
const bmfValid = schema('bmf');
const gabValid = schema('gab-custom');
const FA2 = 'attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

function io(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t), cwd: process.cwd() };
}

describe('export', () => {
  it('BMF: latency in ns with the median interval, calls/s as throughput, FLOP/s and bytes/s as measures of their own (exact for one case)', () => {
    const bmf = toBmf(loadResults('test/fixtures/recorded/push/results.json.gz'));
    // median 30.584656715… ms of 34 samples; 99 % interval: the 10th and 25th smallest samples,
    // 29.178752899… and 30.934335708… ms; work 1.3194139533312e13 FLOP.
    expect(bmf[FA2]).toEqual({
      latency: { value: 30584700, lower_value: 29178800, upper_value: 30934300 },
      // Bencher's throughput is operations per second: here calls of the kernel (issue 31)
      throughput: { value: 32.6961, lower_value: 32.3265, upper_value: 34.2715 },
      'flop-rate': { value: 431397e9, lower_value: 426521e9, upper_value: 452183e9 },
      'byte-rate': expect.objectContaining({}) as unknown,
    });
    // the copy does no floating-point work: no FLOP rate
    expect(Object.keys(bmf['gemm/torch_copy/op=copy,dtype=fp32,MiB=1024']!)).toEqual([
      'latency',
      'throughput',
      'byte-rate',
    ]);
  });

  it('github-action-benchmark: ms smaller is better, TFLOP/s and GB/s bigger is better', () => {
    const results = loadResults('test/fixtures/recorded/push/results.json.gz');
    const smaller = toGabSmaller(results);
    expect(smaller.find((e) => e.name === FA2)).toEqual({
      name: FA2,
      value: 30.5847,
      unit: 'ms',
      range: '± 1.41',
      extra:
        '34 samples, median 30.5847 ms, 99 % interval 29.1788 … 30.9343 ms\n' +
        'method: events, interleaved\nGPU: H200, commit 329565340326',
    });
    const bigger = toGabBigger(results);
    expect(bigger.find((e) => e.name === FA2)).toMatchObject({
      value: 431.397,
      unit: 'TFLOP/s',
      range: '± 20.8',
    });
    expect(bigger.find((e) => e.name.startsWith('gemm/torch_copy/'))).toMatchObject({
      unit: 'GB/s',
      value: 4144.57,
    });
  });

  it('every export of the recorded runs is valid, with unique names and finite values', () => {
    for (const run of RUNS) {
      const results = loadResults(`test/fixtures/recorded/${run}/results.json.gz`);
      const bmf = toBmf(results);
      expect(bmfValid(bmf), `${run} bmf: ${JSON.stringify(bmfValid.errors)}`).toBe(true);
      for (const [name, measures] of Object.entries(bmf)) {
        expect(name.length).toBeLessThanOrEqual(1024);
        for (const m of Object.values(measures)) {
          expect(Number.isFinite(m.value) && m.value > 0).toBe(true);
          expect(m.lower_value! <= m.value && m.value <= m.upper_value!).toBe(true);
        }
      }
      for (const entries of [toGabSmaller(results), toGabBigger(results)]) {
        expect(gabValid(entries), `${run} gab: ${JSON.stringify(gabValid.errors)}`).toBe(true);
        expect(new Set(entries.map((e) => e.name)).size).toBe(entries.length);
        expect(entries.every((e) => Number.isFinite(e.value) && e.value > 0)).toBe(true);
      }
    }
  });

  it('exports a case whose result was wrong as a failure, with no time (issue 31)', () => {
    const broken = loadResults('test/fixtures/recorded/broken/results.json.gz');
    const wrong = broken.cases.filter(
      (c) => c.correctness?.status === 'FAIL' || c.status === 'fail',
    );
    expect(wrong.length).toBe(26);
    const bmf = toBmf(broken);
    for (const c of wrong) {
      expect(bmf[`${c.kernel}/${c.variant}/${c.case}`]).toEqual({
        failure: { value: 1, lower_value: 1, upper_value: 1 },
      });
    }
    const gab = new Set(toGabSmaller(broken).map((e) => e.name));
    for (const c of wrong) expect(gab.has(`${c.kernel}/${c.variant}/${c.case}`)).toBe(false);
  });

  it('kernelgate export names the failed cases a gab format leaves out (issue 31)', async () => {
    const t = io();
    const status = await runCli(
      [
        'export',
        '--results',
        'test/fixtures/recorded/broken/results.json.gz',
        '--format',
        'gab-smaller',
      ],
      t,
    );
    expect(status).toBe(0);
    const broken = loadResults('test/fixtures/recorded/broken/results.json.gz');
    const n = failedCases(broken).length;
    expect(t.err.join('')).toMatch(
      new RegExp(
        `^test/fixtures/recorded/broken/results\\.json\\.gz: ${n} failed case\\(s\\) left out of gab-smaller, which has no way to say a case failed: [^\\n]+ \\(wrong result\\)`,
      ),
    );
  });

  it('kernelgate export writes the file and says how many benchmarks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-export-'));
    const t = io();
    const out = join(dir, 'bmf.json');
    const status = await runCli(
      [
        'export',
        '--results',
        'test/fixtures/recorded/push/results.json.gz',
        '--format',
        'bmf',
        '--out',
        out,
      ],
      t,
    );
    expect(status).toBe(0);
    expect(t.err.join('')).toBe(`${out}: 216 benchmarks (bmf)\n`);
    expect(bmfValid(JSON.parse(readFileSync(out, 'utf8')))).toBe(true);

    const bad = io();
    expect(
      await runCli(
        ['export', '--results', 'test/fixtures/recorded/push/results.json.gz', '--format', 'csv'],
        bad,
      ),
    ).toBe(2);
    expect(bad.err.join('')).toBe(
      'kernelgate export: --format must be one of bmf, gab-smaller, gab-bigger (got "csv")\n',
    );
  });
});
