#!/usr/bin/env bash
# The two-GPU proof of docs/scaling.md on a machine with two GPUs (issue 14):
#   1. the whole kernel set on GPU 0 alone (kernelgate run), stored as main's baseline;
#   2. the same set split into two shards balanced by step 1's timings (kernelgate run --shard),
#      shard 1 on GPU 0 and shard 2 on GPU 1 at the same time (CUDA_VISIBLE_DEVICES per shard);
#   3. the shards merged (kernelgate merge) and judged against step 1; both runs' verdicts judged
#      alone, side by side.
# Everything goes under OUTDIR: each step's results, logs and report, and times.txt with the wall
# seconds of step 1 and of step 2 (both shards, start to the last one's end).
# The other way to use two GPUs, one run whose harness measures on both (python/kernelgate_harness/lanes.py),
# is recorded by scripts/gpu-lanes.sh OUTDIR.
# Usage: scripts/gpu-scale.sh OUTDIR   (node on PATH: docs/gpu-runs.md, "Reproduce")
set -uo pipefail

source "$(dirname "$0")/lib/gpu-run.sh"
gpu_run_start gpu-scale.sh "${1:-}"
store=$out/store
nvidia-smi -L >"$out/gpus.txt" 2>&1
if [[ $(grep -c '^GPU ' "$out/gpus.txt") -lt 2 ]]; then
  echo "gpu-scale: needs two GPUs; nvidia-smi -L says:" >&2
  cat "$out/gpus.txt" >&2
  exit 2
fi


# 1. One GPU, the whole set: the baseline whose timings balance the split.
t0=$(now)
CUDA_VISIBLE_DEVICES=0 kg run --out-dir "$out/one" --baseline-dir "$store" --branch main \
  --save-baseline --out "$out/one/report.md" >"$out/one.log" 2>&1
echo "one exit $?" >"$out/exits.txt"
t1=$(now)

# 2. Two shards at once, one per GPU.
CUDA_VISIBLE_DEVICES=0 kg run --shard 1/2 --out-dir "$out/shard-1" --baseline-dir "$store" \
  --branch main >"$out/shard-1.log" 2>&1 &
p1=$!
CUDA_VISIBLE_DEVICES=1 kg run --shard 2/2 --out-dir "$out/shard-2" --baseline-dir "$store" \
  --branch main >"$out/shard-2.log" 2>&1 &
p2=$!
wait $p1
echo "shard-1 exit $?" >>"$out/exits.txt"
wait $p2
echo "shard-2 exit $?" >>"$out/exits.txt"
t2=$(now)

# 3. Merged, judged against step 1 (the same code: SAME expected), and both judged alone.
kg merge "$out/shard-1" "$out/shard-2" --shards 2 --out-dir "$out/merged" \
  --baseline-dir "$store" --branch main --out "$out/merged/report-vs-one.md" >"$out/merge.log" 2>&1
echo "merge exit $?" >>"$out/exits.txt"
kg report --results "$out/one/results.json" --out "$out/one/report-alone.md" >"$out/one-alone.txt" 2>&1
kg report --results "$out/merged/results.json" --out "$out/merged/report-alone.md" \
  >"$out/merged-alone.txt" 2>&1

{
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "one_gpu_s %.1f\n", b - a }'
  awk -v a="$t1" -v b="$t2" 'BEGIN { printf "two_gpu_shards_s %.1f\n", b - a }'
} >"$out/times.txt"
cat "$out/times.txt" "$out/exits.txt" "$out/one-alone.txt" "$out/merged-alone.txt"
