// Why it moved (issue 33): the evidence beside each moved variant, base against head, and the one
// line naming its likeliest cause. The runs are recorded H100 runs (test/fixtures/recorded,
// test/fixtures/deep); where a test needs a build, a tuning or a verdict no recording has, it is a
// TEST INPUT, edited into a copy and named so in the test: never presented as measured.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { profileWanted } from '../src/action/deep.js';
import { readProfileInputs } from '../src/action/inputs.js';
import type { EventContext } from '../src/action/trust.js';
import { loadConfig } from '../src/config/index.js';
import { movedTargets, NO_BASE, runDeep } from '../src/deep/index.js';
import {
  compare,
  type CaseComparison,
  NOTHING_DIFFERS,
  PROFILE_MIN_CHANGE,
  whyItMoved,
} from '../src/judge/index.js';
import { scriptedExec } from '../src/lib/index.js';
import { judge } from '../src/pipeline/index.js';
import type { KernelgateResults, NcuRun } from '../src/results/index.js';
import { whyLine } from '../src/report/why.js';
import { loadGz, ROOT } from './support/recorded.js';

const config = loadConfig(ROOT);
/** A paired pull request on the H100 with a planted 2 % slowdown of triton_fa2 in the head's harness. */
const RUN = 'paired-slow2-h100-run25';
const FA2 = 'attention/cuda_fa2';
const HEADLINE = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';

/** The recorded run with its own builds as the base's (the planted fault changed no build). */
function recorded(): KernelgateResults {
  const doc = structuredClone(loadGz(RUN));
  doc.base_builds = structuredClone(doc.builds);
  return doc;
}

const record = (builds: KernelgateResults['builds'], variant: string) =>
  builds!.find((b) => `${b.kernel}/${b.variant}` === variant)!;

/** TEST INPUT: the verdict of one cuda_fa2 case set to SLOWER +31 % (no recording has one). */
function cudaSlower(doc: KernelgateResults): CaseComparison[] {
  const cases = compare(doc, undefined, config).cases;
  const c = cases.find((x) => x.key === `${FA2}/${HEADLINE}`)!;
  Object.assign(c, { perf: 'SLOWER', ratio: 1.31 });
  return cases;
}

const only = (doc: KernelgateResults, cases: CaseComparison[], variant: string) =>
  whyItMoved(cases, doc, undefined).filter((w) => `${w.kernel}/${w.variant}` === variant);

