// Adapters (src/adapters): the one list, each parser on a real output of its tool, the
// `benchmarks:` section of kernelgate.yml with its exact error messages, and what the report says
// about a tool's limits per case.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliIn } from './support/cli-io.js';
import {
  adapterFormats,
  adapterList,
  adapterFor,
  FILE_FORMATS,
  fileAdapterFor,
} from '../src/formats/index.js';
import { splitRunName } from '../src/formats/gbench.js';
import { adaptFile, resultsOf, type AdaptedKernel } from '../src/adapters/run.js';
import { parseFormula } from '../src/config/formula.js';
import { runCli } from '../src/cli/index.js';
import { defaultConfig, loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { InputError, validateResults } from '../src/results/index.js';
import configSchema from '../schema/config.schema.json' with { type: 'json' };

const fixtures = join(import.meta.dirname, 'fixtures', 'adapters');
const GBENCH = join(fixtures, 'gbench', 'bench.json');
const PYTEST = join(fixtures, 'pytest-benchmark', 'bench.json');
const NVBENCH = join(fixtures, 'nvbench', 'summary', 'bench.json');
const NVBENCH_BIN = join(fixtures, 'nvbench', 'jsonbin', 'bench.json');

function adapt(format: string, file: string, kernel = format.replace(/-/g, '_')): AdaptedKernel {
  const adapter = fileAdapterFor(format);
  if (!adapter) throw new Error(`no file adapter ${format}`);
  return adaptFile(adapter, file, { kernel, shown: file.slice(fixtures.length + 1) });
}

function byKey(k: AdaptedKernel) {
  return new Map(k.cases.map((c) => [`${c.variant} ${c.case}`, c]));
}

/** A throwaway repository with the given files (path → content). */
function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-adapters-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/**
 * The formats as kernelgate.yml's message lists them: the list's, whatever it holds, so a new
 * format changes no message here ("gbench", "pytest-benchmark", "nvbench", … "command").
 */
const QUOTED_FORMATS = adapterFormats()
  .map((f) => JSON.stringify(f))
  .join(', ');

describe('the adapter list', () => {
  it('names each format once, every one with its capabilities declared', () => {
    // The list's own order (test/formats.test.ts: each name once, nowhere else in src/).
    expect(adapterFormats().slice(0, 3)).toEqual(['gbench', 'pytest-benchmark', 'nvbench']);
    expect(adapterFormats().at(-1)).toBe('command');
    for (const a of adapterList()) {
      expect(adapterFor(a.format)).toBe(a);
      expect(a.capabilities.notes.samples.length).toBeGreaterThan(20);
      expect(a.capabilities.notes.work.length).toBeGreaterThan(20);
      expect(a.capabilities.notes.correctness.length).toBeGreaterThan(20);
    }
    expect(fileAdapterFor('command')).toBeUndefined();
  });

  it('the usage text names exactly the formats of the list', async () => {
    const help = async (command: string) => {
      let out = '';
      await runCli([command, '--help'], { stdout: (t) => (out += t), stderr: () => {}, cwd: '.' });
      return out;
    };
    const names = (text: string | undefined) => text?.split(/, | or /);
    const files = adapterList().filter((a) => a.kind === 'file');
    expect(names(/^ {2}--format FORMAT +(.+)$/m.exec(await help('adapt'))?.[1])).toEqual(
      files.map((a) => a.format),
    );
    expect(names(/benchmarks: section \((.+)\)/.exec(await help('bench'))?.[1])).toEqual(
      adapterFormats(),
    );
  });

  it('docs/adapters.md points to `kernelgate adapt --formats` instead of a table of its own', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', 'docs', 'adapters.md'), 'utf8');
    expect(doc).toContain('kernelgate adapt --formats');
    expect(doc).not.toContain('| format | tool, how to produce its output |');
  });

  it('the config schema leaves the format to the list (no second enum to keep in step)', () => {
    const item = configSchema.properties.benchmarks.items.properties.format as Record<
      string,
      unknown
    >;
    expect(item.enum).toBeUndefined();
  });
});

