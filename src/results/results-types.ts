// Generated from schema/results.schema.json by `npm run gen:types`. Do not edit by hand.

/**
 * kernelgate/results@1: what one harness run measured. Written by the Python harness (or any tool), read and validated by the TypeScript side. Units are in the field names (_ms, _bytes, _mhz, _w, _gbps, _tflops).
 */
export interface KernelgateResults {
  schema: 'kernelgate/results@1';
  run: Run;
  environment: Environment;
  diagnostics: Diagnostic[];
  builds?: BuildRecord[];
  /**
   * a paired run's base revision, built in the same job (base-builds.json): what the base arm ran, for the base-against-head diff of what was built (docs/judging.md, Why it moved)
   */
  base_builds?: BuildRecord[];
  kernels: KernelInfo[];
  cases: CaseResult[];
  /**
   * each manifest's ci_cases (the small and tail shapes) verified on the run's device after the timed cases, untimed (python/kernelgate_harness/tails.py); apart from cases, so the timed set and its baselines are unchanged. The gate fails on one that is not verified (docs/judging.md, Tails). Absent: a document written before tails were verified, or a run with --ci or --no-tails
   */
  tails?: TailResult[];
  deep?: Deep;
}
export interface Run {
  /**
   * CI run id or a local label
   */
  id?: string;
  /**
   * ISO 8601 UTC
   */
  started_at: string;
  finished_at?: string;
  duration_s?: number;
  /**
   * name and version of the writer, e.g. kernelgate-harness 0.1.0
   */
  harness: string;
  command?: string;
  git_sha?: string;
  git_ref?: string;
  host?: string;
  /**
   * true for hand-made fixtures: never real measurements
   */
  synthetic?: boolean;
  /**
   * set when this run timed every case against a base revision in the same job (paired A/B); each case's `paired` holds its pairs
   */
  paired_base?: {
    /**
     * the base revision's checkout the base worker imported its kernels from
     */
    root: string;
    git_sha?: string;
    git_ref?: string;
    /**
     * the change the sequential stop rule decided against
     */
    threshold_pct?: number;
    /**
     * how the arms alternated, e.g. ABBA
     */
    order?: string;
  };
  /**
   * wall time of harness phases, e.g. verify, bench, ceilings
   */
  stage_seconds?: {
    [k: string]: number;
  };
  /**
   * what the run was asked to measure: every case of every configured kernel (kernels_dir's kernel.yml files), each variant, narrowed by the fields set here. The judge holds the document to it: a case it selected and has no record of fails the gate (docs/judging.md). Written by the harness; `kernels: []` where no kernel was measured (other tools' benchmarks alone). A document without it (written before it, or by hand) is held to having a case at all
   */
  selection?: {
    /**
     * --only: these kernels; absent: every kernel
     */
    kernels?: string[];
    /**
     * --ci: each manifest's ci_cases instead of its cases
     */
    ci: boolean;
    /**
     * --variants: these variants only
     */
    variants?: string[];
    /**
     * --case-params: only cases whose params include these, e.g. dtype=fp16,D=128
     */
    case_params?: string;
    /**
     * --cases: these kernel/case ids only (a shard's list)
     */
    cases?: string[];
  };
  lanes?: Lanes;
  shard?: Shard;
  /**
   * set by `kernelgate merge`: every shard of the split, whether it reported, and what it owned
   */
  shards?: MergedShard[];
}
/**
 * set when the harness ran its cases in lanes (`--gpus`: several GPUs, or one that is not the first visible): the lanes took the cases from one queue, each the next when it had finished one (python/kernelgate_harness/lanes.py, docs/scaling.md); what each lane took and how long it was busy, the measured balance
 */
