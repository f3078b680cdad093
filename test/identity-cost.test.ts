// What identity skipping saved (issue 27, "the cost is shown"): the report's time line prices the
// variant-cases that were SAME by identity on the stored run, with the seconds their timing took
// in it (paired.seconds in a paired document, the samples' sum in an unpaired one), and says the
// saving is unknown without one. On the recorded attention pull request of run 61 (164 variant-
// cases skipped) against the recorded push of main (run 43, same H100 model, same 217 cases).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { compare, evaluateTiers, gate } from '../src/judge/index.js';
import { renderReport, stagesLine } from '../src/report/index.js';
import type { KernelgateResults } from '../src/results/index.js';
import { loadGz, ROOT } from './support/recorded.js';

const run61 = loadGz('one-variant-attention-h100-run61');
const STAGES =
  'GPU-seconds of each stage (137 s in all): doctor 2 s · build 0 s · base build 0 s · harness 135 s ' +
  '(environment 2 s, set-up 3 s, verify 62 s, base set-up 0 s, base verify 5 s, preparation 0 s, ' +
  'base preparation 0 s, timing 45 s, of it warm-ups 7 s, finish 3 s; ' +
  'by kernel: gemm 4 s, attention 113 s, bsr\\_gemm 6 s) · tails 5 s · calibration 7 s.';
const SKIPPED =
  ' Identity skipped the timing of 164 variant-cases (identical build and sources in base and head: verified, not timed), ';

/** The stored run without the records `drop` matches. */
const without = (doc: KernelgateResults, drop: (v: string) => boolean): KernelgateResults => ({
  ...doc,
  cases: doc.cases.filter((c) => !drop(c.variant)),
});

describe('what identity skipping saved', () => {
  it('is unknown without a stored run', () => {
    expect(stagesLine(run61)).toBe(
      `${STAGES}${SKIPPED}the GPU-seconds it saved unknown: no stored run to price it.`,
    );
  });

  it("is the skipped variant-cases' sampling in an unpaired stored run (push run 43 of main)", () => {
    const run43 = loadGz('push-h100-run43');
    expect(run43.run.git_sha).toBe('98ac3334150a3b16fabf856d6a665f9fecb3940c');
    expect(stagesLine(run61, run43)).toBe(
      `${STAGES}${SKIPPED}about 40 GPU-seconds of timing in the stored run of 98ac333 (one revision, unpaired).`,
    );
  });

  it("is the skipped variant-cases' paired.seconds in a paired stored run (A/A run 64)", () => {
    const run64 = loadGz('paired-aa-h100-run64');
    expect(stagesLine(run61, run64)).toBe(
      `${STAGES}${SKIPPED}about 120 GPU-seconds of timing in the stored run of 0000000.`,
    );
  });

  it('counts the skipped variant-cases the stored run did not time, and prices none of none', () => {
    const run43 = loadGz('push-h100-run43');
    // drop cuBLAS's records from run 43: run 61 skipped its gemm cases
    const lacking = without(run43, (v) => v === 'cublas');
    const n = run61.cases.filter((c) => c.variant === 'cublas' && c.identical).length;
    expect(n).toBeGreaterThan(0);
    expect(stagesLine(run61, lacking)).toMatch(
      new RegExp(`of 98ac333 \\(one revision, unpaired; ${n} of them not timed in it\\)\\.$`),
    );
    const none = without(run43, () => true);
    expect(stagesLine(run61, none)).toBe(
      `${STAGES}${SKIPPED}none of them timed in the stored run of 98ac333 to price it.`,
    );
  });

  it("does not price it on another GPU's stored run (push run 46, H200)", () => {
    expect(stagesLine(run61, loadGz('push-h200x2-run46'))).toBe(
      `${STAGES}${SKIPPED}the GPU-seconds it saved unknown: the stored run is of another GPU (H200).`,
    );
  });

  it('the report says it, priced on the baseline it was given', () => {
    const config = loadConfig(ROOT);
    const baseline = loadGz('push-h100-run43');
    const comparison = compare(run61, baseline, config);
    const tiers = evaluateTiers(run61, config);
    const { full } = renderReport({
      kind: 'pr',
      results: run61,
      baseline,
      config,
      comparison,
      tiers,
      gate: gate(comparison, tiers, run61, config),
    });
    expect(full).toContain(
      `${SKIPPED}about 40 GPU-seconds of timing in the stored run of 98ac333 (one revision, unpaired).`,
    );
  });
});

describe('where the A/A control was timed (run.time_control: headline)', () => {
  it('says the control was timed on the headline case and beside the confirmations only', () => {
    const doc = structuredClone(run61);
    const headline = 'dtype=fp16,B=16,H=96,S=4096,D=128,causal=false';
    const controls = doc.cases.filter(
      (c) => c.variant === 'sdpa_default' && c.params.S === 4096 && c.case !== headline,
    );
    expect(controls).toHaveLength(7);
    // six left untimed, one timed beside the confirmation of its case
    for (const c of controls.slice(0, 6)) {
      delete c.timing;
      delete c.paired;
      c.identical = {
        reason: 'identical build and sources',
        verified: 'first_seed',
        control: true,
      };
    }
    controls[6]!.paired!.timed_in = 'confirmation';
    const line = stagesLine(doc);
    expect(line).toContain(' Identity skipped the timing of 170 variant-cases ');
    expect(
      line.endsWith(
        ' The A/A control attention/sdpa\\_default was timed on the headline case and beside 1 confirmation, not in 6 other cases (`run.time_control: headline`).',
      ),
    ).toBe(true);
    // the run as recorded (every case's control timed) says nothing of it
    expect(stagesLine(run61)).not.toContain('A/A control');
  });
});

describe('references that differ in the harness alone', () => {
  it('are counted among the skipped variant-cases, and the line says so', () => {
    const doc = structuredClone(run61);
    const flash = doc.cases.filter((c) => c.variant === 'sdpa_flash' && c.identical !== undefined);
    expect(flash.length).toBeGreaterThan(0);
    for (const c of flash) {
      c.identical!.reason =
        "a reference whose only difference is the harness, which its kernel's A/A control measures";
    }
    expect(stagesLine(doc)).toContain(
      ' Identity skipped the timing of 164 variant-cases (identical build and sources in base and head, or references that differ in the harness alone: verified, not timed), ',
    );
  });
});
