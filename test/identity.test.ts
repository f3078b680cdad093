// Identity before timing (issue 27): each variant's key in the head and in the base revision,
// computed from two real checkouts of a small git repository (the base as the git worktree a pull
// request's run makes, src/measure/base-revision.ts). Only what a change reaches differs.
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.js';
import { scriptedExec } from '../src/lib/index.js';
import {
  baseHarnessRoot,
  compareIdentities,
  identicalArgs,
  importClosure,
  measure,
  variantIdentities,
  type LineExec,
  type IdentitySide,
  type MeasureOptions,
} from '../src/measure/index.js';
import { loadResults, type BuildRecord, type Environment } from '../src/results/index.js';
import { prCheckouts, write } from './support/pr-checkouts.js';

const ENV: Environment = {
  gpu: { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' },
  driver_version: '580.159.04',
  libraries: { torch: '2.11.0+cu130', triton: '3.6.0' },
};

const manifest = (name: string, variants: string) =>
  [
    `name: ${name}`,
    `module: kernels.${name}.bench`,
    'cases: [{dtype: fp16, n: [64, 128]}]',
    'tolerance: {fp16: {rel_l2: 0.002}}',
    `variants: ${variants}`,
    '',
  ].join('\n');

/** attention and bsr import kernels/common/shared.py; scale imports kernels/common/other.py. */
const FILES: Record<string, string> = {
  'kernels/__init__.py': '',
  'kernels/common/__init__.py': '',
  'kernels/common/shared.py': 'import math\nTILE = 64\n',
  'kernels/common/other.py': 'import torch\nfrom . import shared_helpers\n',
  'kernels/common/shared_helpers.py': 'X = 1\n',
  'kernels/attention/kernel.yml': manifest(
    'attention',
    '[{name: fa2, role: candidate}, {name: fa3, role: candidate}, {name: sdpa, role: reference}]',
  ),
  'kernels/attention/bench.py':
    'import torch\nfrom kernels.common import shared\nfrom kernels.attention import fa2_impl\n',
  'kernels/attention/fa2_impl.py': 'def run():\n    return 1\n',
  'kernels/bsr/kernel.yml': manifest('bsr', '[{name: bsr_triton, role: candidate}]'),
  'kernels/bsr/bench.py': 'from kernels.common.shared import TILE\n',
  'kernels/scale/kernel.yml': manifest('scale', '[{name: axpb, role: candidate}]'),
  'kernels/scale/bench.py': 'import kernels.common.other as other\n',
  'python/kernelgate_harness/__init__.py': 'HARNESS_VERSION = "1"\n',
  'python/kernelgate_launch.py': '',
  'README.md': 'a repository\n',
};

/** The base commit, then `change` applied and committed as the head; the base as a worktree. */
const checkouts = (change: Record<string, string> = {}) => prCheckouts(FILES, change);

function sides(
  at: { ws: string; baseRoot: string },
  builds: { head?: BuildRecord[]; base?: BuildRecord[] } = {},
): { head: IdentitySide; base: IdentitySide } {
  return {
    head: { root: at.ws, config: loadConfig(at.ws), builds: builds.head ?? [], harnessRoot: at.ws },
    base: {
      root: at.baseRoot,
      config: loadConfig(at.baseRoot),
      builds: builds.base ?? [],
      harnessRoot: baseHarnessRoot(at.ws, at.ws, at.baseRoot),
    },
  };
}

/** kernel/variant → why (IDENTICAL_REASON when identical). */
function verdicts(s: { head: IdentitySide; base: IdentitySide }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of compareIdentities(
    variantIdentities(s.head, ENV),
    variantIdentities(s.base, ENV),
  )) {
    out[`${v.kernel}/${v.variant}`] = v.identical ? 'identical' : v.why;
  }
  return out;
}

const REFERENCE = 'a reference variant: timed as the A/A control';

/** attention with fa2 owning its file and flash named as the reference: the control */
const OWNS = {
  ...FILES,
  'kernels/attention/kernel.yml':
    manifest(
      'attention',
      '[{name: fa2, role: candidate, owns: [fa2_impl.py]}, {name: fa3, role: candidate}, {name: sdpa, role: reference}, {name: flash, role: reference}]',
    ) + 'speed_reference: flash\n',
};
const FA2 = { 'kernels/attention/fa2_impl.py': 'def run():\n    return 2\n' };

