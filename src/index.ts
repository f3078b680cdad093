// The action's entry point (bundled to dist/index.js): everything happens in run(), in an image of
// this process whose environment holds none of the job's credentials (src/action/relaunch.ts).
import { defaultDeps, relaunchWithoutCredentials, run } from './action/index.js';

const launch = relaunchWithoutCredentials();
if (!launch.relaunched && launch.why !== undefined) console.log(launch.why);
await run(
  defaultDeps(launch.relaunched && launch.token !== undefined ? { token: launch.token } : {}),
);
