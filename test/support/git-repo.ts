// A scratch git repository for the tests of commit ancestry (stored baselines, the nightly's base,
// the merge), and the smallest stored run the baseline stores accept.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KernelgateResults } from '../../src/results/index.js';

/** An empty repository on `main`: `git` runs there, `commit(name)` commits a file `name` and returns the SHA. */
export function scratchRepo(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');
  const commit = (name: string) => {
    writeFileSync(join(dir, name), name);
    git('add', name);
    git('commit', '-qm', name);
    return git('rev-parse', 'HEAD');
  };
  return { dir, git, commit };
}

/** A run with no case, started at `startedAt` on commit `sha`, on an H100. */
export function emptyRun(startedAt: string, sha: string): KernelgateResults {
  return {
    schema: 'kernelgate/results@1',
    run: { started_at: startedAt, harness: 'test', git_sha: sha },
    environment: { gpu: { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' } },
    diagnostics: [],
    kernels: [],
    cases: [],
  };
}
