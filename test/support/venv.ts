// Tests that run the real harness or a tool from the Python venv (.venv, made by scripts/test.sh:
// CPU torch, triton and the cuobjdump its wheel carries). Without .venv they are skipped, and
// their name says why; CI sets KERNELGATE_REQUIRE_VENV=1 so that there a missing .venv fails them.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe } from 'vitest';

const REPO = resolve(import.meta.dirname, '..', '..');
export const VENV_PYTHON = join(REPO, '.venv', 'bin', 'python');
export const HAVE_VENV = existsSync(VENV_PYTHON);
export const REQUIRE_VENV = process.env['KERNELGATE_REQUIRE_VENV'] === '1';
/** Whether the tests that need .venv run: it is there, or CI requires it (and then they fail). */
export const RUN_VENV_TESTS = HAVE_VENV || REQUIRE_VENV;
export const NO_VENV_REASON =
  'skipped: no .venv here (bash scripts/test.sh makes it, with CPU torch, triton and its cuobjdump)';

/** `describe` for tests that need .venv: skipped with the reason in its name when it is absent. */
export function describeWithVenv(name: string, body: () => void): void {
  if (RUN_VENV_TESTS) describe(name, body);
  else describe.skip(`${name} (${NO_VENV_REASON})`, body);
}
