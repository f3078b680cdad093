// Identity before timing (issue 27): before a pull request's paired run, each kernel variant of the
// head and of the base revision gets a key: its build output (the CUDA library's bytes), its module
// sources (the kernel's folder and every repository file its Python module imports, but the files
// other variants own: `owns`, `build.sources`, src/config/owns.ts), its manifest
// entry, the harness that measures it and the library versions. A variant whose key is the same in
// both is identical: the harness verifies it as always and does not time it (--identical). The
// reference variants are the A/A control of their kernel's timed candidates: timed whenever one
// is. Conservative throughout: whatever cannot be known for certain (an import resolved at run
// time, a build without its library's hash) makes the variant differ, so it is timed.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { parse } from 'yaml';
import {
  namedReference,
  ownedPath,
  variantClaims,
  type Config,
  type LoadedKernel,
} from '../config/index.js';
import type { BuildRecord, Environment } from '../results/index.js';
import { fileImportClosure, importClosure } from './python-imports.js';

/** What the harness writes into an identical case (cases[].identical.reason) and the report says. */
export const IDENTICAL_REASON = 'identical build and sources';

/** One revision as measured: its checkout, configuration, build records and harness. */
export interface IdentitySide {
  root: string;
  config: Config;
  builds: BuildRecord[];
  /** the folder whose python/ holds the harness that measures this revision; undefined: unknown */
  harnessRoot: string | undefined;
}

export interface VariantIdentity {
  kernel: string;
  variant: string;
  role: 'candidate' | 'reference';
  /**
   * a reference that is its kernel's A/A control (controlReferences): timed whenever one of the
   * kernel's candidates is
   */
  control: boolean;
  /** sha256 over every part */
  key: string;
  parts: {
    manifest: string;
    /** repository file → sha256 */
    sources: Record<string, string>;
    build: string | null;
    harness: string;
    libraries: string;
  };
  /** imports that could not be resolved with certainty */
  unresolved: string[];
  /** its own files (`owns`, `build.sources`), relative to the root */
  owns: string[];
  /** files of the kernel left out of the key because other variants own them: file → sha256 */
  leftOut: Record<string, string>;
  /** file → the variants that own it, for the files in leftOut */
  owners: Record<string, string[]>;
}

export interface IdentityVerdict {
  kernel: string;
  variant: string;
  identical: boolean;
  /** why not (or IDENTICAL_REASON) */
  why: string;
  /** an identical variant whose kernel changed in files other variants own: which, and whose */
  note?: string;
  /**
   * run.time_control: headline: an identical control reference of a kernel whose candidate is
   * timed, timed on the headline case and beside confirmations only (the harness's --controls)
   */
  control?: boolean;
  /**
   * run.time_control: headline: a reference, not its kernel's control, whose only difference
   * from the base is the harness (which the control, timed, measures): left untimed
   * (the harness's --harness-only)
   */
  harnessOnly?: boolean;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** JSON with object keys sorted, so that equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Every file under `dir` (links followed), caches of the interpreter left out. */
function treeFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === '__pycache__' || /\.py[co]$/.test(name)) continue;
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) out.push(...treeFiles(path));
    else if (stat.isFile()) out.push(path);
  }
  return out;
}

/** The harness's sources (python/kernelgate_harness and its launcher) as one hash. */
export function harnessVersion(harnessRoot: string | undefined): string {
  if (harnessRoot === undefined) return 'unknown';
  const python = join(harnessRoot, 'python');
  const files = [
    ...treeFiles(join(python, 'kernelgate_harness')),
    join(python, 'kernelgate_launch.py'),
  ].filter((f) => existsSync(f));
  if (files.length === 0) return 'absent';
  const h = createHash('sha256');
  for (const f of files) h.update(`\0${relative(python, f)}\0`).update(readFileSync(f));
  return h.digest('hex');
}

