// Every package bundled into dist/ keeps its licence notice in dist/licenses.txt; the repository
// has a LICENSE matching package.json; a package with no licence file is refused unless named.
import { build, type Metafile } from 'esbuild';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledPackageDirs, collectLicenses } from '../scripts/lib/licenses.mjs';

async function metafileOf(entry: string): Promise<Metafile> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    write: false,
    metafile: true,
    outdir: join(tmpdir(), 'kg-licenses'),
    logLevel: 'silent',
  });
  return result.metafile;
}

describe('licences', () => {
  it('LICENSE is the MIT licence package.json declares', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { license: string };
    expect(pkg.license).toBe('MIT');
    expect(readFileSync('LICENSE', 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026/);
  });

  it('dist/licenses.txt carries the notice of every package the bundles contain', async () => {
    const metafiles = [await metafileOf('src/index.ts'), await metafileOf('src/cli/index.ts')];
    const dirs = bundledPackageDirs(metafiles);
    expect(dirs.length).toBeGreaterThan(20);
    const shipped = readFileSync('dist/licenses.txt', 'utf8');
    const missing: string[] = [];
    for (const pkg of collectLicenses(metafiles)) {
      const heading = `\n${pkg.name}@${pkg.version} (${pkg.license})\n`;
      if (!shipped.includes(heading)) missing.push(`${pkg.dir}: no "${heading.trim()}" section`);
      for (const { text } of pkg.texts) {
        if (!shipped.includes(text)) missing.push(`${pkg.dir}: its licence text is missing`);
      }
    }
    expect(missing).toEqual([]);
    // The Apache-2.0 and BSD packages among them, by name.
    expect(shipped).toContain('\nbefore-after-hook@');
    expect(shipped).toMatch(/\nfast-uri@[\d.]+ \(BSD-3-Clause\)\n/);
  }, 30_000);

  it('refuses a bundled package that ships no licence file and is not named', () => {
    const root = mkdtempSync(join(tmpdir(), 'kg-lic-'));
    const dir = join(root, 'node_modules', 'quiet-pkg');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'quiet-pkg', version: '1.0.0', license: 'MIT' }),
    );
    const metafile = {
      inputs: { 'node_modules/quiet-pkg/index.js': {} },
      outputs: {},
    } as unknown as Metafile;
    expect(() => collectLicenses([metafile], root)).toThrow(
      'node_modules/quiet-pkg: no LICENSE file, and scripts/lib/licenses.mjs NO_LICENSE_FILE does ' +
        'not name "quiet-pkg"; find its licence text before bundling it',
    );
  });

  it('keeps the in-source /*! notices and a source map beside each bundle', () => {
    expect(readFileSync('dist/index.js.LEGAL.txt', 'utf8')).toContain('mustache');
    for (const [bundle, entry] of [
      ['index', 'index'],
      ['cli', 'cli/cli'],
    ]) {
      expect(readFileSync(`dist/${bundle}.js`, 'utf8').trimEnd()).toMatch(
        new RegExp(`//# sourceMappingURL=${bundle}\\.js\\.map$`),
      );
      const map = JSON.parse(readFileSync(`dist/${bundle}.js.map`, 'utf8')) as {
        sources: string[];
      };
      expect(map.sources).toContain(`../src/${entry}.ts`);
    }
  });
});
