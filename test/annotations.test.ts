// GitHub annotations (src/action/annotations.ts): config errors at their field, the gate's lines
// about kernel variants at their place in kernel.yml or the source the compiler names.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  configAnnotations,
  gateAnnotations,
  MAX_ERROR_ANNOTATIONS,
  oneLine,
  workspaceFile,
} from '../src/action/annotations.js';
import { leadingFieldPath, loadConfig, yamlLocator, type Config } from '../src/config/index.js';
import { compare, evaluateTiers, gate } from '../src/judge/index.js';
import { InputError, loadResults, type KernelgateResults } from '../src/results/index.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const load = (name: string) => loadResults(join(FIXTURES, 'results', name));

/** The fixture repository (test/fixtures/config/valid) checked out into a fresh workspace. */
function workspace(files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-annotations-'));
  cpSync(join(FIXTURES, 'config', 'valid'), root, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(root, file), text);
  return root;
}

/** 1-based line and column of the first `needle` after the line holding `after`. */
function placeOf(text: string, needle: string, after = ''): { line: number; column: number } {
  const lines = text.split('\n');
  const from = after === '' ? 0 : lines.findIndex((l) => l.includes(after));
  const line = lines.findIndex((l, i) => i >= from && l.includes(needle));
  return { line: line + 1, column: lines[line]!.indexOf(needle) + 1 };
}

/** The same place as an annotation's properties name it. */
function at(text: string, needle: string, after = '') {
  const { line, column } = placeOf(text, needle, after);
  return { startLine: line, startColumn: column };
}

function thrown(fn: () => unknown): InputError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe('yamlLocator and leadingFieldPath', () => {
  const text = 'a: 1\nlist:\n  - name: x\n    build:\n      expect: { sass: [HMMA, LDSM] }\n';
  const { locate } = yamlLocator(text);

  it('finds a key, a list item and an item of a flow list', () => {
    expect(locate(['list'])).toEqual({ line: 2, column: 1 });
    expect(locate(['list', 0, 'name'])).toEqual({ line: 3, column: 5 });
    expect(locate(['list', 0, 'build', 'expect', 'sass', 1])).toEqual({ line: 5, column: 30 });
  });

  it('gives the nearest ancestor of a field that is not there', () => {
    expect(locate(['list', 0, 'build', 'flags'])).toEqual({ line: 4, column: 5 });
    expect(locate(['nothing'])).toEqual({ line: 1, column: 1 });
  });

  it('reads the field a problem names first', () => {
    expect(leadingFieldPath('tiers.ladder[1].min needs 150 % of the peak')).toEqual([
      'tiers',
      'ladder',
      1,
      'min',
    ]);
    expect(leadingFieldPath('peaks["H100 SXM"].gbps must be number (got "x")')).toEqual([
      'peaks',
      'H100 SXM',
      'gbps',
    ]);
    expect(leadingFieldPath('(no field) at all')).toEqual([]);
  });
});

describe('config errors carry their sites', () => {
  it('a bad field of kernelgate.yml: its line and column', () => {
    const root = workspace({
      'kernelgate.yml': 'compare:\n  threshold_pct: 3\npolicy:\n  fail_on_slower: maybe\n',
    });
    const error = thrown(() => loadConfig(root));
    expect(error.sites).toEqual([
      {
        file: join(root, 'kernelgate.yml'),
        line: 4,
        column: 3,
        message: 'kernelgate.yml: policy.fail_on_slower must be boolean (got "maybe")',
      },
    ]);
  });

  it("a kernel.yml's cross-check problem: the field it names", () => {
    const file = join('kernels', 'attention', 'kernel.yml');
    const root = workspace();
    const text = readFileSync(join(root, file), 'utf8').replace(
      'name: sdpa_cudnn',
      'name: sdpa_flash',
    );
    writeFileSync(join(root, file), text);
    const error = thrown(() => loadConfig(root));
    // variants[3], the second variant named sdpa_flash: `  - { name: sdpa_flash, … }`
    const lines = text.split('\n');
    const line = lines.map((l) => l.includes('name: sdpa_flash')).lastIndexOf(true);
    expect(error.sites).toEqual([
      {
        file: join(root, file),
        line: line + 1,
        column: lines[line]!.indexOf('name') + 1,
        message: 'kernels/attention/kernel.yml: variants[3].name is a duplicate (got "sdpa_flash")',
      },
    ]);
  });

  it('a YAML syntax error: where the parser stopped', () => {
    const root = workspace({ 'kernelgate.yml': 'compare:\n  threshold_pct: [3\n' });
    const error = thrown(() => loadConfig(root));
    expect(error.sites).toEqual([
      { file: join(root, 'kernelgate.yml'), line: 3, column: 1, message: error.message },
    ]);
  });

  it('annotations: relative to the workspace, none for a file outside it, capped', () => {
    const root = workspace({
      'kernelgate.yml': `report:\n${Array.from({ length: 12 }, (_, i) => `  x${i}: 1\n`).join('')}`,
    });
    const error = thrown(() => loadConfig(root));
    const annotations = configAnnotations(error, root);
    expect(annotations).toHaveLength(MAX_ERROR_ANNOTATIONS + 1);
    expect(annotations[0]).toEqual({
      level: 'error',
      message: 'kernelgate.yml: report.x0 is not a known field (known: title, max_rows)',
      properties: {
        title: 'kernelgate: config error',
        file: 'kernelgate.yml',
        startLine: 2,
        startColumn: 3,
      },
    });
    expect(annotations.at(-1)).toEqual({
      level: 'notice',
      message: "3 more problems not annotated: the step's failure message lists them.",
      properties: { title: 'kernelgate' },
    });
    expect(configAnnotations(error, join(root, 'kernels'))).toEqual([]);
    expect(configAnnotations(new Error('not an input error'), root)).toEqual([]);
  });
});

