// docs/quickstart.md's marked blocks, read one way for both of their readers: CI's literal run of
// the page (test/quickstart.test.ts) and the run of its worked example through the bundled action
// on the GPU machine (scripts/gpu-quickstart.sh). Plain JavaScript, so that node runs it where
// there is no TypeScript (types: quickstart-page.d.mts).
//   node scripts/lib/quickstart-page.mjs files DIR   writes every file block into DIR
//   node scripts/lib/quickstart-page.mjs run N       prints the Nth (from 1) step marked for CI
//   node scripts/lib/quickstart-page.mjs plant       prints the edit lines (sed) of the first step
//                                                    whose marker expects a failing exit status
//   node scripts/lib/quickstart-page.mjs failing-output   prints the lines the page shows that step
//                                                    printing (its quickstart:output stdout blocks)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PAGE_PATH = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../docs/quickstart.md',
);

/** The page's fenced blocks, each with the marker comment on the line before it (if any). */
export function blocksOf(page) {
  const out = [];
  const fence = /(?:<!-- quickstart:([a-z-]+)(?: ([^\n]*?))? -->\n)?```(\w*)\n([\s\S]*?)```/g;
  for (const m of page.matchAll(fence)) {
    const [, kind, arg = '', lang = '', text = ''] = m;
    if (kind === 'file') out.push({ kind, path: arg, text });
    else if (kind === 'run')
      out.push({ kind, exit: Number(/exit=(\d+)/.exec(arg)?.[1] ?? 0), text });
    else if (kind === 'not-in-ci') out.push({ kind, why: arg, text });
    else if (kind === 'output') out.push({ kind, of: arg, text });
    else out.push({ kind: 'unmarked', lang, text });
  }
  return out;
}

/** Writes every file block of the page into dir (folders made); returns the paths written. */
export function writeFiles(blocks, dir) {
  const written = [];
  for (const b of blocks) {
    if (b.kind !== 'file') continue;
    mkdirSync(dirname(join(dir, b.path)), { recursive: true });
    writeFileSync(join(dir, b.path), b.text);
    written.push(b.path);
  }
  return written;
}

/** The lines of the page's first failing step that edit the repository: its planted bug. */
export function plantedEdit(blocks) {
  const step = blocks.find((b) => b.kind === 'run' && b.exit !== 0);
  const lines = step ? step.text.split('\n').filter((l) => /^sed\s/.test(l)) : [];
  if (lines.length === 0)
    throw new Error(`${PAGE_PATH}: no step marked 'quickstart:run exit=N' (N > 0) with a sed line`);
  return lines.join('\n') + '\n';
}

/** The lines the page shows its first failing step printing (the stdout blocks after it). */
export function failingOutput(blocks) {
  const at = blocks.findIndex((b) => b.kind === 'run' && b.exit !== 0);
  const lines = [];
  for (const b of at < 0 ? [] : blocks.slice(at + 1)) {
    if (b.kind === 'run') break;
    if (b.kind === 'output' && b.of === 'stdout')
      lines.push(...b.text.split('\n').filter((l) => l.trim()));
  }
  if (lines.length === 0)
    throw new Error(`${PAGE_PATH}: no 'quickstart:output stdout' block after the failing step`);
  return lines.join('\n') + '\n';
}

function main(argv) {
  const blocks = blocksOf(readFileSync(PAGE_PATH, 'utf8'));
  const [command, arg] = argv;
  if (command === 'files' && arg) {
    writeFiles(blocks, arg);
  } else if (command === 'run' && /^[1-9]\d*$/.test(arg ?? '')) {
    const step = blocks.filter((b) => b.kind === 'run')[Number(arg) - 1];
    if (!step) throw new Error(`${PAGE_PATH}: no step ${arg} marked 'quickstart:run'`);
    process.stdout.write(step.text);
  } else if (command === 'plant') {
    process.stdout.write(plantedEdit(blocks));
  } else if (command === 'failing-output') {
    process.stdout.write(failingOutput(blocks));
  } else {
    process.stderr.write('usage: quickstart-page.mjs files DIR | run N | plant | failing-output\n');
    process.exit(2);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
