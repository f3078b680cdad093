// The matrix example (examples/workflows/kernelgate-matrix.yml, docs/scaling.md): the matrix
// lists every shard the merge expects, a shard uploads its results even after a failed step, and
// the merge runs even when a shard failed, so that the merge can name it. The policy and
// actionlint tests cover the file with every other shipped workflow.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parse as parseYaml } from 'yaml';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

type Step = { uses?: string; if?: string; with?: Record<string, unknown> };
type Job = {
  needs?: string | string[];
  if?: string;
  'runs-on': unknown;
  strategy?: { 'fail-fast'?: boolean; matrix?: { shard?: number[] } };
  steps: Step[];
};
const workflow = parseYaml(
  readFileSync(join(repoRoot, 'examples/workflows/kernelgate-matrix.yml'), 'utf8'),
) as { env: { SHARDS: number }; jobs: Record<string, Job> };
const kernelgate = (job: Job | undefined) =>
  (job?.steps ?? []).find((s) => s.uses?.startsWith('kernelgate/kernelgate@'));

describe('the matrix example', () => {
  const measure = workflow.jobs['measure'];
  const merge = workflow.jobs['merge'];

  test('one GPU job per shard, 1 to SHARDS, none cancelling the others', () => {
    const n = workflow.env.SHARDS;
    expect(measure?.strategy?.matrix?.shard).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(measure?.strategy?.['fail-fast']).toBe(false);
    expect(measure?.['runs-on']).toContain('self-hosted');
    expect(kernelgate(measure)?.with?.['shard']).toBe('${{ matrix.shard }}/${{ env.SHARDS }}');
  });

  test('each shard uploads its results under its own name, also after a failed step', () => {
    const upload = measure?.steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'));
    expect(upload?.if).toBe('always()');
    expect(upload?.with?.['name']).toBe('kernelgate-shard-${{ matrix.shard }}');
    // The action measures into <report-dir>/measure.
    expect(upload?.with?.['path']).toBe(
      `${kernelgate(measure)?.with?.['report-dir']}/measure/results.json`,
    );
  });

  test('the merge runs after every shard, also a failed one, and expects them all', () => {
    expect(merge?.needs).toEqual(['approve', 'measure']);
    expect(merge?.if).toBe("always() && needs.approve.result == 'success'");
    const download = merge?.steps.find((s) => s.uses?.startsWith('actions/download-artifact@'));
    expect(download?.with?.['pattern']).toBe('kernelgate-shard-*');
    const step = kernelgate(merge);
    expect(step?.with?.['merge']).toBe(download?.with?.['path']);
    expect(step?.with?.['shards']).toBe('${{ env.SHARDS }}');
  });
});
