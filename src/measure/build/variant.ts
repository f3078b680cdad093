// One variant's build: prepare (sources, flags) → cache key → compile (nvcc or the user's command)
// → inspect (ptxas resources, SASS, names) → store in the cache → check the expectations. A step
// that cannot go on throws BuildFailure; the variant is then recorded as failed, with its log.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Exec } from '../../lib/index.js';
import type { BuildRecord, Diagnostic } from '../../results/index.js';
import { diagnoseOutput } from '../diagnose.js';
import {
  exists,
  missReason,
  sourceClosure,
  storedEntry,
  type CacheInputs,
  type StoredBuild,
} from './cache.js';
import { checkExpectations, compiledFromGenericPtx } from './expectations.js';
import { libraryFingerprint } from './fingerprint.js';
import {
  parsePtxasInfo,
  parsePtxasPerformanceNotes,
  parseSass,
  performanceDiagnostics,
  trimLog,
  type SassFunction,
} from './inspect.js';
import { demangle, type Tool } from './tools.js';
import {
  CACHE_FORMAT,
  DEFAULT_NVCC_FLAGS,
  HASH_CHARS,
  type BuildTarget,
  type VariantBuild,
} from './types.js';

export interface VariantContext {
  exec: Exec;
  cacheDir: string;
  nvcc: Tool | undefined;
  /** Looked for on the first variant that needs it (a compile, an entry without SASS), once. */
  cuobjdump: () => Promise<Tool | undefined>;
  log: (line: string) => void;
  now: () => number;
  diagnostics: Diagnostic[];
}

/** A build step that cannot go on: the message and the compiler's log, if any. */
class BuildFailure extends Error {
  constructor(
    message: string,
    readonly logText = '',
  ) {
    super(message);
  }
}

/** What every step of one variant's build knows. */
interface Job {
  target: BuildTarget;
  variant: string;
  build: VariantBuild;
  label: string;
  kernelDir: string;
  flags: string[];
  libs: string[];
  sources: string[];
  ctx: VariantContext;
  /** Adds a diagnostic about this variant. */
  report: (d: Diagnostic) => void;
}

function jobOf(
  target: BuildTarget,
  variant: string,
  build: VariantBuild,
  ctx: VariantContext,
): Job {
  const kernelDir = path.resolve(target.dir);
  return {
    target,
    variant,
    build,
    label: `${target.kernel}/${variant}`,
    kernelDir,
    flags:
      build.command !== undefined && build.flags === undefined
        ? []
        : [...(build.flags ?? DEFAULT_NVCC_FLAGS)],
    libs: build.libs ?? [],
    sources: (build.sources ?? []).map((s) => path.resolve(kernelDir, s)),
    ctx,
    report: (d) => ctx.diagnostics.push({ ...d, kernel: target.kernel, variant }),
  };
}

/** Sources present and a compiler to run; a warning for flags that compile arch paths out. */
async function prepare(job: Job): Promise<void> {
  const { build, sources, label } = job;
  if (!build.sources?.length && build.command === undefined) {
    throw new BuildFailure('build needs `sources` (compiled with nvcc) or a `command`.');
  }
  for (const [i, source] of sources.entries()) {
    if (!(await exists(source))) {
      throw new BuildFailure(
        `build.sources[${i}] "${build.sources?.[i]}" not found (looked for ${source}).`,
      );
    }
  }
  if (build.command === undefined && !job.ctx.nvcc) {
    throw new BuildFailure('nvcc not found; see build.nvcc_not_found.');
  }
  const generic = compiledFromGenericPtx(job.flags);
  if (generic) {
    job.report({
      level: 'warning',
      code: 'build.generic_ptx_for_arch_specific',
      message: `${label}: arch=${generic.virtual},code=${generic.real} makes ${generic.real} machine code from ${generic.virtual} PTX, so __CUDA_ARCH_FEAT_SM90_ALL is undefined and arch-specific paths (wgmma, setmaxnreg) are compiled out; CUTLASS kernels then abort with "Arch conditional MMA instruction used without targeting appropriate compute capability".`,
      fix: `Use -gencode=arch=${generic.virtual}a,code=${generic.real}.`,
      source: 'build',
    });
  }
}

/**
 * The cache entry of this variant's inputs: the sources and local headers, flags, toolkit. Only
 * files are read here; no tool runs (the toolkit's identity is the run's one `nvcc --version`).
 */
