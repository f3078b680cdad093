// The command format: any program that prints a time or a rate, run per variant and case from
// kernelgate.yml (variants, cases, repeat, metric, check). Data only: what it is and can give, for
// the list of formats; running it and reading its output is src/adapters/command.ts.
import type { AdapterCapabilities, CommandEntry } from './types.js';

const COMMAND_CAPABILITIES: AdapterCapabilities = {
  samples: 'raw',
  work: 'config',
  correctness: 'self_check',
  paired: true,
  notes: {
    samples: 'one per run (the median of the readings that run printed)',
    work: '`work` formulas; a rate metric (tflops, gflops, gbps) becomes a time through them',
    correctness:
      '`check.regex`: every run\'s output must match or the case FAILS (the benchmark\'s own check, e.g. "Disposition: Passed" of CUTLASS\'s GEMM examples, example 88\'s " [OK] " lines); without it none',
    paired:
      "yes: on a pull request in the action (and `kernelgate bench --base-root`), the base checkout's same folder runs alternately (ABBA blocks) and the case gets `paired` (below)",
  },
};

/** The command format's entry in the list (index.ts): it runs, it parses no file. */
export const commandAdapter: CommandEntry<'command'> = {
  kind: 'command',
  format: 'command',
  title: 'any command (regex or JSON line)',
  produce: 'any program: `variants`, `cases`, `repeat`, `metric`, `check` in `kernelgate.yml`',
  capabilities: COMMAND_CAPABILITIES,
};
