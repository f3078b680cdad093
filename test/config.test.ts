import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PEAKS, defaultConfig, loadConfig } from '../src/config/index.js';
import { InputError } from '../src/results/index.js';

const fixtures = join(import.meta.dirname, 'fixtures', 'config');

/** A throwaway repository with the given files (path → content). */
function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-config-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const KERNEL = `name: attention
module: kernels.attention.bench
speed_reference: sdpa_flash
tolerance:
  fp16: { rel_l2: 2.0e-3 }
cases:
  - { dtype: fp16, S: [128, 4096] }
variants:
  - { name: triton_fa2, role: candidate }
  - { name: sdpa_flash, role: reference }
`;

describe('loadConfig', () => {
  it('uses the defaults when there is no kernelgate.yml and no kernels folder', () => {
    const config = loadConfig(repo({}));
    expect(config.configFile).toBeUndefined();
    expect(config.kernels).toEqual([]);
    expect(config.compare).toEqual({
      thresholdPct: 3,
      confidence: 0.99,
      resamples: 2000,
      seed: 1,
      noisePct: {},
      minChangeMs: 0.001,
      paired: {
        thresholdPct: 1,
        minChangeMs: 0.0008,
        enabled: true,
        confirm: true,
        detectPct: 0.5,
        detectMinMs: 1,
      },
    });
    expect(config.policy).toEqual({
      failOnSlower: false,
      failOnMissing: false,
      failOnBuildFailure: true,
      failOnError: true,
      failOnMeasurementError: true,
      failOnSanitizer: true,
    });
    expect(config.correctness).toEqual({ driftFactor: 2, driftFloorRelL2: 1e-4 });
    expect(config.peaks['H100-SXM']).toEqual(DEFAULT_PEAKS['H100-SXM']);
    expect(config.harness).toEqual({ python: 'python3', timeoutS: 300, args: [] });
    expect(config.report).toEqual({ title: 'kernelgate', maxRows: 100 });
  });

  it('defaultConfig reads nothing', () => {
    expect(defaultConfig(fixtures).kernels).toEqual([]);
  });

  it('loads the fixture repository: settings, peaks merged over the defaults, kernels sorted', () => {
    const config = loadConfig(join(fixtures, 'valid'));
    expect(config.kernels.map((k) => k.manifest.name)).toEqual(['attention', 'bsr_gemm', 'gemm']);
    expect(config.kernels[0]?.file).toBe(join('kernels', 'attention', 'kernel.yml'));
    expect(config.compare.noisePct).toEqual({
      'H100-SXM': { gemm: 10, bsr_gemm: 6, 'attention/sdpa_default': 4 },
    });
    expect(config.compare.resamples).toBe(1000);
    expect(config.peaks['H100-SXM']?.tflops).toEqual({
      ...DEFAULT_PEAKS['H100-SXM']?.tflops,
      fp32: 66.9,
    });
    expect(config.peaks['H100-SXM']?.gbps).toBe(3352);
    expect(config.report).toEqual({ title: 'kernelgate (fixture)', maxRows: 50 });
  });

  it("loads the repository's own kernelgate.yml and kernel manifests", () => {
    const config = loadConfig(join(import.meta.dirname, '..'));
    expect(config.configFile).toMatch(/kernelgate\.yml$/);
    expect(config.kernels.map((k) => k.manifest.name)).toContain('attention');
  });

  it('reads compare.paired, field by field over the defaults', () => {
    const root = repo({
      'kernelgate.yml':
        'compare:\n  threshold_pct: 5\n  paired: { threshold_pct: 0.5, enabled: false, confirm: true, detect_pct: 0.25, detect_min_ms: 4 }\n',
    });
    const config = loadConfig(root);
    expect(config.compare.thresholdPct).toBe(5);
    expect(config.compare.paired).toEqual({
      thresholdPct: 0.5,
      minChangeMs: 0.0008,
      enabled: false,
      confirm: true,
      detectPct: 0.25,
      detectMinMs: 4,
    });
    const floor = loadConfig(
      repo({ 'kernelgate.yml': 'compare: { paired: { min_change_ms: 0 } }\n' }),
    );
    expect(floor.compare.paired).toEqual({
      thresholdPct: 1,
      minChangeMs: 0,
      enabled: true,
      confirm: true,
      detectPct: 0.5,
      detectMinMs: 1,
    });
  });

  it('the detection threshold defaults to half the paired threshold, unless it is set', () => {
    const raised = loadConfig(
      repo({ 'kernelgate.yml': 'compare: { paired: { threshold_pct: 100 } }\n' }),
    );
    expect(raised.compare.paired.detectPct).toBe(50);
    const set = loadConfig(
      repo({ 'kernelgate.yml': 'compare: { paired: { threshold_pct: 4, detect_pct: 0 } }\n' }),
    );
    expect(set.compare.paired.detectPct).toBe(0);
  });

  it('accepts an explicit config file, and says so when it is absent', () => {
    const root = repo({ 'ci/kg.yml': 'report: { title: CI }\n' });
    expect(loadConfig(root, { configFile: join(root, 'ci/kg.yml') }).report.title).toBe('CI');
    expect(() => loadConfig(root, { configFile: join(root, 'nope.yml') })).toThrow(
      'nope.yml: no such config file',
    );
  });

  it('gives file:line:col for YAML syntax errors', () => {
    expect(() => loadConfig(join(fixtures, 'yaml-syntax'))).toThrow(
      'kernelgate.yml:2:18: YAML syntax error: Nested mappings are not allowed in compact mappings',
    );
    const root = repo({ 'kernels/attention/kernel.yml': 'name: attention\nvariants: [a, b\n' });
    expect(() => loadConfig(root)).toThrow(
      /^kernels\/attention\/kernel\.yml:\d+:\d+: YAML syntax error: /,
    );
  });

  it("names the file, the field and the bad value: the brief's example", () => {
    expect(() => loadConfig(join(fixtures, 'bad-ladder'))).toThrow(
      'kernels/attention/kernel.yml: tiers.ladder[2].min must be > 0 (got -3)',
    );
  });

  const cases: [string, Record<string, string>, string][] = [
    [
      'a wrong type',
      { 'kernelgate.yml': 'compare:\n  threshold_pct: three\n' },
      'kernelgate.yml: compare.threshold_pct must be number (got "three")',
    ],
    [
      'an unknown policy key',
      { 'kernelgate.yml': 'policy:\n  fail_on_slowr: true\n' },
      'kernelgate.yml: policy.fail_on_slowr is not a known field (known: fail_on_slower, fail_on_missing, fail_on_build_failure, fail_on_error, fail_on_measurement_error, fail_on_sanitizer, fail_on_correctness, fail_on_drift)',
    ],
    [
      'switching correctness failures off',
      { 'kernelgate.yml': 'policy:\n  fail_on_correctness: false\n' },
      'kernelgate.yml: policy.fail_on_correctness cannot be switched off: correctness FAIL and DRIFT always fail the gate (got false)',
    ],
    [
      'switching drift off',
      { 'kernelgate.yml': 'policy:\n  fail_on_drift: false\n' },
      'kernelgate.yml: policy.fail_on_drift cannot be switched off: correctness FAIL and DRIFT always fail the gate (got false)',
    ],
    [
      'a confidence of 1',
      { 'kernelgate.yml': 'compare: { confidence: 1 }\n' },
      'kernelgate.yml: compare.confidence must be < 1 (got 1)',
    ],
    [
      'a negative noise',
      { 'kernelgate.yml': 'compare: { noise_pct: { H100-SXM: { gemm: -1 } } }\n' },
      'kernelgate.yml: compare.noise_pct.H100-SXM.gemm must be >= 0 (got -1)',
    ],
    [
      'a negative paired threshold',
      { 'kernelgate.yml': 'compare:\n  paired:\n    threshold_pct: -0.5\n' },
      'kernelgate.yml: compare.paired.threshold_pct must be >= 0 (got -0.5)',
    ],
    [
      'a paired threshold that is not a number',
      { 'kernelgate.yml': 'compare:\n  paired:\n    threshold_pct: 1%\n' },
      'kernelgate.yml: compare.paired.threshold_pct must be number (got "1%")',
    ],
    [
      'a negative paired floor',
      { 'kernelgate.yml': 'compare: { paired: { min_change_ms: -0.0002 } }\n' },
      'kernelgate.yml: compare.paired.min_change_ms must be >= 0 (got -0.0002)',
    ],
    [
      'a paired switch that is not a boolean',
      { 'kernelgate.yml': 'compare: { paired: { enabled: "yes" } }\n' },
      'kernelgate.yml: compare.paired.enabled must be boolean (got "yes")',
    ],
    [
      'an unknown paired key',
      { 'kernelgate.yml': 'compare: { paired: { threshold: 1 } }\n' },
      'kernelgate.yml: compare.paired.threshold is not a known field (known: threshold_pct, min_change_ms, enabled, detect_pct, detect_min_ms, confirm)',
    ],
    [
      'a paired block that is not a mapping',
      { 'kernelgate.yml': 'compare: { paired: true }\n' },
      'kernelgate.yml: compare.paired must be object (got true)',
    ],
    [
      'a noise key that names no kernel',
      { 'kernelgate.yml': 'compare:\n  noise_pct:\n    H200:\n      "Bad Key": 3\n' },
      'kernelgate.yml: compare.noise_pct.H200 has a key that must match ^[a-z0-9_]+(/[a-z0-9_]+(/.+)?)?$ (got "Bad Key")',
    ],
    [
      'a kernels_dir that does not exist',
      { 'kernelgate.yml': 'kernels_dir: kernelz\n' },
      'kernelgate.yml: kernels_dir must be a folder (got "kernelz", which does not exist)',
    ],
    [
      'a manifest whose name is not its folder',
      { 'kernels/attn/kernel.yml': KERNEL },
      'kernels/attn/kernel.yml: name must equal its folder name "attn" (got "attention")',
    ],
    [
      'a speed_reference that is not a variant',
      {
        'kernels/attention/kernel.yml': KERNEL.replace(
          'speed_reference: sdpa_flash',
          'speed_reference: sdpa',
        ),
      },
      'kernels/attention/kernel.yml: speed_reference must name a variant (one of triton_fa2, sdpa_flash) (got "sdpa")',
    ],
    [
      'a tiers.variant that is not a variant',
      {
        'kernels/attention/kernel.yml':
          KERNEL +
          'tiers:\n  metric: speedup\n  variant: cuda\n  case: { dtype: fp16 }\n  ladder: [{ name: x, min: 2 }]\n',
      },
      'kernels/attention/kernel.yml: tiers.variant must name a variant (one of triton_fa2, sdpa_flash) (got "cuda")',
    ],
    [
      'a tiers.reference that is not a variant',
      {
        'kernels/attention/kernel.yml':
          KERNEL +
          'tiers:\n  metric: speedup\n  reference: sdpa\n  case: { dtype: fp16 }\n  ladder: [{ name: x, min: 0.9 }]\n',
      },
      'kernels/attention/kernel.yml: tiers.reference must name a variant (one of triton_fa2, sdpa_flash) (got "sdpa")',
    ],
    [
      'a rung that needs more than the peak',
      {
        'kernels/attention/kernel.yml':
          KERNEL +
          'tiers:\n  metric: speedup\n  reference_pct_peak: 66\n  case: { dtype: fp16 }\n  ladder: [{ name: x, min: 0.9 }, { name: y, min: 2 }]\n',
      },
      "kernels/attention/kernel.yml: tiers.ladder[1].min asks 2× sdpa_flash, which runs at 66 % of the chip's peak (tiers.reference_pct_peak): it needs 132 % of the peak, unreachable (got 2)",
    ],
    [
      'a reference share above 100 %',
      {
        'kernels/attention/kernel.yml':
          KERNEL +
          'tiers:\n  metric: speedup\n  reference_pct_peak: 120\n  case: { dtype: fp16 }\n  ladder: [{ name: x, min: 0.9 }]\n',
      },
      'kernels/attention/kernel.yml: tiers.reference_pct_peak must be <= 100 (got 120)',
    ],
    [
      'a missing required field',
      { 'kernels/attention/kernel.yml': KERNEL.replace('module: kernels.attention.bench\n', '') },
      'kernels/attention/kernel.yml: module is required',
    ],
    [
      'a bad variant role',
      { 'kernels/attention/kernel.yml': KERNEL.replace('role: candidate', 'role: winner') },
      'kernels/attention/kernel.yml: variants[0].role must be one of "candidate", "reference" (got "winner")',
    ],
    [
      'a case axis of objects',
      { 'kernels/attention/kernel.yml': KERNEL.replace('S: [128, 4096]', 'S: { a: 1 }') },
      'kernels/attention/kernel.yml: cases[0].S has an unsupported form (got {"a":1})',
    ],
  ];

  it.each(cases)(
    'rejects %s with a message naming file, field and value',
    (_what, files, message) => {
      expect(() => loadConfig(repo(files))).toThrow(message);
    },
  );

  it('reports every problem of a file, not only the first', () => {
    const root = repo({
      'kernelgate.yml': 'compare: { threshold_pct: -1, confidence: 2 }\nreport: { max_rows: 0 }\n',
    });
    try {
      loadConfig(root);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).problems).toEqual([
        'kernelgate.yml: compare.threshold_pct must be >= 0 (got -1)',
        'kernelgate.yml: compare.confidence must be < 1 (got 2)',
        'kernelgate.yml: report.max_rows must be >= 1 (got 0)',
      ]);
    }
  });
});
