// The build stage: compiles each CUDA variant into a shared library with nvcc (or the user's
// command), records what the compiler really produced (embedded architectures, per-function
// resources from `ptxas -v`, a SASS opcode census from cuobjdump) and checks it against the
// manifest's `expect`, so a wrong flag is caught here instead of as a slow or crashing run.
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { diagnoseOutput } from '../diagnose.js';
import { NOT_FOUND_EXIT_CODE, type Exec } from '../../lib/index.js';
import type { BuildRecord, Diagnostic } from '../../results/index.js';

/** The `expect` section of a variant's `build` (schema/kernel.schema.json#/definitions/Expect). */
export interface BuildExpect {
  archs?: string[];
  sass?: string[];
  sass_absent?: string[];
  spills?: number;
  stack_max?: number;
  smem_max?: number;
  registers_max?: number;
}

/** A variant's `build` section (schema/kernel.schema.json#/definitions/Build). */
export interface VariantBuild {
  sources?: string[];
  flags?: string[];
  libs?: string[];
  command?: string;
  expect?: BuildExpect;
}

/** What the build stage needs from one kernel manifest. */
export interface BuildTarget {
  /** Kernel name, e.g. `attention`. */
  kernel: string;
  /** The kernel's folder; sources are relative to it and commands run in it. */
  dir: string;
  variants: { name: string; build?: VariantBuild }[];
}

export interface BuildDeps {
  exec: Exec;
  /** Where libraries, records and builds.json go; default `.kernelgate/build`. */
  cacheDir?: string;
  /** Environment used to find tools (PATH is searched by exec; CUDA_HOME here). */
  env?: Record<string, string | undefined>;
  /** Python that can import triton, asked for the wheel's cuobjdump; default `python3`. */
  python?: string;
  /** One line per step and variant; default console.log. */
  log?: (line: string) => void;
  /** Milliseconds clock for durations; default Date.now. */
  now?: () => number;
}

export interface BuildOutcome {
  records: BuildRecord[];
  /** Tool problems, flag warnings, failed expectations and known compiler errors. */
  diagnostics: Diagnostic[];
  /** builds.json: the records, for the harness (which loads each `library`). */
  buildsJsonPath: string;
}

export const DEFAULT_CACHE_DIR = '.kernelgate/build';
export const DEFAULT_NVCC_FLAGS: readonly string[] = ['-gencode=arch=compute_90a,code=sm_90a'];
/** Bump when the record layout or the compile line changes, so old cache entries are not reused. */
const CACHE_FORMAT = 'kernelgate-build-1';
const LOG_TAIL_LINES = 30;
const LOG_TAIL_CHARS = 3000;
const HASH_CHARS = 16;

type FunctionResources = NonNullable<BuildRecord['functions']>[number];
type Expectation = NonNullable<BuildRecord['expectations']>[number];

/** A located tool: the path to run and what `--version` printed. */
export interface Tool {
  path: string;
  version: string;
}

async function probeTool(exec: Exec, candidate: string): Promise<Tool | undefined> {
  const out = await exec.run(candidate, ['--version']).catch(() => undefined);
  if (!out || out.exitCode === NOT_FOUND_EXIT_CODE || out.exitCode !== 0) return undefined;
  return { path: candidate, version: `${out.stdout}${out.stderr}`.trim() };
}

/** nvcc: PATH, then $CUDA_HOME/bin/nvcc, then /usr/local/cuda/bin/nvcc. */
export async function findNvcc(
  exec: Exec,
  env: Record<string, string | undefined>,
): Promise<Tool | undefined> {
  const candidates = ['nvcc'];
  if (env.CUDA_HOME) candidates.push(path.join(env.CUDA_HOME, 'bin', 'nvcc'));
  candidates.push('/usr/local/cuda/bin/nvcc');
  for (const candidate of candidates) {
    const tool = await probeTool(exec, candidate);
    if (tool) return tool;
  }
  return undefined;
}

/** cuobjdump: PATH, then $CUDA_HOME/bin, then the copy inside the Triton wheel of `python`. */
export async function findCuobjdump(
  exec: Exec,
  env: Record<string, string | undefined>,
  python: string,
): Promise<Tool | undefined> {
  const candidates = ['cuobjdump'];
  if (env.CUDA_HOME) candidates.push(path.join(env.CUDA_HOME, 'bin', 'cuobjdump'));
  for (const candidate of candidates) {
    const tool = await probeTool(exec, candidate);
    if (tool) return tool;
  }
  const triton = await exec
    .run(python, ['-c', 'import triton, os; print(os.path.dirname(triton.__file__))'])
    .catch(() => undefined);
  const tritonDir = triton?.exitCode === 0 ? triton.stdout.trim().split(/\r?\n/).pop() : undefined;
  if (!tritonDir) return undefined;
  return probeTool(exec, path.join(tritonDir, 'backends', 'nvidia', 'bin', 'cuobjdump'));
}

