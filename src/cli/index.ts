// The command line (bundled to dist/cli.js; runs when it is the entry). The folder's only door.
export * from './cli.js';
