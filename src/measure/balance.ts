// --balance for the harness's lanes (issue 27): on more than one GPU the harness's lanes take the
// cases from one queue, longest first by what each took in an earlier run of this GPU model
// (python/kernelgate_harness/lanes.py); without one, by its estimate. This passes the stored run's
// results when there is one and says in the log which source balanced the lanes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment, KernelgateResults } from '../results/index.js';

/** The stored run of this GPU model whose timings balance the lanes, and how the log names it. */
export interface BalanceSource {
  results: KernelgateResults;
  label: string;
}

/**
 * How many lanes the harness will run: its `--gpus` argument (all, N, or positions i,j), of the
 * devices CUDA_VISIBLE_DEVICES leaves visible, else the doctor's count of GPUs.
 */
export function lanesOf(
  environment: Environment,
  args: string[],
  env: Record<string, string | undefined>,
): number {
  const named = (env.CUDA_VISIBLE_DEVICES ?? '').split(',').filter((x) => x.trim() !== '');
  const visible =
    env.CUDA_VISIBLE_DEVICES !== undefined ? named.length : (environment.gpu.count ?? 1);
  const at = args.lastIndexOf('--gpus');
  const spec = at >= 0 ? (args[at + 1] ?? 'all').trim() : 'all';
  if (spec === 'all') return visible;
  if (/^\d+$/.test(spec)) return Math.min(Number(spec), visible);
  return spec.split(',').filter((x) => x.trim() !== '').length;
}

/**
 * The harness's `--balance FILE` when it runs on more than one GPU and a stored run of this GPU
 * model exists (written to `<outDir>/balance.json`), and the log line that says what balanced the
 * lanes; nothing on one GPU.
 */
export function balanceArgs(
  gpus: number,
  source: BalanceSource | undefined,
  outDir: string,
  /** whether the caller looked for a stored run at all (measure without options.balance) */
  lookedUp = true,
): { args: string[]; line?: string } {
  if (gpus <= 1) return { args: [] };
  if (!lookedUp) {
    return {
      args: [],
      line: `kernelgate: ${gpus} GPUs: this run looks up no stored run, so the harness balances its lanes by its estimate`,
    };
  }
  if (source === undefined) {
    return {
      args: [],
      line:
        `kernelgate: ${gpus} GPUs: no stored run of this GPU model, so the harness balances ` +
        'its lanes by its estimate (each variant at the time cap, plus the overhead)',
    };
  }
  const path = join(outDir, 'balance.json');
  writeFileSync(path, JSON.stringify({ cases: source.results.cases }) + '\n');
  return {
    args: ['--balance', path],
    line:
      `kernelgate: ${gpus} GPUs: the harness balances its lanes by what each case took in ` +
      `${source.label} (--balance ${path})`,
  };
}

/**
 * `--balance FILE` for a run about to start (measure.ts): the lanes counted from the harness's
 * arguments (kernelgate.yml's `harness.args` and the rest), the stored run asked of `lookup` only
 * when there are several; the line said in the log.
 */
export async function lanesBalance(
  lookup: ((environment: Environment) => Promise<BalanceSource | undefined>) | undefined,
  environment: Environment,
  args: string[],
  outDir: string,
  log: { info(line: string): void },
  env: Record<string, string | undefined> = process.env,
): Promise<string[]> {
  const gpus = lanesOf(environment, args, env);
  const source = gpus > 1 && lookup ? await lookup(environment) : undefined;
  const { args: balance, line } = balanceArgs(gpus, source, outDir, lookup !== undefined);
  if (line !== undefined) log.info(line);
  return balance;
}