describe('the cause named from the build, base against head', () => {
  it('the recorded planted slowdown: nothing built, no tuning, and the line says so', () => {
    const doc = recorded();
    const j = judge(doc, undefined, config, 'pr');
    expect(j.rendered.comment).toContain(
      '### Why it moved\n\n- 🔴 **attention/triton\\_fa2** SLOWER on 26 cases, up to +56.0 %: nothing built ahead of the run and no tuning to compare: the change is in the code path or the machine\n',
    );
    // Nothing to show beneath it: no fold with a title over nothing (the README's first screen).
    expect(j.rendered.comment).not.toContain('The evidence: what was built');
    expect(j.rendered.comment).toContain(
      'the change is in the code path or the machine\n\n### Headline\n',
    );
  });

  it('spills 0 → 96 bytes when the head spills (TEST INPUT: one function of the head spills)', () => {
    const doc = recorded();
    const fn = record(doc.builds, FA2).functions![0]!;
    Object.assign(fn, { spill_store_bytes: 48, spill_load_bytes: 48 });
    const [w] = only(doc, cudaSlower(doc), FA2);
    expect(w!.build.resources).toEqual([
      { resource: 'spills', function: fn.name, arch: 'sm_90a', from: 0, to: 96 },
    ]);
    expect(whyLine(w!)).toBe(
      '- 🔴 **attention/cuda\\_fa2** SLOWER on 1 case, up to +31.0 %: spills 0 → 96 bytes',
    );
  });

  it('registers 254 → 255, and the spills first when both moved (TEST INPUT: the head build edited)', () => {
    const doc = recorded();
    const fns = record(doc.builds, FA2).functions!;
    // As recorded: the most registers any of cuda_fa2's functions uses is 254.
    expect(Math.max(...fns.map((f) => f.registers!))).toBe(254);
    fns[0]!.registers = 255;
    expect(only(doc, cudaSlower(doc), FA2)[0]!.cause).toBe('registers 254 → 255');
    const fn = fns[0]!;
    fn.spill_store_bytes = 8;
    expect(only(doc, cudaSlower(doc), FA2)[0]!.cause).toBe('spills 0 → 8 bytes');
  });

  it("a function renamed only by nvcc's translation-unit hash is the same function (TEST INPUT: the head renamed, one more register)", () => {
    // A helper added to a shared header changes the hash in every anonymous-namespace name of the
    // kernels that include it (H100 run 133): compared by name, each function read "absent" on
    // one side and new on the other.
    const doc = recorded();
    const fns = record(doc.builds, FA2).functions!;
    const before = fns[0]!.name;
    expect(before).toMatch(/^_ZN38_GLOBAL__N__3cb9ee6e_6_fa2_cu_/);
    for (const f of fns) f.name = f.name.replace('3cb9ee6e', '0badc0de');
    fns[0]!.registers = 255;
    const [w] = only(doc, cudaSlower(doc), FA2);
    expect(w!.build.resources).toEqual([
      { resource: 'registers', function: fns[0]!.name, arch: 'sm_90a', from: 253, to: 255 },
    ]);
    expect(w!.cause).toBe('registers 254 → 255');
  });

  it('the SASS census when no resource moved (TEST INPUT: local loads in the head census)', () => {
    const doc = recorded();
    record(doc.builds, FA2).sass_census!.LDL = 24;
    record(doc.builds, FA2).sass_census!.STL = 16;
    expect(only(doc, cudaSlower(doc), FA2)[0]!.cause).toBe('SASS LDL 0 → 24, STL 0 → 16');
  });

  it('says the build and tuning are identical when they are, and invents nothing', () => {
    const doc = recorded();
    const [w] = only(doc, cudaSlower(doc), FA2);
    expect(w!.build.state).toBe('compared');
    expect(w!.cause).toBe(NOTHING_DIFFERS);
    expect(whyLine(w!)).toBe(
      '- 🔴 **attention/cuda\\_fa2** SLOWER on 1 case, up to +31.0 %: build and tuning identical: the change is in the code path or the machine',
    );
  });

  it('a run without the base build says it cannot compare', () => {
    const doc = recorded();
    delete doc.base_builds;
    const [w] = only(doc, cudaSlower(doc), FA2);
    expect(w!.baseBuildFrom).toBe('none');
    expect(w!.cause).toBe('no base build record to compare');
  });

  it('a wrong result is explained where the build changed, and only there', () => {
    const doc = recorded();
    const cases = compare(doc, undefined, config).cases;
    // TEST INPUT: a cuda_fa2 case judged wrong.
    cases.find((x) => x.key === `${FA2}/${HEADLINE}`)!.correctness = 'FAIL';
    expect(only(doc, cases, FA2)).toEqual([]);
    record(doc.builds, FA2).functions![0]!.registers = 255; // TEST INPUT
    expect(whyLine(only(doc, cases, FA2)[0]!)).toBe(
      '- ❌ **attention/cuda\\_fa2** wrong on 1 case: registers 254 → 255',
    );
  });
});

describe('the tuned configuration, base arm against head arm', () => {
  it("names the tuning the arms launched (TEST INPUT: the arms' tunings of every fa2 case)", () => {
    const doc = recorded();
    const fa2 = doc.cases.filter((c) => c.variant === 'triton_fa2' && c.paired);
    for (const c of fa2) {
      c.tuning = { config: [128, 128, 8, 2] };
      c.paired!.base_tuning = { config: [128, 128, 8, 2] };
    }
    const moved = fa2.find((c) => c.case === 'dtype=fp16,B=2,H=3,S=77,D=64,causal=true')!;
    moved.paired!.base_tuning = { config: [128, 128, 8, 3] };
    const j = judge(doc, undefined, config, 'pr');
    expect(j.rendered.comment).toContain(
      '- 🔴 **attention/triton\\_fa2** SLOWER on 26 cases, up to +56.0 %: tuning \\[128,128,8,3\\] → \\[128,128,8,2\\] on 1 of 26 cases\n',
    );
    expect(j.rendered.full).toContain(
      '| tuning, dtype=fp16,B=2,H=3,S=77,D=64,causal=true | \\[128,128,8,3\\] | \\[128,128,8,2\\] | changed |',
    );
    moved.paired!.base_tuning = { config: [128, 128, 8, 2] };
    expect(judge(doc, undefined, config, 'pr').rendered.comment).toContain(
      '- 🔴 **attention/triton\\_fa2** SLOWER on 26 cases, up to +56.0 %: tuning identical, nothing built ahead of the run to compare: the change is in the code path or the machine\n',
    );
  });
});

