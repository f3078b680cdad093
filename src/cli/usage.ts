// The command line's one registry: every command's name, one-line summary, usage and the options
// its parseArgs takes (the same object). `kernelgate --help` is the overview made from it,
// `kernelgate <command> --help` that command's usage; test/cli-help.test.ts checks that each usage
// names exactly the options its command accepts, so the text cannot drift from the parser.
// Built on demand (a function, not a constant): the command modules import this folder's cli.ts.
import { adapterFormats, FILE_FORMATS, formatNames } from '../formats/index.js';
import { DASHBOARD_OPTIONS, DASHBOARD_USAGE } from './dashboard.js';
import { EXPORT_OPTIONS } from './export.js';
import { HISTORY_OPTIONS, HISTORY_USAGE } from './history.js';
import { MERGE_OPTIONS, MERGE_USAGE } from './merge.js';
import { ADAPT_OPTIONS, BENCH_OPTIONS } from './adapt.js';
import { CALIBRATE_OPTIONS } from './calibrate.js';
import { CHECK_OPTIONS } from './check.js';
import { DEEP_OPTIONS, DEEP_USAGE } from './deep.js';
import { BUILD_OPTIONS, DOCTOR_OPTIONS, RUN_OPTIONS } from './measure-commands.js';
import { REPORT_OPTIONS } from './report.js';

export interface CommandSpec {
  name: string;
  summary: string;
  usage: string;
  /** the options its parseArgs takes */
  options: Readonly<Record<string, unknown>>;
}

const REPORT_USAGE = `kernelgate report [--results FILE | --demo] [--baseline FILE] [--config DIR_OR_FILE]
                  [--kind pr|nightly [--history FILE]...] [--out FILE]
  --results FILE        results JSON (kernelgate/results@1; plain or gzipped), e.g. a run's
                        .kernelgate/report/results.json
  --demo                judge kernelgate's built-in recorded run (a paired pull request on the
                        H100) with kernelgate's own configuration; the default when no --results is
                        given in kernelgate's own checkout, refused without --results elsewhere
  --baseline FILE       baseline results JSON, plain or gzipped (default: none, every case NEW)
  --config DIR_OR_FILE  repository root holding kernelgate.yml and kernels/, or a kernelgate.yml
                        (default: the current directory)
  --kind pr|nightly     which report to render (default: pr); nightly prints the issue's body as
                        the action posts it
  --history FILE        (nightly, repeatable) an earlier night's results JSON of the same branch
                        and GPU: the issue's trends, as the action draws them from the store
  --out FILE            write the full Markdown report there, its folders made (default: standard
                        output)
`;

const RUN_USAGE = `kernelgate run [--config DIR_OR_FILE] [--only K1,K2] [--out-dir DIR] [--baseline FILE]
               [--baseline-dir DIR] [--branch NAME] [--base NAME] [--save-baseline]
               [--kind pr|nightly] [--out FILE] [--shard I/N [--shard-balance baseline|estimate]]
  checks the configuration first (as \`kernelgate check\`), then doctor, build, harness
  --only K1,K2          these kernels (or kernelgate.yml benchmarks) only; an unknown name is
                        refused before anything runs
  --out-dir DIR         results.json and harness.log (default: .kernelgate/report); a results.json
                        left there by an earlier run is removed before the harness starts
  --shard I/N           measure only shard I of N (balanced by the stored baseline's timings on
                        this GPU SKU, else by the cases' sizes: docs/scaling.md); writes the
                        shard's results for \`kernelgate merge\` and judges nothing
  --baseline-dir DIR    the baseline store (default: .kernelgate/baselines)
  --base NAME           judge as a pull request against branch NAME's newest stored results
  --base-sha SHA        time every case against this commit, pair by pair (paired A/B); with
                        --kind pr, variants identical in both are verified but not timed
                        (kernelgate.yml run.skip_identical; never with --save-baseline)
  --branch NAME         this run's branch; with --save-baseline, store the results as its newest
  --kind nightly        time this commit beside the newest good stored run of --branch on this
                        GPU model (paired A/B; a run whose gate failed or that found a case
                        SLOWER is never the base), else judge against the stored baseline
`;

const CHECK_USAGE = `kernelgate check [--config DIR_OR_FILE] [--no-python]
  checks kernelgate.yml and every kernels/*/kernel.yml without a GPU: the fields, the variants
  tiers and speed_reference name, a tolerance for every dtype the cases use, case keys and values,
  numbers written in quotes, tail shapes in ci_cases, and each kernel module imported by
  harness.python (its VARIANTS against the manifest's variants; skipped, and said, where python or
  a module's own imports such as torch are missing). Each problem: file:line, field, value, fix
  --no-python           do not import the kernel modules
  exit status: 1 when a problem is found (warnings do not count), 0 with a one-line summary
`;

const DOCTOR_USAGE = `kernelgate doctor [--config DIR_OR_FILE]
  exit status 1 when a finding is an error
`;

const BUILD_USAGE = `kernelgate build [--config DIR_OR_FILE] [--only K1,K2] [--cache-dir DIR]
  exit status 1 when a variant failed or missed an expectation
`;

const CALIBRATE_USAGE = `kernelgate calibrate RUN.json RUN.json [...] [--margin 2] [--floor-pct 3]
                     [--exclude KERNEL/VARIANT,...] [--provenance TEXT] [--write FILE]
  prints a compare.noise_pct block for kernelgate.yml, keyed by the runs' GPU model (runs of
  several models are refused): each case whose median moved more than --floor-pct between the
  runs gets margin × its spread; --write FILE replaces the per-case entries of that model's block
  in FILE's compare.noise_pct instead (its kernel- and variant-wide entries, other models' blocks
  are kept). Stored runs are results files too: BASELINE_DIR/BRANCH/MODEL/*.json of identical code
`;

