#!/usr/bin/env bash
# The one test command (README, CI): installs what it needs, then runs every check that needs no GPU:
# generated types and dist/ up to date, typecheck, lint (eslint, ruff), the TypeScript tests (including
# nvcc builds of the CUDA kernels and the bundled action against a local GitHub stand-in) and the Python tests
# (harness, planted faults, Triton kernels under TRITON_INTERPRET=1). The adapter tests build and
# run real benchmark tools: Google Benchmark (Debian's libbenchmark-dev) and pytest-benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "npm ci"
npm ci --no-audit --no-fund --loglevel=error

step "Python venv (.venv) with CPU torch and triton"
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
# --retries 0 --timeout 3: the public index may be unreachable; the local mirror answers at once.
.venv/bin/pip install --quiet --disable-pip-version-check --retries 0 --timeout 3 -r requirements-ci.txt
.venv/bin/pip install --quiet --disable-pip-version-check --retries 0 --timeout 3 --no-deps \
  -r requirements-bench.txt

# Debian packages the tests need: installed when missing, or the run stops with the reason.
need_deb() {
  local check=$1 why=$2
  shift 2
  if eval "$check" >/dev/null 2>&1; then return; fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends "$@"; then
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "$@" || {
      echo "scripts/test.sh: cannot install $* with apt-get: $why" >&2
      exit 1
    }
  fi
}

step "Google Benchmark (libbenchmark-dev) for the adapter tests"
need_deb "test -f /usr/include/benchmark/benchmark.h" "the adapter tests need it" libbenchmark-dev g++
# The adapter tests fail, rather than skip, when a tool is missing.
export KERNELGATE_REQUIRE_ADAPTER_TOOLS=1
# The TypeScript tests that need .venv fail, rather than skip, without it (test/support/venv.ts).
export KERNELGATE_REQUIRE_VENV=1

step "Chromium (Debian's) and an emoji font for the browser tests (test/history-dashboard.test.ts, test/report-screens.test.ts)"
need_deb "command -v chromium" "the dashboard and report-screen tests need it" chromium
need_deb "test -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf" \
  "the report screenshots show the verdicts' emoji" fonts-noto-color-emoji
# The browser tests fail, rather than skip, without it (test/support/chromium.ts).
export KERNELGATE_REQUIRE_BROWSER=1

step "generated types match schema/results.schema.json"
npm run --silent gen:types -- --check

step "typecheck"
npx tsc --noEmit

step "lint"
npx eslint .

step "Python lint (ruff check; ruff.toml)"
.venv/bin/ruff check

step "Python annotations (mypy; python/pyproject.toml [tool.mypy])"
(cd python && ../.venv/bin/mypy)

step "dist/ matches the sources"
npm run --silent check-dist

step "TypeScript tests"
npx vitest run

step "Python tests (TRITON_INTERPRET=1, CPU)"
TRITON_INTERPRET=1 .venv/bin/python -m pytest test/python -q
