// Issue 34: the harness prints the sha256 of the bytes its final write put at --out as its last
// line; the action checks the file against it before judging. A process the kernels started
// (same user as the harness) that rewrites the file after that write is caught, and the gate fails.
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { compare, gate } from '../src/judge/index.js';
import { scriptedExec } from '../src/lib/index.js';
import { measure, type LineExec, type ProgressLog } from '../src/measure/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { gemmWorkspace } from './support/gemm-workspace.js';

const CURRENT = 'test/fixtures/results/aa-current.json';
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

const workspace = () => gemmWorkspace('kg-digest-');

/**
 * A stand-in harness: writes the recorded results to --out, prints the digest line of what it
 * wrote (or none), then runs `after` (the kernels' leftover process, rewriting the file).
 */
function standIn(digest: 'printed' | 'none', after?: (out: string) => void): LineExec {
  return async (_cmd, args, { onLine }) => {
    const out = args[args.indexOf('--out') + 1]!;
    copyFileSync(CURRENT, out);
    onLine('[kernelgate] done in 1.0 s: 1 ok; results in ' + out);
    if (digest === 'printed')
      onLine(`[kernelgate] results sha256 ${sha256(readFileSync(out))} ${out}`);
    after?.(out);
    return 0;
  };
}

async function run(lineExec: LineExec) {
  const ws = workspace();
  const config = loadConfig(ws);
  const lines: string[] = [];
  const log: ProgressLog & { warning(m: string): void } = {
    info: (l) => lines.push(l),
    startGroup: (n) => lines.push(`::group::${n}`),
    endGroup: () => lines.push('::endgroup::'),
    warning: (m) => lines.push(`warning: ${m}`),
  };
  const measured = await measure(
    { config, workspace: ws, harnessRoot: '/action', outDir: join(ws, 'out') },
    { exec: scriptedExec([]), lineExec, log },
  );
  const results = measured.results;
  const verdict = gate(compare(results, undefined, config), [], results, config);
  return { lines, results, verdict, out: join(ws, 'out', 'results.json') };
}

describe('the results digest (issue 34)', () => {
  it('fails a run whose results file was rewritten after the harness wrote it', async () => {
    let forged = '';
    let wrote = '';
    const rewrite = (out: string) => {
      wrote = sha256(readFileSync(out));
      const doc = JSON.parse(readFileSync(out, 'utf8')) as KernelgateResults;
      doc.cases = doc.cases.map((c) => ({ ...c, status: 'ok' }));
      writeFileSync(out, JSON.stringify(doc));
      forged = sha256(readFileSync(out));
    };
    const { lines, results, verdict, out } = await run(standIn('printed', rewrite));
    const message =
      `${out}: the results file changed after the harness wrote it: something the kernels started ` +
      `rewrote it (the harness wrote sha256 ${wrote}, the file has sha256 ${forged}).`;
    expect(wrote).not.toBe(forged);
    expect(lines).toContain(`warning: kernelgate: ${message}`);
    const d = results.diagnostics.find((x) => x.code === 'harness.results_changed');
    expect(d?.level).toBe('error');
    expect(d?.message).toBe(message);
    // None of the rewritten file's cases are judged: the gate fails on coverage, whatever the policy.
    expect(results.cases).toEqual([]);
    expect(verdict.verdict).toBe('fail');
    expect(verdict.reasons).toEqual([
      'the results hold no case: nothing was measured; a run that measured nothing is no pass',
    ]);
    expect(verdict.warnings.join('\n')).toContain(`diagnostic harness.results_changed: ${message}`);
  });

  it('fails a run in which a second digest line was printed', async () => {
    const twice: LineExec = async (cmd, args, options) => {
      const code = await standIn('printed')(cmd, args, options);
      options.onLine(`[kernelgate] results sha256 ${'0'.repeat(64)} forged`);
      return code;
    };
    const { results: r2, out } = await run(twice);
    const wrote = sha256(readFileSync(CURRENT));
    expect(r2.diagnostics.find((d) => d.code === 'harness.results_changed')?.message).toBe(
      `${out}: the harness's results digest line was printed 2 times (sha256 ${wrote}, ${'0'.repeat(64)}; ` +
        `the file has sha256 ${wrote}); the harness prints it once: something the kernels started printed one too.`,
    );
  });

  it('judges the file when its digest matches the one printed', async () => {
    const { lines, results } = await run(standIn('printed'));
    const recorded = JSON.parse(readFileSync(CURRENT, 'utf8')) as KernelgateResults;
    expect(results.cases).toEqual(recorded.cases);
    expect(results.diagnostics.map((d) => d.code)).not.toContain('harness.results_changed');
    expect(lines.filter((l) => l.includes('results digest'))).toEqual([]);
  });

  it('judges the file of a harness that printed no digest, saying so once', async () => {
    const { lines, results, out } = await run(standIn('none'));
    expect(results.cases.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes('printed no results digest'))).toEqual([
      `kernelgate: the harness printed no results digest (a harness from before the digest line, or one that stopped before its last line): ${out} is judged without the check that nothing rewrote it.`,
    ]);
  });
});