/** First line of `nvcc --version` that names the release, e.g. `release 13.0, V13.0.88`. */
export function toolkitRelease(nvccVersion: string): string | undefined {
  return /release (\d+\.\d+), V([\d.]+)/.exec(nvccVersion)?.[2];
}

/** Per-entry-function resources from `ptxas -v` output (as nvcc prints it with -Xptxas -v). */
export function parsePtxasInfo(log: string): FunctionResources[] {
  const functions: FunctionResources[] = [];
  let current: FunctionResources | undefined;
  let propertiesFor: string | undefined;
  for (const line of log.split(/\r?\n/)) {
    const entry = /Compiling entry function '([^']+)' for '([^']+)'/.exec(line);
    if (entry) {
      current = {
        name: entry[1] ?? '',
        arch: entry[2] ?? '',
        registers: 0,
        smem_bytes: 0,
        stack_bytes: 0,
      };
      current.spill_store_bytes = 0;
      current.spill_load_bytes = 0;
      functions.push(current);
      propertiesFor = undefined;
      continue;
    }
    const properties = /Function properties for (\S+)/.exec(line);
    if (properties) {
      propertiesFor = properties[1];
      continue;
    }
    const frame = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(
      line,
    );
    if (frame && current && propertiesFor === current.name) {
      current.stack_bytes = Number(frame[1]);
      current.spill_store_bytes = Number(frame[2]);
      current.spill_load_bytes = Number(frame[3]);
      continue;
    }
    const used = /Used (\d+) registers(.*)$/.exec(line);
    if (used && current) {
      current.registers = Number(used[1]);
      const rest = used[2] ?? '';
      const smem = /(\d+) bytes smem/.exec(rest);
      if (smem) current.smem_bytes = Number(smem[1]);
      const cmem = [...rest.matchAll(/(\d+) bytes cmem\[\d+\]/g)];
      if (cmem.length > 0) current.cmem_bytes = cmem.reduce((sum, m) => sum + Number(m[1]), 0);
    }
  }
  return functions;
}

/** One of ptxas's "Potential Performance Loss" notes (C7514 and kin), per function. */
export interface PtxasPerformanceNote {
  /** ptxas's message id, e.g. C7514. */
  id: string;
  /** What ptxas says, without the function, e.g. "wgmma.mma_async instructions are serialized due to …". */
  text: string;
  /** Mangled function name. */
  function: string;
}

/**
 * ptxas's performance-loss notes from `ptxas -v` output. The one that matters on Hopper is
 * C7514: every wgmma of the function waits for the one before, which takes the asynchrony
 * (and most of the speed) out of a wgmma kernel while the build still "succeeds".
 */
export function parsePtxasPerformanceNotes(log: string): PtxasPerformanceNote[] {
  const notes: PtxasPerformanceNote[] = [];
  for (const line of log.split(/\r?\n/)) {
    const m = /\((C\d+)\) Potential Performance Loss: (.*?)\s+in the function '([^']+)'/.exec(line);
    if (m)
      notes.push({ id: m[1] ?? '', text: (m[2] ?? '').replace(/\s+/g, ' '), function: m[3] ?? '' });
  }
  return notes;
}

/** One warning per variant for its ptxas performance notes, naming the functions hit. */
export function performanceDiagnostics(
  label: string,
  notes: readonly PtxasPerformanceNote[],
  displayNames: Record<string, string>,
): Diagnostic[] {
  const byText = new Map<string, { id: string; functions: string[] }>();
  for (const note of notes) {
    const entry = byText.get(note.text) ?? { id: note.id, functions: [] };
    const name = shortKernelName(displayNames[note.function] ?? note.function);
    if (!entry.functions.includes(name)) entry.functions.push(name);
    byText.set(note.text, entry);
  }
  return [...byText].map(([text, { id, functions }]) => {
    const wgmma = /wgmma/.test(text);
    const shown = functions.slice(0, 3).join(', ');
    const more = functions.length > 3 ? ` and ${functions.length - 3} more` : '';
    return {
      level: 'warning',
      code: wgmma ? 'build.wgmma_serialized' : 'build.ptxas_performance',
      message: `${label}: ptxas ${id}: ${text} (${functions.length} function${functions.length === 1 ? '' : 's'}: ${shown}${more})`,
      fix: wgmma
        ? 'ptxas makes each wgmma wait for the previous one. Usual causes: a branch around a wgmma inside the loop (peel the first or last iteration out of the loop, as kernels/attention/cuda/fa_wgmma.cu does), accumulator registers read before the wgmma.wait_group that retires them, or a call between a wgmma and its wait.'
        : 'Read the ptxas note in the build log and restructure the code it names.',
      source: 'build',
    } satisfies Diagnostic;
  });
}

export interface SassListing {
  /** Targets of the embedded cubins, e.g. sm_90a. */
  sass: string[];
  /** Targets of the embedded PTX, e.g. compute_90a. */
  ptx: string[];
  /** Opcode without modifiers (HMMA.16816.F32 counts as HMMA) to count, over all cubins. */
  census: Record<string, number>;
  /** Each function in each cubin, with its own census: a function can be embedded twice for one arch. */
  functions: SassFunction[];
}