describe('identity of base and head', () => {
  it('a change outside the kernels leaves every variant identical: with no candidate timed, no reference is either', async () => {
    const at = await checkouts({ 'README.md': 'edited\n' });
    expect(verdicts(sides(at))).toEqual({
      'attention/fa2': 'identical',
      'attention/fa3': 'identical',
      'attention/sdpa': 'identical',
      'bsr/bsr_triton': 'identical',
      'scale/axpb': 'identical',
    });
  });

  it("changing one kernel's file makes only that kernel's variants differ", async () => {
    const at = await checkouts({ 'kernels/attention/fa2_impl.py': 'def run():\n    return 2\n' });
    expect(verdicts(sides(at))).toEqual({
      'attention/fa2': 'sources differ: kernels/attention/fa2_impl.py',
      'attention/fa3': 'sources differ: kernels/attention/fa2_impl.py',
      'attention/sdpa': REFERENCE,
      'bsr/bsr_triton': 'identical',
      'scale/axpb': 'identical',
    });
  });

  it('a kernel that names its reference times that one as the control; the others are skipped when identical', async () => {
    const variants =
      '[{name: fa2, role: candidate, owns: [fa2_impl.py]}, {name: fa3, role: candidate}, {name: sdpa, role: reference}, {name: flash, role: reference}]';
    const files = {
      ...FILES,
      'kernels/attention/kernel.yml': manifest('attention', variants) + 'speed_reference: flash\n',
    };
    const named = await prCheckouts(files, {
      'kernels/attention/fa2_impl.py': 'def run():\n    return 2\n',
    });
    const v = verdicts(sides(named));
    expect([
      v['attention/fa2'],
      v['attention/fa3'],
      v['attention/flash'],
      v['attention/sdpa'],
    ]).toEqual([
      'sources differ: kernels/attention/fa2_impl.py (its own)',
      'identical',
      REFERENCE,
      'identical',
    ]);
    // naming none, every reference is a control
    const unnamed = await prCheckouts(
      { ...FILES, 'kernels/attention/kernel.yml': manifest('attention', variants) },
      { 'kernels/attention/fa2_impl.py': 'def run():\n    return 2\n' },
    );
    const w = verdicts(sides(unnamed));
    expect([w['attention/flash'], w['attention/sdpa']]).toEqual([REFERENCE, REFERENCE]);
  });

  it('run.time_control: headline makes an identical control of a timed candidate identical, marked as the control', async () => {
    const at = await prCheckouts(OWNS, FA2);
    const s = sides(at);
    const marked = (headline: boolean) =>
      compareIdentities(variantIdentities(s.head, ENV), variantIdentities(s.base, ENV), headline)
        .filter((v) => v.kernel === 'attention')
        .map((v) => [v.variant, v.identical ? 'identical' : v.why, v.control ?? false]);
    expect(marked(true)).toEqual([
      ['fa2', 'sources differ: kernels/attention/fa2_impl.py (its own)', false],
      ['fa3', 'identical', false],
      ['sdpa', 'identical', false],
      ['flash', 'identical', true],
    ]);
    expect(marked(false)[3]).toEqual(['flash', REFERENCE, false]);
    // with nothing of attention timed, its control is identical and controls nothing
    const readme = sides(await prCheckouts(OWNS, { 'README.md': 'edited\n' }));
    const none = compareIdentities(
      variantIdentities(readme.head, ENV),
      variantIdentities(readme.base, ENV),
      true,
    );
    expect(none.every((v) => v.identical && v.control === undefined)).toBe(true);
  });

  it('changing a shared file makes every kernel that imports it differ, and only those', async () => {
    const at = await checkouts({ 'kernels/common/shared.py': 'import math\nTILE = 128\n' });
    const v = verdicts(sides(at));
    expect(v['attention/fa2']).toBe('sources differ: kernels/common/shared.py');
    expect(v['bsr/bsr_triton']).toBe('sources differ: kernels/common/shared.py');
    expect(v['scale/axpb']).toBe('identical');
    // a relative import of a package's module is followed too
    const helpers = await checkouts({ 'kernels/common/shared_helpers.py': 'X = 2\n' });
    const w = verdicts(sides(helpers));
    expect(w['scale/axpb']).toBe('sources differ: kernels/common/shared_helpers.py');
    expect(w['bsr/bsr_triton']).toBe('identical');
  });

  it("changing one variant's manifest entry makes only that variant differ; the cases make all differ", async () => {
    const one = await checkouts({
      'kernels/attention/kernel.yml': manifest(
        'attention',
        '[{name: fa2, role: candidate, only: {n: 64}}, {name: fa3, role: candidate}, {name: sdpa, role: reference}]',
      ),
    });
    const v = verdicts(sides(one));
    expect(v['attention/fa2']).toBe('its manifest entry differs');
    expect(v['attention/fa3']).toBe('identical');
    const cases = await checkouts({
      'kernels/attention/kernel.yml': manifest(
        'attention',
        '[{name: fa2, role: candidate}, {name: fa3, role: candidate}, {name: sdpa, role: reference}]',
      ).replace('n: [64, 128]', 'n: [64, 256]'),
    });
    const w = verdicts(sides(cases));
    expect(w['attention/fa2']).toBe('its manifest entry differs');
    expect(w['attention/fa3']).toBe('its manifest entry differs');
    expect(w['bsr/bsr_triton']).toBe('identical');
  });

  it('a change of the harness makes every variant differ', async () => {
    const at = await checkouts({
      'python/kernelgate_harness/__init__.py': 'HARNESS_VERSION = "2"\n',
    });
    const v = verdicts(sides(at));
    expect(v['bsr/bsr_triton']).toBe('the harness differs');
    expect(v['scale/axpb']).toBe('the harness differs');
    // a harness outside the repository measured (the action's own) measures both arms alike
    const outside = mkdtempSync(join(tmpdir(), 'kg-action-'));
    expect(baseHarnessRoot(at.ws, outside, at.baseRoot)).toBe(outside);
  });

  it('run.time_control: headline leaves untimed a reference other than the control that differs in the harness alone', async () => {
    const at = await prCheckouts(OWNS, {
      'python/kernelgate_harness/__init__.py': 'HARNESS_VERSION = "2"\n',
    });
    const s = sides(at);
    const of = (headline: boolean) =>
      compareIdentities(variantIdentities(s.head, ENV), variantIdentities(s.base, ENV), headline)
        .filter((v) => v.kernel === 'attention')
        .map((v) => [v.variant, v.identical, v.why, v.harnessOnly ?? false]);
    const ONLY =
      "a reference whose only difference is the harness, which its kernel's A/A control measures";
    // the candidates and the control (flash) are timed; sdpa, the other reference, is not
    expect(of(true)).toEqual([
      ['fa2', false, 'the harness differs', false],
      ['fa3', false, 'the harness differs', false],
      ['sdpa', true, ONLY, true],
      ['flash', false, 'the harness differs', false],
    ]);
    expect(of(false).map((v) => v[2])).toEqual([
      'the harness differs',
      'the harness differs',
      'the harness differs',
      REFERENCE,
    ]);
    // a reference whose own file changed too is timed
    const both = sides(
      await prCheckouts(OWNS, {
        'python/kernelgate_harness/__init__.py': 'HARNESS_VERSION = "2"\n',
        'kernels/attention/bench.py': 'import torch\n',
      }),
    );
    const sdpa = compareIdentities(
      variantIdentities(both.head, ENV),
      variantIdentities(both.base, ENV),
      true,
    ).find((v) => v.variant === 'sdpa');
    expect(sdpa).toMatchObject({ identical: false, why: 'the harness differs' });
    // handed to the harness as identical, and as --harness-only
    const out = mkdtempSync(join(tmpdir(), 'kg-identity-out-'));
    const lines: string[] = [];
    const args = identicalArgs(s.head, s.base, ENV, out, (l) => lines.push(l), true);
    expect(args).toEqual(['--identical', 'attention.sdpa', '--harness-only', 'attention.sdpa']);
    expect(lines).toContain(`kernelgate: identity: attention/sdpa is not timed: ${ONLY}`);
    expect(lines[0]).toBe(
      'kernelgate: identity: 0 of 6 variant(s) identical in base and head, verified but not timed',
    );
  });

  it('an import that cannot be resolved with certainty makes the kernel differ, changed or not', async () => {
    const at = await checkouts({
      'kernels/bsr/bench.py':
        'import importlib\nfrom kernels.common.shared import TILE\nimpl = importlib.import_module("kernels.bsr.impl")\n',
    });
    expect(verdicts(sides(at))['bsr/bsr_triton']).toBe(
      'an import cannot be resolved with certainty (kernels/bsr/bench.py:1: importlib)',
    );
    // the same code in both revisions is still not known to be the same
    const both = mkdtempSync(join(tmpdir(), 'kg-identity-same-'));
    write(both, { ...FILES, 'kernels/bsr/bench.py': 'import kernels.common.missing\n' });
    const side = { root: both, config: loadConfig(both), builds: [], harnessRoot: both };
    expect(verdicts({ head: side, base: side })['bsr/bsr_triton']).toBe(
      'an import cannot be resolved with certainty (kernels/bsr/bench.py:1: kernels.common.missing: no such module in the repository)',
    );
  });

  it("a CUDA variant is identical only when its library's bytes are", async () => {
    const at = await checkouts({
      'kernels/bsr/kernel.yml': manifest(
        'bsr',
        '[{name: bsr_triton, role: candidate}, {name: bsr_cuda, role: candidate, build: {sources: [bsr.cu]}}]',
      ),
    });
    // a variant the base's manifest lacks
    expect(verdicts(sides(at))['bsr/bsr_cuda']).toBe('not in the base revision');
    const cuda = (sha: string | undefined, status: BuildRecord['status'] = 'ok'): BuildRecord => ({
      kernel: 'bsr',
      variant: 'bsr_cuda',
      status,
      ...(sha !== undefined ? { library_sha256: sha } : {}),
    });
    const same = mkdtempSync(join(tmpdir(), 'kg-identity-cuda-'));
    write(same, {
      ...FILES,
      'kernels/bsr/kernel.yml': manifest(
        'bsr',
        '[{name: bsr_triton, role: candidate}, {name: bsr_cuda, role: candidate, build: {sources: [bsr.cu]}}]',
      ),
    });
    const side = (builds: BuildRecord[]): IdentitySide => ({
      root: same,
      config: loadConfig(same),
      builds,
      harnessRoot: same,
    });
    const of = (head: BuildRecord[], base: BuildRecord[]) =>
      verdicts({ head: side(head), base: side(base) })['bsr/bsr_cuda'];
    expect(of([cuda('a'.repeat(64))], [cuda('a'.repeat(64))])).toBe('identical');
    expect(of([cuda('a'.repeat(64))], [cuda('b'.repeat(64))])).toBe('its build output differs');
    expect(of([cuda('a'.repeat(64))], [cuda(undefined, 'failed')])).toBe(
      'its build cannot be compared (build failed)',
    );
    expect(of([cuda(undefined)], [cuda(undefined)])).toBe(
      'its build cannot be compared (no library hash)',
    );
    expect(of([], [])).toBe('its build cannot be compared (no build record)');
  });

  it('hands the harness the identical variants and writes every verdict to identity.json', async () => {
    const at = await checkouts({ 'kernels/scale/bench.py': 'import kernels.common.other as o\n' });
    const out = mkdtempSync(join(tmpdir(), 'kg-identity-out-'));
    const lines: string[] = [];
    const s = sides(at);
    // attention's candidates are identical, so its reference has nothing to control there
    expect(identicalArgs(s.head, s.base, ENV, out, (l) => lines.push(l))).toEqual([
      '--identical',
      'attention.fa2,attention.fa3,attention.sdpa,bsr.bsr_triton',
    ]);
    expect(lines).toEqual([
      'kernelgate: identity: 4 of 5 variant(s) identical in base and head, verified but not timed: attention/fa2, attention/fa3, attention/sdpa, bsr/bsr_triton',
      'kernelgate: identity: scale/axpb is timed: sources differ: kernels/scale/bench.py',
    ]);
    const written = JSON.parse(readFileSync(join(out, 'identity.json'), 'utf8')) as unknown[];
    expect(written).toHaveLength(5);
    expect(written[4]).toEqual({
      kernel: 'scale',
      variant: 'axpb',
      identical: false,
      why: 'sources differ: kernels/scale/bench.py',
    });
  });
});

