// Splitting a run over shards and merging it again (src/shard, docs/scaling.md), on the recorded
// paired H100 run (test/fixtures/recorded/paired-slow2-h100): every case is owned by exactly one
// shard, the split is balanced by the recorded timings, the merge of all shards judges like the
// run itself, and a shard that did not report or failed fails the gate by name.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { shardProblems } from '../src/judge/index.js';
import { judge } from '../src/pipeline/index.js';
import { loadResults } from '../src/results/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import {
  configUnits,
  findShardFiles,
  mergeShards,
  parseShardSpec,
  planShards,
  readShardDocuments,
  splitResults,
  unitsOfResults,
} from '../src/shard/index.js';

const ROOT = join(import.meta.dirname, '..');
const RECORDED = join(ROOT, 'test/fixtures/recorded/paired-slow2-h100/results.json.gz');
const recorded = loadResults(RECORDED);
const config = loadConfig(ROOT);

describe('parseShardSpec', () => {
  it('reads i/n', () => {
    expect(parseShardSpec('2/3', '--shard')).toEqual({ index: 2, count: 3 });
    expect(parseShardSpec(' 1 / 1 ', '--shard')).toEqual({ index: 1, count: 1 });
  });
  it('names the option and the bad value', () => {
    expect(() => parseShardSpec('3', "Input 'shard'")).toThrow(
      "Input 'shard' must be i/n (shard i of n, counted from 1), got '3'.",
    );
    expect(() => parseShardSpec('0/3', '--shard')).toThrow(
      "--shard: i must be 1 to n (3), got '0/3'.",
    );
    expect(() => parseShardSpec('4/3', '--shard')).toThrow(
      "--shard: i must be 1 to n (3), got '4/3'.",
    );
    expect(() => parseShardSpec('1/0', '--shard')).toThrow(
      "--shard: n must be 1 to 256, got '1/0'.",
    );
  });
});

describe('planShards', () => {
  const units = unitsOfResults(recorded);
  const baseline = { results: recorded, path: RECORDED };

  it('the repository config expands to the cases the harness ran, with the same ids', () => {
    const fromConfig = configUnits(config).map((u) => u.id);
    expect(fromConfig).toEqual(units.map((u) => u.id));
    expect(fromConfig).toHaveLength(32);
  });

  it('gives every case to exactly one shard, the same way every time', () => {
    for (const n of [1, 2, 3, 5, 40]) {
      const plan = planShards(units, n, baseline);
      const all = plan.shards.flat();
      expect(all.sort()).toEqual(units.map((u) => u.id).sort());
      expect(plan.shards).toHaveLength(n);
      expect(planShards(units, n, baseline)).toEqual(plan);
    }
  });

  it('balances by the recorded timings: no shard far above the mean', () => {
    const plan = planShards(units, 3, baseline);
    expect(plan.source).toBe('baseline');
    expect(plan.baseline).toBe(RECORDED);
    const mean = plan.seconds.reduce((a, b) => a + b, 0) / 3;
    const longest = Math.max(...plan.seconds);
    // Longest-first onto the least loaded: within the largest single case of the mean.
    expect(longest).toBeLessThan(mean * 1.35);
    // Each shard keeps the harness's order (gemm first).
    for (const shard of plan.shards) {
      const order = units.map((u) => u.id).filter((id) => shard.includes(id));
      expect(shard).toEqual(order);
    }
  });

  it('without a baseline, estimates (variants at the time cap) and says so', () => {
    const plan = planShards(units, 3);
    expect(plan.source).toBe('estimate');
    expect(plan.baseline).toBeUndefined();
    expect(plan.shards.flat()).toHaveLength(32);
    expect(plan.digest).not.toBe(planShards(units, 3, baseline).digest);
  });
});

function threeShards(): { plan: ReturnType<typeof planShards>; docs: KernelgateResults[] } {
  const plan = planShards(unitsOfResults(recorded), 3, { results: recorded, path: RECORDED });
  return { plan, docs: [1, 2, 3].map((i) => splitResults(recorded, plan, i)) };
}

