// What the deep checks run: compute-sanitizer over every CUDA and Triton variant on its kernel's
// smallest case, and Nsight Compute over the headline case of each kernel (its tiers' case) for
// every CUDA and Triton variant and the kernel's tier reference (docs/scaling.md).
import {
  expandGroup,
  matchesOnly,
  namedReference,
  type Config,
  type LoadedKernel,
  type Scalar,
} from '../config/index.js';
import { caseIdOf } from '../formats/index.js';

/** The variants the deep checks look at: the code a team writes, not the libraries it calls. */
export const DEEP_BACKENDS = ['cuda', 'triton'] as const;

export interface DeepTarget {
  kernel: string;
  variant: string;
  caseId: string;
  params: Record<string, Scalar>;
  /**
   * The sanitizer's next cases, smallest first, for a variant the harness skips on this one
   * (torch's bsr_dense_mm takes no N that is not a multiple of 16): those at most
   * SANITIZER_FALLBACK_GROWTH times this case's size.
   */
  fallbacks?: { caseId: string; params: Record<string, Scalar> }[];
  /** The smallest of its cases past that limit, and how many times this case's size it is. */
  pastLimit?: { caseId: string; times: number };
  /** Its cases within the limit past the first SANITIZER_MAX_FALLBACKS: not tried. */
  untried?: number;
}

/**
 * A variant the harness skips on its kernel's smallest case is checked on its next case only if
 * that is at most this many times the size: the sanitizer's slowdown grows with the case (racecheck
 * took 60 s for bsr_gemm's smallest case on the H100), and the time box is the nightly's.
 */
export const SANITIZER_FALLBACK_GROWTH = 8;
/**
 * At most this many next cases are tried (each costs the harness's start-up under the tool, about
 * 9 s on the H100; most of a kernel's cases of one size differ in dtype or a flag only).
 */
export const SANITIZER_MAX_FALLBACKS = 2;

/** A case's size: the product of its positive numeric axes (the shards' estimate's proxy). */
export function caseSize(params: Record<string, Scalar>): number {
  return Object.values(params)
    .filter((v): v is number => typeof v === 'number' && v > 0)
    .reduce((p, v) => p * v, 1);
}

function deepVariants(k: LoadedKernel) {
  return k.manifest.variants.filter((v) =>
    (DEEP_BACKENDS as readonly string[]).includes(v.backend ?? ''),
  );
}

function chosen(config: Config, only: string[] | undefined): LoadedKernel[] {
  return config.kernels.filter((k) => !only?.length || only.includes(k.manifest.name));
}

/**
 * For the sanitizer: each CUDA and Triton variant on the smallest of its kernel's cases it runs
 * (the smallest product of the numeric axes; ties: the first in manifest order).
 */
export function sanitizerTargets(config: Config, only?: string[]): DeepTarget[] {
  const out: DeepTarget[] = [];
  for (const k of chosen(config, only)) {
    const cases = k.manifest.cases.flatMap(expandGroup);
    for (const v of deepVariants(k)) {
      // Its cases by size, smallest first (ties: manifest order), each once.
      const seen = new Set<string>();
      const mine = cases
        .filter((params) => matchesOnly(params, v.only))
        .map((params, i) => ({ params, caseId: caseIdOf(params), size: caseSize(params), i }))
        .filter((c) => !seen.has(c.caseId) && Boolean(seen.add(c.caseId)))
        .sort((a, b) => a.size - b.size || a.i - b.i);
      const [best, ...rest] = mine;
      if (!best) continue;
      const limit = best.size * SANITIZER_FALLBACK_GROWTH;
      const within = rest.filter((c) => c.size <= limit);
      const fallbacks = within.slice(0, SANITIZER_MAX_FALLBACKS);
      const untried = within.length - fallbacks.length;
      const past = rest.find((c) => c.size > limit);
      out.push({
        kernel: k.manifest.name,
        variant: v.name,
        caseId: best.caseId,
        params: best.params,
        ...(fallbacks.length
          ? { fallbacks: fallbacks.map((c) => ({ caseId: c.caseId, params: c.params })) }
          : {}),
        ...(past ? { pastLimit: { caseId: past.caseId, times: past.size / best.size } } : {}),
        ...(untried ? { untried } : {}),
      });
    }
  }
  return out;
}

/**
 * For Nsight Compute: each kernel's headline case (its tiers' case; a kernel without tiers has
 * none) with its CUDA and Triton variants and its tier reference, those that run the case.
 */
export function ncuTargets(config: Config, only?: string[]): DeepTarget[] {
  const out: DeepTarget[] = [];
  for (const k of chosen(config, only)) {
    const tiers = k.manifest.tiers;
    if (!tiers) continue;
    const headline = expandGroup(tiers.case)[0];
    if (!headline) continue;
    const reference = namedReference(k.manifest);
    const variants = k.manifest.variants.filter(
      (v) =>
        ((DEEP_BACKENDS as readonly string[]).includes(v.backend ?? '') || v.name === reference) &&
        matchesOnly(headline, v.only),
    );
    const caseId = caseIdOf(headline);
    for (const v of variants) {
      out.push({ kernel: k.manifest.name, variant: v.name, caseId, params: headline });
    }
  }
  return out;
}

/** The harness's --case-params for a case: every axis, as the harness writes values. */
export function caseParamsArg(params: Record<string, Scalar>): string {
  return caseIdOf(params);
}

/** A case the run judged SLOWER, with its change (current / baseline median). */
export interface SlowerCase {
  kernel: string;
  variant: string;
  caseId: string;
  params: Record<string, Scalar>;
  ratio: number;
}

/** ncu-slower's targets: the SLOWER cases, the largest change first (ties: as given). */
export function slowerTargets(cases: SlowerCase[]): DeepTarget[] {
  return cases
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.ratio - a.c.ratio || a.i - b.i)
    .map(({ c }) => ({ kernel: c.kernel, variant: c.variant, caseId: c.caseId, params: c.params }));
}

/** ncu-compare's target: a moved variant's case and its judged change (head / base). */
export interface CompareTarget extends DeepTarget {
  ratio: number;
}

/**
 * ncu-compare's targets: per variant, its case of the largest change either way (|ln ratio|;
 * ties: the first given), the variants in that order too.
 */
export function movedTargets(cases: SlowerCase[]): CompareTarget[] {
  const size = (c: SlowerCase) => Math.abs(Math.log(c.ratio));
  const best = new Map<string, SlowerCase>();
  for (const c of cases) {
    const key = `${c.kernel}/${c.variant}`;
    const had = best.get(key);
    if (had === undefined || size(c) > size(had)) best.set(key, c);
  }
  return [...best.values()]
    .sort((a, b) => size(b) - size(a))
    .map((c) => ({
      kernel: c.kernel,
      variant: c.variant,
      caseId: c.caseId,
      params: c.params,
      ratio: c.ratio,
    }));
}
