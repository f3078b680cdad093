// The command line (bundled to dist/cli.js; runs when it is the entry): one module per command
// or group of commands, the list in cli.ts. The folder's only door.
export { COMMANDS, runCli } from './cli.js';
export { deepCommand } from './deep.js';
export {
  EXIT_GATE_FAILED,
  EXIT_PASS,
  EXIT_USAGE,
  PACKAGE_ROOT,
  RECORDED_RUN,
  type CliIo,
} from './common.js';