export interface SassFunction {
  name: string;
  arch: string;
  census: Record<string, number>;
}

/**
 * Reads `cuobjdump -sass` output. Architectures come from each fatbin entry's `arch =` header,
 * not from `--list-elf` names: the cuobjdump 12.8 in the Triton wheel names an sm_90a cubin
 * `*.sm_90.cubin` while its header says `arch = sm_90a`.
 */
export function parseSass(listing: string): SassListing {
  const sass = new Set<string>();
  const ptx = new Set<string>();
  const census: Record<string, number> = {};
  const functions: SassFunction[] = [];
  let section: 'elf' | 'ptx' | undefined;
  let sectionArch = '';
  let current: SassFunction | undefined;
  for (const line of listing.split(/\r?\n/)) {
    if (/^Fatbin (elf|ptx) code:/.test(line)) {
      section = line.startsWith('Fatbin elf') ? 'elf' : 'ptx';
      sectionArch = '';
      current = undefined;
      continue;
    }
    const arch = /^arch = (sm_\w+)/.exec(line);
    if (arch?.[1] && section) {
      sectionArch = arch[1];
      if (section === 'elf') sass.add(arch[1]);
      else ptx.add(arch[1].replace(/^sm_/, 'compute_'));
      continue;
    }
    const fn = /^\s+Function : (\S+)/.exec(line);
    if (fn?.[1] && section === 'elf') {
      current = { name: fn[1], arch: sectionArch, census: {} };
      functions.push(current);
      continue;
    }
    const instruction = /^\s*\/\*[0-9a-f]+\*\/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)/.exec(line);
    if (instruction?.[1]) {
      const op = instruction[1];
      census[op] = (census[op] ?? 0) + 1;
      if (current) current.census[op] = (current.census[op] ?? 0) + 1;
    }
  }
  return { sass: [...sass].sort(), ptx: [...ptx].sort(), census, functions };
}

/**
 * `void (anonymous namespace)::fa2_fwd_kernel<__half, 128, false>(__half const*, ...)` from
 * c++filt becomes `fa2_fwd_kernel<__half, 128, false>`: the name a person looks for.
 */
export function shortKernelName(demangled: string): string {
  let name = demangled.trim();
  if (name.endsWith(')')) {
    let depth = 0;
    for (let i = name.length - 1; i >= 0; i--) {
      if (name[i] === ')') depth += 1;
      else if (name[i] === '(') depth -= 1;
      if (depth === 0) {
        name = name.slice(0, i);
        break;
      }
    }
  }
  return name.replace(/^void\s+/, '').replace(/\(anonymous namespace\)::/g, '');
}

/** Readable names for the mangled ones, through c++filt; none when it is missing. */
async function demangle(exec: Exec, names: string[]): Promise<Record<string, string>> {
  const mangled = [...new Set(names.filter((n) => n.startsWith('_Z')))];
  if (mangled.length === 0) return {};
  const out = await exec.run('c++filt', mangled).catch(() => undefined);
  const lines = out?.exitCode === 0 ? out.stdout.trimEnd().split(/\r?\n/) : [];
  if (lines.length !== mangled.length) return {};
  return Object.fromEntries(mangled.map((m, i) => [m, shortKernelName(lines[i] ?? m)]));
}

/** Keeps the end of a compiler log (where the errors are), marked when cut. */
export function trimLog(log: string): string {
  const lines = log.trimEnd().split(/\r?\n/);
  let kept = lines.slice(-LOG_TAIL_LINES).join('\n');
  const droppedLines = Math.max(0, lines.length - LOG_TAIL_LINES);
  if (kept.length > LOG_TAIL_CHARS) kept = kept.slice(-LOG_TAIL_CHARS);
  return droppedLines > 0 ? `[${droppedLines} earlier lines cut]\n${kept}` : kept;
}

/** What the SM architectures ending in `a` unlock; used to say why a missing one matters. */
const ARCH_SPECIFIC_FEATURES: Record<string, string> = {
  sm_90a: 'wgmma/setmaxnreg need it',
  sm_100a: 'tcgen05/TMEM need it',
  sm_120a: 'its block-scaled MMA needs it',
};

/** Hardware limit of registers per thread on sm_50 and later. */
const MAX_REGISTERS_PER_THREAD = 255;

const MATH_OPCODES = ['HGMMA', 'QGMMA', 'IGMMA', 'HMMA', 'IMMA', 'DMMA', 'FFMA', 'HFMA2', 'DFMA'];

function compiledFromGenericPtx(
  flags: readonly string[],
): { virtual: string; real: string } | undefined {
  const joined = flags.join(' ');
  for (const m of joined.matchAll(/arch=compute_(\d+)([a-z]?)\s*,\s*code=\[?([\w,]+)\]?/g)) {
    const virtualSuffix = m[2] ?? '';
    for (const code of (m[3] ?? '').split(',')) {
      const real = /^sm_(\d+)([a-z])$/.exec(code);
      if (real && real[1] === m[1] && virtualSuffix === '') {
        return { virtual: `compute_${m[1]}`, real: code };
      }
    }
  }
  return undefined;
}

