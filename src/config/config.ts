// Loads kernelgate.yml (optional) and every kernels/*/kernel.yml into one typed Config.
// Every problem is reported with its file, its field and the bad value.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { ValidateFunction } from 'ajv';
import configSchema from '../../schema/config.schema.json' with { type: 'json' };
import kernelSchema from '../../schema/kernel.schema.json' with { type: 'json' };
import { InputError, formatAjvErrors, newAjv, problemsError, showValue } from '../results/index.js';
import { DATASHEET_PEAKS, type PeakSpec } from './gpus.js';
import { leadingFieldPath, yamlLocator } from './locate.js';
import { type NoiseByModel, noiseProblems } from './noise.js';
import { kernelFolders } from './kernel-folders.js';
import { ownsProblems } from './owns.js';
import { benchmarksFromRaw, type BenchmarkConfig, type RawBenchmark } from './benchmarks.js';
import { runOptions, type RawRunOptions, type RunOptions } from './run-options.js';

export type { PeakSpec };

export type Scalar = string | number | boolean;
export type CaseGroup = Record<string, Scalar | Scalar[]>;

/** kernels/<name>/kernel.yml, as schema/kernel.schema.json describes it. */
export interface KernelManifest {
  name: string;
  description?: string;
  module: string;
  flops_formula?: string;
  bytes_formula?: string;
  cases: CaseGroup[];
  ci_cases?: CaseGroup[];
  tolerance: Record<string, { rel_l2: number; max_abs?: number; why?: string }>;
  timeout_s?: number;
  speed_reference?: string;
  variants: ManifestVariant[];
  tiers?: TierLadderConfig;
}

export interface ManifestVariant {
  name: string;
  role: 'candidate' | 'reference';
  backend?: string;
  description?: string;
  only?: CaseGroup;
  /** the kernel folder's files that are this variant's alone (src/config/owns.ts) */
  owns?: string[];
  build?: Record<string, unknown>;
}

export type TierMetric = 'speedup' | 'pct_peak' | 'gemm_ceiling_ratio';

export interface TierLadderConfig {
  metric: TierMetric;
  /** pins the judged candidate; absent: the fastest candidate that passed on the headline case */
  variant?: string;
  /** the variant the ladder is measured against (speedup: default speed_reference) */
  reference?: string;
  /**
   * optional override: the share of the datasheet peak the reference reaches on the headline case,
   * %; without it, reachability comes from the reference's rate each run measures
   */
  reference_pct_peak?: number;
  case: CaseGroup;
  ladder: { name: string; grade?: string; min: number }[];
}

export interface LoadedKernel {
  manifest: KernelManifest;
  /** absolute folder of the kernel */
  dir: string;
  /** the manifest's path as shown in messages, relative to the root */
  file: string;
}

export interface Config {
  rootDir: string;
  /** the kernelgate.yml read, or undefined when the defaults were used */
  configFile: string | undefined;
  kernelsDir: string;
  harness: { python: string; timeoutS: number; args: string[] };
  compare: {
    thresholdPct: number;
    /**
     * kernelgate.yml sets compare.threshold_pct: it then applies to other tools' cases as well,
     * instead of their source's default (src/judge/sources.ts toolThresholdPct)
     */
    thresholdPctSet?: true;
    confidence: number;
    resamples: number;
    seed: number;
    /** by GPU model (data/gpus.json), then "kernel", "kernel/variant" or "kernel/variant/case" */
    noisePct: NoiseByModel;
    /** smallest change of a median (ms) that can be SLOWER or FASTER */
    minChangeMs: number;
    /** cases timed against the base revision in the same job (results cases[].paired) */
    paired: {
      /** practical threshold of a paired verdict, % (noise_pct and threshold_pct do not apply) */
      thresholdPct: number;
      /** absolute floor under it, ms of the base arm's median */
      minChangeMs: number;
      /** false: ignore pairs, judge against the stored baseline only */
      enabled: boolean;
      /** the harness measures a variant whose pairs cleared the threshold again in fresh processes */
      confirm: boolean;
      /** detection threshold under thresholdPct, %, for cases of detectMinMs or more (0: off) */
      detectPct: number;
      /** base median, ms, from which a case has the detection threshold */
      detectMinMs: number;
    };
  };
  correctness: { driftFactor: number; driftFloorRelL2: number };
  policy: {
    failOnSlower: boolean;
    failOnMissing: boolean;
    failOnBuildFailure: boolean;
    failOnError: boolean;
    failOnMeasurementError: boolean;
    /** a compute-sanitizer finding of the deep checks fails the gate */
    failOnSanitizer: boolean;
  };
  peaks: Record<string, PeakSpec>;
  report: { title: string; maxRows: number };
  run: RunOptions;
  kernels: LoadedKernel[];
  /** other tools' benchmarks judged beside the kernels (docs/adapters.md) */
  benchmarks: BenchmarkConfig[];
}

