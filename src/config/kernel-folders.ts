// The kernel folders under a kernels folder: each folder (or link to one) by name, sorted.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function kernelFolders(kernelsPath: string): string[] {
  return (
    readdirSync(kernelsPath, { withFileTypes: true })
      // A linked kernel folder counts like a real one (monorepos link shared kernels in).
      .filter(
        (d) =>
          d.isDirectory() ||
          (d.isSymbolicLink() &&
            statSync(join(kernelsPath, d.name), { throwIfNoEntry: false })?.isDirectory()),
      )
      .map((d) => d.name)
      .sort()
  );
}
