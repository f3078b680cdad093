#!/usr/bin/env bash
# The planted-fault module (test/python/fixtures/kernels/faulty: one faulty variant per class the
# harness must catch, beside a correct `good`) through the harness on the GPU, recorded for
# test/fixtures/recorded/faults-h100 and test/python/test_faults_recorded.py. The variants that
# hang or kill the process on purpose (hang, crash) are left out here (they cost their timeouts;
# the CPU tests cover them); poison and device_assert, which kill it as their fault's effect, are in.
# Usage: scripts/gpu-faults.sh OUTDIR
set -uo pipefail
out=${1:?usage: gpu-faults.sh OUTDIR}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
variants=good,unwritten,nan,inf,tail,race,leftover,zeros_fast,unsupported,other_stream,host_sync,poison,writes_input,third_seed,stale,capture_cheat,late_short,device_assert
# The faults that lie to the timing (issue 34): tampering, lazy and aliased outputs, caches, a stale
# graph launch, a race two runs agree on, persisting L2, work on a thread after return, work in
# another process after return (ipc_after_return: a process forked from the variant's helper writes
# the output through CUDA IPC; process_after_return and double_fork_after_return, CPU only, are
# skipped here with their reason).
variants=$variants,timer_patch,stats_patch,lazy_output,aliased_output,memo_identity,memo_content,graph_stale,race_rare,l2_persist,thread_after_return
variants=$variants,ipc_after_return,process_after_return,double_fork_after_return
cd "$root" && PYTHONPATH="$root/python:$root:$root/test/python/fixtures/kernels/faulty" PYTHONUNBUFFERED=1 \
  python3 -m kernelgate_harness --kernels test/python/fixtures/kernels --out "$out/results.json" \
  --variants "$variants" --device cuda --seeds 3 --time-cap-s 0.2 --min-samples 5 \
  >"$out/harness.log" 2>&1
echo "exit $?" >>"$out/harness.log"
