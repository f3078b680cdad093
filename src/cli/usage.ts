// `kernelgate --help`.
import { DASHBOARD_USAGE, HISTORY_USAGE } from '../history/index.js';
import { MERGE_USAGE } from '../shard/index.js';
import { DEEP_USAGE } from './deep.js';

export const USAGE = `usage: kernelgate <command> [options]

commands:
  report   judge a results file against a baseline, render the report, print the verdict
  run      on a GPU machine: doctor, build, harness, then judge and report like \`report\`
  doctor   check the GPU, driver, CUDA runtime and toolkit, libraries; say what to fix
  build    build the CUDA variants and check what was built against each kernel.yml
  calibrate  from A/A runs (same code, same GPU), the per-case noise for compare.noise_pct
  adapt    turn another tool's benchmark output into a results file (docs/adapters.md)
  bench    run kernelgate.yml's benchmarks (other tools'), then judge and report like \`report\`
  export   write a results file as Bencher (BMF) or github-action-benchmark JSON
  dashboard  the trend page (static HTML) from the data branch or from results files
  history  import: move a baseline-dir store onto the data branch (docs/history.md)
  merge    join the results of a split run's shards (run --shard i/n), then judge and report
  deep     on a GPU machine: compute-sanitizer and Nsight Compute over the kernels (nightly)

kernelgate report [--results FILE] [--baseline FILE] [--config DIR_OR_FILE]
                  [--kind pr|nightly] [--out FILE]
  --results FILE        results JSON (kernelgate/results@1); default: the built-in recorded run
  --baseline FILE       baseline results JSON; default: the recorded baseline when --results is
                        not given, otherwise none (every case NEW)
  --config DIR_OR_FILE  repository root holding kernelgate.yml and kernels/, or a kernelgate.yml
                        (default: the current directory)
  --kind pr|nightly     which report to render (default: pr)
  --out FILE            write the full Markdown report there (default: standard output)

kernelgate run [--config DIR_OR_FILE] [--only K1,K2] [--out-dir DIR] [--baseline FILE]
               [--baseline-dir DIR] [--branch NAME] [--base NAME] [--save-baseline]
               [--kind pr|nightly] [--out FILE] [--shard I/N [--shard-balance baseline|estimate]]
  --out-dir DIR         results.json and harness.log (default: .kernelgate/report)
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

kernelgate doctor [--config DIR_OR_FILE]           exit status 1 when a finding is an error
kernelgate build [--config DIR_OR_FILE] [--only K1,K2] [--cache-dir DIR]
                                                    exit status 1 when a variant failed or missed
                                                    an expectation

kernelgate calibrate RUN.json RUN.json [...] [--margin 2] [--floor-pct 3]
                     [--exclude KERNEL/VARIANT,...] [--provenance TEXT] [--write FILE]
  prints a compare.noise_pct block for kernelgate.yml, keyed by the runs' GPU model (runs of
  several models are refused): each case whose median moved more than --floor-pct between the
  runs gets margin × its spread; --write FILE replaces the per-case entries of that model's block
  in FILE's compare.noise_pct instead (its kernel- and variant-wide entries, other models' blocks
  are kept). Stored runs are results files too: BASELINE_DIR/BRANCH/MODEL/*.json of identical code

kernelgate export --results FILE --format bmf|gab-smaller|gab-bigger [--out FILE]
                  [--confidence 0.99] [--prefix NAME]
  bmf: Bencher Metric Format (latency in ns with the median's interval, throughput in FLOP/s);
  gab-smaller / gab-bigger: github-action-benchmark's customSmallerIsBetter (ms) and
  customBiggerIsBetter (TFLOP/s, GB/s for copies) JSON; one benchmark per timed, correct case

${MERGE_USAGE}
${DEEP_USAGE}
${DASHBOARD_USAGE}
${HISTORY_USAGE}
kernelgate adapt --format FORMAT --input FILE [--kernel NAME] [--reference V1,V2] [--out FILE]
  --format FORMAT       gbench, pytest-benchmark or nvbench
  --kernel NAME         the kernel name its cases get (default: the format, - as _)
  --reference V1,V2     variants that are references, not candidates
  --out FILE            write the results there (default: standard output)

kernelgate bench [--config DIR_OR_FILE] [--only B1,B2] [--out-dir DIR] [--baseline FILE]
                 [--base-root DIR] [--base-sha SHA] [--doctor] [--kind pr|nightly] [--out FILE]
  runs kernelgate.yml's benchmarks: section (gbench, pytest-benchmark, nvbench, command)
  --out-dir DIR         results.json goes there (default: .kernelgate/report)
  --base-root DIR       a base revision's checkout: command benchmarks run there too, alternately
                        (ABBA), and are judged by their pairs
  --doctor              take the GPU and versions from the doctor (else from the tools' output)

exit status: 0 the gate passed, 1 the gate failed, 2 bad usage or bad input
`;
