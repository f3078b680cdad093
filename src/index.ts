// The action's entry point (bundled to dist/index.js): everything happens in run().
import { run } from './action/index.js';

await run();
