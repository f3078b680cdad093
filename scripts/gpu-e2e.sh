#!/usr/bin/env bash
# The end-to-end proof on a GPU machine: runs the bundled action (dist/index.js) exactly as a
# self-hosted runner would — INPUT_* variables, an event payload, GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY files — against the GitHub REST stand-in on 127.0.0.1, for a sequence of
# scenarios sharing one baseline store:
#   push     push to main: measures everything, stores the baseline
#   aa       pull request of the same code (A/A), timed paired against its base (the same commit):
#            every case SAME expected
#   broken   pull request with a planted correctness fault (KERNELGATE_FAULT=...:wrong)
#   slowed   pull request with a planted slowdown (KERNELGATE_FAULT=...:slow, the kernel twice)
#   slow2    pull request with a planted 2 % slowdown (KERNELGATE_FAULT=...:slow:2), paired
#   slow1    the same with 1 %
#   accept   pull request with a planted ${KG_ACCEPT_PCT:-2} % slowdown of the fault target, judged under
#            policy.fail_on_slower: true (kernelgate.blocking.yml at the root, removed after) and
#            labelled kernelgate-accept by alice (a `labeled` event): SLOWER, accepted, the gate passes
#            (docs/publishing.md, "Blocking a regression, and accepting one")
#   one-variant
#            pull request that changes one variant of one kernel: a commit on top adds a comment to
#            ${KG_ONE_VARIANT_FILE:-kernels/bsr_gemm/triton_bsr.py}; identity before timing on
#            (run.skip_identical, docs/judging.md): the variants identical in base and head are
#            verified, not timed, the references and that kernel's variants are timed. Run it last:
#            its commit stays (later pull requests then differ from their base by the comment)
#   patch-pr pull request that makes the change ${KG_PR_PATCH} describes (a `git diff` relative to
#            the root, e.g. a kernel's new default): two commits on top, the first takes the change
#            out of the packed tree (git apply -R), the second puts it back; the pull request's
#            base is the first, its head the second (the tree as packed), judged as any other
#            (identity before timing on: the variants the change touches are timed, paired)
#   spill    pull request whose head caps attention/cuda_fa2's registers until it spills
#            (-maxrregcount=128 -Xptxas=--override-directive-values in its build flags, its no-spill
#            expectations dropped: kernel.yml in a commit on top); labelled kernelgate-profile: the
#            comment names the spills as the cause and Nsight Compute compares base and head
#            (docs/judging.md, Why it moved). The commit is reverted after the run
#   tunespace
#            pull request whose head narrows triton_fa2's tuning space to one small tiling
#            (CONFIGS in kernels/attention/triton_fa2.py: BLOCK 64×32, 4 warps, 1 stage); labelled
#            kernelgate-profile: SLOWER with the tuning named as the cause. Reverted after the run
# CUDA_VISIBLE_DEVICES, when set, is passed to the action (one GPU of a machine with two).
# aa, broken, slowed, slow2, slow1 time the whole set: aa runs with a copy of the configuration
# that sets run.skip_identical: false (kernelgate.whole-set.yml at the root, removed after), the
# planted faults force it (a fault in the head's arm is never identical).
# Pull requests are paired A/B runs (the action checks out the base commit as a git worktree; on a
# copy of the tree without .git the script first commits it to a fresh repository); KG_PAIRED=false
# judges them against the stored baseline only; KG_PAIRED_CONFIRM=1 sets compare.paired.confirm
# in the checkout's kernelgate.yml (a variant that cleared the threshold is measured again in a
# fresh pair of worker processes; docs/judging.md).
#   nightly  schedule on main: a new commit on top with the same kernel code ("tonight"), timed
#            pair by pair beside the newest good stored run of main (paired A/B; the last good
#            push or night), the nightly report issue; every case SAME expected
#   nightly-slow2, nightly-slow1
#            the same with a planted 2 % / 1 % slowdown in tonight's harness only
#   nightly-retune
#            tonight's tune cache holds the tuner's runner-up tiling for every triton_fa2 case the
#            push before tuned (scripts/plant-retune.py; OUTDIR/nightly-retune/planted.txt): a
#            re-tune, reported as one, not a regression
#   nightly-bisect
#            eight commits on top: the 2nd and 6th touch kernels/attention/NOTES.md, the 4th
#            makes triton_fa2 launch its kernel twice (OUTDIR/planted_sha), the others touch
#            NIGHTS.txt; tonight is the 8th: triton_fa2 SLOWER, bisected to the 4th
# Push and nightly runs record the commit the checkout is at (the store's records must name
# commits of this repository: the nightly checks out the last good one); KG_SHA, the commit the
# copy came from, is written to OUTDIR/source_sha.
# Usage: scripts/gpu-e2e.sh OUTDIR SCENARIO...   (node must be on PATH; see docs/gpu-runs.md)
# Needs .carry/standin/ (the stand-in bundle: scripts/pack-standin.sh) next to the checkout; the
# stand-in is started by scripts/lib/runner.sh, as for scripts/gpu-quickstart.sh.
set -uo pipefail

