// `kernelgate check`'s half that needs no Python: kernelgate.yml and every kernel.yml loaded one by
// one (so one bad file does not hide the others), then what the schema cannot say about a
// manifest: a tolerance for every dtype its cases use, case keys and values that other fields
// name, numbers written as text, the module's file, tail shapes among the ci_cases. Every problem
// names its file, its field and the bad value, with a fix.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { InputError, showValue } from '../results/index.js';
import {
  CONFIG_FILE_NAME,
  type CaseGroup,
  type Config,
  type KernelManifest,
  type LoadedKernel,
  loadConfig,
  loadKernel,
  parseYaml,
  type Scalar,
} from './config.js';
import { kernelFolders } from './kernel-folders.js';
import { leadingFieldPath, yamlLocator } from './locate.js';

/** One problem: its file (as shown, relative to the root), its place, what is wrong, the fix. */
export interface ConfigProblem {
  file: string;
  line?: number;
  column?: number;
  /** starts with the field, says the value: `cases[0].dtype … (got "bf16")` */
  message: string;
  fix: string;
  /** a warning is reported but does not fail the check */
  level: 'error' | 'warning';
}

export interface StaticCheck {
  /** the repository's root: the files' names are relative to it */
  root: string;
  /** the whole configuration, when every file loaded */
  config: Config | undefined;
  /** the manifests that loaded (their modules can be probed) */
  kernels: LoadedKernel[];
  /** the python kernelgate.yml names (harness.python), as far as it could be read */
  python: string;
  problems: ConfigProblem[];
  /** kernels whose module names no file of the repository: the Python probe decides */
  unresolvedModules: Map<string, ConfigProblem>;
}

