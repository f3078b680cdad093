// Bundles the action entry and the command line into dist/ (committed; the runner runs it as is).
import { build } from 'esbuild';

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
  legalComments: 'none',
  logLevel: 'warning',
  charset: 'utf8',
};

await build({ ...common, entryPoints: ['src/index.ts'], outfile: 'dist/index.js' });
await build({ ...common, entryPoints: ['src/cli.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node\n' + banner.js } });