function countsText(census: Record<string, number>, opcodes: readonly string[]): string {
  return opcodes
    .filter((op) => (census[op] ?? 0) > 0)
    .map((op) => `${op} x${census[op]}`)
    .join(', ');
}

interface Check {
  name: string;
  ok: boolean;
  problem: string;
  fix?: string;
}

function archCheck(label: string, want: string, found: SassListing): Check {
  if (found.sass.includes(want)) {
    return { name: `archs:${want}`, ok: true, problem: `${label}: ${want} machine code present.` };
  }
  const foundText =
    found.sass.length > 0
      ? `found ${found.sass.join(', ')}`
      : found.ptx.length > 0
        ? `found only PTX ${found.ptx.join(', ')}`
        : 'found no machine code';
  const why = ARCH_SPECIFIC_FEATURES[want];
  const m = /^sm_(\d+)([a-z]?)$/.exec(want);
  const number = m?.[1] ?? want.replace(/^sm_/, '');
  const suffix = m?.[2] ?? '';
  const generic = suffix ? ` (not compute_${number} or sm_${number})` : '';
  return {
    name: `archs:${want}`,
    ok: false,
    problem: `${label}: no ${want} machine code (${foundText})${why ? `; ${why}` : ''}.`,
    fix: `Build with -gencode=arch=compute_${number}${suffix},code=${want}${generic}.`,
  };
}

function sassCheck(
  label: string,
  opcode: string,
  found: SassListing,
  flags: readonly string[],
): Check {
  const count = found.census[opcode] ?? 0;
  if (count > 0)
    return {
      name: `sass:${opcode}`,
      ok: true,
      problem: `${label}: ${opcode} x${count} in the SASS.`,
    };
  const instead = countsText(found.census, MATH_OPCODES);
  const problem = `${label}: no ${opcode} in the SASS (found ${instead ? `instead: ${instead}` : 'no MMA or FMA instructions'}).`;
  const generic = compiledFromGenericPtx(flags);
  if (/GMMA$/.test(opcode) && !found.sass.includes('sm_90a')) {
    return {
      name: `sass:${opcode}`,
      ok: false,
      problem,
      fix: `${opcode} (wgmma) exists only in sm_90a machine code: build with -gencode=arch=compute_90a,code=sm_90a.`,
    };
  }
  if (/GMMA$/.test(opcode) && generic) {
    return {
      name: `sass:${opcode}`,
      ok: false,
      problem,
      fix: `The ${generic.real} code was compiled from ${generic.virtual} PTX, which does not define __CUDA_ARCH_FEAT_SM90_ALL, so the wgmma path was compiled out. Build with -gencode=arch=${generic.virtual}a,code=${generic.real}.`,
    };
  }
  return {
    name: `sass:${opcode}`,
    ok: false,
    problem,
    fix:
      /GMMA$/.test(opcode) && (found.census.HMMA ?? 0) > 0
        ? 'HMMA is mma.sync, not wgmma: check that the wgmma path is the one compiled (its __CUDA_ARCH_FEAT_SM90_ALL guard and template dispatch).'
        : `Check that the code path that emits ${opcode} is compiled for this target.`,
  };
}

/**
 * A function embedded more than once for one arch, with different instructions (seed 000's
 * "2x sm_90a.cubin": -arch=sm_90a plus arch=compute_90,code=sm_90a): the driver runs only one copy.
 */
