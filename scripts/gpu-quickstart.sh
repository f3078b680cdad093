#!/usr/bin/env bash
# docs/quickstart.md's worked example run through the bundled action on a repository that is not
# kernelgate's, as a self-hosted GPU runner would run it (issue 30's "done when"):
#   page   the page's file blocks (read by scripts/lib/quickstart-page.mjs, as CI's literal run of
#          the page reads them: test/quickstart.test.ts) written into a fresh git repository in a
#          temporary folder, and committed by the page's own first step
#   push   the bundled action (action.yml's runs.main) for a push to main: every input at
#          action.yml's default as a runner sets them, baseline-dir and the store key as the
#          README's workflow gives them; expected: exit 0, verdict pass, the baseline stored
#   plant  the page's tail bug (its failing step's sed line: pad 0 instead of -inf) committed on top
#   pr     the action for pull request #42 of that commit against the push's (paired A/B);
#          expected: exit 1, verdict fail, and the gate naming every tail the page names
# The action talks to the GitHub REST stand-in on 127.0.0.1 (scripts/lib/runner.sh; pack it first
# with scripts/pack-standin.sh). Under OUTDIR: page/ (the repository's files), push/ and pr/
# (event.json, exit_status, wall_s, summary.md (the job summary), github_output, action.log,
# report/ with results.json, pr/comment.md (the comment as posted)), standin-state.json, steps.txt
# (one line per step, with its wall seconds), device.txt. Exits 0 only when the push passed and
# the planted bug failed the gate, on a GPU (the results name one) unless --cpu.
# Usage: scripts/gpu-quickstart.sh [--cpu] OUTDIR   (node and python3 with torch and Triton on PATH)
#   --cpu: Triton's interpreter (TRITON_INTERPRET=1) on the CPU, as the page's own steps run
set -uo pipefail

cpu=0 interpret=()
[[ ${1:-} == --cpu ]] && { cpu=1; interpret=(TRITON_INTERPRET=1); shift; }
out=${1:?usage: gpu-quickstart.sh [--cpu] OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/runner.sh
source "$root/scripts/lib/runner.sh"
page() { node "$root/scripts/lib/quickstart-page.mjs" "$@"; }
now() { date +%s.%N; }
: >"$out/steps.txt"
step_line() { # name, start, exit code, more
  local wall
  wall=$(awk -v a="$2" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  printf '%-5s exit=%s wall=%ss %s\n' "$1" "$3" "$wall" "${4:-}" | tee -a "$out/steps.txt"
  echo "$wall" >"$out/$1.wall_s"
}

export GIT_AUTHOR_NAME="a team" GIT_AUTHOR_EMAIL=team@example.com
export GIT_COMMITTER_NAME="a team" GIT_COMMITTER_EMAIL=team@example.com
repo=a-team/softmax
ws=$(mktemp -d "${TMPDIR:-/tmp}/kg-quickstart-XXXXXX")
case $ws in "$root"/*) echo "the repository must be outside kernelgate's tree: $ws" >&2; exit 2 ;; esac
store=$out/baselines
mkdir -p "$store"
store_key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

# 1. The page's repository.
t0=$(now)
page files "$ws" && (cd "$ws" && bash -e -c "$(page run 1)")
code=$?
mkdir -p "$out/page" && cp -r "$ws/." "$out/page/" && rm -rf "$out/page/.git"
step_line page "$t0" "$code" "$ws at $(git -C "$ws" rev-parse --short HEAD 2>/dev/null)"
[[ $code == 0 ]] || exit 2
base_sha=$(git -C "$ws" rev-parse HEAD)

standin_start "$out" --pr 42 || exit 2
entry=$(action_entry) || exit 2

repository_json() {
  echo "{\"full_name\": \"$repo\", \"name\": \"${repo#*/}\", \"default_branch\": \"main\", \"owner\": {\"login\": \"${repo%/*}\"}}"
}

# The action as the runner runs the workflow's step: every input at its default, then `with:`.
run_action() { # name, event name, ref, sha
  local name=$1 dir=$out/$1 t0 code inputs
  mkdir -p "$dir"
  : >"$dir/github_output"; : >"$dir/summary.md"; : >"$dir/state"; : >"$dir/env"
  mapfile -t inputs < <(action_defaults)
  t0=$(now)
  (cd "$ws" && env -i PATH="$PATH" HOME="${HOME:-/root}" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
    CUDA_HOME="${CUDA_HOME:-}" "${interpret[@]}" \
    GITHUB_ACTIONS=true CI=true RUNNER_OS=Linux RUNNER_TEMP="$dir" \
    GITHUB_EVENT_NAME="$2" GITHUB_EVENT_PATH="$dir/event.json" GITHUB_REPOSITORY="$repo" \
    GITHUB_SHA="$4" GITHUB_REF="$3" GITHUB_RUN_ID="$name" GITHUB_RUN_ATTEMPT=1 \
    GITHUB_WORKSPACE="$ws" GITHUB_API_URL="$api_url" GITHUB_SERVER_URL=https://github.com \
    GITHUB_OUTPUT="$dir/github_output" GITHUB_STEP_SUMMARY="$dir/summary.md" \
    GITHUB_STATE="$dir/state" GITHUB_ENV="$dir/env" KERNELGATE_STORE_KEY="$store_key" \
    "${inputs[@]}" INPUT_TOKEN=ghs_standin_token "INPUT_BASELINE-DIR=$store" \
    node "$entry" >"$dir/action.log" 2>&1)
  code=$?
  echo "$code" >"$dir/exit_status"
  rm -rf "$dir/report" && cp -r "$ws/.kernelgate/report" "$dir/report" 2>/dev/null
  verdict=$(grep -A1 '^verdict<<' "$dir/github_output" | tail -1)
  step_line "$name" "$t0" "$code" "verdict=${verdict:-none}"
  cp "$out/$name.wall_s" "$dir/wall_s"
  return "$code"
}