export interface Lanes {
  /**
   * the queue's order: longest first by each case's expected seconds (ties in the harness's order); one lane keeps the harness's order
   */
  order: 'longest first' | 'harness';
  /**
   * where the expected seconds came from: balance: what each case took in the --balance results document (a case it lacks estimated); estimate: its variants × the run's time cap plus the overhead
   */
  source: 'balance' | 'estimate';
  /**
   * the --balance file
   */
  balance?: string;
  /**
   * the cases whose expected seconds came from the --balance file
   */
  measured_cases: number;
  lanes: {
    /**
     * the lane's GPU as CUDA_VISIBLE_DEVICES names it (a number or a UUID)
     */
    gpu: string;
    /**
     * cases[].device.index of the lane's GPU
     */
    index: number;
    /**
     * the cases the lane took from the queue
     */
    cases: number;
    /**
     * wall seconds the lane spent on its cases, its workers' start-ups included
     */
    busy_s: number;
    /**
     * why the lane stopped taking cases: it failed outside its workers' containment; the case it was running is an error
     */
    failed?: string;
  }[];
  /**
   * (the busiest lane's seconds − the least busy's) / the busiest's, in %
   */
  apart_pct: number;
}
/**
 * this run measured shard `index` of `count` (`kernelgate run --shard i/n`, the action's `shard` input); docs/scaling.md
 */
export interface Shard {
  index: number;
  count: number;
  /**
   * the cases this shard owned, as kernel/case
   */
  cases: string[];
  /**
   * the whole split, so that a merge can name what a shard that never reported owned
   */
  plan: {
    /**
     * sha256 of the split: shards that agree on the split carry the same digest
     */
    digest: string;
    /**
     * baseline: balanced by the stored baseline's timings; estimate: by each case's size
     */
    source: 'baseline' | 'estimate';
    /**
     * the baseline whose timings balanced the split
     */
    baseline?: string;
    shards: string[][];
    /**
     * each shard's expected seconds under the rule
     */
    seconds?: number[];
  };
  gpu?: Device;
}
/**
 * the one GPU that measured a shard or a case
 */
export interface Device {
  /**
   * CUDA device index on its host (as CUDA_VISIBLE_DEVICES numbers it)
   */
  index?: number;
  name: string;
  sku?: string;
  uuid?: string;
  pci_bus_id?: string;
  host?: string;
}
export interface MergedShard {
  index: number;
  count: number;
  /**
   * ok: reported every case it owned; failed: reported, but its harness failed or cases are absent; missing: no results document
   */
  status: 'ok' | 'failed' | 'missing';
  /**
   * the cases it owned (kernel/case)
   */
  cases: string[];
  /**
   * owned cases with no result
   */
  unreported?: string[];
  /**
   * what went wrong, for the report and the gate
   */
  message?: string;
  /**
   * the results document it came from
   */
  file?: string;
  gpu?: Device;
  duration_s?: number;
}
export interface Environment {
  gpu: Gpu;
  driver_version?: string;
  /**
   * highest CUDA version the driver supports
   */
  driver_cuda_version?: string;
  cuda_runtime_version?: string;
  /**
   * nvcc release
   */
  cuda_toolkit_version?: string;
  /**
   * library name to version (python, torch, triton, cudnn, cublas, numpy, ...)
   */
  libraries?: {
    [k: string]: string;
  };
  ceilings?: Ceilings;
}
export interface Gpu {
  /**
   * as the driver reports it, e.g. NVIDIA H100 80GB HBM3
   */
  name: string;
  /**
   * the model from data/gpus.json (by pci_device_id, else name): H100-SXM, H100-PCIe, H200, H200-NVL, GH200, L40S, L4, ...; unknown, none
   */
  sku?: string;
  /**
   * PCI device and vendor id as NVML and nvidia-smi give it, e.g. 233010de (H100 SXM)
   */
  pci_device_id?: string;
  compute_capability?: string;
  sm_count?: number;
  memory_bytes?: number;
  l2_bytes?: number;
  sm_clock_max_mhz?: number;
  mem_clock_max_mhz?: number;
  power_limit_w?: number;
  count?: number;
}
/**
 * measured on this GPU in this run (or taken from a stored run: source), plus the datasheet peaks they are judged against
 */
