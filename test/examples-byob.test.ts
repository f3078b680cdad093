// examples/byob/kernelgate.yml (an nvbench binary and CUTLASS example 88 beside the kernel set):
// it loads as a repository's kernelgate.yml, and its command entry reads example 88's output
// lines as the example prints them (a status mark, the configuration's name padded to 32
// columns, " : ", the rate in TFLOPS/s), passing only runs that verified every configuration.
// The outputs here are written for the test in that format; the binaries do not run here.
import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandRunner } from '../src/adapters/index.js';
import { runBenchmarks } from '../src/adapters/index.js';
import { loadConfig } from '../src/config/index.js';

const EXAMPLE = join(__dirname, '..', 'examples', 'byob', 'kernelgate.yml');
const FOLDER = join('build', 'cutlass', 'examples', '88_hopper_fmha');
const COMMAND = './88_hopper_fmha --b=16 --h=96 --q=4096 --k=4096 --d=128 --iterations=10 --verify';
const FLOPS = 4 * 16 * 96 * 4096 * 4096 * 128;

function repository(): string {
  const root = mkdtempSync(join(tmpdir(), 'kg-byob-example-'));
  cpSync(EXAMPLE, join(root, 'kernelgate.yml'));
  mkdirSync(join(root, FOLDER), { recursive: true });
  return root;
}

/** One configuration line: [OK], [--] or [FAIL], its name, its rate. */
function line(mark: 'OK' | '--' | 'FAIL', name: string, tflops: string): string {
  const lead = mark === 'FAIL' ? '[FAIL] ' : mark === 'OK' ? ' [OK]  ' : ' [--]  ';
  return `${lead}${name.padEnd(32)} : ${tflops} TFLOPS/s`;
}

const HEADER = '###### B 16 H 96 Q 4096 K 4096 D 128 Forward Full #SM 132';
const COOP = 'tma ws cooperative 128x128x128';
const PING = 'tma ws ping-pong 128x128x128';

/** Runs the example's command entry with every run printing `output`. */
async function runExample(output: string) {
  const root = repository();
  const config = loadConfig(root);
  const seen: { command: string; cwd: string }[] = [];
  const runner: CommandRunner = (command, { cwd }) => {
    seen.push({ command, cwd });
    return Promise.resolve({ exitCode: 0, output, timedOut: false });
  };
  const results = await runBenchmarks(config.benchmarks, {
    root,
    only: ['cutlass_fmha'],
    runner,
  });
  return { root, seen, results };
}

describe('examples/byob/kernelgate.yml', () => {
  it('loads as a kernelgate.yml: an nvbench file benchmark and a command benchmark', () => {
    const root = repository();
    const config = loadConfig(root);
    expect(config.benchmarks.map((b) => [b.name, b.format])).toEqual([
      ['nvbench_copy', 'nvbench'],
      ['cutlass_fmha', 'command'],
    ]);
    const [nvbench, cutlass] = config.benchmarks;
    expect(nvbench?.output).toBe(join(root, 'out', 'nvbench.json'));
    expect(nvbench?.run).toContain('--jsonbin out/nvbench.json');
    expect(cutlass?.cwd).toBe(join(root, FOLDER));
    expect(cutlass?.command?.repeat).toBe(10);
  });

  it('times each configuration of a verified run as a variant of its own, and PASSES it', async () => {
    const output = [HEADER, line('OK', COOP, '605.5'), line('OK', PING, '586.25'), ''].join('\n');
    const { root, seen, results } = await runExample(output);
    expect(seen).toHaveLength(10);
    expect(seen[0]).toEqual({ command: COMMAND, cwd: join(root, FOLDER) });
    expect(results.cases.map((c) => [c.variant, c.case, c.status])).toEqual([
      [`example88:${COOP}`, 'B=16,H=96,S=4096,D=128', 'ok'],
      [`example88:${PING}`, 'B=16,H=96,S=4096,D=128', 'ok'],
    ]);
    const [coop, ping] = results.cases;
    expect(coop?.timing?.median_ms).toBeCloseTo((FLOPS / 605.5e12) * 1e3, 9);
    expect(ping?.timing?.median_ms).toBeCloseTo((FLOPS / 586.25e12) * 1e3, 9);
    expect(coop?.timing?.n_samples).toBe(10);
    expect(coop?.correctness?.status).toBe('PASS');
    expect(coop?.correctness?.message).toBe("all 10 runs passed the benchmark's own check");
  });

  it('reads a rate printed in exponent form', async () => {
    const output = [HEADER, line('OK', COOP, '1.93e-02'), ''].join('\n');
    const { results } = await runExample(output);
    expect(results.cases[0]?.timing?.median_ms).toBeCloseTo((FLOPS / 0.0193e12) * 1e3, 6);
  });

  const failures: [string, string][] = [
    [
      'a configuration failed its verification first',
      `Reference check failed\n${line('FAIL', COOP, '605.5')}\n${line('OK', PING, '586.25')}`,
    ],
    [
      'a configuration failed its verification last',
      `${line('OK', COOP, '605.5')}\n${line('FAIL', PING, '586.25')}`,
    ],
    ['no run was verified', `${line('--', COOP, '605.5')}\n${line('--', PING, '586.25')}`],
    [
      'the GPU is not a Hopper',
      "This example requires a GPU of NVIDIA's Hopper Architecture (compute capability 90) and CUDA 12.0 or greater.",
    ],
  ];
  for (const [what, body] of failures) {
    it(`FAILS the case when ${what}`, async () => {
      const { results } = await runExample(`${HEADER}\n${body}\n`);
      expect(results.cases).toHaveLength(1);
      expect(results.cases[0]?.variant).toBe('example88');
      expect(results.cases[0]?.status).toBe('fail');
      expect(results.cases[0]?.reason).toBe(
        String.raw`the benchmark's own check failed: its output did not match /(?<![\s\S])(?![\s\S]*\[FAIL\])[\s\S]*^ \[OK\] /`,
      );
    });
  }
});
