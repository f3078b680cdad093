import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputError, loadResults, readablePath, validateResults } from '../src/results/index.js';

const dir = join(import.meta.dirname, 'fixtures', 'results');
const FIXTURES = [
  'baseline.json',
  'aa-current.json',
  'regression.json',
  'correctness-fail.json',
  'drift.json',
  'above-peak.json',
  'build-expectation.json',
  'seed001-ladder.json',
];

function baseline(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, 'baseline.json'), 'utf8')) as Record<string, unknown>;
}

function tempFile(name: string, text: string | Buffer): string {
  const path = join(mkdtempSync(join(tmpdir(), 'kg-results-')), name);
  writeFileSync(path, text);
  return path;
}

describe('loadResults', () => {
  it.each(FIXTURES)('accepts the synthetic fixture %s', (name) => {
    const results = loadResults(join(dir, name));
    expect(results.schema).toBe('kernelgate/results@1');
    expect(results.run.synthetic).toBe(true);
    expect(results.cases.length).toBeGreaterThan(0);
  });

  it.each(['push', 'pr', 'main-1355', 'broken', 'slowed', 'nightly'])(
    'accepts the recorded GPU run %s',
    (kind) => {
      const results = loadResults(
        join(import.meta.dirname, 'fixtures', 'recorded', kind, 'results.json.gz'),
      );
      expect(results.run.synthetic).toBeUndefined();
      expect(results.environment.gpu.name).toBe('NVIDIA H200');
      expect(results.cases.length).toBe(217);
    },
  );

  it("names the file, the field path and the bad value: the brief's example", () => {
    const doc = baseline() as { cases: { timing: { median_ms: unknown } }[] };
    (doc.cases[3] as { timing: { median_ms: unknown } }).timing.median_ms = 'fast';
    expect(() => validateResults(doc, 'results.json')).toThrow(
      'results.json: cases[3].timing.median_ms (attention/sdpa_cudnn dtype=fp16,B=16,H=96,S=4096,D=128,causal=false) must be number (got "fast")',
    );
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- mutators poke into untyped JSON
  const broken: [string, (doc: any) => void, string][] = [
    [
      'a wrong schema version',
      (d) => (d.schema = 'kernelgate/results@2'),
      'schema must be "kernelgate/results@1" (got "kernelgate/results@2")',
    ],
    ['a missing run', (d) => delete d.run, 'run is required'],
    [
      'a bad case status',
      (d) => (d.cases[0].status = 'passed'),
      'cases[0].status (attention/triton_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=false) must be one of "ok", "fail", "error", "timeout", "skipped" (got "passed")',
    ],
    [
      'a negative sample',
      (d) => (d.cases[1].timing.samples_ms[2] = -1),
      'cases[1].timing.samples_ms[2] (attention/cuda_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=false) must be >= 0.000001 (got -1)',
    ],
    [
      'a misspelled field',
      (d) => (d.cases[0].timing.medain_ms = 1),
      'cases[0].timing.medain_ms (attention/triton_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=false) is not a known field (known: method, samples_ms, sm_clock_mhz, power_w, median_ms, q1_ms, q3_ms, min_ms, mean_ms, rel_std, median_ci_rel, median_ci_lo_ms, median_ci_hi_ms, median_ci_confidence, balanced_ms, after, balanced_groups, n_samples, n_discarded_throttled, stop_reason, samples_span, warmup_ms, l2_flush, input_sets, l2_state)',
    ],
    [
      'a rel_l2 that is a string',
      (d) => (d.cases[0].correctness.rel_l2 = '3e-4'),
      'cases[0].correctness.rel_l2 (attention/triton_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=false) must be number or null (got "3e-4")',
    ],
    [
      'a bad diagnostic code',
      (d) => (d.diagnostics[0].code = 'GPU Busy'),
      'diagnostics[0].code must match ^[a-z0-9_.-]+$ (got "GPU Busy")',
    ],
    [
      'a library version that is a number',
      (d) => (d.environment.libraries.torch = 2.11),
      'environment.libraries.torch must be string (got 2.11)',
    ],
  ];

  it.each(broken)('rejects %s', (_what, mutate, message) => {
    const doc = baseline();
    mutate(doc);
    expect(() => validateResults(doc, 'r.json')).toThrow(`r.json: ${message}`);
  });

  // Issue 26: times no call can take were judged (0 ms and 1e-300 ms FASTER, 1e308 ms AMBIGUOUS).
  const C3 = 'attention/sdpa_cudnn dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- mutators poke into untyped JSON
  const impossible: [string, (doc: any) => void, string][] = [
    [
      'a median of 0 ms',
      (d) => (d.cases[3].timing.median_ms = 0),
      `cases[3].timing.median_ms (${C3}) must be >= 0.000001 (got 0)`,
    ],
    [
      'a median of 1e-300 ms',
      (d) => (d.cases[3].timing.median_ms = 1e-300),
      `cases[3].timing.median_ms (${C3}) must be >= 0.000001 (got 1e-300)`,
    ],
    [
      'a median of 1e308 ms',
      (d) => (d.cases[3].timing.median_ms = 1e308),
      `cases[3].timing.median_ms (${C3}) must be <= 3600000 (got 1e+308)`,
    ],
    [
      'a sample of 0 ms',
      (d) => (d.cases[3].timing.samples_ms[4] = 0),
      `cases[3].timing.samples_ms[4] (${C3}) must be >= 0.000001 (got 0)`,
    ],
    [
      'a sample of more than an hour',
      (d) => (d.cases[3].timing.samples_ms[0] = 3_600_001),
      `cases[3].timing.samples_ms[0] (${C3}) must be <= 3600000 (got 3600001)`,
    ],
    [
      'an infinite sample',
      (d) => (d.cases[3].timing.samples_ms[1] = Infinity),
      `cases[3].timing.samples_ms[1] (${C3}) must be a finite number (got Infinity)`,
    ],
    [
      'a sample that is not a number',
      (d) => (d.cases[3].timing.samples_ms[1] = NaN),
      `cases[3].timing.samples_ms[1] (${C3}) must be a finite number (got NaN)`,
    ],
    [
      'a paired log ratio of 1e308',
      (d) =>
        (d.cases[3].paired = {
          base_status: 'ok',
          n_pairs: 2,
          log_ratios: [0.01, 1e308],
          stop_reason: 'decided',
        }),
      `cases[3].paired.log_ratios[1] (${C3}) must be <= 30 (got 1e+308)`,
    ],
  ];

  it.each(impossible)(
    'refuses %s, naming the file, the case, the field and the value',
    (_w, mutate, message) => {
      const doc = baseline();
      mutate(doc);
      expect(() => validateResults(doc, 'r.json')).toThrow(`r.json: ${message}`);
    },
  );

  it('refuses a sample the JSON text makes infinite (1e999)', () => {
    const text = readFileSync(join(dir, 'baseline.json'), 'utf8').replace('40.1707', '1e999');
    const path = tempFile('results.json', text);
    expect(() => loadResults(path)).toThrow(
      `${path}: cases[0].timing.samples_ms[0] (attention/triton_fa2 dtype=fp16,B=16,H=96,S=4096,D=128,causal=false) must be a finite number (got Infinity)`,
    );
  });

  it('reports every error, the first five in the message and a count of the rest', () => {
    const doc = baseline() as { cases: { status: string }[] };
    for (let i = 0; i < 8; i++) (doc.cases[i] as { status: string }).status = 'bad';
    try {
      validateResults(doc, 'r.json');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      const e = err as InputError;
      expect(e.problems).toHaveLength(8);
      const lines = e.message.split('\n');
      expect(lines).toHaveLength(6);
      expect(lines[5]).toBe('r.json: … and 3 more problems');
    }
  });

  it('says when the file is not JSON, with the position', () => {
    const path = tempFile('results.json', '{\n  "schema": "kernelgate/results@1",\n  "run": {,\n}');
    // V8's own wording after the prefix varies between Node versions.
    expect(() => loadResults(path)).toThrow(
      `${path}:3:11: not valid JSON: Expected property name or '}' in JSON at position 48`,
    );
  });

  describe('a gzipped results file', () => {
    const plain = readFileSync(join(dir, 'baseline.json'));
    const gz = gzipSync(plain, { level: 9 });

    it.each(['baseline.json.gz', 'baseline.json'])(
      'reads the same as the plain file, known by its bytes whatever its name (%s)',
      (name) => {
        expect(gz.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
        expect(loadResults(tempFile(name, gz))).toEqual(loadResults(join(dir, 'baseline.json')));
      },
    );

    it('names the gzipped file in a problem of its document', () => {
      const doc = baseline();
      doc['schema'] = 'kernelgate/results@9';
      const path = tempFile('r.json.gz', gzipSync(JSON.stringify(doc)));
      expect(() => loadResults(path)).toThrow(
        new InputError(
          `${path}: schema must be "kernelgate/results@1" (got "kernelgate/results@9")`,
        ),
      );
    });

    it.each([
      ['cut short', gz.subarray(0, gz.length - 100), 'unexpected end of file'],
      [
        'with a byte of its data changed',
        Buffer.concat([
          gz.subarray(0, -8),
          Buffer.from(gz.subarray(-8).map((b, i) => (i === 0 ? b ^ 0xff : b))),
        ]),
        'incorrect data check',
      ],
    ])('says when it does not gunzip (%s), naming the file', (_what, bytes, why) => {
      const path = tempFile('results.json.gz', bytes);
      expect(() => loadResults(path)).toThrow(
        new InputError(`${path}: a gzip file (it starts with 1f 8b) that does not gunzip: ${why}`),
      );
    });
  });

  it('says when the file is neither JSON nor gzip, with its first bytes (a zstd file)', () => {
    const zstd = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from('{}')]);
    const path = tempFile('results.json.zst', zstd);
    expect(() => loadResults(path)).toThrow(
      new InputError(
        `${path}: neither JSON nor gzip (it starts with the bytes 28 b5 2f fd): a results file is a JSON document, plain or gzipped`,
      ),
    );
  });

  it('says when the file does not exist', () => {
    expect(() => loadResults('/nonexistent/results.json')).toThrow(
      '/nonexistent/results.json: no such results file',
    );
  });
});

describe('readablePath', () => {
  it.each([
    ['/cases/3/timing/median_ms', undefined, 'cases[3].timing.median_ms'],
    ['', 'run', 'run'],
    ['/environment/libraries', 'cuda-python', 'environment.libraries.cuda-python'],
    ['/params', 'a b', 'params["a b"]'],
    ['/x~1y', undefined, '["x/y"]'],
  ])('%s + %s → %s', (path, extra, want) => {
    expect(readablePath(path, extra)).toBe(want);
  });
});
