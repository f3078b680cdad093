// H100 recordings of 2026-11-26 (test/fixtures/recorded/*/gpu.txt, README in docs/notes/verdict-time.md):
// the detection threshold (compare.paired.detect_pct, issue 27), tails on the GPU and the shipped
// ceilings (issue 30), judged again with today's code and configuration.
//   run 51: paired A/A of the whole set, machine 17 (bd4fd36), `gpu-e2e.sh /tmp/n2aa aa`
//   run 52: the same machine, triton_fa2 planted 1 % slower, `gpu-e2e.sh /tmp/n2s1 slow1`
//   run 55: paired A/A, machine 18 (d0959f8), `gpu-e2e.sh /tmp/n4aa aa`: the harness of issue 34
//           before 60233c9 failed every graph-timed SDPA case (its replay check read the buffers
//           SDPA never writes); the timings were unharmed
//   run 54: machine 18, `kernelgate run` in test/fixtures/tail-repo and test/fixtures/user-repo
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compare, type CaseComparison } from '../src/judge/index.js';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { validateResults, type KernelgateResults } from '../src/results/index.js';

const ROOT = join(import.meta.dirname, '..');
const REC = join(ROOT, 'test', 'fixtures', 'recorded');
const config = loadConfig(ROOT);
function loadGz(path: string): KernelgateResults {
  return validateResults(JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')), path);
}
const load = (name: string) => loadGz(join(REC, name, 'results.json.gz'));

function judged(doc: KernelgateResults): {
  cases: CaseComparison[];
  count: Record<string, number>;
} {
  const cases = compare(doc, undefined, config).cases;
  const count: Record<string, number> = {};
  for (const c of cases) count[c.perf] = (count[c.perf] ?? 0) + 1;
  return { cases, count };
}

function baseMs(doc: KernelgateResults, key: string): number {
  const c = doc.cases.find((x) => `${x.kernel}/${x.variant}/${x.case}` === key);
  return c?.paired?.base_timing?.median_ms ?? 0;
}

describe('the detection threshold on the H100', () => {
  it('run 51, A/A: no case SLOWER, FASTER or AMBIGUOUS of 216; every case of 1 ms or more had the threshold', () => {
    const doc = load('paired-aa-h100-run51');
    expect(judged(doc).count).toEqual({ SAME: 216, UNTIMED: 1 });
    const large = doc.cases.filter((c) => (c.paired?.base_timing?.median_ms ?? 0) >= 1);
    expect(large).toHaveLength(64);
    expect(large.every((c) => c.paired?.detect_pct === 0.5)).toBe(true);
    expect(large.filter((c) => c.paired?.confirm)).toEqual([]);
  });

  it('run 52, a planted 1 %: SLOWER and confirmed on all 8 of its cases of 1 ms or more, nothing else moved', () => {
    const doc = load('paired-slow1-h100-run52');
    const { cases, count } = judged(doc);
    expect(count).toEqual({ SAME: 192, SLOWER: 23, AMBIGUOUS: 1, UNTIMED: 1 });
    const fa2Large = cases.filter(
      (c) => c.key.startsWith('attention/triton_fa2/') && baseMs(doc, c.key) >= 1,
    );
    expect(fa2Large).toHaveLength(8);
    for (const c of fa2Large) {
      expect(c.perf).toBe('SLOWER');
      expect(c.perfNote).toMatch(/^confirmed in a second pair of worker processes: ×1\.01\d\d /);
    }
    expect(
      cases
        .filter((c) => c.perf === 'SLOWER')
        .every((c) => c.key.startsWith('attention/triton_fa2/')),
    ).toBe(true);
    // The one AMBIGUOUS: a reference whose first reading (-1.8 %) a fresh pair of processes did not repeat.
    const ambiguous = cases.find((c) => c.perf === 'AMBIGUOUS');
    expect(ambiguous?.key).toBe(
      'attention/sdpa_flash/dtype=bf16,B=16,H=96,S=4096,D=128,causal=false',
    );
    expect(ambiguous?.perfNote).toMatch(/^was FASTER .*: the first reading did not repeat$/);
  });

  it('run 55, A/A on a second machine: no case SLOWER or FASTER; the 64 failures are the graph check of issue 34 on SDPA', () => {
    const doc = load('paired-aa-h100-run55');
    const { cases, count } = judged(doc);
    expect(count.SLOWER ?? 0).toBe(0);
    expect(count.FASTER ?? 0).toBe(0);
    expect(count.AMBIGUOUS).toBe(2);
    const failed = cases.filter((c) => c.correctness === 'FAIL');
    expect(failed).toHaveLength(64);
    for (const c of failed) {
      expect(c.key).toMatch(/^attention\/sdpa_(flash|cudnn|efficient|default)\//);
      const rec = doc.cases.find((x) => `${x.kernel}/${x.variant}/${x.case}` === c.key);
      expect(rec?.correctness?.message).toMatch(
        /^the CUDA graph's replay gives a wrong output \(NaN\/Inf/,
      );
    }
  });
});

describe('a repository that is not kernelgate, on the H100 (run 54)', () => {
  it('fails the gate on the planted tail bug, on its three tail shapes', () => {
    const repo = join(ROOT, 'test', 'fixtures', 'tail-repo');
    const doc = load('tail-repo-h100-run54');
    expect(doc.environment.gpu?.name).toBe('NVIDIA H100 80GB HBM3');
    const { verdict } = judge(doc, undefined, loadConfig(repo), 'pr');
    expect(verdict.verdict).toBe('fail');
    expect(verdict.reasons.map((r) => r.split(': ')[0])).toEqual([
      'softmax/triton_zero_pad dtype=fp32,R=3,W=7',
      'softmax/triton_zero_pad dtype=fp32,R=3,W=100',
      'softmax/triton_zero_pad dtype=fp32,R=3,W=257',
    ]);
  });

  it('measures the ceilings with the copy of kernels/gemm that ships with the action', () => {
    const doc = load('user-repo-h100-run54');
    const ceilings = doc.environment.ceilings;
    expect(ceilings?.copy_gbps).toBeGreaterThan(2500);
    expect(ceilings?.gemm_tflops?.['bf16']).toBeGreaterThan(500);
    expect((doc.diagnostics ?? []).filter((d) => d.code === 'no-ceilings')).toEqual([]);
  });
});
