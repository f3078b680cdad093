// Generates src/results/results-types.ts from schema/results.schema.json, so the TypeScript types
// come from the one contract. `--check` fails when the committed file is stale.
import { compileFromFile } from 'json-schema-to-typescript';
import { readFileSync, writeFileSync } from 'node:fs';

const out = 'src/results/results-types.ts';
const ts = await compileFromFile('schema/results.schema.json', {
  bannerComment:
    '// Generated from schema/results.schema.json by `npm run gen:types`. Do not edit by hand.',
  additionalProperties: false,
  style: { singleQuote: true, printWidth: 100, trailingComma: 'all' },
});
if (process.argv.includes('--check')) {
  if (readFileSync(out, 'utf8') !== ts) {
    console.error(`${out} is stale: run \`npm run gen:types\` and commit the result.`);
    process.exit(1);
  }
} else {
  writeFileSync(out, ts);
}
