// The shape of src/ (docs/architecture.md): one folder per stage; each folder's index.ts is its
// only door (a module imports another folder's modules only through that folder's index.ts); and
// the folders stand in one layer order, every import pointing down (issue 29).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = 'src';
const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => join(SRC, f));
// A folder with an index.ts is a door; the innermost one around a file is its own.
const doors = files
  .filter((f) => f.endsWith('/index.ts') && f !== join(SRC, 'index.ts'))
  .map(dirname);
const folderOf = (file: string) =>
  doors.filter((d) => file.startsWith(d + '/')).sort((a, b) => b.length - a.length)[0];

/**
 * The layer order of src/ (docs/architecture.md), bottom to top: a folder imports only folders of
 * the layers below its own, type imports included; the folders of one layer do not import each
 * other. src/index.ts, the bundle's entry, is above every layer. No exceptions.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['lib'],
  ['results'],
  ['formats'],
  ['config'],
  ['store', 'publish'],
  ['judge'],
  ['adapters'],
  ['measure', 'history', 'shard'],
  ['deep'],
  ['report'],
  ['pipeline'],
  ['action', 'cli'],
];

/** The order as docs/architecture.md writes it. */
function orderLine(): string {
  return LAYERS.map((layer) => layer.map((f) => `\`${f}\``).join(' / ')).join(' → ');
}

/** Every relative module a module's text imports: import, import type, export … from, import(). */
function importsIn(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*(['"])(\.{1,2}\/[^'"]+)\1/g)].map(
    (m) => m[2]!,
  );
}

function importsOf(file: string): string[] {
  return importsIn(readFileSync(file, 'utf8'));
}

/** The folder of src/ a path is in; '' for src/index.ts; undefined outside src/. */
function topFolder(path: string): string | undefined {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return undefined;
  const parts = rel.split(sep);
  return parts.length === 1 ? '' : parts[0];
}

/** The rule an import of `file` breaks, in words; undefined when it keeps the order. */
function layerRuleBroken(file: string, spec: string): string | undefined {
  const target = normalize(join(dirname(file), spec));
  const [from, to] = [topFolder(file), topFolder(target)];
  if (from === undefined || to === undefined || from === to || from === '') return undefined;
  const where = `${file} imports ${spec}`;
  if (to === '') return `${where}: src/index.ts is the bundle's entry, above every layer`;
  const layerOf = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));
  for (const folder of [from, to]) {
    if (layerOf(folder) < 0) {
      return `${where}: ${folder}/ is in no layer (add it to LAYERS in test/architecture.test.ts and to docs/architecture.md)`;
    }
  }
  const [mine, theirs] = [layerOf(from), layerOf(to)];
  if (theirs < mine) return undefined;
  if (theirs === mine) {
    return `${where}: ${from}/ and ${to}/ are in one layer, and neither imports the other`;
  }
  const below = LAYERS.slice(0, mine)
    .flat()
    .map((f) => `${f}/`)
    .join(', ');
  return `${where}: ${from}/ is below ${to}/ (${from}/ may import ${below})`;
}

describe('src/', () => {
  it('holds only the entry point at its top; every other module is in a stage folder', () => {
    expect(readdirSync(SRC).filter((f) => f.endsWith('.ts'))).toEqual(['index.ts']);
  });

  it('has each folder drawn in docs/architecture.md', () => {
    const architecture = readFileSync('docs/architecture.md', 'utf8');
    const undrawn = doors.filter((d) => !architecture.includes(`| \`${d}/\` |`));
    expect(undrawn).toEqual([]);
  });

  it("reaches another folder's modules only through its index.ts", () => {
    const breaches: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(file)) {
        if (!spec.endsWith('.js')) continue; // JSON data and schemas
        const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
        const door = folderOf(target);
        if (door === undefined || file.startsWith(door + '/')) continue;
        if (target !== join(door, 'index.ts')) {
          breaches.push(`${file} imports ${spec} (use ${relative(dirname(file), door)}/index.js)`);
        }
      }
    }
    expect(breaches).toEqual([]);
  });

  it('keeps the modules of publish/ one way: what sticky.ts and publish.ts share is in marker.ts', () => {
    // Inside a folder the layer order says nothing; these two modules once imported each other.
    const order = ['src/publish/marker.ts', 'src/publish/sticky.ts', 'src/publish/publish.ts'];
    const against: string[] = [];
    for (const [i, file] of order.entries()) {
      for (const spec of importsOf(file)) {
        const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
        if (order.indexOf(target) > i) against.push(`${file} imports ${spec}`);
      }
    }
    expect(against).toEqual([]);
  });
});