describe('gbench: Google Benchmark JSON (recorded with Debian libbenchmark 1.7.1)', () => {
  const k = adapt('gbench', GBENCH);
  const cases = byKey(k);

  it('one case per instance, named args as params, settings and clocks left out of the case', () => {
    expect([...cases.keys()]).toEqual([
      'BM_copy bytes=4096',
      'BM_copy bytes=65536',
      'BM_sum n=1024',
      'BM_sum n=16384',
      'BM_needs_gpu n=1024',
    ]);
    expect(splitRunName('BM_x/8/threads:2/iterations:10/real_time')).toEqual({
      variant: 'BM_x',
      params: { arg0: 8, threads: 2 },
      clock: 'real_time',
    });
  });

  it('the repetitions are the samples; the aggregates are not', () => {
    const copy = cases.get('BM_copy bytes=4096');
    expect(copy?.status).toBe('ok');
    expect(copy?.timing?.samples_ms).toHaveLength(8);
    expect(copy?.timing?.method).toBe('gbench CPU time per iteration (one sample per repetition)');
    expect(cases.get('BM_sum n=1024')?.timing?.method).toBe(
      'gbench real time per iteration (one sample per repetition)',
    );
    const raw = JSON.parse(readFileSync(GBENCH, 'utf8')) as {
      benchmarks: { run_name: string; run_type: string; cpu_time: number }[];
    };
    const reps = raw.benchmarks.filter(
      (b) => b.run_type === 'iteration' && b.run_name === 'BM_copy/bytes:4096/min_time:0.010',
    );
    expect(copy?.timing?.samples_ms).toEqual(reps.map((r) => r.cpu_time * 1e-6));
  });

  it("work from the counters, and from SetBytesProcessed's rate (bytes come back exact)", () => {
    expect(cases.get('BM_sum n=16384')?.work).toEqual({
      flops: 16384,
      bytes: 65536,
      note: 'per iteration, from the benchmark counters',
    });
    // SetBytesProcessed(2 × 4096) per iteration: only bytes are known, so a rate, not work
    const copy = cases.get('BM_copy bytes=4096');
    expect(copy?.work).toBeUndefined();
    expect(copy?.throughput?.gbps).toBeCloseTo(8192 / (copy?.timing?.median_ms ?? 1) / 1e6, 6);
  });

  it('an error of the benchmark is an error case', () => {
    expect(cases.get('BM_needs_gpu n=1024')).toMatchObject({
      status: 'error',
      reason: 'no CUDA device',
    });
  });

  it('records what the tool gave: raw samples, work, no correctness check', () => {
    expect(k.info.adapter).toEqual({
      format: 'gbench',
      tool: 'Google Benchmark (library built as debug)',
      samples: 'raw',
      work: true,
      correctness: 'none',
      paired: false,
    });
    expect(k.info.variants.map((v) => v.name)).toEqual(['BM_copy', 'BM_sum', 'BM_needs_gpu']);
  });
});

describe('pytest-benchmark JSON (recorded with pytest-benchmark 5.3.0, --benchmark-save-data)', () => {
  const k = adapt('pytest-benchmark', PYTEST);
  const cases = byKey(k);

  it('one case per test: the function the variant, the parametrize arguments the case', () => {
    expect([...cases.keys()]).toEqual([
      'test_sum n=256',
      'test_sum n=4096',
      'test_dot n=256',
      'test_dot n=4096',
    ]);
    expect(k.info.variants.map((v) => v.name)).toEqual(['test_sum', 'test_dot']);
  });

  it("every round is a sample; extra_info's flops and bytes are the work", () => {
    const raw = JSON.parse(readFileSync(PYTEST, 'utf8')) as {
      benchmarks: { stats: { data: number[]; rounds: number } }[];
    };
    const dot = cases.get('test_dot n=4096');
    expect(dot?.timing?.samples_ms).toEqual(raw.benchmarks[3]?.stats.data.map((s) => s * 1e3));
    expect(dot?.timing?.n_samples).toBe(raw.benchmarks[3]?.stats.rounds);
    expect(dot?.work).toEqual({
      flops: 8192,
      bytes: 65536,
      note: "per call, from the test's extra_info",
    });
    expect(k.info.adapter).toMatchObject({ samples: 'raw', correctness: 'none', work: true });
    expect(k.info.adapter?.tool).toBe('pytest-benchmark 5.3.0');
  });

  it('without --benchmark-save-data: the statistics only, and a note that says how to get samples', () => {
    const raw = JSON.parse(readFileSync(PYTEST, 'utf8')) as {
      benchmarks: { stats: Record<string, unknown> }[];
    };
    for (const b of raw.benchmarks) delete b.stats.data;
    const root = repo({ 'out.json': JSON.stringify(raw) });
    const s = adapt('pytest-benchmark', join(root, 'out.json'));
    const c = s.cases[0];
    expect(c?.timing?.samples_ms).toEqual([]);
    expect(c?.timing?.median_ms).toBeCloseTo(
      ((raw.benchmarks[0]?.stats.median as number) ?? 0) * 1e3,
      9,
    );
    expect(s.info.adapter?.samples).toBe('summary');
    expect(s.diagnostics[0]?.fix).toBe(
      'run pytest with --benchmark-save-data so the JSON keeps every round',
    );
  });
});