/** The versions of what the variants run on (one environment for both arms of one run). */
export function librariesKey(environment: Environment): string {
  return canonicalJson({
    driver: environment.driver_version,
    cuda_runtime: environment.cuda_runtime_version,
    cuda_toolkit: environment.cuda_toolkit_version,
    libraries: environment.libraries ?? {},
  });
}

/** Each variant's manifest entry: the kernel.yml as written, with that variant alone. */
function manifestEntries(root: string, kernel: LoadedKernel): Map<string, string> {
  const raw = parse(readFileSync(join(root, kernel.file), 'utf8')) as Record<string, unknown>;
  const { variants, ...rest } = raw;
  const entries = new Map<string, string>();
  for (const v of (variants ?? []) as { name: string }[]) {
    entries.set(v.name, canonicalJson({ ...rest, variant: v }));
  }
  return entries;
}

/** The kernel's folder and its module's imports (repository files), and what is unknown. */
function kernelClosure(root: string, kernel: LoadedKernel) {
  const closure = importClosure(root, kernel.manifest.module);
  // kernel.yml itself is each variant's manifest part: one variant's entry is not the others' source
  const folder = treeFiles(kernel.dir)
    .map((f) => relative(root, f).split('\\').join('/'))
    .filter((f) => f !== kernel.file.split('\\').join('/'));
  return { files: new Set([...folder, ...closure.files]), unresolved: closure.unresolved };
}

/** Each variant's own files (`owns`, `build.sources`) that exist, relative to the root. */
function claimsOf(root: string, kernel: LoadedKernel): Map<string, string[]> {
  const claims = new Map<string, string[]>();
  for (const v of kernel.manifest.variants) {
    const own = new Set<string>();
    for (const { path } of variantClaims(v)) {
      const at = ownedPath(path);
      const file = at === undefined ? undefined : join(kernel.dir, at);
      if (file !== undefined && existsSync(file) && statSync(file).isFile())
        own.add(relative(root, file).split('\\').join('/'));
    }
    claims.set(v.name, [...own].sort());
  }
  return claims;
}

/**
 * One variant's sources: every file of its kernel's closure but those other variants own and it
 * does not, and its own files with everything they import (another variant's file included).
 */
function variantSources(
  root: string,
  closure: { files: Set<string>; unresolved: string[] },
  claims: Map<string, string[]>,
  variant: string,
) {
  const own = claims.get(variant) ?? [];
  const owners = new Map<string, string[]>();
  for (const [name, files] of claims) {
    for (const f of files) owners.set(f, [...(owners.get(f) ?? []), name]);
  }
  const ownClosure = fileImportClosure(root, own);
  const keep = new Set([...own, ...ownClosure.files]);
  const sources: Record<string, string> = {};
  const leftOut: Record<string, string> = {};
  const leftOwners: Record<string, string[]> = {};
  for (const f of [...new Set([...closure.files, ...keep])].sort()) {
    const hash = sha256(readFileSync(join(root, f)));
    const by = owners.get(f);
    if (keep.has(f) || by === undefined) sources[f] = hash;
    else {
      leftOut[f] = hash;
      leftOwners[f] = by;
    }
  }
  const unresolved = [...closure.unresolved, ...ownClosure.unresolved];
  return { sources, unresolved, own, leftOut, owners: leftOwners };
}

/** The build part of a variant: its library's hash, or why there is none ('' when it builds nothing). */
function buildPart(record: BuildRecord | undefined, builds: boolean): string | null {
  if (!builds) return null;
  if (record === undefined) return 'no build record';
  if (record.status !== 'ok') return `build ${record.status}`;
  return record.library_sha256 ?? 'no library hash';
}

