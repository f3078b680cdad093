// The real benchmark tools the adapter tests run: Debian's libbenchmark-dev (Google Benchmark) and
// pytest-benchmark in .venv. scripts/test.sh installs both and sets
// KERNELGATE_REQUIRE_ADAPTER_TOOLS=1, so in CI a missing tool fails these tests instead of
// skipping them; elsewhere they skip.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const VENV_PYTHON = join(REPO, '.venv', 'bin', 'python');
export const ADAPTER_FIXTURES = join(REPO, 'test', 'fixtures', 'adapters');
export const REQUIRE_TOOLS = process.env['KERNELGATE_REQUIRE_ADAPTER_TOOLS'] === '1';

/** Google Benchmark's header and library, as libbenchmark-dev installs them. */
export const HAVE_GBENCH =
  existsSync('/usr/include/benchmark/benchmark.h') &&
  ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib', '/usr/local/lib'].some(
    (dir) => existsSync(join(dir, 'libbenchmark.so')),
  );

function importable(module: string): boolean {
  if (!existsSync(VENV_PYTHON)) return false;
  try {
    execFileSync(VENV_PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const HAVE_PYTEST_BENCHMARK = importable('pytest_benchmark');

/** The g++ line the fixture's README gives, building bench.cc into `out`. */
export function buildGbench(out: string): void {
  execFileSync(
    'g++',
    [
      '-O2',
      '-std=c++17',
      join(ADAPTER_FIXTURES, 'gbench', 'bench.cc'),
      '-o',
      out,
      '-lbenchmark',
      '-lpthread',
    ],
    { stdio: 'pipe' },
  );
}
