// The compact history record: what it keeps of a recorded run, how it is checked when read, and
// that judging against it agrees with judging against the full results it came from.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import {
  buildRecord,
  HISTORY_FORMAT,
  medianInterval,
  parseRecord,
  recordCases,
  RecordError,
  serializeRecord,
} from '../src/history/record.js';
import { dashboardData } from '../src/history/dashboard-data.js';
import { recordToResults } from '../src/history/record-results.js';
import { evaluateTiers } from '../src/judge/index.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults, validateResults } from '../src/results/index.js';
import { normalQuantile } from '../src/lib/index.js';

const PUSH = loadResults('test/fixtures/recorded/push/results.json.gz');
const OPTIONS = { branch: 'main', sku: 'H200', kernelgateVersion: '0.1.0' };

describe('history record', () => {
  it('keeps a summary of each case of a recorded run', () => {
    const record = buildRecord(PUSH, { ...OPTIONS, event: 'push', artifact: 'https://x/runs/9' });
    expect(record.format).toBe(HISTORY_FORMAT);
    expect(record.run).toMatchObject({
      id: 'push',
      commit: '32956534032614607e856690d964c35cf5bd5f6e',
      branch: 'main',
      event: 'push',
      sku: 'H200',
      gpu: 'NVIDIA H200',
      driver: '580.159.04',
      cuda: '13.0',
      kernelgate: '0.1.0',
      harness: 'kernelgate-harness 0.1.0',
      artifact: 'https://x/runs/9',
      interval_confidence: 0.99,
    });
    expect(record.references).toEqual({
      gemm: 'cublas',
      attention: 'sdpa_flash',
      bsr_gemm: 'cublas_dense',
    });
    expect(record.cases).toHaveLength(217);
    const fa2 = recordCases(record).find(
      (c) =>
        c.variant === 'triton_fa2' && c.case === 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
    );
    // median 30.584656… ms of 34 samples; the 99 % interval is the 10th and 25th smallest
    // (29.1788 and 30.9343 ms), kept as 4.6 % below and 1.1 % above.
    expect(fa2).toMatchObject({
      status: 'ok',
      method: 'events, interleaved',
      stop: 'time_cap',
      median_ms: 30.585,
      lo_pct: 4.6,
      hi_pct: 1.1,
      n: 34,
      sm_mhz: 1695,
      power_w: 688,
      throttled: 0,
      correct: 'PASS',
      rel_l2: 0.000284,
      tol_rel_l2: 0.002,
    });
    expect(fa2?.ref_ratio).toBeCloseTo(30.585 / 41.492, 4);
    expect(fa2?.tflops).toBeCloseTo(431.39, 1);
    // Launch counts are not kept: only the method's kind decides comparability.
    expect(new Set(recordCases(record).map((c) => c.method))).toEqual(
      new Set(['events, interleaved', 'events, graph(N launches)+l2flush, interleaved', undefined]),
    );
  });

  it('is one line a case and reads back to the same record', () => {
    const record = buildRecord(PUSH, OPTIONS);
    const text = serializeRecord(record);
    expect(text.split('\n')).toHaveLength(217 + 3);
    expect(parseRecord(text)).toEqual(record);
    expect(serializeRecord(buildRecord(PUSH, OPTIONS))).toBe(text);
  });

  it("keeps the configuration each case was tuned to, and gives it back as the case's tuning", () => {
    const tuned = structuredClone(PUSH);
    const c = tuned.cases.find((x) => x.variant === 'triton_fa2' && x.status === 'ok')!;
    c.tuning = { config: [128, 64, 4, 3], candidates_ms: [{ config: [128, 64, 4, 3], ms: 1.5 }] };
    const record = parseRecord(serializeRecord(buildRecord(tuned, OPTIONS)));
    const row = recordCases(record).find((x) => x.variant === c.variant && x.case === c.case)!;
    expect(row.tuning).toBe('[128,64,4,3]');
    const back = recordToResults(record).cases.find(
      (x) => x.variant === c.variant && x.case === c.case,
    )!;
    // The record keeps the choice, not the tuner's table of candidates.
    expect(back.tuning).toEqual({ config: [128, 64, 4, 3] });
    const untuned = recordToResults(record).cases.find((x) => x.variant === 'sdpa_flash')!;
    expect(untuned.tuning).toBeUndefined();
  });

  it('gives back a results document the schema accepts, with the intervals of the medians', () => {
    const record = parseRecord(serializeRecord(buildRecord(PUSH, OPTIONS)));
    const back = recordToResults(record);
    expect(validateResults(JSON.parse(JSON.stringify(back)), 'record.json')).toEqual(back);
    const fa2 = back.cases.find(
      (c) =>
        c.variant === 'triton_fa2' && c.case === 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false',
    )!;
    // 30.585 ms, 4.6 % below and 1.1 % above at 99 % (see the first test).
    expect(fa2.timing).toMatchObject({
      samples_ms: [],
      median_ms: 30.585,
      median_ci_confidence: 0.99,
    });
    expect(fa2.timing?.median_ci_lo_ms).toBeCloseTo(30.585 * (1 - 0.046), 6);
    expect(fa2.timing?.median_ci_hi_ms).toBeCloseTo(30.585 * (1 + 0.011), 6);
    // The schema still refuses a field it does not name.
    const extra = structuredClone(back);
    (extra.cases[0]!.timing as unknown as Record<string, unknown>).median_ci_mid_ms = 1;
    expect(() => validateResults(extra, 'record.json')).toThrow(
      'record.json: cases[0].timing.median_ci_mid_ms (gemm/cublas op=matmul,dtype=bf16,M=8192,N=8192,K=8192) is not a known field (known: method, samples_ms, sm_clock_mhz, power_w, median_ms, q1_ms, q3_ms, min_ms, mean_ms, rel_std, median_ci_rel, median_ci_lo_ms, median_ci_hi_ms, median_ci_confidence, balanced_ms, after, balanced_groups, n_samples, n_discarded_throttled, stop_reason, samples_span, warmup_ms, l2_flush, input_sets, l2_state)',
    );
  });

  it("keeps each case's balanced time, and its ratios and the dashboard's speedups read it", () => {
    // An H200 push (run 202): at fp16 D128 the medians put ours behind SDPA's default (0.993),
    // the balanced times 1.031 ahead; the record, the results it gives back and the dashboard
    // read the balanced ones, as the tiers do.
    const push = loadResults('test/fixtures/recorded/push-h200-run202/results.json.gz');
    const own = loadConfig('.');
    const record = buildRecord(push, { ...OPTIONS, references: { attention: 'sdpa_default' } });
    const head = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
    const at = (v: string) => recordCases(record).find((c) => c.variant === v && c.case === head);
    const full = (v: string) => push.cases.find((c) => c.variant === v && c.case === head)?.timing;
    const [ours, sdpa] = [at('cuda_fa_wgmma'), at('sdpa_default')];
    expect(ours?.balanced_ms).toBe(Number(full('cuda_fa_wgmma')?.balanced_ms?.toPrecision(5)));
    expect(sdpa?.balanced_ms).toBe(Number(full('sdpa_default')?.balanced_ms?.toPrecision(5)));
    expect((ours?.median_ms as number) / (sdpa?.median_ms as number)).toBeCloseTo(1 / 0.993, 3);
    expect(ours?.ref_ratio).toBeCloseTo(1 / 1.031, 3);
    // a case timed alone has none: its cell is empty
    expect(
      recordCases(record)
        .filter((c) => c.status === 'ok' && c.balanced_ms === undefined)
        .map((c) => c.variant),
    ).toEqual(['cublas', 'cublas', 'torch_copy']);
    const back = recordToResults(record);
    const tier = (r: typeof push) => evaluateTiers(r, own).find((t) => t.kernel === 'attention');
    expect(tier(back)?.statistic).toBe('balanced');
    expect(tier(back)?.value).toBeCloseTo(tier(push)?.value as number, 4);
    const data = dashboardData([record], { config: own });
    const kernel = data.skus[0]?.kernels.find((k) => k.name === 'attention');
    const ci = kernel?.cases.indexOf(head) as number;
    expect(kernel?.series['cuda_fa_wgmma']?.[ci]?.sp[0]).toBeCloseTo(1.031, 3);
    expect(kernel?.series['cuda_fa_wgmma']?.[ci]?.ms[0]).toBe(ours?.median_ms);
    const row = data.skus[0]?.newest.find((r) => r[1] === 'cuda_fa_wgmma' && r[2] === head);
    expect(row?.[8]).toBeCloseTo(1.031, 3);
    // a record written before the column: the medians, as then
    const old = parseRecord(
      serializeRecord({
        ...record,
        fields: record.fields.slice(0, -1),
        cases: record.cases.map((row) => row.slice(0, -1)),
      }),
    );
    expect(
      recordCases(old).find((c) => c.variant === 'cuda_fa_wgmma' && c.case === head)?.ref_ratio,
    ).toBeCloseTo(1 / 0.993, 3);
  });

  it('says what is wrong with a file that is not a usable record', () => {
    const good = JSON.parse(serializeRecord(buildRecord(PUSH, OPTIONS)));
    const problem = (text: string) => {
      try {
        parseRecord(text);
        return 'parsed';
      } catch (error) {
        expect(error).toBeInstanceOf(RecordError);
        return `${(error as RecordError).kind}: ${(error as Error).message}`;
      }
    };
    expect(problem('{"format":"kernelgate/hist')).toMatch(/^corrupt: not valid JSON \(/);
    expect(problem('[1,2]')).toBe('foreign: not a JSON object');
    expect(problem('{"entries":{}}')).toBe(
      'foreign: not a kernelgate history record (format null, expected kernelgate/history@1)',
    );
    expect(problem(JSON.stringify({ ...good, format: 'kernelgate/history@3' }))).toBe(
      'newer: format kernelgate/history@3 is newer than this kernelgate reads (kernelgate/history@1): not used; update kernelgate to read it',
    );
    const shortRow = { ...good, cases: [...good.cases.slice(0, 3), ['gemm', 'cublas']] };
    expect(problem(JSON.stringify(shortRow))).toBe('corrupt: cases[3] does not match fields');
    const noRun = { ...good, run: { ...good.run, sku: 3 } };
    expect(problem(JSON.stringify(noRun))).toBe('corrupt: run.sku is not a string');
  });

  it('judging against a record agrees with judging against the full results it came from', () => {
    const config = loadConfig('.');
    const count = (current: string, base: string) => {
      const baseline = loadResults(`test/fixtures/recorded/${base}/results.json.gz`);
      const results = loadResults(`test/fixtures/recorded/${current}/results.json.gz`);
      const record = parseRecord(serializeRecord(buildRecord(baseline, OPTIONS)));
      const pick = (v: ReturnType<typeof judge>['verdict']) => ({
        verdict: v.verdict,
        slower: v.counts.slower,
        faster: v.counts.faster,
        failed: v.counts.failed,
        drift: v.counts.drift,
      });
      const full = judge(results, baseline, config, 'pr');
      const summary = judge(results, recordToResults(record), config, 'pr');
      return { full: pick(full.verdict), summary: pick(summary.verdict) };
    };
    // The planted slowdown: 26 SLOWER either way; the planted wrong result: 26 failed either way;
    // the nightly of the same code: nothing slower or faster either way.
    const slowed = count('slowed', 'main-1355');
    expect(slowed.summary).toEqual(slowed.full);
    expect(slowed.summary.slower).toBe(26);
    const broken = count('broken', 'main-1355');
    expect(broken.summary).toEqual(broken.full);
    expect(broken.summary.failed).toBe(26);
    const nightly = count('nightly', 'main-1355');
    expect(nightly.summary).toEqual(nightly.full);
    expect(nightly.summary.slower + nightly.summary.faster).toBe(0);
    // Six judgements of 217 bootstrapped cases: about 2 s each on 2 cores, more under load.
  }, 60_000);

  it('the median interval covers at least the confidence asked for', () => {
    const ranks = (n: number, confidence: number) => {
      const samples = Array.from({ length: n }, (_, i) => i + 1);
      const { lo, hi } = medianInterval(samples, confidence);
      return [lo, hi];
    };
    // Tables of the order-statistic interval of the median: n = 26 at 99 % is [x7, x20], at 95 %
    // [x8, x19]; n = 10 at 95 % is [x2, x9]; n = 5 has none at 99 %: the whole range.
    expect(ranks(26, 0.99)).toEqual([7, 20]);
    expect(ranks(26, 0.95)).toEqual([8, 19]);
    expect(ranks(10, 0.95)).toEqual([2, 9]);
    expect(ranks(5, 0.99)).toEqual([1, 5]);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6);
    expect(normalQuantile(0.995)).toBeCloseTo(2.575829, 6);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 6);
  });
});
