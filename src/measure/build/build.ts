// The build stage: compiles each CUDA variant into a shared library with nvcc (or the user's
// command), records what the compiler really produced (embedded architectures, per-function
// resources from `ptxas -v`, a SASS opcode census from cuobjdump) and checks it against the
// manifest's `expect`, so a wrong flag is caught here instead of as a slow or crashing run.
// Each variant: compile → inspect → check expectations → cache (variant.ts).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BuildRecord, Diagnostic } from '../../results/index.js';
import { countsText, MATH_OPCODES } from './expectations.js';
import { findCuobjdump, findNvcc, type Tool } from './tools.js';
import {
  DEFAULT_CACHE_DIR,
  type BuildDeps,
  type BuildOutcome,
  type BuildTarget,
  type VariantBuild,
} from './types.js';
import { buildVariant } from './variant.js';

/**
 * nvcc (its `--version` is the toolkit's identity in every cache key) and a lookup of cuobjdump
 * that runs on the first variant that needs it: a build whose variants are all cached runs no
 * inspection tool. Each missing tool is a diagnostic.
 */
async function findTools(deps: BuildDeps, diagnostics: Diagnostic[], log: (line: string) => void) {
  const env = deps.env ?? process.env;
  const nvcc: Tool | undefined = await findNvcc(deps.exec, env);
  if (!nvcc) {
    diagnostics.push({
      level: 'error',
      code: 'build.nvcc_not_found',
      message:
        'nvcc not found on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin: CUDA variants cannot be built.',
      fix: 'Install the CUDA toolkit (13.0 for sm_90a) or set CUDA_HOME to it.',
      source: 'build',
    });
  }
  let cuobjdump: Promise<Tool | undefined> | undefined;
  const lookup = async () => {
    const tool = await findCuobjdump(deps.exec, env, deps.python ?? 'python3');
    if (!tool) {
      diagnostics.push({
        level: 'warning',
        code: 'build.cuobjdump_not_found',
        message:
          'cuobjdump not found on PATH, in $CUDA_HOME/bin or in the Triton wheel of the configured python: embedded architectures and the SASS census are not recorded, and the archs/sass/sass_absent expectations are not checked.',
        fix: 'Install the CUDA toolkit, set CUDA_HOME, or install triton into the python kernelgate uses (its wheel carries cuobjdump).',
        source: 'build',
      });
    } else {
      log(`build: cuobjdump ${tool.path}`);
    }
    return tool;
  };
  return { nvcc, cuobjdump: () => (cuobjdump ??= lookup()) };
}

/** A variant whose build threw something unforeseen: failed, the others go on. */
function stoppedRecord(
  target: BuildTarget,
  variant: string,
  error: unknown,
  ms: number,
  diagnostics: Diagnostic[],
  log: (line: string) => void,
): BuildRecord {
  const label = `${target.kernel}/${variant}`;
  const reason = error instanceof Error ? error.message : String(error);
  log(`build ${label}: FAILED: ${reason}`);
  diagnostics.push({
    level: 'error',
    code: 'build.failed',
    message: `${label}: the build stopped: ${reason}`,
    source: 'build',
    kernel: target.kernel,
    variant,
  });
  return {
    kernel: target.kernel,
    variant,
    status: 'failed',
    duration_s: ms / 1000,
    log_tail: reason,
  };
}

/**
 * Builds every variant that has a `build` section, one after the other (nvcc uses the cores),
 * reusing cached libraries whose inputs are unchanged; a failing variant never stops the others.
 */
export async function buildKernels(
  targets: readonly BuildTarget[],
  deps: BuildDeps,
): Promise<BuildOutcome> {
  const log = deps.log ?? ((line: string) => console.log(line));
  const now = deps.now ?? Date.now;
  const cacheDir = path.resolve(deps.cacheDir ?? DEFAULT_CACHE_DIR);
  const records: BuildRecord[] = [];
  const diagnostics: Diagnostic[] = [];
  const jobs = targets.flatMap((t) =>
    t.variants
      .filter((v) => v.build !== undefined)
      .map((v) => ({ target: t, name: v.name, build: v.build as VariantBuild })),
  );
  const tools = jobs.length > 0 ? await findTools(deps, diagnostics, log) : undefined;
  for (const job of jobs) {
    const context = {
      exec: deps.exec,
      cacheDir,
      nvcc: tools?.nvcc,
      cuobjdump: tools?.cuobjdump ?? (async () => undefined),
      log,
      now,
      diagnostics,
    };
    const started = now();
    try {
      const record = await buildVariant(job.target, job.name, job.build, context);
      if (record.status !== 'failed')
        log(`build ${job.target.kernel}/${job.name}: ${summary(record)}`);
      records.push(record);
    } catch (error) {
      // A file system or tool surprise in one variant must not cost the others their build.
      records.push(stoppedRecord(job.target, job.name, error, now() - started, diagnostics, log));
    }
  }
  await mkdir(cacheDir, { recursive: true });
  const buildsJsonPath = path.join(cacheDir, 'builds.json');
  await writeFile(buildsJsonPath, `${JSON.stringify(records, null, 2)}\n`);
  return { records, diagnostics, buildsJsonPath };
}

function summary(record: BuildRecord): string {
  const parts: string[] = [
    record.cached ? `cached (${record.hash})` : `built in ${(record.duration_s ?? 0).toFixed(1)} s`,
  ];
  if (record.archs)
    parts.push(
      `sass ${record.archs.sass?.join(',') || 'none'}${record.archs.ptx?.length ? `, ptx ${record.archs.ptx.join(',')}` : ''}`,
    );
  if (record.sass_census) {
    const math = countsText(record.sass_census, MATH_OPCODES);
    if (math) parts.push(math);
  }
  const functions = record.functions ?? [];
  if (functions.length > 0) {
    parts.push(`max ${Math.max(...functions.map((f) => f.registers ?? 0))} registers`);
    const spilled = functions.reduce(
      (s, f) => s + (f.spill_store_bytes ?? 0) + (f.spill_load_bytes ?? 0),
      0,
    );
    parts.push(`${spilled} bytes spilled`);
  }
  const failedChecks = (record.expectations ?? []).filter((e) => !e.ok).length;
  if (failedChecks > 0)
    parts.push(`${failedChecks} expectation${failedChecks === 1 ? '' : 's'} FAILED`);
  return parts.join('; ');
}
