import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harnessArgs, runHarness, type ProgressLog } from '../src/measure/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const REPO = resolve(import.meta.dirname, '..');

function recordingLog() {
  const events: string[] = [];
  const log: ProgressLog = {
    info: (line) => events.push(`info ${line}`),
    startGroup: (name) => events.push(`group ${name}`),
    endGroup: () => events.push('endgroup'),
  };
  return { events, log };
}

// A stand-in for python: prints progress like the harness and writes the file named after --out.
const FAKE_PYTHON = `#!/usr/bin/env bash
out=""; prev=""
for a in "$@"; do [[ $prev == --out ]] && out=$a; prev=$a; done
echo "[kernelgate] == attention (2 variants, 1 cases) =="
echo "[kernelgate] attention/triton dtype=fp16 PASS rel_l2=3.1e-04 | 7.2 ms"
echo "[kernelgate] == gemm (1 variants, 1 cases) =="
echo "[kernelgate] gemm/cublas dtype=bf16 PASS | 1.4 ms"
echo "PYTHONPATH=$PYTHONPATH"
echo "a warning on stderr" >&2
[[ -n $out ]] && echo '{}' > "$out" 2>/dev/null
exit \${FAKE_EXIT:-0}
`;

describe('harness', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kg-harness-'));
  const python = join(dir, 'python');
  writeFileSync(python, FAKE_PYTHON);
  chmodSync(python, 0o755);
  const base = {
    workspace: dir,
    harnessRoot: '/opt/kernelgate',
    python,
    kernelsDir: 'kernels',
    resultsPath: join(dir, 'out', 'results.json'),
    logPath: join(dir, 'out', 'harness.log'),
  };

  it('builds the documented command line', () => {
    expect(
      harnessArgs({
        ...base,
        buildsPath: 'b.json',
        only: ['attention', 'gemm'],
        timeoutPerCaseS: 90,
      }),
    ).toEqual([
      '/opt/kernelgate/python/kernelgate_launch.py',
      'kernelgate_harness',
      '--kernels',
      'kernels',
      '--out',
      base.resultsPath,
      '--builds',
      'b.json',
      '--only',
      'attention,gemm',
      '--timeout-per-case',
      '90',
    ]);
  });

  it('streams lines grouped per kernel, keeps the whole log, and sets PYTHONPATH without the workspace', async () => {
    const { events, log } = recordingLog();
    const run = await runHarness(base, log);
    expect(run.exitCode).toBe(0);
    expect(run.wroteResults).toBe(true);
    const shown = events.filter((e) => !e.startsWith('info kernelgate:'));
    // stdout and stderr arrive on separate pipes, so only stdout's order is asserted.
    expect(shown.filter((e) => e !== 'info a warning on stderr')).toEqual([
      'group == attention (2 variants, 1 cases) ==',
      'info [kernelgate] attention/triton dtype=fp16 PASS rel_l2=3.1e-04 | 7.2 ms',
      'endgroup',
      'group == gemm (1 variants, 1 cases) ==',
      'info [kernelgate] gemm/cublas dtype=bf16 PASS | 1.4 ms',
      `info PYTHONPATH=/opt/kernelgate/python${process.env.PYTHONPATH ? ':' + process.env.PYTHONPATH : ''}`,
      'endgroup',
    ]);
    expect(shown).toContain('info a warning on stderr');
    expect(readFileSync(base.logPath, 'utf8')).toContain('a warning on stderr\n');
  });

  it('reports a harness that died before writing results', async () => {
    const { log } = recordingLog();
    const run = await runHarness(
      { ...base, resultsPath: join(dir, 'never', 'r.json'), env: { FAKE_EXIT: '3' } },
      log,
    );
    expect(run.exitCode).toBe(3);
    expect(run.wroteResults).toBe(false);
    expect(run.logTail).toContain('[kernelgate] gemm/cublas dtype=bf16 PASS | 1.4 ms');
  });

  it("never takes an earlier run's results.json for this run's (issue 30: run --only nosuch)", async () => {
    const { log } = recordingLog();
    const resultsPath = join(dir, 'stale', 'results.json');
    mkdirSync(join(dir, 'stale'), { recursive: true });
    writeFileSync(resultsPath, '{"left": "by the run before"}');
    // the harness dies before it writes: the old file must not stand in for its results
    const run = await runHarness(
      { ...base, resultsPath, env: { FAKE_EXIT: '2' }, python: '/bin/false' },
      log,
    );
    expect(run.wroteResults).toBe(false);
  });
});

// A pull request that ships its own `kernelgate_harness/` (and a sitecustomize.py) must not replace
// the harness that measures it (issue 26): `python -m kernelgate_harness` in the workspace imported
// the workspace's package, which printed what it liked and exited 0.
const SHADOW_MAIN = `import sys
print("SHADOWED: the pull request's kernelgate_harness ran")
sys.exit(0)
`;

describeWithVenv('harness: the action’s copy, never the workspace’s', () => {
  it(
    'runs the real harness in a workspace with its own kernelgate_harness/ and sitecustomize.py',
    { timeout: 300_000 },
    async () => {
      const workspace = mkdtempSync(join(tmpdir(), 'kg-shadow-'));
      cpSync(join(REPO, 'test', 'fixtures', 'user-repo'), workspace, { recursive: true });
      mkdirSync(join(workspace, 'kernelgate_harness'));
      writeFileSync(join(workspace, 'kernelgate_harness', '__init__.py'), SHADOW_MAIN);
      writeFileSync(join(workspace, 'kernelgate_harness', '__main__.py'), SHADOW_MAIN);
      writeFileSync(join(workspace, 'sitecustomize.py'), SHADOW_MAIN);
      const { events, log } = recordingLog();
      const resultsPath = join(workspace, 'out', 'results.json');
      const run = await runHarness(
        {
          workspace,
          harnessRoot: REPO,
          python: VENV_PYTHON,
          kernelsDir: 'kernels',
          resultsPath,
          logPath: join(workspace, 'out', 'harness.log'),
          extraArgs: ['--time-cap-s', '0.2', '--seeds', '1', '--min-samples', '3'],
          env: { TRITON_INTERPRET: '1' },
        },
        log,
      );
      expect(run.log).not.toContain('SHADOWED');
      expect(run.exitCode, run.logTail).toBe(0);
      expect(events[0]).toBe(
        `info kernelgate: ${VENV_PYTHON} ${REPO}/python/kernelgate_launch.py kernelgate_harness --kernels kernels --out ${resultsPath} --time-cap-s 0.2 --seeds 1 --min-samples 3`,
      );
      // The workspace's own kernels/ package was imported by the workers, as before.
      const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as KernelgateResults;
      expect(results.cases.map((c) => `${c.variant} ${c.case} ${c.correctness?.status}`)).toEqual([
        'torch_axpb dtype=fp32,N=1000 PASS',
        'triton_axpb dtype=fp32,N=1000 PASS',
        'torch_axpb dtype=fp32,N=4096 PASS',
        'triton_axpb dtype=fp32,N=4096 PASS',
      ]);
    },
  );
});