# 2. The push to main.
echo "{\"ref\": \"refs/heads/main\", \"before\": \"0000000000000000000000000000000000000000\", \"after\": \"$base_sha\", \"repository\": $(repository_json)}" \
  >"$(mkdir -p "$out/push" && echo "$out/push/event.json")"
run_action push push refs/heads/main "$base_sha"
push_code=$?
push_verdict=$verdict

# 3. The page's tail bug, committed on top.
t0=$(now)
plant=$(page plant) && (cd "$ws" && bash -e -c "$plant" && git commit -q kernels -m "softmax: pad the last block with 0") &&
  [[ -n $(git -C "$ws" diff HEAD~1 --stat) ]]
code=$?
step_line plant "$t0" "$code" "$(tr '\n' ' ' <<<"$plant")"
[[ $code == 0 ]] || exit 2
head_sha=$(git -C "$ws" rev-parse HEAD)

# 4. The pull request of that commit.
mkdir -p "$out/pr"
cat >"$out/pr/event.json" <<JSON
{"action": "synchronize", "number": 42,
 "pull_request": {"number": 42, "title": "softmax: pad the last block with 0", "labels": [],
   "head": {"ref": "pad-zero", "sha": "$head_sha", "repo": {"full_name": "$repo"}},
   "base": {"ref": "main", "sha": "$base_sha", "repo": {"full_name": "$repo"}}},
 "repository": $(repository_json)}
JSON
run_action pr pull_request refs/pull/42/merge "$head_sha"
pr_code=$?
pr_verdict=$verdict
standin_stop
node -e '
  const [state, to] = process.argv.slice(1);
  const fs = require("node:fs");
  const posted = JSON.parse(fs.readFileSync(state, "utf8")).comments.filter((c) => c.issueNumber === 42);
  if (posted.length) fs.writeFileSync(to, posted[posted.length - 1].body);
' "$out/standin-state.json" "$out/pr/comment.md"

# Where it ran: the GPU the push's results name (its PCI id), or none.
node -e '
  const gpu = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).environment?.gpu;
  console.log(gpu?.pci_device_id ? `${gpu.name} (PCI ${gpu.pci_device_id})` : `no GPU (${gpu?.name ?? "no environment"})`);
' "$out/push/report/results.json" >"$out/device.txt" 2>&1
problems=()
[[ $push_code == 0 && $push_verdict == pass ]] || problems+=("the push did not pass (exit $push_code, verdict ${push_verdict:-none}): $out/push/action.log")
[[ $pr_code != 0 && $pr_verdict == fail ]] || problems+=("the planted tail bug did not fail the gate (exit $pr_code, verdict ${pr_verdict:-none}): $out/pr/action.log")
output() { grep -A1 "^$1<<" "$out/$2/github_output" | tail -1; }
[[ -n $(output stored push) ]] || problems+=("the push stored no baseline: $out/push/action.log")
# The gate's reasons, as the page shows `kernelgate run` printing them ("fail: " and the reason).
while IFS= read -r line; do
  grep -qF -- "${line#fail: }" "$out/pr/action.log" || problems+=("the pull request's gate does not say: ${line#fail: }")
done < <(page failing-output)
[[ -s $out/pr/comment.md ]] || problems+=("no comment posted on pull request #42: $out/standin-state.json")
grep -q '"violations": \[\]' "$out/standin-state.json" ||
  problems+=("requests GitHub's API description refuses: violations in $out/standin-state.json")
[[ $cpu == 1 ]] || ! grep -q '^no GPU' "$out/device.txt" ||
  problems+=("not a GPU run: the push's results name $(cat "$out/device.txt")")
echo "device: $(cat "$out/device.txt")"
for p in "${problems[@]}"; do echo "FAIL: $p"; done
[[ ${#problems[@]} == 0 ]] && echo "quickstart through the action: the push passed, the planted tail bug failed the gate"
[[ ${#problems[@]} == 0 ]]
