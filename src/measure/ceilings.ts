// The ceilings of a pull request's run from a stored run (issue 27): when the calibration kernel
// (the repository's kernels/gemm) is identical in base and head, every variant of it named by
// --identical, the copy and GEMM ceilings a stored run of the same GPU model measured stand in for
// the harness's calibration (8.5 s of run 87's 131 s on the H100); the results say so
// (environment.ceilings.source, python/kernelgate_harness/calibration.py read_ceilings).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Environment } from '../results/index.js';
import type { BalanceSource } from './balance.js';

/** The kernel whose cases are the ceilings (python/kernelgate_harness/calibration.py). */
export const CALIBRATION_KERNEL = 'gemm';

/** The kernel.variant names a harness argument list's `--identical` gives. */
function identicalNames(args: string[]): Set<string> {
  const at = args.indexOf('--identical');
  return new Set(at >= 0 ? (args[at + 1] ?? '').split(',').filter(Boolean) : []);
}

/**
 * `--ceilings FILE` (written to `<outDir>/ceilings.json`) when the repository's calibration kernel
 * is wholly identical in base and head and `source` is a stored run of this GPU model that measured
 * both ceilings; else [] and, where a stored run was there to use, the log says why not.
 */
export function storedCeilingsArgs(
  config: Config,
  identical: string[],
  environment: Environment,
  source: BalanceSource | undefined,
  outDir: string,
  log: { info(line: string): void },
): string[] {
  const gemm = config.kernels.find((k) => k.manifest.name === CALIBRATION_KERNEL);
  const named = identicalNames(identical);
  if (!gemm || !gemm.manifest.variants.every((v) => named.has(`${gemm.manifest.name}.${v.name}`))) {
    return [];
  }
  if (source === undefined) return [];
  const notTaken = (why: string) => {
    log.info(`kernelgate: ceilings: measured in this run, not taken from ${source.label}: ${why}`);
    return [];
  };
  const sku = environment.gpu.sku;
  const stored = source.results.environment;
  if (sku === undefined || stored.gpu.sku !== sku) {
    return notTaken(
      `its GPU model (${stored.gpu.sku ?? 'unknown'}) is not this run's (${sku ?? 'unknown'})`,
    );
  }
  const ceilings = stored.ceilings;
  if (!ceilings?.copy_gbps || !ceilings.gemm_tflops || !Object.keys(ceilings.gemm_tflops).length) {
    return notTaken('it has no measured copy and GEMM ceilings');
  }
  const file = join(outDir, 'ceilings.json');
  const from = `${source.label}, ${source.results.run.started_at}`;
  const body = { copy_gbps: ceilings.copy_gbps, gemm_tflops: ceilings.gemm_tflops, source: from };
  writeFileSync(file, JSON.stringify(body, null, 2) + '\n');
  log.info(
    `kernelgate: ceilings: from ${from}: the calibration kernel (${CALIBRATION_KERNEL}) is identical in base and head, so it is not run again`,
  );
  return ['--ceilings', file];
}
