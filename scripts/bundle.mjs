// Bundles the action entry and the command line into dist/ (committed; the runner runs it as is),
// with a source map beside each bundle and dist/licenses.txt: every package the bundles contain,
// its version, its declared licence and its licence text (the notices the bundles must carry).
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { collectLicenses, renderLicenses } from './lib/licenses.mjs';

// CommonJS dependencies bundled into an ES module still call require() for node built-ins.
const banner = {
  js: "import { createRequire as __kgCreateRequire } from 'node:module';\nconst require = __kgCreateRequire(import.meta.url);",
};

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  banner,
  // The /*! ... */ notices inside the bundled sources go to dist/*.js.LEGAL.txt; the packages'
  // licence files to dist/licenses.txt.
  legalComments: 'external',
  // Maps without the sources' text (small; the sources are in the repository at the tagged commit).
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
  charset: 'utf8',
};

const action = await build({ ...common, entryPoints: ['src/index.ts'], outfile: 'dist/index.js' });
const cli = await build({
  ...common,
  entryPoints: ['src/cli/index.ts'],
  outfile: 'dist/cli.js',
  banner: { js: '#!/usr/bin/env node\n' + banner.js },
});

const packages = collectLicenses([action.metafile, cli.metafile]);
writeFileSync('dist/licenses.txt', renderLicenses(packages));
