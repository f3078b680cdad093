// The one list of input formats (src/formats/index.ts): no format name written anywhere else in
// src/, every file format read from its own tool's output in test/fixtures/adapters/<format>/
// with what it declares it gives, and `kernelgate adapt --formats` printing the list's table.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adaptFile, resultsOf } from '../src/adapters/index.js';
import {
  adapterFormats,
  adapterList,
  type Adapter,
  formatsTable,
  sniffFormat,
} from '../src/formats/index.js';
import { validateResults } from '../src/results/index.js';
import { capture } from './support/cli-io.js';
import { runCli } from '../src/cli/index.js';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const FIXTURES = join(import.meta.dirname, 'fixtures', 'adapters');

function filesUnder(dir: string, ext: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, ext);
    return path.endsWith(ext) ? [path] : [];
  });
}

/** A module's text without its comments (a comment may name a tool in prose). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');

/**
 * Where a module writes a format's name: as a string ('gbench', "nvbench", `pytest-benchmark`) or as
 * an object key (gbench: …). `command` is also the name of a kind (kind: 'command') and of fields
 * of the results and the config (run.command, BenchmarkConfig['command'], a build's `command`), so
 * only its '…' and "…" strings count, and not where they are a kind or an index.
 */
function formatNamesIn(text: string, formats: readonly string[]): string[] {
  const found: string[] = [];
  code(text)
    .split('\n')
    .forEach((line, i) => {
      for (const name of formats) {
        const command = name === 'command';
        const quotes = command ? `['"]` : '[\'"`]';
        const quoted = new RegExp(
          `(kind\\s*(?::|===|!==)\\s*|\\[)?(${quotes})${escape(name)}\\2`,
          'g',
        );
        const key = new RegExp(`(?:^|[{,(]\\s*|^\\s+)${escape(name)}\\s*:(?!:)`);
        const asString = [...line.matchAll(quoted)].some((m) => !command || m[1] === undefined);
        const asKey = !command && key.test(line);
        if (asString || asKey) found.push(`line ${i + 1}: ${name}: ${line.trim()}`);
      }
    });
  return found;
}

describe('the list of formats is the one place their names are written', () => {
  it('finds a name written as a string or a key, and not in prose, a longer string or a kind', () => {
    const names = ['gbench', 'pytest-benchmark', 'command'];
    expect(
      formatNamesIn(
        [
          'const T = { nvbench: 1, gbench: 2 };',
          "if (format === 'pytest-benchmark') x();",
          'const m = `format "command"`;',
          '// gbench: a comment that names the tool',
          "const code = 'adapter.gbench.no_samples';",
          "if (a.kind === 'command') run({ command: 'x' });",
          "let c: BenchmarkConfig['command']; const t = 'a `command`';",
        ].join('\n'),
        names,
      ),
    ).toEqual([
      'line 1: gbench: const T = { nvbench: 1, gbench: 2 };',
      "line 2: pytest-benchmark: if (format === 'pytest-benchmark') x();",
      'line 3: command: const m = `format "command"`;',
    ]);
  });

  it('no module of src/ names a format but the list and, for its own name, its parser', () => {
    const formats = adapterFormats();
    const offences = filesUnder(SRC, '.ts').flatMap((file) => {
      const rel = relative(ROOT, file).split(sep).join('/');
      if (rel === 'src/formats/index.ts' || rel === 'src/results/results-types.ts') return [];
      const own = formats.filter((f) => rel === `src/formats/${f}.ts`);
      const others = formats.filter((f) => !own.includes(f));
      return formatNamesIn(readFileSync(file, 'utf8'), others).map((hit) => `${rel} ${hit}`);
    });
    expect(offences).toEqual([]);
  });

  it('names each format once, in one module of its own', () => {
    const formats = adapterFormats();
    expect(new Set(formats).size).toBe(formats.length);
    for (const format of formats) {
      expect(existsSync(join(SRC, 'formats', `${format}.ts`)), format).toBe(true);
    }
  });
});

const fileFormats = adapterList().filter(
  (a): a is Extract<Adapter, { kind: 'file' }> => a.kind === 'file',
);

describe.each(fileFormats.map((a) => [a.format, a] as const))(
  "%s: its own tool's output, test/fixtures/adapters/<format>/",
  (format, adapter) => {
    const dir = join(FIXTURES, format);
    const files = existsSync(dir) ? filesUnder(dir, '.json') : [];

    it('is there, with where it came from (the fixtureSource of its module, or a README)', () => {
      expect(files.length, `no JSON under ${relative(ROOT, dir)}`).toBeGreaterThan(0);
      const own = join(dir, 'README.md');
      const shared = readFileSync(join(FIXTURES, 'README.md'), 'utf8');
      const said = (adapter.fixtureSource ?? '').trim().length > 0;
      expect(said || existsSync(own) || shared.includes(`\`${format}/`)).toBe(true);
    });

    it.each(files.map((f) => [relative(FIXTURES, f), f] as const))(
      '%s: its tool recognised, cases a results document accepts, as the capabilities declare',
      (shown, file) => {
        if (adapter.sniff)
          expect(sniffFormat(readFileSync(file, 'utf8'), fileFormats)).toBe(format);
        const kernel = adaptFile(adapter, file, { kernel: 'k', shown });
        const results = validateResults(resultsOf([kernel]), shown);
        expect(results.cases.length).toBeGreaterThan(0);
        const info = results.kernels[0]?.adapter;
        expect(info?.format).toBe(format);
        const { samples, correctness } = adapter.capabilities;
        if (samples !== 'either') expect([samples, 'mixed']).toContain(info?.samples);
        if (correctness === 'none') expect(info?.correctness).toBe('none');
      },
    );
  },
);

describe('kernelgate adapt --formats', () => {
  it("prints the list's table: a row per format, in the list's order, with its declared words", async () => {
    const { out, io } = capture(ROOT);
    expect(await runCli(['adapt', '--formats'], io)).toBe(0);
    expect(out.stdout).toBe(formatsTable());
    const rows = out.stdout.split('\n').slice(2, -1);
    expect(rows.map((r) => /^\| `([^`]+)` \|/.exec(r)?.[1])).toEqual(adapterFormats());
    for (const [row, a] of rows.map((r, i) => [r, adapterList()[i]!] as const)) {
      expect(row.split(/(?<!\\) \| /)).toHaveLength(6);
      expect(row).toContain(a.capabilities.notes.samples.replace(/\|/g, '\\|'));
      expect(
        row.endsWith(a.capabilities.paired ? `${a.capabilities.notes.paired} |` : '| no |'),
      ).toBe(true);
    }
  });
});
