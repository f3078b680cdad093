import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

function tempFile(name: string, text: string): string {
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
        join(import.meta.dirname, 'fixtures', 'recorded', kind, 'results.json'),
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
      'results.json: cases[3].timing.median_ms must be number (got "fast")',
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
      'cases[0].status must be one of "ok", "fail", "error", "timeout", "skipped" (got "passed")',
    ],
    [
      'a negative sample',
      (d) => (d.cases[1].timing.samples_ms[2] = -1),
      'cases[1].timing.samples_ms[2] must be >= 0 (got -1)',
    ],
    [
      'a misspelled field',
      (d) => (d.cases[0].timing.medain_ms = 1),
      'cases[0].timing.medain_ms is not a known field (known: method, samples_ms, sm_clock_mhz, power_w, median_ms, q1_ms, q3_ms, min_ms, mean_ms, rel_std, median_ci_rel, n_samples, n_discarded_throttled, stop_reason, warmup_ms, l2_flush, input_sets)',
    ],
    [
      'a rel_l2 that is a string',
      (d) => (d.cases[0].correctness.rel_l2 = '3e-4'),
      'cases[0].correctness.rel_l2 must be number or null (got "3e-4")',
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
