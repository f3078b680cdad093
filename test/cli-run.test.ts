// `kernelgate run` end to end on this machine: real nvcc builds, the real Python harness on the
// CPU (Triton under TRITON_INTERPRET=1, tiny CI shapes), the baseline store, judging and the
// report — the same path the GPU runner takes, minus the GPU.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';
import { capture } from './support/cli-io.js';

const REPO = resolve('.');

describe('kernelgate run (usage)', () => {
  it.each([
    [
      ['run', '--save-baseline'],
      'kernelgate run: --save-baseline needs --branch: baselines are stored per branch',
    ],
    [['run', '--kind', 'weekly'], 'kernelgate run: --kind must be pr or nightly (got "weekly")'],
    [
      ['build', '--only', 'attention,../x'],
      'kernelgate build: --only takes kernel folder names, got "../x"',
    ],
    [
      ['run', '--only', 'nosuch'],
      "kernelgate run: unknown kernel 'nosuch' in --only: known kernels are attention, bsr_gemm, gemm",
    ],
    [
      ['build', '--only', 'gemm,atention'],
      "kernelgate build: unknown kernel 'atention' in --only: known kernels are attention, bsr_gemm, gemm",
    ],
  ])('%j is refused with a clear message', async (argv, message) => {
    const { out, io } = capture(REPO);
    expect(await runCli(argv, io)).toBe(2);
    expect(out.stderr.split('\n')[0]).toBe(message);
  });
});

describeWithVenv('kernelgate run (CPU, real harness)', () => {
  it(
    'push stores a baseline; a pull request run is judged against it',
    { timeout: 600_000 },
    async () => {
      const ws = mkdtempSync(join(tmpdir(), 'kg-cli-run-'));
      mkdirSync(join(ws, 'kernels'));
      symlinkSync(join(REPO, 'kernels', 'attention'), join(ws, 'kernels', 'attention'));
      // what the attention kernel imports of kernelgate's kernels (the harness brings none)
      symlinkSync(join(REPO, 'kernels', 'common'), join(ws, 'kernels', 'common'));
      writeFileSync(
        join(ws, 'kernelgate.yml'),
        [
          'harness:',
          `  python: ${VENV_PYTHON}`,
          '  timeout_s: 300',
          // CPU: Triton under the interpreter, tiny shapes, short timing (the numbers mean nothing).
          '  args: [--ci, --device, cpu, --variants, triton_fa2, --seeds, "1", --time-cap-s, "0.05",',
          '         --warmup-s, "0", --first-warmup-s, "0"]',
          '',
        ].join('\n'),
      );
      process.env.TRITON_INTERPRET = '1';
      const push = capture(ws);
      const pushStatus = await runCli(
        ['run', '--branch', 'main', '--save-baseline', '--out-dir', 'push', '--out', 'push.md'],
        push.io,
      );
      expect([0, 1]).toContain(pushStatus);
      expect(push.out.stderr).toContain('== kernelgate build');
      expect(push.out.stderr).toMatch(
        /\[kernelgate\] attention\/triton_fa2 dtype=fp16,B=1,H=2,S=37,D=64,causal=false PASS/,
      );
      const pushed = JSON.parse(
        readFileSync(join(ws, 'push', 'results.json'), 'utf8'),
      ) as KernelgateResults;
      expect(pushed.builds?.map((b) => b.variant).sort()).toEqual([
        'cublas_attn',
        'cuda_fa2',
        'cuda_fa_wgmma',
      ]);
      const triton = pushed.cases.filter((c) => c.variant === 'triton_fa2');
      expect(triton.length).toBeGreaterThan(0);
      expect(triton.every((c) => c.correctness?.status === 'PASS')).toBe(true);
      expect(existsSync(join(ws, '.kernelgate', 'baselines', 'main'))).toBe(true);

      const pr = capture(ws);
      const prStatus = await runCli(
        ['run', '--base', 'main', '--out-dir', 'pr', '--out', 'pr.md'],
        pr.io,
      );
      expect([0, 1]).toContain(prStatus);
      expect(pr.out.stderr).toContain('cached');
      const report = readFileSync(join(ws, 'pr.md'), 'utf8');
      expect(report).toContain('compared with the baseline');
      expect(pr.out.stdout).toMatch(/^kernelgate: (PASS|FAIL) \(\d+ cases: /);
    },
  );
});
