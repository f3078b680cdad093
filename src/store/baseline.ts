// The baseline store: results of trusted runs (push to main, schedule), kept per branch and GPU SKU,
// with history for trend charts. PR runs only read it, so fork PRs need no write access. Two
// stores sit behind one interface: a directory of full results files (this file; the command
// line's default) and a git data branch of compact records (src/history/branch-store.ts).
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, sep } from 'node:path';
import { loadResults, parseJson, validateResults } from '../results/index.js';
import type { KernelgateResults } from '../results/index.js';
import { notSigned, parseSignatures, signatureMatches, signFile, unsignedNote } from './signing.js';

export interface BaselineKey {
  /** Branch whose newest trusted results are the baseline, e.g. `main` (a PR's base branch). */
  branch: string;
  /** Normalised GPU SKU (`H100-SXM`, `H200`, ...): results never cross SKUs. */
  sku: string;
}

export interface StoredBaseline {
  results: KernelgateResults;
  /** Where it came from, for the report ("baseline: main @ 1a2b3c4, 2026-11-21"). */
  path: string;
  /**
   * What the judge said of the run when it was stored: its gate verdict and the cases it found
   * SLOWER. Undefined where the store kept no such record (a results file stored before 0.1.1).
   */
  judged?: StoredJudgement;
}

/**
 * A performance regression a pull request accepted (the label `kernelgate-accept`): who applied the
 * label, on which pull request, and how many SLOWER cases it let through.
 */
export interface StoredAcceptance {
  label: string;
  by?: string;
  pr?: number;
  cases: number;
}

/** The gate's verdict on a stored run and its SLOWER cases ("kernel/variant/case"). */
export interface StoredJudgement {
  verdict?: 'pass' | 'fail';
  slower: string[];
  event?: string;
  /** the regression this run's gate let through because a pull request accepted it */
  accepted?: StoredAcceptance;
}

/** An acceptance as read back from a file or record: undefined unless it has a label and a count. */
export function acceptanceOf(value: unknown): StoredAcceptance | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v['label'] !== 'string' || typeof v['cases'] !== 'number') return undefined;
  return {
    label: v['label'],
    cases: v['cases'],
    ...(typeof v['by'] === 'string' ? { by: v['by'] } : {}),
    ...(typeof v['pr'] === 'number' ? { pr: v['pr'] } : {}),
  };
}

/** The judgement a store keeps beside a run, from what the judge knew when it was stored. */
export function judgementOf(context: SaveContext): StoredJudgement {
  const slower = Object.entries(context.verdicts ?? {})
    .filter(([, verdict]) => verdict === 'SLOWER')
    .map(([id]) => id)
    .sort();
  return {
    ...(context.verdict ? { verdict: context.verdict } : {}),
    slower,
    ...(context.event ? { event: context.event } : {}),
    ...(context.accepted ? { accepted: context.accepted } : {}),
  };
}

/** How far past this machine's clock a stored run may say it started (clocks disagree a little). */
export const CLOCK_SKEW_MS = 10 * 60 * 1000;

/**
 * Why a stored run cannot be trusted to be newer than the ones before it: it says it started
 * after this machine's clock (a runner whose clock was wrong, or a record written to pin the
 * baseline). Undefined when it is fine.
 */
export function fromTheFuture(startedAt: string, nowMs: number): string | undefined {
  const t = Date.parse(startedAt);
  if (Number.isNaN(t)) return `its start time ${JSON.stringify(startedAt)} is not a date`;
  if (t <= nowMs + CLOCK_SKEW_MS) return undefined;
  return (
    `it says it started at ${startedAt}, after this machine's clock (${new Date(nowMs).toISOString()}); ` +
    'a record from the future would stay the newest baseline until then'
  );
}

/** A value now (the directory store) or later (the data-branch store, which runs git). */
export type Awaitable<T> = T | Promise<T>;

