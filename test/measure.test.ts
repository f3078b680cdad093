import { readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { scriptedExec } from '../src/lib/index.js';
import type { LineExec, ProgressLog } from '../src/measure/index.js';
import { measure, mergeEnvironment, pairedArgs } from '../src/measure/index.js';
import { startCheck } from '../src/pipeline/index.js';
import { InputError } from '../src/results/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { gemmWorkspace } from './support/gemm-workspace.js';

const H200_SMI = readFileSync('test/fixtures/env/h200-2026-11-21/nvidia-smi-q-x.xml', 'utf8');
const CURRENT = 'test/fixtures/results/aa-current.json';

const workspace = () => gemmWorkspace('kg-measure-');

function quietLog() {
  const lines: string[] = [];
  const log: ProgressLog & { warning(m: string): void } = {
    info: (l) => lines.push(l),
    startGroup: (n) => lines.push(`::group::${n}`),
    endGroup: () => lines.push('::endgroup::'),
    warning: (m) => lines.push(`warning: ${m}`),
  };
  return { lines, log };
}

describe('measure', () => {
  it('runs doctor, build and harness and merges them into one results file on disk', async () => {
    const ws = workspace();
    const config = loadConfig(ws);
    const exec = scriptedExec([{ match: 'nvidia-smi -q -x', result: { stdout: H200_SMI } }]);
    let harnessArgs: string[] = [];
    const fakeHarness: LineExec = async (_cmd, args, { onLine }) => {
      harnessArgs = args;
      const out = args[args.indexOf('--out') + 1]!;
      onLine('[kernelgate] == gemm (1 variants, 1 cases) ==');
      onLine('CUDA error: no kernel image is available for execution on the device');
      copyFileSync(CURRENT, out);
      return 0;
    };
    const { lines, log } = quietLog();
    const measured = await measure(
      {
        config,
        workspace: ws,
        harnessRoot: '/action',
        outDir: join(ws, 'out'),
        run: { git_sha: 'abc123' },
      },
      { exec, lineExec: fakeHarness, log },
    );
    expect(harnessArgs).toContain('--builds');
    expect(lines).toContain('::group::kernelgate doctor');
    const onDisk = JSON.parse(readFileSync(measured.resultsPath, 'utf8')) as KernelgateResults;
    expect(onDisk.run.git_sha).toBe('abc123');
    expect(Object.keys(onDisk.run.stage_seconds ?? {})).toEqual(
      expect.arrayContaining(['doctor', 'build', 'harness']),
    );
    // the harness's own readings win; the doctor's findings (real H200 capture) are kept
    const harnessEnv = (JSON.parse(readFileSync(CURRENT, 'utf8')) as KernelgateResults).environment;
    expect(onDisk.environment.driver_version).toBe(harnessEnv.driver_version);
    expect(onDisk.diagnostics.some((d) => d.source === 'doctor')).toBe(true);
    expect(onDisk.builds).toEqual([]);
    // a known runtime failure in the harness output becomes a named diagnostic
    expect(onDisk.diagnostics.map((d) => d.code)).toContain('cuda.no_kernel_image');
  });

  it('reads the check while the doctor runs; a problem it found stops the run before the build', async () => {
    const ws = workspace();
    const config = loadConfig(ws);
    const smi = scriptedExec([{ match: 'nvidia-smi -q -x', result: { stdout: H200_SMI } }]);
    let doctorStarted!: () => void;
    const doctorRan = new Promise<void>((done) => (doctorStarted = done));
    const exec: typeof smi = {
      ...smi,
      run: (command, args, options) => {
        if (command === 'nvidia-smi') doctorStarted();
        return smi.run(command, args, options);
      },
    };
    // the check settles only once the doctor has started: awaited before the doctor, it would hang
    const check = doctorRan.then(() => () => {
      throw new Error('kernelgate check: 1 problem in the configuration');
    });
    let harnessRan = false;
    const { lines, log } = quietLog();
    await expect(
      measure(
        { config, workspace: ws, harnessRoot: '/action', outDir: join(ws, 'out'), check },
        {
          exec,
          lineExec: async () => {
            harnessRan = true;
            return 0;
          },
          log,
        },
      ),
    ).rejects.toThrow('kernelgate check: 1 problem in the configuration');
    expect(lines[0]).toBe('::group::kernelgate doctor');
    expect(lines).toContain('::endgroup::');
    expect(lines).not.toContain('::group::kernelgate build');
    expect(harnessRan).toBe(false);
  });

  it("startCheck never rejects: the check's warnings are logged and its problems thrown when it is called", async () => {
    const ws = workspace();
    writeFileSync(
      join(ws, 'kernels', 'gemm', 'kernel.yml'),
      readFileSync(join(ws, 'kernels', 'gemm', 'kernel.yml'), 'utf8').replace('M: 64', 'M: "64"'),
    );
    const { lines, log } = quietLog();
    const settled = startCheck(
      { rootDir: ws, configFile: undefined },
      { harnessRoot: '/action', exec: scriptedExec([]), log },
    );
    const report = await settled; // resolves although the configuration has a problem
    expect(lines).toEqual([]);
    let thrown: unknown;
    try {
      report();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as Error).message.split('\n')).toEqual([
      'kernelgate check: 2 problems in the configuration (run `kernelgate check` to see them again):',
      'kernels/gemm/kernel.yml:3:23: cases[0].M is the text "64", not a number (got "64")',
      '  fix: write it without quotes (M: 64): quoted, the kernel module receives a string',
      'kernels/gemm/kernel.yml:2:1: module names no file of the repository (got "kernels.gemm.bench"; looked for kernels/gemm/bench.py)',
      '  fix: module is the dotted path from the repository root of the Python file with VARIANTS (e.g. kernels.gemm.bench for kernels/gemm/bench.py)',
    ]);
  });

  it('keeps a run whose harness died: an error diagnostic with the last lines, no cases', async () => {
    const ws = workspace();
    const config = loadConfig(ws);
    const dying: LineExec = async (_c, _a, { onLine }) => {
      onLine('Traceback (most recent call last):');
      onLine('ModuleNotFoundError: No module named torch');
      return 1;
    };
    const { lines, log } = quietLog();
    const measured = await measure(
      { config, workspace: ws, harnessRoot: '/action', outDir: join(ws, 'out') },
      { exec: scriptedExec([]), lineExec: dying, log },
    );
    expect(lines).toContain('warning: kernelgate: the harness wrote no results (exit status 1).');
    expect(measured.results.cases).toEqual([]);
    const died = measured.results.diagnostics.find((d) => d.code === 'harness.no_results');
    expect(died?.message).toBe(
      'The harness exited with status 1 before writing any results. Last lines:\n' +
        'Traceback (most recent call last):\nModuleNotFoundError: No module named torch',
    );
    expect(JSON.parse(readFileSync(measured.resultsPath, 'utf8')).cases).toEqual([]);
  });

  it('lets the harness readings win over the doctor and fills the gaps', () => {
    expect(
      mergeEnvironment(
        { gpu: { name: 'NVIDIA H200', sm_count: 132 }, libraries: { torch: '2.11.0' } },
        {
          gpu: { name: 'NVIDIA H200', sku: 'H200', sm_count: 0 },
          driver_version: '580.159.04',
          libraries: { triton: '3.6.0' },
        },
      ),
    ).toEqual({
      gpu: { name: 'NVIDIA H200', sku: 'H200', sm_count: 132 },
      driver_version: '580.159.04',
      libraries: { triton: '3.6.0', torch: '2.11.0' },
    });
  });

  it('derives the model from the raw facts and the GPU table, whatever the harness called it', () => {
    // A harness of before data/gpus.json named a GH200 "H200": it would have shared an H200's
    // baselines and peaks.
    const merged = mergeEnvironment(
      { gpu: { name: 'NVIDIA GH200 480GB', sku: 'H200' } },
      { gpu: { name: 'NVIDIA GH200 480GB', sku: 'GH200', pci_device_id: '234210de' } },
    );
    expect(merged.gpu).toEqual({
      name: 'NVIDIA GH200 480GB',
      sku: 'GH200',
      pci_device_id: '234210de',
    });
    expect(
      mergeEnvironment({ gpu: { name: 'NVIDIA H200 NVL', sku: 'H200' } }, { gpu: { name: 'x' } })
        .gpu.sku,
    ).toBe('H200-NVL');
    const cpu = { gpu: { name: 'none (CPU)', sku: 'none', count: 0 } };
    expect(mergeEnvironment(cpu, { gpu: { name: 'none', sku: 'none', count: 0 } }).gpu).toEqual(
      cpu.gpu,
    );
  });
});