export interface Ceilings {
  /**
   * device-to-device copy, bytes read + written
   */
  copy_gbps?: number;
  /**
   * dense cuBLAS GEMM rate by dtype, measured
   */
  gemm_tflops?: {
    [k: string]: number;
  };
  /**
   * datasheet dense tensor-core peak by dtype
   */
  peak_tflops?: {
    [k: string]: number;
  };
  /**
   * datasheet memory bandwidth
   */
  peak_gbps?: number;
  /**
   * where copy_gbps and gemm_tflops come from when this run did not measure them: a stored run of the same GPU model whose calibration kernel (gemm) is identical in build and sources to this run's (harness --ceilings, a pull request's paired run; src/measure/ceilings.ts). Absent: measured in this run
   */
  source?: string;
}
export interface Diagnostic {
  level: 'error' | 'warning' | 'info';
  code: string;
  message: string;
  fix?: string;
  /**
   * where it was found: doctor, build, harness, kernel:<name>
   */
  source?: string;
  kernel?: string;
  variant?: string;
}
export interface BuildRecord {
  kernel: string;
  variant: string;
  status: 'ok' | 'failed' | 'expectation_failed';
  cached?: boolean;
  hash?: string;
  /**
   * path of the built shared library
   */
  library?: string;
  /**
   * SHA-256 of the built shared library's loaded sections (device code, the host code that launches it, its data), with nvcc's per-translation-unit hash in anonymous-namespace names blanked (src/measure/build/fingerprint.ts): a variant whose libraries agree in base and head has identical build outputs (docs/judging.md, identity before timing)
   */
  library_sha256?: string;
  duration_s?: number;
  archs?: {
    /**
     * cubin targets, e.g. sm_90a
     */
    sass?: string[];
    /**
     * embedded PTX, e.g. compute_90a
     */
    ptx?: string[];
  };
  functions?: {
    name: string;
    arch?: string;
    registers?: number;
    smem_bytes?: number;
    cmem_bytes?: number;
    stack_bytes?: number;
    spill_store_bytes?: number;
    spill_load_bytes?: number;
  }[];
  /**
   * opcode (without modifiers) to count, over the whole library
   */
  sass_census?: {
    [k: string]: number;
  };
  expectations?: {
    name: string;
    ok: boolean;
    message: string;
  }[];
  /**
   * compiler output, trimmed
   */
  log_tail?: string;
}
export interface KernelInfo {
  name: string;
  description?: string;
  flops_formula?: string;
  bytes_formula?: string;
  /**
   * set when this kernel's cases were read from another benchmark tool's output (docs/adapters.md): what that tool gave
   */
  adapter?: {
    /**
     * the adapter's format, as kernelgate.yml's benchmarks[].format names it (the list of formats, src/formats/index.ts)
     */
    format: string;
    /**
     * the tool and its version as its output names them
     */
    tool?: string;
    /**
     * raw: every timed case carries its samples; summary: only the tool's statistics, so no interval and no paired verdict; mixed: some cases of each
     */
    samples: 'raw' | 'summary' | 'mixed';
    /**
     * the cases carry their work (from the tool or from kernelgate.yml's formulas)
     */
    work: boolean;
    /**
     * none: the tool does not check results, so no case is PASS (UNCHECKED); self_check: the benchmark's own check, recorded in each case's correctness
     */
    correctness: 'none' | 'self_check';
    /**
     * the base revision's benchmark ran alternately with this one (cases[].paired)
     */
    paired: boolean;
  };
  variants: {
    name: string;
    role: 'candidate' | 'reference';
    /**
     * triton, cuda, torch, cublas, ...
     */
    backend?: string;
    description?: string;
    status?: 'ok' | 'skipped' | 'error';
    reason?: string;
  }[];
}
export interface CaseResult {
  kernel: string;
  variant: string;
  /**
   * stable id of the case within the kernel, e.g. fp16-b16-h96-s4096-d128-causal
   */
  case: string;
  params: {
    [k: string]: string | number | boolean;
  };
  /**
   * ok: correct and timed; fail: wrong result; error: raised or crashed; timeout: exceeded its time limit; skipped: not applicable (reason says why)
   */
  status: 'ok' | 'fail' | 'error' | 'timeout' | 'skipped';
  reason?: string;
  correctness?: Correctness;
  timing?: Timing;
  paired?: Paired;
  /**
   * a pull request's paired run found this variant identical in base and head (build outputs, module sources, manifest entry, harness, libraries: --identical): verified (as `verified` says), not timed; judged SAME by identity (docs/judging.md)
   */
  identical?: {
    reason: string;
    /**
     * how it was verified (--verify-identical, kernelgate.yml run.verify_identical): first_seed, on the first seed only, without the probes of what the timing would miss (drain, late work, cache), correctness.seeds saying which; all, on every seed as a changed variant. Absent in documents written before 2026-11-26's option: every seed
     */
    verified?: 'first_seed' | 'all';
    /**
     * its kernel's A/A control (harness --controls, kernelgate.yml run.time_control: headline), timed on the kernel's headline case and beside confirmations: left untimed in this case, where nothing cleared the threshold (or, with timing and paired.timed_in, timed beside this case's confirmation)
     */
    control?: true;
  };
  tuning?: Tuning1;
  work?: {
    /**
     * useful floating-point operations of one call
     */
    flops: number;
    /**
     * each input read once, each output written once
     */
    bytes: number;
    note?: string;
  };
  throughput?: {
    tflops?: number;
    gbps?: number;
    pct_peak_tflops?: number;
    pct_copy_ceiling?: number;
  };
  error?: {
    kind: string;
    message: string;
    log_tail?: string;
  };
  device?: Device;
}
export interface Correctness {
  status: 'PASS' | 'FAIL';
  /**
   * worst over seeds; null when not computable (NaN)
   */
  rel_l2: number | null;
  max_abs: number | null;
  nan_count: number;
  inf_count: number;
  unwritten_count: number;
  seeds: number[];
  tol_rel_l2: number;
  tol_max_abs?: number;
  /**
   * e.g. fp32 torch math on GPU
   */
  oracle?: string;
  /**
   * error of the output of the last timed run
   */
  timed_output_rel_l2?: number | null;
  /**
   * wall seconds this variant's checks took in this case: its runs and their checks on every seed and stress input, probes included; the inputs and the oracle, which the case's variants share, are not
   */
  seconds?: number;
  /**
   * error of the output of a fresh replay of the CUDA graph the variant was timed with
   */
  graph_replay_rel_l2?: number | null;
  /**
   * largest difference between two runs on the same inputs (a race if > 0 for deterministic kernels)
   */
  repeat_max_diff?: number | null;
  /**
   * the kernel module's stress inputs (stress_inputs: values at the edges of their range that random seeds do not reach), each with the variant's error norms on it; checked against the same tolerance as the seeds and kept apart from rel_l2 and max_abs, which cover the seeds
   */
  stress?: {
    name: string;
    rel_l2: number | null;
    max_abs: number | null;
  }[];
  message?: string;
}
export interface Timing {
  /**
   * events, events+l2flush, graph(N launches), ...
   */
  method: string;
  /**
   * kept samples, in order: ms of one call each. A time outside 1e-6 (a nanosecond) … 3600000 (an hour) is not one a call can take, and the document is refused
   */
  samples_ms: number[];
  /**
   * one reading per kept sample, when NVML is available
   */
  sm_clock_mhz?: number[];
  power_w?: number[];
  /**
   * ms of one call, as samples_ms: a nanosecond to an hour
   */
  median_ms: number;
  q1_ms?: number;
  q3_ms?: number;
  min_ms?: number;
  mean_ms?: number;
  rel_std?: number;
  /**
   * half-width of the median's confidence interval, relative
   */
  median_ci_rel?: number;
  /**
   * a history record's timing only (no samples): the lower end of the median's interval, in ms, at median_ci_confidence
   */
  median_ci_lo_ms?: number;
  /**
   * a history record's timing only (no samples): the upper end of the median's interval, in ms, at median_ci_confidence
   */
  median_ci_hi_ms?: number;
  /**
   * a history record's timing only: the confidence of [median_ci_lo_ms, median_ci_hi_ms], e.g. 0.95
   */
  median_ci_confidence?: number;
  /**
   * ms of one call, balanced over what the samples ran behind: the mean over the case's variants a sample followed in its round (and the round's lead-in) of the median of the kept samples behind each. At a power cap a sample reads what ran before it, so the samples of a case whose variants differ in power come in modes that the median falls between (docs/harness.md, samples round by round); the tiers compare this where both sides have it. Absent where the samples followed fewer than two (a variant timed alone, a paired run's arms)
   */
  balanced_ms?: number;
  /**
   * the variant each kept sample ran behind in its round, one per samples_ms entry ("" behind the round's lead-in): the groups balanced_ms weighs. Present with balanced_ms
   */
  after?: string[];
  /**
   * how many predecessors balanced_ms weighs: the case's other variants and the lead-in, those the kept samples followed
   */
  balanced_groups?: number;
  n_samples: number;
  n_discarded_throttled?: number;
  stop_reason: 'converged' | 'time_cap' | 'max_samples';
  /**
   * what the samples' spread holds, where a tool's output says (docs/adapters.md, 'Noise by source'): one-run, the rounds of a single run of the tool (pytest-benchmark), which hold none of the spread between runs, so no interval is drawn from them; runs, one sample per run of the tool (several output files read together). Absent: the samples hold the run-to-run spread themselves (the harness's, nvbench's launches over its stopping rule, Google Benchmark's repetitions)
   */
  samples_span?: 'one-run' | 'runs';
  warmup_ms?: number;
  l2_flush?: boolean;
  input_sets?: number;
  /**
   * the case's cold/warm statement for this variant: 'cold: …' (L2 flushed, persisting lines reset before every sample), 'warm: …' (a graph's or a batch's launches back to back, or a working set over 4x L2, not flushed), or 'not applicable: …' on the CPU (docs/harness.md, cold and warm). Absent in documents written before it was recorded
   */
  l2_state?: string;
}
/**
 * this case timed against the base revision's same variant in the same job, pair by pair (head = this case's timing, base = base_timing)
 */
