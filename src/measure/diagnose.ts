// Known CUDA, driver and toolchain failure messages in a kernel's output, turned into
// diagnostics that name the cause and the fix instead of a wall of repeated log lines.
import type { Diagnostic } from '../results/index.js';

/** Where the text came from: a source label (`harness`, `kernel:attention`) or a full place. */
export type DiagnoseWhere = string | { source: string; kernel?: string; variant?: string };

interface KnownFailure {
  code: string;
  level: Diagnostic['level'];
  pattern: RegExp;
  cause: string;
  fix: string;
}

// Ordered from most to least specific: one line feeds at most one entry.
const KNOWN_FAILURES: readonly KnownFailure[] = [
  {
    code: 'cuda.arch_conditional_mma',
    level: 'error',
    pattern: /Arch conditional MMA instruction used without targeting/i,
    cause:
      'the sm_90a-only tensor-core path (wgmma) was compiled out: the code was compiled from compute_90 PTX, not compute_90a, so __CUDA_ARCH_FEAT_SM90_ALL was undefined and the kernel hit its arch-conditional trap. Any result it still prints comes from a fallback path and its timings are meaningless (seed 000 ran 10,000x slower).',
    fix: 'Compile with -gencode=arch=compute_90a,code=sm_90a (CMake: CMAKE_CUDA_ARCHITECTURES=90a, and no --generate-code=arch=compute_90,code=sm_90a), then check that `cuobjdump -sass` shows HGMMA.',
  },
  {
    code: 'cuda.no_kernel_image',
    level: 'error',
    pattern:
      /no kernel image is available for execution on the device|CUDA_ERROR_NO_BINARY_FOR_GPU|cudaErrorNoKernelImageForDevice/i,
    cause:
      "the library holds no machine code for this GPU's architecture and no PTX the driver can compile for it (an sm_90a cubin runs only on compute capability 9.0: not on 8.9, not on 10.0).",
    fix: 'Build for the GPU that runs it (`kernelgate doctor` prints its compute capability), e.g. -gencode=arch=compute_90a,code=sm_90a for H100/H200.',
  },
  {
    code: 'cuda.driver_too_old',
    level: 'error',
    pattern:
      /CUDA driver version is insufficient for CUDA runtime version|NVIDIA driver on your system is too old|CUDA_ERROR_INSUFFICIENT_DRIVER|cudaErrorInsufficientDriver/i,
    cause:
      'the CUDA runtime is newer than the installed driver supports (for example a CUDA 13.0 runtime on driver 570, which supports CUDA 12.8 at most).',
    fix: 'Install a driver that supports the runtime (CUDA 13.x needs driver >= 580), or use a toolkit and torch built for the CUDA version the driver reports in nvidia-smi. Forward compatibility (cuda-compat) works only on data-center GPUs and only for processes whose LD_LIBRARY_PATH starts with its compat directory.',
  },
  {
    code: 'cuda.compat_unsupported_gpu',
    level: 'error',
    pattern:
      /forward compatibility was attempted on non supported HW|CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE|cudaErrorCompatNotSupportedOnDevice/i,
    cause:
      'the cuda-compat libraries (forward compatibility) were loaded, but this GPU does not support forward compatibility: only data-center GPUs (and a few NGC-ready RTX boards) do.',
    fix: 'Remove the cuda-compat directory from LD_LIBRARY_PATH and install a driver new enough for the runtime, or use a toolkit that matches the driver.',
  },
  {
    code: 'cuda.compat_driver_mismatch',
    level: 'error',
    pattern:
      /system has unsupported display driver \/ cuda driver combination|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|cudaErrorSystemDriverMismatch/i,
    cause:
      'the user-mode libcuda (usually from a cuda-compat directory in LD_LIBRARY_PATH) does not match the loaded kernel driver, for example compat libraries older than the driver itself.',
    fix: 'Take the cuda-compat directory out of LD_LIBRARY_PATH when the driver already supports the runtime; otherwise install the cuda-compat package whose version is newer than the kernel driver (cat /proc/driver/nvidia/version).',
  },
  {
    code: 'cuda.unsupported_ptx',
    level: 'error',
    pattern:
      /provided PTX was compiled with an unsupported toolchain|CUDA_ERROR_UNSUPPORTED_PTX_VERSION|cudaErrorUnsupportedPtxVersion/i,
    cause:
      'the library only carries PTX for this GPU, made by a toolkit newer than the driver, so the driver cannot JIT it (minor-version compatibility does not cover PTX).',
    fix: "Embed machine code for the GPU (code=sm_90a, not only code=compute_90a) or update the driver to the toolkit's version.",
  },
  {
    code: 'cuda.too_many_resources',
    level: 'error',
    pattern:
      /too many resources requested for launch|CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES|cudaErrorLaunchOutOfResources/i,
    cause:
      'the launch asks for more than one SM holds: registers per thread x threads per block above 65,536, or more threads per block than the kernel was compiled for.',
    fix: 'Compare the build record (registers per function) with the block size; cap registers with __launch_bounds__(threads) or launch fewer threads per block.',
  },
  {
    code: 'cuda.smem_too_large',
    level: 'error',
    pattern:
      /uses too much shared data|out of resource: shared memory|cudaErrorInvalidValue.*shared|exceeds.*shared memory/i,
    cause:
      'the kernel needs more shared memory than the GPU allows per block (48 KiB static; up to 227 KiB dynamic on H100/H200 after opting in, 99 KiB on L4).',
    fix: 'Shrink the tile or the number of pipeline stages, or move the buffer to dynamic shared memory and call cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) before launching.',
  },
  {
    code: 'cuda.illegal_address',
    level: 'error',
    pattern:
      /an illegal memory access was encountered|CUDA_ERROR_ILLEGAL_ADDRESS|cudaErrorIllegalAddress/i,
    cause:
      'the kernel read or wrote outside its buffers (often the tail tile of a size that is not a multiple of the block). The CUDA context is dead afterwards: every later call in the process fails too.',
    fix: 'Run the case under `compute-sanitizer --tool memcheck`; check bounds on tail tiles and the sizes and strides passed to the launch function.',
  },
  {
    code: 'cuda.misaligned_address',
    level: 'error',
    pattern: /misaligned address|CUDA_ERROR_MISALIGNED_ADDRESS|cudaErrorMisalignedAddress/i,
    cause:
      'a vector access (float4, 16-byte cp.async, TMA) used an address that is not aligned to its width, for example a tensor view with an odd offset or a row stride that is not a multiple of 8 halves.',
    fix: 'Check the alignment of every base pointer and leading dimension the kernel vectorises over; fall back to scalar loads when they are not aligned.',
  },
  {
    code: 'cuda.illegal_instruction',
    level: 'error',
    pattern:
      /an illegal instruction was encountered|CUDA_ERROR_ILLEGAL_INSTRUCTION|cudaErrorIllegalInstruction/i,
    cause:
      'the GPU met an instruction it cannot execute here: arch-specific code (wgmma, setmaxnreg) issued by a partial warpgroup, or built for another architecture.',
    fix: 'Check that wgmma/setmaxnreg run in full, aligned warpgroups of 128 threads and that the library was built for this GPU.',
  },
  {
    code: 'cuda.launch_failure',
    level: 'error',
    pattern: /unspecified launch failure|CUDA_ERROR_LAUNCH_FAILED|cudaErrorLaunchFailure/i,
    cause:
      'the kernel crashed without a more precise reason; a device-side stack overflow (large local arrays, deep calls) is a common one.',
    fix: 'Run under `compute-sanitizer`; check the build record for stack bytes per function and remove run-time-indexed local arrays.',
  },
  {
    code: 'cuda.out_of_memory',
    level: 'error',
    pattern:
      /CUDA out of memory|out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|OutOfMemoryError/i,
    cause:
      'a GPU allocation failed: the case is too large for the free memory, or another process holds memory on the GPU.',
    fix: 'Check the other processes `kernelgate doctor` lists on the GPU, and the case sizes (inputs, outputs, the fp32 oracle and the L2-flush buffer all live on the GPU at once).',
  },
  {
    code: 'cuda.device_assert',
    level: 'error',
    pattern: /device-side assert triggered|CUDA_ERROR_ASSERT|cudaErrorAssert/i,
    cause: 'an assert() in device code failed; the CUDA context is unusable afterwards.',
    fix: 'Rerun the case alone with CUDA_LAUNCH_BLOCKING=1 to see which assert fired.',
  },
  {
    code: 'cuda.no_device',
    level: 'error',
    pattern:
      /no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|Found no NVIDIA driver on your system/i,
    cause: 'no GPU is visible to the process.',
    fix: 'Check CUDA_VISIBLE_DEVICES and that the runner (or container) has the GPU mapped in (`nvidia-smi` works in the same environment).',
  },
  {
    code: 'cublas.invalid_value',
    level: 'error',
    pattern: /parameter number \d+ had an illegal value/i,
    cause:
      'cuBLAS rejected an argument: usually a leading dimension smaller than the row length, or m/n/k in the wrong order for the layout.',
    fix: 'cuBLAS is column-major: for row-major A (m x k) pass lda >= k and swap the operands (C^T = B^T A^T).',
  },
];

