// The shape of src/ (docs/architecture.md): one folder per stage, and each folder's index.ts is
// its only door: a module imports another folder's modules only through that folder's index.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
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

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
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

  // Cycles that were broken (issue 29), kept broken: not a whole layer order yet, one rule each.
  // A rule names where imports may not point (a module, or a folder with '/'); type imports count.
  const ONE_WAY: { from: string; to: string; why: string }[] = [
    {
      from: 'src/publish/sticky.ts',
      to: 'src/publish/publish.ts',
      why: 'publish.ts calls sticky.ts; what both need is in marker.ts',
    },
    {
      from: 'src/publish/marker.ts',
      to: 'src/publish/sticky.ts',
      why: 'marker.ts is what sticky.ts and publish.ts share',
    },
    {
      from: 'src/publish/marker.ts',
      to: 'src/publish/publish.ts',
      why: 'marker.ts is what sticky.ts and publish.ts share',
    },
    {
      from: 'src/judge/',
      to: 'src/history/',
      why: "the history reads the judge's verdicts; a record's timing is the contract's Timing",
    },
  ];
  const within = (file: string, place: string) =>
    place.endsWith('/') ? file.startsWith(place) : file === place;

  it('keeps the broken cycles broken: imports point one way', () => {
    const against: string[] = [];
    for (const file of files) {
      for (const spec of importsOf(file)) {
        const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
        for (const rule of ONE_WAY) {
          if (within(file, rule.from) && within(target, rule.to)) {
            against.push(`${file} imports ${spec}: ${rule.why}`);
          }
        }
      }
    }
    expect(against).toEqual([]);
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
