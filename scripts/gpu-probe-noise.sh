#!/usr/bin/env bash
# Probe of the pair noise of the large attention cases (docs/notes/paired-ab.md, run 8): paired A/A
# pull-request runs of the attention kernel's B16 H96 S4096 D128 causal cases (fp16 and bf16, all
# eight variants, one seed) through scripts/gpu-e2e.sh, once per allocator setting, on one machine,
# so a difference between the settings is not a difference between machines.
#   expandable   the harness's default (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
#   cached       PyTorch's default caching allocator (expandable_segments:False)
# The per-pair data is in each run's results.json; scripts/paired-stats.py summarises it.
# Usage: scripts/gpu-probe-noise.sh OUTDIR SETTING...
set -uo pipefail
out=${1:?usage: gpu-probe-noise.sh OUTDIR SETTING...}
shift
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cfg=$root/kernelgate.yml
cp "$cfg" "$out/kernelgate.yml.orig"
sed -i "s|^  args: .*|  args: [--time-cap-s, \"1\", --seeds, \"1\", --case-params, \"S=4096,D=128,causal=true\"]|" "$cfg"
for setting in "$@"; do
  case $setting in
    expandable) alloc=expandable_segments:True ;;
    cached) alloc=expandable_segments:False ;;
    *) echo "unknown setting $setting" >&2; continue ;;
  esac
  PYTORCH_CUDA_ALLOC_CONF=$alloc KG_KERNELS=attention bash "$root/scripts/gpu-e2e.sh" "$out/$setting" aa
done
cp "$out/kernelgate.yml.orig" "$cfg"