out=${1:?usage: gpu-e2e.sh OUTDIR SCENARIO...}
shift
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
store=${KG_BASELINE_DIR:-$out/baselines}
fault_target=${KG_FAULT_TARGET:-attention.triton_fa2}
mkdir -p "$store"

# shellcheck source=lib/runner.sh
source "$root/scripts/lib/runner.sh"
standin_start "$out" --pr 42 || exit 2

# The GPU machine gets a copy of the tree without .git: the commit comes in as KG_SHA.
sha=${KG_SHA:-$(git -C "$root" rev-parse --verify -q HEAD 2>/dev/null)}
[[ $sha =~ ^[0-9a-f]{40}$ ]] || sha=0000000000000000000000000000000000000000
repo=kernelgate/kernelgate

event_push() {
  cat <<JSON
{"ref": "refs/heads/main", "after": "$sha", "repository": {"full_name": "$repo", "default_branch": "main", "owner": {"login": "kernelgate"}, "name": "kernelgate"}}
JSON
}
event_schedule() {
  cat <<JSON
{"schedule": "0 3 * * *", "repository": {"full_name": "$repo", "default_branch": "main", "owner": {"login": "kernelgate"}, "name": "kernelgate"}}
JSON
}
# The base of every pull request is the checkout's own code (A/A; faults are planted in the head's
# harness only), so the base commit must hold exactly the tree being run: a copy without .git is
# committed to a fresh repository, and uncommitted changes (the GPU machine's copy of a working
# tree) are committed on top of its HEAD.
if [[ ${KG_PAIRED_CONFIRM:-} == 1 ]]; then
  if grep -q '^  paired:' "$root/kernelgate.yml"; then
    echo "KG_PAIRED_CONFIRM: kernelgate.yml has its own compare.paired; set confirm: true there" >&2
    exit 2
  fi
  sed -i 's/^compare:$/compare:\n  paired: { confirm: true }/' "$root/kernelgate.yml"
  grep -q '^  paired: { confirm: true }$' "$root/kernelgate.yml" || { echo "KG_PAIRED_CONFIRM: no compare: in kernelgate.yml" >&2; exit 2; }
fi
if ! git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  git -C "$root" init -q
fi
if ! git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1 || [[ -n $(git -C "$root" status --porcelain) ]]; then
  git -C "$root" add -A &&
    git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost commit -qm "snapshot for paired A/B"
fi
base_sha=$(git -C "$root" rev-parse --verify -q HEAD 2>/dev/null || echo "$sha")
echo "$sha" >"$out/source_sha"

# Eight commits on top, the 4th a planted regression of triton_fa2 (it launches twice); prints the
# 8th and writes the 4th to OUTDIR/planted_sha.
planted_commits() {
  local i
  for i in 1 2 3 4 5 6 7 8; do
    case $i in
      2|6) echo "touched by commit $i" >>"$root/kernels/attention/NOTES.md" ;;
      4) cat >>"$root/kernels/attention/triton_fa2.py" <<'PY'


# Planted by scripts/gpu-e2e.sh nightly-bisect: every launch runs the kernel twice.
_kg_launch_once = launch


def launch(*args, **kwargs):
    _kg_launch_once(*args, **kwargs)
    return _kg_launch_once(*args, **kwargs)
PY
        ;;
      *) echo "night $i" >>"$root/NIGHTS.txt" ;;
    esac
    git -C "$root" add -A >/dev/null &&
      git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost commit -qm "bisect: commit $i"
    [[ $i == 4 ]] && git -C "$root" rev-parse HEAD >"$out/planted_sha"
  done
  git -C "$root" rev-parse HEAD
}

# A nightly's commit: an empty commit on top of the checkout (the same kernel code as the last
# good run, another commit), printed.
tonight() {
  git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost \
    commit -q --allow-empty -m "tonight: $1" && git -C "$root" rev-parse HEAD
}

# The whole set timed for an A/A pull request: the configuration with run.skip_identical: false,
# as a file at the root (a config file's folder is the root), printed as the config input.
# The configuration file the scenarios start from: KG_CONFIG (a file, or a folder's kernelgate.yml).
config_source() {
  local src="$root/${KG_CONFIG:-.}"
  [[ -d $src ]] && src="$src/kernelgate.yml"
  echo "$src"
}

