// What the sticky items (sticky.ts) and publishing (publish.ts) share: the hidden marker that
// names a report, the nightly's label, GitHub's body limit, the page size and the output sink.
// Kept apart so that neither of the two modules imports the other.

/** GitHub's limit on a comment or issue body. */
export const BODY_LIMIT_CHARS = 65_536;

export const NIGHTLY_LABEL = 'kernelgate-nightly';

export const DEFAULT_COMMENT_KEY = 'default';

export const PAGE_SIZE = 100;

export interface OutputSink {
  setOutput(name: string, value: string): void;
  /** Appends Markdown to this step's job summary. */
  appendSummary(markdown: string): Promise<void>;
  warning(message: string): void;
  info(message: string): void;
}

export function reportMarker(kind: 'report' | 'nightly' | 'alert', key: string): string {
  return `<!-- kernelgate:${kind}:${key} -->`;
}

export function withMarker(marker: string, comment: string): string {
  const body = `${marker}\n${comment}`;
  if (body.length > BODY_LIMIT_CHARS) {
    throw new Error(
      `The short report is ${comment.length} characters; with its marker that is over GitHub's body limit of ` +
        `${BODY_LIMIT_CHARS}. The renderer must keep it within commentBudgetChars() = ${BODY_LIMIT_CHARS - marker.length - 1}.`,
    );
  }
  return body;
}