/** Every variant's identity in one revision, by kernel/variant. */
export function variantIdentities(
  side: IdentitySide,
  environment: Environment,
): Map<string, VariantIdentity> {
  const harness = harnessVersion(side.harnessRoot);
  const libraries = librariesKey(environment);
  const out = new Map<string, VariantIdentity>();
  for (const kernel of side.config.kernels) {
    const entries = manifestEntries(side.root, kernel);
    const closure = kernelClosure(side.root, kernel);
    const claims = claimsOf(side.root, kernel);
    const controls = controlReferences(kernel.manifest);
    for (const v of kernel.manifest.variants) {
      const name = kernel.manifest.name;
      const { sources, unresolved, own, leftOut, owners } = variantSources(
        side.root,
        closure,
        claims,
        v.name,
      );
      const record = side.builds.find((b) => b.kernel === name && b.variant === v.name);
      const parts = {
        manifest: entries.get(v.name) ?? '',
        sources,
        build: buildPart(record, v.build !== undefined),
        harness,
        libraries,
      };
      out.set(`${name}/${v.name}`, {
        kernel: name,
        variant: v.name,
        role: v.role,
        control: v.role === 'reference' && controls.has(v.name),
        key: sha256(canonicalJson(parts)),
        parts,
        unresolved: [...new Set(unresolved)],
        owns: own,
        leftOut,
        owners,
      });
    }
  }
  return out;
}

/**
 * The references that control a kernel's timed candidates in a pull request's paired run: the one
 * its tiers and speed-ups are measured against (tiers.reference, else speed_reference), or every
 * reference when it names none. One control per case is enough to tell a machine that was not
 * quiet (a moved control makes the case's verdicts AMBIGUOUS); timing all of attention's five made
 * the references most of a one-file pull request's time on the H100 (run 50: 146.5 s of bench).
 */
export function controlReferences(manifest: LoadedKernel['manifest']): Set<string> {
  const named = namedReference(manifest);
  const references = manifest.variants.filter((v) => v.role === 'reference').map((v) => v.name);
  return new Set(named !== undefined && references.includes(named) ? [named] : references);
}

/** The first part in which two identities differ, in words; the harness left out with `noHarness`. */
function difference(
  head: VariantIdentity,
  base: VariantIdentity,
  noHarness = false,
): string | undefined {
  const unresolved = head.unresolved[0] ?? base.unresolved[0];
  if (unresolved !== undefined) {
    return `an import cannot be resolved with certainty (${unresolved})`;
  }
  if (!noHarness && head.parts.harness !== base.parts.harness) return HARNESS_DIFFERS;
  if (head.parts.manifest !== base.parts.manifest) return 'its manifest entry differs';
  const files = new Set([...Object.keys(head.parts.sources), ...Object.keys(base.parts.sources)]);
  const changed = [...files].filter((f) => head.parts.sources[f] !== base.parts.sources[f]);
  if (changed.length) {
    const shown = changed
      .slice(0, 3)
      .map((f) => (head.owns.includes(f) || base.owns.includes(f) ? `${f} (its own)` : f))
      .join(', ');
    return `sources differ: ${shown}${changed.length > 3 ? ` and ${changed.length - 3} more` : ''}`;
  }
  // a build that failed or has no library hash is never the same as anything, itself included
  const unknown = [head.parts.build, base.parts.build].find(
    (b) => b !== null && !/^[0-9a-f]{64}$/.test(b),
  );
  if (unknown !== undefined) return `its build cannot be compared (${unknown})`;
  if (head.parts.build !== base.parts.build) return 'its build output differs';
  if (head.parts.libraries !== base.parts.libraries) return 'library versions differ';
  return noHarness || head.key === base.key ? undefined : 'its identity differs';
}

const HARNESS_DIFFERS = 'the harness differs';
const idOf = (h: VariantIdentity) => ({ kernel: h.kernel, variant: h.variant });
/** Why a reference that differs from the base in the harness alone is not timed (harness too). */
export const HARNESS_ONLY_REASON =
  "a reference whose only difference is the harness, which its kernel's A/A control measures";

/** Why an identical control is timed although identical (run.time_control: every_case). */
export const CONTROL_TIMED = 'a reference variant: timed as the A/A control';

