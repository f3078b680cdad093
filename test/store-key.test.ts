// The store key (issue 26): a baseline-dir folder on a self-hosted runner is writable by every job
// that runs there, a pull request's code included. With KERNELGATE_STORE_KEY every stored file is
// signed, and a record that is not signed with the key (planted, forged, copied under another name,
// its judgement swapped) is passed over by name, so it never becomes the baseline; the genuine one
// is chosen. Without the key the log says once that the store is unsigned and who can write it.
import {
  copyFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actionStore } from '../src/history/index.js';
import { childEnv } from '../src/lib/index.js';
import { fileBaselineStore, signFile, unsignedNote } from '../src/store/index.js';
import { emptyRun } from './support/git-repo.js';

const KEY = { branch: 'main', sku: 'H100-SXM' };
const SECRET = 'the repository secret';
const NOW = () => Date.parse('2026-11-26T12:00:00Z');

const run = emptyRun;

/** A store with the key holding one genuine trusted run; what it warns and notes is kept. */
function signedStore() {
  const root = mkdtempSync(join(tmpdir(), 'kg-store-key-'));
  const warnings: string[] = [];
  const infos: string[] = [];
  const store = fileBaselineStore(root, {
    now: NOW,
    key: SECRET,
    warn: (m) => warnings.push(m),
    info: (m) => infos.push(m),
  });
  const genuine = store.save(KEY, run('2026-11-20T10:00:00Z', 'a'.repeat(40)), {
    event: 'push',
    verdict: 'pass',
  });
  const dir = join(root, 'main', 'H100-SXM');
  return { root, dir, store, genuine, warnings, infos };
}

/** What a pull request's code can write into the folder: a newer results file, unsigned. */
function plant(dir: string, name: string, sha = 'b'.repeat(40)): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(run('2026-11-25T10:00:00Z', sha), null, 2) + '\n');
  return path;
}

describe('the store key', () => {
  it('signs every stored file: the results and the judgement, bound to their place in the store', () => {
    const { genuine, root, store, warnings } = signedStore();
    const sig = JSON.parse(readFileSync(`${genuine}.sig`, 'utf8')) as Record<string, string>;
    const name = genuine.slice(root.length + 1);
    expect(sig['results']).toBe(signFile(SECRET, name, readFileSync(genuine)));
    expect(sig['judged']).toBe(
      signFile(SECRET, `${name}.judged`, readFileSync(`${genuine}.judged`)),
    );
    expect(store.latest(KEY)?.judged?.verdict).toBe('pass');
    expect(warnings).toEqual([]);
  });

  it('passes over a planted unsigned record by name and chooses the genuine one', () => {
    const { dir, store, genuine, warnings } = signedStore();
    const planted = plant(dir, '20261125T100000Z-bbbbbbbbbbbb.json');
    expect(store.latest(KEY)?.path).toBe(genuine);
    expect(warnings).toEqual([
      `${planted}: not signed with this repository's store key: ignored (written by a job without the key, e.g. a pull request's code).`,
    ]);
  });

  it('passes over a forged signature, a genuine record copied under a newer name and a swapped judgement', () => {
    const { dir, store, genuine, warnings } = signedStore();
    const forged = plant(dir, '20261125T100000Z-bbbbbbbbbbbb.json');
    const text = readFileSync(forged, 'utf8');
    writeFileSync(
      `${forged}.sig`,
      JSON.stringify({
        results: signFile('a guess', 'main/H100-SXM/' + '20261125T100000Z-bbbbbbbbbbbb.json', text),
      }),
    );
    const copy = join(dir, '20261124T100000Z-aaaaaaaaaaaa.json');
    copyFileSync(genuine, copy);
    copyFileSync(`${genuine}.sig`, `${copy}.sig`);
    copyFileSync(`${genuine}.judged`, `${copy}.judged`);
    expect(store.latest(KEY)?.path).toBe(genuine);
    const mismatch =
      "not signed with this repository's store key: ignored (its signature does not match: signed with another key, or changed after it was signed).";
    expect(warnings).toEqual([`${forged}: ${mismatch}`, `${copy}: ${mismatch}`]);

    // the genuine run's judgement rewritten (a failing run made to look passing) or removed
    warnings.length = 0;
    writeFileSync(`${genuine}.judged`, JSON.stringify({ verdict: 'fail', slower: [] }));
    expect(store.latest(KEY)).toBeUndefined();
    expect(warnings.at(-1)).toBe(`${genuine}.judged: ${mismatch}`);
    rmSync(`${genuine}.judged`);
    expect(store.latest(KEY)).toBeUndefined();
    expect(warnings.at(-1)).toBe(
      `${genuine}.judged: not signed with this repository's store key: ignored (the signed record has a judgement and this file is gone).`,
    );
  });

  it('without the key, says once that the store is unsigned and who can write it', () => {
    const root = mkdtempSync(join(tmpdir(), 'kg-store-nokey-'));
    const infos: string[] = [];
    const store = fileBaselineStore(root, { now: NOW, info: (m) => infos.push(m) });
    store.save(KEY, run('2026-11-20T10:00:00Z', 'a'.repeat(40)));
    store.latest(KEY);
    store.history(KEY, 5);
    expect(infos).toEqual([
      `baseline store ${root}: records are not signed (KERNELGATE_STORE_KEY is not set): every job that runs on this runner can write this folder, a pull request's code included, and what it writes can become a baseline. Give the steps that judge and store the secret KERNELGATE_STORE_KEY (docs/forks.md, "The store key").`,
    ]);
    expect(infos[0]).toBe(unsignedNote(root));
  });

  it("the action's store reads the key from KERNELGATE_STORE_KEY and refuses a planted record", () => {
    const { root, dir, genuine } = signedStore();
    const planted = plant(dir, '20261125T100000Z-bbbbbbbbbbbb.json');
    const warnings: string[] = [];
    const store = actionStore(
      {
        history: { kind: 'dir', branch: 'kernelgate-data', remote: undefined },
        baselineDir: root,
        token: undefined,
      },
      { KERNELGATE_STORE_KEY: SECRET },
      (p) => p,
      { warning: (m) => warnings.push(m), info: () => {} },
    );
    expect((store as ReturnType<typeof fileBaselineStore>).latest(KEY)?.path).toBe(genuine);
    expect(warnings[0]).toBe(
      `${planted}: not signed with this repository's store key: ignored (written by a job without the key, e.g. a pull request's code).`,
    );
    // another key: the genuine record is refused too, nothing is the baseline
    const other = actionStore(
      {
        history: { kind: 'dir', branch: 'kernelgate-data', remote: undefined },
        baselineDir: root,
        token: undefined,
      },
      { KERNELGATE_STORE_KEY: 'another secret' },
      (p) => p,
      { warning: () => {}, info: () => {} },
    );
    expect((other as ReturnType<typeof fileBaselineStore>).latest(KEY)).toBeUndefined();
  });

  it('a store read without the key still reads signed records; with the key, one whose .sig is gone is refused', () => {
    const { root, genuine } = signedStore();
    const plain = fileBaselineStore(root, { now: NOW });
    expect(plain.latest(KEY)?.path).toBe(genuine);
    renameSync(`${genuine}.sig`, `${genuine}.sig.old`);
    const keyed = fileBaselineStore(root, { now: NOW, key: SECRET, warn: () => {} });
    expect(keyed.latest(KEY)).toBeUndefined();
  });

  it('no tool kernelgate starts gets the key', () => {
    expect(childEnv({}, { KERNELGATE_STORE_KEY: SECRET, PATH: '/bin' })).toEqual({ PATH: '/bin' });
  });
});