function duplicateChecks(label: string, found: SassListing, flags: readonly string[]): Check[] {
  const groups = new Map<string, SassFunction[]>();
  for (const f of found.functions) {
    const key = `${f.name}\0${f.arch}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const checks: Check[] = [];
  const watched = [...MATH_OPCODES, 'LDL', 'STL'];
  for (const copies of groups.values()) {
    const signatures = new Set(
      copies.map((c) => watched.filter((op) => (c.census[op] ?? 0) > 0).join(',')),
    );
    if (copies.length < 2 || signatures.size < 2) continue;
    const first = copies[0] as SassFunction;
    const generic = compiledFromGenericPtx(flags);
    const kinds = copies
      .map((c) => countsText(c.census, MATH_OPCODES) || 'no MMA or FMA')
      .join(' in one, ');
    checks.push({
      name: `unique:${first.name}@${first.arch}`,
      ok: false,
      problem: `${label}: ${first.name} is embedded ${copies.length} times as ${first.arch} machine code and the copies differ (${kinds} in another); the driver runs only one of them, possibly the slow one.`,
      fix: generic
        ? `Drop arch=${generic.virtual},code=${generic.real} and keep one -gencode per target: -gencode=arch=${generic.virtual}a,code=${generic.real}.`
        : 'Keep one -gencode per target (for H100/H200: only -gencode=arch=compute_90a,code=sm_90a).',
    });
  }
  return checks;
}

const ABSENT_WHY: Record<string, string> = {
  LDL: 'local-memory loads come from register spills or run-time-indexed local arrays',
  STL: 'local-memory stores come from register spills or run-time-indexed local arrays',
  HMMA: 'HMMA is mma.sync, the pre-Hopper tensor-core path',
};

function absentCheck(
  label: string,
  opcode: string,
  found: SassListing,
  functions: FunctionResources[],
): Check {
  const count = found.census[opcode] ?? 0;
  if (count === 0)
    return {
      name: `sass_absent:${opcode}`,
      ok: true,
      problem: `${label}: no ${opcode} in the SASS.`,
    };
  const withStack = functions
    .filter((f) => (f.stack_bytes ?? 0) > 0 || (f.spill_store_bytes ?? 0) > 0)
    .map(
      (f) =>
        `${f.name}: ${f.stack_bytes ?? 0} bytes stack, ${(f.spill_store_bytes ?? 0) + (f.spill_load_bytes ?? 0)} bytes spilled`,
    );
  const why = ABSENT_WHY[opcode];
  return {
    name: `sass_absent:${opcode}`,
    ok: false,
    problem: `${label}: ${opcode} x${count} in the SASS (expected none)${why ? `; ${why}` : ''}.`,
    fix:
      opcode === 'LDL' || opcode === 'STL'
        ? `See the stack and spill bytes per function${withStack.length > 0 ? ` (${withStack.join('; ')})` : ''}: index local arrays only with compile-time constants, or keep them in shared memory.`
        : `Remove the code path that emits ${opcode}.`,
  };
}

function limitChecks(
  label: string,
  expect: BuildExpect,
  functions: FunctionResources[],
  flags: readonly string[],
): Check[] {
  const checks: Check[] = [];
  const maxrreg = flags
    .map((f) => /^-{1,2}maxrregcount[= ](\d+)$/.exec(f)?.[1])
    .find((v) => v !== undefined);
  const where = (f: FunctionResources) => `${f.name}${f.arch ? ` (${f.arch})` : ''}`;
  if (expect.spills !== undefined) {
    const limit = expect.spills;
    const over = functions.filter(
      (f) => (f.spill_store_bytes ?? 0) + (f.spill_load_bytes ?? 0) > limit,
    );
    checks.push(
      over.length === 0
        ? {
            name: 'spills',
            ok: true,
            problem: `${label}: spills within ${limit} bytes per function.`,
          }
        : {
            name: 'spills',
            ok: false,
            problem: `${label}: ${over
              .map(
                (f) =>
                  `${where(f)} spills ${(f.spill_store_bytes ?? 0) + (f.spill_load_bytes ?? 0)} bytes (${f.spill_store_bytes ?? 0} stored, ${f.spill_load_bytes ?? 0} loaded)`,
              )
              .join('; ')}; limit ${limit}.`,
            fix: maxrreg
              ? `The flag -maxrregcount=${maxrreg} caps registers at ${maxrreg}: raise or remove it (or use __launch_bounds__), or reduce live values (smaller tiles, fewer accumulators).`
              : over.every((f) => (f.registers ?? 0) >= MAX_REGISTERS_PER_THREAD)
                ? `They already use the ${MAX_REGISTERS_PER_THREAD}-register maximum, so only fewer live values help: smaller tiles, fewer accumulators or fewer loads in flight per thread.`
                : `Reduce live values (smaller tiles, fewer accumulators, fewer unrolled loads), or allow more registers per thread: a __launch_bounds__(threads, minBlocks) caps them at 65536 / (threads x minBlocks), at most ${MAX_REGISTERS_PER_THREAD}.`,
          },
    );
  }
  if (expect.stack_max !== undefined) {
    const limit = expect.stack_max;
    const over = functions.filter((f) => (f.stack_bytes ?? 0) > limit);
    checks.push(
      over.length === 0
        ? { name: 'stack_max', ok: true, problem: `${label}: stack frames within ${limit} bytes.` }
        : {
            name: 'stack_max',
            ok: false,
            problem: `${label}: ${over.map((f) => `${where(f)} uses ${f.stack_bytes} bytes of stack`).join('; ')}; limit ${limit}.`,
            fix: 'A stack frame comes from local arrays indexed at run time, register spills or calls that were not inlined: index arrays with compile-time constants (fully unrolled loops), keep them in shared memory, and check the spills.',
          },
    );
  }
  if (expect.smem_max !== undefined) {
    const limit = expect.smem_max;
    const over = functions.filter((f) => (f.smem_bytes ?? 0) > limit);
    checks.push(
      over.length === 0
        ? {
            name: 'smem_max',
            ok: true,
            problem: `${label}: static shared memory within ${limit} bytes.`,
          }
        : {
            name: 'smem_max',
            ok: false,
            problem: `${label}: ${over.map((f) => `${where(f)} uses ${f.smem_bytes} bytes of static shared memory`).join('; ')}; limit ${limit}.`,
            fix: 'Shrink the tile or the pipeline stages, or move the buffer to dynamic shared memory (extern __shared__) and raise cudaFuncAttributeMaxDynamicSharedMemorySize before launching.',
          },
    );
  }
  if (expect.registers_max !== undefined) {
    const limit = expect.registers_max;
    const over = functions.filter((f) => (f.registers ?? 0) > limit);
    checks.push(
      over.length === 0
        ? {
            name: 'registers_max',
            ok: true,
            problem: `${label}: registers within ${limit} per thread.`,
          }
        : {
            name: 'registers_max',
            ok: false,
            problem: `${label}: ${over.map((f) => `${where(f)} uses ${f.registers} registers`).join('; ')}; limit ${limit}.`,
            fix: 'Reduce live values per thread, or bound them with __launch_bounds__(threads, blocksPerSM) and check that it does not spill.',
          },
    );
  }
  return checks;
}

/**
 * Checks a build's facts against the manifest's `expect`. Architecture and SASS checks need
 * the listing; without cuobjdump (listing undefined) they are left out, not passed.
 */
export function checkExpectations(
  label: string,
  expect: BuildExpect,
  facts: {
    functions: FunctionResources[];
    listing: SassListing | undefined;
    flags: readonly string[];
    /** Readable names for mangled C++ kernel names, used in messages only. */
    displayNames?: Record<string, string>;
  },
): { expectations: Expectation[]; diagnostics: Diagnostic[] } {
  const checks: Check[] = [];
  const display = (name: string) => facts.displayNames?.[name] ?? name;
  const { flags } = facts;
  const functions = facts.functions.map((f) => ({ ...f, name: display(f.name) }));
  const listing = facts.listing && {
    ...facts.listing,
    functions: facts.listing.functions.map((f) => ({ ...f, name: display(f.name) })),
  };
  if (listing) {
    for (const arch of expect.archs ?? []) checks.push(archCheck(label, arch, listing));
    for (const opcode of expect.sass ?? []) checks.push(sassCheck(label, opcode, listing, flags));
    for (const opcode of expect.sass_absent ?? [])
      checks.push(absentCheck(label, opcode, listing, functions));
    checks.push(...duplicateChecks(label, listing, flags));
  }
  checks.push(...limitChecks(label, expect, functions, flags));
  const expectations = checks.map((c) => ({
    name: c.name,
    ok: c.ok,
    message: c.fix ? `${c.problem} ${c.fix}` : c.problem,
  }));
  const diagnostics = checks
    .filter((c) => !c.ok)
    .map((c): Diagnostic => {
      const d: Diagnostic = {
        level: 'error',
        code: `build.expect.${c.name.split(':')[0]}`,
        message: c.problem,
        source: 'build',
      };
      if (c.fix) d.fix = c.fix;
      return d;
    });
  return { expectations, diagnostics };
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The sources plus every local (`#include "..."`) header they reach, as absolute paths. */
async function sourceClosure(
  sources: string[],
  kernelDir: string,
  flags: readonly string[],
): Promise<string[]> {
  const includeDirs = flags
    .map((f) => /^-I(.+)$/.exec(f)?.[1])
    .filter((d): d is string => d !== undefined)
    .map((d) => path.resolve(kernelDir, d));
  const seen = new Set<string>();
  const queue = [...sources];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) {
      const name = m[1] ?? '';
      for (const dir of [path.dirname(file), kernelDir, ...includeDirs]) {
        const candidate = path.resolve(dir, name);
        if (await exists(candidate)) {
          queue.push(candidate);
          break;
        }
      }
    }
  }
  return [...seen].sort();
}

