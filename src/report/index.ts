// The report: Markdown from templates/*.mustache (the PR comment within GitHub's limit, the full
// report, the nightly), one module per section (partial) assembled by view.ts, with the digest of
// what changed. The folder's only door.
export * from './digest.js';
export { stagesLine } from './builds.js';
export { renderReport, truncateMarkdown } from './render.js';
export {
  COMMENT_MARGIN,
  COMMENT_MAX_CHARS,
  COMMENT_NOTE_CHARS,
  COMMENT_ROWS_PER_VARIANT,
  GITHUB_COMMENT_LIMIT,
  type AcceptedSince,
  type DegradeLevel,
  type RenderedReport,
  type ReportContext,
  type ReportInput,
} from './types.js';
