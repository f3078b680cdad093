// The doctor on captured machines (test/fixtures/env/): the real H200 capture, the same capture
// with one thing changed per case, seed 000's H100 rebuilt from its report, and a machine with no GPU.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from '../src/measure/index.js';
import {
  cudaForDriver,
  cudnnVersion,
  describeDoctor,
  gpuSku,
  runDoctor,
  type DoctorDeps,
} from '../src/measure/index.js';
import { scriptedExec, type ScriptedResponse } from '../src/lib/index.js';

const ENV_FIXTURES = path.resolve('test/fixtures/env');

interface Machine {
  smiXml?: string;
  nvccVersion?: string;
  probe?: string;
  env: Record<string, string>;
  dirs: Record<string, string[]>;
  files: Record<string, string>;
}

async function optional(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

/**
 * Reads a fixture folder. `libs.txt` is the capture's composite: `ldconfig -p` lines (tab-indented),
 * `ls` blocks (`/dir:` then names), `LD=<LD_LIBRARY_PATH>` and /proc/driver/nvidia/version.
 */
async function loadMachine(name: string): Promise<Machine> {
  const dir = path.join(ENV_FIXTURES, name);
  const machine: Machine = {
    smiXml: await optional(path.join(dir, 'nvidia-smi-q-x.xml')),
    nvccVersion: await optional(path.join(dir, 'nvcc-version.txt')),
    probe: await optional(path.join(dir, 'python-probe.json')),
    env: {},
    dirs: {},
    files: {},
  };
  const libs = await optional(path.join(dir, 'libs.txt'));
  let listing: string[] | undefined;
  const nvrm: string[] = [];
  for (const line of (libs ?? '').split('\n')) {
    if (line.startsWith('\t')) continue;
    if (/^\/\S*:$/.test(line)) {
      listing = [];
      machine.dirs[line.slice(0, -1)] = listing;
    } else if (line.startsWith('LD=')) {
      machine.env.LD_LIBRARY_PATH = line.slice(3);
      listing = undefined;
    } else if (/^(NVRM|GCC) version:/.test(line)) {
      nvrm.push(line);
      listing = undefined;
    } else if (line.trim() === '') {
      listing = undefined;
    } else {
      listing?.push(line.trim());
    }
  }
  if (nvrm.length > 0) machine.files['/proc/driver/nvidia/version'] = `${nvrm.join('\n')}\n`;
  return machine;
}

function deps(machine: Machine, extra: Partial<DoctorDeps> = {}): DoctorDeps {
  const responses: ScriptedResponse[] = [];
  if (machine.smiXml !== undefined)
    responses.push({ match: 'nvidia-smi -q -x', result: { stdout: machine.smiXml } });
  if (machine.nvccVersion !== undefined)
    responses.push({ match: 'nvcc --version', result: { stdout: machine.nvccVersion } });
  if (machine.probe !== undefined)
    responses.push({ match: /^python3 -c /, result: { stdout: machine.probe } });
  return {
    exec: scriptedExec(responses),
    env: machine.env,
    readFile: async (file) => machine.files[file],
    listDir: async (dir) => machine.dirs[dir],
    ...extra,
  };
}

function edit(
  machine: Machine,
  changes: Partial<Record<'smiXml' | 'probe', [string | RegExp, string][]>>,
): Machine {
  const apply = (text: string | undefined, pairs: [string | RegExp, string][] = []) =>
    pairs.reduce((t, [from, to]) => {
      const next = t?.replace(from, to);
      if (next === t) throw new Error(`fixture edit found nothing to replace: ${String(from)}`);
      return next;
    }, text);
  return {
    ...machine,
    smiXml: apply(machine.smiXml, changes.smiXml),
    probe: apply(machine.probe, changes.probe),
  };
}

describe('runDoctor on the real H200 capture', () => {
  it('reads nvidia-smi while the Python probe runs, and reports as before', async () => {
    // nvidia-smi answers only once the probe has started: read one after the other, this never
    // settles. Diagnostics keep their order (nvidia-smi's, nvcc's, the probe's).
    // no nvcc and a probe that prints no JSON: a diagnostic from each
    const machine = {
      ...(await loadMachine('h200-2026-11-21')),
      nvccVersion: undefined,
      probe: 'oops',
    };
    const plain = deps(machine);
    let probeStarted!: () => void;
    const started = new Promise<void>((resolve) => (probeStarted = resolve));
    const exec = {
      async run(command: string, args: string[], options = {}) {
        if (command === 'nvidia-smi') await started;
        if (command === 'python3') probeStarted();
        return plain.exec.run(command, args, options);
      },
    };
    const together = await runDoctor({ ...plain, exec });
    const apart = await runDoctor(deps(machine));
    expect(together.environment).toEqual(apart.environment);
    expect(together.diagnostics).toEqual(apart.diagnostics);
    expect(together.diagnostics.map((d) => d.code)).toEqual(apart.diagnostics.map((d) => d.code));
    // nvcc's before the probe's, as when they were read one after the other
    expect(together.diagnostics.map((d) => d.code)).toEqual([
      'toolkit.nvcc_not_found',
      'python.probe_failed',
    ]);
  });

  it('fills the environment from nvidia-smi, nvcc and the python probe', async () => {
    const report = await runDoctor(deps(await loadMachine('h200-2026-11-21')));
    expect(report.environment).toEqual({
      gpu: {
        name: 'NVIDIA H200',
        sku: 'H200',
        pci_device_id: '233510de',
        count: 1,
        compute_capability: '9.0',
        sm_count: 132,
        memory_bytes: 143771 * 1024 * 1024,
        l2_bytes: 62914560,
        sm_clock_max_mhz: 1980,
        mem_clock_max_mhz: 3201,
        power_limit_w: 700,
      },
      driver_version: '580.159.04',
      driver_cuda_version: '13.0',
      cuda_runtime_version: '13.0',
      cuda_toolkit_version: '13.0.88',
      libraries: {
        python: '3.12.3',
        torch: '2.11.0+cu130',
        triton: '3.6.0',
        cudnn: '9.19.0',
        nvidia_kernel_module: '580.159.04',
      },
    });
  });

  it('finds nothing wrong with it', async () => {
    const report = await runDoctor(deps(await loadMachine('h200-2026-11-21')));
    expect(report.diagnostics).toEqual([]);
  });

  it('keeps the readings the schema has no field for', async () => {
    const { facts } = await runDoctor(deps(await loadMachine('h200-2026-11-21')));
    expect(facts.kernelModuleVersion).toBe('580.159.04');
    expect(facts.compatDirs).toEqual([]);
    expect(facts.toolkit).toEqual({ nvcc: 'nvcc', release: '13.0.88' });
    expect(facts.gpus).toEqual([
      expect.objectContaining({
        index: 0,
        busId: '00000000:00:06.0',
        name: 'NVIDIA H200',
        sku: 'H200',
        brand: 'NVIDIA',
        smClockMhz: 1980,
        smClockMaxMhz: 1980,
        powerDrawW: 126.97,
        powerLimitW: 700,
        powerLimitDefaultW: 700,
        temperatureC: 35,
        utilizationPct: 0,
        clockEventReasons: ['gpu_idle'],
        persistenceMode: 'Enabled',
        eccMode: 'Enabled',
        eccVolatileCorrectable: 0,
        eccVolatileUncorrectable: 0,
        migMode: 'Disabled',
        computeMode: 'Default',
        processes: [],
      }),
    ]);
  });

  it("would break if this machine's own compat folder went into LD_LIBRARY_PATH", async () => {
    const machine = await loadMachine('h200-2026-11-21');
    machine.env.LD_LIBRARY_PATH = `/usr/local/cuda/compat:${machine.env.LD_LIBRARY_PATH}`;
    const report = await runDoctor(deps(machine));
    expect(report.diagnostics).toEqual([
      {
        level: 'warning',
        code: 'compat.unneeded',
        message:
          'LD_LIBRARY_PATH puts the forward-compat libraries /usr/local/cuda/compat (libcuda 580.95.05) in front, but driver 580.159.04 already supports CUDA 13.0, enough for torch 2.11.0+cu130 (CUDA 13.0) and nvcc 13.0.88.',
        fix: "Remove /usr/local/cuda/compat from LD_LIBRARY_PATH: the driver's own libcuda is the one to use.",
        source: 'doctor',
      },
      {
        level: 'error',
        code: 'compat.older_than_driver',
        message:
          'The forward-compat libcuda in /usr/local/cuda/compat (580.95.05) is older than the loaded driver (580.159.04): CUDA initialisation fails with "system has unsupported display driver / cuda driver combination" (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH).',
        fix: 'Remove /usr/local/cuda/compat from LD_LIBRARY_PATH.',
        source: 'doctor',
      },
    ]);
    expect(report.environment.libraries?.cuda_compat).toBe('580.95.05');
  });
});

describe('runDoctor on the H200 capture with one thing changed', () => {
  const cases: {
    what: string;
    smiXml?: [string | RegExp, string][];
    probe?: [string | RegExp, string][];
    code: string;
    level: string;
    message?: string;
  }[] = [
    {
      what: 'persistence mode off',
      smiXml: [
        [
          '<persistence_mode>Enabled</persistence_mode>',
          '<persistence_mode>Disabled</persistence_mode>',
        ],
      ],
      code: 'gpu.persistence_off',
      level: 'warning',
      message:
        'NVIDIA H200 has persistence mode off: the driver tears the GPU down between processes, so each run pays the initialisation again and starts from idle clocks.',
    },
    {
      what: 'another process on the GPU',
      smiXml: [
        [
          /<processes>\s*<\/processes>/,
          '<processes><process_info><gpu_instance_id>N/A</gpu_instance_id><compute_instance_id>N/A</compute_instance_id><pid>48213</pid><type>C</type><process_name>python3</process_name><used_memory>20480 MiB</used_memory></process_info></processes>',
        ],
      ],
      code: 'gpu.busy',
      level: 'warning',
      message:
        'NVIDIA H200 is in use by 1 other process (pid 48213 python3 20480 MiB): timings will include their work and memory may run out.',
    },
    {
      what: 'busy with no visible process',
      smiXml: [['<gpu_util>0 %</gpu_util>', '<gpu_util>87 %</gpu_util>']],
      code: 'gpu.busy',
      level: 'warning',
      message:
        'NVIDIA H200 is 87% busy but no process is visible from here (another container?): timings will include its work.',
    },
    {
      what: 'MIG on',
      smiXml: [
        [
          '<current_mig>Disabled</current_mig>\n\t\t\t<pending_mig>Disabled</pending_mig>',
          '<current_mig>Enabled</current_mig>\n\t\t\t<pending_mig>Enabled</pending_mig>',
        ],
      ],
      code: 'gpu.mig_enabled',
      level: 'warning',
    },
    {
      what: 'ECC off',
      smiXml: [
        [
          '<current_ecc>Enabled</current_ecc>\n\t\t\t<pending_ecc>Enabled</pending_ecc>',
          '<current_ecc>Disabled</current_ecc>\n\t\t\t<pending_ecc>Disabled</pending_ecc>',
        ],
      ],
      code: 'gpu.ecc_disabled',
      level: 'warning',
    },
    {
      what: 'uncorrectable ECC errors',
      smiXml: [
        [
          '<dram_uncorrectable>0</dram_uncorrectable>',
          '<dram_uncorrectable>3</dram_uncorrectable>',
        ],
      ],
      code: 'gpu.ecc_uncorrectable',
      level: 'error',
      message:
        'NVIDIA H200 reported 3 uncorrectable ECC errors since the driver loaded: results from this GPU cannot be trusted.',
    },
    {
      what: 'power limit lowered',
      smiXml: [
        [
          '<current_power_limit>700.00 W</current_power_limit>',
          '<current_power_limit>500.00 W</current_power_limit>',
        ],
      ],
      code: 'gpu.power_limit_reduced',
      level: 'warning',
      message:
        'NVIDIA H200 power limit is 500 W, below its default 700 W: compute-bound kernels will clock lower than baselines taken at the default.',
    },
    {
      what: 'power capping the clocks',
      smiXml: [
        [
          '<clocks_event_reason_sw_power_cap>Not Active</clocks_event_reason_sw_power_cap>',
          '<clocks_event_reason_sw_power_cap>Active</clocks_event_reason_sw_power_cap>',
        ],
        [
          '<sm_clock>1980 MHz</sm_clock>\n\t\t\t<mem_clock>3201 MHz</mem_clock>\n\t\t\t<video_clock>1545 MHz</video_clock>\n\t\t</clocks>',
          '<sm_clock>1410 MHz</sm_clock>\n\t\t\t<mem_clock>3201 MHz</mem_clock>\n\t\t\t<video_clock>1545 MHz</video_clock>\n\t\t</clocks>',
        ],
      ],
      code: 'gpu.clocks_limited',
      level: 'warning',
      message:
        'NVIDIA H200 clocks are being held down now (the power limit is capping clocks): SM clock 1410 of 1980 MHz.',
    },
    {
      what: 'an L4 instead of a Hopper GPU',
      smiXml: [
        ['<product_name>NVIDIA H200</product_name>', '<product_name>NVIDIA L4</product_name>'],
        ['<pci_device_id>233510DE</pci_device_id>', '<pci_device_id>27B810DE</pci_device_id>'],
      ],
      probe: [['"capability": [9, 0]', '"capability": [8, 9]']],
      code: 'gpu.arch_mismatch',
      level: 'warning',
      message:
        'NVIDIA L4 is compute capability 8.9, but the CUDA variants are built for sm_90a only; arch-specific (a) machine code runs only on its own architecture, so they will fail with "no kernel image is available for execution on the device".',
    },
    {
      what: 'a CPU-only torch',
      probe: [
        [
          '"torch": "2.11.0+cu130", "torch_cuda": "13.0"',
          '"torch": "2.11.0+cpu", "torch_cuda": null',
        ],
      ],
      code: 'torch.cpu_only',
      level: 'error',
      message:
        'torch 2.11.0+cpu is a CPU-only build on a machine with NVIDIA H200: nothing can run on the GPU.',
    },
    {
      what: 'torch unable to start CUDA',
      probe: [
        [
          '"cuda_available": true',
          '"cuda_available": false, "cuda_init_warning": "CUDA initialization: The NVIDIA driver on your system is too old (found version 12080). Please update your GPU driver."',
        ],
      ],
      code: 'torch.cuda_unavailable',
      level: 'error',
      message:
        'torch 2.11.0+cu130 cannot use the GPU: CUDA initialization: The NVIDIA driver on your system is too old (found version 12080). Please update your GPU driver. (cuda.driver_too_old)',
    },
  ];

  it.each(cases)('$what', async ({ smiXml, probe, code, level, message }) => {
    const machine = edit(await loadMachine('h200-2026-11-21'), { smiXml, probe });
    const report = await runDoctor(deps(machine));
    expect(report.diagnostics.map((d) => d.code)).toEqual([code]);
    expect(report.diagnostics[0]?.level).toBe(level);
    expect(report.diagnostics[0]?.fix).toBeTruthy();
    if (message) expect(report.diagnostics[0]?.message).toBe(message);
  });
});

describe("seed 000's machine (rebuilt from the report)", () => {
  it('names the driver/runtime mismatch, the compat layer and the fix in one finding', async () => {
    const report = await runDoctor(deps(await loadMachine('seed-000-h100-compat')));
    expect(report.environment.gpu).toMatchObject({
      name: 'NVIDIA H100 80GB HBM3',
      sku: 'H100-SXM',
      compute_capability: '9.0',
    });
    expect(report.environment).toMatchObject({
      driver_version: '570.133.20',
      driver_cuda_version: '12.8',
      cuda_runtime_version: '12.4',
      cuda_toolkit_version: '13.0.88',
    });
    expect(report.diagnostics).toEqual([
      {
        level: 'warning',
        code: 'driver.forward_compat',
        message:
          'Driver 570.133.20 supports CUDA <= 12.8, but nvcc 13.0.88 needs CUDA 13.0 (driver >= 580.65.06). It runs only through forward compatibility: LD_LIBRARY_PATH puts /usr/local/cuda-13.0/compat (libcuda 580.95.05, CUDA 13.0) in front. The probe loaded /usr/local/cuda-13.0/compat/libcuda.so.580.95.05, and cuInit succeeded. That works only on data-center GPUs and only in processes that inherit this LD_LIBRARY_PATH; any other shell, service or container fails with "CUDA driver version is insufficient for CUDA runtime version".',
        fix: 'Install driver >= 580.65.06 and take /usr/local/cuda-13.0/compat out of LD_LIBRARY_PATH; or build with a CUDA 12.8 toolkit (and a torch built for it) that driver 570 supports natively.',
        source: 'doctor',
      },
      {
        level: 'info',
        code: 'python.triton_missing',
        message: 'triton is not importable from python3: Triton variants will be skipped.',
        fix: 'python3 -m pip install triton',
        source: 'doctor',
      },
      {
        level: 'info',
        code: 'toolkit.torch_cuda_differs',
        message:
          'torch is built for CUDA 12.4 and nvcc is 13.0.88: the CUDA variants carry their own runtime (static cudart), so two CUDA runtimes share the harness process.',
        fix: 'Prefer a torch built for the same CUDA major version as nvcc.',
        source: 'doctor',
      },
    ]);
  });

  it("turns the run's 312 arch-conditional errors into one finding that names compute_90", async () => {
    const log = await readFile(
      path.join(ENV_FIXTURES, 'seed-000-h100-compat', 'run-log.txt'),
      'utf8',
    );
    expect(
      diagnoseOutput(log, { source: 'harness', kernel: 'attention', variant: 'cutlass_fmha' }),
    ).toEqual([
      {
        level: 'error',
        code: 'cuda.arch_conditional_mma',
        message:
          '"ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting." (seen 312 times): the sm_90a-only tensor-core path (wgmma) was compiled out: the code was compiled from compute_90 PTX, not compute_90a, so __CUDA_ARCH_FEAT_SM90_ALL was undefined and the kernel hit its arch-conditional trap. Any result it still prints comes from a fallback path and its timings are meaningless (seed 000 ran 10,000x slower).',
        fix: 'Compile with -gencode=arch=compute_90a,code=sm_90a (CMake: CMAKE_CUDA_ARCHITECTURES=90a, and no --generate-code=arch=compute_90,code=sm_90a), then check that `cuobjdump -sass` shows HGMMA.',
        source: 'harness',
        kernel: 'attention',
        variant: 'cutlass_fmha',
      },
    ]);
  });

  it('is an error, not a warning, when cuInit fails through the compat layer', async () => {
    const machine = edit(await loadMachine('seed-000-h100-compat'), {
      probe: [
        [
          '"cu_init": 0, "cu_init_name": "CUDA_SUCCESS"',
          '"cu_init": 35, "cu_init_name": "CUDA_ERROR_INSUFFICIENT_DRIVER"',
        ],
      ],
    });
    const report = await runDoctor(deps(machine));
    const finding = report.diagnostics.find((d) => d.code === 'driver.forward_compat');
    expect(finding?.level).toBe('error');
    expect(finding?.message).toContain(
      'The probe loaded /usr/local/cuda-13.0/compat/libcuda.so.580.95.05 and cuInit failed with CUDA_ERROR_INSUFFICIENT_DRIVER.',
    );
  });

  it('says the runtime cannot start at all without the compat folder', async () => {
    const machine = await loadMachine('seed-000-h100-compat');
    machine.env.LD_LIBRARY_PATH = '/usr/local/cuda-13.0/lib64';
    const report = await runDoctor(deps(machine));
    expect(report.diagnostics[0]).toEqual({
      level: 'error',
      code: 'driver.cuda_too_old',
      message:
        'Driver 570.133.20 supports CUDA <= 12.8, but nvcc 13.0.88 needs CUDA 13.0 (driver >= 580.65.06). CUDA calls will fail with "CUDA driver version is insufficient for CUDA runtime version".',
      fix: 'Install driver >= 580.65.06; or build with a CUDA 12.8 toolkit (and a torch built for it) that driver 570 supports natively.',
      source: 'doctor',
    });
  });

  it('refuses forward compatibility on a GeForce board', async () => {
    const machine = edit(await loadMachine('seed-000-h100-compat'), {
      smiXml: [
        [
          '<product_name>NVIDIA H100 80GB HBM3</product_name>',
          '<product_name>NVIDIA GeForce RTX 4090</product_name>',
        ],
        ['<product_brand>NVIDIA</product_brand>', '<product_brand>GeForce</product_brand>'],
        ['<pci_device_id>233010DE</pci_device_id>', '<pci_device_id>268410DE</pci_device_id>'],
      ],
    });
    const report = await runDoctor(deps(machine));
    expect(report.diagnostics.find((d) => d.code === 'compat.unsupported_gpu')?.message).toBe(
      'Forward-compat libraries (/usr/local/cuda-13.0/compat) are in LD_LIBRARY_PATH, but NVIDIA GeForce RTX 4090 is not a data-center GPU: CUDA fails with "forward compatibility was attempted on non supported HW".',
    );
  });
});

describe('runDoctor without a GPU', () => {
  it('reports no GPU as info on CI and fills what it can', async () => {
    const report = await runDoctor(
      deps(await loadMachine('no-gpu-ci-2026-11-21'), { expectGpu: false }),
    );
    expect(report.environment).toEqual({
      gpu: { name: 'none', sku: 'none', count: 0 },
      cuda_runtime_version: '13.0',
      cuda_toolkit_version: '13.0.88',
      libraries: { python: '3.11.7', torch: '2.13.0+cpu', triton: '3.6.0' },
    });
    expect(report.diagnostics).toEqual([
      {
        level: 'info',
        code: 'gpu.not_found',
        message:
          'No NVIDIA GPU or driver found (nvidia-smi is not installed): CUDA variants can be built and checked here, but nothing can be verified on a GPU or timed.',
        source: 'doctor',
      },
    ]);
  });

  it('warns when a GPU was expected', async () => {
    const report = await runDoctor(deps(await loadMachine('no-gpu-ci-2026-11-21')));
    expect(report.diagnostics.map((d) => `${d.level}:${d.code}`)).toEqual([
      'warning:gpu.not_found',
    ]);
  });

  it('says when the driver is installed but nvidia-smi cannot reach it', async () => {
    const machine = await loadMachine('no-gpu-ci-2026-11-21');
    const exec = scriptedExec([
      {
        match: 'nvidia-smi -q -x',
        result: {
          exitCode: 9,
          stdout:
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
        },
      },
      { match: 'nvcc --version', result: { stdout: machine.nvccVersion } },
      { match: /^python3 -c /, result: { stdout: machine.probe } },
    ]);
    const report = await runDoctor({ ...deps(machine), exec });
    expect(report.diagnostics[0]?.code).toBe('driver.smi_failed');
    expect(report.diagnostics[0]?.message).toBe(
      "nvidia-smi failed (exit 9): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
    );
  });

  it('runs with nothing installed at all', async () => {
    const report = await runDoctor({
      exec: scriptedExec([]),
      env: {},
      readFile: async () => undefined,
      listDir: async () => undefined,
    });
    expect(report.environment).toEqual({ gpu: { name: 'none', sku: 'none', count: 0 } });
    expect(report.diagnostics.map((d) => d.code)).toEqual([
      'gpu.not_found',
      'toolkit.nvcc_not_found',
      'python.not_found',
    ]);
  });
});

describe('lookups', () => {
  it.each([
    ['NVIDIA H100 80GB HBM3', '233010DE', 'H100-SXM'],
    ['NVIDIA H100 PCIe', '233110DE', 'H100-PCIe'],
    ['NVIDIA H100 NVL', undefined, 'H100-NVL'],
    ['NVIDIA H200', '233510DE', 'H200'],
    ['NVIDIA H200 NVL', undefined, 'H200-NVL'],
    ['NVIDIA L4', '27B810DE', 'L4'],
    ['NVIDIA A100-SXM4-80GB', '20B210DE', 'A100-SXM'],
    ['NVIDIA GeForce RTX 4090', '268410DE', 'unknown'],
  ])('%s (%s) is %s', (name, pci, sku) => {
    expect(gpuSku(name, pci)).toBe(sku);
  });

  it('knows which CUDA a driver supports and how cuDNN numbers its versions', () => {
    expect(cudaForDriver('570.133.20')).toBe('12.8');
    expect(cudaForDriver('580.159.04')).toBe('13.0');
    expect(cudaForDriver('580.95.05')).toBe('13.0');
    expect(cudaForDriver('535.183.01')).toBe('12.2');
    expect(cudaForDriver('470.256.02')).toBeUndefined();
    expect(cudnnVersion(91900)).toBe('9.19.0');
    expect(cudnnVersion(8902)).toBe('8.9.2');
  });
});

describe('describeDoctor', () => {
  it('prints the H200 in a few lines a person can read', async () => {
    const report = await runDoctor(deps(await loadMachine('h200-2026-11-21')));
    expect(describeDoctor(report)).toBe(
      [
        'GPU        NVIDIA H200 (H200, compute capability 9.0, 132 SMs, 140.4 GiB)',
        'Driver     580.159.04 (CUDA 13.0)',
        'CUDA       runtime 13.0, toolkit 13.0.88',
        'Libraries  python 3.12.3, torch 2.11.0+cu130, triton 3.6.0, cudnn 9.19.0',
        'State      SM 1980/1980 MHz, power 126.97/700 W, 35 C, persistence Enabled, ECC Enabled, MIG Disabled, 0 other processes',
        '',
        'No problems found.',
        '',
      ].join('\n'),
    );
  });

  it("prints seed 000's compat layer and the finding with its fix", async () => {
    const text = describeDoctor(await runDoctor(deps(await loadMachine('seed-000-h100-compat'))));
    expect(text).toContain(
      'Compat     /usr/local/cuda-13.0/compat (libcuda 580.95.05) in LD_LIBRARY_PATH\n',
    );
    expect(text).toContain(
      'libcuda    /usr/local/cuda-13.0/compat/libcuda.so.580.95.05 (cuInit CUDA_SUCCESS)\n',
    );
    expect(text).toContain(
      'WARNING driver.forward_compat: Driver 570.133.20 supports CUDA <= 12.8, but nvcc 13.0.88 needs CUDA 13.0',
    );
    expect(text).toContain(
      '  fix: Install driver >= 580.65.06 and take /usr/local/cuda-13.0/compat out of LD_LIBRARY_PATH;',
    );
  });
});
