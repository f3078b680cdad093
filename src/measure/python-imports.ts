// The repository files a kernel's Python module imports, found statically and conservatively: every
// `import`/`from … import` statement of every file reached (inside functions and string literals
// too: a script run by `python -c` imports as well), resolved the way the kernel workers' sys.path
// resolves them (the checkout first). A name that is no file of the repository is a library's (the
// environment's); a name the repository holds only in part, a relative import that leads nowhere,
// or an import made at run time (importlib, __import__, exec, sys.path edits) is unresolved: the
// caller must then not call the module identical to anything.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export interface ImportClosure {
  /** repository files (relative to the root, '/'-separated) the module runs, itself included */
  files: string[];
  /** why the closure is not certain: 'kernels/x.py:3: importlib' (empty when it is) */
  unresolved: string[];
}

interface Statement {
  line: number;
  /** dotted module ('' for `from . import x`) */
  module: string;
  /** leading dots of a relative import */
  level: number;
  /** the names after `from … import` (empty for `import a.b`) */
  names: string[];
}

/** What makes an import depend on values only the running program knows. */
const DYNAMIC: [RegExp, string][] = [
  [/\b__import__\b/, '__import__'],
  [/\bimportlib\b/, 'importlib'],
  [/\bimport_module\b/, 'import_module'],
  [/\brunpy\b/, 'runpy'],
  [/\bpkgutil\b/, 'pkgutil'],
  [/\bSourceFileLoader\b|\bspec_from_file_location\b/, 'a module loaded from a file'],
  [/(?<![.\w])exec\s*\(/, 'exec()'],
  [/(?<![.\w])eval\s*\(/, 'eval()'],
  [
    /\bsys\s*\.\s*path\s*(?:\.\s*(?:insert|append|extend|remove|pop|clear)\b|\[[^\]]*\]\s*=|\+=|=(?!=))/,
    'sys.path changed',
  ],
];

const DOTTED = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/;

/** Physical lines joined into logical ones (backslash continuations, open parentheses). */
function logicalLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let joined = lines[i]!;
    while (i + 1 < lines.length && (/\\$/.test(joined) || openParen(joined))) {
      joined = joined.replace(/\\$/, '') + ' ' + lines[++i]!;
      if (i - start > 50) break;
    }
    out.push({ line: start + 1, text: joined });
  }
  return out;
}

/** An import statement's name list left open: `from a import (x,` */
function openParen(text: string): boolean {
  const m = /\bimport\s*\(([^)]*)$/.exec(text);
  return m !== null;
}