const EXPORT_USAGE = `kernelgate export --results FILE --format bmf|gab-smaller|gab-bigger [--out FILE]
                  [--confidence 0.99] [--prefix NAME]
  bmf: Bencher Metric Format (latency in ns with the median's interval, throughput in FLOP/s);
  gab-smaller / gab-bigger: github-action-benchmark's customSmallerIsBetter (ms) and
  customBiggerIsBetter (TFLOP/s, GB/s for copies) JSON; one benchmark per timed, correct case
`;

const ADAPT_USAGE = `kernelgate adapt --format FORMAT --input FILE [--kernel NAME] [--reference V1,V2] [--out FILE]
       kernelgate adapt --formats
  --format FORMAT       ${formatNames(FILE_FORMATS)}
  --kernel NAME         the kernel name its cases get (default: the format, - as _)
  --reference V1,V2     variants that are references, not candidates
  --out FILE            write the results there (default: standard output)
  --formats             print what each format gives and how to produce its output (Markdown)
`;

const BENCH_USAGE = `kernelgate bench [--config DIR_OR_FILE] [--only B1,B2] [--out-dir DIR] [--baseline FILE]
                 [--base-root DIR] [--base-sha SHA] [--doctor] [--kind pr|nightly] [--out FILE]
  runs kernelgate.yml's benchmarks: section (${adapterFormats().join(', ')})
  --out-dir DIR         results.json goes there (default: .kernelgate/report)
  --base-root DIR       a base revision's checkout: command benchmarks run there too, alternately
                        (ABBA), and are judged by their pairs
  --doctor              take the GPU and versions from the doctor (else from the tools' output)
`;

type Entry = [name: string, summary: string, spec: () => [string, CommandSpec['options']]];

/** Every command, in the order the overview lists them (usage and options read when asked). */
const TABLE: Entry[] = [
  [
    'report',
    'judge a results file against a baseline, render the report, print the verdict',
    () => [REPORT_USAGE, REPORT_OPTIONS],
  ],
  [
    'check',
    'check kernelgate.yml and every kernel.yml without a GPU; say what to fix',
    () => [CHECK_USAGE, CHECK_OPTIONS],
  ],
  [
    'run',
    'on a GPU machine: check, doctor, build, harness, then judge and report like `report`',
    () => [RUN_USAGE, RUN_OPTIONS],
  ],
  [
    'doctor',
    'check the GPU, driver, CUDA runtime and toolkit, libraries; say what to fix',
    () => [DOCTOR_USAGE, DOCTOR_OPTIONS],
  ],
  [
    'build',
    'build the CUDA variants and check what was built against each kernel.yml',
    () => [BUILD_USAGE, BUILD_OPTIONS],
  ],
  [
    'calibrate',
    'from A/A runs (same code, same GPU), the per-case noise for compare.noise_pct',
    () => [CALIBRATE_USAGE, CALIBRATE_OPTIONS],
  ],
  [
    'adapt',
    "turn another tool's benchmark output into a results file (docs/adapters.md)",
    () => [ADAPT_USAGE, ADAPT_OPTIONS],
  ],
  [
    'bench',
    "run kernelgate.yml's benchmarks (other tools'), then judge and report like `report`",
    () => [BENCH_USAGE, BENCH_OPTIONS],
  ],
  [
    'export',
    'write a results file as Bencher (BMF) or github-action-benchmark JSON',
    () => [EXPORT_USAGE, EXPORT_OPTIONS],
  ],
  [
    'dashboard',
    'the trend page (static HTML) from the data branch or from results files',
    () => [DASHBOARD_USAGE, DASHBOARD_OPTIONS],
  ],
  [
    'history',
    'import: move a baseline-dir store onto the data branch (docs/history.md)',
    () => [HISTORY_USAGE, HISTORY_OPTIONS],
  ],
  [
    'merge',
    "join the results of a split run's shards (run --shard i/n), then judge and report",
    () => [MERGE_USAGE, MERGE_OPTIONS],
  ],
  [
    'deep',
    'on a GPU machine: compute-sanitizer and Nsight Compute over the kernels (nightly)',
    () => [DEEP_USAGE, DEEP_OPTIONS],
  ],
];

/** Every command's spec, in the overview's order. */
export function commandSpecs(): CommandSpec[] {
  return TABLE.map(([name, summary, spec]) => {
    const [usage, options] = spec();
    return { name, summary, usage, options };
  });
}

const EXIT_STATUS = 'exit status: 0 the gate passed, 1 the gate failed, 2 bad usage or bad input\n';

/** `kernelgate --help`: the commands, one line each. */
export function overview(): string {
  const specs = commandSpecs();
  const width = Math.max(...specs.map((s) => s.name.length)) + 2;
  const lines = specs.map((s) => `  ${s.name.padEnd(width)}${s.summary}`);
  return [
    'usage: kernelgate <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    "`kernelgate <command> --help` prints that command's options.",
    EXIT_STATUS,
  ].join('\n');
}

/** `kernelgate <command> --help`: that command's usage alone; undefined for no such command. */
export function commandUsage(name: string): string | undefined {
  const spec = commandSpecs().find((s) => s.name === name);
  return spec && `usage: ${spec.usage}\n${EXIT_STATUS}`;
}
