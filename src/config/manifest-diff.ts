// What a pull request changed in its own manifests (issue 30): each kernel's tolerances, cases,
// ci_cases and variants in the base revision's kernel.yml against the head's. The harness verifies
// the head with the head's tolerances, so a pull request that loosens its own tolerance passes;
// the report names the change (src/report/manifest-changes.ts words it). Plain data, no wording.
import type { CaseGroup, Config, KernelManifest } from './config.js';

export type ManifestChange =
  | { kind: 'kernel-added' | 'kernel-removed'; kernel: string }
  /** a bound present in both: loosens when it grew, tightens when it shrank */
  | {
      kind: 'bound';
      kernel: string;
      dtype: string;
      field: 'rel_l2' | 'max_abs';
      from: number;
      to: number;
    }
  /** a max_abs bound added (tightens) or dropped (loosens) under a dtype both revisions have */
  | { kind: 'max-abs-added' | 'max-abs-dropped'; kernel: string; dtype: string; value: number }
  /** a dtype's whole tolerance added or removed */
  | { kind: 'tolerance-added' | 'tolerance-removed'; kernel: string; dtype: string; relL2: number }
  /** case groups (cases or ci_cases) added or removed, each as key=value, … */
  | {
      kind: 'groups';
      kernel: string;
      field: 'cases' | 'ci_cases';
      added: string[];
      removed: string[];
    }
  | { kind: 'variants'; kernel: string; added: string[]; removed: string[] };

/** Whether a change lets more error through than the base revision allowed. */
export function loosens(change: ManifestChange): boolean {
  if (change.kind === 'bound') return change.to > change.from;
  return change.kind === 'max-abs-dropped' || change.kind === 'tolerance-removed';
}

/** A case group as the report shows it: `dtype=fp16, S=128|4096`. */
export function groupText(group: CaseGroup): string {
  return Object.entries(group)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.map(String).join('|') : String(v)}`)
    .join(', ');
}

function toleranceChanges(kernel: string, base: KernelManifest, head: KernelManifest) {
  const changes: ManifestChange[] = [];
  const dtypes = [...new Set([...Object.keys(base.tolerance), ...Object.keys(head.tolerance)])];
  for (const dtype of dtypes.sort()) {
    const was = base.tolerance[dtype];
    const now = head.tolerance[dtype];
    if (was === undefined && now !== undefined) {
      changes.push({ kind: 'tolerance-added', kernel, dtype, relL2: now.rel_l2 });
    } else if (was !== undefined && now === undefined) {
      changes.push({ kind: 'tolerance-removed', kernel, dtype, relL2: was.rel_l2 });
    } else if (was !== undefined && now !== undefined) {
      if (was.rel_l2 !== now.rel_l2) {
        changes.push({
          kind: 'bound',
          kernel,
          dtype,
          field: 'rel_l2',
          from: was.rel_l2,
          to: now.rel_l2,
        });
      }
      if (was.max_abs !== undefined && now.max_abs !== undefined && was.max_abs !== now.max_abs) {
        changes.push({
          kind: 'bound',
          kernel,
          dtype,
          field: 'max_abs',
          from: was.max_abs,
          to: now.max_abs,
        });
      } else if (was.max_abs === undefined && now.max_abs !== undefined) {
        changes.push({ kind: 'max-abs-added', kernel, dtype, value: now.max_abs });
      } else if (was.max_abs !== undefined && now.max_abs === undefined) {
        changes.push({ kind: 'max-abs-dropped', kernel, dtype, value: was.max_abs });
      }
    }
  }
  return changes;
}

/** What is in one list and not the other, by a key; in the list's own order. */
function setDiff<T>(base: T[], head: T[], key: (x: T) => string) {
  const was = new Set(base.map(key));
  const now = new Set(head.map(key));
  return {
    added: head.map(key).filter((k) => !was.has(k)),
    removed: base.map(key).filter((k) => !now.has(k)),
  };
}

function kernelChanges(base: KernelManifest, head: KernelManifest): ManifestChange[] {
  const kernel = head.name;
  const changes = toleranceChanges(kernel, base, head);
  for (const field of ['cases', 'ci_cases'] as const) {
    const d = setDiff(base[field] ?? [], head[field] ?? [], groupText);
    if (d.added.length || d.removed.length) changes.push({ kind: 'groups', kernel, field, ...d });
  }
  const v = setDiff(base.variants, head.variants, (x) => x.name);
  if (v.added.length || v.removed.length) changes.push({ kind: 'variants', kernel, ...v });
  return changes;
}

/** Every manifest change from the base revision's configuration to the head's, kernel by kernel. */
export function manifestChanges(base: Config, head: Config): ManifestChange[] {
  const was = new Map(base.kernels.map((k) => [k.manifest.name, k.manifest]));
  const now = new Map(head.kernels.map((k) => [k.manifest.name, k.manifest]));
  const names = [...new Set([...was.keys(), ...now.keys()])].sort();
  return names.flatMap((kernel): ManifestChange[] => {
    const b = was.get(kernel);
    const h = now.get(kernel);
    if (b === undefined) return [{ kind: 'kernel-added', kernel }];
    if (h === undefined) return [{ kind: 'kernel-removed', kernel }];
    return kernelChanges(b, h);
  });
}
