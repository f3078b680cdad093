// docs/quickstart.md, followed literally: each file block is written into an empty repository,
// each step marked `quickstart:run` runs there in order (bash, with KERNELGATE set to this checkout
// and the venv's python3 first on PATH, as the page's install step would leave them), with the exit
// status its marker states, and each `quickstart:output` block's lines appear in what the step
// before it wrote. A shell block with no marker fails the test: no step is skipped silently. The
// page is read into blocks by scripts/lib/quickstart-page.mjs, as scripts/gpu-quickstart.sh reads it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { blocksOf, PAGE_PATH } from '../scripts/lib/quickstart-page.mjs';
import { describeWithVenv, VENV_PYTHON } from './support/venv.js';

const ROOT = resolve(import.meta.dirname, '..');
const PAGE = readFileSync(PAGE_PATH, 'utf8');

const blocks = blocksOf(PAGE);

it('marks every block of the page: a file, a step CI runs, a step it does not (and why), or an output', () => {
  expect(blocks.filter((b) => b.kind === 'unmarked')).toEqual([]);
  for (const b of blocks) if (b.kind === 'not-in-ci') expect(b.why.length).toBeGreaterThan(20);
  expect(blocks.filter((b) => b.kind === 'run').length).toBeGreaterThanOrEqual(3);
});

describeWithVenv('docs/quickstart.md, followed step by step', () => {
  const repo = mkdtempSync(join(tmpdir(), 'kg-quickstart-'));
  const ran: { text: string; code: number | null; stdout: string }[] = [];

  beforeAll(() => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KERNELGATE: ROOT,
      PATH: `${dirname(VENV_PYTHON)}:${process.env['PATH']}`,
      GIT_AUTHOR_NAME: 'a team',
      GIT_AUTHOR_EMAIL: 'team@example.com',
      GIT_COMMITTER_NAME: 'a team',
      GIT_COMMITTER_EMAIL: 'team@example.com',
    };
    delete env['TRITON_INTERPRET']; // the page sets it where it needs it
    for (const b of blocks) {
      if (b.kind === 'file') {
        mkdirSync(dirname(join(repo, b.path)), { recursive: true });
        writeFileSync(join(repo, b.path), b.text);
      } else if (b.kind === 'run') {
        const r = spawnSync('bash', ['-e', '-c', b.text], { cwd: repo, env, encoding: 'utf8' });
        ran.push({ text: b.text, code: r.status, stdout: r.stdout + r.stderr });
        expect(r.status, `${b.text}\n${r.stdout}\n${r.stderr}`).toBe(b.exit);
      } else if (b.kind === 'output') {
        const written =
          b.of === 'stdout'
            ? (ran[ran.length - 1]?.stdout ?? '')
            : readFileSync(join(repo, b.of), 'utf8');
        for (const line of b.text.split('\n').filter((l) => l.trim())) {
          expect(written, `${b.of} lacks: ${line}`).toContain(line);
        }
      }
    }
  }, 600_000);

  it('ran every step with the exit status the page states, and gave the reports it shows', () => {
    expect(ran.map((r) => r.code)).toEqual(
      blocks.flatMap((b) => (b.kind === 'run' ? [b.exit] : [])),
    );
    // the page's repository is back as committed: the tail bug was a step of the tour, not left in
    // (its tracked files; Python's bytecode caches are not the page's business)
    expect(
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'kernels'], {
        cwd: repo,
        encoding: 'utf8',
      }),
    ).toBe('');
  });
});
