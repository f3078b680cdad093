// Why it moved, the Triton side (issue 33): the tuned configuration of base and head and the kernel
// each compiled to (cases[].tuning.compiled, paired.base_tuning.compiled), named in the one line as
// the CUDA build diff names its cause (one rule: resourceCause, src/judge/why-compiled.ts).
// The run is the recorded H100 pull request paired-slow2-h100-run25 (triton_fa2 SLOWER on 26
// cases). Its harness recorded no tuning and no compiled kernel: every tuning and compiled kernel
// below is a TEST INPUT edited into a copy. The tilings are those of the planted re-tune of
// nightly-retune-h100-run41 on the D128 cases (its planted.txt: [128,128,8,3] -> [128,64,8,3]);
// their figures are triton_fa2 compiled for sm_90 on the CPU with Triton 3.6.0, as
// test/python/test_compiled.py compiles and asserts them, not measured on a GPU.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import type { KernelgateResults, Tuning } from '../src/results/index.js';
import { loadGz, ROOT } from './support/recorded.js';

const config = loadConfig(ROOT);
const LINE = '- 🔴 **attention/triton\\_fa2** SLOWER on 26 cases, up to +56.0 %: ';

type Compiled = NonNullable<Tuning['compiled']>;
/** triton_fa2 D128 (128, 128, 8, 3) for sm_90: 255 registers, 664 bytes of local memory. */
const CHOSEN: Compiled = {
  name: '_attn_fwd',
  n_regs: 255,
  n_spills: 166,
  shared_bytes: 98304,
  num_warps: 8,
  num_stages: 3,
  source: 'cubin',
};
/** triton_fa2 D128 (128, 64, 8, 3) for sm_90: the runner-up, no local memory. */
const RUNNER_UP: Compiled = { ...CHOSEN, n_spills: 0, shared_bytes: 65536 };

/** The recorded run with these tunings on every paired triton_fa2 case (TEST INPUT). */
function withTunings(base: Tuning, head: Tuning): KernelgateResults {
  const doc = structuredClone(loadGz('paired-slow2-h100-run25'));
  const fa2 = doc.cases.filter((c) => c.variant === 'triton_fa2' && c.paired);
  expect(fa2).toHaveLength(26);
  for (const c of fa2) {
    c.tuning = structuredClone(head);
    c.paired!.base_tuning = structuredClone(base);
  }
  return doc;
}

const commentOf = (doc: KernelgateResults) => judge(doc, undefined, config, 'pr').rendered;

describe("a Triton variant's compiled kernel, base against head", () => {
  it("a re-tune names both tilings and what the compiled kernel's resources did", () => {
    const doc = withTunings(
      { config: [128, 128, 8, 3], compiled: CHOSEN },
      { config: [128, 64, 8, 3], compiled: RUNNER_UP },
    );
    const r = commentOf(doc);
    expect(r.comment).toContain(
      `${LINE}tuning \\[128,128,8,3\\] → \\[128,64,8,3\\], compiled kernel spills 664 → 0 bytes\n`,
    );
    // The evidence folded: both kernels' figures, side by side.
    expect(r.full).toContain('| registers (n\\_regs) | 255 | 255 | |');
    expect(r.full).toContain('| local memory bytes (n\\_spills × 4) | 664 | 0 | −664 |');
    expect(r.full).toContain('| shared memory bytes | 98304 | 65536 | −32768 |');
    expect(r.full).toContain('| warps | 8 | 8 | |');
    expect(r.full).toContain('| stages | 3 | 3 | |');
  });

  it('the same tiling compiled to a kernel that spills: the spills first, the tuning identical', () => {
    const spilling: Compiled = { ...RUNNER_UP, n_spills: 24 };
    const doc = withTunings(
      { config: [128, 64, 8, 3], compiled: RUNNER_UP },
      { config: [128, 64, 8, 3], compiled: spilling },
    );
    expect(commentOf(doc).comment).toContain(
      `${LINE}compiled kernel spills 0 → 96 bytes; tuning identical\n`,
    );
  });

  it('registers, then shared memory, then warps, when the spills did not move', () => {
    const base = { config: [128, 64, 8, 3], compiled: RUNNER_UP };
    const line = (head: Compiled) =>
      commentOf(withTunings(base, { config: [128, 64, 8, 3], compiled: head })).comment;
    expect(line({ ...RUNNER_UP, n_regs: 232 })).toContain(
      `${LINE}compiled kernel registers 255 → 232; tuning identical\n`,
    );
    expect(line({ ...RUNNER_UP, shared_bytes: 81920 })).toContain(
      `${LINE}compiled kernel shared memory 65536 → 81920 bytes; tuning identical\n`,
    );
    expect(line({ ...RUNNER_UP, num_warps: 12 })).toContain(
      `${LINE}compiled kernel warps 8 → 12; tuning identical\n`,
    );
  });

  it('identical tuning and kernels: says so with the figures, and invents no cause', () => {
    const same = { config: [128, 64, 8, 3], compiled: RUNNER_UP };
    expect(commentOf(withTunings(same, same)).comment).toContain(
      `${LINE}tuning and compiled kernel identical (registers 255, spills 0 bytes, shared memory 65536 bytes): the change is in the code path or the machine\n`,
    );
  });

  it('a base recorded by an older harness (no compiled kernel): no crash, says what is missing', () => {
    const head = { config: [128, 64, 8, 3], compiled: RUNNER_UP };
    const same = commentOf(withTunings({ config: [128, 64, 8, 3] }, head));
    expect(same.comment).toContain(
      `${LINE}tuning identical; the base recorded no compiled-kernel metadata (an older harness or kernel module)\n`,
    );
    expect(same.full).toContain('| compiled kernel, ');
    expect(same.full).toMatch(/\| not recorded \| \\_attn\\_fwd \| \|/);
    expect(same.full).toContain('| registers (n\\_regs) | | 255 | |');
    const retuned = commentOf(withTunings({ config: [128, 128, 8, 3] }, head));
    expect(retuned.comment).toContain(
      `${LINE}tuning \\[128,128,8,3\\] → \\[128,64,8,3\\]; the base recorded no compiled-kernel metadata (an older harness or kernel module)\n`,
    );
  });

  it('neither side recorded a compiled kernel: the line reads as before', () => {
    const doc = withTunings({ config: [128, 64, 8, 3] }, { config: [128, 64, 8, 3] });
    expect(commentOf(doc).comment).toContain(
      `${LINE}tuning identical, nothing built ahead of the run to compare: the change is in the code path or the machine\n`,
    );
  });
});
