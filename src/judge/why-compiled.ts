// What Triton compiled, base against head, for one moved variant (why.ts): the compiled kernel's
// metadata the harness records beside the tuned configuration of a case (cases[].tuning.compiled;
// the base's in paired.base_tuning.compiled, or in the stored run's tuning): registers, Triton's
// n_spills, shared memory, warps and stages. Its figures are read as a build's maxima
// (why-build.ts), so one rule (resourceCause) names the cause for CUDA builds and Triton kernels.
import type { Tuning } from '../results/index.js';
import { type BuildMaxima, type Resource, RESOURCES } from './why-build.js';

export type CompiledKernel = NonNullable<Tuning['compiled']>;

/** The compiled kernels of one case's tuned configuration, base and head (either may be absent). */
export interface CompiledEvidence {
  caseId: string;
  base?: CompiledKernel;
  head?: CompiledKernel;
}

const UNIT: Record<Resource, string> = {
  spills: ' bytes',
  registers: '',
  stack: ' bytes',
  'shared memory': ' bytes',
};
const MAX_KEY: Record<Resource, keyof BuildMaxima> = {
  spills: 'spills',
  registers: 'registers',
  stack: 'stack',
  'shared memory': 'smem',
};

/** The first resource, in RESOURCES' order, whose figure differs: "spills 0 → 96 bytes". */
export function resourceCause(
  base: BuildMaxima | undefined,
  head: BuildMaxima | undefined,
): string | undefined {
  for (const r of RESOURCES) {
    const [from, to] = [base?.[MAX_KEY[r]], head?.[MAX_KEY[r]]];
    if (from !== undefined && to !== undefined && from !== to) {
      return `${r} ${from} → ${to}${UNIT[r]}`;
    }
  }
  return undefined;
}

/** A resource's figure as the line states it: "spills 664 bytes". */
export const resourceText = (r: Resource, value: number) => `${r} ${value}${UNIT[r]}`;

/**
 * A compiled Triton kernel's figures as a build's maxima: registers (n_regs), spills (Triton's
 * n_spills counts the function's local memory in 4-byte words: × 4, in bytes), shared memory (what
 * the launch asks for). No stack: Triton reports none apart from n_spills.
 */
export function compiledMaxima(c: CompiledKernel): BuildMaxima {
  return {
    ...(c.n_regs !== undefined ? { registers: c.n_regs } : {}),
    ...(c.n_spills !== undefined ? { spills: c.n_spills * 4 } : {}),
    smem: c.shared_bytes,
  };
}

export type CompiledFinding =
  | { kind: 'none' }
  | { kind: 'missing'; side: 'base' | 'head' }
  | { kind: 'differs'; text: string }
  | { kind: 'same'; text: string };

/** What the compiled kernels of both sides say: a difference, sameness, or which side lacks them. */
export function compiledFinding(e: CompiledEvidence | undefined): CompiledFinding {
  if (e === undefined || (e.base === undefined && e.head === undefined)) return { kind: 'none' };
  if (e.base === undefined || e.head === undefined) {
    return { kind: 'missing', side: e.base === undefined ? 'base' : 'head' };
  }
  const [a, b] = [compiledMaxima(e.base), compiledMaxima(e.head)];
  const moved = resourceCause(a, b);
  if (moved) return { kind: 'differs', text: moved };
  if (e.base.num_warps !== e.head.num_warps) {
    return { kind: 'differs', text: `warps ${e.base.num_warps} → ${e.head.num_warps}` };
  }
  if (e.base.num_stages !== e.head.num_stages) {
    return { kind: 'differs', text: `stages ${e.base.num_stages} → ${e.head.num_stages}` };
  }
  const figures: [Resource, number | undefined][] = [
    ['registers', b.registers],
    ['spills', b.spills],
    ['shared memory', b.smem],
  ];
  const text = figures
    .filter((f): f is [Resource, number] => f[1] !== undefined)
    .map(([r, v]) => resourceText(r, v))
    .join(', ');
  return { kind: 'same', text };
}

/** "the base recorded no compiled-kernel metadata (an older harness or kernel module)" */
export const missingCompiledText = (side: 'base' | 'head') =>
  `the ${side} recorded no compiled-kernel metadata (an older harness or kernel module)`;
