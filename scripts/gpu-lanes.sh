#!/usr/bin/env bash
# Several GPUs in one runner (docs/scaling.md, issue 14): one kernelgate run whose harness measures
# on two GPUs at once (python/kernelgate_harness/lanes.py: a worker lane per GPU, each case on one of them,
# both arms of a paired case on the same one), against the same run on one GPU, on a machine with
# two GPUs:
#   1. cold: the whole set on GPU 0 (builds, Triton's compile and autotune caches), stored as
#      main's baseline;
#   2. warm: the whole set on GPU 0 again (timed: the one-GPU figure);
#   3. warm: the whole set on GPUs 0 and 1 (--gpus all, the default), judged against step 1
#      (the same code: SAME expected) and alone; lanes-devices.txt counts the case records each
#      GPU measured (cases[].device).
# Everything under OUTDIR: each step's results, log and report, times.txt (wall seconds of each
# step), exits.txt. Compare one_gpu_warm_s with two_gpu_lanes_s, and the verdicts of steps 2 and 3.
# Usage: scripts/gpu-lanes.sh OUTDIR   (node on PATH: docs/gpu-runs.md, "Reproduce")
set -uo pipefail

source "$(dirname "$0")/lib/gpu-run.sh"
gpu_run_start gpu-lanes.sh "${1:-}"
store=$out/store
nvidia-smi -L >"$out/gpus.txt" 2>&1
if [[ $(grep -c '^GPU ' "$out/gpus.txt") -lt 2 ]]; then
  echo "gpu-lanes: needs two GPUs; nvidia-smi -L says:" >&2
  cat "$out/gpus.txt" >&2
  exit 2
fi
timed() { # name, then the command
  local name=$1 t0
  shift
  t0=$(now)
  "$@" >"$out/$name.log" 2>&1
  record_step "$name" "$t0" $?
}

timed one_gpu_cold env CUDA_VISIBLE_DEVICES=0 node "$root/dist/cli.js" run --out-dir "$out/one-cold" \
  --baseline-dir "$store" --branch main --save-baseline --out "$out/one-cold/report.md"
timed one_gpu_warm env CUDA_VISIBLE_DEVICES=0 node "$root/dist/cli.js" run --out-dir "$out/one-warm" \
  --baseline-dir "$store" --branch main --out "$out/one-warm/report-vs-cold.md"
timed two_gpu_lanes env CUDA_VISIBLE_DEVICES=0,1 node "$root/dist/cli.js" run --out-dir "$out/lanes" \
  --baseline-dir "$store" --branch main --out "$out/lanes/report-vs-cold.md"

kg report --results "$out/one-warm/results.json" --out "$out/one-warm/report-alone.md" \
  >"$out/one-warm-alone.txt" 2>&1
kg report --results "$out/lanes/results.json" --out "$out/lanes/report-alone.md" \
  >"$out/lanes-alone.txt" 2>&1
node -e '
  const doc = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const by = {};
  for (const c of doc.cases) {
    const k = c.device ? `GPU ${c.device.index} ${c.device.name} ${c.device.uuid || ""} ${c.device.pci_bus_id || ""}` : "no device";
    by[k] = (by[k] || 0) + 1;
  }
  for (const [k, n] of Object.entries(by)) console.log(`${k}: ${n} case records`);
  console.log(`stage seconds: ${JSON.stringify(doc.run.stage_seconds)}`);
' "$out/lanes/results.json" >"$out/lanes-devices.txt" 2>&1
grep -hE "cases over 2 GPUs|\] lanes: gpu" "$out/two_gpu_lanes.log" >>"$out/lanes-devices.txt"
cat "$out/times.txt" "$out/exits.txt" "$out/one-warm-alone.txt" "$out/lanes-alone.txt" \
  "$out/lanes-devices.txt"
