// Known failure messages, as CUDA, torch, Triton, ptxas and cuBLAS print them, become one
// diagnostic per cause with a count, the cause and the fix.
import { describe, expect, it } from 'vitest';
import { diagnoseOutput } from '../src/measure/index.js';

describe('diagnoseOutput', () => {
  it.each([
    [
      'ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting.',
      'cuda.arch_conditional_mma',
    ],
    [
      'RuntimeError: CUDA error: no kernel image is available for execution on the device',
      'cuda.no_kernel_image',
    ],
    [
      'CUDA error: CUDA driver version is insufficient for CUDA runtime version',
      'cuda.driver_too_old',
    ],
    [
      'UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12080).',
      'cuda.driver_too_old',
    ],
    [
      'cuInit failed: forward compatibility was attempted on non supported HW',
      'cuda.compat_unsupported_gpu',
    ],
    [
      'CUDA error: system has unsupported display driver / cuda driver combination',
      'cuda.compat_driver_mismatch',
    ],
    [
      'CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported toolchain.',
      'cuda.unsupported_ptx',
    ],
    [
      'RuntimeError: CUDA error: too many resources requested for launch',
      'cuda.too_many_resources',
    ],
    [
      "ptxas error   : Entry function 'attn_fwd' uses too much shared data (0xe020 bytes, 0xc000 max)",
      'cuda.smem_too_large',
    ],
    [
      'triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448.',
      'cuda.smem_too_large',
    ],
    ['RuntimeError: CUDA error: an illegal memory access was encountered', 'cuda.illegal_address'],
    [
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB',
      'cuda.out_of_memory',
    ],
    ['CUDA error: misaligned address', 'cuda.misaligned_address'],
    ['CUDA error: an illegal instruction was encountered', 'cuda.illegal_instruction'],
    ['CUDA error: unspecified launch failure', 'cuda.launch_failure'],
    ['RuntimeError: CUDA error: device-side assert triggered', 'cuda.device_assert'],
    [
      'RuntimeError: No CUDA GPUs are available: no CUDA-capable device is detected',
      'cuda.no_device',
    ],
    [' ** On entry to GEMM_EX  parameter number 12 had an illegal value', 'cublas.invalid_value'],
  ])('%s -> %s', (line, code) => {
    const found = diagnoseOutput(line, 'harness');
    expect(found.map((d) => d.code)).toEqual([code]);
    expect(found[0]?.fix).toBeTruthy();
    expect(found[0]?.source).toBe('harness');
  });

  it('folds repeats into one finding per cause, in order of first appearance, with counts', () => {
    const text = [
      'case fp16-s4096: starting',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
      'CUDA kernel errors might be asynchronously reported at some other API call',
      ...Array.from(
        { length: 3 },
        () =>
          'ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting.',
      ),
      'RuntimeError: CUDA error: an illegal memory access was encountered',
    ].join('\n');
    const found = diagnoseOutput(text, {
      source: 'kernel:attention',
      kernel: 'attention',
      variant: 'cuda_fa2',
    });
    expect(
      found.map((d) => [
        d.code,
        d.message.slice(0, d.message.indexOf(':', d.message.indexOf(')'))),
      ]),
    ).toEqual([
      [
        'cuda.illegal_address',
        '"RuntimeError: CUDA error: an illegal memory access was encountered" (seen 2 times)',
      ],
      [
        'cuda.arch_conditional_mma',
        '"ERROR : Arch conditional MMA instruction used without targeting appropriate compute capability. Aborting." (seen 3 times)',
      ],
    ]);
    expect(
      found.every(
        (d) =>
          d.kernel === 'attention' && d.variant === 'cuda_fa2' && d.source === 'kernel:attention',
      ),
    ).toBe(true);
  });

  it('says "seen once" for a single line and quotes long lines shortened', () => {
    const long = `CUDA error: misaligned address ${'x'.repeat(300)}`;
    const [finding] = diagnoseOutput(long, 'harness');
    expect(finding?.message).toBe(
      `"${long.slice(0, 157)}..." (seen once): a vector access (float4, 16-byte cp.async, TMA) used an address that is not aligned to its width, for example a tensor view with an odd offset or a row stride that is not a multiple of 8 halves.`,
    );
  });

  it('finds nothing in ordinary output', () => {
    expect(
      diagnoseOutput('verify fp16-s1024: PASS rel_l2=3.1e-4\nbench: 0.412 ms median\n', 'harness'),
    ).toEqual([]);
  });
});
