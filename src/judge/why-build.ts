// What was built, base against head, for one variant (why.ts): the ptxas resources of each device
// function (registers, static shared memory, stack, spill bytes), the SASS opcode census and the
// targets, from the build records (results `builds` and `base_builds`, or a stored run's
// `builds`). Facts only; why.ts names the likeliest cause from them.
import { blankAnonymousNamespaces } from '../lib/index.js';
import type { BuildRecord } from '../results/index.js';

/** A resource of ptxas -v, as the report names it. */
export type Resource = 'spills' | 'registers' | 'stack' | 'shared memory';

/** The order a cause is looked for in: spills slow a kernel most surely, then the register cap… */
export const RESOURCES: readonly Resource[] = ['spills', 'registers', 'stack', 'shared memory'];

/** Opcodes always shown in the census table: tensor cores, local memory, shared-memory matrices. */
export const KEY_OPCODES = ['HGMMA', 'HMMA', 'LDL', 'STL', 'LDSM', 'LDGSTS', 'UTMALDG'] as const;

export interface ResourceChange {
  resource: Resource;
  /** the device function as ptxas named it (mangled), and its target */
  function: string;
  arch?: string;
  /** undefined: the function is not in that side's build, or that side did not record it */
  from?: number;
  to?: number;
  /** the side whose build alone has the function (a kernel added or removed, or re-instantiated) */
  only?: 'base' | 'head';
}

export interface OpcodeChange {
  opcode: string;
  from: number;
  to: number;
}

/** One side's figures over all of its functions: the most any of them uses. */
export interface BuildMaxima {
  registers?: number;
  /** spill stores + spill loads, bytes */
  spills?: number;
  stack?: number;
  /** static shared memory, bytes */
  smem?: number;
}

export interface BuildDiff {
  /**
   * compared: both sides have an ok build record; none: neither has one (nothing is built ahead:
   * Triton and torch compile or dispatch at run time); one-sided: only one side has one (`missing`
   * says which); failed: a side's build failed
   */
  state: 'compared' | 'none' | 'one-sided' | 'failed';
  missing?: 'base' | 'head';
  /** the build caches' keys (inputs), when recorded */
  baseHash?: string;
  headHash?: string;
  base?: BuildMaxima;
  head?: BuildMaxima;
  /** per function, each resource that differs */
  resources: ResourceChange[];
  /** every opcode whose count differs, the largest change first */
  opcodes: OpcodeChange[];
  /** the cubin targets, when they differ */
  archs?: { from: string[]; to: string[] };
  /** the key opcodes' counts on both sides (those present on either side) */
  census: OpcodeChange[];
}

type Fn = NonNullable<BuildRecord['functions']>[number];

const valueOf = (f: Fn | undefined, r: Resource): number | undefined => {
  if (f === undefined) return undefined;
  switch (r) {
    case 'spills':
      return f.spill_store_bytes === undefined && f.spill_load_bytes === undefined
        ? undefined
        : (f.spill_store_bytes ?? 0) + (f.spill_load_bytes ?? 0);
    case 'registers':
      return f.registers;
    case 'stack':
      return f.stack_bytes;
    case 'shared memory':
      return f.smem_bytes;
  }
};

function maxima(record: BuildRecord): BuildMaxima {
  const out: BuildMaxima = {};
  const keys: [Resource, keyof BuildMaxima][] = [
    ['spills', 'spills'],
    ['registers', 'registers'],
    ['stack', 'stack'],
    ['shared memory', 'smem'],
  ];
  for (const [r, key] of keys) {
    const values = (record.functions ?? [])
      .map((f) => valueOf(f, r))
      .filter((v): v is number => v !== undefined);
    if (values.length) out[key] = Math.max(...values);
  }
  return out;
}

/**
 * A function's identity across base and head: its name with the hash nvcc puts in
 * anonymous-namespace names blanked (a shared header's new helper renames every kernel that
 * includes it: H100 run 133 listed each such kernel twice, "absent" on one side), and its target.
 */
const fnKey = (f: Fn) => `${blankAnonymousNamespaces(f.name)}\u0000${f.arch ?? ''}`;

function resourceChanges(base: BuildRecord, head: BuildRecord): ResourceChange[] {
  const before = new Map((base.functions ?? []).map((f) => [fnKey(f), f]));
  const after = new Map((head.functions ?? []).map((f) => [fnKey(f), f]));
  const keys = [...new Set([...before.keys(), ...after.keys()])];
  const out: ResourceChange[] = [];
  for (const r of RESOURCES) {
    for (const key of keys) {
      const fn = (after.get(key) ?? before.get(key)) as Fn; // named as the head built it
      const arch = fn.arch;
      const from = valueOf(before.get(key), r);
      const to = valueOf(after.get(key), r);
      if (from === to) continue;
      const only = !before.has(key) ? 'head' : !after.has(key) ? 'base' : undefined;
      out.push({
        resource: r,
        function: fn.name,
        ...(arch ? { arch } : {}),
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...(only ? { only } : {}),
      });
    }
  }
  return out;
}

function opcodeChanges(base: BuildRecord, head: BuildRecord): OpcodeChange[] {
  const a = base.sass_census ?? {};
  const b = head.sass_census ?? {};
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .map((opcode) => ({ opcode, from: a[opcode] ?? 0, to: b[opcode] ?? 0 }))
    .filter((c) => c.from !== c.to)
    .sort(
      (x, y) => Math.abs(y.to - y.from) - Math.abs(x.to - x.from) || (x.opcode < y.opcode ? -1 : 1),
    );
}

function keyCensus(base: BuildRecord, head: BuildRecord): OpcodeChange[] {
  const a = base.sass_census ?? {};
  const b = head.sass_census ?? {};
  return KEY_OPCODES.filter((o) => a[o] !== undefined || b[o] !== undefined).map((opcode) => ({
    opcode,
    from: a[opcode] ?? 0,
    to: b[opcode] ?? 0,
  }));
}

const sameList = (a: string[], b: string[]) => [...a].sort().join(',') === [...b].sort().join(',');

/** The variant's build, base against head. */
export function buildDiff(base: BuildRecord | undefined, head: BuildRecord | undefined): BuildDiff {
  const empty = { resources: [], opcodes: [], census: [] };
  if (base === undefined && head === undefined) return { state: 'none', ...empty };
  if (base === undefined || head === undefined) {
    return { state: 'one-sided', missing: base === undefined ? 'base' : 'head', ...empty };
  }
  const hashes = {
    ...(base.hash !== undefined ? { baseHash: base.hash } : {}),
    ...(head.hash !== undefined ? { headHash: head.hash } : {}),
  };
  if (base.status === 'failed' || head.status === 'failed') {
    return {
      state: 'failed',
      missing: base.status === 'failed' ? 'base' : 'head',
      ...hashes,
      ...empty,
    };
  }
  const fromArchs = base.archs?.sass ?? [];
  const toArchs = head.archs?.sass ?? [];
  return {
    state: 'compared',
    ...hashes,
    base: maxima(base),
    head: maxima(head),
    resources: resourceChanges(base, head),
    opcodes: opcodeChanges(base, head),
    ...(sameList(fromArchs, toArchs) ? {} : { archs: { from: fromArchs, to: toArchs } }),
    census: keyCensus(base, head),
  };
}

/** Whether the build's inspected facts differ (resources, census, targets). */
export function buildChanged(d: BuildDiff): boolean {
  return d.resources.length > 0 || d.opcodes.length > 0 || d.archs !== undefined;
}
