// Tails on the GPU (issue 30): a softmax that pads its last block with 0 instead of -inf is right
// on its power-of-two timed cases and wrong on every tail. The real harness (on the CPU here, under
// TRITON_INTERPRET=1) verifies the manifest's ci_cases after the timed cases, untimed, into the
// document's `tails`; the gate fails on them and the report names each case. The same document
// without `tails` (every run before) passes: the timed cases alone never showed the bug.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults, type KernelgateResults } from '../src/results/index.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const ROOT = join(import.meta.dirname, '..');
const REPO = join(ROOT, 'test', 'fixtures', 'tail-repo');
const TAIL = 'tail correctness FAIL (ci_cases, verified on the device, untimed)';

describeWithVenv('a tail bug fails the gate through the tails', () => {
  let results: KernelgateResults;
  let log: string;
  const config = loadConfig(REPO);

  beforeAll(() => {
    const out = join(mkdtempSync(join(tmpdir(), 'kg-tails-')), 'results.json');
    const harness = [join(ROOT, 'python', 'kernelgate_launch.py'), 'kernelgate_harness'];
    const options = ['--kernels', 'kernels', '--out', out, '--device', 'cpu', '--seeds', '1'];
    const timing = ['--time-cap-s', '0.1', '--min-samples', '3', '--warmup-s', '0'];
    log = execFileSync(VENV_PYTHON, [...harness, ...options, ...timing, '--first-warmup-s', '0'], {
      cwd: REPO,
      encoding: 'utf8',
      env: {
        ...process.env,
        TRITON_INTERPRET: '1',
        ONEDNN_MAX_CPU_ISA: 'AVX512_CORE_BF16',
        PYTHONPATH: join(ROOT, 'python'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    results = loadResults(out);
  }, 300_000);

  it('times the power-of-two cases, all right, and verifies the tails apart', () => {
    expect(results.cases.map((c) => `${c.variant} ${c.case} ${c.status}`)).toEqual([
      'torch_softmax dtype=fp32,R=4,W=64 ok',
      'triton_softmax dtype=fp32,R=4,W=64 ok',
      'triton_zero_pad dtype=fp32,R=4,W=64 ok',
      'torch_softmax dtype=fp32,R=4,W=256 ok',
      'triton_softmax dtype=fp32,R=4,W=256 ok',
      'triton_zero_pad dtype=fp32,R=4,W=256 ok',
    ]);
    // W=64 is a tail in ci_cases and a timed case: verified once, with the timed cases.
    expect((results.tails ?? []).map((t) => `${t.variant} ${t.case} ${t.status}`)).toEqual([
      'torch_softmax dtype=fp32,R=3,W=7 ok',
      'triton_softmax dtype=fp32,R=3,W=7 ok',
      'triton_zero_pad dtype=fp32,R=3,W=7 fail',
      'torch_softmax dtype=fp32,R=3,W=100 ok',
      'triton_softmax dtype=fp32,R=3,W=100 ok',
      'triton_zero_pad dtype=fp32,R=3,W=100 fail',
      'torch_softmax dtype=fp32,R=3,W=257 ok',
      'triton_softmax dtype=fp32,R=3,W=257 ok',
      'triton_zero_pad dtype=fp32,R=3,W=257 fail',
    ]);
    expect(log).toMatch(/; tails: 6 verified, 3 not verified; results in /);
  });

  it('fails the gate on each wrong tail, naming the case, and the report says so', () => {
    const { verdict, rendered } = judge(results, undefined, config, 'pr');
    expect(verdict.verdict).toBe('fail');
    const tail = (w: number, rel: string, seedRel: string) =>
      `softmax/triton_zero_pad dtype=fp32,R=3,W=${w}: ${TAIL}: rel_l2 ${rel} > tol 1e-5; ` +
      `seed 0: rel_l2 ${seedRel} > tolerance 1.0e-05`;
    expect(verdict.reasons).toEqual([
      tail(7, '8.1e-1', '8.092e-01'),
      tail(100, '1.5e-1', '1.462e-01'),
      tail(257, '1.1e-1', '1.090e-01'),
    ]);
    expect(rendered.full).toContain(
      '- ❌ **softmax/triton\\_zero\\_pad** wrong on 3 of 3 tail cases (ci\\_cases, verified on the device, untimed): ' +
        'dtype=fp32,R=3,W=7; dtype=fp32,R=3,W=100; dtype=fp32,R=3,W=257 (rel\\_l2 1.1e-1 … 8.1e-1, tolerance 1e-5)\n',
    );
  });

  it('passes the same run without its tails: the timed cases alone never show the bug', () => {
    const withoutTails: KernelgateResults = { ...results };
    delete withoutTails.tails;
    expect(judge(withoutTails, undefined, config, 'pr').verdict.verdict).toBe('pass');
  });
});
