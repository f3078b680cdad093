# Shared by the GPU recording scripts (gpu-deep.sh, gpu-lanes.sh, gpu-scale.sh): source it after
# `set -uo pipefail`, then `gpu_run_start NAME "${1:-}"`: OUTDIR made and absolute in $out, the
# checkout in $root (and the working directory), kg runs the bundled CLI, now prints the time,
# exits.txt and times.txt started empty under $out; `record_step NAME T0 CODE` appends a step's
# exit code and wall seconds to them.
gpu_run_start() {
  local name=$1
  out=${2:?usage: $name OUTDIR}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  cd "$root" || exit 2
  : >"$out/exits.txt"
  : >"$out/times.txt"
}
kg() { node "$root/dist/cli.js" "$@"; }
now() { date +%s.%N; }
record_step() { # name, start time (now), exit code
  echo "$1 exit $3" >>"$out/exits.txt"
  awk -v a="$2" -v b="$(now)" -v n="$1" 'BEGIN { printf "%s_s %.1f\n", n, b - a }' >>"$out/times.txt"
}