export interface Paired {
  /**
   * the base revision's outcome on this case and variant; missing: the base has no such variant or case
   */
  base_status: 'ok' | 'fail' | 'error' | 'timeout' | 'skipped' | 'missing';
  /**
   * why the base has no timing, when it has none
   */
  base_reason?: string;
  base_correctness?: Correctness;
  base_timing?: Timing;
  base_tuning?: Tuning;
  n_pairs: number;
  /**
   * one per ABBA block of two pairs (the head first in one, second in the other), in order: the mean of the block's two ln(head sample / base sample), so which arm ran first cancels. Two possible times (timing.samples_ms) are at most a factor e^28.9 apart, so |ln| > 30 is refused
   */
  log_ratios: number[];
  /**
   * exp(median of log_ratios): head / base, >1 is slower
   */
  median_ratio?: number;
  ci_lo?: number;
  ci_hi?: number;
  confidence?: number;
  /**
   * minimum detectable change: the interval's half-width in percent
   */
  mdc_pct?: number;
  /**
   * the case's detection threshold in percent (harness --paired-detect-pct, for cases of --paired-detect-min-ms or more): an interval wholly beyond it decides SLOWER or FASTER; one that clears it but not the threshold stands only when a second pair of worker processes (confirm) agrees. Absent: the threshold alone decides
   */
  detect_pct?: number;
  /**
   * decided: the interval settled on one side of the threshold; untimed: one side had no timing
   */
  stop_reason: 'decided' | 'time_cap' | 'max_pairs' | 'untimed';
  /**
   * wall seconds spent sampling this variant's pairs
   */
  seconds?: number;
  /**
   * confirmation: an A/A control (harness --controls, kernelgate.yml run.time_control: headline) that this case's first reading left untimed, timed beside the confirmation of a variant that cleared the threshold, in the same fresh pair of worker processes: its reading speaks for the machine during that second reading. Absent: timed in the case's first reading
   */
  timed_in?: 'confirmation';
  /**
   * the same variant measured again in a fresh pair of worker processes (harness --paired-confirm), because the first interval cleared the threshold: a SLOWER or FASTER verdict stands only when this one agrees
   */
  confirm?: {
    /**
     * error: the second pair of processes could not be measured (reason says why)
     */
    status: 'ok' | 'error';
    reason?: string;
    n_pairs?: number;
    /**
     * one per ABBA block, as the case's own log_ratios
     */
    log_ratios?: number[];
    median_ratio?: number;
    ci_lo?: number;
    ci_hi?: number;
    mdc_pct?: number;
    stop_reason?: 'decided' | 'time_cap' | 'max_pairs' | 'untimed';
    /**
     * wall seconds spent sampling this variant's pairs in the second pair of processes
     */
    seconds?: number;
  };
}
/**
 * the base arm's tuned configuration (the case's `tuning` is the head arm's): the two arms share one tuning unless the pull request changed the tuned kernel's source
 */
