// The generic command adapter: a CUTLASS-like script (test/fixtures/adapters/command) run as the
// benchmark, its rates read by a regular expression or a JSON line, its own check read as the
// correctness, and the base revision's copy run alternately with the head's (paired A/B).
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  fillTemplate,
  readMetric,
  runCommands,
  type CommandRunner,
} from '../src/adapters/command.js';
import { runBenchmarks } from '../src/adapters/run.js';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { validateResults } from '../src/results/index.js';
import { ADAPTER_FIXTURES } from './support/adapter-tools.js';

const SCRIPT = join(ADAPTER_FIXTURES, 'command', 'fake_cutlass.py');
const REGEX = String.raw`^\s*(?<variant>[^:\n]+?):\s+(?<value>[0-9.]+) TFLOPS/s`;

/** A repository whose kernelgate.yml runs the script as benchmark `gemm_cutlass`. */
function repo(
  extra: { flags?: string; speed?: number; check?: boolean; json?: boolean; repeat?: number } = {},
) {
  const root = mkdtempSync(join(tmpdir(), 'kg-command-'));
  cpSync(SCRIPT, join(root, 'bench', 'fake_cutlass.py'));
  if (extra.speed !== undefined)
    writeFileSync(join(root, 'bench', 'speed.txt'), String(extra.speed));
  const metric = extra.json ? '{ json: time_ms, unit: ms }' : `{ regex: '${REGEX}', unit: tflops }`;
  writeFileSync(
    join(root, 'kernelgate.yml'),
    `benchmarks:
  - name: gemm_cutlass
    format: command
    cwd: bench
    variants:
      cutlass: python3 fake_cutlass.py --m={M} --n={N} --k={K} ${extra.flags ?? ''}
    cases:
      - { M: 4096, N: 4096, K: 4096 }
      - { M: 8192, N: 8192, K: 1024 }
    repeat: ${extra.repeat ?? 6}
    metric: ${metric}
${extra.check === false ? '' : "    check: { regex: 'Disposition: Passed' }\n"}    work: { flops: "2*M*N*K", bytes: "2*(M*K + K*N + M*N)" }
`,
  );
  return root;
}

async function bench(root: string, baseRoot?: string) {
  const config = loadConfig(root);
  const results = await runBenchmarks(config.benchmarks, {
    root,
    ...(baseRoot !== undefined ? { baseRoot } : {}),
  });
  return { config, results: validateResults(results, 'command results') };
}

describe('the command adapter, running a CUTLASS-like example', () => {
  it('one case per printed configuration, one sample per run, rates turned into times by the work', async () => {
    const { config, results } = await bench(repo());
    expect(results.cases.map((c) => `${c.variant} ${c.case} ${c.status}`)).toEqual([
      'cutlass:tma ws cooperative 128x64x64 M=4096,N=4096,K=4096 ok',
      'cutlass:tma ws ping-pong 128x64x64 M=4096,N=4096,K=4096 ok',
      'cutlass:tma ws cooperative 128x64x64 M=8192,N=8192,K=1024 ok',
      'cutlass:tma ws ping-pong 128x64x64 M=8192,N=8192,K=1024 ok',
    ]);
    const c = results.cases[0];
    expect(c?.timing?.samples_ms).toHaveLength(6);
    // 2·4096³ FLOPs at about 400 TFLOPS
    expect(c?.timing?.median_ms).toBeCloseTo(((2 * 4096 ** 3) / 400e12) * 1e3, 2);
    expect(c?.work).toEqual({
      flops: 2 * 4096 ** 3,
      bytes: 2 * 3 * 4096 ** 2,
      note: "kernelgate.yml's work formulas",
    });
    expect(c?.correctness).toMatchObject({
      status: 'PASS',
      oracle: "the benchmark's own check (its output matched /Disposition: Passed/)",
      message: "all 6 runs passed the benchmark's own check",
    });
    expect(results.kernels[0]?.adapter).toEqual({
      format: 'command',
      samples: 'raw',
      work: true,
      correctness: 'self_check',
      paired: false,
    });
    const { comparison } = judge(results, undefined, config, 'pr');
    expect(comparison.cases.map((x) => x.correctness)).toEqual(['PASS', 'PASS', 'PASS', 'PASS']);
  }, 300_000);

  it('reads a JSON line instead; without a check no case is PASS', async () => {
    const { config, results } = await bench(repo({ flags: '--json', json: true, check: false }));
    expect(results.cases.map((c) => c.variant)).toEqual(['cutlass', 'cutlass']);
    expect(results.cases[0]?.timing?.median_ms).toBeCloseTo(((2 * 4096 ** 3) / 400e12) * 1e3, 2);
    const { comparison } = judge(results, undefined, config, 'pr');
    expect(comparison.cases[0]?.correctness).toBe('UNCHECKED');
    expect(comparison.cases[0]?.correctnessReason).toBe(
      'not verified: command checks no results, so this case cannot PASS',
    );
  }, 300_000);

  it("the benchmark's own check failing is a correctness FAIL that fails the gate", async () => {
    const { config, results } = await bench(repo({ flags: '--wrong' }));
    expect(results.cases[0]).toMatchObject({
      status: 'fail',
      reason: "the benchmark's own check failed: its output did not match /Disposition: Passed/",
    });
    const { verdict } = judge(results, undefined, config, 'pr');
    expect(verdict.verdict).toBe('fail');
    expect(verdict.reasons[0]).toBe(
      "gemm_cutlass/cutlass M=4096,N=4096,K=4096: correctness FAIL: the benchmark's own check failed: its output did not match /Disposition: Passed/",
    );
  }, 300_000);

  it('a head 25 % slower than its base, run alternately (ABBA), is SLOWER by its pairs', async () => {
    // 10 runs per arm: 5 ABBA blocks, the fewest an interval is drawn from
    const head = repo({ speed: 1.25, repeat: 10 });
    const base = repo({ repeat: 10 });
    const { config, results } = await bench(head, base);
    expect(results.run.paired_base).toEqual({ root: base, order: 'ABBA' });
    const c = results.cases[0];
    expect(c?.paired?.base_status).toBe('ok');
    expect(c?.paired?.n_pairs).toBe(10);
    expect(c?.paired?.log_ratios).toHaveLength(5);
    const { comparison } = judge(results, undefined, config, 'pr');
    for (const x of comparison.cases) {
      expect(x.method).toBe('paired');
      expect(x.perf).toBe('SLOWER');
      expect(x.ratio).toBeGreaterThan(1.2);
    }
  }, 300_000);

  it('the same code on both sides (A/A) is never SLOWER or FASTER', async () => {
    const { config, results } = await bench(repo({ repeat: 10 }), repo({ repeat: 10 }));
    const { comparison } = judge(results, undefined, config, 'pr');
    for (const x of comparison.cases) {
      expect(x.method).toBe('paired');
      expect(['SAME', 'AMBIGUOUS']).toContain(x.perf);
    }
  }, 300_000);
});

