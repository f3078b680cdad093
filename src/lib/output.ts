// Files and folders a user names on the command line (--out, --out-dir, --write): the missing
// folders on the way are created, and a path that cannot be written is one line naming the path
// and the operating system's reason, not a stack trace.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A path the user named could not be written; the message says which and why. */
export class OutputError extends Error {}

function outputError(shown: string, err: unknown): OutputError {
  const reason = ((err as Error).message ?? String(err)).split('\n')[0];
  return new OutputError(`cannot write ${shown}: ${reason}`);
}

/** Creates the folder `path` and its missing parents; `shown` is how the user wrote it. */
export function makeOutputDir(path: string, shown: string = path): void {
  try {
    mkdirSync(path, { recursive: true });
  } catch (err) {
    throw outputError(shown, err);
  }
}

/** Writes `text` to `path`, creating its missing folders; `shown` is how the user wrote it. */
export function writeOutput(path: string, text: string, shown: string = path): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  } catch (err) {
    throw outputError(shown, err);
  }
}