export interface Tuning {
  /**
   * the chosen configuration as the kernel module states it (JSON: a list, an object, a string or a number)
   */
  config: unknown[] | {} | string | number | boolean;
  /**
   * when this process tuned: each candidate the tuner timed and its milliseconds, fastest first (absent when the choice was remembered from the tune cache or fixed)
   *
   * @maxItems 64
   */
  candidates_ms?: {
    config: unknown[] | {} | string | number | boolean;
    ms: number;
  }[];
  /**
   * the Triton kernel this configuration compiled to, as Triton reports it (the run function's `compiled_kernel`, docs/kernel-modules.md; kernelgate_harness/compiled.py); absent for a variant that names none, under TRITON_INTERPRET=1, and in documents of older harnesses
   */
  compiled?: {
    /**
     * the kernel's name (metadata.name)
     */
    name: string;
    /**
     * registers per thread (CompiledKernel.n_regs)
     */
    n_regs?: number;
    /**
     * Triton's n_spills: the function's local memory in 4-byte words (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4, or the cubin's STACK / 4)
     */
    n_spills?: number;
    /**
     * shared memory the launch asks for (metadata.shared)
     */
    shared_bytes: number;
    /**
     * warps of a program as compiled (metadata.num_warps; warp specialisation can add warps to those asked)
     */
    num_warps: number;
    /**
     * software pipeline stages (metadata.num_stages)
     */
    num_stages: number;
    /**
     * where n_regs and n_spills came from: the loaded kernel (driver, on a GPU) or the cubin (cuobjdump, a kernel compiled and not loaded)
     */
    source?: 'driver' | 'cubin';
  };
}
/**
 * the configuration a host-side tuner chose for this case and variant and launched with (a variant's run function's `config`, docs/kernel-modules.md), e.g. a Triton tiling [block_m, block_n, warps, stages]: two runs that chose differently measured different code paths, a re-tune rather than a regression (docs/judging.md)
 */