describe('pairedArgs', () => {
  it("passes compare.paired's threshold, floor and confirmation (on unless turned off) to the harness", () => {
    const dir = workspace();
    const paired = {
      base: { root: '/w/base', sha: 'b'.repeat(40), ref: 'main' },
      kernelsDir: '/w/base/kernels',
      buildsPath: '/w/out/base-builds.json',
    };
    const confirmed = pairedArgs(paired, loadConfig(dir));
    writeFileSync(join(dir, 'kernelgate.yml'), 'compare: { paired: { confirm: false } }\n');
    const plain = pairedArgs(paired, loadConfig(dir));
    expect(plain).toEqual([
      '--base-root',
      '/w/base',
      '--base-kernels',
      '/w/base/kernels',
      '--base-builds',
      '/w/out/base-builds.json',
      '--base-sha',
      'b'.repeat(40),
      '--paired-threshold-pct',
      '1',
      '--paired-min-change-ms',
      '0.0008',
      '--base-ref',
      'main',
      '--paired-detect-pct',
      '0.5',
      '--paired-detect-min-ms',
      '1',
    ]);
    // The default since two H100s read an A/A offset of +1.2 % (docs/judging.md).
    const detect = plain.slice(-4);
    expect(confirmed).toEqual([...plain.slice(0, -4), '--paired-confirm', ...detect]);
    writeFileSync(
      join(dir, 'kernelgate.yml'),
      'compare: { paired: { confirm: false, detect_pct: 0 } }\n',
    );
    expect(pairedArgs(paired, loadConfig(dir))).toEqual(plain.slice(0, -4));
  });
});