interface StoredBuild {
  record: BuildRecord;
  flags: string[];
  /** Per-function SASS of each cubin, for the checks that the record's totals cannot answer. */
  sassFunctions?: SassFunction[];
  displayNames?: Record<string, string>;
  /** ptxas's performance-loss notes, reported again on every cache hit. */
  performanceNotes?: PtxasPerformanceNote[];
}

/**
 * Builds every variant that has a `build` section, one after the other (nvcc uses the cores),
 * reusing cached libraries whose inputs are unchanged; a failing variant never stops the others.
 */
export async function buildKernels(
  targets: readonly BuildTarget[],
  deps: BuildDeps,
): Promise<BuildOutcome> {
  const env = deps.env ?? process.env;
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

  let nvcc: Tool | undefined;
  let cuobjdump: Tool | undefined;
  if (jobs.length > 0) {
    nvcc = await findNvcc(deps.exec, env);
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
    cuobjdump = await findCuobjdump(deps.exec, env, deps.python ?? 'python3');
    if (!cuobjdump) {
      diagnostics.push({
        level: 'warning',
        code: 'build.cuobjdump_not_found',
        message:
          'cuobjdump not found on PATH, in $CUDA_HOME/bin or in the Triton wheel of the configured python: embedded architectures and the SASS census are not recorded, and the archs/sass/sass_absent expectations are not checked.',
        fix: 'Install the CUDA toolkit, set CUDA_HOME, or install triton into the python kernelgate uses (its wheel carries cuobjdump).',
        source: 'build',
      });
    } else {
      log(`build: cuobjdump ${cuobjdump.path}`);
    }
  }

  for (const job of jobs) {
    const context = { exec: deps.exec, cacheDir, nvcc, cuobjdump, log, now, diagnostics };
    const started = now();
    try {
      records.push(await buildVariant(job.target, job.name, job.build, context));
    } catch (error) {
      // A file system or tool surprise in one variant must not cost the others their build.
      const label = `${job.target.kernel}/${job.name}`;
      const reason = error instanceof Error ? error.message : String(error);
      log(`build ${label}: FAILED: ${reason}`);
      diagnostics.push({
        level: 'error',
        code: 'build.failed',
        message: `${label}: the build stopped: ${reason}`,
        source: 'build',
        kernel: job.target.kernel,
        variant: job.name,
      });
      records.push({
        kernel: job.target.kernel,
        variant: job.name,
        status: 'failed',
        duration_s: (now() - started) / 1000,
        log_tail: reason,
      });
    }
  }

  await mkdir(cacheDir, { recursive: true });
  const buildsJsonPath = path.join(cacheDir, 'builds.json');
  await writeFile(buildsJsonPath, `${JSON.stringify(records, null, 2)}\n`);
  return { records, diagnostics, buildsJsonPath };
}

