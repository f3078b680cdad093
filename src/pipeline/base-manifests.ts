// A pull request's manifests against its base revision's (issue 30): when the run was paired, the
// base revision's checkout (results run.paired_base.root) holds the base's kernelgate.yml and
// kernels, read here with the same loader as the head's; the report names what changed.
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { type Config, loadConfig, manifestChanges, type ManifestChange } from '../config/index.js';
import type { KernelgateResults } from '../results/index.js';

export type BaseManifests =
  | { changes: ManifestChange[] }
  /** the base checkout is there but its configuration cannot be read (the loader's first line) */
  | { unreadable: { root: string; error: string } };

/**
 * The head's manifests against the base revision's, or undefined when the run has no base
 * checkout on this machine (not paired, or judged elsewhere). The head's kernelgate.yml, when it
 * is not at the root, is looked for at the same path in the base checkout.
 */
export function baseManifests(results: KernelgateResults, head: Config): BaseManifests | undefined {
  const root = results.run.paired_base?.root;
  if (!root || !existsSync(root)) return undefined;
  let configFile: string | undefined;
  if (head.configFile !== undefined) {
    const at = relative(head.rootDir, head.configFile);
    if (!at.startsWith('..') && !isAbsolute(at) && existsSync(join(root, at))) {
      configFile = join(root, at);
    }
  }
  let base: Config;
  try {
    base = loadConfig(root, configFile !== undefined ? { configFile } : {});
  } catch (error) {
    const first = ((error as Error).message.split('\n')[0] ?? '').trim();
    return { unreadable: { root, error: first } };
  }
  return { changes: manifestChanges(base, head) };
}