export interface Tuning1 {
  /**
   * the chosen configuration as the kernel module states it (JSON: a list, an object, a string or a number)
   */
  config: unknown[] | {} | string | number | boolean;
  /**
   * when this process tuned: each candidate the tuner timed and its milliseconds, fastest first (absent when the choice was remembered from the tune cache or fixed)
   *
   * @maxItems 64
   */
  candidates_ms?: {
    config: unknown[] | {} | string | number | boolean;
    ms: number;
  }[];
  /**
   * the Triton kernel this configuration compiled to, as Triton reports it (the run function's `compiled_kernel`, docs/kernel-modules.md; kernelgate_harness/compiled.py); absent for a variant that names none, under TRITON_INTERPRET=1, and in documents of older harnesses
   */
  compiled?: {
    /**
     * the kernel's name (metadata.name)
     */
    name: string;
    /**
     * registers per thread (CompiledKernel.n_regs)
     */
    n_regs?: number;
    /**
     * Triton's n_spills: the function's local memory in 4-byte words (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4, or the cubin's STACK / 4)
     */
    n_spills?: number;
    /**
     * shared memory the launch asks for (metadata.shared)
     */
    shared_bytes: number;
    /**
     * warps of a program as compiled (metadata.num_warps; warp specialisation can add warps to those asked)
     */
    num_warps: number;
    /**
     * software pipeline stages (metadata.num_stages)
     */
    num_stages: number;
    /**
     * where n_regs and n_spills came from: the loaded kernel (driver, on a GPU) or the cubin (cuobjdump, a kernel compiled and not loaded)
     */
    source?: 'driver' | 'cubin';
  };
}
/**
 * one variant on one tail case, verified and not timed
 */