describe('the import closure of a kernel module', () => {
  it("follows the repository's own imports, leaves libraries out and sees imports in strings", () => {
    const root = mkdtempSync(join(tmpdir(), 'kg-imports-'));
    write(root, {
      ...FILES,
      'kernels/attention/bench.py': [
        'import os, torch',
        'from kernels.common import (shared,',
        '    other)',
        'def f():',
        '    from kernels.attention import fa2_impl as impl',
        'CHILD = """',
        'from kernels.bsr import bench',
        '"""',
        'x = {"a": 1}; import triton.language as tl',
        '',
      ].join('\n'),
    });
    expect(importClosure(root, 'kernels.attention.bench')).toEqual({
      files: [
        'kernels/__init__.py',
        'kernels/attention/bench.py',
        'kernels/attention/fa2_impl.py',
        'kernels/bsr/bench.py',
        'kernels/common/__init__.py',
        'kernels/common/other.py',
        'kernels/common/shared.py',
        'kernels/common/shared_helpers.py',
      ],
      unresolved: [],
    });
  });

  it('names what it cannot resolve: run-time imports, sys.path edits, missing modules, relative imports above the root', () => {
    const root = mkdtempSync(join(tmpdir(), 'kg-imports-bad-'));
    write(root, {
      ...FILES,
      'kernels/attention/bench.py': [
        'import sys',
        'sys.path.insert(0, "/somewhere")',
        'mod = __import__("kernels.attention.fa2_impl")',
        'from kernels.attention import fa2_impl',
        'import kernels.attention.nothing',
        'from .... import far',
        'PATHS = [p for p in sys.path if p]',
        '',
      ].join('\n'),
    });
    expect(importClosure(root, 'kernels.attention.bench').unresolved).toEqual([
      'kernels/attention/bench.py:2: sys.path changed',
      'kernels/attention/bench.py:3: __import__',
      'kernels/attention/bench.py:5: kernels.attention.nothing: no such module in the repository',
      'kernels/attention/bench.py:6: ....: above the repository',
    ]);
  });
});