const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A fix for a problem the loader found, by what it says. */
export function fixFor(message: string): string {
  if (/must be (a finite )?number \(got "/.test(message))
    return 'write the number without quotes (1e-3, not "1e-3"): quoted, it is text';
  if (message.includes('is not a known field'))
    return 'rename it to one of the known fields listed, or remove it';
  if (/ is required/.test(message)) return 'add the field (docs/configuration.md describes it)';
  if (/must name a variant/.test(message))
    return 'name one of the variants listed, or add a variant of that name to variants';
  if (message.includes('YAML syntax error')) return 'correct the YAML at that line';
  return 'correct the field as docs/configuration.md and docs/kernel-modules.md describe it';
}

function fromInputError(error: InputError): ConfigProblem[] {
  return error.problems.map((line, i) => {
    const cut = line.indexOf(': ');
    const file = cut > 0 ? line.slice(0, cut) : CONFIG_FILE_NAME;
    const message = cut > 0 ? line.slice(cut + 2) : line;
    const site = error.sites[i];
    return {
      file,
      ...(site?.line !== undefined ? { line: site.line, column: site.column ?? 1 } : {}),
      message,
      fix: fixFor(message),
      level: 'error' as const,
    };
  });
}

/** kernels_dir and harness.python as kernelgate.yml writes them, when it cannot be loaded. */
function rawSettings(configPath: string): { kernelsDir: string; python: string } {
  const fallback = { kernelsDir: 'kernels', python: 'python3' };
  try {
    const raw = parseYaml(readFileSync(configPath, 'utf8'), CONFIG_FILE_NAME) as {
      kernels_dir?: unknown;
      harness?: { python?: unknown };
    } | null;
    return {
      kernelsDir: typeof raw?.kernels_dir === 'string' ? raw.kernels_dir : fallback.kernelsDir,
      python: typeof raw?.harness?.python === 'string' ? raw.harness.python : fallback.python,
    };
  } catch {
    return fallback;
  }
}

/** Checks the repository at `root` (kernelgate.yml there, or `configFile`) without Python. */
export function checkStatic(root: string, configFile?: string): StaticCheck {
  const rootDir = resolve(root);
  const problems: ConfigProblem[] = [];
  let config: Config | undefined;
  try {
    config = loadConfig(rootDir, configFile !== undefined ? { configFile } : {});
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    problems.push(...fromInputError(error));
  }
  const settings = config
    ? { kernelsDir: config.kernelsDir, python: config.harness.python }
    : rawSettings(configFile ?? join(rootDir, CONFIG_FILE_NAME));
  const kernelsPath = resolve(rootDir, settings.kernelsDir);
  const kernels: LoadedKernel[] = [];
  const unresolvedModules = new Map<string, ConfigProblem>();
  const seen = new Set(problems.map((p) => `${p.file}: ${p.message}`));
  const folders = statSync(kernelsPath, { throwIfNoEntry: false })?.isDirectory()
    ? kernelFolders(kernelsPath)
    : [];
  for (const folder of folders) {
    try {
      const kernel = loadKernel(rootDir, kernelsPath, folder);
      if (!kernel) continue;
      kernels.push(kernel);
      const found = manifestProblems(kernel, rootDir);
      problems.push(...found.problems);
      if (found.module) unresolvedModules.set(kernel.manifest.name, found.module);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      for (const p of fromInputError(error)) {
        if (!seen.has(`${p.file}: ${p.message}`)) problems.push(p);
      }
    }
  }
  return { root: rootDir, config, kernels, python: settings.python, problems, unresolvedModules };
}

interface Found {
  message: string;
  fix: string;
  level?: 'warning';
}

/** A problem of a loaded manifest at the line of the field its message starts with. */
export function problemAt(
  kernel: LoadedKernel,
  root: string,
  found: { message: string; fix: string; level?: 'error' | 'warning' },
): ConfigProblem {
  const { locate } = yamlLocator(readFileSync(join(root, kernel.file), 'utf8'));
  return {
    file: kernel.file,
    ...locate(leadingFieldPath(found.message)),
    message: found.message,
    fix: found.fix,
    level: found.level ?? 'error',
  };
}

/** A manifest's problems the schema and the loader's cross-checks cannot see, at their lines. */
function manifestProblems(
  kernel: LoadedKernel,
  root: string,
): { problems: ConfigProblem[]; module: ConfigProblem | undefined } {
  const { manifest } = kernel;
  const at = (f: Found) => problemAt(kernel, root, f);
  const found = [
    ...dtypeProblems(manifest),
    ...quotedNumbers(manifest),
    ...caseKeyProblems(manifest),
    ...tailProblems(manifest),
  ];
  const module = moduleProblem(manifest, kernel, root);
  return { problems: found.map(at), module: module && at(module) };
}

type Groups = { field: string; groups: CaseGroup[] }[];

function caseFields(manifest: KernelManifest): Groups {
  return [
    { field: 'cases', groups: manifest.cases },
    { field: 'ci_cases', groups: manifest.ci_cases ?? [] },
  ];
}

function valuesOf(value: Scalar | Scalar[] | undefined): Scalar[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The harness finds a case's tolerance by its dtype: every group needs one with a tolerance. */
function dtypeProblems(manifest: KernelManifest): Found[] {
  const known = Object.keys(manifest.tolerance);
  const found: Found[] = [];
  for (const { field, groups } of caseFields(manifest)) {
    groups.forEach((group, i) => {
      if (group.dtype === undefined) {
        found.push({
          message: `${field}[${i}] has no dtype, so the harness cannot find its tolerance (got keys ${Object.keys(group).join(', ')})`,
          fix: `add dtype: to ${field}[${i}] (one of the tolerance's dtypes: ${known.join(', ')})`,
        });
        return;
      }
      for (const dtype of new Set(valuesOf(group.dtype).map(String))) {
        if (known.includes(dtype)) continue;
        found.push({
          message: `${field}[${i}].dtype names ${dtype}, which has no entry in tolerance (got ${showValue(dtype)}; tolerance has ${known.join(', ')})`,
          fix: `add tolerance.${dtype}: { rel_l2: … } (the relative L2 error allowed against the oracle), or remove ${dtype} from ${field}[${i}].dtype`,
        });
      }
    });
  }
  return found;
}

/** A number in quotes is text: the module would get "4096", the harness a string. */
function quotedNumbers(manifest: KernelManifest): Found[] {
  const found: Found[] = [];
  const check = (field: string, group: CaseGroup | undefined) => {
    for (const [key, value] of Object.entries(group ?? {})) {
      for (const v of valuesOf(value)) {
        if (typeof v === 'string' && NUMBER_TEXT.test(v.trim())) {
          found.push({
            message: `${field}.${key} is the text ${showValue(v)}, not a number (got ${showValue(v)})`,
            fix: `write it without quotes (${key}: ${v.trim()}): quoted, the kernel module receives a string`,
          });
        }
      }
    }
  };
  for (const { field, groups } of caseFields(manifest)) {
    groups.forEach((g, i) => check(`${field}[${i}]`, g));
  }
  manifest.variants.forEach((v, i) => check(`variants[${i}].only`, v.only));
  check('tiers.case', manifest.tiers?.case);
  return found;
}

/** Edit distance with a swap of two neighbours as one edit (dtpye → dtype is 1), for "did you mean". */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The word of `among` that `word` is most likely a typo of: one edit away (two for words of six
 * letters or more), both at least three letters (M, N and K are not typos of each other).
 */
function nearest(word: string, among: Iterable<string>): string | undefined {
  let best: { w: string; d: number } | undefined;
  for (const w of among) {
    if (w === word || word.length < 3 || w.length < 3) continue;
    const d = distance(word.toLowerCase(), w.toLowerCase());
    const limit = Math.min(word.length, w.length) >= 6 ? 2 : 1;
    if (d <= limit && (!best || d < best.d)) best = { w, d };
  }
  return best?.w;
}

function keyFix(key: string, keys: Set<string>, what: string): string {
  const near = nearest(key, keys);
  return near !== undefined
    ? `did you mean ${near}? rename ${key} to ${near}`
    : `use a key ${what} (${[...keys].join(', ')}), or add ${key} to cases`;
}

/** Keys and values other fields name must be those of the cases. */
function caseKeyProblems(manifest: KernelManifest): Found[] {
  const found: Found[] = [];
  const keys = new Set(manifest.cases.flatMap((g) => Object.keys(g)));
  const taken = new Map<string, Set<string>>();
  for (const { groups } of caseFields(manifest)) {
    for (const g of groups) {
      for (const [k, v] of Object.entries(g)) {
        const set = taken.get(k) ?? new Set<string>();
        for (const x of valuesOf(v)) set.add(String(x));
        taken.set(k, set);
      }
    }
  }
  // a key of one group of cases alone that is a near miss of another group's key
  manifest.cases.forEach((g, i) => {
    const others = new Set(manifest.cases.flatMap((o, j) => (j === i ? [] : Object.keys(o))));
    for (const k of Object.keys(g)) {
      const near = others.has(k) ? undefined : nearest(k, others);
      if (near !== undefined && !(near in g)) {
        found.push({
          message: `cases[${i}].${k} is a key no other group of cases has; the others have ${near} (got ${showValue(k)})`,
          fix: `did you mean ${near}? rename ${k} to ${near}`,
        });
      }
    }
  });
  const named = (field: string, group: CaseGroup | undefined, checkValues: boolean) => {
    for (const [k, v] of Object.entries(group ?? {})) {
      if (!keys.has(k)) {
        found.push({
          message: `${field}.${k} is not a key of any group of cases (got ${showValue(k)}; keys of cases: ${[...keys].join(', ')})`,
          fix: keyFix(k, keys, 'the cases have'),
        });
        continue;
      }
      if (!checkValues) continue;
      const values = taken.get(k) ?? new Set<string>();
      for (const x of valuesOf(v)) {
        if (values.has(String(x))) continue;
        const near = nearest(String(x), values);
        found.push({
          message: `${field}.${k} matches no case: no case has ${k} ${showValue(x)} (got ${showValue(x)}; ${k} takes ${[...values].join(', ')})`,
          fix:
            near !== undefined
              ? `did you mean ${near}? write ${k}: ${near}`
              : `use a value ${k} takes in the cases, or add ${showValue(x)} to them`,
        });
      }
    }
  };
  (manifest.ci_cases ?? []).forEach((g, i) => named(`ci_cases[${i}]`, g, false));
  manifest.variants.forEach((v, i) => named(`variants[${i}].only`, v.only, true));
  named('tiers.case', manifest.tiers?.case, true);
  return found;
}

/** Tail shapes: sizes that are not a power of two, where a kernel's last partial block runs. */
function tailProblems(manifest: KernelManifest): Found[] {
  if (!manifest.ci_cases?.length) {
    return [
      {
        message:
          'ci_cases is missing: no small shapes with tails to check the kernel on (got nothing)',
        fix: 'add ci_cases: the cases at small sizes, some not a multiple of the block (e.g. 7, 100, 257), so a kernel that mishandles its last partial block fails (docs/kernel-modules.md)',
        level: 'warning',
      },
    ];
  }
  const sizes = manifest.ci_cases.flatMap((g) =>
    Object.entries(g).flatMap(([k, v]) =>
      k === 'dtype' ? [] : valuesOf(v).filter((x): x is number => Number.isInteger(x)),
    ),
  );
  const tail = sizes.some((n) => n > 2 && (n & (n - 1)) !== 0);
  if (tail || sizes.length === 0) return [];
  return [
    {
      message: `ci_cases has no tail shape: every size is a power of two (got ${[...new Set(sizes)].join(', ')})`,
      fix: 'add a ci_cases group with a size that is not a multiple of the block (e.g. 7, 100, 257): a kernel that mishandles its last partial block passes powers of two',
      level: 'warning',
    },
  ];
}

/** The module's file in the repository (or under src/); undefined when one is there. */
function moduleProblem(
  manifest: KernelManifest,
  kernel: LoadedKernel,
  root: string,
): Found | undefined {
  const parts = manifest.module.split('.');
  const bases = [root, join(root, 'src')];
  const candidates = bases.flatMap((b) => [
    join(b, ...parts) + '.py',
    join(b, ...parts, '__init__.py'),
  ]);
  if (candidates.some((c) => existsSync(c))) return undefined;
  const folder = relative(root, kernel.dir).split(/[\\/]/);
  const suggestions = ['bench', kernel.manifest.name]
    .filter((f) => existsSync(join(kernel.dir, `${f}.py`)))
    .map((f) => [...folder, f].join('.'));
  return {
    message: `module names no file of the repository (got ${showValue(manifest.module)}; looked for ${relative(root, candidates[0]!)})`,
    fix:
      suggestions.length > 0
        ? `did you mean ${suggestions[0]}? module is the dotted path from the repository root`
        : `module is the dotted path from the repository root of the Python file with VARIANTS (e.g. ${[...folder, 'bench'].join('.')} for ${[...folder, 'bench.py'].join('/')})`,
  };
}

/**
 * A --only (or the action's `kernels` input) naming no kernel of the repository and no benchmark
 * of kernelgate.yml: the message that refuses it before anything runs; undefined when all are known.
 */
export function unknownSelection(
  config: Config,
  only: readonly string[] | undefined,
  where: string,
): string | undefined {
  const kernels = config.kernels.map((k) => k.manifest.name);
  const benchmarks = config.benchmarks.map((b) => b.name);
  const bad = only?.find((n) => !kernels.includes(n) && !benchmarks.includes(n));
  if (bad === undefined) return undefined;
  const known =
    kernels.length > 0
      ? `known kernels are ${kernels.join(', ')}`
      : `there is no kernel under ${config.kernelsDir}/`;
  const also = benchmarks.length > 0 ? `; benchmarks: ${benchmarks.join(', ')}` : '';
  return `unknown kernel '${bad}' in ${where}: ${known}${also}`;
}
