// Identity before timing (issue 27) end to end: `kernelgate run --kind pr --base main --base-sha`
// on a user repository (a git checkout of test/fixtures/user-repo), the base checked out as a
// worktree, the real harness on the CPU under TRITON_INTERPRET=1. A pull request that touches no
// kernel: every variant is verified but not timed (SAME by identity; with no candidate timed the
// reference has nothing to control); one that touches the kernel's module times both in pairs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../src/cli/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { userRepoCheckout } from './support/user-repo.js';
import { describeWithVenv } from './support/venv.js';
import { capture } from './support/cli-io.js';

describeWithVenv('identity before timing through kernelgate run', () => {
  it(
    'a pull request that changes no kernel times nothing; one that changes the kernel times it',
    { timeout: 600_000 },
    async () => {
      process.env.TRITON_INTERPRET = '1';
      const ws = userRepoCheckout();
      const base = ws.git('rev-parse', 'HEAD');
      writeFileSync(join(ws.workspace, 'README.md'), 'a pull request that edits the README\n');
      ws.git('commit', '-qam', 'docs');

      const run = async (dir: string) => {
        const { out, io } = capture(ws.workspace);
        const status = await runCli(
          [
            'run',
            '--kind',
            'pr',
            '--base',
            'main',
            '--base-sha',
            base,
            '--out-dir',
            dir,
            '--out',
            `${dir}.md`,
          ],
          io,
        );
        const results = JSON.parse(
          readFileSync(join(ws.workspace, dir, 'results.json'), 'utf8'),
        ) as KernelgateResults;
        return {
          status,
          out,
          results,
          report: readFileSync(join(ws.workspace, `${dir}.md`), 'utf8'),
        };
      };

      const docs = await run('docs');
      expect(docs.status, docs.out.stderr).toBe(0);
      // No candidate of the kernel is timed, so its reference has nothing to control either.
      expect(docs.out.stderr).toContain(
        'kernelgate: identity: 2 of 2 variant(s) identical in base and head, verified but not timed: scale/torch_axpb, scale/triton_axpb',
      );
      expect(docs.results.cases).toHaveLength(4);
      for (const c of docs.results.cases) {
        expect(c.status).toBe('ok');
        expect(c.correctness?.status).toBe('PASS');
        // run.verify_identical's default: the first seed only
        expect(c.identical).toEqual({
          reason: 'identical build and sources',
          verified: 'first_seed',
        });
        expect(c.correctness?.seeds).toEqual([0]);
        expect(c.timing).toBeUndefined();
      }
      expect(docs.report).toContain(
        " 4 SAME by identity: identical build and sources in base and head, not timed, verified on the first seed only (`run.verify_identical: first_seed`: their code is the base's, verified on every seed on its push).",
      );
      expect(docs.report).toContain('Identity skipped the timing of 4 variant-cases');
      // the row is SAME with no interval; the reason a note under the table (no-break spaces in
      // the cells read as spaces)
      const spaced = docs.report.replace(/\u00a0/g, ' ');
      expect(spaced).toMatch(/^\|[^|\n]*\| triton\\_axpb \|[^\n]* ⚪ SAME \|/m);
      expect(spaced).toMatch(/^- triton\\_axpb · [^\n]*: identical build and sources$/m);

      // The kernel's module changed (a comment): nothing is identical, everything is paired.
      const bench = join(ws.workspace, 'kernels', 'scale', 'bench.py');
      writeFileSync(bench, readFileSync(bench, 'utf8') + '# a comment\n');
      ws.git('commit', '-qam', 'kernel');
      const kernel = await run('kernel');
      expect(kernel.status, kernel.out.stderr).toBe(0);
      expect(kernel.out.stderr).toContain(
        'kernelgate: identity: scale/triton_axpb is timed: sources differ: kernels/scale/bench.py',
      );
      expect(kernel.results.cases.filter((c) => c.identical !== undefined)).toEqual([]);
      expect(
        kernel.results.cases.every((c) => c.paired?.base_status === 'ok' && c.timing !== undefined),
      ).toBe(true);
    },
  );
});