async function cacheEntry(job: Job) {
  const { target, variant, build, kernelDir, flags, libs, ctx } = job;
  const files = await sourceClosure(job.sources, kernelDir, flags);
  const inputs: CacheInputs = {
    format: CACHE_FORMAT,
    flags,
    libs,
    command: build.command ?? null,
    toolkit: ctx.nvcc?.version ?? null,
    files: {},
  };
  const hasher = createHash('sha256');
  hasher.update(
    JSON.stringify({
      format: inputs.format,
      kernel: target.kernel,
      variant,
      flags,
      libs,
      command: inputs.command,
      toolkit: inputs.toolkit,
    }),
  );
  for (const file of files) {
    const bytes = await readFile(file);
    hasher.update(`\0${path.relative(kernelDir, file)}\0`);
    hasher.update(bytes);
    inputs.files[path.relative(kernelDir, file)] = createHash('sha256').update(bytes).digest('hex');
  }
  const hash = hasher.digest('hex').slice(0, HASH_CHARS);
  const outDir = path.join(ctx.cacheDir, target.kernel, variant, hash);
  return {
    hash,
    inputs,
    outDir,
    library: path.join(outDir, `lib${target.kernel}_${variant}.so`),
    recordFile: path.join(outDir, 'record.json'),
  };
}

function compileCommand(job: Job, library: string) {
  const { build, ctx, label, kernelDir, flags, libs, sources } = job;
  if (build.command !== undefined) {
    ctx.log(`build ${label}: running ${build.command}`);
    return ctx.exec.run('bash', ['-c', build.command], {
      cwd: kernelDir,
      env: {
        KG_OUT_LIB: library,
        KG_KERNEL_DIR: kernelDir,
        KG_NVCC: ctx.nvcc?.path ?? 'nvcc',
        KG_FLAGS: flags.join(' '),
      },
    });
  }
  const linkLibs = libs.map((l) => `-l${l}`);
  const args = ['-shared', '-Xcompiler', '-fPIC', '-O3', ...flags, '-Xptxas', '-v'];
  ctx.log(
    `build ${label}: nvcc ${[...flags, ...linkLibs].join(' ')} (${sources.length} source${sources.length === 1 ? '' : 's'})`,
  );
  return ctx.exec.run(ctx.nvcc?.path ?? 'nvcc', [...args, '-o', library, ...sources, ...linkLibs], {
    cwd: kernelDir,
  });
}

/** Compiles into `tmpDir`; the compiler's log, or BuildFailure (and tmpDir removed). */
async function compile(job: Job, tmpDir: string, tmpLibrary: string): Promise<string> {
  await rm(tmpDir, { recursive: true, force: true });
  await mkdir(tmpDir, { recursive: true });
  const out = await compileCommand(job, tmpLibrary);
  const logText = `${out.stdout}${out.stderr}`;
  if (out.exitCode !== 0) {
    await rm(tmpDir, { recursive: true, force: true });
    const firstError = logText
      .split(/\r?\n/)
      .find((l) => /error/i.test(l))
      ?.trim();
    throw new BuildFailure(
      `${job.build.command !== undefined ? 'build command' : 'nvcc'} exited with ${out.exitCode}${firstError ? `: ${firstError}` : ''}`,
      logText,
    );
  }
  if (!(await exists(tmpLibrary))) {
    await rm(tmpDir, { recursive: true, force: true });
    throw new BuildFailure(
      `the build command succeeded but did not write $KG_OUT_LIB (${tmpLibrary}).`,
      logText,
    );
  }
  return logText;
}

/** The SASS listing of the library, when cuobjdump is there and can read it. */
async function sassOf(job: Job, library: string, record: BuildRecord) {
  const { exec } = job.ctx;
  const cuobjdump = await job.ctx.cuobjdump();
  if (!cuobjdump) return undefined;
  const dump = await exec.run(cuobjdump.path, ['-sass', library]);
  if (dump.exitCode !== 0) {
    job.report({
      level: 'warning',
      code: 'build.cuobjdump_failed',
      message: `${job.label}: cuobjdump -sass exited with ${dump.exitCode}: ${trimLog(dump.stderr || dump.stdout)}`,
      fix: 'Use a cuobjdump from a toolkit at least as new as the one that built the library (set CUDA_HOME).',
      source: 'build',
    });
    return undefined;
  }
  const listing = parseSass(dump.stdout);
  record.archs = { sass: listing.sass, ptx: listing.ptx };
  record.sass_census = listing.census;
  return listing.functions;
}

/** What the compiler produced: resources, SASS, performance notes, readable names. */
async function inspect(
  job: Job,
  entry: { hash: string; library: string },
  tmpLibrary: string,
  logText: string,
): Promise<StoredBuild> {
  const record: BuildRecord = {
    kernel: job.target.kernel,
    variant: job.variant,
    status: 'ok',
    hash: entry.hash,
    library: entry.library,
    functions: parsePtxasInfo(logText),
  };
  const sassFunctions: SassFunction[] | undefined = await sassOf(job, tmpLibrary, record);
  const performanceNotes = parsePtxasPerformanceNotes(logText);
  const displayNames = await demangle(job.ctx.exec, [
    ...(record.functions ?? []).map((f) => f.name),
    ...(sassFunctions ?? []).map((f) => f.name),
    ...performanceNotes.map((n) => n.function),
  ]);
  return { record, flags: job.flags, sassFunctions, displayNames, performanceNotes };
}

/**
 * A cached entry made without cuobjdump has no SASS listing, so the archs/sass checks a build
 * makes today would be skipped on every hit: when cuobjdump is there now, the cached library is
 * read once and the entry completed (no compile).
 */
