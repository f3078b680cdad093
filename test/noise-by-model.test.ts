// compare.noise_pct keyed by GPU model (issue 25): a figure measured on one model never applies
// to another; kernelgate.yml's errors; `kernelgate calibrate` writes the block of its runs' model,
// here from the recorded H100 nights of identical kernel code on two machines.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig, type Config } from '../src/config/index.js';
import { calibrate, compare, writeCalibration } from '../src/judge/index.js';
import { runCli } from '../src/cli/index.js';
import { loadResults, type KernelgateResults } from '../src/results/index.js';
import { RECORDED, loadGz } from './support/recorded.js';
import { messageOf } from './support/throws.js';

const RESULTS = join(import.meta.dirname, 'fixtures', 'results');
const HEADLINE = 'attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

function repo(kernelgateYml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kg-noise-'));
  writeFileSync(join(dir, 'kernelgate.yml'), kernelgateYml);
  return dir;
}

describe('compare.noise_pct in kernelgate.yml', () => {
  it('reads a block per GPU model', () => {
    const config = loadConfig(
      repo(
        'compare:\n  noise_pct:\n    H100-SXM:\n      gemm: 10\n    H200: { attention/sdpa_flash: 4 }\n',
      ),
    );
    expect(config.compare.noisePct).toEqual({
      'H100-SXM': { gemm: 10 },
      H200: { 'attention/sdpa_flash': 4 },
    });
  });

  it('refuses an entry under no GPU model (the flat form), saying how to key it', () => {
    expect(messageOf(() => loadConfig(repo('compare:\n  noise_pct:\n    gemm: 10\n')))).toBe(
      'kernelgate.yml: compare.noise_pct.gemm is not under a GPU model (got 10): noise figures apply ' +
        'only to the GPU model they were measured on; write it under that model, e.g. ' +
        'compare.noise_pct.H100-SXM.gemm (the models: GH200, H200-NVL, H200, H100-NVL, H100-PCIe, ' +
        'H100-SXM, H800, B200, L40S, L40, L4, A100-PCIe, A100-SXM)',
    );
  });

  it("refuses a key that is not a model of the GPU table, naming the model of a GPU's name", () => {
    const text = 'compare:\n  noise_pct:\n    "H100 80GB HBM3":\n      gemm: 10\n    RTX9090: {}\n';
    expect(messageOf(() => loadConfig(repo(text)))).toBe(
      [
        'kernelgate.yml: compare.noise_pct has a key that must be a GPU model of data/gpus.json ' +
          '(one of GH200, H200-NVL, H200, H100-NVL, H100-PCIe, H100-SXM, H800, B200, L40S, L40, L4, ' +
          'A100-PCIe, A100-SXM) (got "H100 80GB HBM3"): the GPU named H100 80GB HBM3 is the model H100-SXM',
        'kernelgate.yml: compare.noise_pct has a key that must be a GPU model of data/gpus.json ' +
          '(one of GH200, H200-NVL, H200, H100-NVL, H100-PCIe, H100-SXM, H800, B200, L40S, L40, L4, ' +
          'A100-PCIe, A100-SXM) (got "RTX9090")',
      ].join('\n'),
    );
  });
});

