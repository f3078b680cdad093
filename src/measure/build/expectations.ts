// Checking a build against the manifest's `expect`: architectures, SASS opcodes present and
// absent, duplicate code paths, and the resource limits (spills, stack, shared memory, registers).
import type { Diagnostic } from '../../results/index.js';
import type { SassFunction, SassListing } from './inspect.js';
import type { BuildExpect, Expectation, FunctionResources } from './types.js';

/** What the SM architectures ending in `a` unlock; used to say why a missing one matters. */
const ARCH_SPECIFIC_FEATURES: Record<string, string> = {
  sm_90a: 'wgmma/setmaxnreg need it',
  sm_100a: 'tcgen05/TMEM need it',
  sm_120a: 'its block-scaled MMA needs it',
};

/** Hardware limit of registers per thread on sm_50 and later. */
const MAX_REGISTERS_PER_THREAD = 255;

export const MATH_OPCODES = [
  'HGMMA',
  'QGMMA',
  'IGMMA',
  'HMMA',
  'IMMA',
  'DMMA',
  'FFMA',
  'HFMA2',
  'DFMA',
];

export function compiledFromGenericPtx(
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

export function countsText(census: Record<string, number>, opcodes: readonly string[]): string {
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

type LimitCheck = (
  label: string,
  limit: number,
  functions: FunctionResources[],
  flags: readonly string[],
) => Check;

const where = (f: FunctionResources) => `${f.name}${f.arch ? ` (${f.arch})` : ''}`;

const spillsCheck: LimitCheck = (label, limit, functions, flags) => {
  const maxrreg = flags
    .map((f) => /^-{1,2}maxrregcount[= ](\d+)$/.exec(f)?.[1])
    .find((v) => v !== undefined);
  const over = functions.filter(
    (f) => (f.spill_store_bytes ?? 0) + (f.spill_load_bytes ?? 0) > limit,
  );
  return over.length === 0
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
      };
};

const stackCheck: LimitCheck = (label, limit, functions, _flags) => {
  const over = functions.filter((f) => (f.stack_bytes ?? 0) > limit);
  return over.length === 0
    ? { name: 'stack_max', ok: true, problem: `${label}: stack frames within ${limit} bytes.` }
    : {
        name: 'stack_max',
        ok: false,
        problem: `${label}: ${over.map((f) => `${where(f)} uses ${f.stack_bytes} bytes of stack`).join('; ')}; limit ${limit}.`,
        fix: 'A stack frame comes from local arrays indexed at run time, register spills or calls that were not inlined: index arrays with compile-time constants (fully unrolled loops), keep them in shared memory, and check the spills.',
      };
};

const smemCheck: LimitCheck = (label, limit, functions, _flags) => {
  const over = functions.filter((f) => (f.smem_bytes ?? 0) > limit);
  return over.length === 0
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
      };
};

const registersCheck: LimitCheck = (label, limit, functions, _flags) => {
  const over = functions.filter((f) => (f.registers ?? 0) > limit);
  return over.length === 0
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
      };
};

const LIMIT_CHECKS: readonly [keyof BuildExpect, LimitCheck][] = [
  ['spills', spillsCheck],
  ['stack_max', stackCheck],
  ['smem_max', smemCheck],
  ['registers_max', registersCheck],
];

function limitChecks(
  label: string,
  expect: BuildExpect,
  functions: FunctionResources[],
  flags: readonly string[],
): Check[] {
  return LIMIT_CHECKS.flatMap(([key, check]) => {
    const limit = expect[key];
    return typeof limit === 'number' ? [check(label, limit, functions, flags)] : [];
  });
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