whole_set_config() {
  local src
  src=$(config_source)
  if grep -q '^run:' "$src" 2>/dev/null; then echo "${KG_CONFIG:-.}"; return; fi
  { cat "$src" 2>/dev/null; printf '\nrun:\n  skip_identical: false\n'; } >"$root/kernelgate.whole-set.yml"
  echo kernelgate.whole-set.yml
}

# A commit on top that changes one variant's file by a comment; prints it.
one_variant_commit() {
  local file=${KG_ONE_VARIANT_FILE:-kernels/bsr_gemm/triton_bsr.py}
  printf '\n# touched by scripts/gpu-e2e.sh one-variant: a comment, the code is the same\n' >>"$root/$file"
  git -C "$root" add "$file" >/dev/null &&
    git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost commit -qm "one variant: a comment in $file" &&
    git -C "$root" rev-parse HEAD
}

# A commit on top that makes attention/cuda_fa2 spill: its registers capped at 128 (it uses 224-254),
# the expectations that would refuse the spilling build dropped; prints it. -maxrregcount alone
# does nothing here: fa2.cu's __launch_bounds__(128, 1) puts a per-kernel limit of 255 in the PTX,
# which wins over the global option (run 63 on the H100: 254 registers, 0 bytes spilled).
# ptxas's --override-directive-values makes the option win. nvcc 13.0 (V13.0.88), sm_90a, the
# action's build command: 128 registers in each of the 8 instantiations; spill stores/loads
# 1196/892 bytes (D 128, stack 480), 560/436 (D 64), 528/408 (D 64 causal); without the flags
# 253/254 (D 128) and 226/224 (D 64) registers, 0 spilled (test/spill-scenario.test.ts).
spill_commit() {
  python3 - "$root/kernels/attention/kernel.yml" <<'PY' || return 2
import re, sys
path = sys.argv[1]
text = open(path).read()
start = text.index("  - name: cuda_fa2\n")
end = text.index("  - name: ", start + 1)
block = text[start:end]
block = block.replace('flags: ["-gencode=arch=compute_90a,code=sm_90a"]', 'flags: ["-gencode=arch=compute_90a,code=sm_90a", "-maxrregcount=128", "-Xptxas=--override-directive-values"]', 1)
block = re.sub(r"\n +(sass_absent: \[LDL, STL\]|spills: 0|stack_max: 0|registers_max: 255)(?=\n)", "", block)
assert "-maxrregcount=128" in block, "cuda_fa2's flags not found"
assert not re.search(r"sass_absent: \[LDL, STL\]|spills: 0|stack_max: 0|registers_max: 255", block), "cuda_fa2's no-spill expectations not dropped"
open(path, "w").write(text[:start] + block + text[end:])
PY
  git -C "$root" add kernels/attention/kernel.yml >/dev/null &&
    git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost commit -qm "spill: cap cuda_fa2 at 128 registers" &&
    git -C "$root" rev-parse HEAD
}

# A commit on top that narrows triton_fa2's tuning space to one small tiling; prints it.
tunespace_commit() {
  local file=$root/kernels/attention/triton_fa2.py
  python3 - "$file" <<'PY' || return 2
import re, sys
path = sys.argv[1]
text = open(path).read()
new, n = re.subn(r"CONFIGS = \{\n.*?\n\}\n", "CONFIGS = {64: [(64, 32, 4, 1)], 128: [(64, 32, 4, 1)]}  # narrowed by gpu-e2e.sh tunespace\n", text, count=1, flags=re.S)
assert n == 1, "CONFIGS not found"
open(path, "w").write(new)
PY
  git -C "$root" add kernels/attention/triton_fa2.py >/dev/null &&
    git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost commit -qm "tunespace: triton_fa2 tunes over one small tiling" &&
    git -C "$root" rev-parse HEAD
}