describe('mergeShards', () => {
  it('all shards merged judge like the run itself', () => {
    const { docs } = threeShards();
    const merged = mergeShards(
      docs.map((results, i) => ({ file: `shard-${i + 1}/results.json`, results })),
      3,
    );
    expect(merged.shards.map((s) => s.status)).toEqual(['ok', 'ok', 'ok']);
    expect(merged.results.cases).toHaveLength(recorded.cases.length);
    expect(merged.results.cases[0]?.device).toEqual({
      name: recorded.environment.gpu.name,
      sku: recorded.environment.gpu.sku,
      host: recorded.run.host,
    });
    expect(shardProblems(merged.results)).toEqual([]);
    const alone = judge(recorded, undefined, config, 'pr');
    const joined = judge(merged.results, undefined, config, 'pr');
    expect(joined.verdict.verdict).toBe(alone.verdict.verdict);
    expect(joined.verdict.counts).toEqual(alone.verdict.counts);
  });

  it('a shard that did not report and one that failed fail the gate by name', () => {
    const { plan, docs } = threeShards();
    const failed = docs[2] as KernelgateResults;
    const lost = (plan.shards[2] as string[]).slice(-2);
    const third: KernelgateResults = {
      ...failed,
      diagnostics: [
        ...failed.diagnostics,
        {
          level: 'error',
          code: 'harness.exit',
          message:
            'The harness exited with status 1; the cases it finished are judged. Last lines:\nKilled',
          source: 'harness',
        },
      ],
      cases: failed.cases.filter((c) => !lost.includes(`${c.kernel}/${c.case}`)),
    };
    const merged = mergeShards(
      [
        { file: 'a/results.json', results: docs[0] as KernelgateResults },
        { file: 'c/results.json', results: third },
      ],
      3,
    );
    expect(merged.shards.map((s) => s.status)).toEqual(['ok', 'missing', 'failed']);
    const owned2 = plan.shards[1] as string[];
    const named = owned2.slice(0, 6).join(', ');
    const more = owned2.length > 6 ? ` and ${owned2.length - 6} more` : '';
    const problems = shardProblems(merged.results);
    expect(problems).toEqual([
      `shard 2/3 did not report: no results for cases ${named}${more}`,
      `shard 3/3 failed: The harness exited with status 1; the cases it finished are judged.; no results for cases ${lost.join(', ')}`,
    ]);
    const judged = judge(merged.results, undefined, config, 'pr');
    expect(judged.verdict.verdict).toBe('fail');
    expect(judged.verdict.reasons.slice(0, 2)).toEqual(problems);
    expect(judged.rendered.comment).toContain('shard 2/3 did not report');
    expect(judged.rendered.comment).toMatch(
      /## .*❌ fail: shard 2\/3 did not report, shard 3\/3 failed/,
    );
  });

  it('no shard reported: every shard is named', () => {
    const merged = mergeShards([], 2);
    expect(shardProblems(merged.results)).toEqual([
      'shard 1/2 did not report, and no shard reported its split',
      'shard 2/2 did not report, and no shard reported its split',
    ]);
    expect(judge(merged.results, undefined, config, 'pr').verdict.verdict).toBe('fail');
  });

  it('refuses a count that disagrees, a shard twice, and results that are not a shard', () => {
    const { docs } = threeShards();
    const one = { file: 'x/results.json', results: docs[0] as KernelgateResults };
    expect(() => mergeShards([one], 2)).toThrow(
      'x/results.json: run.shard.count is 3, but the merge expects 2 shards (the matrix and the merge disagree).',
    );
    expect(() => mergeShards([one, { ...one, file: 'y/results.json' }], 3)).toThrow(
      'y/results.json and x/results.json both say they are shard 1/3: keep one (a re-run job uploads its artifact again).',
    );
    const dir = mkdtempSync(join(tmpdir(), 'kg-shard-'));
    writeFileSync(join(dir, 'results.json'), JSON.stringify(recorded));
    expect(() => readShardDocuments(findShardFiles([dir]), dir)).toThrow(
      "results.json: run.shard is absent: these results are not one shard's (made by `kernelgate run --shard i/n` or the action's shard input).",
    );
  });

  it('finds the shards as download-artifact lays them out', () => {
    const { docs } = threeShards();
    const dir = mkdtempSync(join(tmpdir(), 'kg-shard-'));
    for (const [i, doc] of docs.entries()) {
      mkdirSync(join(dir, `kernelgate-shard-${i + 1}`));
      writeFileSync(join(dir, `kernelgate-shard-${i + 1}`, 'results.json'), JSON.stringify(doc));
    }
    const found = readShardDocuments(findShardFiles([dir]), dir);
    expect(found.map((d) => d.file)).toEqual(
      [1, 2, 3].map((i) => `kernelgate-shard-${i}/results.json`),
    );
  });
});

describe('kernelgate merge', () => {
  it('joins the shards, writes the merged results and exits with the verdict, naming the lost shard', async () => {
    const { runCli } = await import('../src/cli/index.js');
    const plan = planShards(unitsOfResults(recorded), 2, { results: recorded, path: RECORDED });
    const dir = mkdtempSync(join(tmpdir(), 'kg-merge-cli-'));
    mkdirSync(join(dir, 'shard-1'));
    writeFileSync(
      join(dir, 'shard-1', 'results.json'),
      JSON.stringify(splitResults(recorded, plan, 1)),
    );
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: (t: string) => (stdout += t),
      stderr: (t: string) => (stderr += t),
      cwd: dir,
    };
    const status = await runCli(
      ['merge', 'shard-1', '--shards', '2', '--config', ROOT, '--out', 'report.md'],
      io,
    );
    expect(status).toBe(1);
    expect(stderr).toContain('warning: shard 2/2 did not report: no results for cases ');
    expect(stdout).toContain('  fail: shard 2/2 did not report: no results for cases ');
    const merged = loadResults(join(dir, '.kernelgate/report/merge/results.json'));
    expect(merged.run.shards?.map((s) => s.status)).toEqual(['ok', 'missing']);
    expect(await runCli(['merge', 'shard-1', '--config', ROOT], io)).toBe(2);
    expect(stderr).toContain(
      'kernelgate merge: --shards must be the number of shards of the split, 1 to 256 (got nothing)',
    );
  });
});