/**
 * Each head variant: identical in the base revision or not, and why. A control reference
 * (controlReferences) is the A/A control of its kernel's timed candidates: it is timed whenever
 * one of them is, and skipped with them (when identical itself) only when none is: there is then
 * nothing for it to control. With `headlineControls` (run.time_control: headline) an identical
 * control of a timed candidate is identical and marked `control`: the harness times it on the
 * headline case and beside confirmations (--controls). The kernel's other references are skipped
 * when identical, as any variant is.
 */
export function compareIdentities(
  head: Map<string, VariantIdentity>,
  base: Map<string, VariantIdentity>,
  headlineControls = false,
): IdentityVerdict[] {
  const whyOf = (h: VariantIdentity, noHarness = false) => {
    const b = base.get(`${h.kernel}/${h.variant}`);
    return b === undefined ? 'not in the base revision' : difference(h, b, noHarness);
  };
  // under the headline policy a reference other than the control that differs in the harness
  // alone measures only what the control (timed: its harness differs too) measures
  const harnessOnly = (h: VariantIdentity, why: string | undefined) =>
    headlineControls &&
    h.role === 'reference' &&
    !h.control &&
    why === HARNESS_DIFFERS &&
    whyOf(h, true) === undefined;
  const heads = [...head.values()];
  const timedCandidate = new Set(
    heads.filter((h) => h.role !== 'reference' && whyOf(h) !== undefined).map((h) => h.kernel),
  );
  return heads.map((h) => {
    const controls = h.control && timedCandidate.has(h.kernel);
    const own = whyOf(h);
    if (harnessOnly(h, own)) {
      return { ...idOf(h), identical: true, why: HARNESS_ONLY_REASON, harnessOnly: true };
    }
    const why = controls && !headlineControls ? CONTROL_TIMED : own;
    const note = why === undefined ? othersOwnChanged(h, base.get(`${h.kernel}/${h.variant}`)) : '';
    return {
      ...idOf(h),
      identical: why === undefined,
      why: why ?? IDENTICAL_REASON,
      ...(note ? { note } : {}),
      ...(controls && why === undefined ? { control: true } : {}),
    };
  });
}

/** The files of its kernel that changed but other variants own, with their owners; '' if none. */
function othersOwnChanged(head: VariantIdentity, base: VariantIdentity | undefined): string {
  if (base === undefined) return '';
  const files = [...new Set([...Object.keys(head.leftOut), ...Object.keys(base.leftOut)])].sort();
  const changed = files.filter((f) => head.leftOut[f] !== base.leftOut[f]);
  if (!changed.length) return '';
  const whose = (f: string) =>
    (head.owners[f] ?? base.owners[f] ?? []).map((v) => `${head.kernel}/${v}`).join(', ');
  return `what changed in ${head.kernel} is other variants' own: ${changed.map((f) => `${f} (${whose(f)})`).join(', ')}`;
}

/**
 * The harness's `--identical` argument for a pull request's paired run, with each variant's
 * verdict written to `<outDir>/identity.json` and said in the log. [] when nothing is identical.
 */
