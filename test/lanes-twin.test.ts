// The harness's lanes (python/kernelgate_harness/lanes.py: several GPUs in one runner) order their
// shared queue by the shards' cost rule (src/shard/plan.ts), twinned in Python; fixed_split.plan (test/python), the
// shards' fixed split in Python, checks the twin: the same units and baseline must give the same
// split in both, on the recorded paired H100 run (217 units).
import { execFileSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadResults } from '../src/results/index.js';
import { planShards, unitsOfResults } from '../src/shard/index.js';

const ROOT = join(import.meta.dirname, '..');
const results = loadResults(join(ROOT, 'test/fixtures/recorded/paired-aa-h100/results.json.gz'));
const units = unitsOfResults(results);

/** fixed_split.plan in Python over the same units: the lane of each unit and each lane's seconds. */
function pythonPlan(count: number, withBaseline: boolean): { owner: number[]; load: number[] } {
  const script = [
    'import json, sys',
    'import fixed_split',
    'data = json.load(sys.stdin)',
    'balance = {}',
    'for c in data["baseline"]: balance.setdefault(c["kernel"] + "/" + c["case"], []).append(c)',
    'owner, load, _ = fixed_split.plan([(u["id"], u["params"], len(u["variants"])) for u in data["units"]], data["count"], balance)',
    'print(json.dumps({"owner": owner, "load": load}))',
  ].join('\n');
  const input = JSON.stringify({
    units,
    count,
    baseline: withBaseline ? results.cases : [],
  });
  const out = execFileSync('python3', ['-c', script], {
    input,
    encoding: 'utf8',
    env: {
      ...process.env,
      PYTHONPATH: [join(ROOT, 'python'), join(ROOT, 'test', 'python')].join(delimiter),
    },
  });
  return JSON.parse(out) as { owner: number[]; load: number[] };
}

describe("the lanes' cost rule splits as the shards' does", () => {
  it.each([
    [2, false],
    [3, false],
    [2, true],
    [4, true],
  ])('over %i lanes, balanced by the baseline: %s', (count, withBaseline) => {
    const ts = planShards(
      units,
      count,
      withBaseline ? { results, path: 'paired-aa-h100' } : undefined,
    );
    const py = pythonPlan(count, withBaseline);
    const lanes = Array.from({ length: count }, (_, k) =>
      units.filter((_, i) => py.owner[i] === k).map((u) => u.id),
    );
    expect(lanes).toEqual(ts.shards);
    expect(py.load.map((s) => Math.round(s * 10) / 10)).toEqual(ts.seconds);
    expect(ts.source).toBe(withBaseline ? 'baseline' : 'estimate');
  });
});
