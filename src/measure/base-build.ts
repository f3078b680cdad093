// The builds of a paired run: the targets of a configuration, the base revision's build from its own
// kernelgate.yml, and the harness's paired A/B options.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config } from '../config/index.js';
import type { BuildRecord } from '../results/index.js';
import type { BaseRevision } from './base-revision.js';
import { buildKernels, type BuildTarget, type VariantBuild } from './build/index.js';
import type { MeasureDeps, MeasureOptions } from './measure.js';

export function buildTargets(config: Config, only?: string[]): BuildTarget[] {
  return config.kernels
    .filter((k) => only === undefined || only.length === 0 || only.includes(k.manifest.name))
    .map((k) => ({
      kernel: k.manifest.name,
      dir: k.dir,
      variants: k.manifest.variants.map((v) => ({
        name: v.name,
        ...(v.build !== undefined ? { build: v.build as VariantBuild } : {}),
      })),
    }));
}

export interface PairedArgs {
  base: BaseRevision;
  kernelsDir: string;
  buildsPath: string;
  /** the base revision's configuration and build records (identity.ts) */
  config: Config;
  records: BuildRecord[];
}

/**
 * Builds the base revision's CUDA variants from its own kernelgate.yml (the build cache is keyed by
 * content, so code unchanged since main's last build is a cache hit). A base that cannot be read
 * is a note, and the run goes on unpaired.
 */
export async function buildBase(
  base: BaseRevision,
  options: MeasureOptions,
  config: Config,
  cacheDir: string,
  outDir: string,
  deps: MeasureDeps,
  notes: string[],
): Promise<PairedArgs | undefined> {
  let baseConfig: Config;
  try {
    baseConfig = loadConfig(base.root);
  } catch (error) {
    notes.push(
      `The base revision ${base.sha.slice(0, 12)} has no usable kernelgate configuration (${(error as Error).message}): ` +
        'its cases are judged against the stored baseline instead of paired.',
    );
    return undefined;
  }
  const build = await buildKernels(buildTargets(baseConfig, options.only), {
    exec: deps.exec,
    cacheDir,
    python: config.harness.python,
    log: (line) => deps.log.info(`base: ${line}`),
    ...(deps.now !== undefined ? { now: deps.now } : {}),
  });
  const buildsPath = join(outDir, 'base-builds.json');
  copyFileSync(build.buildsJsonPath, buildsPath);
  const failed = build.records.filter((r) => r.status !== 'ok');
  for (const r of failed) {
    deps.log.info(
      `base: ${r.kernel}/${r.variant} did not build (${r.status}): its cases are not paired`,
    );
  }
  return {
    base,
    kernelsDir: join(base.root, baseConfig.kernelsDir),
    buildsPath,
    config: baseConfig,
    records: build.records,
  };
}

/** The harness's paired A/B options (python/kernelgate_harness/cli.py, "paired A/B"). */
export function pairedArgs(
  paired: Pick<PairedArgs, 'base' | 'kernelsDir' | 'buildsPath'>,
  config: Config,
): string[] {
  const args = [
    '--base-root',
    paired.base.root,
    '--base-kernels',
    paired.kernelsDir,
    '--base-builds',
    paired.buildsPath,
    '--base-sha',
    paired.base.sha,
    '--paired-threshold-pct',
    String(config.compare.paired.thresholdPct),
    '--paired-min-change-ms',
    String(config.compare.paired.minChangeMs),
  ];
  if (paired.base.ref !== undefined) args.push('--base-ref', paired.base.ref);
  if (config.compare.paired.confirm) args.push('--paired-confirm');
  if (config.compare.paired.detectPct > 0) {
    args.push(
      '--paired-detect-pct',
      String(config.compare.paired.detectPct),
      '--paired-detect-min-ms',
      String(config.compare.paired.detectMinMs),
    );
  }
  return args;
}