# patch-pr's two commits on top: the tree without the change $KG_PR_PATCH makes, then with it
# again; prints "BASE HEAD".
patch_commits() {
  local patch=${KG_PR_PATCH:-}
  [[ -n $patch ]] || { echo "patch-pr: set KG_PR_PATCH to a git diff relative to the root" >&2; return 2; }
  [[ $patch == /* ]] || patch=$root/$patch
  [[ -f $patch ]] || { echo "patch-pr: KG_PR_PATCH: no such file: $patch" >&2; return 2; }
  local git=(git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost) base
  "${git[@]}" apply -R --index "$patch" >&2 && "${git[@]}" commit -qm "patch-pr base: without $(basename "$patch")" >&2 || {
    echo "patch-pr: $patch does not come out of the tree (git apply -R)" >&2; return 2; }
  base=$("${git[@]}" rev-parse HEAD)
  "${git[@]}" apply --index "$patch" >&2 && "${git[@]}" commit -qm "patch-pr head: $(basename "$patch")" >&2 || return 2
  echo "$base $("${git[@]}" rev-parse HEAD)"
}

# Undoes the scenario's commit by a commit on top (the tree is the base's again).
revert_scenario() {
  git -C "$root" -c user.name=kernelgate -c user.email=kernelgate@localhost revert --no-edit HEAD >/dev/null
}

# A copy of the configuration under policy.fail_on_slower: true, as a file at the root; printed.
blocking_config() {
  local src
  src=$(config_source)
  grep -q '^  fail_on_slower: false' "$src" || { echo "accept: no 'fail_on_slower: false' in $src" >&2; return 2; }
  sed 's/^  fail_on_slower: false/  fail_on_slower: true/' "$src" >"$root/kernelgate.blocking.yml"
  echo kernelgate.blocking.yml
}

# A pull request event: title, labels (JSON), action (synchronize; labeled adds the label
# kernelgate-accept and alice as its sender).
event_pr() {
  local action=${3:-synchronize} labelled=""
  [[ $action == labeled ]] && labelled='"label": {"name": "kernelgate-accept"}, "sender": {"login": "alice", "type": "User"},'
  cat <<JSON
{"action": "$action", "number": 42, $labelled
 "pull_request": {"number": 42, "title": "$1", "labels": ${2:-[]},
   "head": {"ref": "feature", "sha": "$sha", "repo": {"full_name": "$repo"}},
   "base": {"ref": "main", "sha": "$base_sha", "repo": {"full_name": "$repo"}}},
 "repository": {"full_name": "$repo", "default_branch": "main", "owner": {"login": "kernelgate"}, "name": "kernelgate"}}
JSON
}

run_scenario() {
  local name=$1 event_name ref fault="" run_sha=$sha config_input=${KG_CONFIG:-.}
  local dir="$out/$name"
  mkdir -p "$dir"
  case $name in
    push) event_name=push; ref=refs/heads/main; run_sha=$(git -C "$root" rev-parse HEAD)
      sha=$run_sha event_push >"$dir/event.json" ;;
    aa) event_name=pull_request; ref=refs/pull/42/merge; config_input=$(whole_set_config)
      event_pr "A/A: same code as main" >"$dir/event.json" ;;
    one-variant) event_name=pull_request; ref=refs/pull/42/merge; run_sha=$(one_variant_commit)
      sha=$run_sha event_pr "one variant: a comment in ${KG_ONE_VARIANT_FILE:-kernels/bsr_gemm/triton_bsr.py}" >"$dir/event.json" ;;
    patch-pr) event_name=pull_request; ref=refs/pull/42/merge
      local pair; pair=$(patch_commits) || return 2; run_sha=${pair#* }
      base_sha=${pair% *} sha=$run_sha event_pr "patch: $(basename "$KG_PR_PATCH")" >"$dir/event.json" ;;
    spill) event_name=pull_request; ref=refs/pull/42/merge; run_sha=$(spill_commit) || return 2
      sha=$run_sha event_pr "spill: cuda_fa2 capped at 128 registers" '[{"name": "kernelgate-profile"}]' >"$dir/event.json" ;;
    tunespace) event_name=pull_request; ref=refs/pull/42/merge; run_sha=$(tunespace_commit) || return 2
      sha=$run_sha event_pr "tunespace: triton_fa2 tunes over one small tiling" '[{"name": "kernelgate-profile"}]' >"$dir/event.json" ;;
    broken) event_name=pull_request; ref=refs/pull/42/merge; fault="$fault_target:wrong"
      event_pr "planted fault: $fault" >"$dir/event.json" ;;
    slowed) event_name=pull_request; ref=refs/pull/42/merge; fault="$fault_target:slow"
      event_pr "planted fault: $fault" >"$dir/event.json" ;;
    slow2|slow1) event_name=pull_request; ref=refs/pull/42/merge; fault="$fault_target:slow:${name#slow}"
      event_pr "planted fault: $fault" >"$dir/event.json" ;;
    accept) event_name=pull_request; ref=refs/pull/42/merge; fault="$fault_target:slow:${KG_ACCEPT_PCT:-2}"
      config_input=$(blocking_config) || return 2
      event_pr "planted fault: $fault, accepted" '[{"name": "kernelgate-accept"}]' labeled >"$dir/event.json" ;;
    nightly|nightly[0-9]*) event_name=schedule; ref=refs/heads/main; run_sha=$(tonight "$name")
      event_schedule >"$dir/event.json" ;;
    nightly-bisect*) event_name=schedule; ref=refs/heads/main; run_sha=$(planted_commits)
      event_schedule >"$dir/event.json" ;;
    nightly-retune*) event_name=schedule; ref=refs/heads/main; run_sha=$(tonight "$name")
      # The push before tuned afresh (its results carry the tuner's tables): tonight's tune cache
      # holds the runner-up tiling of every tuned triton_fa2 case instead of the tuner's choice.
      python3 "$root/scripts/plant-retune.py" "$out/push/report/results.json" "$root/.kernelgate/build/tune" \
        attention/triton_fa2 kernels.attention.triton_fa2 >"$dir/planted.txt" 2>&1 || {
        cat "$dir/planted.txt" >&2; echo "nightly-retune: nothing planted (run push first, on a cold tune cache)" >&2; return 2; }
      event_schedule >"$dir/event.json" ;;
    nightly-slow2*|nightly-slow1*) event_name=schedule; ref=refs/heads/main; run_sha=$(tonight "$name")
      fault="$fault_target:slow:$(sed -E 's/^nightly-slow([12]).*/\1/' <<<"$name")"
      event_schedule >"$dir/event.json" ;;
    *) echo "unknown scenario $name" >&2; return 2 ;;
  esac
  : >"$dir/github_output"; : >"$dir/summary.md"; : >"$dir/state"; : >"$dir/env"
  local started=$(date +%s.%N)
  # Passed through when set (probes of the allocator: scripts/gpu-probe-noise.sh).
  local extra=()
  [[ -n ${PYTORCH_CUDA_ALLOC_CONF+x} ]] && extra+=("PYTORCH_CUDA_ALLOC_CONF=$PYTORCH_CUDA_ALLOC_CONF")
  [[ -n ${CUDA_VISIBLE_DEVICES+x} ]] && extra+=("CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES")
  env -i "${extra[@]}" PATH="$PATH" HOME="${HOME:-/root}" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
    CUDA_HOME="${CUDA_HOME:-}" TRITON_INTERPRET="${TRITON_INTERPRET:-}" KERNELGATE_FAULT="$fault" \
    GITHUB_ACTIONS=true CI=true RUNNER_OS=Linux RUNNER_TEMP="$dir" \
    GITHUB_EVENT_NAME="$event_name" GITHUB_EVENT_PATH="$dir/event.json" \
    GITHUB_REPOSITORY="$repo" GITHUB_SHA="$run_sha" GITHUB_REF="$ref" GITHUB_RUN_ID="$name" \
    GITHUB_WORKSPACE="$root" GITHUB_API_URL="$api_url" GITHUB_SERVER_URL=https://github.com \
    GITHUB_OUTPUT="$dir/github_output" GITHUB_STEP_SUMMARY="$dir/summary.md" \
    GITHUB_STATE="$dir/state" GITHUB_ENV="$dir/env" \
    INPUT_TOKEN=ghs_standin_token INPUT_MODE=auto INPUT_COMMENT=true INPUT_CONFIG="$config_input" \
    "INPUT_COMMENT-KEY=default" "INPUT_REPORT-DIR=$dir/report" "INPUT_BASELINE-DIR=$store" \
    "INPUT_SAVE-BASELINE=auto" "INPUT_APPROVAL-LABEL=kernelgate-approved" "INPUT_KERNELS=${KG_KERNELS:-}" \
    "INPUT_PAIRED=${KG_PAIRED:-auto}" \
    node "$root/dist/index.js" >"$dir/action.log" 2>&1
  local status=$?
  rm -f "$root/kernelgate.whole-set.yml" "$root/kernelgate.blocking.yml"
  [[ $name == spill || $name == tunespace ]] && revert_scenario
  local ended=$(date +%s.%N)
  echo "$status" >"$dir/exit_status"
  awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/wall_s"
  printf '%-7s exit=%s wall=%ss %s\n' "$name" "$status" "$(cat "$dir/wall_s")" \
    "$(grep -h '^verdict' -A1 "$dir/github_output" | tail -1)"
}

# A scenario that could not be set up (unknown, its commit or patch refused) makes the exit status
# 2; the action's own exit status is each scenario's exit_status (a planted fault's 1 is expected).
setup_failed=0
for scenario in "$@"; do run_scenario "$scenario" || { echo "gpu-e2e.sh: scenario $scenario not run" >&2; setup_failed=2; }; done
sleep 0.3
exit "$setup_failed"
