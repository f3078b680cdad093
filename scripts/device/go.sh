#!/usr/bin/env bash
# On the GPU machine (the device tool), in the copy of the checkout, .carry carried
# (scripts/device/pack-head.sh packed it):
#   KG_SHA=$(cat .carry/head.sha) KG_BASELINE_DIR=/tmp/kgstore bash scripts/device/go.sh NAME LIMIT SCENARIO...
# runs scripts/gpu-e2e.sh's SCENARIOs, for at most LIMIT seconds, on HEAD's tree (the call's copy
# of the clean checkout), copied once per machine into /tmp/kgh and kept there while the machine
# stays warm (the build cache, the tunings and the scenarios' commits with it: a later call's pull
# request has the earlier call's last commit as its base). node and fastjsonschema come from
# .carry. Back under $OUT: NAME.log (what the scenarios printed), NAME.gpu.txt (the GPUs and the
# start time) and NAME.tgz (the scenarios' folders: results, reports, action and harness logs).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/.carry
name=${1:?usage: go.sh NAME LIMIT SCENARIO...} limit=${2:?usage: go.sh NAME LIMIT SCENARIO...}
shift 2
out=${OUT:?go.sh runs on the GPU machine, which sets OUT}
mkdir -p /tmp/nb
[[ -x /tmp/nb/node ]] || { xz -dc "$carry/node.xz" >/tmp/nb/node && chmod +x /tmp/nb/node; } || exit 2
export PATH=/tmp/nb:$PATH
# the machine's python3 is a virtualenv's: installed into it (a --user install is refused there)
python3 -c 'import fastjsonschema' 2>/dev/null ||
  python3 -m pip install -q --no-index --no-deps --no-compile "$carry"/whl/fastjsonschema-*.whl ||
  echo "go.sh: fastjsonschema not installed: the harness writes its results unvalidated" >&2
W=/tmp/kgh
if [[ ! -d $W || $(cat /tmp/kgh.sha 2>/dev/null) != $(cat "$carry/head.sha") ]]; then
  # HEAD's tree: the call's copy of the clean checkout (pack-head.sh refuses a dirty one), without
  # test/, the example images and the source maps, nor what .gitignore names (what earlier calls
  # built in the copy: caches, .so files)
  ignores=()
  while IFS= read -r pat; do
    [[ -z $pat || $pat == \#* ]] && continue
    pat=${pat%/}
    [[ $pat == /* ]] && pat=.$pat
    ignores+=("--exclude=$pat")
  done <"$root/.gitignore"
  rm -rf "$W" && mkdir -p "$W" || exit 2
  tar -C "$root" "${ignores[@]}" --exclude=./test --exclude=./.carry --exclude='./docs/examples/*.png' \
    --exclude='./dist/*.map' --exclude=./.git -cf - . | tar -x -C "$W" || exit 2
  cp "$carry/head.sha" /tmp/kgh.sha
  echo "go.sh: unpacked $(cat "$carry/head.sha") into $W"
fi
mkdir -p "$W/.carry" && rm -rf "$W/.carry/standin" && cp -r "$carry/standin" "$W/.carry/standin"
{ nvidia-smi --query-gpu=name,serial,driver_version,power.limit,clocks.max.sm --format=csv; date -u; } \
  >"$out/$name.gpu.txt" 2>&1
timeout "$limit" bash "$W/scripts/gpu-e2e.sh" "/tmp/e2e-$name" "$@" 2>&1 | tee "$out/$name.log"
echo "go.sh: rc=${PIPESTATUS[0]}" | tee -a "$out/$name.log"
tar czf "$out/$name.tgz" -C /tmp "e2e-$name" && ls -la "$out"