const MAX_QUOTE_CHARS = 160;

/**
 * Finds the known failures in `text` (one diagnostic per cause, in order of first appearance,
 * with how many lines reported it) so a log with hundreds of identical errors reads as one finding.
 */
export function diagnoseOutput(text: string, where: DiagnoseWhere): Diagnostic[] {
  const place = typeof where === 'string' ? { source: where } : where;
  const found = new Map<string, { failure: KnownFailure; firstLine: string; count: number }>();
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '') continue;
    const failure = KNOWN_FAILURES.find((f) => f.pattern.test(line));
    if (!failure) continue;
    const seen = found.get(failure.code);
    if (seen) seen.count += 1;
    else found.set(failure.code, { failure, firstLine: line, count: 1 });
  }
  return [...found.values()].map(({ failure, firstLine, count }) => {
    const quote =
      firstLine.length > MAX_QUOTE_CHARS
        ? `${firstLine.slice(0, MAX_QUOTE_CHARS - 3)}...`
        : firstLine;
    const times = count === 1 ? 'seen once' : `seen ${count} times`;
    const diagnostic: Diagnostic = {
      level: failure.level,
      code: failure.code,
      message: `"${quote}" (${times}): ${failure.cause}`,
      fix: failure.fix,
      source: place.source,
    };
    if (place.kernel !== undefined) diagnostic.kernel = place.kernel;
    if (place.variant !== undefined) diagnostic.variant = place.variant;
    return diagnostic;
  });
}