describe('measure: identity only where the run asks for it', () => {
  async function harnessArgs(
    skipIdentical: boolean | undefined,
    verifyIdentical?: 'first_seed' | 'all',
    change: Record<string, string> = {
      'kernels/scale/bench.py': 'import kernels.common.other as o\n',
    },
    edit: (config: Config) => Config = (c) => c,
    files: Record<string, string> = FILES,
    balance?: MeasureOptions['balance'],
  ) {
    const at = await prCheckouts(files, change);
    let args: string[] = [];
    const fake: LineExec = async (_cmd, a) => {
      args = a;
      copyFileSync('test/fixtures/results/aa-current.json', a[a.indexOf('--out') + 1]!);
      return 0;
    };
    const lines: string[] = [];
    const log = {
      info: (l: string) => lines.push(l),
      startGroup: () => undefined,
      endGroup: () => undefined,
      warning: (m: string) => lines.push(m),
    };
    await measure(
      {
        config: edit(withVerify(loadConfig(at.ws), verifyIdentical)),
        workspace: at.ws,
        harnessRoot: at.ws,
        outDir: join(at.ws, 'out'),
        base: { root: at.baseRoot, sha: 'b'.repeat(40) },
        ...(skipIdentical !== undefined ? { skipIdentical } : {}),
        ...(balance ? { balance } : {}),
      },
      { exec: scriptedExec([]), lineExec: fake, log },
    );
    return { args, lines };
  }

  const withVerify = (config: Config, verifyIdentical?: 'first_seed' | 'all'): Config =>
    verifyIdentical ? { ...config, run: { ...config.run, verifyIdentical } } : config;

  it("a pull request's paired run hands the harness the identical variants", async () => {
    const { args, lines } = await harnessArgs(true);
    expect(args.slice(args.indexOf('--identical'), args.indexOf('--identical') + 4)).toEqual([
      '--identical',
      'attention.fa2,attention.fa3,attention.sdpa,bsr.bsr_triton',
      // run.verify_identical's default
      '--verify-identical',
      'first_seed',
    ]);
    expect(args).toContain('--base-root');
    expect(lines).toContain(
      'kernelgate: identity: scale/axpb is timed: sources differ: kernels/scale/bench.py',
    );
  });

  it('a planted fault makes every variant timed: the code is the same, the head arm is not', async () => {
    process.env['KERNELGATE_FAULT'] = 'bsr.bsr_triton:slow:1';
    try {
      const { args, lines } = await harnessArgs(true);
      expect(args).not.toContain('--identical');
      expect(args).not.toContain('--verify-identical');
      expect(lines).toContain(
        'kernelgate: identity: a fault is planted in the head (KERNELGATE_FAULT or --fault): every variant is timed',
      );
    } finally {
      delete process.env['KERNELGATE_FAULT'];
    }
  });

  it('a paired run that does not ask (a push, the nightly) times every variant', async () => {
    for (const skip of [false, undefined]) {
      const { args } = await harnessArgs(skip);
      expect(args).toContain('--base-root');
      expect(args).not.toContain('--identical');
      expect(args).not.toContain('--verify-identical');
    }
  });

  const CONTROL_LINE =
    "kernelgate: identity: attention/flash is the A/A control of attention's timed candidates: timed on its headline case and beside each confirmation (run.time_control: headline)";

  it('run.time_control: headline (the default) hands the harness the identical control as --controls', async () => {
    const { args, lines } = await harnessArgs(true, undefined, FA2, undefined, OWNS);
    expect(args.slice(args.indexOf('--identical'), args.indexOf('--identical') + 4)).toEqual([
      '--identical',
      'attention.fa3,attention.sdpa,attention.flash,bsr.bsr_triton,scale.axpb',
      '--controls',
      'attention.flash',
    ]);
    expect(args).toContain('--paired-confirm');
    expect(lines).toContain(CONTROL_LINE);
  });

  it('run.time_control: every_case, or no confirmations, times the control as a changed variant', async () => {
    const everyCase = await harnessArgs(
      true,
      undefined,
      FA2,
      (c) => ({ ...c, run: { ...c.run, timeControl: 'every_case' } }),
      OWNS,
    );
    expect(everyCase.args).not.toContain('--controls');
    expect(everyCase.args[everyCase.args.indexOf('--identical') + 1]).toBe(
      'attention.fa3,attention.sdpa,bsr.bsr_triton,scale.axpb',
    );
    expect(everyCase.lines).toContain(
      'kernelgate: identity: attention/flash is timed: a reference variant: timed as the A/A control',
    );
    const unconfirmed = await harnessArgs(
      true,
      undefined,
      FA2,
      (c) => ({ ...c, compare: { ...c.compare, paired: { ...c.compare.paired, confirm: false } } }),
      OWNS,
    );
    expect(unconfirmed.args).not.toContain('--controls');
    expect(unconfirmed.args).not.toContain('--paired-confirm');
    expect(unconfirmed.lines).toContain(
      'kernelgate: identity: run.time_control: headline needs compare.paired.confirm: the A/A controls are timed on every case',
    );
    expect(unconfirmed.lines).not.toContain(CONTROL_LINE);
  });

  it("hands the harness a stored run's ceilings when the calibration kernel is identical", async () => {
    const stored = loadResults('test/fixtures/results/aa-current.json');
    const gemm = {
      ...FILES,
      'kernels/gemm/kernel.yml': manifest(
        'gemm',
        '[{name: cublas, role: reference}, {name: torch_copy, role: reference}]',
      ),
      'kernels/gemm/bench.py': 'import torch\n',
    };
    const asked: string[] = [];
    const balance = async (environment: Environment) => {
      asked.push(environment.gpu.sku ?? 'unknown');
      // a stored run of this machine's GPU model (here the doctor's, with no GPU)
      const gpu = { ...stored.environment.gpu, sku: environment.gpu.sku! };
      const results = { ...stored, environment: { ...stored.environment, gpu } };
      return { results, label: 'the stored run fixture' };
    };
    const { args, lines } = await harnessArgs(true, undefined, undefined, undefined, gemm, balance);
    const file = args[args.indexOf('--ceilings') + 1]!;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      copy_gbps: stored.environment.ceilings!.copy_gbps,
      gemm_tflops: stored.environment.ceilings!.gemm_tflops,
      source: `the stored run fixture, ${stored.run.started_at}`,
    });
    expect(lines.filter((l) => l.startsWith('kernelgate: ceilings:'))).toHaveLength(1);
    // one look-up serves the ceilings and the lanes' order
    expect(asked.length).toBeLessThanOrEqual(1);
  });

  it('run.verify_identical: all reaches the harness as --verify-identical all', async () => {
    const { args } = await harnessArgs(true, 'all');
    expect(
      args.slice(args.indexOf('--verify-identical'), args.indexOf('--verify-identical') + 2),
    ).toEqual(['--verify-identical', 'all']);
  });
});
