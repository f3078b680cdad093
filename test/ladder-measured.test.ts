// Issue 30: a speedup ladder above 1× needs no tiers.reference_pct_peak (a share of the chip's peak
// no user can know); each run decides a rung's reachability from the reference rate it measured,
// and the declared share stays an optional override.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults } from '../src/results/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

/** The fixture configuration with attention's ladder replaced (and its declared share dropped). */
function repoWithLadder(tiers: string): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-ladder-'));
  cpSync(join(fixtures, 'config', 'valid'), root, { recursive: true });
  const file = join(root, 'kernels', 'attention', 'kernel.yml');
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf('tiers:\n');
  const end = text.indexOf('variants:\n');
  writeFileSync(file, text.slice(0, start) + tiers + text.slice(end));
  return root;
}

const PLAIN_LADDER = `tiers:
  metric: speedup
  reference: sdpa_default
  case: { dtype: fp16, B: 16, H: 96, S: 4096, D: 128, causal: false }
  ladder:
    - { name: par, min: 1 }
    - { name: 2x, min: 2 }
    - { name: 3x, min: 3 }
`;

describe('a speedup ladder with no tiers.reference_pct_peak', () => {
  it('is accepted when the configuration is loaded (it was refused before)', () => {
    // Before: "kernels/attention/kernel.yml: tiers.reference_pct_peak is required when a rung is
    // above 1× (tiers.ladder[1].min is 2): …". Now the ladder loads as written.
    const config = loadConfig(repoWithLadder(PLAIN_LADDER));
    const tiers = config.kernels.find((k) => k.manifest.name === 'attention')?.manifest.tiers;
    expect(tiers?.reference_pct_peak).toBeUndefined();
    expect(tiers?.ladder.map((r) => r.min)).toEqual([1, 2, 3]);
  });

  it("judges each rung's reachability from the reference rate the run measured", () => {
    const config = loadConfig(repoWithLadder(PLAIN_LADDER));
    const results = loadResults(join(fixtures, 'results', 'aa-current.json'));
    const ref = results.cases.find((c) => c.variant === 'sdpa_default' && c.case === HEADLINE);
    const tflops = ref?.throughput?.tflops;
    if (!tflops) throw new Error('fixture incomplete');
    const { tiers, rendered } = judge(results, undefined, config, 'pr');
    const status = tiers.find((t) => t.kernel === 'attention');
    // The reference's rate over the H100's fp16 dense peak (989.4 TFLOPS): the rungs above
    // 100 / that share are out of reach on this chip, the others are not.
    const share = (100 * tflops) / 989.4;
    expect(status?.declaredReferencePctPeak).toBeUndefined();
    expect(status?.measuredReferencePctPeak).toBeCloseTo(share, 6);
    expect(share).toBeGreaterThan(50);
    expect(share).toBeLessThan(100);
    expect(status?.ladder.map((m) => [m.name, m.reachable])).toEqual([
      ['par', true],
      ['2x', false],
      ['3x', false],
    ]);
    expect(rendered.full).toContain(
      "- 🏷️ attention tiers: 2 rungs need more than the chip's peak on this run (the reference reached 61.6 % of the peak here): 2x, 3x. Revise the ladder",
    );
  });

  it('uses a declared share where the run cannot tell (no FLOP count), else says the peak is unknown', () => {
    const noFlops = () => {
      const results = loadResults(join(fixtures, 'results', 'aa-current.json'));
      for (const c of results.cases) {
        if (c.kernel !== 'attention') continue;
        delete c.work;
        delete c.throughput;
      }
      return results;
    };
    const ladder = PLAIN_LADDER.replace('    - { name: 3x, min: 3 }\n', '');
    const plain = judge(noFlops(), undefined, loadConfig(repoWithLadder(ladder)), 'pr');
    expect(
      plain.tiers.find((t) => t.kernel === 'attention')?.ladder.map((m) => m.reachable),
    ).toEqual([undefined, undefined]);
    expect(plain.rendered.full).toContain('⬜ ahead (peak unknown)');
    const declared = ladder.replace('  case:', '  reference_pct_peak: 40\n  case:');
    const { tiers } = judge(noFlops(), undefined, loadConfig(repoWithLadder(declared)), 'pr');
    // 2 × 40 % = 80 % of the peak: reachable by the declared share alone.
    expect(tiers.find((t) => t.kernel === 'attention')?.ladder.map((m) => m.reachable)).toEqual([
      true,
      true,
    ]);
  });

  it('still refuses, at load, a rung a declared share puts above the peak', () => {
    const declared = PLAIN_LADDER.replace('  case:', '  reference_pct_peak: 40\n  case:');
    expect(() => loadConfig(repoWithLadder(declared))).toThrow(
      "kernels/attention/kernel.yml: tiers.ladder[2].min asks 3× sdpa_default, which runs at 40 % of the chip's peak (tiers.reference_pct_peak): it needs 120 % of the peak, unreachable (got 3)",
    );
  });
});