describe('Nsight Compute, base against head', () => {
  const deep17 = JSON.parse(
    readFileSync(join(ROOT, 'test/fixtures/deep/ncu-results.json'), 'utf8'),
  ) as KernelgateResults;
  const deep22 = JSON.parse(
    readFileSync(join(ROOT, 'test/fixtures/deep/deep22/ncu-results.json'), 'utf8'),
  ) as KernelgateResults;
  const fa2Of = (d: KernelgateResults) =>
    structuredClone(d.deep!.ncu!.find((n) => n.variant === 'triton_fa2')!);

  /** The recorded run judged with a comparison of these two profiles of triton_fa2's headline case. */
  function withProfiles(base: NcuRun, head: NcuRun) {
    const doc = recorded();
    doc.deep = {
      ncu_compare: [
        { kernel: 'attention', variant: 'triton_fa2', case: HEADLINE, ratio: 1.026, base, head },
      ],
    };
    return judge(doc, undefined, config, 'pr').rendered;
  }

  it('two recordings of the same code a day apart (deep17, deep22) differ under the threshold: shown, no cause', () => {
    const r = withProfiles(fa2Of(deep17), fa2Of(deep22));
    expect(PROFILE_MIN_CHANGE).toBe(0.05);
    expect(r.comment).toContain(
      '- 🔴 **attention/triton\\_fa2** SLOWER on 26 cases, up to +56.0 %: nothing built ahead of the run and no tuning to compare: the change is in the code path or the machine\n',
    );
    expect(r.comment).toContain('| ncu duration ms | 32.168 | 31.887 | −0.281 |');
    expect(r.comment).toContain('| ncu DRAM throughput % | 6.0 | 6.0 | |');
    expect(r.comment).toContain('| ncu top stalls | barrier, wait, mio\\_throttle |');
  });

  it('a metric that moved past it is named (TEST INPUT: the head DRAM throughput raised to 7.9 %)', () => {
    const head = fa2Of(deep22);
    head.metrics!.dram_throughput_pct = 7.9;
    expect(withProfiles(fa2Of(deep17), head).comment).toContain(
      'the change is in the code path or the machine; Nsight Compute: DRAM throughput 6.0 → 7.9 % of peak (+32 %)\n',
    );
  });

  it('a side that was not profiled says why in the table', () => {
    const head = fa2Of(deep22);
    const base: NcuRun = {
      ...head,
      status: 'skipped',
      message: 'the time box (120 s) ran out before it',
    };
    delete base.metrics;
    expect(withProfiles(base, head).comment).toContain(
      '| Nsight Compute | the time box (120 s) ran out before it | profiled | |',
    );
  });
});