async function completed(
  job: Job,
  entry: { recordFile: string; library: string },
  stored: StoredBuild,
): Promise<StoredBuild> {
  if (stored.record.archs !== undefined) return stored;
  const sassFunctions = await sassOf(job, entry.library, stored.record);
  if (!sassFunctions) return stored;
  const names = await demangle(
    job.ctx.exec,
    sassFunctions.map((f) => f.name),
  );
  const done = { ...stored, sassFunctions, displayNames: { ...stored.displayNames, ...names } };
  job.ctx.log(`build ${job.label}: cached entry had no SASS listing; read it with cuobjdump`);
  await writeFile(`${entry.recordFile}.tmp-${process.pid}`, `${JSON.stringify(done, null, 2)}\n`);
  await rename(`${entry.recordFile}.tmp-${process.pid}`, entry.recordFile);
  return done;
}

/**
 * The stored build of these inputs: from the cache (decided from the inputs' hash alone: no tool
 * runs on a hit), else compiled, inspected and stored, after a line that says why.
 */
async function builtOrCached(job: Job, started: number) {
  const entry = await cacheEntry(job);
  const hit = await storedEntry(entry);
  if (hit) return { stored: await completed(job, entry, hit), cached: true };
  await job.ctx.cuobjdump(); // its line before the first compile's
  const reason = await missReason(path.dirname(entry.outDir), entry.hash, entry.inputs);
  job.ctx.log(`build ${job.label}: not cached: ${reason}`);
  const tmpDir = `${entry.outDir}.tmp-${process.pid}`;
  const tmpLibrary = path.join(tmpDir, path.basename(entry.library));
  const logText = await compile(job, tmpDir, tmpLibrary);
  const stored = await inspect(job, entry, tmpLibrary, logText);
  stored.inputs = entry.inputs;
  stored.record.duration_s = (job.ctx.now() - started) / 1000;
  await writeFile(path.join(tmpDir, 'build.log'), logText);
  await writeFile(path.join(tmpDir, 'record.json'), `${JSON.stringify(stored, null, 2)}\n`);
  await rm(entry.outDir, { recursive: true, force: true });
  await rename(tmpDir, entry.outDir);
  return { stored, cached: false };
}

/** The stored build against the manifest's `expect`, and ptxas's performance notes. */
function checked(job: Job, stored: StoredBuild, cached: boolean, started: number): BuildRecord {
  const record: BuildRecord = {
    ...stored.record,
    cached,
    duration_s: (job.ctx.now() - started) / 1000,
  };
  delete record.expectations;
  const listing =
    record.archs && record.sass_census
      ? {
          sass: record.archs.sass ?? [],
          ptx: record.archs.ptx ?? [],
          census: record.sass_census,
          functions: stored.sassFunctions ?? [],
        }
      : undefined;
  const displayNames = stored.displayNames ?? {};
  const result = checkExpectations(job.label, job.build.expect ?? {}, {
    functions: record.functions ?? [],
    listing,
    flags: stored.flags,
    displayNames,
  });
  if (result.expectations.length > 0) record.expectations = result.expectations;
  for (const d of result.diagnostics) job.report(d);
  const notes = stored.performanceNotes ?? [];
  for (const d of performanceDiagnostics(job.label, notes, displayNames)) job.report(d);
  record.status = result.expectations.some((e) => !e.ok) ? 'expectation_failed' : 'ok';
  return record;
}

function failedRecord(job: Job, failure: BuildFailure, started: number): BuildRecord {
  const { target, variant, label, ctx } = job;
  ctx.log(`build ${label}: FAILED: ${failure.message}`);
  job.report({
    level: 'error',
    code: 'build.failed',
    message: `${label}: ${failure.message}`,
    source: 'build',
  });
  for (const d of diagnoseOutput(failure.logText, {
    source: 'build',
    kernel: target.kernel,
    variant,
  }))
    ctx.diagnostics.push(d);
  const record: BuildRecord = {
    kernel: target.kernel,
    variant,
    status: 'failed',
    duration_s: (ctx.now() - started) / 1000,
  };
  if (failure.logText.trim() !== '') record.log_tail = trimLog(failure.logText);
  return record;
}

/** Builds one variant (or takes it from the cache) and checks what was built. */
export async function buildVariant(
  target: BuildTarget,
  variant: string,
  build: VariantBuild,
  ctx: VariantContext,
): Promise<BuildRecord> {
  const started = ctx.now();
  const job = jobOf(target, variant, build, ctx);
  try {
    await prepare(job);
    const { stored, cached } = await builtOrCached(job, started);
    const record = checked(job, stored, cached, started);
    // The library's loaded sections, device and host code: base and head built alike
    // (docs/judging.md, libraryFingerprint).
    if (record.library !== undefined)
      record.library_sha256 = libraryFingerprint(await readFile(record.library));
    return record;
  } catch (error) {
    if (error instanceof BuildFailure) return failedRecord(job, error, started);
    throw error;
  }
}
