#!/usr/bin/env bash
# The one test command (README, CI): installs what it needs, then runs every check that needs no GPU:
# generated types and dist/ up to date, typecheck, lint, the TypeScript tests (including nvcc builds
# of the CUDA kernels and the bundled action against a local GitHub stand-in) and the Python tests
# (harness, planted faults, Triton kernels under TRITON_INTERPRET=1).
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

step "generated types match schema/results.schema.json"
npm run --silent gen:types -- --check

step "typecheck"
npx tsc --noEmit

step "lint"
npx eslint .

step "dist/ matches the sources"
npm run --silent check-dist

step "TypeScript tests"
npx vitest run

step "Python tests (TRITON_INTERPRET=1, CPU)"
TRITON_INTERPRET=1 .venv/bin/python -m pytest test/python -q
