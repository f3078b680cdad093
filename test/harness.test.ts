import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { harnessArgs, runHarness, type ProgressLog } from '../src/measure/index.js';

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
      '-m',
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

  it('streams lines grouped per kernel, keeps the whole log, and sets PYTHONPATH', async () => {
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
      `info PYTHONPATH=/opt/kernelgate/python:${dir}${process.env.PYTHONPATH ? ':' + process.env.PYTHONPATH : ''}`,
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
});
