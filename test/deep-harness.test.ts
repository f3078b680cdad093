// kernelgate deep's commands run for real on the CPU: a stand-in compute-sanitizer that runs the
// command it is given (the real harness, under TRITON_INTERPRET=1) and adds the summary line the
// real tool prints for a clean run. What this proves is the harness side: the runner's arguments
// are ones the harness takes, it runs the one variant on the one case, and the run's status comes
// from what the harness recorded (a variant it skipped is not checked, never a clean pass).
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { runDeep } from '../src/deep/index.js';
import { actionsExec } from '../src/lib/index.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const ROOT = join(import.meta.dirname, '..');

describeWithVenv('kernelgate deep through the real harness', () => {
  const saved = process.env['TRITON_INTERPRET'];
  beforeAll(() => {
    process.env['TRITON_INTERPRET'] = '1';
  });
  afterAll(() => {
    if (saved === undefined) delete process.env['TRITON_INTERPRET'];
    else process.env['TRITON_INTERPRET'] = saved;
  });

  it(
    'runs each variant alone on its smallest case under the tool',
    { timeout: 600_000 },
    async () => {
      const bin = mkdtempSync(join(tmpdir(), 'kg-deep-sanitizer-'));
      const sanitizer = join(bin, 'compute-sanitizer');
      writeFileSync(
        sanitizer,
        [
          '#!/usr/bin/env bash',
          '# A stand-in: drop the tool options (--tool X --target-processes all), run the rest.',
          'while [[ $1 == --* ]]; do shift 2; done',
          'echo "========= COMPUTE-SANITIZER"',
          '"$@"; rc=$?',
          'echo "========= ERROR SUMMARY: 0 errors"',
          'exit $rc',
          '',
        ].join('\n'),
      );
      chmodSync(sanitizer, 0o755);
      const out = mkdtempSync(join(tmpdir(), 'kg-deep-out-'));
      const config = loadConfig(ROOT);
      const { deep, diagnostics } = await runDeep(
        config,
        {
          workspace: ROOT,
          harnessRoot: ROOT,
          python: VENV_PYTHON,
          kernelsDir: 'kernels',
          outDir: out,
          checks: ['memcheck'],
          only: ['attention'],
          sanitizerPath: sanitizer,
          jobs: 1,
        },
        actionsExec(),
      );
      expect(diagnostics).toEqual([]);
      const runs = deep.sanitizer ?? [];
      expect(runs.map((s) => [s.variant, s.case, s.status])).toEqual([
        ['triton_fa2', 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false', 'clean'],
        ['cuda_fa2', 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false', 'skipped'],
        ['cuda_fa_wgmma', 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false', 'skipped'],
      ]);
      // No CUDA here: the harness skipped them, the run says so (not checked, never clean), and
      // no other case is tried for a skip that is the same on every case.
      expect(runs[1]?.reason).toBe(
        'the harness skipped it on dtype=fp16,B=2,H=3,S=77,D=64,causal=false (CUDA variant; this run is on cpu)',
      );
    },
  );

  it('profiles one launch through profile_one', { timeout: 600_000 }, async () => {
    const bin = mkdtempSync(join(tmpdir(), 'kg-deep-ncu-'));
    const ncu = join(bin, 'ncu');
    // A stand-in: --import prints the raw page recorded on the H100; a profile drops ncu's options and
    // runs the rest on the CPU (profile_one without the profiler).
    writeFileSync(
      ncu,
      [
        '#!/usr/bin/env bash',
        `if [[ $1 == --import ]]; then cat ${join(ROOT, 'test/fixtures/deep/ncu-raw.csv')}; exit 0; fi`,
        'while [[ $1 == --* ]]; do if [[ $1 == --force-overwrite ]]; then shift; else shift 2; fi; done',
        '"$@" --device cpu',
        '',
      ].join('\n'),
    );
    chmodSync(ncu, 0o755);
    const out = mkdtempSync(join(tmpdir(), 'kg-deep-out-'));
    const params = { dtype: 'fp16', B: 2, H: 3, S: 77, D: 64, causal: false };
    const caseId = 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false';
    const { deep, diagnostics } = await runDeep(
      loadConfig(ROOT),
      {
        workspace: ROOT,
        harnessRoot: ROOT,
        python: VENV_PYTHON,
        kernelsDir: 'kernels',
        outDir: out,
        checks: ['ncu-slower'],
        slower: [
          { kernel: 'attention', variant: 'triton_fa2', caseId, params },
          { kernel: 'attention', variant: 'cuda_fa2', caseId, params },
        ],
        ncuPath: ncu,
      },
      actionsExec(),
    );
    expect(diagnostics).toEqual([]);
    expect(deep.ncu?.map((n) => [n.variant, n.status, n.message ?? n.device_kernel])).toEqual([
      ['triton_fa2', 'ok', '_attn_fwd'],
      [
        'cuda_fa2',
        'error',
        // On the CPU the CUDA variant refuses before it would look for its library.
        'the variant cannot run the case: CUDA variant; this run is on cpu',
      ],
    ]);
    expect(readFileSync(join(out, 'ncu', 'attention-triton_fa2.log'), 'utf8')).toContain(
      `[kernelgate profile] attention/triton_fa2 ${caseId}: ran once between the profiler's start and stop`,
    );
  });
});
