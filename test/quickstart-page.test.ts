// What scripts/gpu-quickstart.sh takes from docs/quickstart.md and from action.yml, read by the
// same helpers it runs (scripts/lib/quickstart-page.mjs, scripts/lib/runner.sh): the page's
// planted tail bug and the gate lines it shows, every input's default as a runner sets it, and
// the entry action.yml names. The script's own run takes over a minute on the CPU (the page's
// example through the action twice): it is not run here (docs/quickstart.md, "On the GPU").
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  blocksOf,
  failingOutput,
  PAGE_PATH,
  plantedEdit,
  writeFiles,
} from '../scripts/lib/quickstart-page.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const blocks = blocksOf(readFileSync(PAGE_PATH, 'utf8'));

it("plants the page's tail bug: its failing step's edit turns the -inf padding into 0", () => {
  const dir = mkdtempSync(join(tmpdir(), 'kg-qs-page-'));
  expect(writeFiles(blocks, dir)).toContain('kernels/softmax/bench.py');
  const bench = join(dir, 'kernels', 'softmax', 'bench.py');
  expect(readFileSync(bench, 'utf8')).toMatch(/^PAD = float\("-inf"\)/m);
  execFileSync('bash', ['-e', '-c', plantedEdit(blocks)], { cwd: dir });
  const planted = readFileSync(bench, 'utf8');
  expect(planted).toMatch(/^PAD = 0\.0 {2}#/m);
  expect(planted).not.toMatch(/^PAD = float\("-inf"\)/m);
});

it('reads the gate lines the page shows for the tail bug: one per tail width', () => {
  const lines = failingOutput(blocks).trim().split('\n');
  expect(lines.map((l) => /W=(\d+):/.exec(l)?.[1])).toEqual(['7', '100', '257']);
  for (const l of lines)
    expect(l).toMatch(/^fail: softmax\/triton_softmax .*: tail correctness FAIL/);
});

it('names the page when it has no failing step to plant', () => {
  const page = '<!-- quickstart:run -->\n```sh\ngit init\n```\n';
  expect(() => plantedEdit(blocksOf(page))).toThrow(
    `${PAGE_PATH}: no step marked 'quickstart:run exit=N' (N > 0) with a sed line`,
  );
  expect(() => failingOutput(blocksOf(page))).toThrow(
    `${PAGE_PATH}: no 'quickstart:output stdout' block after the failing step`,
  );
});

function runnerLib(fn: string): string {
  return execFileSync(
    'bash',
    ['-c', `root="$1"; source "$1/scripts/lib/runner.sh"; ${fn}`, '-', ROOT],
    {
      encoding: 'utf8',
    },
  );
}

it('sets every input of action.yml at its default, as a runner does, and runs its runs.main', () => {
  const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { default?: string }>;
    runs: { main: string };
  };
  const expected = Object.entries(action.inputs)
    .filter(([, i]) => i.default !== undefined && !String(i.default).includes('${{'))
    .map(([name, i]) => `INPUT_${name.toUpperCase()}=${String(i.default)}`);
  expect(runnerLib('action_defaults').trim().split('\n')).toEqual(expected);
  expect(expected.length).toBeGreaterThan(20);
  expect(runnerLib('action_entry').trim()).toBe(join(ROOT, action.runs.main));
});