/** What the judge knew about a run when it is stored; a store keeps what it has room for. */
export interface SaveContext {
  /** the event that triggered the run: push, schedule, workflow_dispatch */
  event?: string;
  /** the gate's verdict on this run */
  verdict?: 'pass' | 'fail';
  /** per case ("kernel/variant/case"): its performance verdict against its own baseline */
  verdicts?: Record<string, string>;
  /** where the full results (raw samples included) are kept: the run's page and artifact */
  artifact?: string;
  /** per kernel: the variant its candidates are measured against (kernel.yml speed_reference) */
  references?: Record<string, string>;
  /** confidence of the median intervals a compact record keeps (compare.confidence) */
  confidence?: number;
  /** the SLOWER cases the gate let through because a pull request accepted them */
  accepted?: StoredAcceptance;
}

export interface BaselineStore {
  /** The newest stored run of the branch on the SKU; undefined when there is none. */
  latest(key: BaselineKey): Awaitable<StoredBaseline | undefined>;
  /** Stores a trusted run; returns where it was stored. */
  save(key: BaselineKey, results: KernelgateResults, context?: SaveContext): Awaitable<string>;
  /** Up to `limit` stored runs, newest first. */
  history(key: BaselineKey, limit: number): Awaitable<StoredBaseline[]>;
}

/**
 * A store that could not read or write: the message says what and why. The run is judged as if
 * nothing were stored (a failed read) or is left out of the store (a failed write); its verdict
 * does not change.
 */
export class StoreError extends Error {}

/** The directory store answers at once. */
export interface DirectoryBaselineStore extends BaselineStore {
  latest(key: BaselineKey): StoredBaseline | undefined;
  save(key: BaselineKey, results: KernelgateResults, context?: SaveContext): string;
  history(key: BaselineKey, limit: number): StoredBaseline[];
}

/** Branch and SKU become folder names; anything outside a safe set is replaced, never trusted. */
export function safeSegment(value: string, field: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_');
  if (cleaned === '' || cleaned === '_') {
    throw new Error(`baseline store: ${field} ${JSON.stringify(value)} is not usable as a name`);
  }
  return cleaned;
}

/** The directory store's options: its clock, and where it says which stored runs it refused. */
export interface FileStoreOptions {
  now?: () => number;
  warn?: (message: string) => void;
  /** the store key (KERNELGATE_STORE_KEY): records are signed, unsigned ones refused by name */
  key?: string | undefined;
  /** where the one-time note of an unsigned store goes (no key) */
  info?: (message: string) => void;
}

/** Store folders whose "unsigned" note was given in this process: once each. */
const NOTED_UNSIGNED = new Set<string>();

/** A file's text, or undefined when it is not there. */
function readIfThere(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** The judgement kept beside a stored results file (`<file>.judged`), from its text. */
function readJudgement(path: string, text: string | undefined): StoredJudgement | undefined {
  const side = `${path}.judged`;
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<StoredJudgement>;
    return {
      ...(parsed.verdict === 'pass' || parsed.verdict === 'fail'
        ? { verdict: parsed.verdict }
        : {}),
      slower: Array.isArray(parsed.slower) ? parsed.slower.map(String) : [],
      ...(typeof parsed.event === 'string' ? { event: parsed.event } : {}),
      ...(acceptanceOf(parsed.accepted) ? { accepted: acceptanceOf(parsed.accepted) } : {}),
    };
  } catch {
    return { verdict: 'fail', slower: [], event: `unreadable ${side}` };
  }
}

/** A stored file's name in the store, as signed: `branch/sku/file`. */
function storeName(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}

/**
 * Why a stored run is not signed with the key (its results file or its `.judged` sidecar: no
 * `<file>.sig`, a signature that does not match, a signed judgement gone); undefined when it is.
 */