describe('nvbench JSON (a synthetic nvbench 0.1-style output of two GPUs: make_jsonbin.py)', () => {
  const k = adapt('nvbench', NVBENCH);
  const cases = byKey(k);

  it('states × axes become cases; the states of the second GPU are left out, with a warning', () => {
    expect([...cases.keys()]).toEqual([
      'simple default',
      'copy_sweep BlockSize=64,NumBlocks=64',
      'copy_sweep BlockSize=256,NumBlocks=64',
    ]);
    expect(k.diagnostics.map((d) => d.code)).toEqual([
      'adapter.nvbench.other_devices',
      'adapter.nvbench.no_samples',
    ]);
    expect(k.environment?.gpu).toEqual({
      name: 'NVIDIA H100 80GB HBM3',
      sku: 'H100-SXM',
      count: 2,
      compute_capability: '9.0',
      sm_count: 132,
      memory_bytes: 84929216512,
      l2_bytes: 52428800,
    });
  });

  it('summaries only (nvbench 0.1 writes the mean and its noise): said in the method, no samples', () => {
    const c = cases.get('copy_sweep BlockSize=64,NumBlocks=64');
    expect(c?.timing).toEqual({
      method:
        "nvbench cold GPU time (CUDA events), summary only (median_ms is nvbench's mean: it reports no median)",
      samples_ms: [],
      median_ms: 4,
      mean_ms: 4,
      rel_std: 0.0015,
      n_samples: 90,
      stop_reason: 'max_samples',
    });
    // bytes = nvbench's bandwidth × its mean time: 512 MiB, exactly
    expect(c?.throughput?.gbps).toBeCloseTo(536870912 / 4 / 1e6, 6);
    expect(k.info.adapter).toMatchObject({ samples: 'summary', work: true, correctness: 'none' });
    expect(k.info.adapter?.tool).toBe('nvbench 0.1.0');
  });

  it('--jsonbin: the float32 sample files are the samples; skipped states and unknown noise kept as such', () => {
    const bin = byKey(adapt('nvbench', NVBENCH_BIN));
    const gemm = bin.get('gemm M=4096,dtype=fp16');
    expect(gemm?.timing?.samples_ms).toHaveLength(40);
    expect(gemm?.timing?.method).toBe('nvbench cold GPU time (CUDA events), one sample per launch');
    expect(gemm?.timing?.median_ms).toBeCloseTo(0.29, 1);
    expect(bin.get('gemm M=8192,dtype=fp8')).toMatchObject({
      status: 'skipped',
      reason: 'fp8 needs sm_89 or newer',
    });
    const copy = bin.get('copy Elements=67108864');
    expect(copy?.timing?.samples_ms).toEqual([]);
    expect(copy?.timing?.rel_std).toBeUndefined();
    expect(copy?.timing?.q1_ms).toBeDefined();
    expect(copy?.timing?.method).toBe('nvbench cold GPU time (CUDA events), summary only');
  });

  it('a sample file that is gone: judged from the summaries, with a warning naming the file', () => {
    const text = readFileSync(NVBENCH_BIN, 'utf8');
    const root = repo({ 'bench.json': text });
    const k2 = adapt('nvbench', join(root, 'bench.json'));
    expect(k2.cases.find((c) => c.case === 'M=4096,dtype=fp16')?.timing?.samples_ms).toEqual([]);
    expect(k2.diagnostics[0]?.message).toMatch(
      /^benchmarks\[0\]\.states\[0\]: its sample file bench\.json-bin\/0\.bin cannot be read \(ENOENT/,
    );
    expect(k2.info.adapter?.samples).toBe('summary');
  });
});

describe('a bad tool output names the file, the field and the value', () => {
  const cases: [string, string, string][] = [
    ['gbench', '{"benchmarks": {}}', 'bad.json: benchmarks must be array (got {})'],
    [
      'gbench',
      '{"benchmarks": [{"run_name": "BM_x", "run_type": "iteration", "time_unit": "ns", "cpu_time": "fast"}]}',
      'bad.json: benchmarks[0].cpu_time must be number (got "fast")',
    ],
    [
      'gbench',
      '{"benchmarks": [{"run_name": "BM_x", "run_type": "iteration", "time_unit": "min", "cpu_time": 1}]}',
      'bad.json: benchmarks[0].time_unit must be one of ns, us, ms, s (got "min")',
    ],
    [
      'pytest-benchmark',
      '{"benchmarks": [{"name": "test_x", "stats": {"median": 1}}]}',
      'bad.json: benchmarks[0].stats.mean must be number (got nothing)',
    ],
    [
      'nvbench',
      '{"benchmarks": [{"states": []}]}',
      'bad.json: benchmarks[0].name must be string (got nothing)',
    ],
    ['nvbench', '[1, 2', 'bad.json:1:6: not valid JSON'],
  ];
  it.each(cases)('%s: %s', (format, text, message) => {
    const root = repo({ 'bad.json': text });
    const adapter = fileAdapterFor(format);
    expect(
      () =>
        adapter && adaptFile(adapter, join(root, 'bad.json'), { kernel: 'k', shown: 'bad.json' }),
    ).toThrow(message);
  });
});

describe('work formulas', () => {
  it('arithmetic over parameters, nothing else', () => {
    const f = parseFormula('2*M*N*K + 4 * (M*N) ** 1');
    expect(f.names).toEqual(['M', 'N', 'K']);
    expect(f.evaluate({ M: 2, N: 3, K: '4' })).toBe(2 * 2 * 3 * 4 + 4 * 6);
    expect(() => parseFormula('2*M; rm -rf /')).toThrow('unexpected ";"');
    expect(() => parseFormula('(M')).toThrow('a "(" is not closed');
    expect(() => f.evaluate({ M: 2, N: 'x', K: 1 })).toThrow('parameter N is not a number ("x")');
  });

  it("kernelgate.yml's formulas win over the tool's numbers", () => {
    const adapter = fileAdapterFor('gbench');
    if (!adapter) throw new Error('gbench');
    const k = adaptFile(adapter, GBENCH, {
      kernel: 'gbench',
      work: { flops: parseFormula('0'), bytes: parseFormula('2*bytes') },
    });
    expect(k.cases[0]?.work).toEqual({
      flops: 0,
      bytes: 8192,
      note: "kernelgate.yml's work formulas",
    });
  });
});

describe('benchmarks: in kernelgate.yml', () => {
  it('loads every format with its defaults', () => {
    const root = repo({
      'kernelgate.yml': `benchmarks:
  - name: cpu_gbench
    format: gbench
    run: ./bench --benchmark_format=json --benchmark_repetitions=10 > out/gbench.json
    output: out/gbench.json
  - name: cutlass_fmha
    format: command
    cwd: build/examples
    variants:
      cutlass: ./88_hopper_fmha --b={B} --h={H} --q={S} --k={S} --d={D} --iterations=20
    cases:
      - { B: 16, H: 96, S: 4096, D: 128 }
    metric: { regex: '^\\s*(?<variant>[^:]+?):\\s+(?<value>[0-9.]+) TFLOPS/s', unit: tflops }
    check: { regex: 'Disposition: Passed' }
    work: { flops: "4*B*H*S*S*D" }
`,
    });
    const config = loadConfig(root);
    expect(config.benchmarks.map((b) => [b.name, b.format, b.timeoutS])).toEqual([
      ['cpu_gbench', 'gbench', 600],
      ['cutlass_fmha', 'command', 600],
    ]);
    expect(config.benchmarks[0]?.output).toBe(join(root, 'out', 'gbench.json'));
    expect(config.benchmarks[1]?.cwd).toBe(join(root, 'build', 'examples'));
    expect(config.benchmarks[1]?.command?.repeat).toBe(10);
    expect(config.benchmarks[1]?.command?.check?.test('Disposition: Passed')).toBe(true);
    expect(defaultConfig().benchmarks).toEqual([]);
  });

  const bad: [string, string, string][] = [
    [
      'an unknown format',
      '  - { name: b, format: gbenchmark, output: o.json }\n',
      `kernelgate.yml: benchmarks[0].format must be one of ${QUOTED_FORMATS} (got "gbenchmark")`,
    ],
    [
      'a name that is not a kernel name',
      '  - { name: My-Bench, format: gbench, output: o.json }\n',
      'kernelgate.yml: benchmarks[0].name must match ^[a-z0-9_]+$ (got "My-Bench")',
    ],
    [
      'a file format without its output',
      '  - { name: b, format: nvbench, run: ./bench --json out.json }\n',
      'kernelgate.yml: benchmarks[0].output is required for format "nvbench" (got nothing)',
    ],
    [
      'a command field on a file format',
      '  - { name: b, format: gbench, output: o.json, repeat: 5 }\n',
      'kernelgate.yml: benchmarks[0].repeat is only for format "command" (got 5)',
    ],
    [
      'a command without variants',
      '  - { name: b, format: command, metric: { regex: "(\\\\d+) ms", unit: ms } }\n',
      'kernelgate.yml: benchmarks[0].variants is required for format "command" (got nothing)',
    ],
    [
      'a metric with both regex and json',
      '  - { name: b, format: command, variants: { a: ./a }, metric: { regex: "(x)", json: t, unit: ms } }\n',
      'kernelgate.yml: benchmarks[0].metric needs exactly one of regex and json (got {"regex":"(x)","json":"t","unit":"ms"})',
    ],
    [
      'a regex that does not compile',
      '  - { name: b, format: command, variants: { a: ./a }, metric: { regex: "([0-9]+ ms", unit: ms } }\n',
      'kernelgate.yml: benchmarks[0].metric.regex is not a valid regular expression: Invalid regular expression: /([0-9]+ ms/m: Unterminated group (got "([0-9]+ ms")',
    ],
    [
      'a regex without a group',
      '  - { name: b, format: command, variants: { a: ./a }, metric: { regex: "[0-9]+ ms", unit: ms } }\n',
      'kernelgate.yml: benchmarks[0].metric.regex needs a group that captures the reading (got "[0-9]+ ms")',
    ],
    [
      'a unit kernelgate does not know',
      '  - { name: b, format: command, variants: { a: ./a }, metric: { regex: "(x)", unit: minutes } }\n',
      'kernelgate.yml: benchmarks[0].metric.unit must be one of "s", "ms", "us", "ns", "tflops", "gflops", "gbps" (got "minutes")',
    ],
    [
      'a rate without the work to turn it into a time',
      '  - { name: b, format: command, variants: { a: ./a }, metric: { regex: "(x)", unit: tflops } }\n',
      'kernelgate.yml: benchmarks[0].metric.unit "tflops" needs work.flops: a rate becomes a time through the work of one call (got nothing)',
    ],
    [
      'a placeholder no case sets',
      '  - name: b\n    format: command\n    variants: { a: "./a --m={M} --n={N}" }\n    cases: [{ M: 1, N: 2 }, { M: 3 }]\n    metric: { regex: "(x)", unit: ms }\n',
      'kernelgate.yml: benchmarks[0].variants.a uses {N}, which benchmarks[0].cases[1] does not set (got {"M":3})',
    ],
    [
      'a case that sets {root}, which is the checkout',
      '  - name: b\n    format: command\n    variants: { a: "{root}/a --m={M}" }\n    cases: [{ M: 1, root: /opt }]\n    metric: { regex: "(x)", unit: ms }\n',
      "kernelgate.yml: benchmarks[0].cases[0].root is reserved: {root} is the checkout's root (the head's, or the base revision's) (got \"/opt\")",
    ],
    [
      'a work formula that does not parse',
      '  - { name: b, format: gbench, output: o.json, work: { flops: "2*$M" } }\n',
      'kernelgate.yml: benchmarks[0].work.flops is not a formula: unexpected "$" (got "2*$M")',
    ],
    [
      'a duplicate name',
      '  - { name: b, format: gbench, output: o.json }\n  - { name: b, format: gbench, output: p.json }\n',
      'kernelgate.yml: benchmarks[1].name is a duplicate (got "b")',
    ],
    [
      'an unknown field',
      '  - { name: b, format: gbench, output: o.json, repetitions: 5 }\n',
      'kernelgate.yml: benchmarks[0].repetitions is not a known field',
    ],
  ];
  it.each(bad)('rejects %s with a message naming file, field and value', (_what, yml, message) => {
    expect(() => loadConfig(repo({ 'kernelgate.yml': `benchmarks:\n${yml}` }))).toThrow(message);
  });

  it('refuses a benchmark named like a kernel', () => {
    const root = repo({
      'kernelgate.yml': 'benchmarks:\n  - { name: attention, format: gbench, output: o.json }\n',
      'kernels/attention/kernel.yml': `name: attention
module: kernels.attention.bench
tolerance:
  fp16: { rel_l2: 2.0e-3 }
cases:
  - { dtype: fp16 }
variants:
  - { name: triton_fa2, role: candidate }
`,
    });
    try {
      loadConfig(root);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).problems).toEqual([
        'kernelgate.yml: benchmarks[0].name is already a kernel\'s name under kernels_dir (got "attention")',
      ]);
    }
  });
});