export function identicalArgs(
  head: IdentitySide,
  base: IdentitySide,
  environment: Environment,
  outDir: string,
  log: (line: string) => void,
  headlineControls = false,
): string[] {
  let verdicts: IdentityVerdict[];
  try {
    verdicts = compareIdentities(
      variantIdentities(head, environment),
      variantIdentities(base, environment),
      headlineControls,
    );
  } catch (error) {
    log(`kernelgate: identity: not computed (${(error as Error).message}); every variant is timed`);
    return [];
  }
  // the harness's list is kernel.variant, comma-separated: a name that cannot be written so is timed
  for (const v of verdicts) {
    if (v.identical && /[.,\s]/.test(`${v.kernel}${v.variant}`)) {
      Object.assign(v, { identical: false, why: 'its name cannot be passed to --identical' });
      delete v.control;
    }
  }
  writeFileSync(join(outDir, 'identity.json'), JSON.stringify(verdicts, null, 2) + '\n');
  const same = verdicts.filter((v) => v.identical);
  const code = same.filter((v) => !v.harnessOnly);
  log(
    `kernelgate: identity: ${code.length} of ${verdicts.length} variant(s) identical in base and head, verified but not timed` +
      (code.length ? `: ${code.map((v) => `${v.kernel}/${v.variant}`).join(', ')}` : ''),
  );
  const harnessOnly = same.filter((v) => v.harnessOnly === true);
  for (const v of harnessOnly) {
    log(`kernelgate: identity: ${v.kernel}/${v.variant} is not timed: ${HARNESS_ONLY_REASON}`);
  }
  for (const v of verdicts.filter((x) => !x.identical)) {
    log(`kernelgate: identity: ${v.kernel}/${v.variant} is timed: ${v.why}`);
  }
  for (const v of same.filter((x) => x.note !== undefined)) {
    log(`kernelgate: identity: ${v.kernel}/${v.variant} is not timed: ${v.note}`);
  }
  const controls = same.filter((v) => v.control === true);
  for (const v of controls) {
    log(
      `kernelgate: identity: ${v.kernel}/${v.variant} is the A/A control of ${v.kernel}'s timed candidates: ` +
        'timed on its headline case and beside each confirmation (run.time_control: headline)',
    );
  }
  const names = (list: IdentityVerdict[]) => list.map((v) => `${v.kernel}.${v.variant}`).join(',');
  return [
    ...(same.length ? ['--identical', names(same)] : []),
    ...(controls.length ? ['--controls', names(controls)] : []),
    ...(harnessOnly.length ? ['--harness-only', names(harnessOnly)] : []),
  ];
}

/**
 * The harness that would measure the base revision: the base checkout's own when the harness is
 * part of the repository measured (kernelgate's own pull requests), else the same one as the head's.
 */
export function baseHarnessRoot(workspace: string, harnessRoot: string, baseRoot: string): string {
  const rel = relative(workspace, harnessRoot);
  return rel.startsWith('..') || isAbsolute(rel) ? harnessRoot : join(baseRoot, rel);
}

/**
 * `--identical` for a pull request's paired run: the head (the workspace, its build records, the
 * action's harness) against the base revision (its checkout, configuration and build records).
 */
export function pullRequestIdentity(
  head: {
    workspace: string;
    harnessRoot: string;
    config: Config;
    harnessEnv?: Record<string, string>;
    harnessArgs?: string[];
  },
  headBuilds: BuildRecord[],
  base: { base: { root: string }; config: Config; records: BuildRecord[] },
  environment: Environment,
  outDir: string,
  log: { info(line: string): void },
): string[] {
  // A planted fault (KERNELGATE_FAULT, --fault) runs in the head's arm only: the code is the same,
  // what is measured is not.
  const fault = head.harnessEnv?.['KERNELGATE_FAULT'] ?? process.env['KERNELGATE_FAULT'];
  const args = [...head.config.harness.args, ...(head.harnessArgs ?? [])];
  if ((fault ?? '') !== '' || args.some((a) => a.startsWith('--fault'))) {
    log.info(
      'kernelgate: identity: a fault is planted in the head (KERNELGATE_FAULT or --fault): every variant is timed',
    );
    return [];
  }
  // run.time_control: headline needs the confirmations (compare.paired.confirm) to time the
  // control beside; without them the control is timed on every case, as every_case
  const { run, compare } = head.config;
  const headlineControls = run.timeControl === 'headline' && compare.paired.confirm;
  if (run.timeControl === 'headline' && !compare.paired.confirm) {
    log.info(
      'kernelgate: identity: run.time_control: headline needs compare.paired.confirm: the A/A controls are timed on every case',
    );
  }
  return identicalArgs(
    {
      root: head.workspace,
      config: head.config,
      builds: headBuilds,
      harnessRoot: head.harnessRoot,
    },
    {
      root: base.base.root,
      config: base.config,
      builds: base.records,
      harnessRoot: baseHarnessRoot(head.workspace, head.harnessRoot, base.base.root),
    },
    environment,
    outDir,
    (line) => log.info(line),
    headlineControls,
  );
}
