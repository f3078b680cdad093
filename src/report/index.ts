// The report: Markdown from templates/*.mustache (the PR comment within GitHub's limit, the full
// report, the nightly), with the digest of what changed. The folder's only door.
export * from './digest.js';
export * from './render.js';
