// compute-sanitizer's text report, read into the results' deep.sanitizer entries. The format is
// NVIDIA's documented one (Compute Sanitizer user manual): every line of the tool's own output
// starts with the prefix `========= `; a finding starts at the prefix with no indent ("Invalid
// __global__ write of size 4 bytes", "Uninitialized __global__ memory read ...", "Error: Race
// reported between ...", "Barrier error detected ...", "Program hit cudaError... on CUDA API
// call to ..."), its details follow indented under the prefix, and the run ends with
// "ERROR SUMMARY: N errors" (racecheck also with "RACECHECK SUMMARY: ... (N errors, M warnings)").
// Lines without the prefix are the target program's own output and are ignored.

export const SANITIZER_TOOLS = ['memcheck', 'racecheck', 'synccheck', 'initcheck'] as const;
export type SanitizerTool = (typeof SANITIZER_TOOLS)[number];

export interface SanitizerFinding {
  what: string;
  kernel?: string;
  detail?: string;
  /** the innermost Python frame of its host backtrace: what launched the kernel */
  python_frame?: string;
  /** that frame is in the harness's own code, not the variant's (src/deep/sanitize.ts) */
  harness?: boolean;
}

/** A Python frame of a host backtrace, as the tool prints it: "Host Frame: fingerprint in worker.py:253". */
const PYTHON_FRAME = /^\s*Host Frame:\s*(\S+) in (\S+\.py):(\d+)\s*$/;

export interface SanitizerReport {
  /** the count of the summary line; undefined when the tool printed none (it did not finish) */
  errors?: number;
  findings: SanitizerFinding[];
  /** the first lines of the tool's own output (the prefix taken off), clipped */
  firstLines: string;
}

const PREFIX = /^=========(?: (.*))?$/;
// Not "ERROR SUMMARY: 1200 errors were not printed. Use --print-limit ...", the line the tool
// adds after the count when it printed fewer findings than it found (recorded: initcheck).
const SUMMARY = /^ERROR SUMMARY: ([\d,]+) errors?$/;
const RACECHECK_SUMMARY = /^RACECHECK SUMMARY: .*\(([\d,]+) errors?\b/;
/** Lines at the prefix's level that are not findings. */
const NOT_A_FINDING =
  /^(COMPUTE-SANITIZER|ERROR SUMMARY:|RACECHECK SUMMARY:|LEAK SUMMARY:|Target application returned an error|Error: Target application terminated|Error: process didn't terminate|Warning: |Note: )/;
/** Findings shown, each with at most this many detail lines of this many characters. */
export const MAX_FINDINGS = 20;
const DETAIL_LINES = 4;
const DETAIL_CHARS = 400;
const FIRST_LINES = 12;
const FIRST_LINES_CHARS = 2000;

/** A device function's name is clipped to this many characters (templates run long). */
const MAX_NAME = 160;

/** The device function a finding's `at ...` line names, without its arguments or offset. */
export function deviceFunction(line: string): string | undefined {
  // "at 0x70 in memcheck_demo.cu:6:unaligned_kernel()" (older) or
  // "at unaligned_kernel()+0x70 in memcheck_demo.cu:6" (CUDA 12) or "at _fwd_kernel+0x1a0".
  const m = /\bat (.+)$/.exec(line.trim());
  if (!m) return undefined;
  let where = (m[1] as string).replace(/ \[\d[\d,]* hazards?\]$/, '');
  const old = /^0x[0-9a-f]+ in (.+)$/i.exec(where);
  if (old) {
    // file:line:function(args): the function follows the last ':' before its '('.
    where = old[1] as string;
    const paren = where.indexOf('(');
    const head = paren >= 0 ? where.slice(0, paren) : where;
    const colon = head.lastIndexOf(':');
    where = colon >= 0 ? where.slice(colon + 1) : where;
  } else {
    where = where.replace(/ in \S+$/, '');
  }
  const name = withoutArguments(where.replace(/\+0x[0-9a-f]+$/i, '').trim());
  return name ? clipLine(name, MAX_NAME) : undefined;
}

/**
 * The name without its argument list: the parenthesised group that ends it, matched from the end,
 * so that parentheses inside template arguments stay ("reduce_kernel<(int)512, ...>(T3)", as
 * recorded of PyTorch's kernels, is "reduce_kernel<(int)512, ...>").
 */
function withoutArguments(name: string): string {
  if (!name.endsWith(')')) {
    const open = name.indexOf('(');
    return (open >= 0 ? name.slice(0, open) : name).trim();
  }
  let depth = 0;
  for (let i = name.length - 1; i >= 0; i--) {
    if (name[i] === ')') depth++;
    else if (name[i] === '(' && --depth === 0) return name.slice(0, i).trim();
  }
  return name;
}

function clipLine(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** Reads one compute-sanitizer run's combined output. */
export function parseSanitizer(text: string): SanitizerReport {
  const own: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const m = PREFIX.exec(raw);
    if (m) own.push(m[1] ?? '');
  }
  let errors: number | undefined;
  let racecheckErrors: number | undefined;
  const findings: SanitizerFinding[] = [];
  let current: { what: string; lines: string[] } | undefined;
  const close = () => {
    if (!current) return;
    const at = current.lines.find((l) => /^\s*(at|and \w+ access at) /.test(l));
    // A race names its first access on the finding's own line.
    const race = /^Error: Race reported between \w+ access (at .*)$/.exec(current.what);
    const kernel = race ? deviceFunction(race[1] as string) : at ? deviceFunction(at) : undefined;
    const detail = current.lines
      .map((l) => l.trim())
      .filter((l) => l !== '' && !/^(Saved host backtrace|Host Frame:|in \/)/.test(l))
      .slice(0, DETAIL_LINES)
      .map((l) => clipLine(l, DETAIL_CHARS))
      .join('\n');
    const frame = current.lines.map((l) => PYTHON_FRAME.exec(l)).find(Boolean);
    if (findings.length < MAX_FINDINGS) {
      findings.push({
        what: clipLine(current.what, DETAIL_CHARS),
        ...(kernel ? { kernel } : {}),
        ...(detail ? { detail } : {}),
        ...(frame ? { python_frame: `${frame[1]} in ${frame[2]}:${frame[3]}` } : {}),
      });
    }
    current = undefined;
  };
  for (const line of own) {
    const summary = SUMMARY.exec(line);
    if (summary) errors = Number((summary[1] as string).replace(/,/g, ''));
    const race = RACECHECK_SUMMARY.exec(line);
    if (race) racecheckErrors = Number((race[1] as string).replace(/,/g, ''));
    if (line.trim() === '') {
      close();
      continue;
    }
    if (/^\s/.test(line)) {
      current?.lines.push(line);
      continue;
    }
    close();
    if (!NOT_A_FINDING.test(line)) current = { what: line.trim(), lines: [] };
  }
  close();
  const firstLines = own
    .filter((l) => l.trim() !== '' && !/^COMPUTE-SANITIZER$/.test(l.trim()))
    .slice(0, FIRST_LINES)
    .join('\n');
  return {
    ...(errors !== undefined
      ? { errors }
      : racecheckErrors !== undefined
        ? { errors: racecheckErrors }
        : {}),
    findings,
    firstLines: clipLine(firstLines, FIRST_LINES_CHARS),
  };
}
