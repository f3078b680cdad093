// A variant's own files (issue 27): `owns` in kernel.yml, and the CUDA sources its `build` compiles.
// A pull request's identity check (src/measure/identity.ts) leaves a file owned by other variants
// out of a variant's key, so a change to triton_fa2.py times triton_fa2 (and its kernel's
// references) and not the kernel's other variants. The claims are checked here: each names a file
// inside the kernel folder that exists, and a file is in one variant's `owns` only.
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import { showValue } from '../results/index.js';
import type { KernelManifest, ManifestVariant } from './config.js';

/** A claim's path, normalised within the kernel folder; undefined when it leaves the folder. */
export function ownedPath(path: string): string | undefined {
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path)) return undefined;
  const normal = posix.normalize(path.split('\\').join('/'));
  if (normal === '.' || normal === '..' || normal.startsWith('../')) return undefined;
  return normal;
}

/** The files `variant` claims, relative to its kernel folder: `owns`, then `build.sources`. */
export function variantClaims(variant: ManifestVariant): { field: string; path: string }[] {
  const build = variant.build?.['sources'];
  return [
    ...(variant.owns ?? []).map((path, j) => ({ field: `owns[${j}]`, path })),
    ...(Array.isArray(build) ? (build as string[]) : []).map((path, j) => ({
      field: `build.sources[${j}]`,
      path,
    })),
  ];
}

/**
 * The problems of the variants' `owns` in the kernel folder `dir` (shown as `shownDir`): a path
 * outside the folder, a file that does not exist, a file another variant owns or builds. (Two
 * variants' build.sources may share a file: both compile it.)
 */
export function ownsProblems(manifest: KernelManifest, dir: string, shownDir: string): string[] {
  const problems: string[] = [];
  // normalised path → the first variant that claims it, and in which field
  const claimed = new Map<string, { variant: string; field: string }>();
  manifest.variants.forEach((v, i) => {
    for (const { field, path } of variantClaims(v).filter((c) => c.field.startsWith('build.'))) {
      const at = ownedPath(path);
      if (at !== undefined && !claimed.has(at))
        claimed.set(at, { variant: v.name, field: `variants[${i}].${field}` });
    }
  });
  manifest.variants.forEach((v, i) => {
    (v.owns ?? []).forEach((path, j) => {
      const field = `variants[${i}].owns[${j}]`;
      const at = ownedPath(path);
      if (at === undefined) {
        problems.push(
          `${field} must be a path inside the kernel folder ${shownDir} (got ${showValue(path)})`,
        );
        return;
      }
      const full = join(dir, at);
      if (!existsSync(full) || !statSync(full).isFile()) {
        problems.push(`${field} is not a file in ${shownDir} (got ${showValue(path)})`);
        return;
      }
      const first = claimed.get(at);
      if (first !== undefined && first.variant !== v.name) {
        problems.push(
          `${field} is already claimed by variant ${first.variant} (${first.field}): a file is one variant's own or every variant's (got ${showValue(path)})`,
        );
        return;
      }
      if (first === undefined) claimed.set(at, { variant: v.name, field });
    });
  });
  return problems;
}