describe('a noise figure applies to its GPU model only', () => {
  // One H100 case (the fixtures' baseline ran on H100-SXM), 8 % slower than its baseline.
  const baseline = loadResults(join(RESULTS, 'baseline.json'));
  baseline.cases = baseline.cases.filter((c) => `${c.kernel}/${c.variant}/${c.case}` === HEADLINE);
  const slower: KernelgateResults = structuredClone(baseline);
  const timing = slower.cases[0]!.timing!;
  timing.samples_ms = timing.samples_ms.map((x) => x * 1.08);
  timing.median_ms *= 1.08;
  const withNoise = (noisePct: Config['compare']['noisePct']): Config => {
    const config = defaultConfig();
    return { ...config, compare: { ...config.compare, noisePct } };
  };

  it('an H200 figure does not apply to an H100 run: SLOWER at 3 %, and the report says why', () => {
    const judged = compare(slower, baseline, withNoise({ H200: { 'attention/triton_fa2': 10 } }));
    expect(baseline.environment.gpu.sku).toBe('H100-SXM');
    expect(judged.cases[0]).toMatchObject({ key: HEADLINE, perf: 'SLOWER', thresholdPct: 3 });
    expect(judged.notes).toContain(
      "compare.noise_pct has figures for H200, none for this run's GPU H100-SXM: the 1 case(s) " +
        'judged against the stored baseline are judged without a noise figure (one measured on ' +
        "another GPU model is never applied); run 'kernelgate calibrate' on A/A runs of this model " +
        'to give it its own.',
    );
  });

  it('an H100 figure does: the 8 % is within its 10 %, SAME, and no note', () => {
    const judged = compare(
      slower,
      baseline,
      withNoise({
        H200: { 'attention/triton_fa2': 2 },
        'H100-SXM': { 'attention/triton_fa2': 10 },
      }),
    );
    expect(judged.cases[0]).toMatchObject({ key: HEADLINE, perf: 'SAME', thresholdPct: 10 });
    expect(judged.notes.filter((n) => n.includes('noise_pct'))).toEqual([]);
  });
});

describe('kernelgate calibrate over the recorded H100 nights', () => {
  // Runs 32, 34, 35 (machine 10) and 36, 37 (machine 11), 2026-11-26: new commits, the same kernel
  // code (test/fixtures/recorded/README.md); their timings are the head arms of paired nights.
  const NIGHTS = [32, 34, 35, 36, 37].map((n) => `nightly-h100-run${n}`);
  const runs = NIGHTS.map(loadGz);
  const options = { margin: 2, floorPct: 3, exclude: [] as string[] };

  it('writes an H100-SXM block and leaves the H200 block as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kg-noise-cal-'));
    const files = NIGHTS.map((name, i) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(runs[i]));
      return file;
    });
    const yml = join(dir, 'kernelgate.yml');
    writeFileSync(yml, 'compare:\n  noise_pct:\n    H200:\n      gemm: 10\n');
    let stderr = '';
    const status = await runCli(
      ['calibrate', ...files, '--write', yml, '--provenance', 'recorded H100 nights 32-37'],
      { stdout: () => {}, stderr: (t) => (stderr += t), cwd: dir },
    );
    expect(status).toBe(0);
    expect(stderr.split('\n')).toEqual([
      `${yml}: compare.noise_pct.H100-SXM now has 27 per-case entries (216 cases compared)`,
      'skipped bsr_gemm/torch_bsr_dense_mm/dtype=fp16,M=1024,N=1000,K=2048,block=128,topk=4: not timed in every run',
      '',
    ]);
    const text = readFileSync(yml, 'utf8');
    expect(text.split('\n').slice(0, 7)).toEqual([
      'compare:',
      '  noise_pct:',
      '    H200:',
      '      gemm: 10',
      '    H100-SXM:',
      '      # Calibrated by `kernelgate calibrate` from 5 A/A runs on H100-SXM (recorded H100 nights 32-37):',
      '      # 216 cases compared, 27 moved more than the threshold.',
    ]);
    const written = (parse(text) as { compare: { noise_pct: Record<string, object> } }).compare
      .noise_pct;
    expect(written['H200']).toEqual({ gemm: 10 });
    expect(written['H100-SXM']).toEqual(H100_NIGHTS_BLOCK);
    // kernelgate.yml accepts what it wrote
    expect(loadConfig(dir).compare.noisePct['H100-SXM']).toEqual(H100_NIGHTS_BLOCK);
  });

  it('an entry is ceil(2 × the spread of the five medians), read from the runs themselves', () => {
    const key = 'attention/sdpa_flash/dtype=fp16,B=2,H=3,S=77,D=64,causal=true';
    const medians = runs.map(
      (r) => r.cases.find((c) => `${c.kernel}/${c.variant}/${c.case}` === key)!.timing!.median_ms,
    );
    const spread = (Math.max(...medians) / Math.min(...medians) - 1) * 100;
    expect(H100_NIGHTS_BLOCK[key]).toBe(Math.ceil(spread * 2));
    expect(calibrate(runs, options).entries.find((e) => e.key === key)?.noisePct).toBe(20);
  });

  it('refuses a file whose noise_pct has an entry under no model', () => {
    expect(
      messageOf(() =>
        writeCalibration(
          'compare:\n  noise_pct:\n    gemm: 10\n',
          calibrate(runs, options),
          'x',
          'kernelgate.yml',
        ),
      ),
    ).toMatch(/^kernelgate\.yml: compare\.noise_pct\.gemm is not under a GPU model \(got 10\)/);
  });

  it('refuses the recorded H100 and H200 runs together', () => {
    const h200 = loadResults(join(RECORDED, 'calibration', 'run1', 'results.json.gz'));
    expect(messageOf(() => calibrate([runs[0]!, h200], options, ['night.json', 'h200.json']))).toBe(
      'calibrate needs A/A runs of one GPU model (noise figures never cross models); these ran on H100-SXM (night.json) and H200 (h200.json)',
    );
  });
});

