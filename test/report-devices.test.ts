// The report names the GPU of each case when a run used several (the harness's --gpus lanes,
// python/kernelgate_harness/lanes.py; or merged shards of several runners), and says nothing of GPUs when
// one measured it all. The recorded H100 "slowed" run stands in for a two-GPU run: its cases are
// given to GPU 0 and GPU 1 alternately by case, as the lanes would record them.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compare, evaluateTiers, gate } from '../src/judge/index.js';
import { loadConfig } from '../src/config/index.js';
import { renderReport } from '../src/report/index.js';
import { loadResults, type KernelgateResults } from '../src/results/index.js';

const ROOT = join(import.meta.dirname, '..');
const config = loadConfig(ROOT);
const recorded = (name: string) =>
  loadResults(join(ROOT, 'test/fixtures/recorded', name, 'results.json.gz'));

const H100 = { name: 'NVIDIA H100 80GB HBM3', sku: 'H100-SXM' };

function onTwoGpus(results: KernelgateResults): KernelgateResults {
  const ids = [...new Set(results.cases.map((c) => `${c.kernel}/${c.case}`))];
  return {
    ...results,
    cases: results.cases.map((c) => {
      const index = ids.indexOf(`${c.kernel}/${c.case}`) % 2;
      return {
        ...c,
        device: {
          ...H100,
          index,
          uuid: `GPU-0000000${index}-aaaa-bbbb-cccc-dddddddddddd`,
          pci_bus_id: index ? '00000000:2A:00.0' : '00000000:19:00.0',
        },
      };
    }),
  };
}

function render(results: KernelgateResults, baseline: KernelgateResults) {
  const comparison = compare(results, baseline, config);
  const tiers = evaluateTiers(results, config);
  return renderReport({
    kind: 'pr',
    results,
    baseline,
    comparison,
    tiers,
    gate: gate(comparison, tiers, results, config),
    config,
  });
}

describe('the GPU of each case', { timeout: 120_000 }, () => {
  const baseline = recorded('push');
  const slowed = recorded('slowed');

  it('adds a GPU column and a table of the GPUs when several measured the run', () => {
    const results = onTwoGpus(slowed);
    const { comment, full } = render(results, baseline);
    // Every changed row is of triton_fa2: the variant is said once above the table (issue 32)
    expect(comment).toContain('Every row: variant triton\\_fa2');
    const header = comment.split('\n').find((l) => l.startsWith('| Δ | verdict |'));
    // The note column is left out when no row fills it (issue 32); the GPU column is the full
    // report's (in the comment's 780 px column an eighth column scrolled: run 84).
    expect(header).toBe('| Δ | verdict | dtype, D, causal | ms | base | CI of Δ |');
    const fullHeader = full.split('\n').find((l) => l.startsWith('| Δ | verdict |'));
    expect(fullHeader).toMatch(/\| GPU \| ms \| base \| CI of Δ \|$/);
    const attention = results.cases.find((c) => c.kernel === 'attention');
    expect(full).toContain(
      [
        '| GPU | name | SKU | UUID | PCI bus | case records |',
        '| :- | :- | :- | :- | :- | -: |',
        `| GPU 0 | NVIDIA H100 80GB HBM3 | H100-SXM | GPU-00000000-aaaa-bbbb-cccc-dddddddddddd | 00000000:19:00.0 | ${results.cases.filter((c) => c.device?.index === 0).length} |`,
        `| GPU 1 | NVIDIA H100 80GB HBM3 | H100-SXM | GPU-00000001-aaaa-bbbb-cccc-dddddddddddd | 00000000:2A:00.0 | ${results.cases.filter((c) => c.device?.index === 1).length} |`,
      ].join('\n'),
    );
    expect(attention?.device).toBeDefined();
    // Every row of the full report's case tables names its GPU.
    const rows = full.split('\n').filter((l) => / \| GPU [01] \| /.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(results.cases.length);
  });

  it('says nothing of GPUs when one measured it all', () => {
    const one = {
      ...slowed,
      cases: slowed.cases.map((c) => ({ ...c, device: { ...H100, index: 0 } })),
    };
    const plain = render(slowed, baseline);
    const same = render(one, baseline);
    expect(same.full).toBe(plain.full);
    expect(same.comment).toBe(plain.comment);
    expect(plain.full).not.toContain('The GPUs that measured this run');
  });

  it('names the host too when the GPUs were on several runners, escaped', () => {
    const results = onTwoGpus(slowed);
    results.cases = results.cases.map((c) => ({
      ...c,
      device: { ...H100, host: c.device?.index ? 'runner_b' : 'runner-a' },
    }));
    const { full } = render(results, baseline);
    expect(full).toContain('| runner-a NVIDIA H100 80GB HBM3 |');
    expect(full).toContain('| runner\\_b NVIDIA H100 80GB HBM3 |');
  });
});