/** Datasheet dense peaks (no sparsity) by GPU model, from the GPU table (data/gpus.json). */
export const DEFAULT_PEAKS: Readonly<Record<string, PeakSpec>> = DATASHEET_PEAKS;

export const CONFIG_FILE_NAME = 'kernelgate.yml';
const DEFAULT_KERNELS_DIR = 'kernels';
/**
 * Smallest change of a median, in ms, that can be called SLOWER or FASTER. Five runs of the same
 * code on an H200 (docs/gpu-runs.md) moved sub-0.1 ms cases by up to 0.85 µs between runs
 * (graph replays; up to 9 % of a 6 µs case) although each run's own interval was tight.
 */
export const DEFAULT_MIN_CHANGE_MS = 0.001;
/**
 * Paired A/B (head and base revision sample by sample in one job): drift between runs cancels, so
 * the threshold can be much tighter than the run-to-run one. The absolute floor stays: on cases of
 * a few tens of microseconds that live in L2, two processes running identical code read up to
 * 0.48 µs apart, steadily (H100, two paired A/A runs of the whole set, docs/notes/paired-ab.md):
 * each process's buffers land on other physical pages, so the floor is that, with a margin.
 */
export const DEFAULT_PAIRED_THRESHOLD_PCT = 1;
export const DEFAULT_PAIRED_MIN_CHANGE_MS = 0.0008;
/**
 * A case of a millisecond or more resolves a change well under the 1 % threshold: over the
 * recorded A/A runs its interval's half-width was 0.20-0.48 %, and 99 % of the A/A medians
 * of such cases were within ±0.66 % (1,444 variant-cases: H100 runs 8-31 and nights 32-42, H200 runs 47-48). So such
 * a case decides SLOWER or FASTER once its interval is wholly beyond ±0.5 % (a planted 1 % change
 * straddled the 1 % threshold on 2 of its 8 cases, run 12), and a verdict under the threshold
 * stands only when a fresh pair of worker processes repeats it (the offsets of one process pair
 * do not: docs/notes/paired-ab.md).
 *
 * The default is that fraction of the paired threshold (0.5 % at the default 1 %): a repository
 * that raises threshold_pct to ignore smaller changes must not have them called SLOWER through
 * the detection band (a noisy CPU runner with threshold_pct 100 read a 22 % wobble as SLOWER).
 */
export const DEFAULT_PAIRED_DETECT_FRACTION = 0.5;
export const DEFAULT_PAIRED_DETECT_MIN_MS = 1;

/** kernelgate.yml exactly as written (snake_case), after schema validation. */
interface RawConfig {
  kernels_dir?: string;
  harness?: { python?: string; timeout_s?: number; args?: string[] };
  compare?: {
    threshold_pct?: number;
    confidence?: number;
    resamples?: number;
    seed?: number;
    noise_pct?: NoiseByModel;
    min_change_ms?: number;
    paired?: {
      threshold_pct?: number;
      min_change_ms?: number;
      enabled?: boolean;
      confirm?: boolean;
      detect_pct?: number;
      detect_min_ms?: number;
    };
  };
  correctness?: { drift_factor?: number; drift_floor_rel_l2?: number };
  policy?: {
    fail_on_slower?: boolean;
    fail_on_missing?: boolean;
    fail_on_build_failure?: boolean;
    fail_on_error?: boolean;
    fail_on_measurement_error?: boolean;
    fail_on_sanitizer?: boolean;
    fail_on_correctness?: boolean;
    fail_on_drift?: boolean;
  };
  peaks?: Record<string, { tflops?: Record<string, number>; gbps?: number }>;
  report?: { title?: string; max_rows?: number };
  run?: RawRunOptions;
  benchmarks?: RawBenchmark[];
}

export interface LoadConfigOptions {
  /** an explicit kernelgate.yml; it must exist (the default one may be absent) */
  configFile?: string;
}