describe('ncu-compare: what it profiles and where', () => {
  const target = (variant: string, caseId: string, ratio: number) => ({
    kernel: 'attention',
    variant,
    caseId,
    params: {},
    ratio,
  });

  it("each moved variant's largest change either way, the largest first", () => {
    expect(
      movedTargets([
        target('a', 'small', 1.1),
        target('b', 'x', 0.7),
        target('a', 'big', 1.3),
        target('a', 'faster', 0.8),
      ]).map((t) => [t.variant, t.caseId]),
    ).toEqual([
      ['b', 'x'],
      ['a', 'big'],
    ]);
  });

  const dir = mkdtempSync(join(tmpdir(), 'kg-why-'));
  const options = {
    workspace: ROOT,
    harnessRoot: ROOT,
    python: 'python3',
    kernelsDir: 'kernels',
    outDir: dir,
    checks: ['ncu-compare' as const],
    compare: [{ ...target('triton_fa2', HEADLINE, 1.3), params: { dtype: 'fp16' } }],
    env: { PATH: '' },
  };

  it('without ncu: one line, and the run goes on', async () => {
    const exec = scriptedExec([]);
    const out = await runDeep(config, options, exec);
    expect(exec.calls).toEqual([]);
    expect(out.diagnostics.map((d) => [d.level, d.message])).toEqual([
      [
        'warning',
        'ncu was not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin: the Nsight Compute summaries did not run',
      ],
    ]);
  });

  it('without a base checkout (an unpaired run): said once, nothing profiled', async () => {
    const exec = scriptedExec([]);
    const out = await runDeep(config, { ...options, ncuPath: '/bin/sh' }, exec);
    expect(exec.calls).toEqual([]);
    expect(out.diagnostics).toEqual([NO_BASE]);
  });

  it("profiles the head in the workspace and the base in its checkout, with the base's builds", async () => {
    const exec = scriptedExec([]);
    const base = { root: '/tmp/base', kernelsDir: '/tmp/base/kernels', buildsPath: '/tmp/b.json' };
    const out = await runDeep(
      config,
      { ...options, ncuPath: '/bin/sh', base, buildsPath: '/tmp/h.json' },
      exec,
    );
    expect(exec.calls).toHaveLength(2);
    expect(exec.calls[0]).toContain(`--export ${dir}/compare/head/ncu/attention-triton_fa2 `);
    expect(exec.calls[0]).toContain('--kernels kernels --kernel attention --variant triton_fa2');
    expect(exec.calls[0]).toContain('--builds /tmp/h.json');
    expect(exec.options[0]?.cwd).toBe(ROOT);
    expect(exec.calls[1]).toContain(`--export ${dir}/compare/base/ncu/attention-triton_fa2 `);
    expect(exec.calls[1]).toContain('--kernels /tmp/base/kernels --kernel attention');
    expect(exec.calls[1]).toContain('--builds /tmp/b.json');
    expect(exec.options[1]?.cwd).toBe('/tmp/base');
    const [c] = out.deep.ncu_compare!;
    expect([c!.variant, c!.case, c!.ratio, c!.head.status, c!.base.status]).toEqual([
      'triton_fa2',
      HEADLINE,
      1.3,
      'error',
      'error',
    ]);
  });
});

describe('when the action compares profiles', () => {
  const inputs = (profile: 'auto' | 'true' | 'false') => ({ profile }) as never;
  const event = (labels: string[]): EventContext =>
    ({ payload: { pull_request: { labels: labels.map((name) => ({ name })) } } }) as never;

  it('on by default in the nightly, on a pull request by the label, or by the input', () => {
    expect(profileWanted(inputs('auto'), event([]), 'schedule')).toBe(true);
    expect(profileWanted(inputs('auto'), event([]), 'pr')).toBe(false);
    expect(profileWanted(inputs('auto'), event(['kernelgate-profile']), 'pr')).toBe(true);
    expect(profileWanted(inputs('true'), event([]), 'pr')).toBe(true);
    expect(profileWanted(inputs('false'), event(['kernelgate-profile']), 'schedule')).toBe(false);
  });

  it('reads its inputs, 120 s by default, and names a bad value', () => {
    const get = (values: Record<string, string>) => (name: string) => values[name] ?? '';
    expect(readProfileInputs(get({}))).toEqual({ profile: 'auto', profileTimeBoxS: 120 });
    expect(readProfileInputs(get({ 'profile-time-box': '45' })).profileTimeBoxS).toBe(45);
    expect(() => readProfileInputs(get({ profile: 'yes' }))).toThrow(
      "Input 'profile' must be one of auto, true, false; got 'yes'.",
    );
    expect(() => readProfileInputs(get({ 'profile-time-box': '-3' }))).toThrow(
      "Input 'profile-time-box' must be a number of seconds greater than 0, got '-3'.",
    );
  });
});