describe('what the report says about a tool per case', () => {
  const config = defaultConfig();
  const gb = adapt('gbench', GBENCH);
  const nv = adapt('nvbench', NVBENCH);
  const results = validateResults(resultsOf([gb, nv]), 'merged');

  it('merges kernels of several tools into one valid document; the GPU from the tool that names one', () => {
    expect(results.kernels.map((k) => [k.name, k.adapter?.format])).toEqual([
      ['gbench', 'gbench'],
      ['nvbench', 'nvbench'],
    ]);
    expect(results.environment.gpu.name).toBe('NVIDIA H100 80GB HBM3');
    expect(results.run.harness).toBe('kernelgate adapters 0.1.0 (gbench, nvbench)');
  });

  it('a case of a tool that checks nothing is UNCHECKED, never PASS, and says why', () => {
    const { comparison, verdict, rendered } = judge(results, undefined, config, 'pr');
    const copy = comparison.cases.find((c) => c.key === 'gbench/BM_copy/bytes=4096');
    expect(copy?.correctness).toBe('UNCHECKED');
    expect(copy?.correctnessReason).toBe(
      'not verified: Google Benchmark (library built as debug) checks no results, so this case cannot PASS',
    );
    expect(comparison.cases.filter((c) => c.correctness === 'PASS')).toEqual([]);
    expect(verdict.counts.passed).toBe(0);
    expect(rendered.full).toContain('not verified: nvbench 0.1.0 checks no results');
  });

  it('a case with only a summary says it can get no interval and no paired verdict', () => {
    const baseline = validateResults(resultsOf([nv]), 'baseline');
    const { comparison, rendered } = judge(results, baseline, config, 'pr');
    const c = comparison.cases.find(
      (x) => x.key === 'nvbench/copy_sweep/BlockSize=256,NumBlocks=64',
    );
    expect(c?.perf).toBe('AMBIGUOUS');
    expect(c?.tooFewSamples).toBe(true);
    expect(c?.perfNote).toBe(
      'summary only: nvbench 0.1.0 gave statistics of 90 samples, not the samples, so no interval and no paired verdict',
    );
    expect(rendered.full).toContain('summary only: nvbench 0.1.0 gave statistics');
  });
});

