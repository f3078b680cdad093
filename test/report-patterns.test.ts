// Failure patterns found over every case parameter (issue 30): a softmax wrong on widths that are
// no multiple of its block (7, 100, 257) was reported "only where dtype=fp16|bf16", the first axis
// the failures restricted, though fp16 and bf16 at W=64 passed. The pattern named now is the one
// that separates the failing cases from the passing ones.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import type { CaseResult, KernelgateResults } from '../src/results/index.js';

const config = loadConfig(join(import.meta.dirname, 'fixtures', 'tail-repo'));

function result(dtype: string, w: number, wrong: boolean): CaseResult {
  const rel = wrong ? 0.15 : 1e-7;
  return {
    kernel: 'softmax',
    variant: 'triton_zero_pad',
    case: `dtype=${dtype},R=4,W=${w}`,
    params: { dtype, R: 4, W: w },
    status: wrong ? 'fail' : 'ok',
    correctness: {
      status: wrong ? 'FAIL' : 'PASS',
      rel_l2: rel,
      max_abs: rel,
      nan_count: 0,
      inf_count: 0,
      unwritten_count: 0,
      seeds: [0],
      tol_rel_l2: 1e-5,
    },
  };
}

/** fp16 and bf16 at every width, fp32 at the powers of two; wrong where `wrong` says. */
function run(wrong: (dtype: string, w: number) => boolean): KernelgateResults {
  const cases = [
    ...['fp16', 'bf16'].flatMap((d) => [7, 64, 100, 257].map((w) => result(d, w, wrong(d, w)))),
    ...[64, 256].map((w) => result('fp32', w, wrong('fp32', w))),
  ];
  return {
    schema: 'kernelgate/results@1',
    run: { started_at: '2026-11-26T00:00:00Z', harness: 'test' },
    environment: { gpu: { name: 'none', sku: 'none' } },
    diagnostics: [],
    kernels: [
      { name: 'softmax', variants: [{ name: 'triton_zero_pad', role: 'candidate', status: 'ok' }] },
    ],
    cases,
  };
}

function wrongLine(results: KernelgateResults): string | undefined {
  const { full } = judge(results, undefined, config, 'pr').rendered;
  return full.split('\n').find((l) => l.startsWith('- ❌ **softmax/triton\\_zero\\_pad** wrong'));
}

describe('failure patterns over all case parameters', () => {
  it('names the width that separates failing from passing, not the first axis restricted', () => {
    expect(wrongLine(run((_d, w) => w % 64 !== 0))).toBe(
      '- ❌ **softmax/triton\\_zero\\_pad** wrong on 6 of 10 cases (only where W=7\\|100\\|257): ' +
        'rel\\_l2 above tolerance (rel\\_l2 1.5e-1, tolerance 1e-5). E.g. dtype=fp16,R=4,W=7: rel\\_l2 1.5e-1 &gt; tol 1e-5',
    );
  });

  it('names two axes when only both together separate them', () => {
    expect(wrongLine(run((d, w) => d === 'bf16' && w !== 64))).toBe(
      '- ❌ **softmax/triton\\_zero\\_pad** wrong on 3 of 10 cases (only where dtype=bf16, W=7\\|100\\|257): ' +
        'rel\\_l2 above tolerance (rel\\_l2 1.5e-1, tolerance 1e-5). E.g. dtype=bf16,R=4,W=7: rel\\_l2 1.5e-1 &gt; tol 1e-5',
    );
  });

  it('claims no pattern where no axis, nor two, separates them', () => {
    const scattered = new Set(['fp16/7', 'bf16/100', 'fp32/256']);
    expect(wrongLine(run((d, w) => scattered.has(`${d}/${w}`)))).toBe(
      '- ❌ **softmax/triton\\_zero\\_pad** wrong on 3 of 10 cases: ' +
        'rel\\_l2 above tolerance (rel\\_l2 1.5e-1, tolerance 1e-5). E.g. dtype=fp16,R=4,W=7: rel\\_l2 1.5e-1 &gt; tol 1e-5',
    );
  });
});