let validators: { config: ValidateFunction; kernel: ValidateFunction } | undefined;

function getValidators() {
  if (!validators) {
    const ajv = newAjv();
    validators = { config: ajv.compile(configSchema), kernel: ajv.compile(kernelSchema) };
  }
  return validators;
}

/**
 * Parses YAML; a syntax error becomes `file:line:col: YAML syntax error: …`, with its site when
 * `path` (the file's absolute path) is given.
 */
export function parseYaml(text: string, file: string, path?: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
    const what = (first.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    const message = `${where}: YAML syntax error: ${what}`;
    const at = pos ? { line: pos.line, column: pos.col } : {};
    throw new InputError(message, [message], path ? [{ file: path, ...at, message }] : []);
  }
  return doc.toJS() as unknown;
}

/** A YAML file's problems, each with its site: the line and column of the field it names. */
function fieldProblems(shown: string, path: string, text: string, problems: string[]) {
  const { locate } = yamlLocator(text);
  return problemsError(shown, problems, { path, locate: (p) => locate(leadingFieldPath(p)) });
}

function readText(path: string, shown: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(`${shown}: cannot read: ${(err as Error).message}`);
  }
}

/**
 * Loads the configuration of the repository at `rootDir`: kernelgate.yml (defaults when absent)
 * and every `<kernels_dir>/<name>/kernel.yml`, validated against their schemas and cross-checked.
 */
export function loadConfig(rootDir: string, opts: LoadConfigOptions = {}): Config {
  const root = resolve(rootDir);
  const configPath = opts.configFile ? resolve(opts.configFile) : join(root, CONFIG_FILE_NAME);
  const shownConfig = relative(root, configPath) || CONFIG_FILE_NAME;

  let raw: RawConfig = {};
  let configFile: string | undefined;
  let configText = '';
  if (existsSync(configPath)) {
    configText = readText(configPath, shownConfig);
    const data = parseYaml(configText, shownConfig, configPath) ?? {};
    raw = validateConfigData(data, shownConfig, configPath, configText);
    configFile = configPath;
  } else if (opts.configFile) {
    throw new InputError(`${shownConfig}: no such config file`);
  }

  const kernelsDir = raw.kernels_dir ?? DEFAULT_KERNELS_DIR;
  const kernelsPath = resolve(root, kernelsDir);
  let kernels: LoadedKernel[] = [];
  if (existsSync(kernelsPath) && statSync(kernelsPath).isDirectory()) {
    kernels = loadKernels(root, kernelsPath);
  } else if (raw.kernels_dir !== undefined) {
    const problem = `kernels_dir must be a folder (got ${showValue(raw.kernels_dir)}, which does not exist)`;
    throw fieldProblems(shownConfig, configPath, configText, [problem]);
  }

  const { benchmarks, problems } = benchmarksFromRaw(
    raw.benchmarks ?? [],
    root,
    kernels.map((k) => k.manifest.name),
  );
  if (problems.length) throw fieldProblems(shownConfig, configPath, configText, problems);
  return configFromRaw(raw, root, configFile, kernels, benchmarks);
}

/** The defaults, with no file read and no kernels: for judging results without a repository. */
export function defaultConfig(rootDir = '.'): Config {
  return configFromRaw({}, resolve(rootDir), undefined, [], []);
}

