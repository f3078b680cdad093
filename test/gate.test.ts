import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compare } from '../src/judge/index.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { blockingKinds, gate, type GateResult } from '../src/judge/index.js';
import { loadResults } from '../src/results/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { evaluateTiers } from '../src/judge/index.js';
import { pair, pairedRun } from './support/paired.js';

const load = (name: string) => loadResults(join(import.meta.dirname, 'fixtures', 'results', name));
const config = loadConfig(join(import.meta.dirname, 'fixtures', 'config', 'valid'));
const baseline = load('baseline.json');

function judge(name: string, policy: Partial<Config['policy']> = {}): GateResult {
  const c: Config = { ...config, policy: { ...config.policy, ...policy } };
  const results = load(name);
  const comparison = compare(results, baseline, c);
  return gate(comparison, evaluateTiers(results, c), results, c);
}

const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

describe('gate over the synthetic fixtures (default policy)', () => {
  const table: [string, GateResult['verdict'], RegExp[]][] = [
    ['aa-current.json', 'pass', []],
    ['regression.json', 'pass', []],
    [
      'correctness-fail.json',
      'fail',
      [
        /^attention\/triton_fa2 dtype=fp16,B=16,H=96,S=4096,D=64,causal=true: correctness FAIL: rel_l2 3\.1e-1 > tol 2e-3; max_abs 4\.5 > tol 5e-2; /,
        /^bsr_gemm\/cuda_bsr_mma dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16: timeout: timeout: no result after 60\.0 s$/,
      ],
    ],
    [
      'drift.json',
      'fail',
      [
        /^attention\/triton_fa2 dtype=bf16,B=16,H=96,S=4096,D=128,causal=false: correctness DRIFT: rel_l2 7\.5e-3 > 2 × baseline /,
      ],
    ],
    [
      'above-peak.json',
      'fail',
      [
        /^attention\/sdpa_default dtype=fp16,B=16,H=96,S=4096,D=128,causal=true: measurement error: 1\d{3}\.\d TFLOPS > 989\.4 TFLOPS datasheet peak/,
      ],
    ],
    [
      'build-expectation.json',
      'fail',
      [/^attention\/cuda_fa2: build expectation unmet: archs: sm_90a missing \(found sm_90\)/],
    ],
  ];

  it.each(table)('%s → %s', (name, verdict, reasons) => {
    const result = judge(name);
    expect(result.verdict).toBe(verdict);
    expect(result.reasons).toHaveLength(reasons.length);
    reasons.forEach((re, i) => expect(result.reasons[i]).toMatch(re));
  });

  it('counts every verdict', () => {
    const { counts } = judge('correctness-fail.json');
    expect(counts).toMatchObject({
      cases: 36,
      passed: 34,
      failed: 1,
      errors: 1,
      drift: 0,
      untimed: 2,
      missing: 0,
    });
    expect(counts.same + counts.ambiguous).toBe(34);
  });
});

describe('policy', () => {
  it('reports a regression as a warning by default and fails on it when asked', () => {
    const relaxed = judge('regression.json');
    expect(relaxed.verdict).toBe('pass');
    expect(relaxed.warnings[0]).toMatch(
      new RegExp(
        `^attention/triton_fa2 ${HEADLINE}: SLOWER \\+\\d+\\.\\d % \\(99 % CI \\+\\d+\\.\\d % … \\+\\d+\\.\\d %, threshold 3\\.0 %\\): \\d+\\.\\d+ ms vs \\d+\\.\\d+ ms$`,
      ),
    );
    const strict = judge('regression.json', { failOnSlower: true });
    expect(strict.verdict).toBe('fail');
    expect(strict.reasons).toEqual([relaxed.warnings[0]]);
  });

  it('lets errors, build failures and measurement errors be switched to warnings', () => {
    const lenient = {
      failOnError: false,
      failOnBuildFailure: false,
      failOnMeasurementError: false,
    };
    expect(judge('build-expectation.json', lenient).verdict).toBe('pass');
    expect(judge('above-peak.json', lenient).verdict).toBe('pass');
    const failing = judge('correctness-fail.json', lenient);
    // A wrong answer still fails: only the timeout became a warning.
    expect(failing.verdict).toBe('fail');
    expect(failing.reasons).toHaveLength(1);
    expect(failing.warnings.some((w) => w.includes('timeout: no result after 60.0 s'))).toBe(true);
  });

  it('never lets correctness FAIL or DRIFT pass, whatever the rest of the policy', () => {
    const everythingOff = {
      failOnSlower: false,
      failOnMissing: false,
      failOnError: false,
      failOnBuildFailure: false,
      failOnMeasurementError: false,
    };
    expect(judge('drift.json', everythingOff).verdict).toBe('fail');
    expect(judge('correctness-fail.json', everythingOff).verdict).toBe('fail');
  });

  it('fails on MISSING cases only when asked', () => {
    const results = load('aa-current.json');
    results.cases = results.cases.filter((c) => c.variant !== 'torch_copy');
    const comparison = compare(results, baseline, config);
    const tiers = evaluateTiers(results, config);
    expect(gate(comparison, tiers, results, config).verdict).toBe('pass');
    const strict = { ...config, policy: { ...config.policy, failOnMissing: true } };
    expect(gate(comparison, tiers, results, strict).reasons).toEqual([
      'gemm/torch_copy op=copy,dtype=fp32,MiB=1024: MISSING: in the baseline, not in this run',
    ]);
  });
});

