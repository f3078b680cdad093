// Types of scripts/lib/licenses.mjs (plain JavaScript: scripts/bundle.mjs runs it on node).
import type { Metafile } from 'esbuild';

export interface BundledPackage {
  dir: string;
  name: string;
  version: string;
  license: string;
  /** Licence files' texts; file null: the MIT notice written for a package that has no file. */
  texts: { file: string | null; text: string }[];
}
export const NO_LICENSE_FILE: Record<string, string>;
export function bundledPackageDirs(metafiles: Metafile[]): string[];
export function collectLicenses(metafiles: Metafile[], root?: string): BundledPackage[];
export function renderLicenses(packages: BundledPackage[]): string;