function configFromRaw(
  raw: RawConfig,
  root: string,
  configFile: string | undefined,
  kernels: LoadedKernel[],
  benchmarks: BenchmarkConfig[],
): Config {
  const peaks: Record<string, PeakSpec> = {};
  for (const [sku, spec] of Object.entries(DEFAULT_PEAKS)) {
    peaks[sku] = { tflops: { ...spec.tflops }, gbps: spec.gbps };
  }
  for (const [sku, spec] of Object.entries(raw.peaks ?? {})) {
    const base = peaks[sku] ?? { tflops: {} };
    peaks[sku] = { tflops: { ...base.tflops, ...spec.tflops }, gbps: spec.gbps ?? base.gbps };
  }

  const pairedThresholdPct = raw.compare?.paired?.threshold_pct ?? DEFAULT_PAIRED_THRESHOLD_PCT;
  return {
    rootDir: root,
    configFile,
    kernelsDir: raw.kernels_dir ?? DEFAULT_KERNELS_DIR,
    harness: {
      python: raw.harness?.python ?? 'python3',
      timeoutS: raw.harness?.timeout_s ?? 300,
      args: raw.harness?.args ?? [],
    },
    compare: {
      thresholdPct: raw.compare?.threshold_pct ?? 3,
      ...(raw.compare?.threshold_pct !== undefined ? { thresholdPctSet: true as const } : {}),
      confidence: raw.compare?.confidence ?? 0.99,
      resamples: raw.compare?.resamples ?? 2000,
      seed: raw.compare?.seed ?? 1,
      noisePct: raw.compare?.noise_pct ?? {},
      minChangeMs: raw.compare?.min_change_ms ?? DEFAULT_MIN_CHANGE_MS,
      paired: {
        thresholdPct: pairedThresholdPct,
        minChangeMs: raw.compare?.paired?.min_change_ms ?? DEFAULT_PAIRED_MIN_CHANGE_MS,
        enabled: raw.compare?.paired?.enabled ?? true,
        confirm: raw.compare?.paired?.confirm ?? true,
        detectPct:
          raw.compare?.paired?.detect_pct ?? pairedThresholdPct * DEFAULT_PAIRED_DETECT_FRACTION,
        detectMinMs: raw.compare?.paired?.detect_min_ms ?? DEFAULT_PAIRED_DETECT_MIN_MS,
      },
    },
    correctness: {
      driftFactor: raw.correctness?.drift_factor ?? 2,
      driftFloorRelL2: raw.correctness?.drift_floor_rel_l2 ?? 1e-4,
    },
    policy: {
      failOnSlower: raw.policy?.fail_on_slower ?? false,
      failOnMissing: raw.policy?.fail_on_missing ?? false,
      failOnBuildFailure: raw.policy?.fail_on_build_failure ?? true,
      failOnError: raw.policy?.fail_on_error ?? true,
      failOnMeasurementError: raw.policy?.fail_on_measurement_error ?? true,
      failOnSanitizer: raw.policy?.fail_on_sanitizer ?? true,
    },
    peaks,
    report: {
      title: raw.report?.title ?? 'kernelgate',
      maxRows: raw.report?.max_rows ?? 100,
    },
    run: runOptions(raw.run),
    kernels,
    benchmarks,
  };
}

function validateConfigData(data: unknown, file: string, path: string, text: string): RawConfig {
  const { config: validate } = getValidators();
  const noise = noiseProblems(data);
  if (noise.length) throw fieldProblems(file, path, text, noise);
  if (!validate(data))
    throw fieldProblems(file, path, text, formatAjvErrors(validate.errors ?? []));
  const raw = data as RawConfig;
  const problems: string[] = [];
  for (const key of ['fail_on_correctness', 'fail_on_drift'] as const) {
    if (raw.policy?.[key] === false) {
      problems.push(
        `policy.${key} cannot be switched off: correctness FAIL and DRIFT always fail the gate (got false)`,
      );
    }
  }
  if (problems.length) throw fieldProblems(file, path, text, problems);
  return raw;
}

function loadKernels(root: string, kernelsPath: string): LoadedKernel[] {
  return kernelFolders(kernelsPath).flatMap((f) => loadKernel(root, kernelsPath, f) ?? []);
}

/** One kernel folder's manifest, validated and cross-checked; undefined when it has none. */
export function loadKernel(
  root: string,
  kernelsPath: string,
  folder: string,
): LoadedKernel | undefined {
  const manifestPath = join(kernelsPath, folder, 'kernel.yml');
  if (!existsSync(manifestPath)) return undefined;
  const shown = relative(root, manifestPath);
  const text = readText(manifestPath, shown);
  const data = parseYaml(text, shown, manifestPath);
  const { kernel: validate } = getValidators();
  const invalid = (problems: string[]) => fieldProblems(shown, manifestPath, text, problems);
  if (!validate(data)) throw invalid(formatAjvErrors(validate.errors ?? []));
  const manifest = data as KernelManifest;
  const problems = crossCheckManifest(manifest, folder);
  const dir = join(kernelsPath, folder);
  problems.push(...ownsProblems(manifest, dir, dirname(shown).split('\\').join('/')));
  if (problems.length) throw invalid(problems);
  return { manifest, dir, file: shown };
}