export interface TailResult {
  kernel: string;
  variant: string;
  /**
   * the case id, as the cases' (kernel.yml ci_cases)
   */
  case: string;
  params: {
    [k: string]: string | number | boolean;
  };
  /**
   * ok: verified correct; fail: wrong result; error: raised or crashed; timeout: exceeded its time limit; skipped: not applicable (reason says why)
   */
  status: 'ok' | 'fail' | 'error' | 'timeout' | 'skipped';
  reason?: string;
  correctness?: Correctness;
  /**
   * a tail of a variant --identical names, the base revision's manifest having this tail case too, under --verify-identical first_seed: verified on the first seed only (python/kernelgate_harness/tails.py); absent: every seed
   */
  identical?: {
    reason: string;
    /**
     * verified on the first seed only (correctness.seeds)
     */
    verified: 'first_seed';
  };
  error?: {
    kind: string;
    message: string;
    log_tail?: string;
  };
}
/**
 * the nightly's deep checks: compute-sanitizer over every variant on a small case, Nsight Compute metrics of headline cases (docs/scaling.md)
 */
export interface Deep {
  sanitizer?: SanitizerRun[];
  ncu?: NcuRun[];
  /**
   * Nsight Compute over the base revision and the head on one case of each moved variant (its largest change), the profile comparison of docs/judging.md, Why it moved
   */
  ncu_compare?: NcuComparison[];
}
export interface SanitizerRun {
  tool: 'memcheck' | 'racecheck' | 'synccheck' | 'initcheck';
  kernel: string;
  variant: string;
  case: string;
  /**
   * clean: the tool reported 0 errors; findings: it reported errors; error: it did not run to the end; skipped: not checked (reason says why: the harness skipped the variant on every case tried, or the time box ran out before the run)
   */
  status: 'clean' | 'findings' | 'error' | 'skipped';
  /**
   * why the variant was not checked (skipped), or why it was checked on a larger case than its kernel's smallest
   */
  reason?: string;
  /**
   * the count the tool's summary line gives
   */
  errors: number;
  findings?: {
    /**
     * the finding's first line, e.g. Invalid __global__ write of size 4 bytes
     */
    what: string;
    /**
     * the device function it names
     */
    kernel?: string;
    /**
     * the lines after it (thread, address), clipped
     */
    detail?: string;
    /**
     * the innermost Python frame of its host backtrace, what launched the kernel, e.g. fingerprint in verify.py:52
     */
    python_frame?: string;
    /**
     * true when that frame is in the harness's own code (kernelgate_harness), not the variant's or its kernel module's
     */
    harness?: boolean;
  }[];
  /**
   * the first lines of the tool's report, clipped
   */
  first_lines?: string;
  seconds?: number;
  command?: string;
}
export interface NcuRun {
  kernel: string;
  variant: string;
  case: string;
  /**
   * skipped: not profiled (message says why: the time box ran out before it)
   */
  status: 'ok' | 'error' | 'skipped';
  /**
   * the profiled launch's function name
   */
  device_kernel?: string;
  /**
   * the kernel launches Nsight Compute profiled within the one call (between the profiler's start and stop); absent in documents written before it was recorded
   */
  launches?: number;
  metrics?: {
    duration_ms?: number;
    sm_throughput_pct?: number;
    tensor_pipe_pct?: number;
    achieved_occupancy_pct?: number;
    dram_throughput_pct?: number;
  };
  /**
   * the top warp stall reasons, largest first
   */
  stalls?: {
    reason: string;
    value: number;
  }[];
  /**
   * the full .ncu-rep, kept as an artifact
   */
  report?: string;
  message?: string;
  seconds?: number;
}
export interface NcuComparison {
  kernel: string;
  variant: string;
  case: string;
  /**
   * the case's judged change (head / base median) that chose it
   */
  ratio?: number;
  base: NcuRun;
  head: NcuRun;
}
