import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * kernelgate's own root (templates/, schema/, data/, the harness): the nearest folder above this
 * module whose package.json is kernelgate's. The same from a source file under src/ (tests) and
 * from the bundle in dist/, wherever a module sits.
 */
export function packageRoot(moduleUrl: string = import.meta.url): string {
  const start = dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && isKernelgate(manifest)) return dir;
    if (dirname(dir) === dir) {
      throw new Error(`kernelgate's package.json not found above ${start}`);
    }
  }
}

function isKernelgate(manifest: string): boolean {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'kernelgate';
  } catch {
    return false;
  }
}