function whyNotSigned(
  root: string,
  key: string,
  path: string,
  text: string,
  judgedText: string | undefined,
): string | undefined {
  const sigs = parseSignatures(readIfThere(`${path}.sig`));
  if (sigs === undefined) return notSigned(path, 'unsigned');
  const name = storeName(root, path);
  if (!signatureMatches(key, name, text, sigs.results)) return notSigned(path, 'mismatch');
  const side = `${path}.judged`;
  if (judgedText === undefined) {
    return sigs.judged === undefined ? undefined : notSigned(side, 'missing');
  }
  if (sigs.judged === undefined) return notSigned(side, 'unsigned');
  if (!signatureMatches(key, `${name}.judged`, judgedText, sigs.judged)) {
    return notSigned(side, 'mismatch');
  }
  return undefined;
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * A directory store: `<root>/<branch>/<sku>/<started_at>-<sha>.json`, one file per trusted run,
 * and beside it `<file>.judged`, the gate's verdict and SLOWER cases when it was stored. Writes go
 * to a temporary name and are renamed into place, so a reader never sees half a file and
 * concurrent writers (matrix jobs) each add their own file instead of clobbering one `latest.json`.
 * Newest is by the run's start time; a run that says it started after this machine's clock is
 * refused by name (it would otherwise stay the newest until then).
 */
export function fileBaselineStore(
  root: string,
  options: FileStoreOptions = {},
): DirectoryBaselineStore {
  const now = options.now ?? Date.now;
  const warn = options.warn ?? (() => undefined);
  const dirOf = (key: BaselineKey) =>
    join(root, safeSegment(key.branch, 'branch'), safeSegment(key.sku, 'GPU SKU'));

  const entries = (key: BaselineKey): string[] => {
    const dir = dirOf(key);
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .reverse()
      .map((name) => join(dir, name));
  };

  const signer = options.key;
  const noteUnsigned = () => {
    if (signer !== undefined || NOTED_UNSIGNED.has(root)) return;
    NOTED_UNSIGNED.add(root);
    options.info?.(unsignedNote(root));
  };
  /** One stored run read: with the key, checked against `<file>.sig`; a string says why not. */
  const readOne = (path: string): StoredBaseline | string => {
    const text = readFileSync(path, 'utf8');
    const judgedText = readIfThere(`${path}.judged`);
    const unsigned =
      signer === undefined ? undefined : whyNotSigned(root, signer, path, text, judgedText);
    if (unsigned !== undefined) return unsigned;
    // parsed from the bytes that were checked, never read a second time
    const results = validateResults(parseJson(text, path), path);
    const future = fromTheFuture(results.run.started_at, now());
    if (future !== undefined) return `baseline store: refused ${path}: ${future}.`;
    const judged = readJudgement(path, judgedText);
    return { results, path, ...(judged ? { judged } : {}) };
  };

  /** Up to `limit` stored runs, newest first, those refused (unsigned, from the future) named. */
  const stored = (key: BaselineKey, limit: number): StoredBaseline[] => {
    noteUnsigned();
    const found: StoredBaseline[] = [];
    for (const path of entries(key)) {
      if (found.length >= limit) break;
      const one = readOne(path);
      if (typeof one === 'string') warn(one);
      else found.push(one);
    }
    return found;
  };

  return {
    latest: (key) => stored(key, 1)[0],
    history: (key, limit) => stored(key, limit),
    save(key, results, context) {
      const dir = dirOf(key);
      mkdirSync(dir, { recursive: true });
      const stamp = results.run.started_at.replace(/[^0-9A-Za-z]/g, '');
      const sha = safeSegment((results.run.git_sha ?? 'nosha').slice(0, 12), 'git sha');
      const path = join(dir, `${stamp}-${sha}.json`);
      noteUnsigned();
      const text = JSON.stringify(results, null, 2) + '\n';
      const judgedText =
        context === undefined ? undefined : JSON.stringify(judgementOf(context), null, 2) + '\n';
      // The judgement and the signatures first: a reader that sees the results file sees them.
      if (judgedText !== undefined) writeAtomically(`${path}.judged`, judgedText);
      if (signer !== undefined) {
        const name = storeName(root, path);
        const sigs = {
          results: signFile(signer, name, text),
          ...(judgedText !== undefined
            ? { judged: signFile(signer, `${name}.judged`, judgedText) }
            : {}),
        };
        writeAtomically(`${path}.sig`, JSON.stringify(sigs) + '\n');
      }
      writeAtomically(path, text);
      return path;
    },
  };
}

/** Reads a results file given explicitly (the `baseline` input or `--baseline`). */
export function explicitBaseline(path: string): StoredBaseline {
  if (!existsSync(path)) {
    throw new Error(`baseline ${path}: no such file`);
  }
  return { results: loadResults(path), path };
}