describe('kernelgate adapt', () => {
  const cli = cliIn(fixtures);

  it('writes a valid results file that `kernelgate report` judges', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kg-adapt-')), 'results.json');
    const adapted = await cli(
      'adapt',
      '--format',
      'gbench',
      '--input',
      'gbench/bench.json',
      '--out',
      out,
      '--reference',
      'BM_copy',
    );
    expect(adapted.status).toBe(0);
    // What it wrote, in one line (issue 31): cases, timed, errors, skipped, warnings, the GPU.
    expect(adapted.stderr).toBe(
      `${out}: 5 case(s) (Google Benchmark JSON): 4 timed, 1 error(s), 0 skipped; 0 warning(s); GPU: no GPU named\n`,
    );
    const results = validateResults(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(results.kernels[0]?.variants).toEqual([
      { name: 'BM_copy', role: 'reference' },
      { name: 'BM_sum', role: 'candidate' },
      { name: 'BM_needs_gpu', role: 'candidate' },
    ]);
    const judged = await cli('report', '--results', out);
    // BM_needs_gpu errored: fail_on_error fails the gate
    expect(judged.status).toBe(1);
    expect(judged.stderr).toContain('gbench/BM_needs_gpu n=1024: error: gbench: no CUDA device');
    expect(judged.stderr).toContain('4 timed case(s) carry no correctness record: UNCHECKED');
  });

  it('exits 1 when nothing it wrote can be judged, saying so (issue 31)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-adapt-'));
    const doc = JSON.parse(readFileSync(join(fixtures, 'gbench/bench.json'), 'utf8')) as {
      benchmarks: { name: string }[];
    };
    doc.benchmarks = doc.benchmarks.filter((b) => b.name.startsWith('BM_needs_gpu'));
    writeFileSync(join(dir, 'errors.json'), JSON.stringify(doc));
    const out = join(dir, 'results.json');
    const adapted = await cli(
      'adapt',
      '--format',
      'gbench',
      '--input',
      join(dir, 'errors.json'),
      '--out',
      out,
    );
    expect(adapted.status).toBe(1);
    expect(adapted.stderr).toBe(
      `${out}: 1 case(s) (Google Benchmark JSON): 0 timed, 1 error(s), 0 skipped; 0 warning(s); GPU: no GPU named\n` +
        `${out}: no timed case: nothing in it can be judged\n`,
    );
  });

  it('reads several runs given as --input, one sample per run (issue 31)', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kg-adapt-')), 'results.json');
    const inputs = [
      'pytest-benchmark/bench.json',
      'pytest-benchmark/bench.json',
      'pytest-benchmark/bench.json',
    ];
    const adapted = await cli(
      'adapt',
      '--format',
      'pytest-benchmark',
      ...inputs.flatMap((i) => ['--input', i]),
      '--out',
      out,
    );
    expect(adapted.status).toBe(0);
    expect(adapted.stderr).toBe(
      `${out}: 4 case(s) (pytest-benchmark JSON) from 3 runs (one sample per run): 4 timed, 0 error(s), 0 skipped; 0 warning(s); GPU: no GPU named\n`,
    );
    const results = validateResults(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(results.cases.map((c) => c.timing?.samples_ms.length)).toEqual([3, 3, 3, 3]);
  });

  it('refuses a format it cannot read and a kernel name that is not one', async () => {
    expect((await cli('adapt', '--format', 'command', '--input', 'x')).stderr).toContain(
      `kernelgate adapt: --format must be one of ${FILE_FORMATS.join(', ')} (got "command")`,
    );
    expect(
      (await cli('adapt', '--format', 'nvbench', '--input', 'x', '--kernel', 'A B')).stderr,
    ).toContain('kernelgate adapt: --kernel takes lower case, digits and _ (got "A B")');
    expect((await cli('adapt', '--format', 'nvbench', '--input', 'nope.json')).stderr).toBe(
      'kernelgate adapt: nope.json: no such file\n',
    );
  });
});