describe('the command adapter, what goes wrong', () => {
  const spec = {
    variants: { v: 'run {n}' },
    cases: [{ n: 1 }],
    repeat: 3,
    metric: { regex: /time: ([0-9.]+) ms/m, unit: 'ms' as const },
    timeoutS: 1,
    workFor: () => ({}),
  };
  const scripted =
    (answer: Awaited<ReturnType<CommandRunner>>): CommandRunner =>
    async () =>
      answer;

  it.each([
    [
      'a crash',
      { exitCode: 139, output: 'starting\nSegmentation fault', timedOut: false },
      {
        status: 'error',
        reason: 'run 1: exit status 139 (128 + 11: SIGSEGV)',
        error: {
          kind: 'command',
          message: 'run 1: exit status 139 (128 + 11: SIGSEGV)',
          log_tail: 'starting\nSegmentation fault',
        },
      },
    ],
    [
      'a death by a signal',
      { exitCode: null, signal: 'SIGABRT', output: 'terminate called', timedOut: false },
      { status: 'error', reason: 'run 1: killed by signal SIGABRT' },
    ],
    [
      'a time of zero',
      { exitCode: 0, output: 'time: 0 ms', timedOut: false },
      {
        status: 'error',
        reason: 'run 1: it printed a time of 0 ms: a time must be above zero to be timed',
      },
    ],
    [
      'an exit status a program chose',
      { exitCode: 3, output: 'boom', timedOut: false },
      { status: 'error', reason: 'run 1: exit status 3' },
    ],
    [
      'a timeout',
      { exitCode: null, output: '', timedOut: true },
      { status: 'timeout', reason: 'run 1: exceeded 1 s' },
    ],
    [
      'no reading in the output',
      { exitCode: 0, output: 'elapsed 1.5 ms', timedOut: false },
      { status: 'error', reason: 'run 1: no /time: ([0-9.]+) ms/ in its output' },
    ],
  ])('%s is one case of that status with its reason', async (_what, answer, expected) => {
    const ran = await runCommands('k', spec, { cwd: '.', runner: scripted(answer) });
    expect(ran.cases[0]?.result).toMatchObject(expected);
  });

  it('a real timeout kills the command', async () => {
    const started = Date.now();
    const ran = await runCommands(
      'k',
      { ...spec, variants: { v: 'sleep 30; echo time: 1 ms' }, repeat: 1, timeoutS: 0.5 },
      { cwd: tmpdir() },
    );
    expect(ran.cases[0]?.result.status).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a real command that dies of a signal is named by it, as a shell reports it too', async () => {
    const run = (command: string) =>
      runCommands('k', { ...spec, variants: { v: command }, repeat: 1 }, { cwd: tmpdir() });
    // bash runs `kill` itself, so the signal ends bash: Node sees no exit status, only the signal
    const died = await run('echo time: 1 ms; kill -ABRT $$');
    expect(died.cases[0]?.result.reason).toBe(
      'echo time: 1 ms; kill -ABRT $$: killed by signal SIGABRT',
    );
    // a child the signal killed, reported by the shell that waited for it
    const reported = await run("bash -c 'kill -ABRT $$'; exit $?");
    expect(reported.cases[0]?.result.reason).toBe(
      "bash -c 'kill -ABRT $$'; exit $?: exit status 134 (128 + 6: SIGABRT)",
    );
  });

  it('placeholders are filled as quoted shell words; {{ }} are braces', () => {
    expect(
      fillTemplate("bench --name={name} --case={case} | awk '{{print $1}}'", { name: "it's 2" }),
    ).toBe("bench --name='it'\\''s 2' --case='name=it'\\''s 2' | awk '{print $1}'");
  });

  it('several readings in one run: the run is their median', () => {
    expect(readMetric('time: 3 ms\ntime: 1 ms\ntime: 2 ms\n', spec.metric)).toEqual(
      new Map([['', [3, 1, 2]]]),
    );
  });
});
