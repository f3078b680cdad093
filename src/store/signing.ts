// The store key (issue 26): a directory store on a self-hosted runner is writable by every job that
// runs there, a pull request's code included. With a key (KERNELGATE_STORE_KEY, a secret only the
// steps that judge and store receive) every stored file carries an HMAC-SHA256 over its place in
// the store and its bytes, in `<file>.sig`; a reader with the key passes over, by name, any record
// whose results or judgement is not signed with it. Without a key the log says once that the store
// is unsigned and who can write it.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The environment variable holding the store key. */
export const STORE_KEY_VARIABLE = 'KERNELGATE_STORE_KEY';

/** The store key from an environment: undefined when unset or blank. */
export function storeKeyOf(env: Record<string, string | undefined>): string | undefined {
  const key = env[STORE_KEY_VARIABLE]?.trim();
  return key ? key : undefined;
}

/** The signatures kept in `<file>.sig`: one for the results file, one for its `.judged` sidecar. */
export interface RecordSignatures {
  results: string;
  judged?: string;
}

/**
 * HMAC-SHA256 (hex) over a stored file's name in the store (`branch/sku/file`) and its bytes: the
 * name is signed too, so a genuine record copied to another branch, GPU model or name fails.
 */
export function signFile(key: string, name: string, bytes: Buffer | string): string {
  return createHmac('sha256', key)
    .update(`kernelgate-store-v1\n${name}\n`)
    .update(bytes)
    .digest('hex');
}

/** Whether `signature` is the key's signature of the file (compared in constant time). */
export function signatureMatches(
  key: string,
  name: string,
  bytes: Buffer | string,
  signature: unknown,
): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const want = Buffer.from(signFile(key, name, bytes), 'hex');
  return timingSafeEqual(want, Buffer.from(signature, 'hex'));
}

/** `<file>.sig`'s signatures, or undefined where it holds none. */
export function parseSignatures(text: string | undefined): RecordSignatures | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<RecordSignatures>;
    if (typeof parsed.results !== 'string') return undefined;
    return {
      results: parsed.results,
      ...(typeof parsed.judged === 'string' ? { judged: parsed.judged } : {}),
    };
  } catch {
    return undefined;
  }
}

/** What the log says of a stored file the key does not sign. */
export function notSigned(path: string, why: 'unsigned' | 'mismatch' | 'missing'): string {
  const cause = {
    unsigned: "written by a job without the key, e.g. a pull request's code",
    mismatch:
      'its signature does not match: signed with another key, or changed after it was signed',
    missing: 'the signed record has a judgement and this file is gone',
  }[why];
  return `${path}: not signed with this repository's store key: ignored (${cause}).`;
}

/** The one-time note of a store read or written without a key. */
export function unsignedNote(root: string): string {
  return (
    `baseline store ${root}: records are not signed (${STORE_KEY_VARIABLE} is not set): every job that ` +
    "runs on this runner can write this folder, a pull request's code included, and what it writes " +
    `can become a baseline. Give the steps that judge and store the secret ${STORE_KEY_VARIABLE} ` +
    '(docs/forks.md, "The store key").'
  );
}