describe('untrusted text and paths', () => {
  it('oneLine: colours and control characters out, newlines folded, capped', () => {
    expect(oneLine('\x1b[31merror\x1b[0m: bad\r\n  thing\x07\tend', 100)).toBe(
      'error: bad thing end',
    );
    expect(oneLine('x'.repeat(20), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  it('workspaceFile: forward slashes inside the workspace, nothing outside', () => {
    expect(workspaceFile('/ws', '/ws/kernels/a/kernel.yml')).toBe('kernels/a/kernel.yml');
    expect(workspaceFile('/ws', 'kernelgate.yml')).toBe('kernelgate.yml');
    expect(workspaceFile('/ws', '/elsewhere/kernel.yml')).toBeUndefined();
    expect(workspaceFile('/ws', '/ws')).toBeUndefined();
    expect(workspaceFile('/ws', '/ws/..kernels/x')).toBe('..kernels/x');
  });
});

describe("the gate's lines at their place", () => {
  const BUILD = [
    '  - name: cuda_fa2',
    '    role: candidate',
    '    backend: cuda',
    '    build:',
    '      sources: [cuda/fa2.cu]',
    '      expect:',
    '        archs: [sm_80, sm_90a]',
    '        spills: 0',
  ].join('\n');
  const MANIFEST = 'kernels/attention/kernel.yml';

  function judged(
    results: KernelgateResults,
    policy: Partial<Config['policy']> = {},
  ): { root: string; text: string; config: Config; gate: ReturnType<typeof gate> } {
    const root = workspace();
    const text = readFileSync(join(root, MANIFEST), 'utf8').replace(
      '  - { name: cuda_fa2, role: candidate, backend: cuda }',
      BUILD,
    );
    writeFileSync(join(root, MANIFEST), text);
    const loaded = loadConfig(root);
    const config = { ...loaded, policy: { ...loaded.policy, ...policy } };
    const comparison = compare(results, load('baseline.json'), config);
    return {
      root,
      text,
      config,
      gate: gate(comparison, evaluateTiers(results, config), results, config),
    };
  }

  it("an unmet build expectation: its item in the variant's build.expect", () => {
    const results = load('build-expectation.json');
    results.builds![0]!.expectations![0]!.name = 'archs:sm_90a';
    const { root, text, config, gate: verdict } = judged(results);
    const { errors, warnings } = gateAnnotations(verdict, results, config, root);
    expect(errors).toEqual([
      {
        level: 'error',
        message:
          'attention/cuda_fa2: build expectation unmet: archs:sm_90a: sm_90a missing (found sm_90): built with -gencode=arch=compute_90,code=sm_90',
        properties: {
          title: 'kernelgate: build expectation unmet',
          file: MANIFEST,
          ...at(text, 'sm_90a]', 'name: cuda_fa2'),
        },
      },
    ]);
    expect(errors[0]!.properties).toMatchObject({ startColumn: 24 });
    // The doctor's diagnostic about the same variant: a warning at the variant, in its place.
    const diagnostic = verdict.warnings.findIndex((w) => w.startsWith('diagnostic arch-'));
    expect(diagnostic).toBeGreaterThanOrEqual(0);
    expect(warnings).toEqual(
      verdict.warnings.map((w, i) =>
        i === diagnostic
          ? {
              level: 'warning',
              message: w,
              properties: {
                title: 'kernelgate: diagnostic arch-conditional-mma',
                file: MANIFEST,
                ...at(text, 'name: cuda_fa2'),
              },
            }
          : w,
      ),
    );
  });

  it('a warning line that comes twice: its places annotated once', () => {
    const results = load('build-expectation.json');
    const diagnostic = results.diagnostics.find((d) => d.code === 'arch-conditional-mma')!;
    results.diagnostics.push({ ...diagnostic, variant: 'triton_fa2' });
    const { root, text, config, gate: verdict } = judged(results);
    const line = verdict.warnings.find((w) => w.startsWith('diagnostic arch-'))!;
    expect(verdict.warnings.filter((w) => w === line)).toHaveLength(2);
    const { warnings } = gateAnnotations(verdict, results, config, root);
    const located = warnings.filter((w) => typeof w !== 'string');
    expect(located.map((a) => a.properties)).toEqual([
      {
        title: 'kernelgate: diagnostic arch-conditional-mma',
        file: MANIFEST,
        ...at(text, 'name: cuda_fa2'),
      },
      {
        title: 'kernelgate: diagnostic arch-conditional-mma',
        file: MANIFEST,
        ...at(text, 'name: triton_fa2'),
      },
    ]);
    expect(warnings).not.toContain(line);
  });

  it('a warning under a lenient policy: shown at its file instead of plainly', () => {
    const results = load('build-expectation.json');
    const { root, text, config, gate: verdict } = judged(results, { failOnBuildFailure: false });
    const { errors, warnings } = gateAnnotations(verdict, results, config, root);
    expect(errors).toEqual([]);
    // The build's line and the doctor's diagnostic about the same variant, each at its place.
    expect(verdict.warnings[0]).toMatch(/^attention\/cuda_fa2: build expectation unmet: /);
    expect(warnings.map((w) => typeof w !== 'string' && w.properties.title)).toEqual(
      verdict.warnings.map((w) =>
        w === verdict.warnings[0]
          ? 'kernelgate: build expectation unmet'
          : w.startsWith('diagnostic arch-conditional-mma: ')
            ? 'kernelgate: diagnostic arch-conditional-mma'
            : false,
      ),
    );
    expect(warnings[0]).toEqual({
      level: 'warning',
      message:
        'attention/cuda_fa2: build expectation unmet: archs: sm_90a missing (found sm_90): built with -gencode=arch=compute_90,code=sm_90',
      properties: {
        title: 'kernelgate: build expectation unmet',
        file: MANIFEST,
        ...at(text, 'archs:', 'name: cuda_fa2'),
      },
    });
  });

  it("a failed build: the compiler's first error, in the kernel's folder", () => {
    const results = load('build-expectation.json');
    Object.assign(results.builds![0]!, {
      status: 'failed',
      log_tail:
        'cuda/fa2.cu(42): error: identifier "\x1b[1mmma\x1b[0m" is undefined\n1 error detected\n',
    });
    const { root, config, gate: verdict } = judged(results);
    expect(gateAnnotations(verdict, results, config, root).errors).toEqual([
      {
        level: 'error',
        message: 'attention/cuda_fa2: build failed: 1 error detected',
        properties: {
          title: 'kernelgate: build failed',
          file: 'kernels/attention/cuda/fa2.cu',
          startLine: 42,
        },
      },
    ]);
  });

  it('correctness FAIL and a timed-out case: at the variant, one per variant and kind', () => {
    const results = load('correctness-fail.json');
    const second = structuredClone(results.cases.find((c) => c.status === 'fail')!);
    second.case = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=true';
    second.params = { ...second.params, D: 128 };
    results.cases.push(second);
    const { root, text, config, gate: verdict } = judged(results);
    const bsr = readFileSync(join(root, 'kernels/bsr_gemm/kernel.yml'), 'utf8');
    const { errors } = gateAnnotations(verdict, results, config, root);
    expect(errors.map((e) => [e.properties, e.message])).toEqual([
      [
        {
          title: 'kernelgate: correctness FAIL',
          file: MANIFEST,
          ...at(text, 'name: triton_fa2'),
        },
        expect.stringMatching(
          /^attention\/triton_fa2 dtype=fp16,B=16,H=96,S=4096,D=64,causal=true: correctness FAIL: rel_l2 3\.1e-1 > tol 2e-3; .* \(and 1 more like it on attention\/triton_fa2\)$/,
        ),
      ],
      [
        {
          title: 'kernelgate: case error',
          file: 'kernels/bsr_gemm/kernel.yml',
          ...at(bsr, 'name: cuda_bsr_mma'),
        },
        'bsr_gemm/cuda_bsr_mma dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16: timeout: timeout: no result after 60.0 s',
      ],
    ]);
  });

  it('SLOWER: an annotation only when it fails the gate', () => {
    const results = load('regression.json');
    const warned = judged(results);
    expect(warned.gate.reasons).toEqual([]);
    expect(warned.gate.warnings.length).toBeGreaterThan(0);
    expect(gateAnnotations(warned.gate, results, warned.config, warned.root)).toEqual({
      errors: [],
      warnings: warned.gate.warnings,
    });
    const failed = judged(results, { failOnSlower: true });
    const { errors } = gateAnnotations(failed.gate, results, failed.config, failed.root);
    expect(errors.map((e) => e.properties.title)).toEqual(['kernelgate: SLOWER']);
    expect(errors[0]!.properties).toMatchObject({
      file: MANIFEST,
      ...at(failed.text, 'name: triton_fa2'),
    });
  });

  it('a kernel outside the workspace: no annotation, the failure message says it all', () => {
    const results = load('drift.json');
    const { root, config, gate: verdict } = judged(results);
    expect(verdict.reasons).toHaveLength(1);
    expect(gateAnnotations(verdict, results, config, join(root, 'elsewhere')).errors).toEqual([]);
  });
});
