// Publishing: the report on disk first, then the job summary, outputs, the sticky comment or the
// nightly issue, through the GitHub client (github.ts). The folder's only door.
export * from './github.js';
// what sticky.ts and publish.ts share (neither imports the other)
export * from './marker.js';
export * from './publish.js';
