// A kernel manifest's cases as the harness expands them (python/kernelgate_harness/manifest.py):
// each case group's combinations, first key slowest; each case's id (src/formats/case-id.ts
// caseIdOf, the one rule); each case with the variants whose `only` admits it. The
// shards split these units, the gate's coverage counts them, the deep checks pick from them.
import { caseIdOf } from '../formats/index.js';
import type { CaseGroup, LoadedKernel, Scalar } from './config.js';

/**
 * One unit of a run (and of its split into shards): a case of a kernel with all its variants
 * (they run interleaved).
 */
export interface ShardUnit {
  /** kernel/case, the id the harness's --cases file lists */
  id: string;
  kernel: string;
  caseId: string;
  params: Record<string, Scalar>;
  variants: string[];
}

/** Every combination of a case group, first key slowest, as the harness expands it. */
export function expandGroup(group: CaseGroup): Record<string, Scalar>[] {
  let out: Record<string, Scalar>[] = [{}];
  for (const [key, value] of Object.entries(group)) {
    const axis = Array.isArray(value) ? value : [value];
    out = out.flatMap((partial) => axis.map((v) => ({ ...partial, [key]: v })));
  }
  return out;
}

export function matchesOnly(params: Record<string, Scalar>, only: CaseGroup | undefined): boolean {
  for (const [key, want] of Object.entries(only ?? {})) {
    const options = Array.isArray(want) ? want : [want];
    if (!options.includes(params[key] as Scalar)) return false;
  }
  return true;
}

/**
 * The units of a run, in the harness's order (gemm first, then by kernel name; each kernel's cases
 * in manifest order). `only` limits to those kernels; `ci` takes the manifests' ci_cases.
 */
export function shardUnits(
  kernels: LoadedKernel[],
  options: { only?: string[]; ci?: boolean } = {},
): ShardUnit[] {
  const chosen = kernels
    .filter((k) => !options.only?.length || options.only.includes(k.manifest.name))
    .sort((a, b) => {
      const ka = [a.manifest.name !== 'gemm', a.manifest.name] as const;
      const kb = [b.manifest.name !== 'gemm', b.manifest.name] as const;
      return ka[0] === kb[0] ? (ka[1] < kb[1] ? -1 : ka[1] > kb[1] ? 1 : 0) : ka[0] ? 1 : -1;
    });
  const units: ShardUnit[] = [];
  for (const k of chosen) {
    const groups = (options.ci ? k.manifest.ci_cases : k.manifest.cases) ?? [];
    for (const params of groups.flatMap(expandGroup)) {
      const variants = k.manifest.variants
        .filter((v) => matchesOnly(params, v.only))
        .map((v) => v.name);
      if (variants.length === 0) continue;
      const caseId = caseIdOf(params);
      units.push({
        id: `${k.manifest.name}/${caseId}`,
        kernel: k.manifest.name,
        caseId,
        params,
        variants,
      });
    }
  }
  return units;
}