function firstToken(part: string): string {
  return part.trim().replace(/^\(/, '').trim().split(/\s+/)[0] ?? '';
}

/** The import statements of a Python file, wherever they stand. */
export function importStatements(text: string): { statements: Statement[]; dynamic: string[] } {
  const statements: Statement[] = [];
  const dynamic: string[] = [];
  for (const { line, text: l } of logicalLines(text)) {
    for (const [pattern, what] of DYNAMIC) if (pattern.test(l)) dynamic.push(`${line}: ${what}`);
    for (const piece of l.split(/[;:]/)) {
      const from = /^\s*from\s+(\.*)([\w.]*)\s+import\s+(.+)$/.exec(piece);
      if (from) {
        const names = from[3]!
          .replace(/[()]/g, ' ')
          .split(',')
          .map(firstToken)
          .filter((n) => /^[A-Za-z_]\w*$/.test(n));
        const module = from[2]!;
        if (module === '' || DOTTED.test(module)) {
          statements.push({ line, module, level: from[1]!.length, names });
        }
        continue;
      }
      const plain = /^\s*import\s+(.+)$/.exec(piece);
      if (!plain) continue;
      for (const part of plain[1]!.split(',')) {
        const module = firstToken(part);
        if (DOTTED.test(module)) statements.push({ line, module, level: 0, names: [] });
      }
    }
  }
  return { statements, dynamic };
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
const isFile = (p: string) => existsSync(p) && statSync(p).isFile();

/** An extension module `name` in `dir` (name.so, name.cpython-312-x86_64-linux-gnu.so, .pyd). */
function extensionOf(dir: string, name: string): string | undefined {
  if (!isDir(dir)) return undefined;
  const found = readdirSync(dir).find(
    (f) => f.startsWith(`${name}.`) && /\.(so|pyd)$/.test(f) && isFile(join(dir, f)),
  );
  return found === undefined ? undefined : join(dir, found);
}

type Resolved = { files: string[]; ok: true; package?: string } | { ok: false; why: string };

/**
 * The files that importing `parts` (a dotted module below `dir`) runs: each package's
 * `__init__.py` on the way and the module itself. `package`: the module's folder when it is a
 * package (its names may be submodules).
 */
function resolveBelow(dir: string, parts: string[], shown: string): Resolved {
  const files: string[] = [];
  let at = dir;
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1;
    const folder = join(at, part);
    if (isDir(folder)) {
      if (isFile(join(folder, '__init__.py'))) files.push(join(folder, '__init__.py'));
      at = folder;
      if (last) return { ok: true, files, package: folder };
      continue;
    }
    const file = isFile(`${folder}.py`) ? `${folder}.py` : extensionOf(at, part);
    if (file !== undefined && last) return { ok: true, files: [...files, file] };
    return {
      ok: false,
      why: `${shown}: ${file === undefined ? 'no such module in the repository' : `${part} is a module, not a package`}`,
    };
  }
  return { ok: true, files };
}

/** Whether a top-level name is the repository's (the checkout is first on the workers' path). */
function inRepository(root: string, top: string): boolean {
  return isDir(join(root, top)) || isFile(join(root, `${top}.py`)) || !!extensionOf(root, top);
}

/** The files one statement of `file` runs, or why they cannot be known. */
function resolveStatement(root: string, file: string, s: Statement): Resolved {
  let dir = root;
  const parts = s.module === '' ? [] : s.module.split('.');
  const shown = `${'.'.repeat(s.level)}${s.module}`;
  if (s.level > 0) {
    dir = dirname(file);
    for (let up = 1; up < s.level; up++) dir = dirname(dir);
    if (relative(root, dir).startsWith('..')) {
      return { ok: false, why: `${shown}: above the repository` };
    }
  } else if (!inRepository(root, parts[0]!)) {
    return { ok: true, files: [] };
  }
  const module: Resolved = parts.length
    ? resolveBelow(dir, parts, shown)
    : { ok: true, files: [], package: dir };
  if (!module.ok || module.package === undefined) return module;
  // `from package import name`: a name may be a submodule of the package
  const files = [...module.files];
  for (const name of s.names) {
    if (isDir(join(module.package, name)) || isFile(join(module.package, `${name}.py`))) {
      const sub = resolveBelow(module.package, [name], `${shown}.${name}`);
      if (!sub.ok) return sub;
      files.push(...sub.files);
    }
  }
  return { ok: true, files };
}

/**
 * Every repository file the dotted `module` (a manifest's `module:`) runs when imported from the
 * checkout at `root`, and what in them could not be resolved with certainty.
 */
export function importClosure(root: string, module: string): ImportClosure {
  const entry = DOTTED.test(module)
    ? resolveBelow(root, module.split('.'), module)
    : ({ ok: false, why: `module ${JSON.stringify(module)} is not a dotted name` } as const);
  return entry.ok ? closureOf(root, entry.files, []) : closureOf(root, [], [entry.why]);
}

/**
 * The repository files (relative to `root`) and every repository file they import, followed to the
 * end: a variant's own files (`owns`) and what they run.
 */
export function fileImportClosure(root: string, files: string[]): ImportClosure {
  return closureOf(
    root,
    files.map((f) => join(root, f)),
    [],
  );
}

function closureOf(root: string, start: string[], unresolved: string[]): ImportClosure {
  const seen = new Set<string>();
  const queue: string[] = [];
  const rel = (p: string) => relative(root, p).split('\\').join('/');
  const add = (files: string[]) => {
    for (const f of files) {
      if (!seen.has(f)) {
        seen.add(f);
        queue.push(f);
      }
    }
  };
  add(start);
  while (queue.length) {
    const file = queue.shift()!;
    if (!file.endsWith('.py')) continue;
    const { statements, dynamic } = importStatements(readFileSync(file, 'utf8'));
    for (const d of dynamic) unresolved.push(`${rel(file)}:${d}`);
    for (const s of statements) {
      const got = resolveStatement(root, file, s);
      if (got.ok) add(got.files);
      else unresolved.push(`${rel(file)}:${s.line}: ${got.why}`);
    }
  }
  return { files: [...seen].map(rel).sort(), unresolved };
}
