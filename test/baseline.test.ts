import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { explicitBaseline, fileBaselineStore } from '../src/store/index.js';
import type { KernelgateResults } from '../src/results/index.js';

function results(startedAt: string, sha: string, gpu = 'NVIDIA H200'): KernelgateResults {
  return {
    schema: 'kernelgate/results@1',
    run: { started_at: startedAt, harness: 'test', git_sha: sha },
    environment: { gpu: { name: gpu } },
    diagnostics: [],
    kernels: [],
    cases: [],
  };
}

describe('file baseline store', () => {
  it('returns the newest trusted run of the branch and SKU, and keeps history', () => {
    const store = fileBaselineStore(mkdtempSync(join(tmpdir(), 'kg-base-')));
    const key = { branch: 'main', sku: 'H200' };
    expect(store.latest(key)).toBeUndefined();
    store.save(key, results('2026-11-20T10:00:00Z', 'aaaaaaaaaaaaaaaa'));
    store.save(key, results('2026-11-21T10:00:00Z', 'bbbbbbbbbbbbbbbb'));
    store.save({ branch: 'main', sku: 'H100-SXM' }, results('2026-11-22T10:00:00Z', 'cccc'));
    expect(store.latest(key)?.results.run.git_sha).toBe('bbbbbbbbbbbbbbbb');
    expect(store.history(key, 10).map((b) => b.results.run.git_sha)).toEqual([
      'bbbbbbbbbbbbbbbb',
      'aaaaaaaaaaaaaaaa',
    ]);
  });

  it('never lets a branch name escape the store', () => {
    const root = mkdtempSync(join(tmpdir(), 'kg-base-'));
    const store = fileBaselineStore(root);
    const path = store.save(
      { branch: '../../etc', sku: 'H200' },
      results('2026-11-21T10:00:00Z', 'x'),
    );
    expect(path.startsWith(root)).toBe(true);
    expect(readdirSync(root)).toEqual(['__.._etc']);
  });

  it('names the file when an explicit baseline is missing or invalid', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-base-'));
    expect(() => explicitBaseline(join(dir, 'nope.json'))).toThrow(
      `baseline ${join(dir, 'nope.json')}: no such file`,
    );
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ ...results('2026-11-21T10:00:00Z', 'x'), cases: 3 }));
    expect(() => explicitBaseline(bad)).toThrow(/bad\.json.*cases/);
  });
});
