#!/usr/bin/env bash
# Probe of the paired runs' position effect (docs/notes/paired-ab.md): paired A/A pull-request runs
# of the GEMM set and of the attention headline cases (S=4096, D=128, not causal), once per
# harness --lead-in mode, through scripts/gpu-e2e.sh. The per-pair data is in each run's
# results.json (cases[].timing.samples_ms and cases[].paired.base_timing.samples_ms, pair i timed
# head first when i is even); scripts/paired-stats.py summarises it.
# Usage: scripts/gpu-probe-lead-in.sh OUTDIR MODE...   (MODE: spin, sample, none)
set -uo pipefail
out=${1:?usage: gpu-probe-lead-in.sh OUTDIR MODE...}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cfg=$root/kernelgate.yml
cp "$cfg" "$out.kernelgate.yml.orig" 2>/dev/null || { mkdir -p "$(dirname "$out")"; cp "$cfg" "$out.kernelgate.yml.orig"; }
for mode in "$@"; do
  sed -i "s|^  args: .*|  args: [--time-cap-s, \"1\", --seeds, \"2\", --lead-in, $mode]|" "$cfg"
  KG_KERNELS=gemm bash "$root/scripts/gpu-e2e.sh" "$out/$mode-gemm" aa
  sed -i "s|^  args: .*|  args: [--time-cap-s, \"1\", --seeds, \"2\", --lead-in, $mode, --case-params, \"S=4096,D=128,causal=false\"]|" "$cfg"
  KG_KERNELS=attention bash "$root/scripts/gpu-e2e.sh" "$out/$mode-attn" aa
done
cp "$out.kernelgate.yml.orig" "$cfg"
