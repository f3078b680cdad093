// The build stage's types and constants.
import type { Exec } from '../../lib/index.js';
import type { BuildRecord, Diagnostic } from '../../results/index.js';

/** The `expect` section of a variant's `build` (schema/kernel.schema.json#/definitions/Expect). */
export interface BuildExpect {
  archs?: string[];
  sass?: string[];
  sass_absent?: string[];
  spills?: number;
  stack_max?: number;
  smem_max?: number;
  registers_max?: number;
}

/** A variant's `build` section (schema/kernel.schema.json#/definitions/Build). */
export interface VariantBuild {
  sources?: string[];
  flags?: string[];
  libs?: string[];
  command?: string;
  expect?: BuildExpect;
}

/** What the build stage needs from one kernel manifest. */
export interface BuildTarget {
  /** Kernel name, e.g. `attention`. */
  kernel: string;
  /** The kernel's folder; sources are relative to it and commands run in it. */
  dir: string;
  variants: { name: string; build?: VariantBuild }[];
}

export interface BuildDeps {
  exec: Exec;
  /** Where libraries, records and builds.json go; default `.kernelgate/build`. */
  cacheDir?: string;
  /** Environment used to find tools (PATH is searched by exec; CUDA_HOME here). */
  env?: Record<string, string | undefined>;
  /** Python that can import triton, asked for the wheel's cuobjdump; default `python3`. */
  python?: string;
  /** One line per step and variant; default console.log. */
  log?: (line: string) => void;
  /** Milliseconds clock for durations; default Date.now. */
  now?: () => number;
}

export interface BuildOutcome {
  records: BuildRecord[];
  /** Tool problems, flag warnings, failed expectations and known compiler errors. */
  diagnostics: Diagnostic[];
  /** builds.json: the records, for the harness (which loads each `library`). */
  buildsJsonPath: string;
}

export const DEFAULT_CACHE_DIR = '.kernelgate/build';
export const DEFAULT_NVCC_FLAGS: readonly string[] = ['-gencode=arch=compute_90a,code=sm_90a'];
/** Bump when the record layout or the compile line changes, so old cache entries are not reused. */
export const CACHE_FORMAT = 'kernelgate-build-1';
export const LOG_TAIL_LINES = 30;
export const LOG_TAIL_CHARS = 3000;
export const HASH_CHARS = 16;

export type FunctionResources = NonNullable<BuildRecord['functions']>[number];
export type Expectation = NonNullable<BuildRecord['expectations']>[number];
