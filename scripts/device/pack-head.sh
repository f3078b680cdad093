#!/usr/bin/env bash
# Packs what a run on the GPU machine (the device tool) needs into .carry/ (ignored by git; carry
# it: `carry: [".carry"]`): HEAD's tree as a git archive (test/, the example images and the source
# maps left out: the call's tree and its carry travel within 64 MiB), its sha, node (the machine has
# none), the GitHub stand-in (scripts/pack-standin.sh) and the fastjsonschema wheel the harness
# validates its results with (absent from the machine's Python). Run it after the last commit;
# then, there, scripts/device/go.sh. Needs `npm ci` (the stand-in) and a reachable package index
# (the wheel, once).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .carry/whl
git rev-parse HEAD >.carry/head.sha
git archive --format=tar HEAD -- . ':(exclude)test' ':(exclude)docs/examples/*.png' ':(exclude)dist/*.map' |
  xz -T2 -6 >.carry/head.tar.xz
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
