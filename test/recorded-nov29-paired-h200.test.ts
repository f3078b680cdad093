// Run 214 (the twenty-sixth session, 2026-11-29 16:18-16:23 UTC, an NVIDIA H200 of nvidia-h200,
// serial 1653924185762): the pull-request path on kernelgate-harness 0.2.0, `KG_KERNELS=attention
// KG_CONFIG=kghp.yml … bash scripts/device/go.sh slow2p 540 slow2` (the planted 2 % slowdown of
// triton_fa2 in the head's arm, the four fp16 headline cases paired against the base revision,
// the bundled action against the GitHub stand-in; configs.txt). Judged again here with today's code.
import { describe, expect, it } from 'vitest';
import { evaluateTiers } from '../src/judge/index.js';
import { loadConfig } from '../src/config/index.js';
import {
  expectAsOnTheMachine,
  gpuLines,
  gzText,
  judgedNow,
  loadGz,
  ROOT,
  wallOf,
} from './support/recorded.js';

const NAME = 'paired-slow2-h200-run214';

describe('run 214: the planted 2 % on harness 0.2.0, paired (an H200)', () => {
  const results = loadGz(NAME);
  const judged = judgedNow(NAME);

  it('finds triton_fa2 SLOWER on its four cases, confirmed, and nothing else moved', () => {
    expect(gpuLines(NAME)[0]).toContain('NVIDIA H200, 1653924185762');
    expect(results.run.harness).toBe('kernelgate-harness 0.2.0');
    expect(results.run.paired_base?.order).toBe('ABBA');
    expectAsOnTheMachine(NAME, results, judged, [4, 0, 28, 0]);
    const slower = judged.cases.filter((c) => c.perf === 'SLOWER');
    expect(new Set(slower.map((c) => c.variant))).toEqual(new Set(['triton_fa2']));
    // the planted 2 %: +2.1 … +2.5 % (the ratio of the pairs' median)
    for (const c of slower) {
      expect([c.caseId, (c.ratio ?? 0) > 1.015 && (c.ratio ?? 0) < 1.03]).toEqual([c.caseId, true]);
    }
    expect(gzText(NAME, 'action.log.gz').match(/confirm: .* SLOWER again/g)).toHaveLength(4);
    expect(wallOf(NAME)).toBe(235.4);
  });

  it("grades the headline without an interval: the arms' variants were timed in their own pairs", () => {
    const att = evaluateTiers(results, loadConfig(ROOT)).find((t) => t.kernel === 'attention');
    expect(att?.statistic).toBe('median');
    expect(att?.interval).toBeUndefined();
    expect(att?.intervalProblem).toBe(
      'cuda_fa_wgmma and sdpa_default were not timed side by side (no timing.after: a paired run, or a harness before 0.2.0)',
    );
    // the report posted on the machine said why too, in the words of its commit (a5485f5)
    expect(gzText(NAME, 'report.md.gz')).toContain(
      'Now: **1.04×** (speedup; no interval: cuda\\_fa\\_wgmma and sdpa\\_default carry no timing.after',
    );
  });
});
