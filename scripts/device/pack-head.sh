#!/usr/bin/env bash
# Packs what a run on the GPU machine (the device tool) needs into .carry/ (ignored by git; carry
# it: `carry: [".carry"]`): HEAD's sha, node (the machine has none), the GitHub stand-in
# (scripts/pack-standin.sh) and the fastjsonschema wheel the harness validates its results with
# (absent from the machine's Python). HEAD's tree itself travels as the call's copy of the
# checkout, which scripts/device/go.sh packs there (a tarball of it here would be a second copy:
# the tracked files and .carry together reached the 64 MiB a call may take on 2026-11-27), so the
# checkout must be clean. Run it after the last commit; then, there, scripts/device/go.sh. Needs
# `npm ci` (the stand-in) and a reachable package index (the wheel, once).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .carry/whl
if [[ -n $(git status --porcelain --untracked-files=normal) ]]; then
  echo "pack-head.sh: the checkout has changes: commit them first (the GPU machine packs the call's copy of it as HEAD's tree)" >&2
  git status --short >&2
  exit 2
fi
git rev-parse HEAD >.carry/head.sha
rm -f .carry/head.tar.xz
# node stripped and at xz's strongest: the tracked files and .carry together fill most of the 64 MiB
if [[ ! -s .carry/node.xz ]]; then
  strip -o .carry/node.stripped "$(command -v node)"
  xz -T2 -9e -c .carry/node.stripped >.carry/node.xz
  rm .carry/node.stripped
fi
[[ -s .carry/standin/standin.mjs ]] || bash scripts/pack-standin.sh
ls .carry/whl/fastjsonschema-*.whl >/dev/null 2>&1 ||
  python3 -m pip download -q --no-deps --only-binary=:all: -d .carry/whl \
    "$(grep -E '^fastjsonschema==' requirements-ci.txt)"
du -sh .carry
echo "HEAD $(cat .carry/head.sha) packed; tracked files and .carry travel together (64 MiB at most)"
# What the call will carry, counted as the device tool counts it (whole blocks per file). Over 64
# MiB the call is refused; the images of docs/examples and dist's source maps are what go.sh leaves
# out of the run's tree anyway, so they may stay behind (2026-11-28, run 145).
kib=$(($(git ls-files -z | xargs -0 du -k -- 2>/dev/null | awk '{s += $1} END {print s + 0}') + $(du -sk .carry | cut -f1)))
if ((kib > 64 * 1024)); then
  echo "pack-head.sh: the tracked files and .carry come to $((kib / 1024)) MiB, over the call's 64: before the call," >&2
  echo "  rm -f docs/examples/*.png dist/*.map   (go.sh leaves them out of the run's tree)" >&2
  echo "  and after it: git checkout -- docs/examples dist" >&2
fi
