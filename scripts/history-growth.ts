// The simulated year of issue 18, measured here: prints the figures docs/history.md quotes.
// 365 nightlies and 1,000 pushes on each of two GPU SKUs (2,730 records) from a real recorded
// 217-case results file, on a real git repository (scripts/lib/history-year.ts says how).
//
// Usage (bundled with esbuild, since node 20 does not run TypeScript):
//   npx esbuild scripts/history-growth.ts --bundle --platform=node --format=esm --target=node20 \
//     --outfile=.kernelgate/history-growth.mjs --log-level=warning \
//     --banner:js="import { createRequire as r } from 'node:module'; const require = r(import.meta.url);"
//   node .kernelgate/history-growth.mjs [--results FILE] [--nightlies 365] [--pushes 1000] [--out DIR]
import { parseArgs } from 'node:util';
import { simulateYear } from './lib/history-year.js';

const { values } = parseArgs({
  options: {
    results: { type: 'string', default: 'test/fixtures/recorded/push/results.json.gz' },
    nightlies: { type: 'string', default: '365' },
    pushes: { type: 'string', default: '1000' },
    out: { type: 'string' },
  },
});
const figures = await simulateYear({
  results: values.results,
  nightlies: Number(values.nightlies),
  pushes: Number(values.pushes),
  ...(values.out !== undefined ? { out: values.out } : {}),
});
console.log(JSON.stringify(figures, null, 2));
