#!/usr/bin/env bash
# The deep checks of docs/scaling.md on the GPU machine (issue 14), in one command of at most
# 9 minutes. Each step is one kernelgate deep with a time box (--time-box: 45 + 130 + 100 + 40 +
# 100 + 100 s, sized from the H100 recording of 2026-11-24, docs/scaling.md "Times measured"): a
# step that runs out keeps the runs it finished and reports the rest as stopped or not checked;
# `timeout` (the box + 10 s) is only the backstop. Everything under OUTDIR:
#   1. faulty/   memcheck over the planted-fault module (test/fixtures/deep/faulty-config): its
#                oob_store variant writes 4 bytes past its output; the sanitizer must find it and
#                name it (the script prints the finding, and FOUND or MISSED; NOT RUN, and why,
#                when the tree has no test fixtures);
#   2. <tool>/   compute-sanitizer memcheck, racecheck, synccheck and initcheck over every CUDA and
#                Triton variant of the kernels on its kernel's smallest case (or the next it takes;
#                else "not checked" and why), one kernelgate deep per tool;
#   3. ncu/      Nsight Compute's summary of each headline case (the CUDA and Triton variants and
#                the tier reference), the .ncu-rep reports kept.
# Each step's results.json (with its deep section), its log and the report rendered from it, the
# tools' raw output under <step>/deep/, times.txt (wall seconds of each step), exits.txt and
# tools.txt (which compute-sanitizer and ncu, their versions). test/fixtures/deep/README.md says
# which files the tests keep of a recording.
# Usage: scripts/gpu-deep.sh OUTDIR   (node on PATH: docs/gpu-runs.md, "Reproduce"; nvcc,
# compute-sanitizer and ncu from the CUDA toolkit, found on PATH or in /usr/local/cuda/bin)
set -uo pipefail

source "$(dirname "$0")/lib/gpu-run.sh"
gpu_run_start gpu-deep.sh "${1:-}"
jobs=${KG_DEEP_JOBS:-$(($(nproc) / 2 > 8 ? 8 : $(nproc) / 2))}
[[ $jobs -ge 1 ]] || jobs=1

export PATH="$PATH:/usr/local/cuda/bin"
{
  nvidia-smi -L
  for t in compute-sanitizer ncu nvcc; do
    echo "$t: $(command -v "$t" || echo 'not found')"
    command -v "$t" >/dev/null && "$t" --version 2>&1 | tail -n 2
  done
  echo "sanitizer jobs at once: $jobs"
} >"$out/tools.txt" 2>&1
cat "$out/tools.txt"

step() { # name, time box in seconds, kernelgate deep arguments...
  local name=$1 box=$2
  shift 2
  local t0
  t0=$(now)
  timeout --signal=TERM --kill-after=5 "$((box + 10))" node "$root/dist/cli.js" deep \
    --out-dir "$out/$name" --out "$out/$name/report.md" --jobs "$jobs" --time-box "$box" "$@" \
    >"$out/$name.log" 2>&1
  record_step "$name" "$t0" $?
}

# 1. The planted out-of-bounds write (no build: the module's CUDA variant is skipped, said so).
# Its module and config are test fixtures: a tree packed without them cannot run it, and says so.
faulty_config=test/fixtures/deep/faulty-config
faulty_module=test/python/fixtures/kernels/faulty
planted=yes
if [[ -f $faulty_config/kernelgate.yml && -d $faulty_module ]]; then
  PYTHONPATH="$root/$faulty_module${PYTHONPATH:+:$PYTHONPATH}" \
    step faulty 45 --config "$faulty_config" --only faulty --checks memcheck \
    --builds "$out/no-builds.json"
else
  planted=no
  echo "faulty exit not run" >>"$out/exits.txt"
  echo "planted out-of-bounds write: NOT RUN: $faulty_config/kernelgate.yml or $faulty_module is not in this tree (pack test/fixtures and test/python/fixtures with it)" |
    tee "$out/planted.txt" "$out/faulty.log"
fi
[[ $planted == no ]] || node -e '
  const fs = require("fs");
  const path = process.argv[1];
  if (!fs.existsSync(path)) { console.log("planted out-of-bounds write: MISSED (no results: see faulty.log)"); process.exit(0); }
  const runs = (JSON.parse(fs.readFileSync(path, "utf8")).deep || {}).sanitizer || [];
  const oob = runs.find((s) => s.variant === "oob_store");
  const hit = oob && oob.status === "findings" && (oob.findings || []).some((f) => /Invalid __global__ write/.test(f.what));
  console.log(`planted out-of-bounds write: ${hit ? "FOUND" : "MISSED"}: ${JSON.stringify(oob && { status: oob.status, errors: oob.errors, first: (oob.findings || [])[0] })}`);
' "$out/faulty/results.json" | tee "$out/planted.txt"

# 2. The sanitizer over the kernels, a tool a step (the first builds the CUDA variants, cached).
step memcheck 130 --checks memcheck
builds="$root/.kernelgate/build/builds.json"
step racecheck 100 --checks racecheck --builds "$builds"
step synccheck 40 --checks synccheck --builds "$builds"
step initcheck 100 --checks initcheck --builds "$builds"

# 3. Nsight Compute over the headline cases.
step ncu 100 --checks ncu --builds "$builds"

cat "$out/times.txt" "$out/exits.txt"
for s in faulty memcheck racecheck synccheck initcheck ncu; do
  [[ -f "$out/$s/results.json" ]] || { echo "$s: no results (see $s.log)"; continue; }
  node -e '
    const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).deep || {};
    for (const s of d.sanitizer || []) {
      const what = s.status === "skipped" ? `not checked: ${s.reason}` : s.status === "error" ? `did not finish: ${(s.first_lines || "").split("\n")[0]}` : `${s.status} ${s.errors}`;
      const larger = s.status !== "skipped" && s.reason ? ` [${s.case}: ${s.reason}]` : "";
      console.log(`${s.tool} ${s.kernel}/${s.variant}: ${what}${larger}${s.seconds !== undefined ? ` (${s.seconds} s)` : ""}`);
    }
    for (const n of d.ncu || []) console.log(`ncu ${n.kernel}/${n.variant}: ${n.status}${n.status === "ok" ? " " : ": "}${n.status === "ok" ? JSON.stringify(n.metrics) + " " + (n.stalls || []).map((x) => x.reason).join(",") : n.message}`);
  ' "$out/$s/results.json"
done | tee "$out/summary.txt"
