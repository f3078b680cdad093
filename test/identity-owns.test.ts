// Identity per variant (issue 27): a variant's own files (`owns`, `build.sources`) are left out of
// the other variants' keys, so a pull request that changes one variant's file times that variant
// (and its kernel's references, the A/A control), not the kernel's other variants. Computed from
// two real checkouts of a small git repository, the base as the worktree a pull request's run makes.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import {
  compareIdentities,
  identicalArgs,
  variantIdentities,
  type IdentitySide,
} from '../src/measure/index.js';
import type { Environment } from '../src/results/index.js';
import { prCheckouts, write } from './support/pr-checkouts.js';

const ENV: Environment = {
  gpu: { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' },
  driver_version: '580.159.04',
  libraries: { torch: '2.11.0+cu130', triton: '3.6.0' },
};

const VARIANTS = [
  '  - {name: fa2, role: candidate, owns: [fa2_impl.py]}',
  '  - {name: fa3, role: candidate, owns: [fa3_impl.py]}',
  '  - {name: naive, role: candidate}',
  '  - {name: cuda, role: candidate, build: {sources: [cuda/k.cu]}}',
  '  - {name: sdpa, role: reference}',
];

const manifest = (variants: string[]) =>
  [
    'name: attention',
    'module: kernels.attention.bench',
    'cases: [{dtype: fp16, n: [64, 128]}]',
    'tolerance: {fp16: {rel_l2: 0.002}}',
    'variants:',
    ...variants,
    '',
  ].join('\n');

/** bench.py imports both implementations; fa3's imports fa2's (a helper) and a common module. */
const FILES: Record<string, string> = {
  'kernels/__init__.py': '',
  'kernels/common/__init__.py': '',
  'kernels/common/tiles.py': 'TILE = 64\n',
  'kernels/attention/__init__.py': '',
  'kernels/attention/kernel.yml': manifest(VARIANTS),
  'kernels/attention/bench.py': 'from kernels.attention import fa2_impl, fa3_impl\n',
  'kernels/attention/fa2_impl.py': 'def run():\n    return 2\n',
  'kernels/attention/fa3_impl.py':
    'from kernels.attention.fa2_impl import run as helper\nfrom kernels.common import tiles\n',
  'kernels/attention/cuda/k.cu': '__global__ void k() {}\n',
  'python/kernelgate_harness/__init__.py': 'HARNESS_VERSION = "1"\n',
  'python/kernelgate_launch.py': '',
};

/** The base commit, then `change` committed as the head; both sides as a pull request's run has them. */
async function sides(change: Record<string, string>) {
  const { ws, baseRoot } = await prCheckouts(FILES, change, 'kg-owns-');
  const side = (root: string): IdentitySide => ({
    root,
    config: loadConfig(root),
    builds: [],
    harnessRoot: root,
  });
  return { head: side(ws), base: side(baseRoot) };
}

/** variant → why (identical when identical), the CUDA variant's build left aside. */
function verdicts(s: { head: IdentitySide; base: IdentitySide }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of compareIdentities(
    variantIdentities(s.head, ENV),
    variantIdentities(s.base, ENV),
  )) {
    out[v.variant] = v.identical ? 'identical' : v.why;
  }
  return out;
}

const REFERENCE = 'a reference variant: timed as the A/A control';
const NO_BUILD = 'its build cannot be compared (no build record)';

