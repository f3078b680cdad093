// Issue 30: a pull request that changes its own tolerance or manifest is named in the report. The
// harness verifies the head with the head's tolerances, so a loosened tolerance is what lets the
// head pass; the judge reads the base revision's kernel.yml files from the paired run's base
// checkout (results run.paired_base.root) and the findings name each change, escaped.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { toleranceText } from '../src/report/manifest-changes.js';
import { type KernelgateResults, loadResults } from '../src/results/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const ATTENTION = join('kernels', 'attention', 'kernel.yml');

/** A copy of the fixture repository, with `edit` applied to attention's kernel.yml. */
function checkout(edit: (text: string) => string = (t) => t): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-manifests-'));
  cpSync(join(fixtures, 'config', 'valid'), root, { recursive: true });
  const file = join(root, ATTENTION);
  writeFileSync(file, edit(readFileSync(file, 'utf8')));
  return root;
}

/** The fixture run, paired against the base checkout at `root`. */
function pairedWith(root: string | undefined): KernelgateResults {
  const results = loadResults(join(fixtures, 'results', 'aa-current.json'));
  if (root !== undefined) results.run.paired_base = { root, git_sha: 'b'.repeat(40) };
  return results;
}

/** The lines of the report's findings that name a manifest change, in order. */
function manifestLines(full: string): string[] {
  return full
    .split('\n')
    .filter((l) => l.includes('this pull request') || l.includes("base revision's configuration"));
}

const HEAD_EDIT = (text: string) =>
  text
    .replace('fp16: { rel_l2: 2.0e-3 }', 'fp16: { rel_l2: 5.0e-2 }')
    .replace('bf16: { rel_l2: 1.0e-2 }', 'bf16: { rel_l2: 5.0e-3, max_abs: 0.25 }')
    .replace(
      'cases:\n',
      'ci_cases:\n  - { dtype: fp16, B: 1, H: 2, S: [7, 100], D: 64, causal: "<img src=x> *b*" }\ncases:\n',
    )
    .replace('  - { name: sdpa_cudnn, role: reference, backend: torch }\n', '');

describe("a pull request's own manifest changes, against its base revision's", () => {
  it('names each change in the findings, a loosened tolerance first among them with ⚠️', () => {
    const head = loadConfig(checkout(HEAD_EDIT));
    const { rendered } = judge(pairedWith(checkout()), undefined, head, 'pr');
    expect(manifestLines(rendered.full)).toEqual([
      "- ⚠️ this pull request loosens attention's fp16 rel\\_l2 from 2e-3 to 5e-2",
      "- 📝 this pull request tightens attention's bf16 rel\\_l2 from 1e-2 to 5e-3",
      "- 📝 this pull request tightens attention's bf16 tolerance with a max\\_abs of 2.5e-1",
      "- 📝 this pull request changes attention's ci\\_cases: adds 1 group (dtype=fp16, B=1, H=2, S=7\\|100, D=64, causal=&lt;img src=x&gt; \\*b\\*)",
      "- 📝 this pull request changes attention's variants: removes 1 variant (sdpa\\_cudnn)",
    ]);
    // The short comment carries them too: a reviewer reads them without opening the summary.
    expect(rendered.comment).toContain(
      "⚠️ this pull request loosens attention's fp16 rel\\_l2 from 2e-3 to 5e-2",
    );
  });

  it('names a tightened tolerance, a dropped bound, cases and kernels added or removed', () => {
    const base = checkout((t) =>
      t.replace('fp16: { rel_l2: 2.0e-3 }', 'fp16: { rel_l2: 2.0e-3, max_abs: 1.0e-1 }'),
    );
    const headRoot = checkout((t) =>
      t
        .replace('fp16: { rel_l2: 2.0e-3 }', 'fp16: { rel_l2: 1.25e-3 }')
        .replace('  bf16: { rel_l2: 1.0e-2 }\n', '')
        .replace('dtype: [fp16, bf16]', 'dtype: fp16'),
    );
    cpSync(join(headRoot, 'kernels', 'gemm'), join(base, 'kernels', 'gemm_old'), {
      recursive: true,
    });
    const old = join(base, 'kernels', 'gemm_old', 'kernel.yml');
    writeFileSync(old, readFileSync(old, 'utf8').replace(/^name: gemm$/m, 'name: gemm_old'));
    const { rendered } = judge(pairedWith(base), undefined, loadConfig(headRoot), 'pr');
    expect(manifestLines(rendered.full)).toEqual([
      "- ⚠️ this pull request removes attention's bf16 tolerance (rel\\_l2 1e-2)",
      "- ⚠️ this pull request loosens attention's fp16 tolerance: drops its max\\_abs of 1e-1",
      "- 📝 this pull request tightens attention's fp16 rel\\_l2 from 2e-3 to 1.25e-3",
      "- 📝 this pull request changes attention's cases: adds 1 group (dtype=fp16, B=16, H=96, S=4096, D=128\\|64, causal=false\\|true) and removes 1 group (dtype=fp16\\|bf16, B=16, H=96, S=4096, D=128\\|64, causal=false\\|true)",
      '- 📝 this pull request removes the kernel gemm\\_old',
    ]);
  });

  it('names nothing when the manifests are the same, the run is not paired, or it is the nightly', () => {
    const head = loadConfig(checkout());
    expect(
      manifestLines(judge(pairedWith(checkout()), undefined, head, 'pr').rendered.full),
    ).toEqual([]);
    const changed = loadConfig(checkout(HEAD_EDIT));
    expect(
      manifestLines(judge(pairedWith(undefined), undefined, changed, 'pr').rendered.full),
    ).toEqual([]);
    const elsewhere = pairedWith(join(tmpdir(), 'kg-no-such-base-checkout'));
    expect(manifestLines(judge(elsewhere, undefined, changed, 'pr').rendered.full)).toEqual([]);
    const night = judge(pairedWith(checkout()), undefined, changed, 'nightly');
    expect(manifestLines(night.rendered.full)).toEqual([]);
  });

  it("says so when the base revision's configuration cannot be read", () => {
    const base = checkout((t) => t.replace('module: kernels.attention.bench\n', ''));
    const head = loadConfig(checkout(HEAD_EDIT));
    const { rendered } = judge(pairedWith(base), undefined, head, 'pr');
    expect(manifestLines(rendered.full)).toEqual([
      `- ℹ️ the base revision's configuration (${base}) could not be read, so no change to a tolerance or a manifest is named: kernels/attention/kernel.yml: module is required`,
    ]);
  });

  it('writes a tolerance as a manifest does', () => {
    expect([0.002, 0.05, 0.0125, 1, 0.25, 1e-5].map(toleranceText)).toEqual([
      '2e-3',
      '5e-2',
      '1.25e-2',
      '1',
      '2.5e-1',
      '1e-5',
    ]);
  });
});
