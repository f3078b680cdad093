// Inspecting what the compiler produced: per-function resources and performance notes from
// `ptxas -v`, the SASS listing of cuobjdump (architectures, opcode census, per function).
import type { Diagnostic } from '../../results/index.js';
import { LOG_TAIL_CHARS, LOG_TAIL_LINES, type FunctionResources } from './types.js';

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
 * C7514 (and C7512, when the registers run short): every wgmma of the function waits for the one
 * before, which takes the asynchrony (and most of the speed) out of a wgmma kernel while the
 * build still "succeeds".
 */
export function parsePtxasPerformanceNotes(log: string): PtxasPerformanceNote[] {
  const notes: PtxasPerformanceNote[] = [];
  for (const line of log.split(/\r?\n/)) {
    // C7514 says "in the function", C7512 (too few registers) "for the function"
    const m =
      /\((C\d+)\) Potential Performance Loss: (.*?)\s+(?:in|for) the function '([^']+)'/.exec(line);
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

/** Keeps the end of a compiler log (where the errors are), marked when cut. */
export function trimLog(log: string): string {
  const lines = log.trimEnd().split(/\r?\n/);
  let kept = lines.slice(-LOG_TAIL_LINES).join('\n');
  const droppedLines = Math.max(0, lines.length - LOG_TAIL_LINES);
  if (kept.length > LOG_TAIL_CHARS) kept = kept.slice(-LOG_TAIL_CHARS);
  return droppedLines > 0 ? `[${droppedLines} earlier lines cut]\n${kept}` : kept;
}