describe('identity per variant: owns', () => {
  it("a change to a variant's own file makes only that variant differ, and what imports it", async () => {
    const s = await sides({ 'kernels/attention/fa2_impl.py': 'def run():\n    return 3\n' });
    expect(verdicts(s)).toEqual({
      fa2: 'sources differ: kernels/attention/fa2_impl.py (its own)',
      // fa3's own file imports fa2's: what a variant's own files import is in its key
      fa3: 'sources differ: kernels/attention/fa2_impl.py',
      naive: 'identical',
      cuda: NO_BUILD,
      sdpa: REFERENCE,
    });
    const only = await sides({
      'kernels/attention/fa3_impl.py':
        'from kernels.attention.fa2_impl import run as helper\nfrom kernels.common import tiles  # x\n',
    });
    expect(verdicts(only)).toMatchObject({
      fa2: 'identical',
      fa3: 'sources differ: kernels/attention/fa3_impl.py (its own)',
      naive: 'identical',
      sdpa: REFERENCE,
    });
  });

  it("a CUDA variant's build.sources are its own: a change there leaves the Triton variants identical", async () => {
    const s = await sides({ 'kernels/attention/cuda/k.cu': '__global__ void k() { }\n' });
    expect(verdicts(s)).toEqual({
      fa2: 'identical',
      fa3: 'identical',
      naive: 'identical',
      cuda: 'sources differ: kernels/attention/cuda/k.cu (its own)',
      sdpa: REFERENCE,
    });
  });

  it('a change to a file no variant owns makes every variant differ', async () => {
    const s = await sides({
      'kernels/attention/bench.py': 'from kernels.attention import fa2_impl, fa3_impl  # x\n',
    });
    expect(verdicts(s)).toEqual({
      fa2: 'sources differ: kernels/attention/bench.py',
      fa3: 'sources differ: kernels/attention/bench.py',
      naive: 'sources differ: kernels/attention/bench.py',
      cuda: 'sources differ: kernels/attention/bench.py',
      sdpa: REFERENCE,
    });
    // a module that a variant's own file imports, owned by nobody, is everyone's
    const common = await sides({ 'kernels/common/tiles.py': 'TILE = 128\n' });
    expect(verdicts(common)['fa2']).toBe('sources differ: kernels/common/tiles.py');
    expect(verdicts(common)['naive']).toBe('sources differ: kernels/common/tiles.py');
  });

  it('a claim taken back makes every variant whose key gains the file differ', async () => {
    const s = await sides({
      'kernels/attention/kernel.yml': manifest([
        '  - {name: fa2, role: candidate}',
        ...VARIANTS.slice(1),
      ]),
    });
    expect(verdicts(s)).toEqual({
      fa2: 'its manifest entry differs',
      fa3: 'identical',
      naive: 'sources differ: kernels/attention/fa2_impl.py',
      cuda: 'sources differ: kernels/attention/fa2_impl.py',
      sdpa: REFERENCE,
    });
  });

  it('the log says why a variant of a changed kernel is not timed, and identity.json says it too', async () => {
    const s = await sides({ 'kernels/attention/cuda/k.cu': '__global__ void k() { }\n' });
    const out = mkdtempSync(join(tmpdir(), 'kg-owns-out-'));
    const lines: string[] = [];
    expect(identicalArgs(s.head, s.base, ENV, out, (l) => lines.push(l))).toEqual([
      '--identical',
      'attention.fa2,attention.fa3,attention.naive',
    ]);
    const because =
      "what changed in attention is other variants' own: kernels/attention/cuda/k.cu (attention/cuda)";
    expect(lines).toEqual([
      'kernelgate: identity: 3 of 5 variant(s) identical in base and head, verified but not timed: attention/fa2, attention/fa3, attention/naive',
      'kernelgate: identity: attention/cuda is timed: sources differ: kernels/attention/cuda/k.cu (its own)',
      `kernelgate: identity: attention/sdpa is timed: ${REFERENCE}`,
      `kernelgate: identity: attention/fa2 is not timed: ${because}`,
      `kernelgate: identity: attention/fa3 is not timed: ${because}`,
      `kernelgate: identity: attention/naive is not timed: ${because}`,
    ]);
    const written = JSON.parse(readFileSync(join(out, 'identity.json'), 'utf8')) as unknown[];
    expect(written[0]).toEqual({
      kernel: 'attention',
      variant: 'fa2',
      identical: true,
      why: 'identical build and sources',
      note: because,
    });
  });
});

describe('owns in kernel.yml: the claims are checked', () => {
  const load = (variants: string[], extra: Record<string, string> = {}) => {
    const root = mkdtempSync(join(tmpdir(), 'kg-owns-bad-'));
    write(root, { ...FILES, 'kernels/attention/kernel.yml': manifest(variants), ...extra });
    try {
      loadConfig(root);
    } catch (error) {
      return (error as Error).message;
    }
    return 'loaded';
  };

  it('a file owned by two variants is refused, naming both fields and the file', () => {
    expect(
      load([
        '  - {name: fa2, role: candidate, owns: [fa2_impl.py]}',
        '  - {name: fa3, role: candidate, owns: [fa3_impl.py, ./fa2_impl.py]}',
      ]),
    ).toBe(
      'kernels/attention/kernel.yml: variants[1].owns[1] is already claimed by variant fa2 (variants[0].owns[0]): a file is one variant\'s own or every variant\'s (got "./fa2_impl.py")',
    );
    // another variant's build.sources claim it too
    expect(
      load([
        '  - {name: fa2, role: candidate, owns: [cuda/k.cu]}',
        '  - {name: cuda, role: candidate, build: {sources: [cuda/k.cu]}}',
      ]),
    ).toContain(
      'variants[0].owns[0] is already claimed by variant cuda (variants[1].build.sources[0]): a file is one variant\'s own or every variant\'s (got "cuda/k.cu")',
    );
  });

  it('a path outside the kernel folder and a file that does not exist are refused', () => {
    expect(
      load(['  - {name: fa2, role: candidate, owns: [../common/tiles.py, fa9.py, cuda]}']),
    ).toBe(
      [
        'kernels/attention/kernel.yml: variants[0].owns[0] must be a path inside the kernel folder kernels/attention (got "../common/tiles.py")',
        'kernels/attention/kernel.yml: variants[0].owns[1] is not a file in kernels/attention (got "fa9.py")',
        'kernels/attention/kernel.yml: variants[0].owns[2] is not a file in kernels/attention (got "cuda")',
      ].join('\n'),
    );
    expect(load(['  - {name: fa2, role: candidate, owns: [/etc/passwd]}'])).toContain(
      'variants[0].owns[0] must be a path inside the kernel folder kernels/attention (got "/etc/passwd")',
    );
  });

  it('the real kernels load with their owns', () => {
    const config = loadConfig('.');
    const owns = Object.fromEntries(
      config.kernels.flatMap((k) =>
        k.manifest.variants
          .filter((v) => v.owns !== undefined)
          .map((v) => [`${k.manifest.name}/${v.name}`, v.owns]),
      ),
    );
    expect(owns).toEqual({
      'attention/triton_fa2': ['triton_fa2.py'],
      'bsr_gemm/triton_bsr': ['triton_bsr.py'],
    });
  });
});