/** Checks the schema cannot express: names that must refer to each other. */
export function crossCheckManifest(manifest: KernelManifest, folder: string): string[] {
  const problems: string[] = [];
  if (manifest.name !== folder) {
    problems.push(
      `name must equal its folder name ${showValue(folder)} (got ${showValue(manifest.name)})`,
    );
  }
  const names = manifest.variants.map((v) => v.name);
  const seen = new Set<string>();
  manifest.variants.forEach((v, i) => {
    if (seen.has(v.name))
      problems.push(`variants[${i}].name is a duplicate (got ${showValue(v.name)})`);
    seen.add(v.name);
  });
  const known = `(one of ${names.join(', ')})`;
  if (manifest.speed_reference !== undefined && !seen.has(manifest.speed_reference)) {
    problems.push(
      `speed_reference must name a variant ${known} (got ${showValue(manifest.speed_reference)})`,
    );
  }
  const tiers = manifest.tiers;
  if (tiers) {
    if (tiers.variant !== undefined && !seen.has(tiers.variant)) {
      problems.push(`tiers.variant must name a variant ${known} (got ${showValue(tiers.variant)})`);
    }
    if (tiers.variant === undefined && !manifest.variants.some((v) => v.role === 'candidate')) {
      problems.push('tiers.variant is required when no variant has role candidate (got nothing)');
    }
    if (tiers.reference !== undefined && !seen.has(tiers.reference)) {
      problems.push(
        `tiers.reference must name a variant ${known} (got ${showValue(tiers.reference)})`,
      );
    }
    if (
      tiers.metric === 'speedup' &&
      tiers.reference === undefined &&
      manifest.speed_reference === undefined
    ) {
      problems.push(
        'tiers.metric "speedup" needs tiers.reference or speed_reference to name the reference variant (got nothing)',
      );
    }
    problems.push(...unreachableRungs(tiers, manifest));
  }
  return problems;
}

/**
 * The variant a kernel's tiers and speed-ups are measured against: tiers.reference, else
 * speed_reference; undefined when the manifest names neither.
 */
export function namedReference(manifest: KernelManifest): string | undefined {
  return manifest.tiers?.reference ?? manifest.speed_reference;
}

/** The reference a ladder is measured against, as its rungs name it. */
function ladderReference(tiers: TierLadderConfig, manifest: KernelManifest): string {
  if (tiers.metric === 'gemm_ceiling_ratio') return tiers.reference ?? 'the measured cuBLAS rate';
  return namedReference(manifest) ?? 'the reference';
}

/**
 * Rungs no kernel can reach on the chip, as far as the configuration alone can tell. A pct_peak
 * rung above 100 needs more than the datasheet peak. A speedup or gemm_ceiling_ratio rung of `min`
 * needs min × the reference's rate: only when kernel.yml declares where the reference runs
 * (tiers.reference_pct_peak, an optional override) can a rung be refused here, at min × that %
 * above 100. Without it every ratio rung is accepted, and each run decides reachability from the
 * reference rate it measured (src/judge/tiers.ts): no user has to know that share beforehand.
 */
export function unreachableRungs(tiers: TierLadderConfig, manifest: KernelManifest): string[] {
  const problems: string[] = [];
  const pct = (x: number) => `${Number(x.toFixed(1))} %`;
  if (tiers.metric === 'pct_peak') {
    tiers.ladder.forEach((rung, i) => {
      if (rung.min > 100) {
        problems.push(
          `tiers.ladder[${i}].min needs ${pct(rung.min)} of the chip's datasheet peak: unreachable on any GPU (got ${showValue(rung.min)})`,
        );
      }
    });
    return problems;
  }
  const reference = ladderReference(tiers, manifest);
  const share = tiers.reference_pct_peak;
  if (share === undefined) return problems;
  const above = tiers.ladder.map((rung, i) => ({ rung, i })).filter(({ rung }) => rung.min > 1);
  for (const { rung, i } of above) {
    const needs = rung.min * share;
    if (needs > 100) {
      problems.push(
        `tiers.ladder[${i}].min asks ${rung.min}× ${reference}, which runs at ${pct(share)} of the chip's peak ` +
          `(tiers.reference_pct_peak): it needs ${pct(needs)} of the peak, unreachable (got ${showValue(rung.min)})`,
      );
    }
  }
  return problems;
}

/** The candidates a tier ladder grades: `tiers.variant` when pinned, else every candidate. */
export function tierCandidates(manifest: KernelManifest): string[] {
  if (manifest.tiers?.variant !== undefined) return [manifest.tiers.variant];
  return manifest.variants.filter((v) => v.role === 'candidate').map((v) => v.name);
}
