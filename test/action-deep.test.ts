// The action's `deep` input (src/action/deep.ts): after the step measured, the deep checks run on
// the same runner and their section joins the results before the gate; a sanitizer finding fails
// the nightly; with results given as an input nothing runs and a warning says why.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, type RunDeps } from '../src/action/index.js';
import type { DeepOptions } from '../src/deep/index.js';
import { loadResults, readResultsText } from '../src/results/index.js';

const ROOT = join(import.meta.dirname, '..');
const RECORDED = join(ROOT, 'test/fixtures/recorded/push/results.json.gz');

async function nightly(
  inputs: Record<string, string>,
  measured = true,
  recorded: { results: string; baseline?: string } = { results: RECORDED },
) {
  const workspace = mkdtempSync(join(tmpdir(), 'kg-deep-ws-'));
  const resultsPath = join(workspace, 'results.json');
  writeFileSync(resultsPath, readResultsText(recorded.results));
  const failed: string[] = [];
  const warnings: string[] = [];
  const asked: DeepOptions[] = [];
  const all: Record<string, string> = {
    config: ROOT,
    comment: 'false',
    'save-baseline': 'false',
    ...(measured ? {} : { results: RECORDED }),
    ...inputs,
  };
  const deps: RunDeps = {
    core: {
      getInput: (name) => all[name] ?? '',
      setOutput: () => undefined,
      setFailed: (m) => failed.push(m),
      warning: (m) => warnings.push(m),
      info: () => undefined,
      appendSummary: async () => undefined,
      annotate: () => undefined,
    },
    env: {
      GITHUB_EVENT_NAME: 'schedule',
      GITHUB_EVENT_PATH: join(ROOT, 'test/fixtures/events/schedule.json'),
      GITHUB_REPOSITORY: 'acme/kernels',
      GITHUB_REF: 'refs/heads/main',
      GITHUB_RUN_ID: '7',
      GITHUB_WORKSPACE: workspace,
    },
    createClient: () => {
      throw new Error('no GitHub client in this test');
    },
    fs: { mkdir, writeFile: (path, data) => writeFile(path, data, 'utf8') },
    measure: async () => ({
      results: loadResults(resultsPath),
      resultsPath,
      baseline: recorded.baseline
        ? { results: loadResults(recorded.baseline), path: recorded.baseline }
        : undefined,
      pendingBaseline: undefined,
      notes: [],
    }),
    deep: async (_config, options) => {
      asked.push(options);
      return {
        deep: {
          sanitizer: [
            {
              tool: 'memcheck',
              kernel: 'attention',
              variant: 'triton_fa2',
              case: 'dtype=fp16,B=2,H=3,S=77,D=64,causal=false',
              status: 'findings',
              errors: 1,
              findings: [{ what: 'Invalid __global__ write of size 4 bytes', kernel: '_attn_fwd' }],
            },
          ],
        },
        diagnostics: [],
      };
    },
  };
  await run(deps);
  return { failed, warnings, asked, workspace, resultsPath };
}

describe("the action's deep input", () => {
  it('runs the checks after measuring and fails the nightly on a sanitizer finding', async () => {
    const r = await nightly({ deep: 'sanitizer' });
    expect(r.asked).toHaveLength(1);
    expect(r.asked[0]?.checks).toEqual(['memcheck', 'racecheck', 'synccheck', 'initcheck']);
    expect(r.asked[0]?.outDir).toBe(join(r.workspace, '.kernelgate/report/deep'));
    // The run's own builds go to the harness under the tools.
    expect(JSON.parse(readFileSync(r.asked[0]!.buildsPath!, 'utf8')).builds.length).toBeGreaterThan(
      0,
    );
    expect(r.failed).toEqual([
      'kernelgate: the gate failed (1 reason):\n- sanitizer memcheck: attention/triton_fa2 dtype=fp16,B=2,H=3,S=77,D=64,causal=false: 1 error: Invalid __global__ write of size 4 bytes in _attn_fwd',
    ]);
    // The section is in the results written back.
    expect(loadResults(r.resultsPath).deep?.sanitizer?.[0]?.status).toBe('findings');
    expect(readFileSync(join(r.workspace, '.kernelgate/report/report.md'), 'utf8')).toContain(
      '### Deep checks',
    );
  });

  it('ncu-slower: hands the checks the cases the run is judged SLOWER in, the largest first', async () => {
    const r = await nightly({ deep: 'ncu-slower', profile: 'false' }, true, {
      results: join(ROOT, 'test/fixtures/recorded/slowed/results.json.gz'),
      baseline: RECORDED,
    });
    const slower = r.asked[0]?.slower ?? [];
    // The planted slowdown: triton_fa2 twice a call, SLOWER on all 26 of its cases.
    expect(slower).toHaveLength(26);
    expect(new Set(slower.map((t) => `${t.kernel}/${t.variant}`))).toEqual(
      new Set(['attention/triton_fa2']),
    );
    expect(r.asked[0]?.checks).toEqual(['ncu-slower']);
  }, 20_000);

  it('the nightly compares Nsight Compute profiles of base and head of each moved variant by default', async () => {
    const r = await nightly({}, true, {
      results: join(ROOT, 'test/fixtures/recorded/slowed/results.json.gz'),
      baseline: RECORDED,
    });
    expect(r.asked).toHaveLength(1);
    expect(r.asked[0]?.checks).toEqual(['ncu-compare']);
    // triton_fa2, SLOWER on all 26 cases: one target, its largest change.
    expect(r.asked[0]?.compare?.map((t) => `${t.kernel}/${t.variant}`)).toEqual([
      'attention/triton_fa2',
    ]);
    expect(r.asked[0]?.timeBoxS).toBe(120);
    // Not a paired run: no base checkout to profile (runNcuCompare says so).
    expect(r.asked[0]?.base).toBeUndefined();
  }, 20_000);

  it('runs nothing without the input', async () => {
    const r = await nightly({});
    expect(r.asked).toEqual([]);
    expect(r.failed).toEqual([]);
  });

  it('runs nothing where the step does not measure, and says so', async () => {
    const r = await nightly({ deep: 'ncu' }, false);
    expect(r.asked).toEqual([]);
    expect(r.warnings).toContain(
      "Input 'deep' (ncu) runs where this step measures: not with 'results' or 'merge'. No deep check ran.",
    );
  });

  it('refuses an unknown check, naming the input', async () => {
    const r = await nightly({ deep: 'sanitizer,asan' });
    expect(r.failed).toEqual([
      "Input 'deep': unknown deep check 'asan'; expected sanitizer, ncu, ncu-slower, ncu-compare, or any of memcheck, racecheck, synccheck, initcheck",
    ]);
  });
});