describe('the layer order', () => {
  it('places every folder of src/ in one layer, and no folder that is not there', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect([...LAYERS.flat()].sort()).toEqual(folders);
  });

  it('is the order docs/architecture.md gives', () => {
    const architecture = readFileSync('docs/architecture.md', 'utf8');
    expect(architecture).toContain(orderLine());
  });

  it('holds for every import of src/, type imports and dynamic import() included', () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(file)) {
        const rule = layerRuleBroken(file, spec);
        if (rule !== undefined) broken.push(rule);
      }
    }
    expect(broken).toEqual([]);
  });

  it('finds every kind of import in a module', () => {
    const text = [
      "import { a } from '../lib/index.js';",
      "import type { B } from '../cli/index.js';",
      'import {\n  c,\n  type D,\n} from "../judge/index.js";',
      "export * from './e.js';",
      "export { f } from '../report/index.js';",
      "const g = await import('../pipeline/index.js');",
      "import '../results/index.js';",
      "import schema from '../../schema/config.schema.json' with { type: 'json' };",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    expect(importsIn(text)).toEqual([
      '../lib/index.js',
      '../cli/index.js',
      '../judge/index.js',
      './e.js',
      '../report/index.js',
      '../pipeline/index.js',
      '../results/index.js',
      '../../schema/config.schema.json',
    ]);
  });

  it('names the file, the import and the rule an import breaks', () => {
    expect(layerRuleBroken('src/judge/gate.ts', '../cli/index.js')).toBe(
      'src/judge/gate.ts imports ../cli/index.js: judge/ is below cli/ (judge/ may import lib/, results/, formats/, config/, store/, publish/)',
    );
    expect(layerRuleBroken('src/measure/doctor/checks-gpu.ts', '../../history/index.js')).toBe(
      'src/measure/doctor/checks-gpu.ts imports ../../history/index.js: measure/ and history/ are in one layer, and neither imports the other',
    );
    expect(layerRuleBroken('src/lib/exec.ts', '../index.js')).toBe(
      "src/lib/exec.ts imports ../index.js: src/index.ts is the bundle's entry, above every layer",
    );
    expect(layerRuleBroken('src/nightly/plan.ts', '../lib/index.js')).toBe(
      'src/nightly/plan.ts imports ../lib/index.js: nightly/ is in no layer (add it to LAYERS in test/architecture.test.ts and to docs/architecture.md)',
    );
    expect(layerRuleBroken('src/cli/cli.ts', '../judge/index.js')).toBeUndefined();
    expect(layerRuleBroken('src/judge/gate.ts', './coverage.js')).toBeUndefined();
    expect(
      layerRuleBroken('src/config/config.ts', '../../schema/config.schema.json'),
    ).toBeUndefined();
    expect(layerRuleBroken('src/index.ts', './action/index.js')).toBeUndefined();
  });
});

interface SizeException {
  lines?: number;
  functionLines?: number;
  reason: string;
}

describe('size limits (eslint max-lines, max-lines-per-function)', async () => {
  const configPath = '../eslint.config.js';
  const { SIZE_EXCEPTIONS } = (await import(configPath)) as {
    SIZE_EXCEPTIONS: Record<string, SizeException>;
  };
  const architecture = readFileSync('docs/architecture.md', 'utf8');

  it('names every exception, with its reason, in docs/architecture.md', () => {
    const unnamed = Object.keys(SIZE_EXCEPTIONS).filter((f) => !architecture.includes(`\`${f}\``));
    expect(unnamed).toEqual([]);
  });

  it('keeps no exception a file no longer needs', async () => {
    const { ESLint } = await import('eslint');
    const tseslint = (await import('typescript-eslint')).default;
    const rule = (max: number): ['error', object] => [
      'error',
      { max, skipBlankLines: true, skipComments: true },
    ];
    const eslint = new ESLint({
      overrideConfigFile: true,
      overrideConfig: [
        {
          files: ['**/*.ts'],
          languageOptions: { parser: tseslint.parser },
          rules: { 'max-lines': rule(400), 'max-lines-per-function': rule(80) },
        },
      ],
    });
    const stale: string[] = [];
    for (const [file, exception] of Object.entries(SIZE_EXCEPTIONS)) {
      const [result] = await eslint.lintFiles([file]);
      const rules = new Set(result?.messages.map((m) => m.ruleId));
      if (exception.lines && !rules.has('max-lines')) stale.push(`${file}: lines`);
      if (exception.functionLines && !rules.has('max-lines-per-function')) {
        stale.push(`${file}: functionLines`);
      }
    }
    expect(stale).toEqual([]);
  }, 60_000);
});