describe('the rules that block', () => {
  const FLAGS = [
    ['failOnSlower', 'slower'],
    ['failOnMissing', 'missing'],
    ['failOnBuildFailure', 'build'],
    ['failOnError', 'error'],
    ['failOnMeasurementError', 'above-peak'],
  ] as const;

  it('blocks with wrong results and drift always, and with each other kind exactly when its policy says', () => {
    for (let bits = 0; bits < 2 ** FLAGS.length; bits++) {
      const policy = { ...config.policy };
      FLAGS.forEach(([flag], i) => (policy[flag] = Boolean(bits & (1 << i))));
      const expected = [
        'wrong',
        'drift',
        ...FLAGS.filter(([flag]) => policy[flag]).map(([, k]) => k),
      ];
      expect([...blockingKinds(policy)].sort()).toEqual(expected.sort());
    }
  });

  it('a SLOWER case fails the gate exactly when its kind blocks', () => {
    for (const failOnSlower of [false, true]) {
      const verdict = judge('regression.json', { failOnSlower }).verdict;
      const blocks = blockingKinds({ ...config.policy, failOnSlower }).has('slower');
      expect(verdict === 'fail').toBe(blocks);
    }
  });
});

describe('diagnostics', () => {
  it('lists error-level diagnostics among the warnings with their fix', () => {
    const result = judge('build-expectation.json');
    expect(result.warnings).toContain(
      'diagnostic arch-conditional-mma: Arch conditional MMA instruction used without targeting appropriate compute capability (fix: build with -gencode=arch=compute_90a,code=sm_90a (not compute_90))',
    );
  });
});

describe('a harness that did not finish', () => {
  // The H100 A/A run of 2026-11-23 21:32 (a harness crash before its first case) said "pass" over
  // 0 cases: the crash was only a warning.
  const crashed = (): KernelgateResults => {
    const results = load('aa-current.json');
    results.cases = [];
    results.diagnostics.push({
      level: 'error',
      code: 'harness.exit',
      message:
        "The harness exited with status 1; the cases it finished are judged. Last lines:\nTypeError: throughput() missing 1 required positional argument: 'env'",
      source: 'harness',
    });
    return results;
  };

  it('fails the gate even when no case failed, naming the exit', () => {
    const results = crashed();
    const result = gate(compare(results, undefined, config), [], results, config);
    expect(result.verdict).toBe('fail');
    expect(result.reasons).toEqual([
      "the harness did not finish: The harness exited with status 1; the cases it finished are judged. Its last line: TypeError: throughput() missing 1 required positional argument: 'env'",
      'the results hold no case: nothing was measured; a run that measured nothing is no pass',
    ]);
    expect(result.warnings.filter((w) => w.includes('harness.exit'))).toEqual([]);
  });

  it('is a warning under policy.fail_on_error: false, but a run with no case fails whatever the policy', () => {
    const lenient = { ...config, policy: { ...config.policy, failOnError: false } };
    const stopped =
      "the harness did not finish: The harness exited with status 1; the cases it finished are judged. Its last line: TypeError: throughput() missing 1 required positional argument: 'env'";
    // The cases it finished (a document that does not say what it selected: held to having some).
    const some = { ...crashed(), cases: load('aa-current.json').cases };
    const result = gate(compare(some, undefined, lenient), [], some, lenient);
    expect(result.verdict).toBe('pass');
    expect(result.warnings).toContain(stopped);
    const none = crashed();
    const empty = gate(compare(none, undefined, lenient), [], none, lenient);
    expect(empty.verdict).toBe('fail');
    expect(empty.reasons).toEqual([
      'the results hold no case: nothing was measured; a run that measured nothing is no pass',
    ]);
    expect(empty.warnings).toContain(stopped);
  });
});

describe('paired verdicts', () => {
  const TRITON = `attention/triton_fa2/${HEADLINE}`;
  const FLASH = `attention/sdpa_flash/${HEADLINE}`;

  function gatePaired(results: KernelgateResults, policy: Partial<Config['policy']> = {}) {
    const c: Config = { ...config, policy: { ...config.policy, ...policy } };
    const comparison = compare(results, baseline, c);
    return gate(comparison, evaluateTiers(results, c), results, c);
  }

  it('counts a paired SLOWER like any SLOWER: a warning, or a failure when asked', () => {
    // The head's own samples equal the stored baseline's; only the pairs see the +5 %.
    const results = pair(pairedRun(baseline), TRITON, 1.05);
    const relaxed = gatePaired(results);
    expect(relaxed.verdict).toBe('pass');
    expect(relaxed.counts.slower).toBe(1);
    const line = relaxed.warnings.find((w) => w.includes('SLOWER'));
    expect(line).toMatch(
      new RegExp(
        `^attention/triton_fa2 ${HEADLINE}: SLOWER \\+5\\.0 % \\(99 % CI \\+4\\.\\d % … \\+5\\.\\d %, threshold 1\\.0 %, 45 pairs against the base revision\\): 39\\.\\d+ ms vs 37\\.\\d+ ms$`,
      ),
    );
    const strict = gatePaired(results, { failOnSlower: true });
    expect(strict.verdict).toBe('fail');
    expect(strict.reasons).toEqual([line]);
  });

  it('counts a demoted verdict as AMBIGUOUS and names the control on its own line', () => {
    const results = pairedRun(baseline);
    pair(results, FLASH, 1.04);
    pair(results, TRITON, 1.05);
    const strict = gatePaired(results, { failOnSlower: true });
    expect(strict.counts.slower).toBe(1);
    expect(strict.counts.ambiguous).toBeGreaterThanOrEqual(1);
    expect(strict.reasons).toHaveLength(1);
    expect(strict.reasons[0]).toMatch(
      new RegExp(
        `^attention/sdpa_flash ${HEADLINE}: SLOWER \\+4\\.0 % \\(.*45 pairs against the base revision\\): .* \\(reference: identical code in both arms\\)$`,
      ),
    );
  });
});