interface VariantContext {
  exec: Exec;
  cacheDir: string;
  nvcc: Tool | undefined;
  cuobjdump: Tool | undefined;
  log: (line: string) => void;
  now: () => number;
  diagnostics: Diagnostic[];
}

function tag(d: Diagnostic, kernel: string, variant: string): Diagnostic {
  return { ...d, kernel, variant };
}

async function buildVariant(
  target: BuildTarget,
  variant: string,
  build: VariantBuild,
  ctx: VariantContext,
): Promise<BuildRecord> {
  const label = `${target.kernel}/${variant}`;
  const started = ctx.now();
  const kernelDir = path.resolve(target.dir);
  const flags =
    build.command !== undefined && build.flags === undefined
      ? []
      : [...(build.flags ?? DEFAULT_NVCC_FLAGS)];
  const libs = build.libs ?? [];
  const failed = (message: string, logText: string, code = 'build.failed'): BuildRecord => {
    ctx.log(`build ${label}: FAILED: ${message}`);
    ctx.diagnostics.push(
      tag(
        { level: 'error', code, message: `${label}: ${message}`, source: 'build' },
        target.kernel,
        variant,
      ),
    );
    for (const d of diagnoseOutput(logText, { source: 'build', kernel: target.kernel, variant }))
      ctx.diagnostics.push(d);
    const record: BuildRecord = {
      kernel: target.kernel,
      variant,
      status: 'failed',
      duration_s: (ctx.now() - started) / 1000,
    };
    if (logText.trim() !== '') record.log_tail = trimLog(logText);
    return record;
  };

  if (!build.sources?.length && build.command === undefined) {
    return failed('build needs `sources` (compiled with nvcc) or a `command`.', '');
  }
  const sources = (build.sources ?? []).map((s) => path.resolve(kernelDir, s));
  for (const [i, source] of sources.entries()) {
    if (!(await exists(source))) {
      return failed(
        `build.sources[${i}] "${build.sources?.[i]}" not found (looked for ${source}).`,
        '',
      );
    }
  }
  if (build.command === undefined && !ctx.nvcc)
    return failed('nvcc not found; see build.nvcc_not_found.', '');

  const generic = compiledFromGenericPtx(flags);
  if (generic) {
    ctx.diagnostics.push(
      tag(
        {
          level: 'warning',
          code: 'build.generic_ptx_for_arch_specific',
          message: `${label}: arch=${generic.virtual},code=${generic.real} makes ${generic.real} machine code from ${generic.virtual} PTX, so __CUDA_ARCH_FEAT_SM90_ALL is undefined and arch-specific paths (wgmma, setmaxnreg) are compiled out; CUTLASS kernels then abort with "Arch conditional MMA instruction used without targeting appropriate compute capability".`,
          fix: `Use -gencode=arch=${generic.virtual}a,code=${generic.real}.`,
          source: 'build',
        },
        target.kernel,
        variant,
      ),
    );
  }

  const files = await sourceClosure(sources, kernelDir, flags);
  const hasher = createHash('sha256');
  hasher.update(
    JSON.stringify({
      format: CACHE_FORMAT,
      kernel: target.kernel,
      variant,
      flags,
      libs,
      command: build.command ?? null,
      toolkit: ctx.nvcc?.version ?? null,
    }),
  );
  for (const file of files) {
    hasher.update(`\0${path.relative(kernelDir, file)}\0`);
    hasher.update(await readFile(file));
  }
  const hash = hasher.digest('hex').slice(0, HASH_CHARS);
  const outDir = path.join(ctx.cacheDir, target.kernel, variant, hash);
  const library = path.join(outDir, `lib${target.kernel}_${variant}.so`);
  const recordFile = path.join(outDir, 'record.json');

  let stored: StoredBuild;
  let cached = false;
  if ((await exists(recordFile)) && (await exists(library))) {
    stored = JSON.parse(await readFile(recordFile, 'utf8')) as StoredBuild;
    cached = true;
  } else {
    const tmpDir = `${outDir}.tmp-${process.pid}`;
    await rm(tmpDir, { recursive: true, force: true });
    await mkdir(tmpDir, { recursive: true });
    const tmpLibrary = path.join(tmpDir, path.basename(library));
    let out;
    if (build.command !== undefined) {
      ctx.log(`build ${label}: running ${build.command}`);
      out = await ctx.exec.run('bash', ['-c', build.command], {
        cwd: kernelDir,
        env: {
          KG_OUT_LIB: tmpLibrary,
          KG_KERNEL_DIR: kernelDir,
          KG_NVCC: ctx.nvcc?.path ?? 'nvcc',
          KG_FLAGS: flags.join(' '),
        },
      });
    } else {
      const args = [
        '-shared',
        '-Xcompiler',
        '-fPIC',
        '-O3',
        ...flags,
        '-Xptxas',
        '-v',
        '-o',
        tmpLibrary,
        ...sources,
        ...libs.map((l) => `-l${l}`),
      ];
      ctx.log(
        `build ${label}: nvcc ${[...flags, ...libs.map((l) => `-l${l}`)].join(' ')} (${sources.length} source${sources.length === 1 ? '' : 's'})`,
      );
      out = await ctx.exec.run(ctx.nvcc?.path ?? 'nvcc', args, { cwd: kernelDir });
    }
    const logText = `${out.stdout}${out.stderr}`;
    if (out.exitCode !== 0) {
      await rm(tmpDir, { recursive: true, force: true });
      const firstError = logText
        .split(/\r?\n/)
        .find((l) => /error/i.test(l))
        ?.trim();
      return failed(
        `${build.command !== undefined ? 'build command' : 'nvcc'} exited with ${out.exitCode}${firstError ? `: ${firstError}` : ''}`,
        logText,
      );
    }
    if (!(await exists(tmpLibrary))) {
      await rm(tmpDir, { recursive: true, force: true });
      return failed(
        `the build command succeeded but did not write $KG_OUT_LIB (${tmpLibrary}).`,
        logText,
      );
    }
    const record: BuildRecord = {
      kernel: target.kernel,
      variant,
      status: 'ok',
      hash,
      library,
      functions: parsePtxasInfo(logText),
    };
    let sassFunctions: SassFunction[] | undefined;
    if (ctx.cuobjdump) {
      const dump = await ctx.exec.run(ctx.cuobjdump.path, ['-sass', tmpLibrary]);
      if (dump.exitCode === 0) {
        const listing = parseSass(dump.stdout);
        record.archs = { sass: listing.sass, ptx: listing.ptx };
        record.sass_census = listing.census;
        sassFunctions = listing.functions;
      } else {
        ctx.diagnostics.push(
          tag(
            {
              level: 'warning',
              code: 'build.cuobjdump_failed',
              message: `${label}: cuobjdump -sass exited with ${dump.exitCode}: ${trimLog(dump.stderr || dump.stdout)}`,
              fix: 'Use a cuobjdump from a toolkit at least as new as the one that built the library (set CUDA_HOME).',
              source: 'build',
            },
            target.kernel,
            variant,
          ),
        );
      }
    }
    const performanceNotes = parsePtxasPerformanceNotes(logText);
    const displayNames = await demangle(ctx.exec, [
      ...(record.functions ?? []).map((f) => f.name),
      ...(sassFunctions ?? []).map((f) => f.name),
      ...performanceNotes.map((n) => n.function),
    ]);
    record.duration_s = (ctx.now() - started) / 1000;
    await writeFile(path.join(tmpDir, 'build.log'), logText);
    await writeFile(
      path.join(tmpDir, 'record.json'),
      `${JSON.stringify({ record, flags, sassFunctions, displayNames, performanceNotes } satisfies StoredBuild, null, 2)}\n`,
    );
    await rm(outDir, { recursive: true, force: true });
    await rename(tmpDir, outDir);
    stored = { record, flags, sassFunctions, displayNames, performanceNotes };
  }

  const record: BuildRecord = {
    ...stored.record,
    cached,
    duration_s: (ctx.now() - started) / 1000,
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
  const checked = checkExpectations(label, build.expect ?? {}, {
    functions: record.functions ?? [],
    listing,
    flags: stored.flags,
    displayNames: stored.displayNames ?? {},
  });
  if (checked.expectations.length > 0) record.expectations = checked.expectations;
  for (const d of checked.diagnostics) ctx.diagnostics.push(tag(d, target.kernel, variant));
  for (const d of performanceDiagnostics(
    label,
    stored.performanceNotes ?? [],
    stored.displayNames ?? {},
  )) {
    ctx.diagnostics.push(tag(d, target.kernel, variant));
  }
  record.status = checked.expectations.some((e) => !e.ok) ? 'expectation_failed' : 'ok';
  ctx.log(`build ${label}: ${summary(record)}`);
  return record;
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