/** What calibrate gives on the five recorded H100 nights (runs 32, 34-37, two machines). */
const H100_NIGHTS_BLOCK: Record<string, number> = {
  'attention/cuda_fa_wgmma/dtype=bf16,B=16,H=96,S=4096,D=64,causal=true': 7,
  'attention/cuda_fa2/dtype=bf16,B=16,H=96,S=4096,D=64,causal=true': 9,
  'attention/cuda_fa2/dtype=bf16,B=2,H=3,S=77,D=128,causal=true': 11,
  'attention/cuda_fa2/dtype=fp16,B=16,H=96,S=4096,D=64,causal=true': 9,
  'attention/sdpa_cudnn/dtype=bf16,B=16,H=96,S=4096,D=64,causal=true': 13,
  'attention/sdpa_cudnn/dtype=fp16,B=16,H=96,S=4096,D=128,causal=true': 10,
  'attention/sdpa_cudnn/dtype=fp16,B=16,H=96,S=4096,D=64,causal=false': 8,
  'attention/sdpa_cudnn/dtype=fp16,B=16,H=96,S=4096,D=64,causal=true': 13,
  'attention/sdpa_cudnn/dtype=fp16,B=2,H=3,S=77,D=64,causal=true': 7,
  'attention/sdpa_default/dtype=bf16,B=16,H=96,S=4096,D=128,causal=true': 9,
  'attention/sdpa_default/dtype=fp16,B=16,H=96,S=4096,D=128,causal=false': 8,
  'attention/sdpa_default/dtype=fp16,B=16,H=96,S=4096,D=64,causal=true': 8,
  'attention/sdpa_flash/dtype=fp16,B=16,H=96,S=4096,D=128,causal=true': 16,
  'attention/sdpa_flash/dtype=fp16,B=2,H=3,S=77,D=64,causal=true': 20,
  'attention/triton_fa2/dtype=bf16,B=16,H=96,S=4096,D=64,causal=true': 16,
  'attention/triton_fa2/dtype=fp16,B=1,H=4,S=300,Sk=1000,D=128,causal=false': 8,
  'attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=128,causal=true': 11,
  'attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=64,causal=false': 7,
  'attention/triton_fa2/dtype=fp16,B=16,H=96,S=4096,D=64,causal=true': 8,
  'attention/triton_fa2/dtype=fp16,B=2,H=3,S=77,D=64,causal=true': 7,
  'bsr_gemm/cublas_dense/dtype=bf16,M=8192,N=8192,K=8192,block=128,topk=16': 18,
  'bsr_gemm/cublas_dense/dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16': 8,
  'bsr_gemm/cuda_bsr_wgmma/dtype=bf16,M=8192,N=8192,K=8192,block=128,topk=16': 9,
  'bsr_gemm/cuda_bsr_wgmma/dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16': 8,
  'bsr_gemm/triton_bsr/dtype=bf16,M=8192,N=8192,K=8192,block=128,topk=16': 8,
  'bsr_gemm/triton_bsr/dtype=fp16,M=8192,N=8192,K=8192,block=128,topk=16': 16,
  'gemm/cublas/op=matmul,dtype=fp16,M=8192,N=8192,K=8192': 15,
};
